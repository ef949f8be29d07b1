/* emu/algo/algo_qsgd.c — QSGD (Alistarh et al., NeurIPS 2017): stochastically quantised
 * gradients, written against the plugin interface (algo_plugin.h).
 *
 * For each server's block a worker sends the block's 2-norm and, per entry, a level in
 * [-s, s] (s = [qsgd] levels, at most 127: one byte an entry): |g_i| / norm x s rounded
 * down or up at random with the probabilities that make the level unbiased, the sign
 * kept (random bits from the run's seed, the step, the worker and the entry).  Server j
 * decodes each worker's block (norm x level / s), averages entry by entry over the
 * workers whose bytes arrived (a message whose norm was lost counts as not arrived), and
 * quantises the mean the same way (its own random bits) for the reply.  A worker takes
 * the reply's arrived entries and its own decoded entry where the reply's is missing;
 * then the run's optimiser steps.  About a quarter of all-reduce's bytes both ways.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emu/algo/algo_plugin.h"

#define STREAM_WORKER 0x100	/* + worker id: a worker's rounding */
#define STREAM_SERVER 0x200	/* + server id: a server's */

struct qsgd {
	size_t nparams, nopt, maxlen;
	int levels;
	float *opt;
	uint8_t *msg;		/* [n blocks] norm + codes, block by block */
	size_t *first;		/* [n + 1] each block's first byte in msg */
	float *own;		/* [nparams] this worker's decoded gradient */
	float *sum, *cnt;	/* [maxlen] server scratch */
};

static size_t msg_bytes(size_t len)
{
	return sizeof(float) + len;
}

static void qs_free(void *state)
{
	struct qsgd *q = state;

	if (q) {
		free(q->opt);
		free(q->msg);
		free(q->first);
		free(q->own);
		free(q->sum);
		free(q->cnt);
	}
	free(q);
}

static int qs_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	struct qsgd *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->nparams = w->nparams;
	q->nopt = w->host->opt_floats(w);
	q->levels = (int)w->host->key(w, "levels");
	q->first = calloc((size_t)w->n + 1, sizeof(*q->first));
	if (!q->first) {
		qs_free(q);
		return -ENOMEM;
	}
	for (int j = 0; j < w->n; j++) {
		size_t len = w->block_off[j + 1] - w->block_off[j];

		q->first[j + 1] = q->first[j] + msg_bytes(len);
		q->maxlen = len > q->maxlen ? len : q->maxlen;
	}
	q->opt = calloc(q->nopt ? q->nopt : 1, sizeof(float));
	q->msg = calloc(q->first[w->n] ? q->first[w->n] : 1, 1);
	q->own = calloc(q->nparams ? q->nparams : 1, sizeof(float));
	q->sum = calloc(q->maxlen ? q->maxlen : 1, sizeof(float));
	q->cnt = calloc(q->maxlen ? q->maxlen : 1, sizeof(float));
	if (!q->opt || !q->msg || !q->own || !q->sum || !q->cnt) {
		qs_free(q);
		return -ENOMEM;
	}
	*max_msg = msg_bytes(q->maxlen);
	*state = q;
	return 0;
}

/* v[0, len) into out (norm, then a signed level an entry), rounding with stream's bits;
 * the decoded values into dec when not NULL. */
static void quantise(const struct emu_worker *w, uint32_t stream, int j, int s, const float *v,
		     size_t len, uint8_t *out, float *dec)
{
	double sq = 0;
	float norm;

	for (size_t i = 0; i < len; i++)
		sq += (double)v[i] * v[i];
	norm = (float)sqrt(sq);
	memcpy(out, &norm, sizeof(norm));
	for (size_t i = 0; i < len; i++) {
		double r = norm > 0 ? fabs((double)v[i]) / norm * s : 0;
		int l = (int)r;
		double u = (double)(w->host->random(w, stream, (uint64_t)w->step,
						    (uint64_t)j << 24 | i) >> 11) * 0x1p-53;
		int level = l + (u < r - l);

		level = level > s ? s : level;
		out[sizeof(float) + i] = (uint8_t)(int8_t)(v[i] < 0 ? -level : level);
		if (dec)
			dec[i] = norm * (float)(int8_t)out[sizeof(float) + i] / (float)s;
	}
}

