/* nn/cpu/cpu.h — private to the fast CPU backend (nn/cpu/): the functions its table is
 * assembled from, split over several small files, and the inline helpers of its loops. */
#ifndef NN_CPU_H
#define NN_CPU_H

#include "nn/ref/ref.h"
#include "nn/cpu/vec16.h"

/* Every file here but level.c is compiled once per level (NN_ISA: avx512, avx2, generic;
 * nn/cpu/level.c picks one per process), so each global name gets the level's suffix:
 * nn_cpu_gemm_at is nn_cpu_gemm_at_avx2 in the avx2 objects.  A global function added
 * here without its line below is a duplicate symbol at link time. */
#define NN_CPU_SYM(f) NN_CPU_SYM_(f, NN_ISA)
#define NN_CPU_SYM_(f, isa) NN_CPU_SYM__(f, isa)
#define NN_CPU_SYM__(f, isa) f##_##isa
#define nn_ops_cpu NN_CPU_SYM(nn_ops_cpu)
#define nn_cpu_avgpool_bwd NN_CPU_SYM(nn_cpu_avgpool_bwd)
#define nn_cpu_avgpool_fwd NN_CPU_SYM(nn_cpu_avgpool_fwd)
#define nn_cpu_bn_add_relu_fwd NN_CPU_SYM(nn_cpu_bn_add_relu_fwd)
#define nn_cpu_bn_bwd NN_CPU_SYM(nn_cpu_bn_bwd)
#define nn_cpu_bn_fwd NN_CPU_SYM(nn_cpu_bn_fwd)
#define nn_cpu_bn_relu_bwd NN_CPU_SYM(nn_cpu_bn_relu_bwd)
#define nn_cpu_bn_relu_fwd NN_CPU_SYM(nn_cpu_bn_relu_fwd)
#define nn_cpu_col2im NN_CPU_SYM(nn_cpu_col2im)
#define nn_cpu_colsum NN_CPU_SYM(nn_cpu_colsum)
#define nn_cpu_scratch NN_CPU_SYM(nn_cpu_scratch)
#define nn_cpu_conv_bwd NN_CPU_SYM(nn_cpu_conv_bwd)
#define nn_cpu_conv_bwd_add NN_CPU_SYM(nn_cpu_conv_bwd_add)
#define nn_cpu_conv_fwd NN_CPU_SYM(nn_cpu_conv_fwd)
#define nn_cpu_conv_is_pointwise NN_CPU_SYM(nn_cpu_conv_is_pointwise)
#define nn_cpu_conv_is_same NN_CPU_SYM(nn_cpu_conv_is_same)
#define nn_cpu_conv_wgrad NN_CPU_SYM(nn_cpu_conv_wgrad)
#define nn_cpu_conv_wgrad_ws NN_CPU_SYM(nn_cpu_conv_wgrad_ws)
#define nn_cpu_conv_ws_floats NN_CPU_SYM(nn_cpu_conv_ws_floats)
#define nn_cpu_gap_bwd NN_CPU_SYM(nn_cpu_gap_bwd)
#define nn_cpu_gap_fwd NN_CPU_SYM(nn_cpu_gap_fwd)
#define nn_cpu_gemm_abt NN_CPU_SYM(nn_cpu_gemm_abt)
#define nn_cpu_gemm_at NN_CPU_SYM(nn_cpu_gemm_at)
#define nn_cpu_gemm_rows NN_CPU_SYM(nn_cpu_gemm_rows)
#define nn_cpu_gemm_rows_a NN_CPU_SYM(nn_cpu_gemm_rows_a)
#define nn_cpu_gemm_same3 NN_CPU_SYM(nn_cpu_gemm_same3)
#define nn_cpu_im2col NN_CPU_SYM(nn_cpu_im2col)
#define nn_cpu_linear_bwd NN_CPU_SYM(nn_cpu_linear_bwd)
#define nn_cpu_linear_fwd NN_CPU_SYM(nn_cpu_linear_fwd)
#define nn_cpu_maxpool_bwd NN_CPU_SYM(nn_cpu_maxpool_bwd)
#define nn_cpu_maxpool_fwd NN_CPU_SYM(nn_cpu_maxpool_fwd)
#define nn_cpu_transpose NN_CPU_SYM(nn_cpu_transpose)
#define nn_cpu_transpose16 NN_CPU_SYM(nn_cpu_transpose16)
#define nn_embed_bwd_cpu NN_CPU_SYM(nn_embed_bwd_cpu)
#define nn_embed_fwd_cpu NN_CPU_SYM(nn_embed_fwd_cpu)
#define nn_lstm_bwd_cpu NN_CPU_SYM(nn_lstm_bwd_cpu)
#define nn_lstm_fwd_cpu NN_CPU_SYM(nn_lstm_fwd_cpu)

