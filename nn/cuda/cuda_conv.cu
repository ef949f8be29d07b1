/* nn/cuda/cuda_conv.cu — convolution on cuDNN: forward, backward data and backward
 * filter, each with a deterministic algorithm.
 *
 * The first call with a shape (batch included) builds its descriptors and asks cuDNN's
 * heuristics (the _v7 queries: they rank algorithms from the shape and the GPU, they
 * time nothing, so two processes pick alike) for the best algorithm that is
 * deterministic and uses FMA math (no TF32 or tensor-op conversion); never
 * cudnnFind*, which times candidates.  The shape's entry is kept for the life of the
 * backend, and the cuDNN workspace grows to the largest any shape needs: a step with a
 * shape seen before allocates nothing.  The model's own workspace is unused
 * (conv_ws_floats is 0).  The bias is added, and its gradient summed, by own kernels.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "nn/cuda/cuda.cuh"

struct nn_cuda_conv {
	struct nn_conv_shape s;
	cudnnTensorDescriptor_t x, y;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t conv;
	cudnnConvolutionFwdAlgo_t fwd;
	cudnnConvolutionBwdDataAlgo_t bwd_data;
	cudnnConvolutionBwdFilterAlgo_t bwd_filter;
};

/* The most workspace one algorithm may take: 16 workers may share a GPU, each with its
 * own (an FFT algorithm can ask for gigabytes). */
#define CONV_WS_MAX ((size_t)64 << 20)

/* The first candidate that is deterministic, uses FMA math and fits CONV_WS_MAX, in the
 * heuristics' order; -1 when none does. */
template <typename Perf> static int first_acceptable(const Perf *p, int n)
{
	for (int i = 0; i < n; i++)
		if (p[i].status == CUDNN_STATUS_SUCCESS && p[i].determinism == CUDNN_DETERMINISTIC &&
		    (p[i].mathType == CUDNN_FMA_MATH || p[i].mathType == CUDNN_DEFAULT_MATH) &&
		    p[i].memory <= CONV_WS_MAX)
			return i;
	return -1;
}

