/* nn/cpu/ops_cpu_gemm.c — C = A B for the conv, without sgemm's packing.
 *
 * In a conv A is the filter bank (K rows: 16..64 in resnet) and B the im2col matrix:
 * so few rows of A that a packing sgemm spends more time packing B than multiplying.
 * Here B is read in place, row by row, and A is given transposed so that the mr values
 * broadcast at each step are adjacent.  B's rows need not be materialised: row (c, i, j)
 * may be any p + c*ps + i*rs + j*qs (struct nn_gemm_rows), which is a zero-padded input
 * plane shifted by (i, j), so a same conv reads its input in place instead of an im2col
 * copy nine times its size.
 *
 * The kernels keep a tile of C (mr rows x nv vectors of 16 columns) in registers and
 * add B's rows into it in order: every output element is its bias (or 0, or C) and
 * then one vf_fma per row of B, r = 0, 1, ..., the same sequence whatever the tile and
 * whatever the level (nn/cpu/vec16.h).  Only the tile shapes differ per level (the
 * tables below), as the registers do. */
#include "nn/cpu/cpu.h"

/* One row of B, the vectors bv, times mr values of A (a[m * am]) into the accumulators */
#define GEMM_FMA(mr, nv, am, bv)						\
	do {									\
		_Pragma("GCC unroll 16")					\
		for (int m = 0; m < mr; m++) {					\
			vf16 av = vf_set1(a[m * (am)]);				\
										\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				c[m][v] = vf_fma(av, bv[v], c[m][v]);		\
		}								\
	} while (0)

/* One row of B (at b) times mr values of A (a[m * am]) into the accumulators, nv vectors,
 * each loaded by LOAD (b + 16 * v whole, or masked at the end of C's row) */
#define GEMM_STEP(mr, nv, am, LOAD)						\
	do {									\
		vf16 bv[nv];							\
										\
		_Pragma("GCC unroll 4")						\
		for (int v = 0; v < nv; v++)					\
			bv[v] = LOAD;						\
		GEMM_FMA(mr, nv, am, bv);					\
	} while (0)

/* All of B's rows, in order, into the tile at column j (A's rows advance by ar > 0; a
 * loop bound on a rather than a count keeps gcc from spilling the count to the stack) */
#define GEMM_ROWS(mr, nv, am, LOAD)						\
	do {									\
		if (B->kh == 1 && B->kw == 1) {					\
			const float *b = B->p + j, *ae = a + B->nc * ar;	\
			const size_t ps = B->ps;				\
										\
			for (; a != ae; b += ps, a += ar)			\
				GEMM_STEP(mr, nv, am, LOAD);			\
		} else {							\
			for (int ci = 0; ci < B->nc; ci++)			\
			for (int i = 0; i < B->kh; i++) {			\
				const float *b = B->p + ci * B->ps + i * B->rs + j;	\
										\
				for (int q = 0; q < B->kw; q++, b += B->qs, a += ar)	\
					GEMM_STEP(mr, nv, am, LOAD);		\
			}							\
		}								\
	} while (0)

/* The tile's accumulators start as C (acc), else as the bias (or 0) */
#define GEMM_INIT(mr, nv)							\
	do {									\
		_Pragma("GCC unroll 16")					\
		for (int m = 0; m < mr; m++)					\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++) {				\
				const float *o = C + m * ldc + j + 16 * v;	\
										\
				c[m][v] = !acc ? vf_set1(bias ? bias[m] : 0.0f) :	\
					  part ? vf_loadm(o, kv[v]) : vf_load(o);	\
			}							\
	} while (0)

/* The tile's accumulators + add (rows ldc apart) when add is not NULL, into C at
 * column j, the lanes of kv when the tile is partial */
#define GEMM_STORE(mr, nv)							\
	do {									\
		_Pragma("GCC unroll 16")					\
		for (int m = 0; m < mr; m++)					\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++) {				\
				float *o = C + m * ldc + j + 16 * v;		\
				const float *d = add ? add + (o - C) : NULL;	\
										\
				if (part) {					\
					if (d)					\
						c[m][v] = vf_add(c[m][v], vf_loadm(d, kv[v]));	\
					vf_storem(o, kv[v], c[m][v]);		\
				} else {					\
					if (d)					\
						c[m][v] = vf_add(c[m][v], vf_load(d));	\
					vf_store(o, c[m][v]);			\
				}						\
			}							\
	} while (0)

/* The lanes of the tile at column j that are inside C's N columns; part: load and store
 * them masked (some are outside).  Always with AVX-512, where a masked load costs what a
 * plain one does and keeps B's vector in a register: gcc folds plain loads into the
 * FMAs, one load per row of the tile (lenet's 2-row tiles 2x slower).  Elsewhere a
 * masked load (vmaskmovps) costs more, and only a row's last tile pays it. */
