/* tests/test_optim.c — each optimiser piece against its formula, written out here in
 * double on small vectors, and the Goyal et al. schedule at its landmarks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "nn/optim.h"

#define N 7
static const float G[N] = { 0.5f, -1.25f, 2.0f, 0.0f, -0.125f, 3.5f, -7.0f };
static const float X0[N] = { 1.0f, 2.0f, -3.0f, 0.25f, 0.0f, -0.5f, 4.0f };

static void assert_near(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * (1 + fabs(want))))
		fail_msg("got %.9g, expected %.9g (tolerance %g)", got, want, tol);
}

static void test_sgd(void **state)
{
	float x[N];
	for (int i = 0; i < N; i++)
		x[i] = X0[i];
	optim_sgd(x, G, N, 0.1f, 0.01f);
	for (int i = 0; i < N; i++)
		assert_near(x[i], X0[i] - 0.1 * (G[i] + 0.01 * X0[i]), 1e-6);
	/* wd = 0 is plain SGD; lr = 0 leaves x alone */
	optim_sgd(x, G, N, 0.0f, 0.5f);
	for (int i = 0; i < N; i++)
		assert_near(x[i], X0[i] - 0.1 * (G[i] + 0.01 * X0[i]), 1e-6);
}

static void test_momentum_and_ema(void **state)
{
	float v[N], e[N];
	double vv[N], ee[N];
	for (int i = 0; i < N; i++)
		v[i] = e[i] = (float)(vv[i] = ee[i] = X0[i]);
	for (int step = 0; step < 3; step++) {	/* a few steps: the recurrences compound */
		optim_momentum(v, G, N, 0.9f);
		optim_ema(e, G, N, 0.9f);
		for (int i = 0; i < N; i++) {
			vv[i] = 0.9 * vv[i] + G[i];
			ee[i] = 0.1 * G[i] + 0.9 * ee[i];
			assert_near(v[i], vv[i], 1e-6);
			assert_near(e[i], ee[i], 1e-6);
		}
	}
	/* beta = 0: momentum is the gradient, EMA too */
	optim_momentum(v, G, N, 0.0f);
	optim_ema(e, G, N, 0.0f);
	for (int i = 0; i < N; i++) {
		assert_true(v[i] == G[i]);
		assert_true(e[i] == G[i]);
	}
}

static void test_norm_and_lars(void **state)
{
	double w2 = 0, g2 = 0;
	for (int i = 0; i < N; i++) {
		w2 += (double)X0[i] * X0[i];
		g2 += (double)G[i] * G[i];
	}
	assert_near(optim_norm2(G, N), g2, 1e-12);
	assert_near(optim_norm2(G, 0), 0, 0);
	/* a big vector: the double accumulator keeps 1e6 * 0.1^2 exact to float rounding */
	static float big[1000000];
	for (int i = 0; i < 1000000; i++)
		big[i] = 0.1f;
	assert_near(optim_norm2(big, 1000000), 1e6 * (double)0.1f * 0.1f, 1e-9);

	double want = 0.001 * sqrt(w2) / (sqrt(g2) + 5e-4 * sqrt(w2) + 1e-9);
	double x2 = optim_norm2(X0, N), gg2 = optim_norm2(G, N);
	assert_near(optim_lars_ratio(x2, gg2, 0.001f, 5e-4f, 1e-9f), want, 1e-6);
	float zero[N] = { 0 };
	assert_true(optim_lars_ratio(optim_norm2(zero, N), gg2, 0.001f, 5e-4f, 1e-9f) == 1.0f);
	assert_true(optim_lars_ratio(x2, optim_norm2(zero, N), 0.001f, 5e-4f, 1e-9f) == 1.0f);
}

static void test_schedule(void **state)
{
	static const double decay[] = { 30, 60, 80 };
	struct lr_schedule s = { .base = 0.1, .scale = 8,
				 .warmup_epochs = 5, .ndecay = 3, .decay = decay,
				 .factor = 0.1 };
	double peak = 0.1 * 8;
	assert_near(lr_at(&s, 0), 0.1, 1e-12);			/* one worker's rate */
	assert_near(lr_at(&s, 2.5), (0.1 + peak) / 2, 1e-12);	/* linear in between */
	assert_near(lr_at(&s, 1), 0.1 + (peak - 0.1) / 5, 1e-12);
	assert_near(lr_at(&s, 5), peak, 1e-12);			/* end of warm-up */
	assert_near(lr_at(&s, 29.999), peak, 1e-12);
	assert_near(lr_at(&s, 30), peak * 0.1, 1e-12);		/* each decay */
	assert_near(lr_at(&s, 59.5), peak * 0.1, 1e-12);
	assert_near(lr_at(&s, 60), peak * 0.01, 1e-12);
	assert_near(lr_at(&s, 80), peak * 0.001, 1e-12);
	assert_near(lr_at(&s, 1000), peak * 0.001, 1e-12);
	/* warm-up increases monotonically */
	for (double e = 0; e < 5; e += 0.25)
		assert_true(lr_at(&s, e) < lr_at(&s, e + 0.25));

	s.scale = 1;	/* no scaling: nothing to warm up to */
	assert_near(lr_at(&s, 0), 0.1, 1e-12);
	assert_near(lr_at(&s, 2.5), 0.1, 1e-12);
	assert_near(lr_at(&s, 45), 0.01, 1e-12);
	s.scale = 8;
	s.warmup_epochs = 0;	/* no warm-up: the scaled rate from the start */
	assert_near(lr_at(&s, 0), peak, 1e-12);
	/* a cap: the warm-up ends at it, and the decays start from it */
	s.max = 0.5;
	s.warmup_epochs = 5;
	assert_near(lr_at(&s, 2.5), (0.1 + 0.5) / 2, 1e-12);
	assert_near(lr_at(&s, 10), 0.5, 1e-12);
	assert_near(lr_at(&s, 30), 0.05, 1e-12);
	s.max = 1.0;	/* a cap above the scaled rate changes nothing */
	assert_near(lr_at(&s, 10), peak, 1e-12);

	/* the other shapes start after the warm-up: cosine from the peak at epoch 5 to
	 * 0.01 at the last step (100 epochs of 10 steps), half-way at epoch 52.5 */
	s = (struct lr_schedule){ .kind = LR_COSINE, .base = 0.1, .scale = 8, .end = 0.01,
				  .warmup_epochs = 5, .spe = 10, .total_steps = 1000 };
	assert_near(lr_at(&s, 2.5), (0.1 + peak) / 2, 1e-12);
	assert_near(lr_at(&s, 5), peak, 1e-12);
	assert_near(lr_at(&s, 52.5), (peak + 0.01) / 2, 1e-12);
	assert_near(lr_at(&s, 100), 0.01, 1e-12);
	assert_near(lr_at(&s, 200), 0.01, 1e-12);	/* past the end: the end */
	s.kind = LR_POLY;
	s.power = 2;
	assert_near(lr_at(&s, 52.5), peak / 4, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sgd),
		cmocka_unit_test(test_momentum_and_ema),
		cmocka_unit_test(test_norm_and_lars),
		cmocka_unit_test(test_schedule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