/* The algorithm of each direction, and the workspace they need. */
static bool choose_algorithms(struct nn_backend *be, struct nn_cuda_conv *k, size_t *ws)
{
	cudnnHandle_t h = nn_cu(be)->dnn;
	cudnnConvolutionFwdAlgoPerf_t fp[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
	cudnnConvolutionBwdDataAlgoPerf_t dp[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
	cudnnConvolutionBwdFilterAlgoPerf_t wp[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
	int nf = 0, nd = 0, nw = 0;
	size_t a = 0, b = 0, c = 0;

	if (!CU_DNN(be, cudnnGetConvolutionForwardAlgorithm_v7(h, k->x, k->w, k->conv, k->y,
							       CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
							       &nf, fp)) ||
	    !CU_DNN(be, cudnnGetConvolutionBackwardDataAlgorithm_v7(
				h, k->w, k->y, k->conv, k->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
				&nd, dp)) ||
	    !CU_DNN(be, cudnnGetConvolutionBackwardFilterAlgorithm_v7(
				h, k->x, k->y, k->conv, k->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
				&nw, wp)))
		return false;
	int f = first_acceptable(fp, nf), d = first_acceptable(dp, nd), w = first_acceptable(wp, nw);

	if (f < 0 || d < 0 || w < 0) {
		nn_backend_fail(be, -ENOTSUP, "cudnn: no deterministic algorithm for the %s of conv "
				"B%d C%d %dx%d K%d k%d s%d p%d", f < 0 ? "forward" : d < 0 ?
				"backward data" : "backward filter", k->s.B, k->s.C, k->s.H, k->s.W,
				k->s.K, k->s.kh, k->s.stride, k->s.pad);
		return false;
	}
	k->fwd = fp[f].algo;
	k->bwd_data = dp[d].algo;
	k->bwd_filter = wp[w].algo;
	if (!CU_DNN(be, cudnnGetConvolutionForwardWorkspaceSize(h, k->x, k->w, k->conv, k->y,
							       k->fwd, &a)) ||
	    !CU_DNN(be, cudnnGetConvolutionBackwardDataWorkspaceSize(h, k->w, k->y, k->conv, k->x,
								    k->bwd_data, &b)) ||
	    !CU_DNN(be, cudnnGetConvolutionBackwardFilterWorkspaceSize(h, k->x, k->y, k->conv,
								      k->w, k->bwd_filter, &c)))
		return false;
	*ws = a > b ? (a > c ? a : c) : (b > c ? b : c);
	return true;
}

static void plan_destroy(struct nn_cuda_conv *k)
{
	if (k->x)
		cudnnDestroyTensorDescriptor(k->x);
	if (k->y)
		cudnnDestroyTensorDescriptor(k->y);
	if (k->w)
		cudnnDestroyFilterDescriptor(k->w);
	if (k->conv)
		cudnnDestroyConvolutionDescriptor(k->conv);
}

/* The entry of shape s, made on first use; NULL on failure (recorded). */
static struct nn_cuda_conv *plan(struct nn_backend *be, const struct nn_conv_shape *s)
{
	struct nn_cuda *c = nn_cu(be);

	for (int i = 0; i < c->nconv; i++)
		if (!memcmp(&c->conv[i].s, s, sizeof(*s)))
			return &c->conv[i];
	if (c->nconv == c->conv_cap) {
		int cap = c->conv_cap ? 2 * c->conv_cap : 16;
		void *p = realloc(c->conv, (size_t)cap * sizeof(*c->conv));

		if (!p) {
			nn_backend_fail(be, -ENOMEM, "cuda: out of host memory");
			return NULL;
		}
		c->conv = (struct nn_cuda_conv *)p;
		c->conv_cap = cap;
	}
	struct nn_cuda_conv *k = &c->conv[c->nconv];
	size_t ws = 0;

	memset(k, 0, sizeof(*k));
	k->s = *s;
	bool ok = CU_DNN(be, cudnnCreateTensorDescriptor(&k->x)) &&
		  CU_DNN(be, cudnnCreateTensorDescriptor(&k->y)) &&
		  CU_DNN(be, cudnnCreateFilterDescriptor(&k->w)) &&
		  CU_DNN(be, cudnnCreateConvolutionDescriptor(&k->conv)) &&
		  CU_DNN(be, cudnnSetTensor4dDescriptor(k->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
							s->B, s->C, s->H, s->W)) &&
		  CU_DNN(be, cudnnSetTensor4dDescriptor(k->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
							s->B, s->K, s->OH, s->OW)) &&
		  CU_DNN(be, cudnnSetFilter4dDescriptor(k->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
							s->K, s->C, s->kh, s->kw)) &&
		  CU_DNN(be, cudnnSetConvolution2dDescriptor(k->conv, s->pad, s->pad, s->stride,
							     s->stride, 1, 1,
							     CUDNN_CROSS_CORRELATION,
							     CUDNN_DATA_FLOAT)) &&
		  CU_DNN(be, cudnnSetConvolutionMathType(k->conv, CUDNN_FMA_MATH)) &&
		  choose_algorithms(be, k, &ws);

	if (ok && ws > c->conv_ws_bytes) {
		/* queued convolutions may still use the old workspace */
		ok = CU_RT(be, cudaStreamSynchronize(c->stream)) && CU_RT(be, cudaFree(c->conv_ws));
		c->conv_ws = NULL;
		c->conv_ws_bytes = 0;
		ok = ok && CU_RT(be, cudaMalloc(&c->conv_ws, ws));
		if (ok)
			c->conv_ws_bytes = ws;
	}
	if (!ok) {
		plan_destroy(k);
		return NULL;
	}
	c->nconv++;
	return k;
}

extern "C" void nn_cuda_conv_free(struct nn_backend *be)
{
	struct nn_cuda *c = nn_cu(be);

	for (int i = 0; i < c->nconv; i++)
		plan_destroy(&c->conv[i]);
	free(c->conv);
	c->conv = NULL;
	c->nconv = c->conv_cap = 0;
}

extern "C" size_t nn_cuda_conv_ws_floats(struct nn_backend *be, const struct nn_conv_shape *s)
{
	return 0;	/* the backend keeps its own (see the file comment) */
}

extern "C" void nn_cuda_conv_fwd(struct nn_backend *be, float *out, const float *in,
				 const float *w, const float *b, const struct nn_conv_shape *s,
				 float *ws)
{
	struct nn_cuda *c = nn_cu(be);
	struct nn_cuda_conv *k = be->err ? NULL : plan(be, s);
	const float one = 1.0f, zero = 0.0f;

	if (!k)
		return;
	CU_DNN(be, cudnnConvolutionForward(c->dnn, &one, k->x, in, k->w, w, k->conv, k->fwd,
					   c->conv_ws, c->conv_ws_bytes, &zero, k->y, out));
	if (!b)
		return;
	size_t plane = (size_t)s->OH * s->OW;
	int K = s->K;

	nn_cuda_launch(be, (size_t)s->B * K * plane,
		       [=] __device__(size_t i) { out[i] += b[i / plane % K]; });
}

extern "C" void nn_cuda_conv_bwd(struct nn_backend *be, float *din, float *dw, float *db,
				 const float *dout, const float *in, const float *w,
				 const struct nn_conv_shape *s, float *ws)
{
	struct nn_cuda *c = nn_cu(be);
	struct nn_cuda_conv *k = be->err ? NULL : plan(be, s);
	const float one = 1.0f, zero = 0.0f;

	if (!k)
		return;
	if (din)
		CU_DNN(be, cudnnConvolutionBackwardData(c->dnn, &one, k->w, w, k->y, dout, k->conv,
							k->bwd_data, c->conv_ws, c->conv_ws_bytes,
							&zero, k->x, din));
	if (dw)
		CU_DNN(be, cudnnConvolutionBackwardFilter(c->dnn, &one, k->x, in, k->y, dout,
							  k->conv, k->bwd_filter, c->conv_ws,
							  c->conv_ws_bytes, &zero, k->w, dw));
	if (!db)
		return;
	/* db[k] = the sum of dout over the batch and the plane */
	int K = s->K;
	double *part = (double *)nn_cuda_scratch(be, (size_t)K * NN_CUDA_PARTS * sizeof(double));

	if (!part)
		return;
	nn_cuda_channel_sums(
		be, s->B, K, s->OH * s->OW, part,
		[=] __device__(int k, size_t e) { return (double)dout[e]; },
		[=] __device__(int k, double sum) { db[k] = (float)sum; });
}
