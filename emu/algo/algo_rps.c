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
 * there is one, so that it goes by reference (host->outbox); else in place of x.
 * Written against the plugin interface (algo_plugin.h).
 */
#include <errno.h>
#include <stdlib.h>
#include "emu/algo/algo.h"
#include "emu/net/rng.h"

struct rps {
	float *momentum;	/* NULL without momentum */
	size_t nparams, nopt;	/* nopt: floats of the optimiser's state */
	int random_map;		/* block_map = random */
	int block_of[CFG_MAX_WORKERS];	/* server j handles block block_of[j] */
};

/* The block map of one step: identity, or a permutation drawn from (seed, step). */
static void rps_block_map(const struct emu_worker *w, struct rps *r)
{
	for (int j = 0; j < w->n; j++)
		r->block_of[j] = j;
	if (!r->random_map)
		return;
	for (int j = w->n - 1; j > 0; j--) {
		uint64_t u = rng_u64(algo_seed(w), RNG_STREAM_BLOCK_MAP, (uint64_t)w->step, (uint64_t)j);
		int k = (int)(u % (uint64_t)(j + 1));
		int t = r->block_of[j];
		r->block_of[j] = r->block_of[k];
		r->block_of[k] = t;
	}
}

static int rps_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	float *momentum;
	size_t nopt;
	struct rps *r = algo_state_alloc(w, sizeof(*r), &momentum, &nopt);
	if (!r)
		return -ENOMEM;
	r->momentum = momentum;
	r->nparams = w->nparams;
	r->nopt = nopt;
	r->random_map = (int)w->host->key(w, "block_map") == BLOCKS_RANDOM;
	*max_msg = algo_max_block(w) * sizeof(float);
	*state = r;
	return 0;
}

struct rps_call {
	struct emu_worker *w;
	struct rps *r;
	const float *v;		/* this step's v: in the outbox, or the params */
};

static int rps_encode(void *ctx, int server, struct emu_iov iov[])
{
	struct rps_call *k = ctx;
	int b = k->r->block_of[server];
	size_t off = k->w->block_off[b], len = k->w->block_off[b + 1] - off;
	iov[0].base = k->v + off;
	iov[0].len = len * sizeof(float);
	return 1;
}

static size_t rps_reduce(void *ctx, int server, const struct emu_msg in[], uint8_t *reply,
			 size_t cap)
{
	struct rps_call *k = ctx;
	int b = k->r->block_of[server];
	size_t len = k->w->block_off[b + 1] - k->w->block_off[b];
	algo_mean_floats((float *)reply, algo_xmsg(k->w, in), k->w->n, len);
	return len * sizeof(float);
}

static void rps_apply(void *ctx, int server, const struct emu_msg *reply)
{
	struct rps_call *k = ctx;
	int b = k->r->block_of[server];
	size_t off = k->w->block_off[b], len = k->w->block_off[b + 1] - off;
	float *x = k->w->params;
	/* where the average did not arrive, x becomes v (already is, when v is x) */
	algo_take_arrived_else(x + off, algo_xmsg(k->w, reply), len,
			       k->v == x ? NULL : k->v + off);
}

static const struct emu_exchange_ops rps_ops = { rps_encode, rps_reduce, rps_apply };

static int rps_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct rps *r = state;
	size_t cap;
	float *v = w->host->outbox(w, &cap);
	if (!v || cap < r->nparams * sizeof(float))
		v = w->params;
	w->host->optimizer_step_to(w, r->momentum, v);
	rps_block_map(w, r);
	struct rps_call k = { w, r, v };
	return w->host->exchange(w, &rps_ops, &k, flags, flags_out);
}

static int rps_parts(void *state, struct emu_part parts[])
{
	struct rps *r = state;
	return algo_momentum_part(r->momentum, r->nopt, parts);
}

const struct emu_algo_plugin algo_table_rps = {
	.api = EMU_ALGO_API, .name = "rps", .init = rps_init, .step = rps_step,
	.state_parts = rps_parts, .free = free,
};
