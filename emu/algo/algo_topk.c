/* emu/algo/algo_topk.c — top-k sparsification with error feedback (Stich et al., NeurIPS
 * 2018; Karimireddy et al., ICML 2019), written against the plugin interface
 * (algo_plugin.h).
 *
 * Each step every worker adds its gradient to its error e (error_feedback = true) and,
 * for each server's block, sends the k entries of largest magnitude (k = fraction of the
 * block, at least one; ties to the lower index) as (index, value) pairs; what it sent
 * leaves e.  Without error feedback the k largest of the gradient itself go, the rest is
 * dropped.  Server j sums the pairs that arrived into the block and divides by n (an
 * entry a worker did not send counts as zero) and replies with the entries it touched,
 * in index order, as pairs (or the whole block where that is shorter).  A worker's
 * gradient is that sparse mean; where the reply was lost entirely, its own pairs over n.
 * The run's optimiser then steps.  Each worker selects its own entries, so the replies
 * carry the union of the workers' choices.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/algo/algo_plugin.h"

#define DENSE UINT32_MAX	/* a reply's count word: the block follows whole */

struct pair {
	uint32_t idx;
	float val;
};

struct topk {
	size_t nparams, nopt, maxlen;
	int ef;
	float *err;		/* [nparams] error feedback */
	float *opt;
	struct pair *sent;	/* [total] this step's pairs, block by block */
	size_t *first;		/* [n + 1] each block's first pair */
	float *mag;		/* [maxlen] scratch: magnitudes */
	float *acc;		/* [maxlen] server scratch: the block's sum */
	uint8_t *touched;	/* [maxlen] server scratch */
};

static void tk_free(void *state)
{
	struct topk *t = state;

	if (t) {
		free(t->err);
		free(t->opt);
		free(t->sent);
		free(t->first);
		free(t->mag);
		free(t->acc);
		free(t->touched);
	}
	free(t);
}

static size_t reply_bytes(size_t len, size_t pairs)
{
	size_t sparse = sizeof(uint32_t) + pairs * sizeof(struct pair);
	size_t dense = sizeof(uint32_t) + len * sizeof(float);

	return sparse < dense ? sparse : dense;
}

static int tk_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	struct topk *t = calloc(1, sizeof(*t));
	double fraction = w->host->key(w, "fraction");
	size_t biggest = 0;

	if (!t)
		return -ENOMEM;
	t->nparams = w->nparams;
	t->nopt = w->host->opt_floats(w);
	t->ef = w->host->key(w, "error_feedback") != 0;
	t->first = calloc((size_t)w->n + 1, sizeof(*t->first));
	if (!t->first) {
		tk_free(t);
		return -ENOMEM;
	}
	for (int j = 0; j < w->n; j++) {
		size_t len = w->block_off[j + 1] - w->block_off[j];
		size_t k = len ? (size_t)(fraction * (double)len + 0.999999) : 0;

		k = len && k < 1 ? 1 : k > len ? len : k;
		t->first[j + 1] = t->first[j] + k;
		t->maxlen = len > t->maxlen ? len : t->maxlen;
		biggest = k * sizeof(struct pair) > biggest ? k * sizeof(struct pair) : biggest;
		size_t r = reply_bytes(len, (size_t)w->n * k);

		biggest = r > biggest ? r : biggest;
	}
	t->err = calloc(t->nparams ? t->nparams : 1, sizeof(float));
	t->opt = calloc(t->nopt ? t->nopt : 1, sizeof(float));
	t->sent = calloc(t->first[w->n] ? t->first[w->n] : 1, sizeof(*t->sent));
	t->mag = calloc(t->maxlen ? t->maxlen : 1, sizeof(float));
	t->acc = calloc(t->maxlen ? t->maxlen : 1, sizeof(float));
	t->touched = calloc(t->maxlen ? t->maxlen : 1, 1);
	if (!t->err || !t->opt || !t->sent || !t->mag || !t->acc || !t->touched) {
		tk_free(t);
		return -ENOMEM;
	}
	*max_msg = biggest;
	*state = t;
	return 0;
}

static float magnitude(float v)
{
	return v < 0 ? -v : v;
}

/* The k-th largest of m[0, n), 1 <= k <= n (m is reordered): quickselect with a
 * three-way partition around the median of three, O(n) on the average, deterministic. */
static float kth_largest(float *m, size_t n, size_t k)
{
	long lo = 0, hi = (long)n - 1, want = (long)k - 1;

	while (lo < hi) {
		float a = m[lo], b = m[lo + (hi - lo) / 2], c = m[hi];
		float p = a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
		long lt = lo, i = lo, gt = hi;

		while (i <= gt) {	/* [lo, lt) > p, [lt, i) == p, (gt, hi] < p */
			float v = m[i];

			if (v > p) {
				m[i++] = m[lt];
				m[lt++] = v;
			} else if (v < p) {
				m[i] = m[gt];
				m[gt--] = v;
			} else {
				i++;
			}
		}
		if (want < lt)
			hi = lt - 1;
		else if (want > gt)
			lo = gt + 1;
		else
			return p;
	}
	return m[lo];
}

/* Block j's k pairs from v (the error or the gradient): the entries above the k-th
 * largest magnitude, then those equal to it from the lowest index, in index order. */
