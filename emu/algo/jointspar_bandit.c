/* emu/algo/jointspar_bandit.c — sampling probabilities of JointSpar (rules in the header). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "emu/algo/jointspar_bandit.h"
#include "emu/net/rng.h"

/* Algorithm draws use their own stream so they never coincide with other users. */
#define JOINTSPAR_STREAM (RNG_STREAM_USER + 2)

int jointspar_bandit_init(struct jointspar_bandit *b, int nlayers, double budget,
			  double p_min, double alpha)
{
	if (nlayers <= 0 || !(budget > 0) || !(p_min > 0 && p_min <= 1) || !(alpha >= 0))
		return -EINVAL;
	b->nlayers = nlayers;
	b->p_min = p_min;
	b->alpha = alpha;
	b->gmax = 0;
	b->budget = fmin(fmax(budget, nlayers * p_min), (double)nlayers);
	b->p = calloc(2 * (size_t)nlayers, sizeof(double));
	if (!b->p)
		return -ENOMEM;
	b->w = b->p + nlayers;
	for (int l = 0; l < nlayers; l++)
		b->p[l] = b->budget / nlayers;
	return 0;
}

void jointspar_bandit_free(struct jointspar_bandit *b)
{
	free(b->p);
	b->p = b->w = NULL;
}

double jointspar_uniform(uint64_t seed, int64_t step, int who, int layer)
{
	/* b = who in bits 24..39 (rng_f64 aliases above 40), layer below */
	return rng_f64(seed, JOINTSPAR_STREAM, (uint64_t)step,
		       (uint64_t)(uint32_t)who << 24 | (uint32_t)layer);
}

int jointspar_sample(const struct jointspar_bandit *b, uint64_t seed, int64_t step, int who,
		     uint8_t *sampled)
{
	int k = 0;
	for (int l = 0; l < b->nlayers; l++) {
		sampled[l] = jointspar_uniform(seed, step, who, l) < b->p[l];
		k += sampled[l];
	}
	return k;
}

static double sum_clipped(const double *w, int n, double c, double p_min)
{
	double s = 0;
	for (int l = 0; l < n; l++)
		s += fmin(fmax(c * w[l], p_min), 1.0);
	return s;
}

void jointspar_project(double *q, const double *w, int n, double s, double p_min)
{
	/* sum_clipped is non-decreasing in c: n p_min (<= s) at c = p_min / max w, and
	 * n (>= s) at c = 1 / min w.  Bisect on log c: the weights may span many decades. */
	double wmin = w[0], wmax = w[0];
	for (int l = 1; l < n; l++) {
		wmin = fmin(wmin, w[l]);
		wmax = fmax(wmax, w[l]);
	}
	double lo = log(p_min / wmax), hi = log(1.0 / wmin);
	for (int it = 0; it < 200 && hi - lo > 1e-15; it++) {
		double mid = 0.5 * (lo + hi);
		if (sum_clipped(w, n, exp(mid), p_min) < s)
			lo = mid;
		else
			hi = mid;
	}
	/* The sum is now within rounding of s; spread what is left over the unclipped
	 * coordinates so that the budget holds exactly up to rounding. */
	double c = exp(hi), sum = 0, free_mass = 0;
	for (int l = 0; l < n; l++) {
		q[l] = fmin(fmax(c * w[l], p_min), 1.0);
		sum += q[l];
		if (q[l] > p_min && q[l] < 1.0)
			free_mass += q[l];
	}
	if (free_mass > 0) {
		double f = 1.0 + (s - sum) / free_mass;
		for (int l = 0; l < n; l++)
			if (q[l] > p_min && q[l] < 1.0)
				q[l] = fmin(fmax(q[l] * f, p_min), 1.0);
	}
}

void jointspar_bandit_update(struct jointspar_bandit *b, const uint8_t *sampled,
			     const double *norm2)
{
	int n = b->nlayers;
	if (b->budget >= n)
		return;		/* every layer is always sampled */
	for (int l = 0; l < n; l++)
		if (sampled[l] && norm2[l] > b->gmax * b->gmax)
			b->gmax = sqrt(norm2[l]);
	double range = b->gmax * b->gmax / (b->p_min * b->p_min);
	for (int l = 0; l < n; l++) {
		double wl = b->p[l];
		if (sampled[l] && range > 0) {
			double g2 = norm2[l] / (b->p[l] * b->p[l]);
			double loss = fmin(fmax((range - g2) / range, 0.0), 1.0);
			wl = b->p[l] * exp(-b->alpha * loss / b->p[l]);
		}
		/* keep weights positive and finite for the projection */
		b->w[l] = fmax(wl, 1e-300);
	}
	jointspar_project(b->p, b->w, n, b->budget, b->p_min);
}
