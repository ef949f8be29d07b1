/* nn/data/data_rng.h — the data module's local random numbers: xoshiro256** seeded through
 * splitmix64.  A generator is a value the caller owns (no global state); the same
 * (seed, stream) gives the same sequence on every machine, so data sets, shards and
 * permutations are reproducible from the run seed.
 */
#ifndef NN_DATA_RNG_H
#define NN_DATA_RNG_H

#include <stdint.h>

struct data_rng {
	uint64_t s[4];
};

/* One step of splitmix64 on state *x (Steele et al.): the seeding generator here, and
 * the generator of the initial weights (nn/model/model_init.c). */
uint64_t data_rng_splitmix64(uint64_t *x);
/* Independent streams of one seed: e.g. stream = epoch, or a tag per use. */
void data_rng_init(struct data_rng *r, uint64_t seed, uint64_t stream);
uint64_t data_rng_next(struct data_rng *r);
double data_rng_uniform(struct data_rng *r);		/* [0, 1) with 53 bits */
uint32_t data_rng_below(struct data_rng *r, uint32_t n);	/* [0, n), n > 0 */
double data_rng_normal(struct data_rng *r);		/* N(0, 1), Box-Muller */
/* Gamma(alpha, 1), alpha > 0: Marsaglia & Tsang (2000), "A simple method for generating
 * gamma variables"; alpha < 1 through Gamma(alpha + 1) * U^(1/alpha). */
double data_rng_gamma(struct data_rng *r, double alpha);
/* Fisher-Yates shuffle of a[0..n). */
void data_rng_shuffle(struct data_rng *r, int32_t *a, int n);
/* Its positions [from, n) only, the same as the whole shuffle leaves them (the draws
 * are the same first ones), for a caller that keeps nothing below from. */
void data_rng_shuffle_tail(struct data_rng *r, int32_t *a, int n, int from);

#endif
