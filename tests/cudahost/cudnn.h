/* tests/cudahost/cudnn.h — a stand-in for cuDNN's legacy convolution API (see
 * cuda_runtime.h here): NCHW cross-correlation with padding and stride, computed by plain
 * loops.  Its _v7 heuristics list a non-deterministic and a tensor-op algorithm before
 * the deterministic FMA one, and the convolutions refuse any other: the backend's choice
 * is checked too.  The workspace sizes are small but not zero. */
#ifndef TESTS_CUDAHOST_CUDNN_H
#define TESTS_CUDAHOST_CUDNN_H

#include "cuda_runtime.h"

typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;

typedef enum {
	CUDNN_STATUS_SUCCESS = 0,
	CUDNN_STATUS_NOT_INITIALIZED = 1001,
	CUDNN_STATUS_ALLOC_FAILED = 2000,
	CUDNN_STATUS_BAD_PARAM = 2000 + 1,
	CUDNN_STATUS_NOT_SUPPORTED = 3000,
	CUDNN_STATUS_EXECUTION_FAILED = 5000,
} cudnnStatus_t;
typedef enum { CUDNN_TENSOR_NCHW = 0 } cudnnTensorFormat_t;
typedef enum { CUDNN_DATA_FLOAT = 0 } cudnnDataType_t;
typedef enum { CUDNN_CONVOLUTION = 0, CUDNN_CROSS_CORRELATION = 1 } cudnnConvolutionMode_t;
typedef enum {
	CUDNN_DEFAULT_MATH = 0,
	CUDNN_TENSOR_OP_MATH = 1,
	CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2,
	CUDNN_FMA_MATH = 3,
} cudnnMathType_t;
typedef enum { CUDNN_NON_DETERMINISTIC = 0, CUDNN_DETERMINISTIC = 1 } cudnnDeterminism_t;
typedef enum { CUDNN_CONVOLUTION_FWD_ALGO_COUNT = 8 } cudnnConvolutionFwdAlgo_t;
typedef enum { CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT = 6 } cudnnConvolutionBwdDataAlgo_t;
typedef enum { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT = 7 } cudnnConvolutionBwdFilterAlgo_t;

#define CUDNN_PERF_FIELDS(A)					\
	A algo;							\
	cudnnStatus_t status;					\
	float time;						\
	size_t memory;						\
	cudnnDeterminism_t determinism;				\
	cudnnMathType_t mathType;				\
	int reserved[3];
typedef struct {
	CUDNN_PERF_FIELDS(cudnnConvolutionFwdAlgo_t)
} cudnnConvolutionFwdAlgoPerf_t;
typedef struct {
	CUDNN_PERF_FIELDS(cudnnConvolutionBwdDataAlgo_t)
} cudnnConvolutionBwdDataAlgoPerf_t;
typedef struct {
	CUDNN_PERF_FIELDS(cudnnConvolutionBwdFilterAlgo_t)
} cudnnConvolutionBwdFilterAlgoPerf_t;
#undef CUDNN_PERF_FIELDS

#ifdef __cplusplus
extern "C" {
#endif
cudnnStatus_t cudnnCreate(cudnnHandle_t *h);
cudnnStatus_t cudnnDestroy(cudnnHandle_t h);
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s);
const char *cudnnGetErrorString(cudnnStatus_t s);
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d);
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d);
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f,
					 cudnnDataType_t t, int n, int c, int h, int w);
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d);
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d);
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t t,
					 cudnnTensorFormat_t f, int k, int c, int h, int w);
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d);
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d);
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h,
					      int pad_w, int u, int v, int dil_h, int dil_w,
					      cudnnConvolutionMode_t mode, cudnnDataType_t t);
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m);
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
	const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, int requested,
	int *returned, cudnnConvolutionFwdAlgoPerf_t *perf);
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
	cudnnHandle_t h, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
	const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, int requested,
	int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf);
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
	const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw, int requested,
	int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf);
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
	const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y,
	cudnnConvolutionFwdAlgo_t algo, size_t *bytes);
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
	cudnnHandle_t h, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
	const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx,
	cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes);
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
	const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw,
	cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes);
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
				      const cudnnTensorDescriptor_t xd, const void *x,
				      const cudnnFilterDescriptor_t wd, const void *w,
				      const cudnnConvolutionDescriptor_t cd,
				      cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
				      const void *beta, const cudnnTensorDescriptor_t yd, void *y);
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
					   const cudnnFilterDescriptor_t wd, const void *w,
					   const cudnnTensorDescriptor_t dyd, const void *dy,
					   const cudnnConvolutionDescriptor_t cd,
					   cudnnConvolutionBwdDataAlgo_t algo, void *ws,
					   size_t ws_bytes, const void *beta,
					   const cudnnTensorDescriptor_t dxd, void *dx);
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
					     const cudnnTensorDescriptor_t xd, const void *x,
					     const cudnnTensorDescriptor_t dyd, const void *dy,
					     const cudnnConvolutionDescriptor_t cd,
					     cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
					     size_t ws_bytes, const void *beta,
					     const cudnnFilterDescriptor_t dwd, void *dw);
#ifdef __cplusplus
}
#endif

#endif
