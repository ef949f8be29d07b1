/* randk.c — random-k sparsification with error feedback, an algorithm for emu built
 * outside its tree (emu/algo_plugin.h).
 *
 * Each step every worker adds its gradient to its error e (error feedback), and for
 * each server's block sends only k of the block's floats (k = fraction of the block,
 * at least one): the same k positions on every worker, drawn from the run's seed and
 * the step (host->random), so that a server averages them position by position (over
 * the workers whose floats arrived) and replies with k floats.  What a worker sent
 * leaves its error; the rest stays there for later steps.  The worker's gradient is
 * then the averaged floats at the k positions of each block and zero elsewhere (its own
 * floats where a reply's did not arrive), and the run's optimiser steps with it.
 * Without error feedback (error_feedback = false) the positions not sent are dropped.
 *
 * Keys ([plugin]): fraction (of each block sent, default 0.1), error_feedback (true).
 * State that outlives a step: the error and the optimiser's state. */
#include <emu/algo_plugin.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct randk {
	size_t nparams, nopt, total;	/* total: positions sent over all blocks */
	int ef;
	float *err;		/* [nparams] error feedback */
	float *opt;		/* [nopt] the optimiser's */
	uint32_t *pos;		/* [total] positions (within their block), block by block */
	float *sent;		/* [total] what this worker sent */
	size_t *first;		/* [n + 1] each block's first entry of pos and sent */
	uint64_t *taken;	/* [nparams / 64 + 1] Floyd's set, cleared after each block */
};

static size_t block_k(const struct emu_worker *w, int j, double fraction)
{
	size_t len = w->block_off[j + 1] - w->block_off[j];
	size_t k = (size_t)ceil(fraction * (double)len);

	return len == 0 ? 0 : k < 1 ? 1 : k > len ? len : k;
}

static void rk_free(void *state)
{
	struct randk *r = state;

	if (!r)
		return;
	free(r->err);
	free(r->opt);
	free(r->pos);
	free(r->sent);
	free(r->first);
	free(r->taken);
	free(r);
}

static int rk_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	struct randk *r = calloc(1, sizeof(*r));
	double fraction = w->host->key(w, "fraction");
	size_t biggest = 0;

	if (!r)
		return -ENOMEM;
	r->nparams = w->nparams;
	r->nopt = w->host->opt_floats(w);
	r->ef = w->host->key(w, "error_feedback") != 0;
	r->first = calloc((size_t)w->n + 1, sizeof(*r->first));
	if (!r->first) {
		rk_free(r);
		return -ENOMEM;
	}
	for (int j = 0; j < w->n; j++) {
		size_t k = block_k(w, j, fraction);

		r->first[j + 1] = r->first[j] + k;
		biggest = k > biggest ? k : biggest;
	}
	r->total = r->first[w->n];
	r->err = calloc(r->nparams ? r->nparams : 1, sizeof(float));
	r->opt = calloc(r->nopt ? r->nopt : 1, sizeof(float));
	r->pos = calloc(r->total ? r->total : 1, sizeof(uint32_t));
	r->sent = calloc(r->total ? r->total : 1, sizeof(float));
	r->taken = calloc(r->nparams / 64 + 1, sizeof(uint64_t));
	if (!r->err || !r->opt || !r->pos || !r->sent || !r->taken) {
		rk_free(r);
		return -ENOMEM;
	}
	*max_msg = biggest * sizeof(float);
	*state = r;
	return 0;
}

/* Floyd's sample of k distinct positions of [0, len), the same on every worker. */
static void sample(struct emu_worker *w, struct randk *r, int j)
{
	size_t len = w->block_off[j + 1] - w->block_off[j], k = r->first[j + 1] - r->first[j];
	uint32_t *pos = r->pos + r->first[j];

	for (size_t i = 0; i < k; i++) {
		size_t top = len - k + i;
		size_t t = (size_t)(w->host->random(w, 1, (uint64_t)w->step,
						    (uint64_t)j << 24 | i) % (top + 1));

		if (r->taken[t / 64] >> (t % 64) & 1)
			t = top;
		r->taken[t / 64] |= 1ull << (t % 64);
		pos[i] = (uint32_t)t;
	}
	for (size_t i = 0; i < k; i++)
		r->taken[pos[i] / 64] &= ~(1ull << (pos[i] % 64));
}

struct ctx {
	struct emu_worker *w;
	struct randk *r;
};

static int rk_encode(void *vctx, int server, struct emu_iov iov[])
{
	struct ctx *x = vctx;
	size_t k = x->r->first[server + 1] - x->r->first[server];

	iov[0] = (struct emu_iov){ x->r->sent + x->r->first[server], k * sizeof(float) };
	return 1;
}

static size_t rk_reduce(void *vctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct ctx *x = vctx;
	size_t k = x->r->first[server + 1] - x->r->first[server];

	if (k * sizeof(float) > cap)
		return 0;
	x->w->host->mean_floats((float *)reply, in, x->w->n, k);
	return k * sizeof(float);
}

static void rk_apply(void *vctx, int server, const struct emu_msg *reply)
{
	struct ctx *x = vctx;
	struct randk *r = x->r;
	size_t off = x->w->block_off[server], len = x->w->block_off[server + 1] - off;
	size_t first = r->first[server], k = r->first[server + 1] - first;
	float *g = x->w->grads + off;
	const float *mean = (const float *)reply->data;

	memset(g, 0, len * sizeof(float));
	for (size_t i = 0; i < k; i++)
		g[r->pos[first + i]] = reply->len >= (i + 1) * sizeof(float) &&
				       x->w->host->float_arrived(reply, i) ? mean[i] :
				       r->sent[first + i];
}

static const struct emu_exchange_ops rk_ops = { rk_encode, rk_reduce, rk_apply };

static int rk_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct randk *r = state;
	struct ctx x = { w, r };

	for (int j = 0; j < w->n; j++) {
		size_t off = w->block_off[j];

		sample(w, r, j);
		for (size_t i = r->first[j]; i < r->first[j + 1]; i++) {
			size_t p = off + r->pos[i];

			if (r->ef) {	/* e += g here; sent leaves e */
				r->sent[i] = r->err[p] + w->grads[p];
				r->err[p] = -w->grads[p];	/* cancelled by the += below */
			} else {
				r->sent[i] = w->grads[p];
			}
		}
	}
	if (r->ef)
		for (size_t p = 0; p < r->nparams; p++)
			r->err[p] += w->grads[p];
	int rc = w->host->exchange(w, &rk_ops, &x, flags, flags_out);

	if (rc < 0)
		return rc;
	w->host->optimizer_step(w, r->opt);
	return 0;
}

static int rk_parts(void *state, struct emu_part parts[])
{
	struct randk *r = state;
	int k = 0;

	parts[k++] = (struct emu_part){ r->err, r->nparams * sizeof(float) };
	if (r->nopt)
		parts[k++] = (struct emu_part){ r->opt, r->nopt * sizeof(float) };
	return k;
}

static const struct emu_key_spec rk_keys[] = {
	{ "fraction", EMU_KEY_DOUBLE, "0.1", 1e-6, 1, "share of each block sent a step" },
	{ "error_feedback", EMU_KEY_BOOL, "true", 0, 1, "keep what was not sent for later" },
};

static const struct emu_algo_plugin randk = {
	.api = EMU_ALGO_API, .name = "randk", .keys = rk_keys, .nkeys = 2,
	.init = rk_init, .step = rk_step, .state_parts = rk_parts, .free = rk_free,
};

const struct emu_algo_plugin *emu_algo_plugin(void)
{
	return &randk;
}
