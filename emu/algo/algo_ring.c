/* emu/algo/algo_ring.c — synchronous SGD with NCCL's ring all-reduce, written against the
 * plugin interface (algo_plugin.h): the collective clusters run, beside emu's partitioned
 * one (allreduce), so that time-to-accuracy rows read against what they know.
 *
 * The gradient is cut into the n blocks of block_off.  Reduce-scatter, rounds r = 0 ..
 * n-2: worker i sends its running sum of block i - r to worker i + 1, which adds what
 * arrived into its own sum of that block; after n - 1 rounds worker i holds the whole sum
 * of block i + 1 and divides it by n.  All-gather, rounds n-1 .. 2n-3: each worker passes
 * the mean blocks on round the ring.  2(n-1) rounds, each worker sending 2(n-1)/n of the
 * gradient's bytes, as the partitioned exchange does, but in 2(n-1) latencies, not two.
 *
 * What a lost unit does: in the reduce-scatter its floats add nothing, so the sum of
 * those floats lacks every contribution the message carried (the r + 1 workers before
 * the sender), for every worker; in the all-gather the receiver has no mean there and
 * uses its own gradient ([ring] on_miss = own) or zero (on_miss = zero), and passes
 * that on: the workers after it in the ring take it for the mean.  One lost unit thus
 * reaches far more of the result than the partitioned exchange's, where it costs one
 * worker's contribution to one block or one worker's copy of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/algo/algo.h"

struct ringar {
	size_t nopt;
	int zero_missing;
	float *opt;		/* the optimiser's state */
	float *acc;		/* [nparams]: the reduce-scatter's running sums */
};

struct ctx {
	struct emu_worker *w;
	struct ringar *s;
};

static void ring_free(void *state)
{
	struct ringar *s = state;

	if (s) {
		free(s->opt);
		free(s->acc);
	}
	free(s);
}

static int ring_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	struct ringar *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->nopt = w->host->opt_floats(w);
	s->zero_missing = (int)w->host->key(w, "on_miss") == MISS_ZERO;
	s->opt = calloc(s->nopt ? s->nopt : 1, sizeof(float));
	s->acc = calloc(w->nparams ? w->nparams : 1, sizeof(float));
	if (!s->opt || !s->acc) {
		ring_free(s);
		return -ENOMEM;
	}
	*max_msg = algo_max_block(w) * sizeof(float);
	*state = s;
	return 0;
}

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

/* The block worker id sends in round r, and the one it receives (its predecessor's). */
static int block_sent(const struct emu_worker *w, int r)
{
	return r < w->n - 1 ? mod(w->id - r, w->n) : mod(w->id + 1 - (r - (w->n - 1)), w->n);
}

static int block_taken(const struct emu_worker *w, int r)
{
	return r < w->n - 1 ? mod(w->id - 1 - r, w->n) : mod(w->id - (r - (w->n - 1)), w->n);
}

static int ring_send(void *vctx, int r, struct emu_iov iov[])
{
	struct ctx *x = vctx;
	int b = block_sent(x->w, r);
	size_t off = x->w->block_off[b], len = x->w->block_off[b + 1] - off;
	const float *src = r < x->w->n - 1 ? x->s->acc : x->w->grads;

	iov[0] = (struct emu_iov){ src + off, len * sizeof(float) };
	return 1;
}

static void ring_take(void *vctx, int r, const struct emu_msg *m)
{
	struct ctx *x = vctx;
	struct emu_worker *w = x->w;
	int b = block_taken(w, r);
	size_t off = w->block_off[b], len = w->block_off[b + 1] - off;
	const float *in = (const float *)m->data;
	int whole = m->narrived == m->nunits && m->len >= len * sizeof(float);

	if (r < w->n - 1) {	/* reduce-scatter: add what arrived */
		float *acc = x->s->acc + off;

		for (size_t f = 0; f < len && m->narrived; f++)
			if (whole || w->host->float_arrived(m, f))
				acc[f] += in[f];
		if (r == w->n - 2) {	/* the whole sum of block id + 1: its mean */
			float inv = 1.0f / (float)w->n;	/* as allreduce's mean */

			for (size_t f = 0; f < len; f++)
				w->grads[off + f] = acc[f] * inv;
		}
		return;
	}
	float *g = w->grads + off;	/* all-gather: the mean where it arrived */

	for (size_t f = 0; f < len; f++)
		if (m->narrived && (whole || w->host->float_arrived(m, f)))
			g[f] = in[f];
		else if (x->s->zero_missing)
			g[f] = 0;
}

static const struct emu_ring_ops ring_ops = { ring_send, ring_take };

static int ring_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct ringar *s = state;
	struct ctx x = { w, s };

	memcpy(s->acc, w->grads, w->nparams * sizeof(float));
	int rc = w->host->ring(w, 2 * (w->n - 1), &ring_ops, &x, flags, flags_out);

	if (rc < 0)
		return rc;
	w->host->optimizer_step(w, s->opt);
	return 0;
}

static int ring_parts(void *state, struct emu_part parts[])
{
	struct ringar *s = state;

	if (!s->nopt)
		return 0;
	parts[0] = (struct emu_part){ s->opt, s->nopt * sizeof(float) };
	return 1;
}

const struct emu_algo_plugin algo_table_ring = {
	.api = EMU_ALGO_API, .name = "ring", .init = ring_init, .step = ring_step,
	.state_parts = ring_parts, .free = ring_free,
};
