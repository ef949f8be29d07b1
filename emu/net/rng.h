/* emu/net/rng.h — counter-based random numbers: Philox4x32-10 (Salmon et al., "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011; known answers from Random123's kat_vectors).
 *
 * A draw is a pure function of what it is about: (seed, link, step, phase, unit, attempt,
 * stream).  There is no generator state, so no result depends on call order, threads or
 * OS scheduling.  Each key gives one 128-bit block: two 53-bit uniforms, one normal, or
 * 32-bit words.
 *
 * Counter layout (documented because changing it changes every run's numbers):
 *   ctr[0] = unit   ctr[1] = step bits 0..31   ctr[3] = link
 *   ctr[2] = (step bits 32..47 ^ phase bits 4..11 << 8) | attempt (8 bits) << 16 |
 *            stream (4 bits) << 24 | phase bits 0..3 << 28
 *   key    = seed low 32 bits, seed high 32 bits
 * Fields wider than their slot alias (steps >= 2^48, attempts >= 256, stream >= 16, phase
 * >= 4096); a phase past 15 (a ring's rounds: emu/net/xchg_ring.c) shares its bits with
 * steps >= 2^40.
 */
#ifndef EMU_RNG_H
#define EMU_RNG_H

#include <stdint.h>

/* Streams keep different uses of the same (link, step, unit) independent (4 bits). */
enum rng_stream {
	RNG_STREAM_LOSS = 1,		/* net.c: loss-chain transition and loss draws */
	RNG_STREAM_DELAY = 2,		/* net.c: jitter */
	RNG_STREAM_BLOCK_MAP = 3,	/* algorithms: block-to-server permutations */
	RNG_STREAM_ALGO = 4,		/* algorithms: anything else (adversaries, bandits) */
	RNG_STREAM_COMPUTE = 5,		/* emu/run/compute.c: a worker's per-step jitter */
	RNG_STREAM_USER = 8,		/* tests and tools */
	RNG_STREAM_DUP = 6,		/* net.c: duplicate */
	RNG_STREAM_CORRUPT = 7,		/* net.c: corrupt (decision, byte, bit) */
	RNG_STREAM_REORDER = 9,		/* net.c: reorder */
	/* a duplicate's own draws (netem passes the copy through the qdisc again) */
	RNG_STREAM_COPY_LOSS = 10,
	RNG_STREAM_COPY_CORRUPT = 11,
	RNG_STREAM_COPY_REORDER = 12,
	RNG_STREAM_COPY_DELAY = 13,
	RNG_STREAM_CORR_INIT = 14,	/* net.c: each correlation's first "last" value */
	RNG_STREAM_SLOT = 15,		/* net.c: netem's slot delays */
	RNG_STREAM_COPY_SLOT = 0,	/* net.c: a duplicate's slot delays */
};

/* Link ids with the top bit set are no network link's (net_link_id(src, dst) stays below
 * 2^31 for worker ids below 2^15) nor the algorithms' (UINT32_MAX): the compute model
 * keys worker w's draws with link RNG_LINK_COMPUTE | w. */
#define RNG_LINK_COMPUTE 0x80000000u

struct rng_key {
	uint64_t seed;
	uint32_t link;		/* any id; net.h uses net_link_id(src, dst) */
	uint32_t phase;
	int64_t step;
	uint32_t unit;
	uint32_t attempt;
	uint32_t stream;	/* enum rng_stream */
};

/* The raw block function, for the known-answer test. */
void rng_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* The 128-bit block of a key. */
void rng_block(const struct rng_key *k, uint32_t out[4]);

/* A uniform double in [0, 1) from 53 bits of (hi, lo). */
static inline double rng_u53(uint32_t hi, uint32_t lo)
{
	uint64_t b = ((uint64_t)hi << 21) ^ (lo >> 11);	/* 32 + 21 = 53 bits */
	return (double)b * 0x1p-53;
}

/* Two independent uniforms in [0, 1) from one block. */
void rng_uniform2(const struct rng_key *k, double u[2]);
/* One standard normal from one block (Box-Muller, cosine branch). */
double rng_normal(const struct rng_key *k);

/* For algorithms: 64 random bits keyed by (seed, stream, a, b), e.g. a = step,
 * b = an index.  Never collides with network draws (link id UINT32_MAX is reserved).
 * b's bits above 40 alias. */
uint64_t rng_u64(uint64_t seed, uint32_t stream, uint64_t a, uint64_t b);
/* The same key as a uniform double in [0, 1). */
double rng_f64(uint64_t seed, uint32_t stream, uint64_t a, uint64_t b);

#endif