#define GEMM_MASKS(nv)								\
	vm16 kv[nv];								\
	const int part = NN_ISA_IS(avx512) || j + 16 * (nv) > N;		\
										\
	_Pragma("GCC unroll 4")							\
	for (int v = 0; v < nv; v++)						\
		kv[v] = vm_first(N - j - 16 * v)

/* C rows [0, mr) x columns [j0, N); A[m][r] = a[m * AM + r * ar].  Columns go 16*nv at a
 * time, masked at the end of the row.  AM is 1 (A given transposed, the conv's filters:
 * the mr values broadcast are adjacent) or the runtime am (the weight gradient reads
 * dout's planes in place); the first keeps its addressing to one register. */
#define GEMM_KERNEL(mr, nv, sfx, AM)						\
static void gemm_kernel_##mr##_##nv##sfx(float *C, size_t ldc, const float *a0, size_t am,	\
					 size_t ar, const void *Bv, int j0, int N,	\
					 const float *bias, int acc, const float *add)	\
{										\
	const struct nn_gemm_rows *B = Bv;					\
										\
	(void)am;								\
	for (int j = j0; j < N; j += 16 * nv) {					\
		GEMM_MASKS(nv);							\
		vf16 c[mr][nv];							\
		const float *a = a0;						\
										\
		GEMM_INIT(mr, nv);						\
		if (part)							\
			GEMM_ROWS(mr, nv, AM, vf_loadm(b + 16 * v, kv[v]));	\
		else								\
			GEMM_ROWS(mr, nv, AM, vf_load(b + 16 * v));		\
		GEMM_STORE(mr, nv);						\
	}									\
}

/* The 3x3 same conv's form (struct nn_gemm_same3): per input channel and kernel row i,
 * the rows of B at column shifts -1, 0, +1 of the padded plane's row i, the lanes that
 * cross a row's edge zeroed.  The same products in the same order as nn_cpu_gemm_rows
 * over three shifted copies.  The loads reach 16 floats before the plane's tile and
 * 16 + 15 after: the caller's slack.  C = A B + bias (or 0), then + add (as C) when add
 * is not NULL; A given transposed as for nn_cpu_gemm_rows.
 *
 * How the shifted rows are made is data movement, per level: with AVX-512 the row is
 * loaded once, one vector more on each side, and the shifts made in registers
 * (valignd, the edge lanes zeroed by the same instruction); elsewhere each shift is an
 * unaligned load, its edge lanes then zeroed. */
#if NN_ISA_IS(avx512)
#define SAME3_ROW(nv)								\
	__m512i w[nv + 2];							\
										\
	_Pragma("GCC unroll 6")							\
	for (int v = 0; v < nv + 2; v++)					\
		w[v] = _mm512_castps_si512(_mm512_loadu_ps(b + 16 * (v - 1)))
#define SAME3_LEFT(v) _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(kl[v], w[v + 1], w[v], 15))
#define SAME3_MID(v) _mm512_castsi512_ps(w[v + 1])
#define SAME3_RIGHT(v) _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(kr[v], w[v + 2], w[v + 1], 1))
#else
#define SAME3_ROW(nv) (void)0
#define SAME3_LEFT(v) vf_maskz(kl[v], vf_load(b + 16 * (v) - 1))
#define SAME3_MID(v) vf_load(b + 16 * (v))
#define SAME3_RIGHT(v) vf_maskz(kr[v], vf_load(b + 16 * (v) + 1))
#endif

#define GEMM_SAME3_KERNEL(mr, nv)						\
static void gemm_kernel_##mr##_##nv##_same3(float *C, size_t ldc, const float *a0,	\
					    size_t am, size_t ar, const void *Bv,	\
					    int j0, int N, const float *bias, int acc,	\
					    const float *add)			\
{										\
	const struct nn_gemm_same3 *B = Bv;					\
										\
	(void)am, (void)acc;							\
	for (int j = j0; j < N; j += 16 * nv) {					\
		GEMM_MASKS(nv);							\
		vm16 kl[nv], kr[nv];						\
		vf16 c[mr][nv];							\
		const float *a = a0;						\
										\
		_Pragma("GCC unroll 4")						\
		for (int v = 0; v < nv; v++) {					\
			kl[v] = vm_and(kv[v], vm_bits(B->edge[j / 16 + v][0]));	\
			kr[v] = vm_and(kv[v], vm_bits(B->edge[j / 16 + v][1]));	\
		}								\
		GEMM_INIT(mr, nv);						\
		for (int ci = 0; ci < B->nc; ci++)				\
		for (int i = 0; i < 3; i++) {					\
			const float *b = B->p + ci * B->ps + i * B->W + j;	\
			vf16 bv[nv];						\
			SAME3_ROW(nv);						\
										\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				bv[v] = SAME3_LEFT(v);				\
			GEMM_FMA(mr, nv, 1, bv);				\
			a += ar;						\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				bv[v] = SAME3_MID(v);				\
			GEMM_FMA(mr, nv, 1, bv);				\
			a += ar;						\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				bv[v] = SAME3_RIGHT(v);				\
			GEMM_FMA(mr, nv, 1, bv);				\
			a += ar;						\
		}								\
		GEMM_STORE(mr, nv);						\
	}									\
}

