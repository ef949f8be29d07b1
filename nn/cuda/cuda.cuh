/* nn/cuda/cuda.cuh — private to the CUDA backend (nn/cuda/): its state in a process, the
 * checks that turn every CUDA, cuBLAS and cuDNN status into the backend's sticky error,
 * device scratch, and the one way kernels are launched.
 *
 * Determinism: every kernel computes one output element per thread, with its sums in a
 * fixed order (no atomic adds of values); the launch geometry depends only on the element
 * count.  Reductions over many elements (batch-norm statistics, bias gradients) run in
 * blocks whose threads sum fixed strides of elements and then meet in trees of fixed
 * shape in shared memory (nn_cuda_channel_sums).  cuBLAS runs in pedantic math (no TF32)
 * on its own fixed workspace; cuDNN convolutions use FMA math and deterministic
 * algorithms only (nn/cuda/cuda_conv.cu).
 *
 * The same sources build a host emulation for the tests (tests/cudahost/: g++ with
 * stand-ins for the CUDA headers, NN_CUDA_HOST defined): launch() then runs the very
 * same lambda for every index in turn, so every launcher and kernel body here is checked
 * against the reference on a machine without a GPU.  Only the CUDA runtime, cuBLAS and
 * cuDNN themselves are stand-ins there.
 */
#ifndef NN_CUDA_CUH
#define NN_CUDA_CUH

#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "nn/backend_impl.h"
#include "nn/ops_seq.h"
}

#define NN_CUDA_THREADS 256
#define NN_CUDA_PARTS 256	/* most partial sums per channel of nn_cuda_channel_sums */
#define NN_CUDA_MAX_CHANNELS 65536	/* most channels nn_cuda_channel_sums counts for */
#define NN_CUDA_BLAS_WS (4u << 20)	/* cuBLAS workspace: fixed, so results are too */

struct nn_cuda_conv;		/* nn/cuda/cuda_conv.cu: descriptors and algorithms of a shape */

struct nn_cuda {
	cudaStream_t stream;	/* every op and copy of the process, in order */
	cublasHandle_t blas;
	cudnnHandle_t dnn;
	void *blas_ws;		/* NN_CUDA_BLAS_WS bytes */
	void *scratch;		/* device scratch of one op at a time (partial sums, loss) */
	size_t scratch_bytes;
	void *conv_ws;		/* cuDNN workspace, the largest any shape so far needed */
	size_t conv_ws_bytes;
	struct nn_cuda_conv *conv;	/* one entry per convolution shape seen */
	int nconv, conv_cap;
	double *result;		/* pinned host: what an op returns (the loss, a count) */
	unsigned *sum_done;	/* NN_CUDA_MAX_CHANNELS zeros: a channel sum's finished blocks */
	cudaEvent_t t0, t1;	/* time_start, time_stop */
};

static inline struct nn_cuda *nn_cu(struct nn_backend *be)
{
	return (struct nn_cuda *)be->priv;
}

/* Status checks: false (and the first failure recorded as "call: STATUS_NAME (text)")
 * unless the call succeeded.  call is the expression as written; its name is kept. */
bool nn_cuda_rt_ok(struct nn_backend *be, cudaError_t e, const char *call);
bool nn_cuda_blas_ok(struct nn_backend *be, cublasStatus_t s, const char *call);
bool nn_cuda_dnn_ok(struct nn_backend *be, cudnnStatus_t s, const char *call);
#define CU_RT(be, call) nn_cuda_rt_ok((be), (call), #call)
#define CU_BLAS(be, call) nn_cuda_blas_ok((be), (call), #call)
#define CU_DNN(be, call) nn_cuda_dnn_ok((be), (call), #call)

/* Device scratch of at least bytes (grown, never shrunk; NULL on failure, recorded).
 * One op's scratch is dead when the next op starts: the stream runs them in order. */
void *nn_cuda_scratch(struct nn_backend *be, size_t bytes);

