/* nn/backend_host.c — the host side of the CPU backends (ref and cpu): memory is the
 * process's own, so there is nothing to set up, copy across or wait for. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "nn/backend_impl.h"

int nn_host_init(struct nn_backend *be)
{
	return be->device == 0 ? 0 : nn_backend_fail(be, -ENODEV, "%s: no device %d on the host",
						     be->ops->name, be->device);
}

int nn_host_sync(struct nn_backend *be)
{
	return 0;
}

void nn_host_shutdown(struct nn_backend *be)
{
}

int nn_host_devices(int procs, char *err, size_t errlen)
{
	return 1;
}

void *nn_host_alloc(struct nn_backend *be, size_t bytes)
{
	size_t n = (bytes + 63) / 64 * 64;
	void *p = aligned_alloc(64, n ? n : 64);

	if (!p) {
		nn_backend_fail(be, -ENOMEM, "%s: out of memory (%zu bytes)", be->ops->name, bytes);
		return NULL;
	}
	memset(p, 0, n ? n : 64);
	return p;
}

void nn_host_free(struct nn_backend *be, void *p)
{
	free(p);
}

int nn_host_copy(struct nn_backend *be, void *dst, const void *src, size_t bytes)
{
	if (bytes && dst != src)
		memmove(dst, src, bytes);
	return 0;
}