static void select_block(struct topk *t, const float *v, size_t len, struct pair *out, size_t k)
{
	size_t above = 0, n = 0;

	for (size_t i = 0; i < len; i++)
		t->mag[i] = magnitude(v[i]);
	float thr = kth_largest(t->mag, len, k);

	for (size_t i = 0; i < len; i++)
		above += magnitude(v[i]) > thr;
	size_t ties = k - above;

	for (size_t i = 0; i < len && n < k; i++) {
		float m = magnitude(v[i]);

		if (m > thr || (m == thr && ties)) {
			ties -= m == thr;
			out[n++] = (struct pair){ (uint32_t)i, v[i] };
		}
	}
}

struct ctx {
	struct emu_worker *w;
	struct topk *t;
};

static int tk_encode(void *vctx, int server, struct emu_iov iov[])
{
	struct ctx *x = vctx;
	size_t k = x->t->first[server + 1] - x->t->first[server];

	iov[0] = (struct emu_iov){ x->t->sent + x->t->first[server], k * sizeof(struct pair) };
	return 1;
}

static int pair_arrived(const struct emu_worker *w, const struct emu_msg *m, size_t i)
{
	return m->narrived == m->nunits ||
	       (w->host->float_arrived(m, 2 * i) && w->host->float_arrived(m, 2 * i + 1));
}

static size_t tk_reduce(void *vctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct ctx *x = vctx;
	struct topk *t = x->t;
	size_t len = x->w->block_off[server + 1] - x->w->block_off[server], npairs = 0;

	memset(t->acc, 0, len * sizeof(float));
	memset(t->touched, 0, len);
	for (int j = 0; j < x->w->n; j++) {	/* in worker order: the same sums everywhere */
		const struct pair *p = (const struct pair *)in[j].data;
		size_t np = in[j].len / sizeof(struct pair);

		if (!in[j].narrived)
			continue;
		for (size_t i = 0; i < np; i++)
			if (p[i].idx < len && pair_arrived(x->w, &in[j], i)) {
				t->acc[p[i].idx] += p[i].val;
				npairs += !t->touched[p[i].idx];
				t->touched[p[i].idx] = 1;
			}
	}
	size_t bytes = reply_bytes(len, npairs);
	uint32_t *count = (uint32_t *)reply;

	if (bytes > cap)
		return 0;
	if (bytes == sizeof(uint32_t) + len * sizeof(float)) {
		*count = DENSE;
		for (size_t i = 0; i < len; i++)
			((float *)(count + 1))[i] = t->acc[i] / (float)x->w->n;
		return bytes;
	}
	struct pair *out = (struct pair *)(count + 1);

	*count = (uint32_t)npairs;
	for (size_t i = 0, n = 0; i < len; i++)
		if (t->touched[i])
			out[n++] = (struct pair){ (uint32_t)i, t->acc[i] / (float)x->w->n };
	return bytes;
}

static void tk_apply(void *vctx, int server, const struct emu_msg *reply)
{
	struct ctx *x = vctx;
	struct topk *t = x->t;
	size_t off = x->w->block_off[server], len = x->w->block_off[server + 1] - off;
	float *g = x->w->grads + off;
	const uint32_t *count = (const uint32_t *)reply->data;

	memset(g, 0, len * sizeof(float));
	if (!reply->narrived || reply->len < sizeof(uint32_t) ||
	    !x->w->host->float_arrived(reply, 0)) {	/* lost: one's own share */
		for (size_t i = t->first[server]; i < t->first[server + 1]; i++)
			g[t->sent[i].idx] = t->sent[i].val / (float)x->w->n;
		return;
	}
	if (*count == DENSE) {
		for (size_t i = 0; i < len && (i + 2) * sizeof(float) <= reply->len; i++)
			if (x->w->host->float_arrived(reply, i + 1))
				g[i] = ((const float *)(count + 1))[i];
		return;
	}
	const struct pair *p = (const struct pair *)(count + 1);

	for (size_t i = 0; i < *count && sizeof(uint32_t) + (i + 1) * sizeof(*p) <= reply->len; i++)
		if (x->w->host->float_arrived(reply, 1 + 2 * i) &&
		    x->w->host->float_arrived(reply, 2 + 2 * i) && p[i].idx < len)
			g[p[i].idx] = p[i].val;
}

static const struct emu_exchange_ops tk_ops = { tk_encode, tk_reduce, tk_apply };

static int tk_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct topk *t = state;
	struct ctx x = { w, t };

	if (t->ef)
		for (size_t i = 0; i < t->nparams; i++)
			t->err[i] += w->grads[i];
	for (int j = 0; j < w->n; j++) {
		size_t off = w->block_off[j], len = w->block_off[j + 1] - off;
		size_t k = t->first[j + 1] - t->first[j];
		struct pair *out = t->sent + t->first[j];

		if (!k)
			continue;
		select_block(t, (t->ef ? t->err : w->grads) + off, len, out, k);
		if (t->ef)
			for (size_t i = 0; i < k; i++)
				t->err[off + out[i].idx] = 0;	/* sent: it leaves the error */
	}
	int rc = w->host->exchange(w, &tk_ops, &x, flags, flags_out);

	if (rc < 0)
		return rc;
	w->host->optimizer_step(w, t->opt);
	return 0;
}

static int tk_parts(void *state, struct emu_part parts[])
{
	struct topk *t = state;
	int k = 0;

	if (t->ef)
		parts[k++] = (struct emu_part){ t->err, t->nparams * sizeof(float) };
	if (t->nopt)
		parts[k++] = (struct emu_part){ t->opt, t->nopt * sizeof(float) };
	return k;
}

const struct emu_algo_plugin algo_table_topk = {
	.api = EMU_ALGO_API, .name = "topk", .init = tk_init, .step = tk_step,
	.state_parts = tk_parts, .free = tk_free,
};
