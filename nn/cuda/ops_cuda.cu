/* nn/cuda/ops_cuda.cu — the CUDA backend's table and its life in a worker process: the
 * device it binds to (blocking sync, so that a waiting worker sleeps instead of spinning
 * a core), one stream, the cuBLAS and cuDNN handles, device and pinned memory, copies,
 * timing with events, and the status checks behind the sticky error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "nn/cuda/cuda.cuh"

/* Records "name: status" for call ("cudnnConvolutionForward(h, ...)": its name is kept)
 * as the sticky error, -ENOMEM when out_of_memory, else -EIO.  Returns false. */
static bool failed(struct nn_backend *be, bool out_of_memory, const char *call,
		   const char *status, const char *text)
{
	int n = (int)strcspn(call, "(");

	nn_backend_fail(be, out_of_memory ? -ENOMEM : -EIO, "%.*s: %s%s%s%s", n < 60 ? n : 60, call,
			status, text ? " (" : "", text ? text : "", text ? ")" : "");
	return false;
}

bool nn_cuda_rt_ok(struct nn_backend *be, cudaError_t e, const char *call)
{
	/* An MPS server takes a bounded number of clients a GPU; CUDA's own text names no way out */
	if (e == cudaErrorMpsMaxClientsReached)
		return failed(be, false, call, cudaGetErrorName(e),
			      "the GPU's MPS server takes no more clients: run fewer workers a GPU, "
			      "or stop MPS (echo quit | nvidia-cuda-mps-control)");
	return e == cudaSuccess || failed(be, e == cudaErrorMemoryAllocation, call,
					  cudaGetErrorName(e), cudaGetErrorString(e));
}

bool nn_cuda_blas_ok(struct nn_backend *be, cublasStatus_t s, const char *call)
{
	return s == CUBLAS_STATUS_SUCCESS || failed(be, s == CUBLAS_STATUS_ALLOC_FAILED, call,
						    cublasGetStatusName(s),
						    cublasGetStatusString(s));
}

bool nn_cuda_dnn_ok(struct nn_backend *be, cudnnStatus_t s, const char *call)
{
	return s == CUDNN_STATUS_SUCCESS || failed(be, s == CUDNN_STATUS_ALLOC_FAILED, call,
						   cudnnGetErrorString(s), NULL);
}

void *nn_cuda_scratch(struct nn_backend *be, size_t bytes)
{
	struct nn_cuda *c = nn_cu(be);

	if (bytes <= c->scratch_bytes)
		return c->scratch;
	/* the old scratch may still be read by queued work */
	if (c->scratch && (!CU_RT(be, cudaStreamSynchronize(c->stream)) ||
			   !CU_RT(be, cudaFree(c->scratch))))
		return NULL;
	c->scratch = NULL;
	c->scratch_bytes = 0;
	if (!CU_RT(be, cudaMalloc(&c->scratch, bytes)))
		return NULL;
	c->scratch_bytes = bytes;
	return c->scratch;
}

bool nn_cuda_sum_fits(struct nn_backend *be, int C)
{
	if (C <= NN_CUDA_MAX_CHANNELS)
		return true;
	nn_backend_fail(be, -EINVAL, "cuda: a channel sum over %d channels (at most %d)", C,
			NN_CUDA_MAX_CHANNELS);
	return false;
}

/* --- life --------------------------------------------------------------------------- */

/* Whether an MPS control daemon is there to share an exclusive-process GPU. */
static bool mps_running(void)
{
	const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
	char path[512];

	snprintf(path, sizeof(path), "%s/control", dir && *dir ? dir : "/tmp/nvidia-mps");
	return access(path, F_OK) == 0;
}

