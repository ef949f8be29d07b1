/* tests/test_algo_mean.c — the algorithms' mean and take give the bits of the plain loops.
 *
 * algo_mean_floats adds complete messages four at a time in one pass and takes a large
 * reply with non-temporal stores (emu/algo/algo_common.c): each float must still be
 * ((0 + m0) + m1) + ... then times 1/n, in worker-id order, and a reply's arrived floats
 * land as a memcpy would put them, whatever the number of messages and their length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "emu/shm/stream_copy.h"
#include "tests/rng.h"

/* Floats of every kind a sum meets: both signs, zeros of both signs, magnitudes far
 * apart (so that the order of the adds shows in the last bits) */
static void fill(float *v, size_t n, uint64_t *s)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t r = test_rng(s);
		float x = (float)(r % 20001) / 1000.0f - 10.0f;

		switch (r >> 60) {
		case 0: x = -0.0f; break;
		case 1: x = 0.0f; break;
		case 2: x *= 1e6f; break;
		case 3: x *= 1e-6f; break;
		default: break;
		}
		v[i] = x;
	}
}

static void test_mean_bits(void **state)
{
	const int ns[] = { 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 64 };
	const size_t lens[] = { 1, 15, 16, 17, 964, 4099, 65536 + 3 };
	uint64_t s = 7;

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(lens) / sizeof(lens[0]); b++) {
			int n = ns[a];
			size_t len = lens[b];
			float *m = malloc((size_t)n * len * sizeof(float));
			float *out = malloc(len * sizeof(float)), *want = malloc(len * sizeof(float));
			struct xmsg in[64];

			assert_non_null(m);
			assert_non_null(out);
			assert_non_null(want);
			fill(m, (size_t)n * len, &s);
			for (int w = 0; w < n; w++)
				in[w] = (struct xmsg){ .data = (const uint8_t *)(m + (size_t)w * len),
						       .len = len * sizeof(float),
						       .unit = len * sizeof(float), .nunits = 1,
						       .narrived = 1 };
			for (size_t i = 0; i < len; i++) {
				float t = 0.0f;

				for (int w = 0; w < n; w++)
					t += m[(size_t)w * len + i];
				want[i] = t * (1.0f / (float)n);
			}
			algo_mean_floats(out, in, n, len);
			if (memcmp(out, want, len * sizeof(float)))
				fail_msg("%d messages of %zu floats: not the plain loop's bits", n, len);
			free(m);
			free(out);
			free(want);
		}
}

/* A reply of more than STREAM_COPY_MIN bytes, whole and with some units lost: the
 * arrived floats are the reply's, the others as they were */
static void test_take_large(void **state)
{
	const size_t len = 3 * STREAM_COPY_MIN / sizeof(float) + 5, unit = 4096;
	const int nunits = (int)((len * sizeof(float) + unit - 1) / unit);
	float *v = malloc(len * sizeof(float)), *dst = malloc(len * sizeof(float));
	float *old = malloc(len * sizeof(float));
	uint64_t bits[4] = { 0 }, s = 11;

	assert_non_null(v);
	assert_non_null(dst);
	assert_non_null(old);
	assert_true(nunits <= 256);
	fill(v, len, &s);
	fill(old, len, &s);
	for (int lost = 0; lost <= 1; lost++) {
		int narrived = 0;

		for (int u = 0; u < nunits; u++)
			if (!lost || u % 7 != 3) {	/* a unit in seven lost */
				bits[u / 64] |= 1ULL << (u % 64);
				narrived++;
			}
		struct xmsg r = { .data = (const uint8_t *)v, .len = len * sizeof(float),
				  .unit = unit, .nunits = nunits, .narrived = narrived,
				  .arrived = bits };

		memcpy(dst, old, len * sizeof(float));
		algo_take_arrived(dst, &r, len, 0);
		for (size_t i = 0; i < len; i++) {
			int u = (int)(i * sizeof(float) / unit);
			const float *from = (bits[u / 64] >> (u % 64)) & 1 ? v : old;

			if (memcmp(&dst[i], &from[i], sizeof(float)))
				fail_msg("float %zu (unit %d, lost units %d): wrong bits", i, u, lost);
		}
		memset(bits, 0, sizeof(bits));
	}
	free(v);
	free(dst);
	free(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mean_bits),
		cmocka_unit_test(test_take_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
