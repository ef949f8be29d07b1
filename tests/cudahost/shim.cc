/* tests/cudahost/shim.cc — the stand-ins declared in tests/cudahost/ headers: enough of the
 * CUDA runtime, cuBLAS and cuDNN for nn/cuda/ to run on the host in the tests.  Plain
 * loops, double accumulators; argument checks where a wrong call would pass silently on
 * a GPU (descriptors that disagree, a workspace too small, an algorithm not chosen by
 * the rules).  This is test scaffolding, not a CUDA emulator: it runs what emu calls. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cublas_v2.h"
#include "cuda_runtime.h"
#include "cudnn.h"

struct CUstream_st {
	int unused;
};
struct CUevent_st {
	double t;
};
struct cublasContext {
	int math;
};
struct cudnnContext {
	int unused;
};
struct cudnnTensorStruct {
	int n, c, h, w;
};
struct cudnnFilterStruct {
	int k, c, h, w;
};
struct cudnnConvolutionStruct {
	int ph, pw, u, v, dh, dw, mode;
	cudnnMathType_t math;
};

/* --- failure injection: EMU_CUDAHOST_FAIL=NAME[:N] ------------------------------------ */

extern "C" int cudahost_fail(const char *name)
{
	static long calls;	/* of the function named, since the setting changed */
	static char seen[128];
	const char *spec = getenv("EMU_CUDAHOST_FAIL");

	if (!spec || !*spec)
		return 0;
	if (strncmp(spec, seen, sizeof(seen))) {
		snprintf(seen, sizeof(seen), "%s", spec);
		calls = 0;
	}
	size_t len = strcspn(spec, ":");

	if (strlen(name) != len || strncmp(spec, name, len))
		return 0;
	long nth = spec[len] == ':' ? atol(spec + len + 1) : 1;

	return ++calls == nth;
}

/* --- runtime ------------------------------------------------------------------------- */

static size_t allocated;

extern "C" size_t cudahost_allocated(void)
{
	return allocated;
}

static unsigned long ops;	/* what a GPU would have been given to run, in order */

extern "C" void cudahost_launched(void)
{
	ops++;
}

extern "C" unsigned long cudahost_ops(void)
{
	return ops;
}

extern "C" const char *cudaGetErrorName(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "cudaSuccess";
	case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
	case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
	case cudaErrorNoDevice: return "cudaErrorNoDevice";
	case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
	case cudaErrorMpsMaxClientsReached: return "cudaErrorMpsMaxClientsReached";
	}
	return "cudaErrorUnknown";
}

extern "C" const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorNoDevice: return "no CUDA-capable device is detected";
	case cudaErrorLaunchFailure: return "unspecified launch failure";
	case cudaErrorMpsMaxClientsReached:
		return "The hardware resources required to create MPS client have been exhausted";
	}
	return "unknown error";
}

#define FAIL_RT(name, err)			\
	do {					\
		if (cudahost_fail(name))	\
			return err;		\
	} while (0)

extern "C" cudaError_t cudaGetLastError(void)
{
	FAIL_RT("cudaGetLastError", cudaErrorLaunchFailure);
	return cudaSuccess;
}

extern "C" cudaError_t cudaGetDeviceCount(int *n)
{
	FAIL_RT("cudaGetDeviceCount", cudaErrorNoDevice);
	*n = 1;
	return cudaSuccess;
}

extern "C" cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	*value = cudaComputeModeDefault;
	return cudaSuccess;
}

extern "C" cudaError_t cudaInitDevice(int device, unsigned int device_flags, unsigned int flags)
{
	FAIL_RT("cudaInitDevice", cudaErrorNoDevice);
	return device == 0 ? cudaSuccess : cudaErrorInvalidValue;
}

extern "C" cudaError_t cudaSetDevice(int device)
{
	return device == 0 ? cudaSuccess : cudaErrorInvalidValue;
}

extern "C" cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
	*s = new CUstream_st();
	return cudaSuccess;
}

extern "C" cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	delete s;
	return cudaSuccess;
}

extern "C" cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	FAIL_RT("cudaStreamSynchronize", cudaErrorLaunchFailure);
	return cudaSuccess;
}

