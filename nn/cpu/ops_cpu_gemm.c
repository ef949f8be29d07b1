/* nn/cpu/ops_cpu_gemm.c — C = A B for the conv, without sgemm's packing.
 *
 * In a conv A is the filter bank (K rows: 16..64 in resnet) and B the im2col matrix:
 * so few rows of A that OpenBLAS spends more time packing B than multiplying.  Here B is
 * read in place, row by row, and A is given transposed so that the MR values broadcast
 * at each step are adjacent.  B's rows need not be materialised: row (c, i, j) may be
 * any p + c*ps + i*rs + j (struct nn_gemm_rows), which is a zero-padded input plane
 * shifted by (i, j), so a same conv reads its input in place instead of an im2col
 * copy nine times its size.  The AVX-512 kernels keep a tile of C (mr rows x nv
 * vectors) in registers; without AVX-512 sgemm (or plain loops) does the work. */
#include <cblas.h>
#include "nn/cpu/cpu.h"

#ifdef __AVX512F__
#include <immintrin.h>

/* One row of B, the vectors bv, times mr values of A (a[m * am]) into the accumulators */
#define GEMM_FMA(mr, nv, am, bv)						\
	do {									\
		_Pragma("GCC unroll 16")					\
		for (int m = 0; m < mr; m++) {					\
			__m512 av = _mm512_set1_ps(a[m * (am)]);		\
										\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				c[m][v] = _mm512_fmadd_ps(av, bv[v], c[m][v]);	\
		}								\
	} while (0)

/* One row of B (at b) times mr values of A (a[m * am]) into the accumulators, nv vectors */
#define GEMM_STEP(mr, nv, am)							\
	do {									\
		__m512 bv[nv];							\
										\
		_Pragma("GCC unroll 4")						\
		for (int v = 0; v < nv; v++)					\
			bv[v] = _mm512_maskz_loadu_ps(kv[v], b + 16 * v);	\
		GEMM_FMA(mr, nv, am, bv);					\
	} while (0)

/* The tile's accumulators + add (rows ldc apart) when add is not NULL, into C at
 * column j, the lanes of kv */
#define GEMM_STORE(mr, nv)							\
	do {									\
		_Pragma("GCC unroll 16")					\
		for (int m = 0; m < mr; m++)					\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++) {				\
				float *o = C + m * ldc + j + 16 * v;		\
										\
				if (add)					\
					c[m][v] = _mm512_add_ps(c[m][v],	\
						_mm512_maskz_loadu_ps(kv[v], add + (o - C)));	\
				_mm512_mask_storeu_ps(o, kv[v], c[m][v]);	\
			}							\
	} while (0)

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
		__mmask16 kv[nv];						\
		__m512 c[mr][nv];						\
		const float *a = a0;						\
										\
		_Pragma("GCC unroll 4")						\
		for (int v = 0; v < nv; v++) {					\
			int rem = N - j - 16 * v;				\
										\
			kv[v] = rem >= 16 ? 0xffff :				\
				rem > 0 ? (__mmask16)((1u << rem) - 1) : 0;	\
		}								\
		_Pragma("GCC unroll 16")					\
		for (int m = 0; m < mr; m++)					\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				c[m][v] = acc ? _mm512_maskz_loadu_ps(kv[v], C + m * ldc + j + 16 * v)	\
					      : _mm512_set1_ps(bias ? bias[m] : 0.0f);	\
		if (B->kh == 1 && B->kw == 1) {					\
			const float *b = B->p + j;				\
										\
			for (int r = 0; r < B->nc; r++, b += B->ps, a += ar)	\
				GEMM_STEP(mr, nv, AM);				\
		} else {							\
			for (int ci = 0; ci < B->nc; ci++)			\
			for (int i = 0; i < B->kh; i++) {			\
				const float *b = B->p + ci * B->ps + i * B->rs + j;	\
										\
				for (int q = 0; q < B->kw; q++, b += B->qs, a += ar)	\
					GEMM_STEP(mr, nv, AM);			\
			}							\
		}								\
		GEMM_STORE(mr, nv);						\
	}									\
}

