/* nn/data/data.c — what every data set shares: gather a batch, truncate, free. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "nn/data.h"
#include "nn/data/data_internal.h"

static size_t sample_floats(const struct nn_dataset *d)
{
	return (size_t)d->in.C * d->in.H * d->in.W;
}

void data_batch(const struct nn_dataset *d, const int32_t *idx, int B, float *x,
		int32_t *tokens, void *y)
{
	size_t fs = sample_floats(d), T = d->in.T > 0 ? (size_t)d->in.T : 0;
	for (int b = 0; b < B; b++) {
		size_t i = (size_t)idx[b];
		if (x && d->x)
			memcpy(x + b * fs, d->x + i * fs, fs * sizeof(float));
		if (tokens && d->tokens)
			memcpy(tokens + b * T, d->tokens + i * T, T * sizeof(int32_t));
		if (y && d->y)
			((int32_t *)y)[b] = d->y[i];
		else if (y && d->target)
			((float *)y)[b] = d->target[i];
	}
}

void data_advise_huge(void *p, size_t bytes)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(page - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

void data_truncate(struct nn_dataset *d, int limit)
{
	/* The buffers keep their size; only n shrinks (they are freed as one). */
	if (limit > 0 && limit < d->n)
		d->n = limit;
}

void data_free(struct nn_dataset *d)
{
	free(d->x);
	free(d->tokens);
	free(d->y);
	free(d->target);
	memset(d, 0, sizeof(*d));
}

int data_fail(int ret, char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}
