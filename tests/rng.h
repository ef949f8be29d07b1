/* tests/rng.h — the tests' deterministic random inputs: splitmix64 (nn/data/data_rng.h) on a
 * state the test seeds, and the few shapes the tests draw from it. */
#ifndef TESTS_RNG_H
#define TESTS_RNG_H

#include <stdint.h>
#include "nn/data/data_rng.h"

static inline uint64_t test_rng(uint64_t *s)
{
	return data_rng_splitmix64(s);
}

/* uniform in [0, 1) with 53 bits */
static inline double test_unif(uint64_t *s)
{
	return (double)(test_rng(s) >> 11) * 0x1p-53;
}

/* uniform float in [lo, hi), 24 bits */
static inline float test_unif_f(uint64_t *s, float lo, float hi)
{
	return lo + (hi - lo) * (float)((test_rng(s) >> 40) * (1.0 / 16777216.0));
}

#endif
