/* emu/net/rng.c — Philox4x32-10 and the draws built on it (see rng.h). */
#include <math.h>
#include "emu/net/rng.h"

/* Multipliers and Weyl key increments from the Philox paper / Random123 philox.h. */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static void philox_round(uint32_t c[4], const uint32_t k[2])
{
	uint64_t p0 = (uint64_t)PHILOX_M0 * c[0];
	uint64_t p1 = (uint64_t)PHILOX_M1 * c[2];
	uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
	uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
	uint32_t n0 = hi1 ^ c[1] ^ k[0];
	uint32_t n2 = hi0 ^ c[3] ^ k[1];

	c[0] = n0;
	c[1] = lo1;
	c[2] = n2;
	c[3] = lo0;
}

void rng_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
	uint32_t c[4] = { ctr[0], ctr[1], ctr[2], ctr[3] };
	uint32_t k[2] = { key[0], key[1] };

	for (int r = 0; r < 10; r++) {
		if (r > 0) {
			k[0] += PHILOX_W0;
			k[1] += PHILOX_W1;
		}
		philox_round(c, k);
	}
	for (int i = 0; i < 4; i++)
		out[i] = c[i];
}

void rng_block(const struct rng_key *k, uint32_t out[4])
{
	uint64_t step = (uint64_t)k->step;
	uint32_t ctr[4] = {
		k->unit,
		(uint32_t)step,
		((uint32_t)((step >> 32) & 0xffffu) ^ ((k->phase >> 4) & 0xffu) << 8) |
			(k->attempt & 0xffu) << 16 | (k->stream & 0xfu) << 24 |
			(k->phase & 0xfu) << 28,
		k->link,
	};
	uint32_t key[2] = { (uint32_t)k->seed, (uint32_t)(k->seed >> 32) };

	rng_philox4x32_10(ctr, key, out);
}

void rng_uniform2(const struct rng_key *k, double u[2])
{
	uint32_t b[4];

	rng_block(k, b);
	u[0] = rng_u53(b[0], b[1]);
	u[1] = rng_u53(b[2], b[3]);
}

double rng_normal(const struct rng_key *k)
{
	double u[2];

	rng_uniform2(k, u);
	/* 1 - u is in (0, 1], so the log is finite. */
	return sqrt(-2.0 * log(1.0 - u[0])) * cos(2.0 * M_PI * u[1]);
}

static void rng_algo_block(uint64_t seed, uint32_t stream, uint64_t a, uint64_t b,
			   uint32_t out[4])
{
	struct rng_key k = { .seed = seed, .link = UINT32_MAX, .phase = 0, .step = (int64_t)a,
			     .unit = (uint32_t)b, .attempt = (uint32_t)(b >> 32),
			     .stream = stream };

	rng_block(&k, out);
}

uint64_t rng_u64(uint64_t seed, uint32_t stream, uint64_t a, uint64_t b)
{
	uint32_t o[4];

	rng_algo_block(seed, stream, a, b, o);
	return (uint64_t)o[0] << 32 | o[1];
}

double rng_f64(uint64_t seed, uint32_t stream, uint64_t a, uint64_t b)
{
	uint32_t o[4];

	rng_algo_block(seed, stream, a, b, o);
	return rng_u53(o[0], o[1]);
}
