/* emu/algo/algo_localsgd.c — local SGD, or periodic model averaging (Stich, ICLR 2019; Lin
 * et al., ICLR 2020), written against the plugin interface (algo_plugin.h).
 *
 * Every worker steps on its own gradient every step (the run's optimiser, its state
 * local); every [localsgd] period-th step, after its own step, the workers average their
 * models through the partitioned server: server j averages block j over the workers whose
 * floats arrived and replies; a worker takes the reply's arrived floats and keeps its own
 * where the reply is missing.  The other steps exchange empty messages (the collective
 * still agrees on stopping and keeps the clocks), so the bytes fall by the period.
 * period = 1 averages the models after every step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/algo/algo.h"

struct localsgd {
	size_t nparams, nopt;
	int64_t period;
	int averaging;		/* this step's exchange carries the models */
	float *opt;
};

static void ls_free(void *state)
{
	struct localsgd *l = state;

	if (l)
		free(l->opt);
	free(l);
}

static int ls_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	struct localsgd *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->nparams = w->nparams;
	l->nopt = w->host->opt_floats(w);
	l->period = (int64_t)w->host->key(w, "period");
	l->opt = calloc(l->nopt ? l->nopt : 1, sizeof(float));
	if (!l->opt || l->period < 1) {
		int rc = l->opt ? -EINVAL : -ENOMEM;

		ls_free(l);
		return rc;
	}
	*max_msg = algo_max_block(w) * sizeof(float);
	*state = l;
	return 0;
}

struct ctx {
	struct emu_worker *w;
	struct localsgd *l;
};

static int ls_encode(void *vctx, int server, struct emu_iov iov[])
{
	struct ctx *x = vctx;
	size_t off = x->w->block_off[server];

	if (!x->l->averaging)
		return 0;
	iov[0] = (struct emu_iov){ x->w->params + off,
				   (x->w->block_off[server + 1] - off) * sizeof(float) };
	return 1;
}

static size_t ls_reduce(void *vctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct ctx *x = vctx;
	size_t len = x->w->block_off[server + 1] - x->w->block_off[server];

	if (!x->l->averaging || len * sizeof(float) > cap)
		return 0;
	x->w->host->mean_floats((float *)reply, in, x->w->n, len);
	return len * sizeof(float);
}

static void ls_apply(void *vctx, int server, const struct emu_msg *reply)
{
	struct ctx *x = vctx;
	size_t off = x->w->block_off[server], len = x->w->block_off[server + 1] - off;
	const float *mean = (const float *)reply->data;

	if (!x->l->averaging || reply->len < len * sizeof(float) || !reply->narrived)
		return;
	for (size_t f = 0; f < len; f++)
		if (reply->narrived == reply->nunits || x->w->host->float_arrived(reply, f))
			x->w->params[off + f] = mean[f];
}

static const struct emu_exchange_ops ls_ops = { ls_encode, ls_reduce, ls_apply };

static int ls_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct localsgd *l = state;
	struct ctx x = { w, l };

	w->host->optimizer_step(w, l->opt);
	l->averaging = (w->step + 1) % l->period == 0;
	return w->host->exchange(w, &ls_ops, &x, flags, flags_out);
}

static int ls_parts(void *state, struct emu_part parts[])
{
	struct localsgd *l = state;

	if (!l->nopt)
		return 0;
	parts[0] = (struct emu_part){ l->opt, l->nopt * sizeof(float) };
	return 1;
}

const struct emu_algo_plugin algo_table_localsgd = {
	.api = EMU_ALGO_API, .name = "localsgd", .init = ls_init, .step = ls_step,
	.state_parts = ls_parts, .free = ls_free,
};
