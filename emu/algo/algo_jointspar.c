/* emu/algo/algo_jointspar.c — JointSpar and JointSpar-LARS (Liu & Mozafari, ICML 2022),
 * reconstructed from the paper's abstract and the authors' earlier bandit sampling (the
 * full text was not at hand; the rules are in emu/algo/jointspar_bandit.h).
 *
 * Each step a worker samples layers with probabilities p before backward, so that
 * backward computes weight gradients only for them and stops below the lowest.  The
 * draws are keyed by (seed, step, layer) and, with `jointspar.draws = independent`, the
 * worker.  It sends block j of its sampled layers' gradients scaled by 1/p_l to server j
 * (emu/algo/jointspar_msg.h).  Server j averages over every worker whose header arrived,
 * skipped layers counting as zero, so the aggregate is an unbiased estimate of the mean
 * gradient; it replies with the layers present in any message: with shared draws just
 * the sampled ones (about s/L of allreduce's bytes each way), with independent draws
 * their union (nearly all).  Every worker: x -= lr (agg + wd x) (with momentum if
 * train.momentum > 0), or, for jointspar-lars, the same with the aggregate of each layer
 * scaled by its LARS trust ratio trust |x_l| / (|agg_l| + wd |x_l| + eps).  Where a reply
 * (or part of it) was lost a worker leaves those coordinates (and their momentum)
 * unchanged this step.  Under LARS a layer nobody sampled is not stepped at all: its
 * trust ratio would be undefined.
 *
 * The bandit of a worker learns from its own gradient under independent draws, and from
 * the aggregate under shared draws, so that every worker keeps the same p.  After a lost
 * reply a worker's p may differ from the others' for good, and its draws with it: its
 * own estimate stays unbiased (it scales by its own p), only the replies grow.
 *
 * Written against the plugin interface (algo_plugin.h): before_backward copies the
 * sampled layers into w->need_wgrad.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "emu/algo/jointspar_bandit.h"
#include "emu/algo/jointspar_msg.h"
#include "nn/optim.h"

struct jointspar {
	struct emu_worker *w;
	struct nn_layer *layers;	/* the model's, as w->layer_off and layer_size say */
	float wd, beta, trust, lars_eps;	/* train.weight_decay, train.momentum, [jointspar] */
	int nesterov;
	struct jointspar_bandit bandit;
	struct jointspar_block blk[CFG_MAX_WORKERS];
	size_t moff[CFG_MAX_WORKERS + 1];	/* bytes: message for server j at msg + moff[j] */
	size_t mlen[CFG_MAX_WORKERS];
	int lars;
	int shared;		/* jointspar.draws = shared */
	/* one allocation, carved: */
	void *mem;
	size_t mem_bytes;
	uint8_t *msg;		/* moff[n] bytes */
	uint8_t *sampled;	/* nlayers */
	double *norm2;		/* nlayers */
	float *agg;		/* nparams: the aggregate taken from the replies */
	uint8_t *arrived;	/* nparams */
	float *sum;		/* server scratch: the largest block */
	uint32_t *cnt;
	float *momentum;	/* nparams, or NULL */
};

