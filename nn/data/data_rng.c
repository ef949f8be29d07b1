/* nn/data/data_rng.c — xoshiro256** (Blackman & Vigna), seeded with splitmix64. */
#include <math.h>
#include "nn/data/data_rng.h"

uint64_t data_rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void data_rng_init(struct data_rng *r, uint64_t seed, uint64_t stream)
{
	/* Mix the stream through splitmix first so that neighbouring (seed, stream)
	 * pairs do not start from neighbouring states. */
	uint64_t x = seed;
	uint64_t k = data_rng_splitmix64(&x) ^ stream;
	x = k;
	for (int i = 0; i < 4; i++)
		r->s[i] = data_rng_splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t data_rng_next(struct data_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double data_rng_uniform(struct data_rng *r)
{
	return (double)(data_rng_next(r) >> 11) * 0x1p-53;
}

uint32_t data_rng_below(struct data_rng *r, uint32_t n)
{
	/* Lemire's multiply-shift with rejection: exactly uniform. */
	uint64_t m = (uint64_t)(uint32_t)(data_rng_next(r) >> 32) * n;
	uint32_t lo = (uint32_t)m;
	if (lo < n) {
		uint32_t thresh = (uint32_t)-n % n;
		while (lo < thresh) {
			m = (uint64_t)(uint32_t)(data_rng_next(r) >> 32) * n;
			lo = (uint32_t)m;
		}
	}
	return (uint32_t)(m >> 32);
}

double data_rng_normal(struct data_rng *r)
{
	double u1 = 1.0 - data_rng_uniform(r);	/* (0, 1]: log is finite */
	double u2 = data_rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double data_rng_gamma(struct data_rng *r, double alpha)
{
	if (alpha < 1.0) {
		double u = 1.0 - data_rng_uniform(r);
		return data_rng_gamma(r, alpha + 1.0) * pow(u, 1.0 / alpha);
	}
	double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
	for (;;) {
		double x, v;
		do {
			x = data_rng_normal(r);
			v = 1.0 + c * x;
		} while (v <= 0.0);
		v = v * v * v;
		double u = 1.0 - data_rng_uniform(r);
		if (u < 1.0 - 0.0331 * x * x * x * x)
			return d * v;
		if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
			return d * v;
	}
}

void data_rng_shuffle(struct data_rng *r, int32_t *a, int n)
{
	data_rng_shuffle_tail(r, a, n, 0);
}

void data_rng_shuffle_tail(struct data_rng *r, int32_t *a, int n, int from)
{
	/* step i fixes position i for good: later steps touch positions below it only */
	for (int i = n - 1; i > 0 && i >= from; i--) {
		int j = (int)data_rng_below(r, (uint32_t)i + 1);
		int32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}
