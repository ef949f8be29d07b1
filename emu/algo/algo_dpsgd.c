/* emu/algo/algo_dpsgd.c — D-PSGD (Lian et al., NeurIPS 2017): decentralised SGD by gossip,
 * written against the plugin interface (algo_plugin.h) as a plugin from outside would be.
 *
 * Each step worker i sends its model to its neighbours in the graph ([dpsgd] graph: a
 * ring, a 2-D torus, or the exponential graph i +- 2^k) and nothing to the others; as
 * server i it averages, float by float, its own model and the neighbours' floats that
 * arrived (uniform weights 1 / (1 + arrived)), and then steps from that average with the
 * gradient it computed at its own model: x_i <- mean(x_i, x_j: j ~ i) - lr g_i(x_i), the
 * run's optimiser taking the step.  A lost unit only leaves that neighbour out of those
 * floats' average.  Each worker sends degree x the model's bytes a step (and empty
 * messages to the others), where all-reduce sends twice the model's bytes split over n.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/algo/algo_plugin.h"

enum graph { GRAPH_RING, GRAPH_TORUS, GRAPH_EXPONENTIAL };	/* cfg_graph_names' order */

struct dpsgd {
	size_t nparams, nopt;
	float *opt;		/* the optimiser's state */
	float *mix;		/* the average, written as server, used after the exchange */
	float *cnt;		/* per float: the models in its average */
	uint8_t *nbr;		/* [n]: j is a neighbour */
};

static void add_edge(uint8_t *nbr, int n, int i, int j)
{
	j = ((j % n) + n) % n;
	if (j != i)
		nbr[j] = 1;
}

static void neighbours(uint8_t *nbr, int n, int i, enum graph g)
{
	if (g == GRAPH_RING) {
		add_edge(nbr, n, i, i - 1);
		add_edge(nbr, n, i, i + 1);
	} else if (g == GRAPH_EXPONENTIAL) {
		for (int d = 1; d < n; d *= 2) {
			add_edge(nbr, n, i, i - d);
			add_edge(nbr, n, i, i + d);
		}
	} else {	/* rows x cols, rows the largest divisor of n up to sqrt(n) */
		int rows = 1;

		for (int r = 1; r * r <= n; r++)
			if (n % r == 0)
				rows = r;
		int cols = n / rows, r = i / cols, c = i % cols;

		add_edge(nbr, n, i, ((r + 1) % rows) * cols + c);
		add_edge(nbr, n, i, ((r + rows - 1) % rows) * cols + c);
		add_edge(nbr, n, i, r * cols + (c + 1) % cols);
		add_edge(nbr, n, i, r * cols + (c + cols - 1) % cols);
	}
}

static void dp_free(void *state)
{
	struct dpsgd *d = state;

	if (d) {
		free(d->opt);
		free(d->mix);
		free(d->cnt);
		free(d->nbr);
	}
	free(d);
}

static int dp_init(struct emu_worker *w, void **state, size_t *max_msg)
{
	struct dpsgd *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->nparams = w->nparams;
	d->nopt = w->host->opt_floats(w);
	d->opt = calloc(d->nopt ? d->nopt : 1, sizeof(float));
	d->mix = calloc(d->nparams ? d->nparams : 1, sizeof(float));
	d->cnt = calloc(d->nparams ? d->nparams : 1, sizeof(float));
	d->nbr = calloc((size_t)w->n, 1);
	if (!d->opt || !d->mix || !d->cnt || !d->nbr) {
		dp_free(d);
		return -ENOMEM;
	}
	neighbours(d->nbr, w->n, w->id, (enum graph)w->host->key(w, "graph"));
	*max_msg = d->nparams * sizeof(float);
	*state = d;
	return 0;
}

struct ctx {
	struct emu_worker *w;
	struct dpsgd *d;
};

static int dp_encode(void *vctx, int server, struct emu_iov iov[])
{
	struct ctx *x = vctx;

	if (server != x->w->id && !x->d->nbr[server])
		return 0;	/* not a neighbour: an empty message */
	iov[0] = (struct emu_iov){ x->w->params, x->d->nparams * sizeof(float) };
	return 1;
}

/* As server (this worker): the average of its model and its neighbours' arrived floats,
 * kept for after the exchange; the reply is empty. */
static size_t dp_reduce(void *vctx, int server, const struct emu_msg in[], uint8_t *reply,
			size_t cap)
{
	struct ctx *x = vctx;
	const struct emu_host *h = x->w->host;
	size_t np = x->d->nparams;
	float *mix = x->d->mix, *cnt = x->d->cnt;

	(void)server;
	(void)reply;
	(void)cap;
	memcpy(mix, x->w->params, np * sizeof(float));
	for (size_t f = 0; f < np; f++)
		cnt[f] = 1;
	for (int j = 0; j < x->w->n; j++) {	/* in worker order: the same sums everywhere */
		const struct emu_msg *m = &in[j];
		const float *v = (const float *)m->data;
		int whole = m->narrived == m->nunits;

		if (j == x->w->id || !x->d->nbr[j] || m->len < np * sizeof(float) || !m->narrived)
			continue;
		for (size_t f = 0; f < np; f++)
			if (whole || h->float_arrived(m, f)) {
				mix[f] += v[f];
				cnt[f] += 1;
			}
	}
	for (size_t f = 0; f < np; f++)
		mix[f] /= cnt[f];
	return 0;
}

static void dp_apply(void *vctx, int server, const struct emu_msg *reply)
{
	(void)vctx;
	(void)server;
	(void)reply;	/* every reply is empty: the average is this worker's own */
}

static const struct emu_exchange_ops dp_ops = { dp_encode, dp_reduce, dp_apply };

static int dp_step(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct dpsgd *d = state;
	struct ctx x = { w, d };
	int rc = w->host->exchange(w, &dp_ops, &x, flags, flags_out);

	if (rc < 0)
		return rc;
	memcpy(w->params, d->mix, d->nparams * sizeof(float));
	w->host->optimizer_step(w, d->opt);
	return 0;
}

static int dp_parts(void *state, struct emu_part parts[])
{
	struct dpsgd *d = state;

	if (!d->nopt)
		return 0;
	parts[0] = (struct emu_part){ d->opt, d->nopt * sizeof(float) };
	return 1;
}

const struct emu_algo_plugin algo_table_dpsgd = {
	.api = EMU_ALGO_API, .name = "dpsgd", .init = dp_init, .step = dp_step,
	.state_parts = dp_parts, .free = dp_free,
};