/* Every allocation carries its size in front, for cudahost_allocated. */
static void *counted_alloc(size_t bytes)
{
	uint8_t *p = (uint8_t *)aligned_alloc(64, 64 + (bytes + 63) / 64 * 64);

	if (!p)
		return NULL;
	memcpy(p, &bytes, sizeof(bytes));
	allocated += bytes;
	return p + 64;
}

static void counted_free(void *q)
{
	if (!q)
		return;
	size_t bytes;
	uint8_t *p = (uint8_t *)q - 64;

	memcpy(&bytes, p, sizeof(bytes));
	allocated -= bytes;
	free(p);
}

extern "C" cudaError_t cudaMalloc(void **p, size_t bytes)
{
	FAIL_RT("cudaMalloc", cudaErrorMemoryAllocation);
	*p = counted_alloc(bytes);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

extern "C" cudaError_t cudaFree(void *p)
{
	counted_free(p);
	return cudaSuccess;
}

extern "C" cudaError_t cudaMallocHost(void **p, size_t bytes)
{
	FAIL_RT("cudaMallocHost", cudaErrorMemoryAllocation);
	*p = counted_alloc(bytes);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

extern "C" cudaError_t cudaFreeHost(void *p)
{
	counted_free(p);
	return cudaSuccess;
}

extern "C" cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s)
{
	if (!s)
		return cudaErrorInvalidValue;
	memset(p, value, bytes);
	ops++;
	return cudaSuccess;
}

extern "C" cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
				       enum cudaMemcpyKind kind, cudaStream_t s)
{
	FAIL_RT("cudaMemcpyAsync", cudaErrorLaunchFailure);
	if (!s || (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost))
		return cudaErrorInvalidValue;
	memmove(dst, src, bytes);
	return cudaSuccess;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

extern "C" cudaError_t cudaEventCreate(cudaEvent_t *e)
{
	*e = new CUevent_st();
	return cudaSuccess;
}

extern "C" cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	delete e;
	return cudaSuccess;
}

extern "C" cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	e->t = now_s();
	return s ? cudaSuccess : cudaErrorInvalidValue;
}

extern "C" cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	return cudaSuccess;
}

extern "C" cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	*ms = (float)((end->t - start->t) * 1e3);
	return cudaSuccess;
}

/* --- cuBLAS -------------------------------------------------------------------------- */

extern "C" cublasStatus_t cublasCreate(cublasHandle_t *h)
{
	if (cudahost_fail("cublasCreate"))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	*h = new cublasContext();
	return CUBLAS_STATUS_SUCCESS;
}

extern "C" cublasStatus_t cublasDestroy(cublasHandle_t h)
{
	delete h;
	return CUBLAS_STATUS_SUCCESS;
}

extern "C" cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s)
{
	return h && s ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

extern "C" cublasStatus_t cublasSetWorkspace(cublasHandle_t h, void *ws, size_t bytes)
{
	return h && ws && bytes ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

extern "C" cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
	h->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

extern "C" const char *cublasGetStatusName(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
	case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
	case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
	case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
	}
	return "CUBLAS_STATUS_UNKNOWN";
}

extern "C" const char *cublasGetStatusString(cublasStatus_t s)
{
	return s == CUBLAS_STATUS_SUCCESS ? "success" : "refused by the stand-in";
}

/* C = alpha op(A) op(B) + beta C, column-major; C is not read when beta is 0. */
extern "C" cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta,
				      cublasOperation_t tb, int m, int n, int k,
				      const float *alpha, const float *A, int lda, const float *B,
				      int ldb, const float *beta, float *C, int ldc)
{
	if (cudahost_fail("cublasSgemm"))
		return CUBLAS_STATUS_EXECUTION_FAILED;
	/* the leading dimensions cuBLAS requires */
	if (!h || h->math != CUBLAS_PEDANTIC_MATH || m < 0 || n < 0 || k < 0 ||
	    lda < (ta == CUBLAS_OP_N ? m : k) || ldb < (tb == CUBLAS_OP_N ? k : n) || ldc < m ||
	    lda < 1 || ldb < 1 || ldc < 1)
		return CUBLAS_STATUS_INVALID_VALUE;
	ops++;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double acc = 0;

			for (int q = 0; q < k; q++) {
				float a = ta == CUBLAS_OP_N ? A[i + (size_t)q * lda] : A[q + (size_t)i * lda];
				float b = tb == CUBLAS_OP_N ? B[q + (size_t)j * ldb] : B[j + (size_t)q * ldb];

				acc += (double)a * b;
			}
			float *c = &C[i + (size_t)j * ldc];

			*c = (float)(*alpha * acc + (*beta == 0.0f ? 0.0 : (double)*beta * *c));
		}
	return CUBLAS_STATUS_SUCCESS;
}