/* Fast CPU backend.  Hot loops run in blocks of NN_CPU_VL floats (see nn/cpu/ops_cpu.c). */
#define NN_CPU_VL 16
void nn_cpu_colsum(float *restrict sum, const float *restrict a, int rows, int cols);
/* n floats of scratch (malloc) for op, or NULL with be's error set (the ops return
 * nothing); nn/cpu/ops_cpu.c */
float *nn_cpu_scratch(struct nn_backend *be, size_t n, const char *op);
/* C (M, N; rows ldc apart) = A B (+ bias[m] on row m, bias may be NULL; or C += A B
 * when accumulate != 0, bias then ignored), with A given transposed: at (Kd, M);
 * B (Kd, N; rows ldb apart).  nn/cpu/ops_cpu_gemm.c */
void nn_cpu_gemm_at(float *C, size_t ldc, const float *at, const float *B, size_t ldb,
		    int M, int N, int Kd, const float *bias, int accumulate);
/* The rows of an implicit matrix B: row (c, i, j), for c < nc, i < kh, j < kw in that
 * order, starts at p + c*ps + i*rs + j*qs (a plain matrix: nc rows, kh = kw = 1,
 * ps = ld; qs is then unused). */
struct nn_gemm_rows {
	const float *p;
	size_t ps, rs, qs;
	int nc, kh, kw;
};
/* The implicit matrix B of a 3x3 same conv (stride 1, pad 1) over one zero-padded copy
 * of its input: planes of H+2 rows (a zero row above and below) W wide, ps floats
 * apart, from p on; row (c, i, j) of B is plane c from row i on read at a column shift
 * of j - 1, with the lanes that cross a row's edge 0: edge[t][0] (j = 0) and edge[t][1]
 * (j = 2) clear them in column vector t (columns 16t..16t+15). */
struct nn_gemm_same3 {
	const float *p;
	size_t ps;
	int W, nc;
	const uint16_t (*edge)[2];
};
/* C (M, N) = A B + bias (or 0), then + add (as C) unless NULL, A given transposed as for
 * nn_cpu_gemm_rows; reads B's planes from 16 floats before p to 32 after the last */
void nn_cpu_gemm_same3(float *C, size_t ldc, const float *at, const struct nn_gemm_same3 *B,
		       int M, int N, const float *bias, const float *add);
/* C (M, N) = A B (+ bias, or accumulate) as nn_cpu_gemm_at, with B given by its rows;
 * then + add (M, N; rows ldc apart) when add is not NULL, as C's tiles are stored */
void nn_cpu_gemm_rows(float *C, size_t ldc, const float *at, const struct nn_gemm_rows *B,
		      int M, int N, const float *bias, int accumulate, const float *add);
/* C (M, N) = A B, or C += A B when accumulate != 0, with A[m][r] = a[m*am + r*ar]: A read
 * in place whatever its layout (the conv's weight gradient: dout's planes) */
void nn_cpu_gemm_rows_a(float *C, size_t ldc, const float *a, size_t am, size_t ar,
			const struct nn_gemm_rows *B, int M, int N, int accumulate);
/* Inline copies: conv rows are short (8 floats in resnet's last stage), too short to
 * pay for a libc call each (gcc -O2 turns plain copy loops back into memcpy/memset
 * calls, which cost ~9% of a resnet20 step): vectors of 16, then the rest.  With
 * AVX-512 the rest is one masked vector.  Elsewhere a masked store (vmaskmovps) is
 * slow (microcoded on AMD's cores: conv_direct's copies took 9% of a LeNet step at the
 * avx2 level against 2.5% at avx512), so a copy's rest is one vector of 16 or 8 that
 * ends at the row's end, overlapping what is already copied, and only a rest the row
 * is too short for goes a float at a time.  The floats each function writes, and their
 * values, are the same at every level. */
