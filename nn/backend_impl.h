/* nn/backend_impl.h — private to the backends (nn/ref/, nn/cpu/, nn/cuda/) and their
 * registry (nn/backend.c): the tables, and the host side the CPU backends share
 * (nn/backend_host.c). */
#ifndef NN_BACKEND_IMPL_H
#define NN_BACKEND_IMPL_H

#include "nn/backend.h"

extern const struct nn_ops nn_ops_ref;	/* nn/ref/ops_ref.c */
extern const struct nn_ops nn_ops_cpu;	/* nn/cpu/ops_cpu.c */
#ifdef EMU_CUDA
extern const struct nn_ops nn_ops_cuda;	/* nn/cuda/ops_cuda.cu */
#endif

/* A backend whose memory is the host's: 64-byte aligned allocations (the vectorised
 * loops and sgemm use aligned loads), plain copies, nothing to set up or wait for. */
int nn_host_init(struct nn_backend *be);
int nn_host_sync(struct nn_backend *be);
void nn_host_shutdown(struct nn_backend *be);
int nn_host_devices(int procs, char *err, size_t errlen);
void *nn_host_alloc(struct nn_backend *be, size_t bytes);
void nn_host_free(struct nn_backend *be, void *p);
int nn_host_copy(struct nn_backend *be, void *dst, const void *src, size_t bytes);

/* The members every host table shares, to start its initialiser with. */
#define NN_HOST_MEMBERS							\
	.host = true, .init = nn_host_init, .sync = nn_host_sync,		\
	.shutdown = nn_host_shutdown, .devices = nn_host_devices,		\
	.alloc = nn_host_alloc, .free = nn_host_free,				\
	.host_alloc = nn_host_alloc, .host_free = nn_host_free,			\
	.upload = nn_host_copy, .download = nn_host_copy

#endif
