/* tests/test_compute.c — the compute model of a step (emu/run/compute.h): the launch
 * overhead per op, a straggler's slowdown, the per-step jitter (deterministic, keyed by
 * seed, worker and step, with the moments of its distribution) and the clamp at 0. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/cfg/cfg.h"
#include "emu/net/dist.h"
#include "emu/run/compute.h"

static struct cfg *cfg_new(void)
{
	struct cfg *c = malloc(sizeof(*c));
	assert_non_null(c);
	cfg_defaults(c);
	c->run.seed = 7;
	c->train.device_flops = 1e13;
	return c;
}

/* flops / device_flops + ops * op_overhead; with no overhead, slowdown or jitter, exactly
 * the flops model's truncated nanoseconds as before the overhead existed. */
static void test_flops_and_ops(void **state)
{
	struct cfg *c = cfg_new();
	c->train.op_overhead = 0;
	double flops = 1234567891.0;
	assert_int_equal(compute_step_ns(c, 0, 0, compute_flops_ns(c, flops, 42), 1),
			 (int64_t)(flops / c->train.device_flops * 1e9));
	c->train.op_overhead = 5000;
	double t = compute_flops_ns(c, flops, 42);
	assert_true(fabs(t - (flops / 1e13 * 1e9 + 42 * 5000.0)) < 1e-6);
	for (int id = 0; id < 4; id++)	/* no jitter: every step and worker alike */
		assert_int_equal(compute_step_ns(c, id, 99, t, 1), (int64_t)t);
	assert_int_equal(compute_step_ns(c, 0, 0, -5.0, 1), 0);
	assert_int_equal(compute_step_ns(c, 0, 0, NAN, 1), 0);
	free(c);
}

static void test_slowdown(void **state)
{
	struct cfg *c = cfg_new();
	c->worker[3].slowdown = 4;
	assert_int_equal(compute_step_ns(c, 3, 5, 250000.0, 1), 1000000);
	assert_int_equal(compute_step_ns(c, 2, 5, 250000.0, 1), 250000);
	free(c);
}

/* Mean and sd of worker 1's jitter over n steps against the distribution's (z's mean
 * and sd, below), within 5 standard errors for the mean and 3% for the sd; the same
 * draws again; another seed, worker or step draws others. */
static void jitter_moments(enum net_dist d, double mean_z, double sd_z)
{
	struct cfg *c = cfg_new();
	const int n = 200000;
	const double base = 1e6, j = 1e4;
	c->worker[1].jitter = (int64_t)j;
	c->worker[1].jitter_dist = d;
	double s = 0, s2 = 0;
	int differ_seed = 0, differ_worker = 0, differ_step = 0;
	for (int64_t k = 0; k < n; k++) {
		int64_t t = compute_step_ns(c, 1, k, base, 1);
		assert_int_equal(compute_step_ns(c, 1, k, base, 1), t);	/* a pure function */
		double x = (double)t - base;
		s += x;
		s2 += x * x;
		if (k < 1000) {
			c->run.seed = 8;
			differ_seed += compute_step_ns(c, 1, k, base, 1) != t;
			c->run.seed = 7;
			c->worker[2] = c->worker[1];
			differ_worker += compute_step_ns(c, 2, k, base, 1) != t;
			differ_step += compute_step_ns(c, 1, k + 1, base, 1) != t;
		}
	}
	double mean = s / n, sd = sqrt(s2 / n - mean * mean);
	double want = j * sd_z, se = want / sqrt(n);
	printf("dist %d: mean %.2f ns (%.2f +- %.2f), sd %.1f ns (want %.1f)\n", d, mean,
	       j * mean_z, 5 * se, sd, want);
	assert_true(fabs(mean - j * mean_z) < 5 * se + 1);	/* + 1: truncation to whole ns */
	/* the sample sd's standard error: below 10% of sd for these n, even for pareto */
	assert_true(fabs(sd - want) < 0.03 * want);
	assert_true(differ_seed > 990 && differ_worker > 990 && differ_step > 990);
	free(c);
}

static void test_jitter_uniform(void **state)
{
	jitter_moments(DIST_UNIFORM, 0, 1 / sqrt(3));
}

/* iproute2's tables: z = table[rnd % n] / 8192, so z's mean and sd are the table's */
static void jitter_table(enum net_dist d)
{
	const struct net_dist_table *t;
	double s = 0, s2 = 0;
	char err[512];

	if (net_dist_load(d, NULL, err, sizeof(err))) {
		print_message("SKIP: %s\n", err);
		skip();
	}
	t = net_dist_find(d, NULL);
	for (int i = 0; i < t->n; i++) {
		double z = (double)t->v[i] / NET_DIST_SCALE;

		s += z;
		s2 += z * z;
	}
	jitter_moments(d, s / t->n, sqrt(s2 / t->n - (s / t->n) * (s / t->n)));
}

static void test_jitter_normal(void **state)
{
	jitter_table(DIST_NORMAL);
}

static void test_jitter_pareto(void **state)
{
	jitter_table(DIST_PARETO);
}

/* A jitter larger than the step: the draws below -t are clamped to 0, never negative. */
static void test_clamp(void **state)
{
	struct cfg *c = cfg_new();
	c->worker[0].jitter = 1000000;
	c->worker[0].jitter_dist = DIST_UNIFORM;
	int zeros = 0;
	for (int64_t k = 0; k < 10000; k++) {
		int64_t t = compute_step_ns(c, 0, k, 100000.0, 1);
		assert_true(t >= 0 && t <= 1100000);
		zeros += t == 0;
	}
	/* P(z < -0.1) = 0.45 for z uniform in [-1, 1) */
	assert_true(zeros > 4200 && zeros < 4800);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flops_and_ops),
		cmocka_unit_test(test_slowdown),
		cmocka_unit_test(test_jitter_uniform),
		cmocka_unit_test(test_jitter_normal),
		cmocka_unit_test(test_jitter_pareto),
		cmocka_unit_test(test_clamp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
