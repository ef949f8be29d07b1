/* emu/algo/algo_hadamard.c — all-reduce through a randomized Hadamard transform, the idea
 * of OptiReduce (Warraich et al., NSDI 2025) for a lossy collective, written against the
 * plugin interface (algo_plugin.h).
 *
 * Each block of the gradient is cut into chunks of [hadamard] chunk floats (a power of
 * two; the last chunk of a block padded with zeros to the next power of two), and each
 * chunk is rotated, y = H D x / sqrt(m): D a diagonal of random signs the same on every
 * worker (keyed by the run's seed, the step, the block and the entry), H the m x m
 * Walsh-Hadamard matrix.  The server averages the rotated entries over the workers whose
 * entries arrived, as all-reduce does, and replies with the mean; a worker rotates back,
 * x = D H y / sqrt(m).  A reply's lost entry counts as zero before the rotation back, so
 * a lost packet becomes a small error spread over its whole chunk instead of a slice of
 * the gradient set to zero (all-reduce with on_miss = zero) or left to one's own
 * (on_miss = own).  The time bound of OptiReduce's collective is the unreliable
 * transport's deadline (net.timeout).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emu/algo/algo_plugin.h"

#define STREAM_SIGNS 0x300

struct hadamard {
	size_t nparams, nopt, chunk;
	float *opt;
	float *rot;		/* [total] the rotated gradient, block by block */
	float *sign;		/* [total] this step's random signs (D), block by block */
	size_t *first;		/* [n + 1] each block's first rotated entry */
};

/* Floats of block len after rotation: whole chunks, the last one padded. */
static size_t rotated_len(size_t len, size_t chunk)
{
	size_t whole = len / chunk * chunk, rest = len - whole, m = 1;

	while (rest && m < rest)
		m *= 2;
	return whole + (rest ? m : 0);
}

static void ha_free(void *state)
{
	struct hadamard *h = state;

	if (h) {
		free(h->opt);
		free(h->rot);
		free(h->sign);
		free(h->first);
	}
	free(h);
}

static int ha_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	struct hadamard *h = calloc(1, sizeof(*h));
	size_t biggest = 0;

	if (!h)
		return -ENOMEM;
	h->nparams = w->nparams;
	h->nopt = w->host->opt_floats(w);
	h->chunk = (size_t)w->host->key(w, "chunk");
	h->first = calloc((size_t)w->n + 1, sizeof(*h->first));
	if (!h->first || !h->chunk || (h->chunk & (h->chunk - 1))) {
		int rc = h->first ? -EINVAL : -ENOMEM;

		ha_free(h);
		return rc;
	}
	for (int j = 0; j < w->n; j++) {
		size_t r = rotated_len(w->block_off[j + 1] - w->block_off[j], h->chunk);

		h->first[j + 1] = h->first[j] + r;
		biggest = r > biggest ? r : biggest;
	}
	h->opt = calloc(h->nopt ? h->nopt : 1, sizeof(float));
	h->rot = calloc(h->first[w->n] ? h->first[w->n] : 1, sizeof(float));
	h->sign = calloc(h->first[w->n] ? h->first[w->n] : 1, sizeof(float));
	if (!h->opt || !h->rot || !h->sign) {
		ha_free(h);
		return -ENOMEM;
	}
	*max_msg = biggest * sizeof(float);
	*state = h;
	return 0;
}

/* In place: v = H v / sqrt(m), m a power of two (H H = m I: its own inverse then). */
static void fwht(float *v, size_t m)
{
	for (size_t len = 1; len < m; len *= 2)
		for (size_t i = 0; i < m; i += 2 * len)
			for (size_t k = i; k < i + len; k++) {
				float a = v[k], b = v[k + len];

				v[k] = a + b;
				v[k + len] = a - b;
			}
	float s = 1.0f / sqrtf((float)m);

	for (size_t k = 0; k < m; k++)
		v[k] *= s;
}

/* Block j: x (len floats) into out (rotated), or back (out into x) when back; sign: the
 * block's random signs. */
static void rotate(size_t chunk, const float *sign, float *x, size_t len, float *out, int back)
{
	size_t r = rotated_len(len, chunk);

	for (size_t c = 0; c < r; c += chunk) {
		size_t m = r - c < chunk ? r - c : chunk;

		if (!back) {
			for (size_t k = 0; k < m; k++)
				out[c + k] = c + k < len ? sign[c + k] * x[c + k] : 0;
			fwht(out + c, m);
		} else {
			fwht(out + c, m);
			for (size_t k = 0; k < m && c + k < len; k++)
				x[c + k] = sign[c + k] * out[c + k];
		}
	}
}

struct ctx {
	struct emu_worker *w;
	struct hadamard *h;
};

static int ha_encode(void *vctx, int server, struct emu_iov iov[])
{
	struct ctx *x = vctx;

	iov[0] = (struct emu_iov){ x->h->rot + x->h->first[server],
				   (x->h->first[server + 1] - x->h->first[server]) * sizeof(float) };
	return 1;
}

static size_t ha_reduce(void *vctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct ctx *x = vctx;
	size_t r = x->h->first[server + 1] - x->h->first[server];

	if (r * sizeof(float) > cap)
		return 0;
	x->w->host->mean_floats((float *)reply, in, x->w->n, r);
	return r * sizeof(float);
}

static void ha_apply(void *vctx, int server, const struct emu_msg *reply)
{
	struct ctx *x = vctx;
	size_t off = x->w->block_off[server], len = x->w->block_off[server + 1] - off;
	size_t r = x->h->first[server + 1] - x->h->first[server];
	float *y = x->h->rot + x->h->first[server];
	const float *mean = (const float *)reply->data;

	for (size_t k = 0; k < r; k++)	/* a lost entry is zero: spread by the rotation */
		y[k] = reply->len >= r * sizeof(float) && reply->narrived &&
		       (reply->narrived == reply->nunits || x->w->host->float_arrived(reply, k)) ?
		       mean[k] : 0;
	rotate(x->h->chunk, x->h->sign + x->h->first[server], x->w->grads + off, len, y, 1);
}

static const struct emu_exchange_ops ha_ops = { ha_encode, ha_reduce, ha_apply };

static int ha_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct hadamard *h = state;
	struct ctx x = { w, h };

	for (int j = 0; j < w->n; j++) {	/* D: the same signs on every worker */
		size_t off = w->block_off[j];

		for (size_t e = 0; e < h->first[j + 1] - h->first[j]; e++)
			h->sign[h->first[j] + e] = w->host->random(w, STREAM_SIGNS, (uint64_t)w->step,
								   (uint64_t)j << 26 | e) & 1 ? -1.0f : 1.0f;
		rotate(h->chunk, h->sign + h->first[j], w->grads + off, w->block_off[j + 1] - off,
		       h->rot + h->first[j], 0);
	}
	int rc = w->host->exchange(w, &ha_ops, &x, flags, flags_out);

	if (rc < 0)
		return rc;
	w->host->optimizer_step(w, h->opt);
	return 0;
}

static int ha_parts(void *state, struct emu_part parts[])
{
	struct hadamard *h = state;

	if (!h->nopt)
		return 0;
	parts[0] = (struct emu_part){ h->opt, h->nopt * sizeof(float) };
	return 1;
}

const struct emu_algo_plugin algo_table_hadamard = {
	.api = EMU_ALGO_API, .name = "hadamard", .init = ha_init, .step = ha_step,
	.state_parts = ha_parts, .free = ha_free,
};
