/* emu/algo/algo_signum.c — signSGD / Signum with majority vote, Algorithm 1 of Bernstein et
 * al., "signSGD with Majority Vote is Communication Efficient and Fault Tolerant" (ICLR
 * 2019).
 *
 * Worker: v = (1 - beta) g + beta v (beta = 0: signSGD); block j of sign(v), packed 32
 * signs to a word (sign(0) = +1), goes to server j.  Server j: per coordinate the sum of
 * the +-1 of every worker whose unit holding that sign arrived (its own always does);
 * reply sign(sum), packed, a tie giving +1.  Every worker: x -= lr (sign(V) + lambda x),
 * the weight decay decoupled and applied after the vote.  A worker that misses the reply
 * for a coordinate (its unit was lost) leaves that coordinate unchanged this step: it
 * has no direction to move in, and decaying alone would pull it off the other replicas.
 * Adversaries: workers with id < adversaries send the negation of their signs (invert)
 * or uniformly random signs (random, from the counter-based RNG keyed by (seed, step,
 * worker, word)).  Messages carry no header of their own: ceil(n/32) words for n floats,
 * 1/32 of allreduce's bytes.  The paper's default rate is 1e-4 (momentum 0.9).  Written
 * against the plugin interface (algo_plugin.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "emu/algo/bitpack.h"
#include "emu/net/rng.h"
#include "nn/optim.h"

#define SIGNUM_STREAM (RNG_STREAM_USER + 1)

struct signum {
	struct emu_worker *w;
	float beta, wd;		/* [signum] beta, weight_decay */
	int adversaries, adversary;
	float *v;		/* momentum, nparams */
	uint32_t *packed;	/* signs of v, block j at words woff[j] */
	uint32_t *valid;	/* server scratch: n voters x the largest block's words */
	size_t woff[CFG_MAX_WORKERS + 1];
	size_t maxw;		/* words of the largest block */
};

static size_t block_len(const struct emu_worker *w, int j)
{
	return w->block_off[j + 1] - w->block_off[j];
}

static void sg_free(void *state)
{
	struct signum *s = state;
	if (!s)
		return;
	free(s->v);
	free(s->packed);
	free(s->valid);
	free(s);
}

static int sg_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	struct signum *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->w = w;
	s->beta = (float)w->host->key(w, "beta");
	s->wd = (float)w->host->key(w, "weight_decay");
	s->adversaries = (int)w->host->key(w, "adversaries");
	s->adversary = (int)w->host->key(w, "adversary");
	s->woff[0] = 0;
	for (int j = 0; j < w->n; j++)
		s->woff[j + 1] = s->woff[j] + bitpack_words(block_len(w, j));
	s->maxw = bitpack_words(algo_max_block(w));
	s->v = calloc(w->nparams, sizeof(float));
	s->packed = calloc(s->woff[w->n] + 1, sizeof(uint32_t));
	s->valid = calloc((size_t)w->n * s->maxw + 1, sizeof(uint32_t));
	if (!s->v || !s->packed || !s->valid) {
		sg_free(s);
		return -ENOMEM;
	}
	*max_msg = s->maxw * sizeof(uint32_t);
	*state = s;
	return 0;
}

static int sg_encode(void *ctx, int server, struct emu_iov iov[])
{
	struct signum *s = ctx;
	iov[0].base = s->packed + s->woff[server];
	iov[0].len = (s->woff[server + 1] - s->woff[server]) * sizeof(uint32_t);
	return 1;
}

static int unit_arrived(const struct emu_msg *m, size_t u)
{
	return (m->arrived[u / 64] >> (u % 64)) & 1;
}

/* Per word of m, the bits whose byte arrived; NULL when every unit did. */
static const uint32_t *arrived_bits(const struct emu_msg *m, size_t nw, uint32_t *mask)
{
	if (m->narrived == m->nunits)
		return NULL;
	for (size_t k = 0; k < nw; k++) {
		unsigned bytes = 0;
		for (size_t b = 0; b < 4; b++) {
			size_t at = 4 * k + b;
			if (m->narrived > 0 && unit_arrived(m, at / m->unit))
				bytes |= 1u << b;
		}
		mask[k] = bitpack_byte_mask(bytes);
	}
	return mask;
}

static size_t sg_reduce(void *ctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct signum *s = ctx;
	size_t n = block_len(s->w, server), nw = bitpack_words(n);
	const uint32_t *signs[CFG_MAX_WORKERS], *valid[CFG_MAX_WORKERS];
	int nv = 0;
	for (int k = 0; k < s->w->n; k++) {
		if (in[k].narrived == 0 || in[k].len != nw * sizeof(uint32_t))
			continue;	/* lost entirely: no vote */
		signs[nv] = (const uint32_t *)in[k].data;
		valid[nv] = arrived_bits(&in[k], nw, s->valid + (size_t)k * s->maxw);
		nv++;
	}
	bitpack_vote((uint32_t *)reply, n, nv, signs, valid);
	return nw * sizeof(uint32_t);
}

static void sg_apply(void *ctx, int server, const struct emu_msg *reply)
{
	struct signum *s = ctx;
	struct emu_worker *w = s->w;
	size_t off = w->block_off[server], n = block_len(w, server), nw = bitpack_words(n);
	if (reply->narrived == 0 || reply->len != nw * sizeof(uint32_t))
		return;
	const uint32_t *vote = (const uint32_t *)reply->data;
	/* the worker's own valid scratch row is free: its server role is done */
	const uint32_t *ok = arrived_bits(reply, nw, s->valid + (size_t)w->id * s->maxw);
	float *x = w->params + off;
	float lr = (float)w->lr, wd = s->wd;
	for (size_t i = 0; i < n; i++) {
		if (ok && !((ok[i / 32] >> (i % 32)) & 1))
			continue;	/* missed: unchanged this step */
		float sg = (vote[i / 32] >> (i % 32)) & 1 ? 1.0f : -1.0f;
		x[i] -= lr * (sg + wd * x[i]);
	}
}

static const struct emu_exchange_ops sg_ops = { sg_encode, sg_reduce, sg_apply };

/* What this worker sends: its signs, or an adversary's version of them. */
static void sg_pack(struct signum *s)
{
	struct emu_worker *w = s->w;
	for (int j = 0; j < w->n; j++) {
		uint32_t *p = s->packed + s->woff[j];
		size_t n = block_len(w, j);
		bitpack_signs(p, s->v + w->block_off[j], n);
		if (w->id >= s->adversaries)
			continue;
		if (s->adversary == ADV_INVERT) {
			bitpack_invert(p, n);
			continue;
		}
		for (size_t k = 0; k < bitpack_words(n); k++)
			p[k] = (uint32_t)rng_u64(algo_seed(w), SIGNUM_STREAM, (uint64_t)w->step,
						 (uint64_t)w->id << 32 | (s->woff[j] + k));
		bitpack_clear_pad(p, n);
	}
}

static int sg_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct signum *s = state;
	optim_ema(s->v, w->grads, w->nparams, s->beta);
	sg_pack(s);
	return w->host->exchange(w, &sg_ops, s, flags, flags_out);
}

/* The momentum v: the signs are packed from it afresh every step. */
static int sg_parts(void *state, struct emu_part parts[])
{
	struct signum *s = state;
	parts[0] = (struct emu_part){ s->v, s->w->nparams * sizeof(float) };
	return 1;
}

const struct emu_algo_plugin algo_table_signum = {
	.api = EMU_ALGO_API, .name = "signum", .init = sg_init, .step = sg_step,
	.state_parts = sg_parts, .free = sg_free,
};