/* C (M, N; rows ldc apart) = alpha op(A) op(B) + beta C, all row-major as cblas_sgemm's
 * CblasRowMajor (the CPU backend's calls port one to one): cuBLAS is column-major, so
 * this computes C^T = op(B)^T op(A)^T. */
void nn_cuda_gemm(struct nn_backend *be, bool ta, bool tb, int M, int N, int K, float alpha,
		  const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);

#ifdef NN_CUDA_HOST
/* The host emulation: every index in turn, on the calling thread; counted as the launch a
 * GPU would get (nn_step_ops is checked against the count). */
template <typename F> static inline void nn_cuda_launch(struct nn_backend *be, size_t n, F f)
{
	if (n == 0 || be->err)
		return;
	cudahost_launched();
	for (size_t i = 0; i < n; i++)
		f(i);
}
#else
template <typename F> __global__ void nn_cuda_each(size_t n, F f)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		f(i);
}

/* f(i) for i in [0, n), one thread each, on the backend's stream.  Nothing runs once the
 * backend has failed: queued work after a failure only hides the first error. */
template <typename F> static inline void nn_cuda_launch(struct nn_backend *be, size_t n, F f)
{
	if (n == 0 || be->err)
		return;
	unsigned blocks = (unsigned)((n + NN_CUDA_THREADS - 1) / NN_CUDA_THREADS);

	nn_cuda_each<<<blocks, NN_CUDA_THREADS, 0, nn_cu(be)->stream>>>(n, f);
	CU_RT(be, cudaGetLastError());
}
#endif

/* fin(c, the sum over b < B, h < HW of f(c, e)) for c < C, e = (b C + c) HW + h the index
 * of that element of a (B, C, HW) tensor, in double; one launch.  Grid (C, G) blocks of
 * NN_CUDA_THREADS threads: the P = G NN_CUDA_THREADS threads of channel c each sum the
 * q = b HW + h of one residue mod P in order, then meet in a tree over the block (pairs
 * at halving distances) into part[c G + g]; the channel's last block to finish (a
 * counter decides which, not what is added) sums the G partial sums in the same tree
 * and calls fin.  G depends on B HW alone (enough threads to fill a GPU, about
 * NN_CUDA_SUM_EACH elements each, at most NN_CUDA_PARTS), and the trees' shapes are
 * fixed: the same bits on every run and every GPU.  part holds C * NN_CUDA_PARTS
 * doubles; C is at most NN_CUDA_MAX_CHANNELS (the counters are the backend's). */
#define NN_CUDA_SUM_EACH 8

static inline unsigned nn_cuda_sum_blocks(size_t per)
{
	size_t g = (per + NN_CUDA_THREADS * NN_CUDA_SUM_EACH - 1) /
		   (NN_CUDA_THREADS * NN_CUDA_SUM_EACH);

	return g < 1 ? 1 : g > NN_CUDA_PARTS ? NN_CUDA_PARTS : (unsigned)g;
}

/* One thread's sum: the q = p, p + P, ... below per, stepping (b, h) without a division
 * per element. */
template <typename F>
static __device__ inline double nn_cuda_thread_sum(size_t p, size_t P, size_t per, int C,
						   int HW, int c, F f)
{
	size_t b = p / HW, h = p % HW, db = P / HW, dh = P % HW;
	double acc = 0.0;

	for (size_t q = p; q < per; q += P) {
		acc += f(c, (b * C + c) * HW + h);
		b += db;
		h += dh;
		if (h >= (size_t)HW) {
			h -= HW;
			b++;
		}
	}
	return acc;
}

/* false, with the backend failed, where C is more than the counters cover */
bool nn_cuda_sum_fits(struct nn_backend *be, int C);

#ifdef NN_CUDA_HOST
/* A block's tree, emulated: the additions the GPU's threads make, in the same pairs. */
static inline double nn_cuda_tree(double *s)
{
	for (int w = NN_CUDA_THREADS / 2; w > 0; w >>= 1)
		for (int t = 0; t < w; t++)
			s[t] += s[t + w];
	return s[0];
}

