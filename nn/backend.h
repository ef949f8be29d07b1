/* nn/backend.h — a backend: its op table (nn/ops.h) and its state in this process, found
 * by name.
 *
 * The registry (nn/backend.c) has "cpu" (OpenBLAS), "ref" (the oracle) and, in a build
 * with CUDA=1, "cuda".  A process opens one backend and passes the handle to everything
 * that computes (a worker opens its own after fork: CUDA must never be initialised
 * before a fork):
 *
 *   struct nn_backend be;
 *   if (nn_backend_open(&be, "cuda", device) < 0)   ... be.msg says why
 *   nn_model_init(&m, "lenet", &in, &be, batch, seed); ... nn_backend_close(&be);
 *
 * Errors are sticky: the first failure of an op or a transfer stays in be->err (a
 * negative errno) and be->msg ("cudnnConvolutionForward: CUDNN_STATUS_BAD_PARAM",
 * "cuda: out of memory"); later calls still run (queued device work cannot be recalled)
 * and the caller checks once per step (nn_backend_sync, or the model's transfers).
 */
#ifndef NN_BACKEND_H
#define NN_BACKEND_H

#include <stddef.h>
#include "nn/ops.h"

struct nn_backend {
	const struct nn_ops *ops;
	int device;		/* the device it is bound to; 0 on the host backends */
	void *priv;		/* the backend's own state; NULL on the host backends */
	int err;		/* the first failure, -errno; 0: none */
	char msg[160];		/* what failed, for people */
};

/* The table of the backend called name, or NULL. */
const struct nn_ops *nn_backend_find(const char *name);
/* The names of this build's backends as the registry lists them, space separated:
 * "cpu ref" or "cpu ref cuda". */
const char *nn_backend_names(void);
/* The names a configuration may give, in the registry's order, NULL-terminated: this
 * build's backends and those another build of this source has ("cuda" in a build
 * without CUDA=1). */
const char *const *nn_backend_known(void);
/* Why this build has no backend name although another build has it ("this emu is built
 * without CUDA (make CUDA=1 builds build-cuda/emu)"), or NULL. */
const char *nn_backend_absent(const char *name);

/* Bind be to backend name on device (an index; the host backends take 0).  0, or
 * -ENOENT (no such backend in this build) or the backend's own error; be->msg says why.
 * be is closed again on failure (nn_backend_close is safe either way). */
int nn_backend_open(struct nn_backend *be, const char *name, int device);
/* The same for a table that is not in the registry (a test's). */
int nn_backend_open_ops(struct nn_backend *be, const struct nn_ops *ops, int device);
/* Wait for all queued work.  0, or the sticky error. */
int nn_backend_sync(struct nn_backend *be);
void nn_backend_close(struct nn_backend *be);

/* How many devices of backend name procs processes can share: 1 for a host backend.  A
 * device backend is asked in a short-lived child process, so that the caller (the
 * supervisor, which forks the workers later) never initialises the device runtime.  A
 * count >= 1, or -errno (-ENOENT: no such backend; -ENODEV: no usable device; -EBUSY: a
 * device cannot be shared by that many processes); err says why. */
int nn_backend_devices(const char *name, int procs, char *err, size_t errlen);

/* For the backends: record a failure; the first one sticks.  err is a negative errno.
 * Returns be->err. */
int nn_backend_fail(struct nn_backend *be, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