/* The tiles.  With A given transposed (the conv and its input gradient, N = a plane:
 * 1024, 256, 64 in resnet) 4 rows x 64 columns cover a plane in whole tiles, where
 * 8 x 48 needed a one-vector tile for each plane's last 16 columns: about 1% faster on
 * resnet's convs (and a 4 x 64 kernel alone runs at 97-99% of the FMA peak).  With A
 * read in place (the weight gradient, N = kw*C: 48, 96, 192) 8 x 48 runs at 90-98%, and
 * 4 x 64 at N = 192 (106 -> 110 GFLOP/s); at N = 48 64 columns would mask a quarter of
 * the lanes. */
#define GEMM_KERNELS_NV(mr, sfx, AM)						\
	GEMM_KERNEL(mr, 1, sfx, AM) GEMM_KERNEL(mr, 2, sfx, AM) GEMM_KERNEL(mr, 3, sfx, AM)
GEMM_KERNELS_NV(4, , 1) GEMM_KERNEL(4, 4, , 1)
GEMM_KERNELS_NV(2, , 1) GEMM_KERNEL(2, 4, , 1)
GEMM_KERNELS_NV(1, , 1) GEMM_KERNEL(1, 4, , 1)
GEMM_KERNELS_NV(8, _s, am)
GEMM_KERNELS_NV(4, _s, am) GEMM_KERNEL(4, 4, _s, am)
GEMM_KERNELS_NV(2, _s, am) GEMM_KERNEL(2, 4, _s, am)
GEMM_KERNELS_NV(1, _s, am) GEMM_KERNEL(1, 4, _s, am)

/* B: a struct nn_gemm_rows, or a struct nn_gemm_same3 for the same3 kernels (below) */
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

#define KSET(mr, sfx) NULL, gemm_kernel_##mr##_1##sfx, gemm_kernel_##mr##_2##sfx,	\
		      gemm_kernel_##mr##_3##sfx
static const struct gemm_tiles tiles_at = {
	.nv = 4, .nmr = 3, .mr = { 4, 2, 1 },
	.k = { { KSET(4, ), gemm_kernel_4_4 }, { KSET(2, ), gemm_kernel_2_4 },
	       { KSET(1, ), gemm_kernel_1_4 } },
};
static const struct gemm_tiles tiles_s = {
	.nv = 3, .nmr = 4, .mr = { 8, 4, 2, 1 },
	.k = { { KSET(8, _s) }, { KSET(4, _s) }, { KSET(2, _s) }, { KSET(1, _s) } },
};
static const struct gemm_tiles tiles_s64 = {
	.nv = 4, .nmr = 3, .mr = { 4, 2, 1 },
	.k = { { KSET(4, _s), gemm_kernel_4_4_s }, { KSET(2, _s), gemm_kernel_2_4_s },
	       { KSET(1, _s), gemm_kernel_1_4_s } },
};

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

