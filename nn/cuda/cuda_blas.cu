/* nn/cuda/cuda_blas.cu — the matrix products (cuBLAS, pedantic math) and the linear
 * layer: out (B,Cout) = in (B,Cin) W^T + b; the bias is laid down first and sgemm adds
 * to it, as on the CPU. */
#include "nn/cuda/cuda.cuh"

void nn_cuda_gemm(struct nn_backend *be, bool ta, bool tb, int M, int N, int K, float alpha,
		  const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	if (be->err || M <= 0 || N <= 0)
		return;
	CU_BLAS(be, cublasSgemm(nn_cu(be)->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
				ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
				&beta, C, ldc));
}

/* sum (cols) = the column sums of a (rows, cols), in double, rows in order */
void nn_cuda_colsum(struct nn_backend *be, float *sum, const float *a, int rows, int cols)
{
	nn_cuda_launch(be, (size_t)cols, [=] __device__(size_t j) {
		double acc = 0.0;

		for (int r = 0; r < rows; r++)
			acc += a[(size_t)r * cols + j];
		sum[j] = (float)acc;
	});
}

extern "C" void nn_cuda_linear_fwd(struct nn_backend *be, float *out, const float *in,
				   const float *w, const float *b, int B, int Cin, int Cout)
{
	if (b)
		nn_cuda_launch(be, (size_t)B * Cout,
			       [=] __device__(size_t i) { out[i] = b[i % (size_t)Cout]; });
	nn_cuda_gemm(be, false, true, B, Cout, Cin, 1.0f, in, Cin, w, Cin, b ? 1.0f : 0.0f, out,
		     Cout);
}

extern "C" void nn_cuda_linear_bwd(struct nn_backend *be, float *din, float *dw, float *db,
				   const float *dout, const float *in, const float *w, int B,
				   int Cin, int Cout)
{
	if (din)	/* (B,Cin) = dout (B,Cout) w (Cout,Cin) */
		nn_cuda_gemm(be, false, false, B, Cin, Cout, 1.0f, dout, Cout, w, Cin, 0.0f, din,
			     Cin);
	if (dw)		/* (Cout,Cin) = dout^T in */
		nn_cuda_gemm(be, true, false, Cout, Cin, B, 1.0f, dout, Cout, in, Cin, 0.0f, dw,
			     Cin);
	if (db)
		nn_cuda_colsum(be, db, dout, B, Cout);
}
