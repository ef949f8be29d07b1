/* tests/lists_backend.c — a throwaway backend, "toy", that tests/lists_extra.test.sh adds
 * to the registry of a build of its own (-D'NN_BACKENDS_EXTRA(X)=X(nn_ops_toy, "toy")')
 * to find it in every list of backends.  It computes nothing: opening it fails. */
#include <errno.h>
#include <stdio.h>
#include "nn/backend.h"

static int toy_init(struct nn_backend *be)
{
	return -ENODEV;
}

static int toy_devices(int procs, char *err, size_t errlen)
{
	snprintf(err, errlen, "toy: a backend of the lists test, with no device");
	return -ENODEV;
}

const struct nn_ops nn_ops_toy = { .name = "toy", .host = true, .init = toy_init,
				   .devices = toy_devices };