/* The 3x3 same conv's form (struct nn_gemm_same3): per input channel and kernel row i,
 * the padded plane's row i from column j on is loaded once, aligned, one vector more on
 * each side, and the rows of shifts -1 and +1 are made from it in registers (valignd,
 * the lanes across a row's edge zeroed by the same instruction): as fast as reading
 * three shifted copies, which no longer need writing.  The same products in the same
 * order as nn_cpu_gemm_rows over the copies.  The loads reach 16 floats before the
 * plane's tile and 16 + 15 after: the caller's slack.  C = A B + bias (or 0), then + add
 * (as C) when add is not NULL; A given transposed as for nn_cpu_gemm_rows. */
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
		__mmask16 kv[nv], kl[nv], kr[nv];				\
		__m512 c[mr][nv];						\
		const float *a = a0;						\
										\
		_Pragma("GCC unroll 4")						\
		for (int v = 0; v < nv; v++) {					\
			int rem = N - j - 16 * v;				\
										\
			kv[v] = rem >= 16 ? 0xffff : (__mmask16)((1u << rem) - 1);	\
			kl[v] = kv[v] & B->edge[j / 16 + v][0];			\
			kr[v] = kv[v] & B->edge[j / 16 + v][1];			\
		}								\
		_Pragma("GCC unroll 16")					\
		for (int m = 0; m < mr; m++)					\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				c[m][v] = _mm512_set1_ps(bias ? bias[m] : 0.0f);	\
		for (int ci = 0; ci < B->nc; ci++)				\
		for (int i = 0; i < 3; i++) {					\
			const float *b = B->p + ci * B->ps + i * B->W + j;	\
			__m512i w[nv + 2];					\
			__m512 bv[nv];						\
										\
			_Pragma("GCC unroll 6")					\
			for (int v = 0; v < nv + 2; v++)			\
				w[v] = _mm512_castps_si512(_mm512_loadu_ps(b + 16 * (v - 1)));	\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				bv[v] = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(kl[v],	\
						w[v + 1], w[v], 15));		\
			GEMM_FMA(mr, nv, 1, bv);				\
			a += ar;						\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				bv[v] = _mm512_castsi512_ps(w[v + 1]);		\
			GEMM_FMA(mr, nv, 1, bv);				\
			a += ar;						\
			_Pragma("GCC unroll 4")					\
			for (int v = 0; v < nv; v++)				\
				bv[v] = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(kr[v],	\
						w[v + 2], w[v + 1], 1));	\
			GEMM_FMA(mr, nv, 1, bv);				\
			a += ar;						\
		}								\
		GEMM_STORE(mr, nv);						\
	}									\
}
#define GEMM_SAME3_KERNELS(mr)							\
	GEMM_SAME3_KERNEL(mr, 1) GEMM_SAME3_KERNEL(mr, 2) GEMM_SAME3_KERNEL(mr, 3)	\
	GEMM_SAME3_KERNEL(mr, 4)
GEMM_SAME3_KERNELS(4)
GEMM_SAME3_KERNELS(2)
GEMM_SAME3_KERNELS(1)

static const struct gemm_tiles tiles_same3 = {
	.nv = 4, .nmr = 3, .mr = { 4, 2, 1 },
	.k = { { KSET(4, _same3), gemm_kernel_4_4_same3 },
	       { KSET(2, _same3), gemm_kernel_2_4_same3 },
	       { KSET(1, _same3), gemm_kernel_1_4_same3 } },
};

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

/* C[i][j] (+)= sum_t A[i][t] B[j][t] for i < mi, j < nj: mi x nj dot products of
 * rows, each in one vector register, reduced at the end */
#define GEMM_ABT_KERNEL(mi, nj)							\
static void gemm_abt_##mi##x##nj(float *C, size_t ldc, const float *A, size_t lda,	\
				 const float *B, size_t ldb, int L, int acc)	\
{										\
	__m512 c[mi][nj];							\
										\
	_Pragma("GCC unroll 16")						\
	for (int i = 0; i < mi; i++)						\
		_Pragma("GCC unroll 16")					\
		for (int j = 0; j < nj; j++)					\
			c[i][j] = _mm512_setzero_ps();				\
	for (int t = 0; t < L; t += 16) {					\
		__mmask16 k = L - t >= 16 ? 0xffff : (__mmask16)((1u << (L - t)) - 1);	\
		__m512 a[mi], b[nj];						\
										\
		_Pragma("GCC unroll 16")					\
		for (int i = 0; i < mi; i++)					\
			a[i] = _mm512_maskz_loadu_ps(k, A + i * lda + t);	\
		_Pragma("GCC unroll 16")					\
		for (int j = 0; j < nj; j++)					\
			b[j] = _mm512_maskz_loadu_ps(k, B + j * ldb + t);	\
		_Pragma("GCC unroll 16")					\
		for (int i = 0; i < mi; i++)					\
			_Pragma("GCC unroll 16")				\
			for (int j = 0; j < nj; j++)				\
				c[i][j] = _mm512_fmadd_ps(a[i], b[j], c[i][j]);	\
	}									\
	_Pragma("GCC unroll 16")						\
	for (int i = 0; i < mi; i++)						\
		_Pragma("GCC unroll 16")					\
		for (int j = 0; j < nj; j++)					\
			C[i * ldc + j] = (acc ? C[i * ldc + j] : 0.0f) +	\
					 _mm512_reduce_add_ps(c[i][j]);		\
}