/* B: a struct nn_gemm_rows, or a struct nn_gemm_same3 for the same3 kernels */
typedef void gemm_kernel_fn(float *C, size_t ldc, const float *a0, size_t am, size_t ar,
			    const void *B, int j0, int N, const float *bias, int acc,
			    const float *add);

/* A kernel set: row blocks of mr[b] rows (largest first, the last 1), each with its
 * kernels k[b][nv] for tiles of nv vectors, nv <= NVMAX */
#define NVMAX 4
struct gemm_tiles {
	int nv, nmr, mr[4];
	gemm_kernel_fn *k[4][NVMAX + 1];
};

#define KSET1(mr, sfx) NULL, gemm_kernel_##mr##_1##sfx
#define KSET2(mr, sfx) KSET1(mr, sfx), gemm_kernel_##mr##_2##sfx
#define KSET3(mr, sfx) KSET2(mr, sfx), gemm_kernel_##mr##_3##sfx
#define KSET4(mr, sfx) KSET3(mr, sfx), gemm_kernel_##mr##_4##sfx
#define GEMM_KERNELS1(mr, sfx, AM) GEMM_KERNEL(mr, 1, sfx, AM)
#define GEMM_KERNELS2(mr, sfx, AM) GEMM_KERNELS1(mr, sfx, AM) GEMM_KERNEL(mr, 2, sfx, AM)
#define GEMM_KERNELS3(mr, sfx, AM) GEMM_KERNELS2(mr, sfx, AM) GEMM_KERNEL(mr, 3, sfx, AM)
#define GEMM_KERNELS4(mr, sfx, AM) GEMM_KERNELS3(mr, sfx, AM) GEMM_KERNEL(mr, 4, sfx, AM)
#define GEMM_SAME3_KERNELS1(mr) GEMM_SAME3_KERNEL(mr, 1)
#define GEMM_SAME3_KERNELS2(mr) GEMM_SAME3_KERNELS1(mr) GEMM_SAME3_KERNEL(mr, 2)
#define GEMM_SAME3_KERNELS4(mr) GEMM_SAME3_KERNELS2(mr) GEMM_SAME3_KERNEL(mr, 3)	\
	GEMM_SAME3_KERNEL(mr, 4)

#if NN_ISA_IS(avx512)
/* The tiles with 32 zmm registers.  With A given transposed (the conv and its input
 * gradient, N = a plane: 1024, 256, 64 in resnet) 4 rows x 64 columns cover a plane in
 * whole tiles, where 8 x 48 needed a one-vector tile for each plane's last 16 columns:
 * about 1% faster on resnet's convs (and a 4 x 64 kernel alone runs at 97-99% of the
 * FMA peak).  With A read in place (the weight gradient, N = kw*C: 48, 96, 192) 8 x 48
 * runs at 90-98%, and 4 x 64 at N = 192 (106 -> 110 GFLOP/s); at N = 48 64 columns
 * would mask a quarter of the lanes. */
GEMM_KERNELS4(4, , 1) GEMM_KERNELS4(2, , 1) GEMM_KERNELS4(1, , 1)
GEMM_KERNELS3(8, _s, am)
GEMM_KERNELS4(4, _s, am) GEMM_KERNELS4(2, _s, am) GEMM_KERNELS4(1, _s, am)
GEMM_SAME3_KERNELS4(4) GEMM_SAME3_KERNELS4(2) GEMM_SAME3_KERNELS4(1)

static const struct gemm_tiles tiles_at = {
	.nv = 4, .nmr = 3, .mr = { 4, 2, 1 },
	.k = { { KSET4(4, ) }, { KSET4(2, ) }, { KSET4(1, ) } },
};
static const struct gemm_tiles tiles_s = {
	.nv = 3, .nmr = 4, .mr = { 8, 4, 2, 1 },
	.k = { { KSET3(8, _s) }, { KSET3(4, _s) }, { KSET3(2, _s) }, { KSET3(1, _s) } },
};
static const struct gemm_tiles tiles_s64 = {
	.nv = 4, .nmr = 3, .mr = { 4, 2, 1 },
	.k = { { KSET4(4, _s) }, { KSET4(2, _s) }, { KSET4(1, _s) } },
};
static const struct gemm_tiles tiles_same3 = {
	.nv = 4, .nmr = 3, .mr = { 4, 2, 1 },
	.k = { { KSET4(4, _same3) }, { KSET4(2, _same3) }, { KSET4(1, _same3) } },
};
#else
/* The tiles with 16 ymm registers (two per vector), and at the generic level (its
 * vectors live in memory; the same tiles keep its code small).  6 rows x 16 columns
 * keep 12 ymm accumulators, 2 of B's row and a broadcast, 15 registers: gemm_at's
 * and the weight gradient's fastest (resnet20's strided convs 43 GFLOP/s against 41
 * at 4 x 16, their weight gradient 71 against 59; 3 x 32 slower still).  The same3
 * kernel also holds its edge masks, and at 6 x 16 gcc spills an accumulator in each
 * step: 4 x 16 (8 accumulators) runs its convs at 97-104 GFLOP/s where 6 x 16 ran
 * 87-94, 5 x 16 86-100 and 3 x 32 76-80. */
