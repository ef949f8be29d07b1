/* emu/algo/algo_rps.c — RPS, the Reliable Parameter Server of "Distributed Learning over
 * Unreliable Networks" (Yu et al., ICML 2019).
 *
 * Workers exchange models, not gradients.  Each worker takes a local step
 * v_i = x_i - lr (g_i + wd x_i) (with momentum if configured; the paper uses none), cut
 * into N blocks; block b goes to its server; the server averages the blocks that arrived,
 * its own included; each worker takes the server's average where it arrived and keeps its
 * own v where it did not.  Replicas may drift apart; what is evaluated is their mean.
 * The block-to-server map is fixed (block j to worker j) or re-drawn every step from
 * (seed, step), the same on every worker.  v is built in the exchange's outbox where
 * there is one, so that it goes by reference (xchg.h); else in place of x.
 */
#include <errno.h>
#include <stdlib.h>
#include "emu/algo/algo.h"
#include "emu/net/rng.h"

struct rps {
	float *momentum;	/* NULL without momentum */
	size_t nparams, nopt;	/* nopt: floats of the optimiser's state */
	int block_of[CFG_MAX_WORKERS];	/* server j handles block block_of[j] */
};

/* The block map of one step: identity, or a permutation drawn from (seed, step). */
static void rps_block_map(const struct worker *w, struct rps *r)
{
	for (int j = 0; j < w->n; j++)
		r->block_of[j] = j;
	if (w->c->rps.block_map != BLOCKS_RANDOM)
		return;
	for (int j = w->n - 1; j > 0; j--) {
		uint64_t u = rng_u64(w->c->run.seed, RNG_STREAM_BLOCK_MAP, (uint64_t)w->step, (uint64_t)j);
		int k = (int)(u % (uint64_t)(j + 1));
		int t = r->block_of[j];
		r->block_of[j] = r->block_of[k];
		r->block_of[k] = t;
	}
}

static int rps_init(struct worker *w, void **state, size_t *max_msg)
{
	float *momentum;
	size_t nopt;
	struct rps *r = algo_state_alloc(w, sizeof(*r), &momentum, &nopt);
	if (!r)
		return -ENOMEM;
	r->momentum = momentum;
	r->nparams = w->m.nparams;
	r->nopt = nopt;
	*max_msg = algo_max_block(w) * sizeof(float);
	*state = r;
	return 0;
}

struct rps_call {
	struct worker *w;
	struct rps *r;
	const float *v;		/* this step's v: in the outbox, or the params */
};

static int rps_encode(void *ctx, int server, struct xchg_iov iov[])
{
	struct rps_call *k = ctx;
	int b = k->r->block_of[server];
	size_t off = k->w->block_off[b], len = k->w->block_off[b + 1] - off;
	iov[0].base = k->v + off;
	iov[0].len = len * sizeof(float);
	return 1;
}

static size_t rps_reduce(void *ctx, int server, const struct xmsg in[], uint8_t *reply,
			 size_t cap)
{
	struct rps_call *k = ctx;
	int b = k->r->block_of[server];
	size_t len = k->w->block_off[b + 1] - k->w->block_off[b];
	algo_mean_floats((float *)reply, in, k->w->n, len);
	return len * sizeof(float);
}

static void rps_apply(void *ctx, int server, const struct xmsg *reply)
{
	struct rps_call *k = ctx;
	int b = k->r->block_of[server];
	size_t off = k->w->block_off[b], len = k->w->block_off[b + 1] - off;
	float *x = k->w->m.params;
	/* where the average did not arrive, x becomes v (already is, when v is x) */
	algo_take_arrived_else(x + off, reply, len, k->v == x ? NULL : k->v + off);
}

static const struct xchg_ops rps_ops = { rps_encode, rps_reduce, rps_apply };

static int rps_step(struct worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct rps *r = state;
	size_t cap;
	float *v = xchg_outbox(&w->x, &cap);
	if (!v || cap < r->nparams * sizeof(float))
		v = w->m.params;
	algo_sgd_step_to(w, r->momentum, v);
	rps_block_map(w, r);
	struct rps_call k = { w, r, v };
	return xchg_run(&w->x, w->step, &rps_ops, &k, flags, flags_out);
}

static int rps_parts(void *state, struct algo_part parts[])
{
	struct rps *r = state;
	return algo_momentum_part(r->momentum, r->nopt, parts);
}

const struct algo algo_rps = { rps_init, NULL, rps_step, free, rps_parts };
