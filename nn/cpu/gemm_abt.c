/* nn/cpu/gemm_abt.c — C = A B^T: dot products of rows (the weight gradient of a conv
 * with few filters).
 *
 * Each dot product keeps 16 lane accumulators (one vf16): lane l sums the terms
 * t = l, l + 16, l + 32, ... in order (the last block zero-filled past L), and at the
 * end vf_hsum adds the lanes in its one tree.  Nothing in that depends on the level;
 * only how many dot products run at once (the tile) does. */
#include "nn/cpu/cpu.h"

/* The FMAs of one block of 16 terms, each row loaded by LOAD(row) */
#define GEMM_ABT_STEP(mi, nj, LOAD)						\
	do {									\
		vf16 a[mi], b[nj];						\
										\
		_Pragma("GCC unroll 16")					\
		for (int i = 0; i < mi; i++)					\
			a[i] = LOAD(A + i * lda + t);				\
		_Pragma("GCC unroll 16")					\
		for (int j = 0; j < nj; j++)					\
			b[j] = LOAD(B + j * ldb + t);				\
		_Pragma("GCC unroll 16")					\
		for (int i = 0; i < mi; i++)					\
			_Pragma("GCC unroll 16")				\
			for (int j = 0; j < nj; j++)				\
				c[i][j] = vf_fma(a[i], b[j], c[i][j]);		\
	} while (0)

/* C[i][j] (+)= sum_t A[i][t] B[j][t] for i < mi, j < nj: mi x nj dot products of
 * rows, each in one vector, reduced at the end */
#define GEMM_ABT_KERNEL(mi, nj)							\
static void gemm_abt_##mi##x##nj(float *C, size_t ldc, const float *A, size_t lda,	\
				 const float *B, size_t ldb, int L, int acc)	\
{										\
	vf16 c[mi][nj];								\
	int t = 0;								\
										\
	_Pragma("GCC unroll 16")						\
	for (int i = 0; i < mi; i++)						\
		_Pragma("GCC unroll 16")					\
		for (int j = 0; j < nj; j++)					\
			c[i][j] = vf_zero();					\
	for (; t + 16 <= L; t += 16)						\
		GEMM_ABT_STEP(mi, nj, vf_load);					\
	if (t < L) {								\
		vm16 k = vm_first(L - t);					\
										\
		GEMM_ABT_STEP(mi, nj, ABT_LOADM);				\
	}									\
	_Pragma("GCC unroll 16")						\
	for (int i = 0; i < mi; i++)						\
		_Pragma("GCC unroll 16")					\
		for (int j = 0; j < nj; j++)					\
			C[i * ldc + j] = (acc ? C[i * ldc + j] : 0.0f) +	\
					 vf_hsum(c[i][j]);			\
}
#define ABT_LOADM(p) vf_loadm((p), k)

/* Tiles of MI x NJ dot products, then MI x 1, 1 x NJ and 1 x 1 at the edges.  AVX-512:
 * 4 x 4, 16 of its 32 registers accumulating.  AVX2 (and generic, with the same small
 * code): 2 x 3, 12 of its 16 ymm registers accumulating, the rest for A's two rows
 * and one of B's (3 x 2 and 2 x 2 ran lenet's weight gradient as fast). */
#if NN_ISA_IS(avx512)
#define MI 4
#define NJ 4
GEMM_ABT_KERNEL(4, 4)
GEMM_ABT_KERNEL(4, 1)
GEMM_ABT_KERNEL(1, 4)
#define gemm_abt_tile gemm_abt_4x4
#define gemm_abt_col gemm_abt_4x1
#define gemm_abt_row gemm_abt_1x4
#else
#define MI 2
#define NJ 3
GEMM_ABT_KERNEL(2, 3)
GEMM_ABT_KERNEL(2, 1)
GEMM_ABT_KERNEL(1, 3)
#define gemm_abt_tile gemm_abt_2x3
#define gemm_abt_col gemm_abt_2x1
#define gemm_abt_row gemm_abt_1x3
#endif
GEMM_ABT_KERNEL(1, 1)

void nn_cpu_gemm_abt(float *C, size_t ldc, const float *A, size_t lda, const float *B,
		     size_t ldb, int M, int N, int L, int accumulate)
{
	int i = 0;

	for (; i + MI <= M; i += MI) {
		int j = 0;

		for (; j + NJ <= N; j += NJ)
			gemm_abt_tile(C + i * ldc + j, ldc, A + i * lda, lda, B + j * ldb, ldb, L,
				      accumulate);
		for (; j < N; j++)
			gemm_abt_col(C + i * ldc + j, ldc, A + i * lda, lda, B + j * ldb, ldb, L,
				     accumulate);
	}
	for (; i < M; i++) {
		int j = 0;

		for (; j + NJ <= N; j += NJ)
			gemm_abt_row(C + i * ldc + j, ldc, A + i * lda, lda, B + j * ldb, ldb, L,
				     accumulate);
		for (; j < N; j++)
			gemm_abt_1x1(C + i * ldc + j, ldc, A + i * lda, lda, B + j * ldb, ldb, L,
				     accumulate);
	}
}