template <typename F, typename Fin>
static inline void nn_cuda_channel_sums(struct nn_backend *be, int B, int C, int HW,
					double *part, F f, Fin fin)
{
	size_t per = (size_t)B * HW;
	unsigned G = nn_cuda_sum_blocks(per);
	double s[NN_CUDA_THREADS];

	if (C == 0 || be->err || !nn_cuda_sum_fits(be, C))
		return;
	cudahost_launched();
	for (int c = 0; c < C; c++) {
		for (unsigned g = 0; g < G; g++) {
			for (int t = 0; t < NN_CUDA_THREADS; t++)
				s[t] = nn_cuda_thread_sum((size_t)g * NN_CUDA_THREADS + t,
							  (size_t)G * NN_CUDA_THREADS, per, C,
							  HW, c, f);
			part[(size_t)c * G + g] = nn_cuda_tree(s);
		}
		if (G == 1) {
			fin(c, part[c]);
			continue;
		}
		for (int t = 0; t < NN_CUDA_THREADS; t++)
			s[t] = t < (int)G ? part[(size_t)c * G + t] : 0.0;
		fin(c, nn_cuda_tree(s));
	}
}
#else
/* A block's tree over s[t], one value per thread; every thread returns from it. */
static __device__ inline double nn_cuda_tree(double *s, int t)
{
	__syncthreads();
	for (int w = NN_CUDA_THREADS / 2; w > 0; w >>= 1) {
		if (t < w)
			s[t] += s[t + w];
		__syncthreads();
	}
	return s[0];
}

template <typename F, typename Fin>
__global__ void nn_cuda_sum_kernel(size_t per, int C, int HW, double *part, unsigned *done,
				   F f, Fin fin)
{
	__shared__ double s[NN_CUDA_THREADS];
	__shared__ bool last;
	int t = threadIdx.x, c = blockIdx.x;
	unsigned g = blockIdx.y, G = gridDim.y;

	s[t] = nn_cuda_thread_sum((size_t)g * NN_CUDA_THREADS + t, (size_t)G * NN_CUDA_THREADS,
				  per, C, HW, c, f);
	double sum = nn_cuda_tree(s, t);

	if (G == 1) {
		if (t == 0)
			fin(c, sum);
		return;
	}
	if (t == 0) {
		part[(size_t)c * G + g] = sum;
		__threadfence();	/* the partial sum is seen before the count */
		last = atomicAdd(&done[c], 1u) == G - 1;
	}
	__syncthreads();
	if (!last)
		return;
	__threadfence();
	const volatile double *mine = part + (size_t)c * G;	/* not an L1 copy */

	s[t] = t < (int)G ? mine[t] : 0.0;
	sum = nn_cuda_tree(s, t);
	if (t == 0) {
		done[c] = 0;	/* ready for the next sum */
		fin(c, sum);
	}
}

template <typename F, typename Fin>
static inline void nn_cuda_channel_sums(struct nn_backend *be, int B, int C, int HW,
					double *part, F f, Fin fin)
{
	size_t per = (size_t)B * HW;
	unsigned G = nn_cuda_sum_blocks(per);
	struct nn_cuda *cu = nn_cu(be);

	if (C == 0 || be->err || !nn_cuda_sum_fits(be, C))
		return;
	nn_cuda_sum_kernel<<<dim3(C, G), NN_CUDA_THREADS, 0, cu->stream>>>(per, C, HW, part,
									   cu->sum_done, f, fin);
	CU_RT(be, cudaGetLastError());
}
#endif

/* The ops of the table, by file. */
extern "C" {
/* nn/cuda/cuda_blas.cu */
void nn_cuda_linear_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
			const float *b, int B, int Cin, int Cout);
void nn_cuda_linear_bwd(struct nn_backend *be, float *din, float *dw, float *db,
			const float *dout, const float *in, const float *w, int B, int Cin,
			int Cout);