GEMM_ABT_KERNEL(4, 4)
GEMM_ABT_KERNEL(4, 1)
GEMM_ABT_KERNEL(1, 4)
GEMM_ABT_KERNEL(1, 1)

void nn_cpu_gemm_abt(float *C, size_t ldc, const float *A, size_t lda, const float *B,
		     size_t ldb, int M, int N, int L, int accumulate)
{
	int i = 0;

	for (; i + 4 <= M; i += 4) {
		int j = 0;

		for (; j + 4 <= N; j += 4)
			gemm_abt_4x4(C + i * ldc + j, ldc, A + i * lda, lda, B + j * ldb, ldb, L,
				     accumulate);
		for (; j < N; j++)
			gemm_abt_4x1(C + i * ldc + j, ldc, A + i * lda, lda, B + j * ldb, ldb, L,
				     accumulate);
	}
	for (; i < M; i++) {
		int j = 0;

		for (; j + 4 <= N; j += 4)
			gemm_abt_1x4(C + i * ldc + j, ldc, A + i * lda, lda, B + j * ldb, ldb, L,
				     accumulate);
		for (; j < N; j++)
			gemm_abt_1x1(C + i * ldc + j, ldc, A + i * lda, lda, B + j * ldb, ldb, L,
				     accumulate);
	}
}

/* dst (16 rows, ldd apart) = src (16 rows, lds apart)^T: three rounds of shuffles.  Rows
 * 8..15 of dst go to dst8 on (dst + 8*ldd for a plain block): the weight gradient's
 * channel-last copies of 8-wide planes put a padding column between them. */
void nn_cpu_transpose16(float *dst, float *dst8, size_t ldd, const float *src, size_t lds)
{
	__m512 r[16], t[16];

	for (int i = 0; i < 16; i++)
		r[i] = _mm512_loadu_ps(src + i * lds);
	/* per 128-bit lane: pairs of rows interleaved, then quads of rows */
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
	for (int i = 0; i < 16; i += 4) {
		r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]),
							   _mm512_castps_pd(t[i + 2])));
		r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]),
							       _mm512_castps_pd(t[i + 2])));
		r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]),
							       _mm512_castps_pd(t[i + 3])));
		r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]),
							       _mm512_castps_pd(t[i + 3])));
	}
	/* r[4q + c] lane L now holds column 4L + c of rows 4q..4q+3: gather the lanes */
	for (int c = 0; c < 4; c++) {
		__m512 v0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
		__m512 v1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xdd);
		__m512 w0 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
		__m512 w1 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xdd);

		_mm512_storeu_ps(dst + (size_t)c * ldd, _mm512_shuffle_f32x4(v0, w0, 0x88));
		_mm512_storeu_ps(dst8 + (size_t)c * ldd, _mm512_shuffle_f32x4(v0, w0, 0xdd));
		_mm512_storeu_ps(dst + (size_t)(4 + c) * ldd, _mm512_shuffle_f32x4(v1, w1, 0x88));
		_mm512_storeu_ps(dst8 + (size_t)(4 + c) * ldd, _mm512_shuffle_f32x4(v1, w1, 0xdd));
	}
}

