/* emu/algo/jointspar_bandit.h — JointSpar's layer sampling probabilities and their bandit.
 *
 * Reconstruction of Liu & Mozafari (ICML 2022) from its abstract and the authors' earlier
 * bandit sampling rule (the full paper was not at hand):
 *   - p_l in [p_min, 1], sum_l p_l = s (the budget: expected layers per step), start s/L;
 *   - each step layer l is sampled iff u_l < p_l, u_l uniform in [0, 1);
 *   - EXP3-style update from the sampled layers' gradient norms:
 *       loss   l_l = (L^2/p_min^2 - |g_l|^2/p_l^2) / (L^2/p_min^2)   in [0, 1]
 *       weight w_l = p_l exp(-alpha l_l / p_l)   (sampled; unsampled: w_l = p_l)
 *     where L is the running maximum of the layer-gradient norms seen so far.  The issue's
 *     loss is unnormalised; dividing by its range L^2/p_min^2 keeps alpha a step size
 *     that does not depend on the gradients' scale, as EXP3 assumes losses in [0, 1];
 *   - p = the KL projection of w onto {sum q = s, p_min <= q <= 1}: q_l = clip(c w_l,
 *     p_min, 1) with c found by bisection.
 * The uniforms u_l are keyed by (seed, step, who, layer).  With shared draws (the
 * default, `jointspar.draws`) who is the same on every worker, and so are p (the bandit
 * follows the averaged gradient, emu/algo/algo_jointspar.c): every worker samples the same
 * layers, and a server's reply carries only those, so a step moves about s/L of
 * allreduce's bytes both ways.  A layer's aggregate is then 0 or 1/p times the mean
 * gradient: the variance no longer averages over workers, so the rate must be that of a
 * small batch.  With independent draws (who = the worker) the noise averages over
 * workers, but the reply carries the union of their layers, nearly all of them with 16
 * workers (about 0.7 of allreduce's bytes at s/L = 0.4).
 */
#ifndef EMU_JOINTSPAR_BANDIT_H
#define EMU_JOINTSPAR_BANDIT_H

#include <stddef.h>
#include <stdint.h>

struct jointspar_bandit {
	int nlayers;
	double budget;		/* s, clamped to [nlayers * p_min, nlayers] */
	double p_min, alpha;
	double gmax;		/* L: running max of layer-gradient norms (0 before any) */
	double *p;		/* nlayers probabilities; owned */
	double *w;		/* nlayers scratch weights; same allocation as p */
};

/* budget > 0, 0 < p_min <= 1, alpha >= 0.  Returns 0, -EINVAL or -ENOMEM. */
int jointspar_bandit_init(struct jointspar_bandit *b, int nlayers, double budget,
			  double p_min, double alpha);
void jointspar_bandit_free(struct jointspar_bandit *b);

/* The uniform u_l of (seed, step, who, layer); who < 65536, layer < 2^24. */
double jointspar_uniform(uint64_t seed, int64_t step, int who, int layer);
/* sampled[l] = u_l < p_l.  who: the worker's id for independent draws, or one value on
 * every worker for coupled draws.  Returns the number of layers sampled. */
int jointspar_sample(const struct jointspar_bandit *b, uint64_t seed, int64_t step, int who,
		     uint8_t *sampled);
/* One bandit step: norm2[l] = |g_l|^2 of the (unscaled) gradient of every sampled layer
 * (ignored for the others). */
void jointspar_bandit_update(struct jointspar_bandit *b, const uint8_t *sampled,
			     const double *norm2);
/* q = clip(c w, p_min, 1) with sum q = s (w_l > 0; requires n p_min <= s <= n). */
void jointspar_project(double *q, const double *w, int n, double s, double p_min);

#endif
