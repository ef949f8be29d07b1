/* tests/test_bitpack.c — sign packing round-trips for every length 0..200, and the
 * majority vote equals a plain per-element count on random votes (ties, partial
 * validity and empty votes included). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/algo/bitpack.h"
#include "tests/rng.h"

#define MAXN 200

/* A float that is negative, positive, +0 or -0. */
static float rand_float(uint64_t *s)
{
	switch (test_rng(s) % 6) {
	case 0: return 0.0f;
	case 1: return -0.0f;
	case 2: return -1e-30f;
	default: return (float)((double)(test_rng(s) % 2001) - 1000.0);
	}
}

static void test_roundtrip_every_length(void **unused)
{
	uint64_t s = 42;
	float v[MAXN] = { 0 }, back[MAXN];
	uint32_t w[MAXN / 32 + 2];
	for (size_t n = 0; n <= MAXN; n++) {
		for (size_t i = 0; i < n; i++)
			v[i] = rand_float(&s);
		memset(w, 0xa5, sizeof(w));
		bitpack_signs(w, v, n);
		size_t nw = bitpack_words(n);
		assert_int_equal(nw * 32 >= n && (nw == 0 || (nw - 1) * 32 < n), 1);
		/* the word past the packed ones was not written */
		assert_int_equal(w[nw], 0xa5a5a5a5u);
		if (n % 32)
			assert_int_equal(w[nw - 1] >> (n % 32), 0);
		bitpack_unpack(back, w, n);
		for (size_t i = 0; i < n; i++)
			assert_true(back[i] == (v[i] < 0 ? -1.0f : 1.0f));
		bitpack_invert(w, n);
		if (n % 32)
			assert_int_equal(w[nw - 1] >> (n % 32), 0);
		bitpack_unpack(back, w, n);
		for (size_t i = 0; i < n; i++)
			assert_true(back[i] == (v[i] < 0 ? 1.0f : -1.0f));
	}
}

static void test_zero_is_plus(void **unused)
{
	float v[3] = { 0.0f, -0.0f, -1.0f };
	uint32_t w;
	bitpack_signs(&w, v, 3);
	assert_int_equal(w, 0x3u);
}

static void test_byte_mask(void **unused)
{
	assert_int_equal(bitpack_byte_mask(0x0), 0);
	assert_int_equal(bitpack_byte_mask(0xf), 0xffffffffu);
	assert_int_equal(bitpack_byte_mask(0x5), 0x00ff00ffu);
	/* bit b of a word lives in byte b / 8 of its memory */
	uint32_t word = 1u << 17;
	const uint8_t *bytes = (const uint8_t *)&word;
	assert_int_equal(bytes[2], 1u << 1);
}

/* Votes of nv voters over n elements against a per-element count of the floats. */
static void check_vote(uint64_t *s, int nv, size_t n, int partial)
{
	float v[16][MAXN];
	uint32_t packed[16][MAXN / 32 + 1], valid[16][MAXN / 32 + 1], out[MAXN / 32 + 1];
	const uint32_t *sp[16], *vp[16];
	for (int k = 0; k < nv; k++) {
		for (size_t i = 0; i < n; i++)
			v[k][i] = rand_float(s);
		bitpack_signs(packed[k], v[k], n);
		sp[k] = packed[k];
		for (size_t i = 0; i < bitpack_words(n); i++)
			valid[k][i] = (uint32_t)test_rng(s);
		/* some voters count entirely, one counts not at all */
		vp[k] = !partial || k % 3 == 0 ? NULL : valid[k];
		if (partial && k == 1)
			memset(valid[k], 0, sizeof(valid[k]));
	}
	bitpack_vote(out, n, nv, sp, partial ? vp : NULL);
	int ties = 0;
	for (size_t i = 0; i < n; i++) {
		int sum = 0;
		for (int k = 0; k < nv; k++) {
			if (partial && vp[k] && !((valid[k][i / 32] >> (i % 32)) & 1))
				continue;
			sum += v[k][i] < 0 ? -1 : 1;
		}
		ties += sum == 0;
		int bit = (out[i / 32] >> (i % 32)) & 1;
		assert_int_equal(bit, sum >= 0);
	}
	if (n % 32)
		assert_int_equal(out[n / 32] >> (n % 32), 0);
	/* with an even number of voters, ties must have happened and been tested */
	if (nv % 2 == 0 && n >= 100 && !partial)
		assert_true(ties > 0);
}

static void test_vote_matches_reference(void **unused)
{
	uint64_t s = 7;
	for (int nv = 1; nv <= 16; nv++)
		for (size_t n = 0; n <= MAXN; n += 13) {
			check_vote(&s, nv, n, 0);
			check_vote(&s, nv, n, 1);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_every_length),
		cmocka_unit_test(test_zero_is_plus),
		cmocka_unit_test(test_byte_mask),
		cmocka_unit_test(test_vote_matches_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