/* --- cuDNN --------------------------------------------------------------------------- */

#define FAIL_DNN(name)							\
	do {								\
		if (cudahost_fail(name))				\
			return CUDNN_STATUS_EXECUTION_FAILED;		\
	} while (0)

enum { GOOD_ALGO = 2, WS_BYTES = 256 };	/* the one the rules pick, and its workspace */

extern "C" cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
	FAIL_DNN("cudnnCreate");
	*h = new cudnnContext();
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
	delete h;
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
	return h && s ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

extern "C" const char *cudnnGetErrorString(cudnnStatus_t s)
{
	switch (s) {
	case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
	case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
	case CUDNN_STATUS_ALLOC_FAILED: return "CUDNN_STATUS_ALLOC_FAILED";
	case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
	case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
	case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
	}
	return "CUDNN_STATUS_UNKNOWN";
}

extern "C" cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d)
{
	*d = new cudnnTensorStruct();
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d)
{
	delete d;
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d,
						    cudnnTensorFormat_t f, cudnnDataType_t t,
						    int n, int c, int h, int w)
{
	if (n < 1 || c < 1 || h < 1 || w < 1 || f != CUDNN_TENSOR_NCHW || t != CUDNN_DATA_FLOAT)
		return CUDNN_STATUS_BAD_PARAM;
	*d = cudnnTensorStruct{ n, c, h, w };
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d)
{
	*d = new cudnnFilterStruct();
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d)
{
	delete d;
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d,
						    cudnnDataType_t t, cudnnTensorFormat_t f,
						    int k, int c, int h, int w)
{
	if (k < 1 || c < 1 || h < 1 || w < 1 || f != CUDNN_TENSOR_NCHW || t != CUDNN_DATA_FLOAT)
		return CUDNN_STATUS_BAD_PARAM;
	*d = cudnnFilterStruct{ k, c, h, w };
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
	*d = new cudnnConvolutionStruct();
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d)
{
	delete d;
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d,
							 int pad_h, int pad_w, int u, int v,
							 int dil_h, int dil_w,
							 cudnnConvolutionMode_t mode,
							 cudnnDataType_t t)
{
	if (pad_h < 0 || pad_w < 0 || u < 1 || v < 1 || dil_h < 1 || dil_w < 1)
		return CUDNN_STATUS_BAD_PARAM;
	d->ph = pad_h, d->pw = pad_w, d->u = u, d->v = v, d->dh = dil_h, d->dw = dil_w;
	d->mode = mode;
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d,
						     cudnnMathType_t m)
{
	d->math = m;
	return CUDNN_STATUS_SUCCESS;
}

/* The shapes must agree, as cuDNN requires: y = conv(x, w) under c.  Only what emu uses:
 * cross-correlation, no dilation, FMA math. */
static bool shapes_agree(const cudnnTensorStruct *x, const cudnnFilterStruct *w,
			 const cudnnConvolutionStruct *c, const cudnnTensorStruct *y)
{
	int oh = (x->h + 2 * c->ph - w->h) / c->u + 1, ow = (x->w + 2 * c->pw - w->w) / c->v + 1;

	return c->mode == CUDNN_CROSS_CORRELATION && c->dh == 1 && c->dw == 1 &&
	       c->math == CUDNN_FMA_MATH && x->c == w->c && y->n == x->n && y->c == w->k &&
	       y->h == oh && y->w == ow;
}

/* Three candidates, as the real heuristics may rank them: a faster non-deterministic one,
 * a tensor-op one, then the deterministic FMA one the rules must pick. */
