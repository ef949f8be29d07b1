/* nn/data/data_synth.c — synthetic sets for tests and quick experiments. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nn/data.h"
#include "nn/data/data_rng.h"

/* Streams of the seed, one per use, so that changing n does not change the means. */
enum { STREAM_PARAMS = 1, STREAM_TRAIN = 2, STREAM_TEST = 3 };

static int alloc_set(struct nn_dataset *d, int n, int dim, int k, bool regression)
{
	memset(d, 0, sizeof(*d));
	d->x = malloc((size_t)n * dim * sizeof(float));
	if (regression)
		d->target = malloc((size_t)n * sizeof(float));
	else
		d->y = malloc((size_t)n * sizeof(int32_t));
	if (!d->x || (!d->target && !d->y)) {
		data_free(d);
		return -1;
	}
	d->n = n;
	d->in = (struct nn_input){ .C = 1, .H = 1, .W = dim, .nclasses = regression ? 1 : k,
				   .regression = regression };
	return 0;
}

static void gaussian_fill(struct nn_dataset *d, const double *mean, int dim, int k,
			  uint64_t seed, uint64_t stream)
{
	struct data_rng r;
	data_rng_init(&r, seed, stream);
	for (int i = 0; i < d->n; i++) {
		int c = (int)data_rng_below(&r, (uint32_t)k);
		d->y[i] = c;
		for (int j = 0; j < dim; j++)
			d->x[(size_t)i * dim + j] = (float)(mean[(size_t)c * dim + j] +
							    data_rng_normal(&r));
	}
}

int data_gaussian(struct nn_dataset *train, struct nn_dataset *test, int n, int ntest,
		   int dim, int k, uint64_t seed)
{
	struct data_rng r;
	double *mean = NULL;

	memset(train, 0, sizeof(*train));
	memset(test, 0, sizeof(*test));
	if (n <= 0 || ntest <= 0 || dim <= 0 || k <= 0)
		return -EINVAL;
	mean = malloc((size_t)k * dim * sizeof(double));
	if (!mean || alloc_set(train, n, dim, k, false) || alloc_set(test, ntest, dim, k, false))
		goto err;
	data_rng_init(&r, seed, STREAM_PARAMS);
	for (size_t i = 0; i < (size_t)k * dim; i++)
		mean[i] = data_rng_normal(&r);
	gaussian_fill(train, mean, dim, k, seed, STREAM_TRAIN);
	gaussian_fill(test, mean, dim, k, seed, STREAM_TEST);
	free(mean);
	return 0;
err:
	free(mean);
	data_free(train);
	data_free(test);
	return -ENOMEM;
}

static void linreg_fill(struct nn_dataset *d, const double *w, int dim, double noise,
			uint64_t seed, uint64_t stream)
{
	struct data_rng r;
	data_rng_init(&r, seed, stream);
	for (int i = 0; i < d->n; i++) {
		double y = 0;
		for (int j = 0; j < dim; j++) {
			float x = (float)data_rng_normal(&r);
			d->x[(size_t)i * dim + j] = x;
			y += w[j] * x;
		}
		d->target[i] = (float)(y + noise * data_rng_normal(&r));
	}
}

int data_linreg(struct nn_dataset *train, struct nn_dataset *test, int n, int ntest,
		 int dim, double noise, uint64_t seed)
{
	struct data_rng r;
	double *w = NULL;

	memset(train, 0, sizeof(*train));
	memset(test, 0, sizeof(*test));
	if (n <= 0 || ntest <= 0 || dim <= 0)
		return -EINVAL;
	w = malloc((size_t)dim * sizeof(double));
	if (!w || alloc_set(train, n, dim, 1, true) || alloc_set(test, ntest, dim, 1, true))
		goto err;
	data_rng_init(&r, seed, STREAM_PARAMS);
	for (int j = 0; j < dim; j++)
		w[j] = data_rng_normal(&r) / sqrt((double)dim);
	linreg_fill(train, w, dim, noise, seed, STREAM_TRAIN);
	linreg_fill(test, w, dim, noise, seed, STREAM_TEST);
	free(w);
	return 0;
err:
	free(w);
	data_free(train);
	data_free(test);
	return -ENOMEM;
}