static int js_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	const struct emu_host *h = w->host;
	struct jointspar *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->w = w;
	s->lars = (int)h->key(w, "train.algorithm") == ALGO_JOINTSPAR_LARS;
	s->shared = (int)h->key(w, "draws") == DRAWS_SHARED;
	s->wd = (float)h->key(w, "train.weight_decay");
	s->beta = (float)h->key(w, "train.momentum");
	s->nesterov = (int)h->key(w, "train.nesterov");
	s->trust = (float)h->key(w, "trust");
	s->lars_eps = (float)h->key(w, "lars_eps");
	s->layers = calloc((size_t)(w->nlayers > 0 ? w->nlayers : 1), sizeof(*s->layers));
	if (!s->layers) {
		free(s);
		return -ENOMEM;
	}
	for (int l = 0; l < w->nlayers; l++)
		s->layers[l] = (struct nn_layer){ .off = w->layer_off[l], .size = w->layer_size[l] };
	int rc = jointspar_bandit_init(&s->bandit, w->nlayers, h->key(w, "budget"),
				       h->key(w, "p_min"), h->key(w, "alpha"));
	if (rc < 0) {
		free(s->layers);
		free(s);
		return rc;
	}
	*max_msg = 0;
	for (int j = 0; j < w->n; j++) {
		rc = jointspar_block_init(&s->blk[j], s->layers, w->nlayers, w->nparams,
					  w->block_off[j], w->block_off[j + 1]);
		if (rc < 0)
			goto err;
		size_t mx = jointspar_msg_max(&s->blk[j]);
		s->moff[j + 1] = s->moff[j] + (mx + 7) / 8 * 8;	/* keep floats aligned */
		if (mx > *max_msg)
			*max_msg = mx;
	}
	size_t L = (size_t)w->nlayers, P = w->nparams, big = algo_max_block(w);
	size_t nmom = h->key(w, "train.momentum") > 0 ? P : 0;
	/* doubles and floats first, bytes last: every piece stays aligned */
	size_t bytes = L * sizeof(double) + (P + big + nmom) * sizeof(float) +
		       big * sizeof(uint32_t) + s->moff[w->n] + L + P;
	s->mem = calloc(1, bytes);
	s->mem_bytes = bytes;
	if (!s->mem) {
		rc = -ENOMEM;
		goto err;
	}
	s->norm2 = s->mem;
	s->agg = (float *)(s->norm2 + L);
	s->sum = s->agg + P;
	s->momentum = nmom ? s->sum + big : NULL;
	s->cnt = (uint32_t *)(s->sum + big + nmom);
	s->msg = (uint8_t *)(s->cnt + big);
	s->sampled = s->msg + s->moff[w->n];
	s->arrived = s->sampled + L;
	*state = s;
	return 0;
err:
	jointspar_bandit_free(&s->bandit);
	free(s->layers);
	free(s);
	return rc;
}

static void js_before_backward(struct emu_worker *w, void *state)
{
	struct jointspar *s = state;
	/* shared draws: one set of uniforms for all, so equal p give equal layers */
	int who = s->shared ? 0 : w->id;
	jointspar_sample(&s->bandit, algo_seed(w), w->step, who, s->sampled);
	memcpy(w->need_wgrad, s->sampled, (size_t)w->nlayers);
}

static int js_encode(void *ctx, int server, struct emu_iov iov[])
{
	struct jointspar *s = ctx;
	iov[0].base = s->msg + s->moff[server];
	iov[0].len = s->mlen[server];
	return 1;
}

static size_t js_reduce(void *ctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct jointspar *s = ctx;
	return jointspar_msg_reduce(&s->blk[server], s->layers, algo_xmsg(s->w, in), s->w->n,
				    s->sum, s->cnt, reply, cap);
}

static void js_apply(void *ctx, int server, const struct emu_msg *reply)
{
	struct jointspar *s = ctx;
	jointspar_msg_take(&s->blk[server], s->layers, algo_xmsg(s->w, reply), s->agg,
			   s->arrived);
}

static const struct emu_exchange_ops js_ops = { js_encode, js_reduce, js_apply };

/* x -= lr * u where u = ratio (g + wd x) (+ momentum), on the coordinates that arrived. */
static void js_update(struct jointspar *s, size_t off, size_t n, float ratio)
{
	struct emu_worker *w = s->w;
	float *x = w->params + off, *g = s->agg + off;
	const uint8_t *ok = s->arrived + off;
	float *mom = s->momentum ? s->momentum + off : NULL;
	float lr = (float)w->lr, wd = s->wd;
	float beta = s->beta;
	int nesterov = s->nesterov;

	for (size_t i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		float u = ratio * (g[i] + wd * x[i]);
		if (mom) {	/* as nn/optim.c's optim_sgd_step */
			mom[i] = beta * mom[i] + u;
			u = nesterov ? u + beta * mom[i] : mom[i];
		}
		x[i] -= lr * u;
	}
}