#if NN_ISA_IS(avx512)
#define NN_FTAIL_MASKED 1
#else
#define NN_FTAIL_MASKED 0
#endif

static inline void nn_fcopy(float *restrict dst, const float *restrict src, int n)
{
	int t = 0;

	for (; t + 16 <= n; t += 16)
		vf_store(dst + t, vf_load(src + t));
	if (t == n)
		return;
	if (NN_FTAIL_MASKED) {
		vm16 k = vm_tail(n - t);

		vf_storem(dst + t, k, vf_loadm(src + t, k));
	} else if (n >= 16) {
		vf_store(dst + n - 16, vf_load(src + n - 16));
	} else {
		for (; t + 8 <= n; t += 8)
			memcpy(dst + t, src + t, 8 * sizeof(float));
		if (t < n && n >= 8)
			memcpy(dst + n - 8, src + n - 8, 8 * sizeof(float));
		else
			for (; t < n; t++)
				dst[t] = src[t];
	}
}

/* dst += src */
static inline void nn_fadd(float *restrict dst, const float *restrict src, int n)
{
	int t = 0;

	for (; t + 16 <= n; t += 16)
		vf_store(dst + t, vf_add(vf_load(dst + t), vf_load(src + t)));
	if (t < n && NN_FTAIL_MASKED) {
		vm16 k = vm_tail(n - t);

		vf_storem(dst + t, k, vf_add(vf_loadm(dst + t, k), vf_loadm(src + t, k)));
	} else {
		for (; t < n; t++)
			dst[t] += src[t];
	}
}

static inline void nn_fzero(float *restrict dst, int n)
{
	int t = 0;

	for (; t + 16 <= n; t += 16)
		vf_store(dst + t, vf_zero());
	if (t == n)
		return;
	if (NN_FTAIL_MASKED)
		vf_storem(dst + t, vm_tail(n - t), vf_zero());
	else if (n >= 16)
		vf_store(dst + n - 16, vf_zero());
	else
		for (; t < n; t++)
			dst[t] = 0.0f;
}

/* Sum of x[0..n) in NN_CPU_VL lanes (the tail first, then the lanes in order): the order
 * every row sum of the CPU backend uses, so that its results do not depend on the op. */
static inline float nn_cpu_sum(const float *restrict x, int n)
{
	float acc[NN_CPU_VL] = { 0 }, sum = 0.0f;
	int t = 0;

	for (; t + NN_CPU_VL <= n; t += NN_CPU_VL)
		for (int j = 0; j < NN_CPU_VL; j++)
			acc[j] += x[t + j];
	for (; t < n; t++)
		sum += x[t];
	for (int j = 0; j < NN_CPU_VL; j++)
		sum += acc[j];
	return sum;
}

/* nn/cpu/ops_cpu_im2col.c, below nn/cpu/ops_cpu_conv.c and nn/cpu/ops_cpu_conv_wgrad.c */
int nn_cpu_conv_is_same(const struct nn_conv_shape *s);	/* stride 1, 2*pad == k-1 */
int nn_cpu_conv_is_pointwise(const struct nn_conv_shape *s);	/* 1x1, stride 1, pad 0 */
/* col (C*kh*kw rows, ld apart; OH*OW columns) = the patches of one sample (C, H, W) */
void nn_cpu_im2col(float *col, size_t ld, const float *in, const struct nn_conv_shape *s);
/* din (C, H, W) = the sum of the patches in col (rows ld apart): the adjoint of im2col */
void nn_cpu_col2im(float *din, const float *col, size_t ld, const struct nn_conv_shape *s);
size_t nn_cpu_conv_wgrad_ws(const struct nn_conv_shape *s);
void nn_cpu_conv_wgrad(float *dw, const float *dout, const float *in,
		       const struct nn_conv_shape *s, float *ws);

