/* tests/cudahost/cuda_runtime.h — a stand-in for the CUDA runtime, just what nn/cuda/
 * uses, so that the CUDA backend's sources build and run on the host for the tests
 * (NN_CUDA_HOST; tests/cudahost/shim.cc): device memory is host memory, a stream queues
 * nothing (a launch runs on the calling thread), events read the clock.  One device.
 * EMU_CUDAHOST_FAIL=NAME[:N] makes the N-th call (default the first) of function NAME
 * fail, to test the error paths. */
#ifndef TESTS_CUDAHOST_CUDA_RUNTIME_H
#define TESTS_CUDAHOST_CUDA_RUNTIME_H

#include <stddef.h>

#define __host__
#define __device__
#define __global__

typedef enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorNoDevice = 100,
	cudaErrorLaunchFailure = 719,
	cudaErrorMpsMaxClientsReached = 808,
} cudaError_t;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
enum cudaDeviceAttr { cudaDevAttrComputeMode = 20 };
enum cudaComputeMode {
	cudaComputeModeDefault = 0,
	cudaComputeModeProhibited = 2,
	cudaComputeModeExclusiveProcess = 3,
};

#define cudaDeviceScheduleBlockingSync 0x04
#define cudaStreamNonBlocking 0x01

#ifdef __cplusplus
extern "C" {
#endif
const char *cudaGetErrorName(cudaError_t e);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError(void);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaInitDevice(int device, unsigned int device_flags, unsigned int flags);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t bytes);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
			    cudaStream_t s);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

/* For the stand-ins: whether this call of function name is to fail (EMU_CUDAHOST_FAIL). */
int cudahost_fail(const char *name);
/* Bytes the stand-in cudaMalloc has handed out and not taken back. */
size_t cudahost_allocated(void);
/* The ops a GPU would have run so far: kernel launches (nn_cuda_launch's host branch
 * calls cudahost_launched), cuBLAS and cuDNN calls that compute, memsets.  What
 * nn_step_ops counts (tests/test_cudahost_model.c). */
void cudahost_launched(void);
unsigned long cudahost_ops(void);
#ifdef __cplusplus
}
#endif

#endif
