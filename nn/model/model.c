/* nn/model/model.c — a model's life: build the graph, allocate and initialise parameters,
 * plan and allocate the arena; free; the layer lookup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "nn/model/model_impl.h"

/* Points every node's buffers into the arena. */
static void resolve(struct nn_model *m, const struct nn_plan_out *p)
{
	float *a = m->arena;
	struct nn_exec *e = m->exec;
	for (int i = 0; i < m->nnodes; i++) {
		struct nn_node *n = &m->nodes[i];
		n->y = n->out != NN_NONE ? a + n->out : NULL;
	}
	e->ws = a + p->ws_off;
	e->zero = a + p->zero_off;
	for (int s = 0; s < e->nslot; s++)
		e->slot[s] = a + p->slot_off + (size_t)s * e->slot_floats;
}

int nn_model_init(struct nn_model *m, const char *name, const struct nn_input *in,
		  const struct nn_ops *ops, int batch_cap, uint64_t seed)
{
	struct nn_graph g;
	struct nn_plan_out p;
	float *hp = NULL, *hs = NULL;
	int r;

	memset(m, 0, sizeof(*m));
	nn_graph_init(&g);
	if (!name || !in || !ops || batch_cap < 1)
		return -EINVAL;
	m->ops = ops;
	m->in = *in;
	m->batch_cap = batch_cap;
	r = nn_models_build(&g, name, in);
	if (!r)
		r = g.err;
	if (r)
		goto err;
	m->nodes = g.nodes;
	m->nnodes = g.nnodes;
	m->layers = g.layers;
	m->nlayers = g.nlayers;
	m->nparams = g.nparams;
	m->nstate = g.nstate;
	g.nodes = NULL;
	g.layers = NULL;

	r = -ENOMEM;
	m->exec = calloc(1, sizeof(*m->exec));
	if (!m->exec)
		goto err;
	m->exec->host = malloc(2 * (size_t)batch_cap * sizeof(float));
	m->params = ops->alloc(m->nparams * sizeof(float));
	m->grads = ops->alloc(m->nparams * sizeof(float));
	m->state = ops->alloc((m->nstate ? m->nstate : 1) * sizeof(float));
	hp = malloc(m->nparams * sizeof(float));
	hs = malloc((m->nstate ? m->nstate : 1) * sizeof(float));
	if (!m->exec->host || !m->params || !m->grads || !m->state || !hp || !hs)
		goto err;
	g.nodes = m->nodes;	/* borrowed for the initialiser */
	g.layers = m->layers;
	nn_model_init_params(&g, hp, hs, seed);
	g.nodes = NULL;
	g.layers = NULL;
	ops->upload(m->params, hp, m->nparams * sizeof(float));
	ops->upload(m->state, hs, m->nstate * sizeof(float));

	r = nn_model_plan(m->nodes, m->nnodes, ops, batch_cap, &p);
	if (r)
		goto err;
	r = -ENOMEM;
	m->exec->nslot = p.nslot;
	m->exec->slot_floats = p.slot_floats;
	m->exec->slot = calloc((size_t)p.nslot + 1, sizeof(float *));
	m->arena = ops->alloc(p.arena_floats * sizeof(float));
	if (!m->exec->slot || !m->arena)
		goto err;
	resolve(m, &p);
	free(hp);
	free(hs);
	return 0;
err:
	free(hp);
	free(hs);
	nn_graph_free(&g);
	nn_model_free(m);
	return r;
}

void nn_model_free(struct nn_model *m)
{
	if (m->ops) {
		if (m->params)
			m->ops->free(m->params);
		if (m->grads)
			m->ops->free(m->grads);
		if (m->state)
			m->ops->free(m->state);
		if (m->arena)
			m->ops->free(m->arena);
	}
	if (m->exec) {
		free(m->exec->slot);
		free(m->exec->host);
		free(m->exec);
	}
	free(m->nodes);
	free(m->layers);
	memset(m, 0, sizeof(*m));
}

int nn_layer_of(const struct nn_model *m, size_t i)
{
	int lo = 0, hi = m->nlayers - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const struct nn_layer *l = &m->layers[mid];
		if (i < l->off)
			hi = mid - 1;
		else if (i >= l->off + l->size)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}
