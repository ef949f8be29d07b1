/* emu/algo/algo_allreduce.c — synchronous SGD with a gradient all-reduce, the baseline RPS
 * beats.
 *
 * The gradient is cut into N blocks; server j averages block j over the workers whose
 * block arrived (its own included) and broadcasts the mean; every worker steps with the
 * averaged gradient.  Over a reliable transport nothing is lost and this is standard
 * synchronous SGD.  Over an unreliable one, where a worker misses (part of) a reply it
 * uses its own gradient there (on_miss = own) or nothing (on_miss = zero): either way the
 * replicas take different steps and drift apart, which is what the paper shows.
 */
#include <errno.h>
#include <stdlib.h>
#include "emu/algo/algo.h"

struct allreduce {
	float *momentum;	/* NULL without momentum */
	size_t nparams, nopt;	/* nopt: floats of the optimiser's state */
};

static int ar_init(struct worker *w, void **state, size_t *max_msg)
{
	float *momentum;
	size_t nopt;
	struct allreduce *a = algo_state_alloc(w, sizeof(*a), &momentum, &nopt);
	if (!a)
		return -ENOMEM;
	a->momentum = momentum;
	a->nparams = w->m.nparams;
	a->nopt = nopt;
	*max_msg = algo_max_block(w) * sizeof(float);
	*state = a;
	return 0;
}

static int ar_encode(void *ctx, int server, struct xchg_iov iov[])
{
	struct worker *w = ctx;
	size_t off = w->block_off[server];
	iov[0].base = w->m.grads + off;
	iov[0].len = (w->block_off[server + 1] - off) * sizeof(float);
	return 1;
}

static size_t ar_reduce(void *ctx, int server, const struct xmsg in[], uint8_t *reply,
			size_t cap)
{
	struct worker *w = ctx;
	size_t len = w->block_off[server + 1] - w->block_off[server];
	algo_mean_floats((float *)reply, in, w->n, len);
	return len * sizeof(float);
}

static void ar_apply(void *ctx, int server, const struct xmsg *reply)
{
	struct worker *w = ctx;
	size_t off = w->block_off[server], len = w->block_off[server + 1] - off;
	algo_take_arrived(w->m.grads + off, reply, len,
			  w->c->allreduce.on_miss == MISS_ZERO);
}

static const struct xchg_ops ar_ops = { ar_encode, ar_reduce, ar_apply };

static int ar_step(struct worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct allreduce *a = state;
	int rc = xchg_run(&w->x, w->step, &ar_ops, w, flags, flags_out);
	if (rc < 0)
		return rc;
	algo_sgd_step(w, a->momentum);
	return 0;
}

static int ar_parts(void *state, struct algo_part parts[])
{
	struct allreduce *a = state;
	return algo_momentum_part(a->momentum, a->nopt, parts);
}

const struct algo algo_allreduce = { ar_init, NULL, ar_step, free, ar_parts };