/* Bandit feedback, independent draws: the norms of this worker's own layer gradients. */
static void own_norms(struct jointspar *s)
{
	const struct nn_layer *layers = s->layers;
	for (int l = 0; l < s->w->nlayers; l++)
		s->norm2[l] = s->sampled[l] ?
			optim_norm2(s->w->grads + layers[l].off, layers[l].size) : 0;
}

/* Bandit feedback, shared draws: the norms of the mean gradient, |agg_l|^2 p_l^2 (the
 * aggregate is scaled by 1/p_l), the same on every worker while replies arrive, so that
 * every worker keeps the same p and keeps drawing the same layers.  The variance the
 * sampling adds is then sum_l |mean g_l|^2 (1/p_l - 1): the mean gradient is what the
 * bandit must follow.  A layer whose reply did not wholly arrive gives no feedback: it
 * leaves this step's sampled set (drawn anew each step). */
static void mean_norms(struct jointspar *s)
{
	for (int l = 0; l < s->w->nlayers; l++) {
		size_t off = s->layers[l].off, n = s->layers[l].size;
		if (s->sampled[l] && memchr(s->arrived + off, 0, n)) {
			s->sampled[l] = 0;
			continue;
		}
		double p = s->bandit.p[l];
		s->norm2[l] = s->sampled[l] ? optim_norm2(s->agg + off, n) * p * p : 0;
	}
}

static int js_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct jointspar *s = state;
	for (int j = 0; j < w->n; j++)
		s->mlen[j] = jointspar_msg_build(s->msg + s->moff[j], &s->blk[j], s->layers,
						 s->sampled, s->bandit.p, w->grads);
	int rc = w->host->exchange(w, &js_ops, s, flags, flags_out);
	if (rc < 0)
		return rc;
	/* the messages were built with this step's p; the bandit moves on for the next */
	if (s->shared)
		mean_norms(s);
	else
		own_norms(s);
	jointspar_bandit_update(&s->bandit, s->sampled, s->norm2);
	for (int l = 0; l < w->nlayers; l++) {
		size_t off = s->layers[l].off, n = s->layers[l].size;
		float ratio = 1.0f;
		if (s->lars) {
			/* the layer's aggregate as taken; lost floats read as 0 */
			double g2 = optim_norm2(s->agg + off, n);
			if (g2 == 0)
				continue;
			ratio = optim_lars_ratio(optim_norm2(w->params + off, n), g2, s->trust,
						 s->wd, s->lars_eps);
		}
		js_update(s, off, n, ratio);
	}
	return 0;
}

static void js_free(void *state)
{
	struct jointspar *s = state;
	if (!s)
		return;
	jointspar_bandit_free(&s->bandit);
	free(s->mem);
	free(s->layers);
	free(s);
}

/* The bandit (its probabilities and running maximum) and the carved allocation whole:
 * the momentum, and the aggregate and arrival marks a lost reply leaves in place. */
static int js_parts(void *state, struct emu_part parts[])
{
	struct jointspar *s = state;
	parts[0] = (struct emu_part){ s->bandit.p, (size_t)s->bandit.nlayers * sizeof(double) };
	parts[1] = (struct emu_part){ &s->bandit.gmax, sizeof(s->bandit.gmax) };
	parts[2] = (struct emu_part){ s->mem, s->mem_bytes };
	return 3;
}

const struct emu_algo_plugin algo_table_jointspar = {
	.api = EMU_ALGO_API, .name = "jointspar", .init = js_init,
	.before_backward = js_before_backward, .step = js_step, .state_parts = js_parts,
	.free = js_free,
};