#define HEURISTICS(perf, requested, returned)					\
	do {									\
		cudnnDeterminism_t det[3] = { CUDNN_NON_DETERMINISTIC,		\
					      CUDNN_DETERMINISTIC, CUDNN_DETERMINISTIC };	\
		cudnnMathType_t math[3] = { CUDNN_FMA_MATH, CUDNN_TENSOR_OP_MATH,	\
					    CUDNN_FMA_MATH };			\
		*(returned) = (requested) < 3 ? (requested) : 3;		\
		for (int i = 0; i < *(returned); i++) {				\
			memset(&(perf)[i], 0, sizeof((perf)[i]));		\
			(perf)[i].algo = (decltype((perf)[i].algo))i;		\
			(perf)[i].status = CUDNN_STATUS_SUCCESS;		\
			(perf)[i].memory = WS_BYTES;				\
			(perf)[i].determinism = det[i];				\
			(perf)[i].mathType = math[i];				\
		}								\
	} while (0)

extern "C" cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
	const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, int requested,
	int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
	if (!shapes_agree(x, w, c, y))
		return CUDNN_STATUS_BAD_PARAM;
	HEURISTICS(perf, requested, returned);
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
	cudnnHandle_t h, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
	const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, int requested,
	int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf)
{
	if (!shapes_agree(dx, w, c, dy))
		return CUDNN_STATUS_BAD_PARAM;
	HEURISTICS(perf, requested, returned);
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
	const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw, int requested,
	int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
{
	if (!shapes_agree(x, dw, c, dy))
		return CUDNN_STATUS_BAD_PARAM;
	HEURISTICS(perf, requested, returned);
	return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t ws_size(int algo, size_t *bytes)
{
	*bytes = WS_BYTES;
	return algo == GOOD_ALGO ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
}

extern "C" cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
	const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y,
	cudnnConvolutionFwdAlgo_t algo, size_t *bytes)
{
	return ws_size(algo, bytes);
}

extern "C" cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
	cudnnHandle_t h, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
	const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx,
	cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes)
{
	return ws_size(algo, bytes);
}

extern "C" cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
	const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw,
	cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes)
{
	return ws_size(algo, bytes);
}

/* The input element under output (n, k, oh, ow) at filter tap (c, i, j), or -1 in the
 * padding. */
static long tap(const cudnnTensorStruct *x, const cudnnConvolutionStruct *cv, int n, int c,
		int oh, int ow, int i, int j)
{
	int h = oh * cv->u - cv->ph + i, w = ow * cv->v - cv->pw + j;

	if (h < 0 || h >= x->h || w < 0 || w >= x->w)
		return -1;
	return (((long)n * x->c + c) * x->h + h) * x->w + w;
}

static bool call_ok(int algo, void *ws, size_t ws_bytes)
{
	return algo == GOOD_ALGO && ws && ws_bytes >= WS_BYTES;
}

/* out = alpha acc + beta out, out not read when beta is 0 */
static void blend(float *out, const double *acc, size_t n, const void *alpha, const void *beta)
{
	float a = *(const float *)alpha, b = *(const float *)beta;

	for (size_t i = 0; i < n; i++)
		out[i] = (float)(a * acc[i] + (b == 0.0f ? 0.0 : (double)b * out[i]));
}