static int cuda_devices(int procs, char *err, size_t errlen)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess) {
		snprintf(err, errlen, "%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
		return -ENODEV;
	}
	if (n < 1) {
		snprintf(err, errlen, "cudaGetDeviceCount found no GPU");
		return -ENODEV;
	}
	for (int d = 0; d < n; d++) {
		int mode = 0;

		e = cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d);
		if (e != cudaSuccess) {
			snprintf(err, errlen, "GPU %d: cudaDeviceGetAttribute: %s (%s)", d,
				 cudaGetErrorName(e), cudaGetErrorString(e));
			return -ENODEV;
		}
		if (mode == cudaComputeModeProhibited) {
			snprintf(err, errlen, "GPU %d is in prohibited compute mode "
				 "(nvidia-smi -c)", d);
			return -ENODEV;
		}
		/* workers of a GPU: procs / n, rounded up */
		if (mode == cudaComputeModeExclusiveProcess && (procs + n - 1) / n > 1 &&
		    !mps_running()) {
			snprintf(err, errlen, "GPU %d is in exclusive-process mode, so one process "
				 "at a time can use it, and %d workers would share %d GPU%s: "
				 "start MPS (nvidia-cuda-mps-control -d), set the default compute "
				 "mode (nvidia-smi -c DEFAULT), or run at most %d workers",
				 d, procs, n, n > 1 ? "s" : "", n);
			return -EBUSY;
		}
	}
	return n;
}

static void cuda_shutdown(struct nn_backend *be)
{
	struct nn_cuda *c = nn_cu(be);

	if (!c)
		return;
	if (c->stream)
		cudaStreamSynchronize(c->stream);
	nn_cuda_conv_free(be);
	if (c->dnn)
		cudnnDestroy(c->dnn);
	if (c->blas)
		cublasDestroy(c->blas);
	cudaFree(c->blas_ws);
	cudaFree(c->scratch);
	cudaFree(c->conv_ws);
	cudaFree(c->sum_done);
	cudaFreeHost(c->result);
	if (c->t0)
		cudaEventDestroy(c->t0);
	if (c->t1)
		cudaEventDestroy(c->t1);
	if (c->stream)
		cudaStreamDestroy(c->stream);
	free(c);
	be->priv = NULL;
}

static int cuda_init(struct nn_backend *be)
{
	struct nn_cuda *c = (struct nn_cuda *)calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	be->priv = c;
	/* Blocking sync: a worker waiting for its GPU sleeps (several workers share a core). */
	bool ok = CU_RT(be, cudaInitDevice(be->device, cudaDeviceScheduleBlockingSync, 0)) &&
		  CU_RT(be, cudaSetDevice(be->device)) &&
		  CU_RT(be, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) &&
		  CU_RT(be, cudaMalloc(&c->blas_ws, NN_CUDA_BLAS_WS)) &&
		  CU_RT(be, cudaMallocHost((void **)&c->result, 4 * sizeof(double))) &&
		  CU_RT(be, cudaMalloc((void **)&c->sum_done,
				       NN_CUDA_MAX_CHANNELS * sizeof(unsigned))) &&
		  CU_RT(be, cudaMemsetAsync(c->sum_done, 0, NN_CUDA_MAX_CHANNELS * sizeof(unsigned),
					    c->stream)) &&
		  CU_RT(be, cudaEventCreate(&c->t0)) && CU_RT(be, cudaEventCreate(&c->t1)) &&
		  CU_BLAS(be, cublasCreate(&c->blas)) &&
		  CU_BLAS(be, cublasSetStream(c->blas, c->stream)) &&
		  CU_BLAS(be, cublasSetWorkspace(c->blas, c->blas_ws, NN_CUDA_BLAS_WS)) &&
		  CU_BLAS(be, cublasSetMathMode(c->blas, CUBLAS_PEDANTIC_MATH)) &&
		  CU_DNN(be, cudnnCreate(&c->dnn)) && CU_DNN(be, cudnnSetStream(c->dnn, c->stream));

	if (!ok) {
		int rc = be->err;

		cuda_shutdown(be);
		return rc;
	}
	return 0;
}

static int cuda_sync(struct nn_backend *be)
{
	CU_RT(be, cudaStreamSynchronize(nn_cu(be)->stream));
	return be->err;
}

static void cuda_time_start(struct nn_backend *be)
{
	CU_RT(be, cudaEventRecord(nn_cu(be)->t0, nn_cu(be)->stream));
}

static double cuda_time_stop(struct nn_backend *be)
{
	struct nn_cuda *c = nn_cu(be);
	float ms = 0;

	if (CU_RT(be, cudaEventRecord(c->t1, c->stream)) &&
	    CU_RT(be, cudaEventSynchronize(c->t1)))
		CU_RT(be, cudaEventElapsedTime(&ms, c->t0, c->t1));
	return ms * 1e-3;
}

/* --- memory --------------------------------------------------------------------------- */

