/* emu/bench/bench_jointspar.c — does skipping layers save backward time?  JointSpar computes
 * weight gradients only for the sampled layers and stops the backward pass below the
 * lowest one; this measures the saving against a full backward, interleaved in the same
 * loop so that both see the same machine state. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include "emu/bench/bench_jointspar.h"
#include "emu/algo/jointspar_bandit.h"
#include "emu/net/rng.h"
#include "nn/model.h"

#define BENCH_B 32
#define BENCH_REPS 60

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int bench_jointspar(FILE *csv)
{
	const struct nn_input in = { .C = 1, .H = 28, .W = 28, .nclasses = 10 };
	const size_t nx = (size_t)BENCH_B * 28 * 28;
	struct nn_backend be;
	struct nn_model m;
	int rc = nn_backend_open(&be, "cpu", 0);
	if (rc == 0)
		rc = nn_model_init(&m, "lenet", &in, &be, BENCH_B, 1);
	if (rc < 0) {
		nn_backend_close(&be);
		return rc;
	}
	float *x = malloc(nx * sizeof(float));
	int32_t y[BENCH_B];
	uint8_t *sampled = calloc((size_t)m.nlayers, 1);
	if (!x || !sampled) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nx; i++)
		x[i] = (float)(2 * rng_f64(1, RNG_STREAM_USER, 0, i) - 1);
	for (int i = 0; i < BENCH_B; i++)
		y[i] = i % 10;
	fprintf(csv, "model,layers,budget,sampled_mean,backward_ms,full_ms,time_ratio,"
		"flops_ratio\n");
	double fwd = nn_flops(&m, BENCH_B, false, NULL);
	double full_bwd = nn_flops(&m, BENCH_B, true, NULL) - fwd;
	/* warm up caches and the BLAS */
	for (int r = 0; r < 5; r++) {
		nn_forward(&m, x, NULL, y, BENCH_B, true, NULL);
		nn_backward(&m, NULL);
	}
	const double budgets[] = { 0.5, 1, 2, 3, 4, 5 };
	for (size_t k = 0; k < sizeof(budgets) / sizeof(budgets[0]); k++) {
		double s = budgets[k] > m.nlayers ? m.nlayers : budgets[k];
		struct jointspar_bandit b;
		rc = jointspar_bandit_init(&b, m.nlayers, s, 0.01, 0);
		if (rc < 0)
			goto out;
		double t_part = 0, t_full = 0, flops = 0, nsampled = 0;
		for (int r = 0; r < BENCH_REPS; r++) {
			nsampled += jointspar_sample(&b, 1, r, 0, sampled);
			/* alternate which goes first, so that neither always runs on warm caches */
			for (int k2 = 0; k2 < 2; k2++) {
				int full = (k2 + r) % 2 == 0;
				nn_forward(&m, x, NULL, y, BENCH_B, true, NULL);
				double t0 = now_ms();
				nn_backward(&m, full ? NULL : sampled);
				*(full ? &t_full : &t_part) += now_ms() - t0;
			}
			flops += nn_flops(&m, BENCH_B, true, sampled) - fwd;
		}
		jointspar_bandit_free(&b);
		fprintf(csv, "lenet,%d,%g,%.2f,%.4f,%.4f,%.3f,%.3f\n", m.nlayers, s,
			nsampled / BENCH_REPS, t_part / BENCH_REPS, t_full / BENCH_REPS,
			t_part / t_full, flops / BENCH_REPS / full_bwd);
	}
	rc = 0;
out:
	free(x);
	free(sampled);
	nn_model_free(&m);
	nn_backend_close(&be);
	return rc;
}