/* dst (cols, rows) = src (rows, cols)^T.  nn/cpu/gemm_transpose.c */
void nn_cpu_transpose(float *restrict dst, const float *restrict src, int rows, int cols);
/* a 16 x 16 block: dst rows 0..7 (ldd apart) from dst on, rows 8..15 from dst8 on */
void nn_cpu_transpose16(float *dst, float *dst8, size_t ldd, const float *src, size_t lds);
/* C (M, N) = A (M, L) B (N, L)^T, or C += that when accumulate != 0: dot products of
 * rows.  nn/cpu/gemm_abt.c */
void nn_cpu_gemm_abt(float *C, size_t ldc, const float *A, size_t lda, const float *B,
		     size_t ldb, int M, int N, int L, int accumulate);
void nn_cpu_linear_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
		       const float *b, int B, int Cin, int Cout);
void nn_cpu_linear_bwd(struct nn_backend *be, float *din, float *dw, float *db,
		       const float *dout, const float *in, const float *w, int B, int Cin,
		       int Cout);
size_t nn_cpu_conv_ws_floats(struct nn_backend *be, const struct nn_conv_shape *s);
void nn_cpu_conv_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
		     const float *b, const struct nn_conv_shape *s, float *ws);
void nn_cpu_conv_bwd(struct nn_backend *be, float *din, float *dw, float *db, const float *dout,
		     const float *in, const float *w, const struct nn_conv_shape *s, float *ws);
void nn_cpu_conv_bwd_add(struct nn_backend *be, float *din, const float *add, float *dw,
			 float *db, const float *dout, const float *in, const float *w,
			 const struct nn_conv_shape *s, float *ws);
void nn_cpu_bn_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
		   const float *beta, float *run_mean, float *run_var, float *save_mean,
		   float *save_invstd, int B, int C, int HW, float momentum, float eps,
		   int train);
void nn_cpu_bn_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
		   const float *dout, const float *in, const float *gamma,
		   const float *save_mean, const float *save_invstd, int B, int C, int HW);
void nn_cpu_bn_relu_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
			const float *beta, float *run_mean, float *run_var, float *save_mean,
			float *save_invstd, int B, int C, int HW, float momentum, float eps,
			int train);
void nn_cpu_bn_relu_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
			const float *dout, const float *y, const float *in, const float *gamma,
			const float *save_mean, const float *save_invstd, int B, int C, int HW);
void nn_cpu_bn_add_relu_fwd(struct nn_backend *be, float *out, const float *in,
			    const float *res, const float *gamma, const float *beta,
			    float *run_mean, float *run_var, float *save_mean, float *save_invstd,
			    int B, int C, int HW, float momentum, float eps, int train);
void nn_cpu_maxpool_fwd(struct nn_backend *be, float *out, int32_t *argmax, const float *in,
			const struct nn_pool_shape *s);
void nn_cpu_maxpool_bwd(struct nn_backend *be, float *din, const float *dout,
			const int32_t *argmax, const struct nn_pool_shape *s);
void nn_cpu_avgpool_fwd(struct nn_backend *be, float *out, const float *in,
			const struct nn_pool_shape *s);
void nn_cpu_avgpool_bwd(struct nn_backend *be, float *din, const float *dout,
			const struct nn_pool_shape *s);
void nn_cpu_gap_fwd(struct nn_backend *be, float *out, const float *in, int B, int C, int HW);
/* nn/cpu/ops_seq_cpu.c */
void nn_embed_fwd_cpu(struct nn_backend *be, float *out, const int32_t *tokens,
		      const float *table, int B, int T, int D);
void nn_embed_bwd_cpu(struct nn_backend *be, float *dtable, const float *dout,
		      const int32_t *tokens, int B, int T, int D, int V);
void nn_lstm_fwd_cpu(struct nn_backend *be, float *out, float *cache, const float *in,
		     const float *wx, const float *wh, const float *b, int B, int T, int D,
		     int Hd);
void nn_lstm_bwd_cpu(struct nn_backend *be, float *din, float *dwx, float *dwh, float *db,
		     const float *dout, const float *cache, const float *in, const float *wx,
		     const float *wh, int B, int T, int D, int Hd);
void nn_cpu_gap_bwd(struct nn_backend *be, float *din, const float *dout, int B, int C, int HW);

#endif