static void *cuda_alloc(struct nn_backend *be, size_t bytes)
{
	void *p = NULL;
	size_t n = bytes ? bytes : 1;

	if (!CU_RT(be, cudaMalloc(&p, n)))
		return NULL;
	/* zeroed, as the table promises; before anything else on the stream reads it */
	if (!CU_RT(be, cudaMemsetAsync(p, 0, n, nn_cu(be)->stream))) {
		cudaFree(p);
		return NULL;
	}
	return p;
}

static void cuda_free(struct nn_backend *be, void *p)
{
	if (!p)
		return;
	cudaStreamSynchronize(nn_cu(be)->stream);	/* queued work may still use it */
	cudaFree(p);
}

static void *cuda_host_alloc(struct nn_backend *be, size_t bytes)
{
	void *p = NULL;

	if (!CU_RT(be, cudaMallocHost(&p, bytes ? bytes : 1)))
		return NULL;
	memset(p, 0, bytes);
	return p;
}

static void cuda_host_free(struct nn_backend *be, void *p)
{
	if (p)
		cudaFreeHost(p);
}

static int cuda_copy(struct nn_backend *be, void *dst, const void *src, size_t bytes,
		     cudaMemcpyKind kind)
{
	struct nn_cuda *c = nn_cu(be);

	if (be->err || !bytes)
		return be->err;
	if (CU_RT(be, cudaMemcpyAsync(dst, src, bytes, kind, c->stream)))
		CU_RT(be, cudaStreamSynchronize(c->stream));
	return be->err;
}

static int cuda_upload(struct nn_backend *be, void *dst, const void *src, size_t bytes)
{
	return cuda_copy(be, dst, src, bytes, cudaMemcpyHostToDevice);
}

static int cuda_download(struct nn_backend *be, void *dst, const void *src, size_t bytes)
{
	return cuda_copy(be, dst, src, bytes, cudaMemcpyDeviceToHost);
}

/* The table: every member in nn_ops' order (C++ designated initializers keep it). */
extern "C" const struct nn_ops nn_ops_cuda = {
	.name = "cuda",
	.variant = NULL,	/* one build for every GPU: no level to pick */
	.level = NULL,
	.host = false,
	.init = cuda_init,
	.sync = cuda_sync,
	.shutdown = cuda_shutdown,
	.devices = cuda_devices,
	.time_start = cuda_time_start,
	.time_stop = cuda_time_stop,
	.alloc = cuda_alloc,
	.free = cuda_free,
	.host_alloc = cuda_host_alloc,
	.host_free = cuda_host_free,
	.upload = cuda_upload,
	.download = cuda_download,
	.linear_fwd = nn_cuda_linear_fwd,
	.linear_bwd = nn_cuda_linear_bwd,
	.conv_ws_floats = nn_cuda_conv_ws_floats,
	.conv_fwd = nn_cuda_conv_fwd,
	.conv_bwd = nn_cuda_conv_bwd,
	.bn_fwd = nn_cuda_bn_fwd,
	.bn_bwd = nn_cuda_bn_bwd,
	.relu_fwd = nn_cuda_relu_fwd,
	.relu_bwd = nn_cuda_relu_bwd,
	.add_fwd = nn_cuda_add_fwd,
	.bn_relu_fwd = nn_cuda_bn_relu_fwd,
	.bn_relu_bwd = nn_cuda_bn_relu_bwd,
	.add_relu_fwd = nn_cuda_add_relu_fwd,
	.bn_add_relu_fwd = NULL,	/* not fused here: the ops they replace run */
	.conv_bwd_add = NULL,
	.maxpool_fwd = nn_cuda_maxpool_fwd,
	.maxpool_bwd = nn_cuda_maxpool_bwd,
	.avgpool_fwd = nn_cuda_avgpool_fwd,
	.avgpool_bwd = nn_cuda_avgpool_bwd,
	.gap_fwd = nn_cuda_gap_fwd,
	.gap_bwd = nn_cuda_gap_bwd,
	.xent_fwd_bwd = nn_cuda_xent_fwd_bwd,
	.embed_fwd = nn_cuda_embed_fwd,
	.embed_bwd = nn_cuda_embed_bwd,
	.lstm_fwd = nn_cuda_lstm_fwd,
	.lstm_bwd = nn_cuda_lstm_bwd,
};