struct ctx {
	struct emu_worker *w;
	struct qsgd *q;
};

static int qs_encode(void *vctx, int server, struct emu_iov iov[])
{
	struct ctx *x = vctx;

	iov[0] = (struct emu_iov){ x->q->msg + x->q->first[server],
				   x->q->first[server + 1] - x->q->first[server] };
	return 1;
}

/* Byte b of m arrived (and the message is usable: its norm did). */
static int byte_arrived(const struct emu_msg *m, size_t b)
{
	return m->narrived == m->nunits ||
	       (m->arrived[b / m->unit / 64] >> (b / m->unit % 64) & 1);
}

static int norm_arrived(const struct emu_msg *m)
{
	return m->narrived && m->len >= sizeof(float) && byte_arrived(m, 0) &&
	       byte_arrived(m, sizeof(float) - 1);
}

static size_t qs_reduce(void *vctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct ctx *x = vctx;
	struct qsgd *q = x->q;
	size_t len = x->w->block_off[server + 1] - x->w->block_off[server];

	if (msg_bytes(len) > cap)
		return 0;
	memset(q->sum, 0, len * sizeof(float));
	memset(q->cnt, 0, len * sizeof(float));
	for (int j = 0; j < x->w->n; j++) {	/* in worker order: the same sums everywhere */
		float norm;

		if (in[j].len < msg_bytes(len) || !norm_arrived(&in[j]))
			continue;
		memcpy(&norm, in[j].data, sizeof(norm));
		for (size_t i = 0; i < len; i++)
			if (byte_arrived(&in[j], sizeof(float) + i)) {
				q->sum[i] += norm * (float)(int8_t)in[j].data[sizeof(float) + i] /
					     (float)q->levels;
				q->cnt[i] += 1;
			}
	}
	for (size_t i = 0; i < len; i++)
		q->sum[i] = q->cnt[i] > 0 ? q->sum[i] / q->cnt[i] : 0;
	quantise(x->w, STREAM_SERVER + (uint32_t)server, server, q->levels, q->sum, len, reply,
		 NULL);
	return msg_bytes(len);
}

static void qs_apply(void *vctx, int server, const struct emu_msg *reply)
{
	struct ctx *x = vctx;
	size_t off = x->w->block_off[server], len = x->w->block_off[server + 1] - off;
	float *g = x->w->grads + off, norm = 0;
	int ok = reply->len >= msg_bytes(len) && norm_arrived(reply);

	if (ok)
		memcpy(&norm, reply->data, sizeof(norm));
	for (size_t i = 0; i < len; i++)
		g[i] = ok && byte_arrived(reply, sizeof(float) + i) ?
		       norm * (float)(int8_t)reply->data[sizeof(float) + i] / (float)x->q->levels :
		       x->q->own[off + i];
}

static const struct emu_exchange_ops qs_ops = { qs_encode, qs_reduce, qs_apply };

static int qs_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct qsgd *q = state;
	struct ctx x = { w, q };

	for (int j = 0; j < w->n; j++) {
		size_t off = w->block_off[j];

		quantise(w, STREAM_WORKER + (uint32_t)w->id, j, q->levels, w->grads + off,
			 w->block_off[j + 1] - off, q->msg + q->first[j], q->own + off);
	}
	int rc = w->host->exchange(w, &qs_ops, &x, flags, flags_out);

	if (rc < 0)
		return rc;
	w->host->optimizer_step(w, q->opt);
	return 0;
}

static int qs_parts(void *state, struct emu_part parts[])
{
	struct qsgd *q = state;

	if (!q->nopt)
		return 0;
	parts[0] = (struct emu_part){ q->opt, q->nopt * sizeof(float) };
	return 1;
}

const struct emu_algo_plugin algo_table_qsgd = {
	.api = EMU_ALGO_API, .name = "qsgd", .init = qs_init, .step = qs_step,
	.state_parts = qs_parts, .free = qs_free,
};