extern "C" cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
						 const cudnnTensorDescriptor_t xd, const void *xv,
						 const cudnnFilterDescriptor_t wd, const void *wv,
						 const cudnnConvolutionDescriptor_t cd,
						 cudnnConvolutionFwdAlgo_t algo, void *ws,
						 size_t ws_bytes, const void *beta,
						 const cudnnTensorDescriptor_t yd, void *yv)
{
	FAIL_DNN("cudnnConvolutionForward");
	if (!shapes_agree(xd, wd, cd, yd) || !call_ok(algo, ws, ws_bytes))
		return CUDNN_STATUS_BAD_PARAM;
	ops++;
	const float *x = (const float *)xv, *w = (const float *)wv;
	size_t ny = (size_t)yd->n * yd->c * yd->h * yd->w;
	double *acc = (double *)calloc(ny, sizeof(double));

	if (!acc)
		return CUDNN_STATUS_ALLOC_FAILED;
	for (int n = 0; n < yd->n; n++)
		for (int k = 0; k < yd->c; k++)
			for (int oh = 0; oh < yd->h; oh++)
				for (int ow = 0; ow < yd->w; ow++) {
					double s = 0;

					for (int c = 0; c < wd->c; c++)
						for (int i = 0; i < wd->h; i++)
							for (int j = 0; j < wd->w; j++) {
								long e = tap(xd, cd, n, c, oh, ow, i, j);

								if (e >= 0)
									s += (double)x[e] * w[(((size_t)k * wd->c + c) * wd->h + i) * wd->w + j];
							}
					acc[(((size_t)n * yd->c + k) * yd->h + oh) * yd->w + ow] = s;
				}
	blend((float *)yv, acc, ny, alpha, beta);
	free(acc);
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
						      const cudnnFilterDescriptor_t wd,
						      const void *wv,
						      const cudnnTensorDescriptor_t dyd,
						      const void *dyv,
						      const cudnnConvolutionDescriptor_t cd,
						      cudnnConvolutionBwdDataAlgo_t algo, void *ws,
						      size_t ws_bytes, const void *beta,
						      const cudnnTensorDescriptor_t dxd, void *dxv)
{
	FAIL_DNN("cudnnConvolutionBackwardData");
	if (!shapes_agree(dxd, wd, cd, dyd) || !call_ok(algo, ws, ws_bytes))
		return CUDNN_STATUS_BAD_PARAM;
	ops++;
	const float *w = (const float *)wv, *dy = (const float *)dyv;
	size_t nx = (size_t)dxd->n * dxd->c * dxd->h * dxd->w;
	double *acc = (double *)calloc(nx, sizeof(double));

	if (!acc)
		return CUDNN_STATUS_ALLOC_FAILED;
	for (int n = 0; n < dyd->n; n++)
		for (int k = 0; k < dyd->c; k++)
			for (int oh = 0; oh < dyd->h; oh++)
				for (int ow = 0; ow < dyd->w; ow++) {
					double g = dy[(((size_t)n * dyd->c + k) * dyd->h + oh) * dyd->w + ow];

					for (int c = 0; c < wd->c; c++)
						for (int i = 0; i < wd->h; i++)
							for (int j = 0; j < wd->w; j++) {
								long e = tap(dxd, cd, n, c, oh, ow, i, j);

								if (e >= 0)
									acc[e] += g * w[(((size_t)k * wd->c + c) * wd->h + i) * wd->w + j];
							}
				}
	blend((float *)dxv, acc, nx, alpha, beta);
	free(acc);
	return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
							const cudnnTensorDescriptor_t xd,
							const void *xv,
							const cudnnTensorDescriptor_t dyd,
							const void *dyv,
							const cudnnConvolutionDescriptor_t cd,
							cudnnConvolutionBwdFilterAlgo_t algo,
							void *ws, size_t ws_bytes, const void *beta,
							const cudnnFilterDescriptor_t dwd, void *dwv)
{
	FAIL_DNN("cudnnConvolutionBackwardFilter");
	if (!shapes_agree(xd, dwd, cd, dyd) || !call_ok(algo, ws, ws_bytes))
		return CUDNN_STATUS_BAD_PARAM;
	ops++;
	const float *x = (const float *)xv, *dy = (const float *)dyv;
	size_t nw = (size_t)dwd->k * dwd->c * dwd->h * dwd->w;
	double *acc = (double *)calloc(nw, sizeof(double));

	if (!acc)
		return CUDNN_STATUS_ALLOC_FAILED;
	for (int n = 0; n < dyd->n; n++)
		for (int k = 0; k < dyd->c; k++)
			for (int oh = 0; oh < dyd->h; oh++)
				for (int ow = 0; ow < dyd->w; ow++) {
					double g = dy[(((size_t)n * dyd->c + k) * dyd->h + oh) * dyd->w + ow];

					for (int c = 0; c < dwd->c; c++)
						for (int i = 0; i < dwd->h; i++)
							for (int j = 0; j < dwd->w; j++) {
								long e = tap(xd, cd, n, c, oh, ow, i, j);

								if (e >= 0)
									acc[(((size_t)k * dwd->c + c) * dwd->h + i) * dwd->w + j] += g * x[e];
							}
				}
	blend((float *)dwv, acc, nw, alpha, beta);
	free(acc);
	return CUDNN_STATUS_SUCCESS;
}
