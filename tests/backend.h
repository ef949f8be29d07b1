/* tests/backend.h — the backends a test program computes on, opened once by name and
 * kept for the life of the process (a test program is one process). */
#ifndef TESTS_BACKEND_H
#define TESTS_BACKEND_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/backend.h"

static inline struct nn_backend *test_be(const char *name)
{
	static struct nn_backend open[4];
	static int nopen;
	for (int i = 0; i < nopen; i++)
		if (!strcmp(open[i].ops->name, name))
			return &open[i];
	if (nopen == 4 || nn_backend_open(&open[nopen], name, 0) < 0) {
		fprintf(stderr, "test: backend %s: %s\n", name, nopen == 4 ? "too many" : open[nopen].msg);
		exit(1);
	}
	return &open[nopen++];
}

#endif
