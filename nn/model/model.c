/* nn/model/model.c — a model's life: build the graph, allocate parameters on the backend
 * and their host mirrors, initialise them, plan and allocate the arena; the transfers
 * between mirrors and backend; free; the layer lookup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "nn/model/model_impl.h"

/* Points every node's buffers into the arena. */
static void resolve(struct nn_model *m, const struct nn_plan_out *p)
{
	float *a = m->exec->arena;
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

int nn_model_size(const char *name, const struct nn_input *in, size_t *nparams,
		  size_t *nstate, int *nlayers)
{
	struct nn_graph g;
	nn_graph_init(&g);
	int r = nn_models_build(&g, name, in);
	if (!r)
		r = g.err;
	*nparams = g.nparams;
	*nstate = g.nstate;
	if (nlayers)
		*nlayers = g.nlayers;
	nn_graph_free(&g);
	return r;
}

/* The backend's params, grads and state, their host mirrors (the same memory on a host
 * backend), and a device backend's input buffers. */
static int alloc_buffers(struct nn_model *m)
{
	struct nn_backend *be = m->be;
	const struct nn_ops *o = be->ops;
	struct nn_exec *e = m->exec;
	size_t P = m->nparams * sizeof(float), S = (m->nstate ? m->nstate : 1) * sizeof(float);
	size_t cap = (size_t)m->batch_cap;
	e->params = o->alloc(be, P);
	e->grads = o->alloc(be, P);
	e->state = o->alloc(be, S);
	if (!e->params || !e->grads || !e->state)
		return -ENOMEM;
	if (o->host) {
		m->params = e->params;
		m->grads = e->grads;
		m->state = e->state;
		return 0;
	}
	m->params = o->host_alloc(be, P);
	m->grads = o->host_alloc(be, P);
	m->state = o->host_alloc(be, S);
	if (m->in.T > 0)
		e->tokens_in = o->alloc(be, cap * m->in.T * sizeof(int32_t));
	else
		e->x = o->alloc(be, cap * m->in.C * m->in.H * m->in.W * sizeof(float));
	e->y = o->alloc(be, cap * 4);
	if (!m->params || !m->grads || !m->state || !(e->x || e->tokens_in) || !e->y)
		return -ENOMEM;
	return 0;
}

int nn_model_init(struct nn_model *m, const char *name, const struct nn_input *in,
		  struct nn_backend *be, int batch_cap, uint64_t seed)
{
	struct nn_graph g;
	struct nn_plan_out p;
	int r;

	memset(m, 0, sizeof(*m));
	nn_graph_init(&g);
	if (!name || !in || !be || !be->ops || batch_cap < 1)
		return -EINVAL;
	m->be = be;
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
	m->exec->host = malloc((size_t)batch_cap * sizeof(float));
	m->exec->computed = calloc((size_t)m->nlayers + 1, 1);
	if (!m->exec->host || !m->exec->computed)
		goto err;
	r = alloc_buffers(m);
	if (r)
		goto err;
	g.nodes = m->nodes;	/* borrowed for the initialiser */
	g.layers = m->layers;
	nn_model_init_params(&g, m->params, m->state, seed);
	g.nodes = NULL;
	g.layers = NULL;
	r = nn_model_to_device(m, NN_PARAMS | NN_STATE);
	if (r)
		goto err;

	r = nn_model_plan(m->nodes, m->nnodes, be, batch_cap, &p);
	if (r)
		goto err;
	r = -ENOMEM;
	m->exec->nslot = p.nslot;
	m->exec->slot_floats = p.slot_floats;
	m->exec->slot = calloc((size_t)p.nslot + 1, sizeof(float *));
	m->exec->arena = be->ops->alloc(be, p.arena_floats * sizeof(float));
	if (!m->exec->slot || !m->exec->arena)
		goto err;
	resolve(m, &p);
	return 0;
err:
	if (be && be->err)	/* the backend's own failure says more */
		r = be->err;
	nn_graph_free(&g);
	nn_model_free(m);
	return r;
}

void nn_model_free(struct nn_model *m)
{
	struct nn_exec *e = m->exec;
	if (e) {
		struct nn_backend *be = m->be;
		const struct nn_ops *o = be->ops;
		void *dev[] = { e->params, e->grads, e->state, e->arena, e->x, e->tokens_in, e->y };
		for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++)
			if (dev[i])
				o->free(be, dev[i]);
		if (!o->host) {
			void *mirror[] = { m->params, m->grads, m->state };
			for (size_t i = 0; i < sizeof(mirror) / sizeof(mirror[0]); i++)
				if (mirror[i])
					o->host_free(be, mirror[i]);
		}
		free(e->slot);
		free(e->host);
		free(e->computed);
		free(e);
	}
	free(m->nodes);
	free(m->layers);
	memset(m, 0, sizeof(*m));
}

int nn_model_to_host(struct nn_model *m, unsigned parts)
{
	struct nn_backend *be = m->be;
	const struct nn_ops *o = be->ops;
	struct nn_exec *e = m->exec;
	if (o->host)
		return be->err;
	if (parts & NN_PARAMS)
		o->download(be, m->params, e->params, m->nparams * sizeof(float));
	if (parts & NN_STATE)
		o->download(be, m->state, e->state, m->nstate * sizeof(float));
	if (parts & NN_GRADS)
		for (int l = 0; l < m->nlayers; l++) {
			const struct nn_layer *L = &m->layers[l];
			if (e->computed[l])
				o->download(be, m->grads + L->off, e->grads + L->off,
					    L->size * sizeof(float));
		}
	return be->err;
}

int nn_model_to_device(struct nn_model *m, unsigned parts)
{
	struct nn_backend *be = m->be;
	const struct nn_ops *o = be->ops;
	struct nn_exec *e = m->exec;
	if (parts & NN_GRADS)
		return -EINVAL;
	if (o->host)
		return be->err;
	if (parts & NN_PARAMS)
		o->upload(be, e->params, m->params, m->nparams * sizeof(float));
	if (parts & NN_STATE)
		o->upload(be, e->state, m->state, m->nstate * sizeof(float));
	return be->err;
}

int nn_model_logits(struct nn_model *m, float *out)
{
	struct nn_exec *e = m->exec;
	if (e->B < 1)
		return -EINVAL;
	return m->be->ops->download(m->be, out, e->logits,
				    (size_t)e->B * m->in.nclasses * sizeof(float));
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