GEMM_KERNELS1(6, , 1) GEMM_KERNELS1(4, , 1) GEMM_KERNELS1(2, , 1) GEMM_KERNELS1(1, , 1)
GEMM_KERNELS1(6, _s, am) GEMM_KERNELS1(4, _s, am) GEMM_KERNELS1(2, _s, am)
GEMM_KERNELS1(1, _s, am)
GEMM_SAME3_KERNELS1(4) GEMM_SAME3_KERNELS1(2) GEMM_SAME3_KERNELS1(1)

static const struct gemm_tiles tiles_at = {
	.nv = 1, .nmr = 4, .mr = { 6, 4, 2, 1 },
	.k = { { KSET1(6, ) }, { KSET1(4, ) }, { KSET1(2, ) }, { KSET1(1, ) } },
};
static const struct gemm_tiles tiles_s = {
	.nv = 1, .nmr = 4, .mr = { 6, 4, 2, 1 },
	.k = { { KSET1(6, _s) }, { KSET1(4, _s) }, { KSET1(2, _s) }, { KSET1(1, _s) } },
};
#define tiles_s64 tiles_s
static const struct gemm_tiles tiles_same3 = {
	.nv = 1, .nmr = 3, .mr = { 4, 2, 1 },
	.k = { { KSET1(4, _same3) }, { KSET1(2, _same3) }, { KSET1(1, _same3) } },
};
#endif

/* Rows of C in blocks of t->mr, the columns in tiles of 16*nv and a last tile of as
 * many vectors as are left (a masked lane costs as much as a used one).  Each column
 * sums in the same order whatever its tile, so the split changes no bits. */
static void gemm_tiled(const struct gemm_tiles *t, float *C, size_t ldc, const float *a,
		       size_t am, size_t ar, const void *B, int M, int N,
		       const float *bias, int accumulate, const float *add)
{
	int rest = N % (16 * t->nv), full = N - rest, tail = (rest + 15) / 16, i = 0;

	for (int b = 0; b < t->nmr; b++)
		for (; i + t->mr[b] <= M; i += t->mr[b]) {
			const float *ai = a + i * am, *bi = bias ? bias + i : NULL;
			const float *di = add ? add + i * ldc : NULL;

			if (full)
				t->k[b][t->nv](C + i * ldc, ldc, ai, am, ar, B, 0, full, bi,
					       accumulate, di);
			if (tail)
				t->k[b][tail](C + i * ldc, ldc, ai, am, ar, B, full, N, bi,
					      accumulate, di);
		}
}

void nn_cpu_gemm_rows(float *C, size_t ldc, const float *at, const struct nn_gemm_rows *B,
		      int M, int N, const float *bias, int accumulate, const float *add)
{
	gemm_tiled(&tiles_at, C, ldc, at, 1, (size_t)M, B, M, N, bias, accumulate, add);
}

void nn_cpu_gemm_rows_a(float *C, size_t ldc, const float *a, size_t am, size_t ar,
			const struct nn_gemm_rows *B, int M, int N, int accumulate)
{
	gemm_tiled(N % 64 ? &tiles_s : &tiles_s64, C, ldc, a, am, ar, B, M, N, NULL, accumulate,
		   NULL);
}

void nn_cpu_gemm_same3(float *C, size_t ldc, const float *at, const struct nn_gemm_same3 *B,
		       int M, int N, const float *bias, const float *add)
{
	gemm_tiled(&tiles_same3, C, ldc, at, 1, (size_t)M, B, M, N, bias, 0, add);
}

void nn_cpu_gemm_at(float *C, size_t ldc, const float *at, const float *B, size_t ldb,
		    int M, int N, int Kd, const float *bias, int accumulate)
{
	struct nn_gemm_rows rows = { .p = B, .ps = ldb, .nc = Kd, .kh = 1, .kw = 1 };

	nn_cpu_gemm_rows(C, ldc, at, &rows, M, N, bias, accumulate, NULL);
}
