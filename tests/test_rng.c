/* tests/test_rng.c — Philox4x32-10 known answers, key-field independence, and the
 * distribution of the draws built on it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "emu/net/rng.h"

/* Random123 kat_vectors, "philox4x32 10" lines: counter[4] key[2] -> output[4]. */
static void test_known_answers(void **state)
{
	static const struct {
		uint32_t ctr[4], key[2], out[4];
	} kat[] = {
		{ { 0, 0, 0, 0 }, { 0, 0 },
		  { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
		{ { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }, { 0xffffffff, 0xffffffff },
		  { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
		{ { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 }, { 0xa4093822, 0x299f31d0 },
		  { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
	};
	for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
		uint32_t out[4];

		rng_philox4x32_10(kat[i].ctr, kat[i].key, out);
		for (int w = 0; w < 4; w++) {
			if (out[w] != kat[i].out[w])
				print_error("vector %zu word %d: got %08x, expected %08x\n", i, w,
					    out[w], kat[i].out[w]);
			assert_int_equal(out[w], kat[i].out[w]);
		}
	}
}

static int blocks_equal(const struct rng_key *a, const struct rng_key *b)
{
	uint32_t x[4], y[4];

	rng_block(a, x);
	rng_block(b, y);
	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

/* Every field of the key reaches the block: changing any one (within its documented
 * width) changes the output, and the same key always gives the same block. */
static void test_key_fields(void **state)
{
	const struct rng_key base = { .seed = 0x0123456789abcdefULL, .link = 7, .phase = 1,
				      .step = 5, .unit = 11, .attempt = 0, .stream = 1 };
	struct rng_key k = base;

	assert_true(blocks_equal(&base, &k));
	k.seed ^= 1ULL << 40; assert_false(blocks_equal(&base, &k)); k = base;
	k.seed ^= 1; assert_false(blocks_equal(&base, &k)); k = base;
	k.link++; assert_false(blocks_equal(&base, &k)); k = base;
	k.phase++; assert_false(blocks_equal(&base, &k)); k = base;
	k.phase += 16; assert_false(blocks_equal(&base, &k)); k = base;	/* a ring's rounds */
	k.phase += 256; assert_false(blocks_equal(&base, &k)); k = base;
	k.step++; assert_false(blocks_equal(&base, &k)); k = base;
	k.step += 1LL << 40; assert_false(blocks_equal(&base, &k)); k = base;
	k.unit++; assert_false(blocks_equal(&base, &k)); k = base;
	k.attempt++; assert_false(blocks_equal(&base, &k)); k = base;
	k.stream++; assert_false(blocks_equal(&base, &k)); k = base;
}

/* Chi-square of 10^6 uniforms in 1000 bins: 999 degrees of freedom, mean 999,
 * sd sqrt(2*999) = 44.7.  A bound of mean + 6 sd (1267) fails a correct generator with
 * probability < 1e-8, and catches a broken one (e.g. bits lost in rng_u53) by far. */
static void test_uniform_chi_square(void **state)
{
	enum { BINS = 1000, N = 1000000 };
	static unsigned hist[BINS];
	struct rng_key k = { .seed = 42, .link = 3, .stream = RNG_STREAM_USER };
	double lo = 1.0, hi = 0.0, sum = 0.0;

	for (int i = 0; i < N / 2; i++) {
		double u[2];

		k.unit = (uint32_t)i;
		rng_uniform2(&k, u);
		for (int j = 0; j < 2; j++) {
			assert_true(u[j] >= 0.0 && u[j] < 1.0);
			hist[(int)(u[j] * BINS)]++;
			lo = fmin(lo, u[j]);
			hi = fmax(hi, u[j]);
			sum += u[j];
		}
	}
	double expect = (double)N / BINS, chi2 = 0.0;

	for (int b = 0; b < BINS; b++)
		chi2 += (hist[b] - expect) * (hist[b] - expect) / expect;
	print_message("chi2 = %.1f (999 dof), min %.3g, max %.9f, mean %.5f\n", chi2, lo, hi,
		      sum / N);
	assert_true(chi2 < 999 + 6 * sqrt(2 * 999.0));
	/* mean of U(0,1): 1/2, sd of the mean sqrt(1/12/N) = 2.9e-4; 6 sd */
	assert_true(fabs(sum / N - 0.5) < 6 * sqrt(1.0 / 12 / N));
	/* 53-bit resolution: the extremes of 10^6 draws lie within ~1e-5 of 0 and 1 */
	assert_true(lo < 1e-4 && hi > 1 - 1e-4);
}

/* rng_u53 uses all 53 bits: the smallest step is 2^-53 and the top is 1 - 2^-53. */
static void test_u53_resolution(void **state)
{
	assert_true(rng_u53(0, 0) == 0.0);
	assert_true(rng_u53(0, 1u << 11) == 0x1p-53);
	assert_true(rng_u53(0xffffffffu, 0xffffffffu) == 1.0 - 0x1p-53);
}

/* Normal: mean 0, variance 1, and P(|z| < 1) = 0.6827, from 10^6 draws.
 * sd of the mean 1e-3, of the variance sqrt(2/N) = 1.4e-3, of the fraction 4.7e-4: 6 sd. */
static void test_normal_moments(void **state)
{
	enum { N = 1000000 };
	struct rng_key k = { .seed = 7, .link = 1, .stream = RNG_STREAM_DELAY };
	double s = 0, s2 = 0;
	long in1 = 0;

	for (int i = 0; i < N; i++) {
		k.unit = (uint32_t)i;
		double z = rng_normal(&k);

		assert_true(isfinite(z));
		s += z;
		s2 += z * z;
		in1 += fabs(z) < 1.0;
	}
	double mean = s / N, var = s2 / N - mean * mean, f1 = (double)in1 / N;

	print_message("normal: mean %.5f var %.5f P(|z|<1) %.5f\n", mean, var, f1);
	assert_true(fabs(mean) < 6e-3);
	assert_true(fabs(var - 1.0) < 6 * sqrt(2.0 / N));
	assert_true(fabs(f1 - 0.682689) < 6 * sqrt(0.6827 * 0.3173 / N));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_key_fields),
		cmocka_unit_test(test_u53_resolution),
		cmocka_unit_test(test_uniform_chi_square),
		cmocka_unit_test(test_normal_moments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