void nn_cpu_transpose(float *restrict dst, const float *restrict src, int rows, int cols)
{
	int r0 = 0;

	for (; r0 + 16 <= rows; r0 += 16) {
		int c0 = 0;

		for (; c0 + 16 <= cols; c0 += 16) {
			float *d = dst + (size_t)c0 * rows + r0;

			nn_cpu_transpose16(d, d + (size_t)8 * rows, rows, src + (size_t)r0 * cols + c0,
					   cols);
		}
		for (int c = c0; c < cols; c++)
			for (int r = r0; r < r0 + 16; r++)
				dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
	}
	for (int r = r0; r < rows; r++)
		for (int c = 0; c < cols; c++)
			dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}

#else

void nn_cpu_transpose(float *restrict dst, const float *restrict src, int rows, int cols)
{
	for (int r0 = 0; r0 < rows; r0 += 8)
		for (int c0 = 0; c0 < cols; c0 += 8) {
			int r1 = r0 + 8 < rows ? r0 + 8 : rows, c1 = c0 + 8 < cols ? c0 + 8 : cols;

			for (int c = c0; c < c1; c++)
				for (int r = r0; r < r1; r++)
					dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
		}
}

/* Plain loops: the conv takes these paths only with AVX-512 (see NN_CPU_DIRECT) */
void nn_cpu_gemm_same3(float *C, size_t ldc, const float *at, const struct nn_gemm_same3 *B,
		       int M, int N, const float *bias, const float *add)
{
	for (int m = 0; m < M; m++)
		for (int t = 0; t < N; t++) {
			float acc = bias ? bias[m] : 0.0f;
			const float *a = at + m;
			int col = t % B->W;

			for (int c = 0; c < B->nc; c++)
				for (int i = 0; i < 3; i++)
					for (int q = 0; q < 3; q++, a += M)
						if (col + q - 1 >= 0 && col + q - 1 < B->W)
							acc += *a *
							       B->p[c * B->ps + i * B->W + t + q - 1];
			C[m * ldc + t] = add ? acc + add[m * ldc + t] : acc;
		}
}

void nn_cpu_gemm_rows_a(float *C, size_t ldc, const float *a0, size_t am, size_t ar,
			const struct nn_gemm_rows *B, int M, int N, int accumulate)
{
	for (int m = 0; m < M; m++)
		for (int t = 0; t < N; t++) {
			float acc = accumulate ? C[m * ldc + t] : 0.0f;
			const float *a = a0 + m * am;

			for (int c = 0; c < B->nc; c++)
				for (int i = 0; i < B->kh; i++)
					for (int q = 0; q < B->kw; q++, a += ar)
						acc += *a * B->p[c * B->ps + i * B->rs + q * B->qs + t];
			C[m * ldc + t] = acc;
		}
}

void nn_cpu_gemm_rows(float *C, size_t ldc, const float *at, const struct nn_gemm_rows *B,
		      int M, int N, const float *bias, int accumulate, const float *add)
{
	if (bias && !accumulate)
		for (int m = 0; m < M; m++)
			for (int t = 0; t < N; t++)
				C[m * ldc + t] = bias[m];
	nn_cpu_gemm_rows_a(C, ldc, at, 1, (size_t)M, B, M, N, accumulate || bias);
	if (add)
		for (int m = 0; m < M; m++)
			for (int t = 0; t < N; t++)
				C[m * ldc + t] += add[m * ldc + t];
}

void nn_cpu_gemm_abt(float *C, size_t ldc, const float *A, size_t lda, const float *B,
		     size_t ldb, int M, int N, int L, int accumulate)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, L, 1.0f, A, (int)lda, B,
		    (int)ldb, accumulate ? 1.0f : 0.0f, C, (int)ldc);
}

void nn_cpu_gemm_at(float *C, size_t ldc, const float *at, const float *B, size_t ldb,
		    int M, int N, int Kd, const float *bias, int accumulate)
{
	if (bias && !accumulate)
		for (int m = 0; m < M; m++)
			for (int t = 0; t < N; t++)
				C[m * ldc + t] = bias[m];
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, Kd, 1.0f, at, M, B,
		    (int)ldb, bias || accumulate ? 1.0f : 0.0f, C, (int)ldc);
}

#endif
