/* emu/algo/algo_allreduce.c — synchronous SGD with a gradient all-reduce, the baseline RPS
 * beats, written against the plugin interface (algo_plugin.h).
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
	struct emu_worker *w;
	float *momentum;	/* NULL without momentum */
	size_t nopt;		/* floats of the optimiser's state */
	int zero_missing;	/* on_miss = zero */
};

static int ar_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	float *momentum;
	size_t nopt;
	struct allreduce *a = algo_state_alloc(w, sizeof(*a), &momentum, &nopt);
	if (!a)
		return -ENOMEM;
	a->w = w;
	a->momentum = momentum;
	a->nopt = nopt;
	a->zero_missing = (int)w->host->key(w, "on_miss") == MISS_ZERO;
	*max_msg = algo_max_block(w) * sizeof(float);
	*state = a;
	return 0;
}

static int ar_encode(void *ctx, int server, struct emu_iov iov[])
{
	struct emu_worker *w = ((struct allreduce *)ctx)->w;
	size_t off = w->block_off[server];
	iov[0].base = w->grads + off;
	iov[0].len = (w->block_off[server + 1] - off) * sizeof(float);
	return 1;
}

static size_t ar_reduce(void *ctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct emu_worker *w = ((struct allreduce *)ctx)->w;
	size_t len = w->block_off[server + 1] - w->block_off[server];
	algo_mean_floats((float *)reply, algo_xmsg(w, in), w->n, len);
	return len * sizeof(float);
}

static void ar_apply(void *ctx, int server, const struct emu_msg *reply)
{
	struct allreduce *a = ctx;
	struct emu_worker *w = a->w;
	size_t off = w->block_off[server], len = w->block_off[server + 1] - off;
	algo_take_arrived(w->grads + off, algo_xmsg(w, reply), len, a->zero_missing);
}

static const struct emu_exchange_ops ar_ops = { ar_encode, ar_reduce, ar_apply };

static int ar_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct allreduce *a = state;
	int rc = w->host->exchange(w, &ar_ops, a, flags, flags_out);
	if (rc < 0)
		return rc;
	w->host->optimizer_step(w, a->momentum);
	return 0;
}

static int ar_parts(void *state, struct emu_part parts[])
{
	struct allreduce *a = state;
	return algo_momentum_part(a->momentum, a->nopt, parts);
}

const struct emu_algo_plugin algo_table_allreduce = {
	.api = EMU_ALGO_API, .name = "allreduce", .init = ar_init, .step = ar_step,
	.state_parts = ar_parts, .free = free,
};