void nn_cuda_colsum(struct nn_backend *be, float *sum, const float *a, int rows, int cols);
/* nn/cuda/cuda_conv.cu */
size_t nn_cuda_conv_ws_floats(struct nn_backend *be, const struct nn_conv_shape *s);
void nn_cuda_conv_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
		      const float *b, const struct nn_conv_shape *s, float *ws);
void nn_cuda_conv_bwd(struct nn_backend *be, float *din, float *dw, float *db,
		      const float *dout, const float *in, const float *w,
		      const struct nn_conv_shape *s, float *ws);
void nn_cuda_conv_free(struct nn_backend *be);
/* nn/cuda/cuda_norm.cu */
void nn_cuda_bn_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
		    const float *beta, float *run_mean, float *run_var, float *save_mean,
		    float *save_invstd, int B, int C, int HW, float momentum, float eps,
		    int train);
void nn_cuda_bn_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
		    const float *dout, const float *in, const float *gamma,
		    const float *save_mean, const float *save_invstd, int B, int C, int HW);
void nn_cuda_bn_relu_fwd(struct nn_backend *be, float *out, const float *in,
			 const float *gamma, const float *beta, float *run_mean,
			 float *run_var, float *save_mean, float *save_invstd, int B, int C,
			 int HW, float momentum, float eps, int train);
void nn_cuda_bn_relu_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
			 const float *dout, const float *y, const float *in,
			 const float *gamma, const float *save_mean, const float *save_invstd,
			 int B, int C, int HW);
/* nn/cuda/cuda_pool.cu */
void nn_cuda_maxpool_fwd(struct nn_backend *be, float *out, int32_t *argmax, const float *in,
			 const struct nn_pool_shape *s);
void nn_cuda_maxpool_bwd(struct nn_backend *be, float *din, const float *dout,
			 const int32_t *argmax, const struct nn_pool_shape *s);
void nn_cuda_avgpool_fwd(struct nn_backend *be, float *out, const float *in,
			 const struct nn_pool_shape *s);
void nn_cuda_avgpool_bwd(struct nn_backend *be, float *din, const float *dout,
			 const struct nn_pool_shape *s);
void nn_cuda_gap_fwd(struct nn_backend *be, float *out, const float *in, int B, int C, int HW);
void nn_cuda_gap_bwd(struct nn_backend *be, float *din, const float *dout, int B, int C,
		     int HW);
/* nn/cuda/cuda_elementwise.cu */
void nn_cuda_relu_fwd(struct nn_backend *be, float *out, const float *in, size_t n);
void nn_cuda_relu_bwd(struct nn_backend *be, float *din, const float *dout, const float *out,
		      size_t n);
void nn_cuda_add_fwd(struct nn_backend *be, float *out, const float *a, const float *b,
		     size_t n);
void nn_cuda_add_relu_fwd(struct nn_backend *be, float *out, const float *a, const float *b,
			  size_t n);
float nn_cuda_xent_fwd_bwd(struct nn_backend *be, float *dlogits, const float *logits,
			   const int32_t *y, int B, int K, int *correct);
/* nn/cuda/cuda_seq.cu */
void nn_cuda_embed_fwd(struct nn_backend *be, float *out, const int32_t *tokens,
		       const float *table, int B, int T, int D);
void nn_cuda_embed_bwd(struct nn_backend *be, float *dtable, const float *dout,
		       const int32_t *tokens, int B, int T, int D, int V);
void nn_cuda_lstm_fwd(struct nn_backend *be, float *out, float *cache, const float *in,
		      const float *wx, const float *wh, const float *b, int B, int T, int D,
		      int Hd);
void nn_cuda_lstm_bwd(struct nn_backend *be, float *din, float *dwx, float *dwh, float *db,
		      const float *dout, const float *cache, const float *in, const float *wx,
		      const float *wh, int B, int T, int D, int Hd);
}

#endif
