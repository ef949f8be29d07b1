/* tests/test_train_fmnist.c — one worker alone, no network: LeNet on the real
 * Fashion-MNIST (Debian's dataset-fashion-mnist) on the "cpu" backend, SGD with momentum 0.9,
 * batch 32, must reach 85% test accuracy within 5 epochs; it stops at the first epoch
 * that does.  Skips (77) when the data package is not installed, and under the
 * sanitizers (the build without them trains). */
#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include "nn/data.h"
#include "nn/model.h"
#include "nn/optim.h"
#include "tests/asan.h"
#include "tests/backend.h"

#define BATCH 32
#define EPOCHS 5
#define TARGET 0.85
#define LR 0.02f
#define MOMENTUM 0.9f

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static double accuracy(struct nn_model *m, const struct nn_dataset *d, float *x, int32_t *y,
		       int32_t *idx)
{
	long right = 0;
	for (int i = 0; i < d->n; i += BATCH) {
		int B = d->n - i < BATCH ? d->n - i : BATCH, correct;
		for (int k = 0; k < B; k++)
			idx[k] = i + k;
		data_batch(d, idx, B, x, NULL, y);
		nn_forward(m, x, NULL, y, B, false, &correct);
		right += correct;
	}
	return (double)right / d->n;
}

int main(void)
{
	struct nn_dataset train, test;
	struct nn_model m;
	struct stat st;
	char err[512];
	int r, rc = 1;

	if (TEST_ASAN) {	/* 45 s under the sanitizers; its ops are theirs in test_models */
		printf("SKIP training to 85%% runs in the build without sanitizers (the "
		       "sanitizers check the same ops in test_models and test_model_grad)\n");
		return 77;
	}
	if (stat(DATA_FASHION_MNIST_DIR, &st) != 0) {
		printf("%s is missing: apt-get install dataset-fashion-mnist\n",
		       DATA_FASHION_MNIST_DIR);
		return 77;
	}
	r = data_fashion_mnist(&train, &test, NULL, err, sizeof(err));
	if (r) {
		fprintf(stderr, "test_train_fmnist: %s\n", err);
		return 1;
	}
	openblas_set_num_threads(1);
	r = nn_model_init(&m, "lenet", &train.in, test_be("cpu"), BATCH, 42);
	size_t D = (size_t)train.in.C * train.in.H * train.in.W;
	float *x = malloc(BATCH * D * sizeof(float));
	float *v = calloc(m.nparams ? m.nparams : 1, sizeof(float));
	int32_t *y = malloc(BATCH * sizeof(int32_t));
	int32_t *idx = malloc((size_t)train.n * sizeof(int32_t));
	if (r || !x || !v || !y || !idx) {
		fprintf(stderr, "test_train_fmnist: setup failed (%d)\n", r);
		goto out;
	}
	double t0 = now(), acc = 0;
	for (int epoch = 0; epoch < EPOCHS; epoch++) {
		int n = data_shard(&train, SHARD_KIND_IID, 0, 1, 0, 42, epoch, idx, train.n);
		double loss = 0;
		int steps = 0;
		for (int i = 0; i + BATCH <= n; i += BATCH, steps++) {
			data_batch(&train, idx + i, BATCH, x, NULL, y);
			loss += nn_forward(&m, x, NULL, y, BATCH, true, NULL);
			nn_backward(&m, NULL);
			optim_momentum(v, m.grads, m.nparams, MOMENTUM);
			optim_sgd(m.params, v, m.nparams, LR, 0);
		}
		acc = accuracy(&m, &test, x, y, idx);
		printf("epoch %d: train loss %.4f, test accuracy %.4f, %.1f s\n", epoch + 1,
		       loss / steps, acc, now() - t0);
		if (acc >= TARGET)
			break;
	}
	if (acc >= TARGET) {
		rc = 0;
	} else {
		fprintf(stderr, "test_train_fmnist: test accuracy %.4f after %d epochs, expected >= %.2f\n",
			acc, EPOCHS, TARGET);
	}
out:
	free(x);
	free(v);
	free(y);
	free(idx);
	nn_model_free(&m);
	data_free(&train);
	data_free(&test);
	return rc;
}
