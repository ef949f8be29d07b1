/* nn/model/model_plan.c — assigns every buffer of a model its place in the arena, once, at
 * init (see nn/model/model_impl.h for the scheme), so that a training step allocates nothing. */
#include <errno.h>
#include <stdlib.h>
#include "nn/model/model_impl.h"

/* Takes n floats from the arena, 64-byte aligned. */
static size_t take(size_t *top, size_t n)
{
	size_t off = *top;
	*top += (n + 15) & ~(size_t)15;
	return off;
}

/* Gradient slot pool of the simulated backward: reference counts. */
struct pool {
	int *ref;
	int n, cap;
};

static int pool_get(struct pool *p)
{
	for (int i = 0; i < p->n; i++)
		if (!p->ref[i]) {
			p->ref[i] = 1;
			return i;
		}
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 8;
		int *r = realloc(p->ref, (size_t)cap * sizeof(*r));
		if (!r)
			return -1;
		p->ref = r;
		p->cap = cap;
	}
	p->ref[p->n] = 1;
	return p->n++;
}

static void pool_put(struct pool *p, int s)
{
	p->ref[s]--;
}

/* Simulates backward from the last node down: who writes which slot, who sums. */
static int plan_grads(struct nn_node *nodes, int nnodes, struct pool *p)
{
	struct nn_node *last = &nodes[nnodes - 1];
	if (!last->can_grad)
		return 0;
	if ((last->gslot = pool_get(p)) < 0)
		return -ENOMEM;
	for (int t = nnodes - 1; t >= 0; t--) {
		struct nn_node *n = &nodes[t];
		if (!n->can_grad)
			continue;
		if (n->gslot < 0)
			return -EINVAL;	/* a dangling node: not a model */
		bool pass = n->kind == NN_ADD || n->kind == NN_FLATTEN || n->fused == 2;
		for (int j = 0; j < 2; j++) {
			if (n->in[j] < 0 || !nodes[n->in[j]].can_grad)
				continue;
			struct nn_node *src = &nodes[n->in[j]];
			struct nn_delivery *d = &n->dl[j];
			int c = n->gslot;
			if (!pass && (c = d->din = pool_get(p)) < 0)
				return -ENOMEM;
			if (src->gslot < 0) {
				src->gslot = c;
				if (pass)
					p->ref[c]++;
				continue;
			}
			d->acc_a = src->gslot;
			d->acc_b = c;
			if ((d->acc_to = pool_get(p)) < 0)
				return -ENOMEM;
			pool_put(p, src->gslot);
			if (!pass)
				pool_put(p, c);
			src->gslot = d->acc_to;
		}
		if (t != nnodes - 1)	/* dlogits stay: backward may run again */
			pool_put(p, n->gslot);
	}
	return 0;
}

/* The node that reads node i's output, when that is its only reader; else -1 */
static int sole_reader(const struct nn_node *nodes, int nnodes, int i)
{
	if (nodes[i].consumers != 1)
		return -1;
	for (int t = i + 1; t < nnodes; t++)
		if (nodes[t].in[0] == i || nodes[t].in[1] == i)
			return t;
	return -1;
}

/* Whether bn node i's only reader is an add, as its first input, whose only reader is
 * a relu that the add will apply (add_relu_fwd: the relu case below), on a backend with
 * bn_add_relu_fwd: a residual block's end in one pass */
static bool bn_fuses_into_add(const struct nn_node *nodes, int nnodes, int i,
			      const struct nn_ops *ops)
{
	int a = sole_reader(nodes, nnodes, i);
	int r = a >= 0 ? sole_reader(nodes, nnodes, a) : -1;

	return ops->bn_add_relu_fwd && ops->add_relu_fwd && a >= 0 &&
	       nodes[a].kind == NN_ADD && nodes[a].in[0] == i && r >= 0 && nodes[r].kind == NN_RELU;
}

int nn_model_plan(struct nn_node *nodes, int nnodes, struct nn_backend *be,
		  int batch_cap, struct nn_plan_out *o)
{
	const struct nn_ops *ops = be->ops;
	size_t top = 0, ws = 0, zero = 0, slot = 0;
	size_t cap = (size_t)batch_cap;
	for (int i = 0; i < nnodes; i++) {
		struct nn_node *n = &nodes[i];
		const struct nn_node *x = n->in[0] >= 0 ? &nodes[n->in[0]] : NULL;
		n->can_grad = n->layer >= 0;
		for (int j = 0; j < 2; j++)
			if (n->in[j] >= 0 && nodes[n->in[j]].can_grad)
				n->can_grad = true;
		n->out = n->save = n->extra = NN_NONE;
		n->fuse_relu = false;
		n->fused = 0;
		n->fuse_add = false;
		switch (n->kind) {
		case NN_INPUT:
		case NN_FLATTEN:
			break;
		case NN_RELU:
			/* in place when nobody else reads x's output: no backward reads its own
			 * output but relu's (conv, bn, linear read their input, pools their
			 * argmax, add nothing); never over the caller's input or a view */
			if (x->consumers == 1 && x->kind != NN_INPUT && x->kind != NN_FLATTEN &&
			    x->kind != NN_RELU) {
				n->out = x->out;
				/* x's only reader is this relu: x may apply it at once */
				if (x->kind == NN_BN && ops->bn_relu_fwd && ops->bn_relu_bwd)
					n->fused = 2;
				else if (x->kind == NN_ADD && ops->add_relu_fwd)
					n->fused = 1;
				nodes[n->in[0]].fuse_relu = n->fused != 0;
			} else
				n->out = take(&top, cap * n->size);
			break;
		case NN_CONV: {
			struct nn_conv_shape s;
			nn_conv_shape_init(&s, batch_cap, x->C, x->H, x->W, n->K, n->k, n->stride,
					   n->pad);
			size_t f = ops->conv_ws_floats(be, &s);
			ws = f > ws ? f : ws;
			n->out = take(&top, cap * n->size);
			break;
		}
		case NN_BN:
			n->fuse_add = bn_fuses_into_add(nodes, nnodes, i, ops);
			if (!n->fuse_add)
				n->out = take(&top, cap * n->size);
			n->save = take(&top, 2 * (size_t)n->C);
			break;
		case NN_MAXPOOL:
			n->out = take(&top, cap * n->size);
			n->save = take(&top, cap * n->size);	/* int32 argmax */
			break;
		case NN_LSTM:
			n->out = take(&top, cap * n->size);
			n->save = take(&top, nn_lstm_cache_floats(batch_cap, n->T, n->Hd));
			n->extra = take(&top, 4 * (size_t)n->Hd);
			zero = 4 * (size_t)n->Hd > zero ? 4 * (size_t)n->Hd : zero;
			break;
		default:
			n->out = take(&top, cap * n->size);
			break;
		}
		if (n->can_grad && cap * n->size > slot)
			slot = cap * n->size;
	}
	o->ws_off = take(&top, ws);
	o->zero_off = take(&top, zero);
	o->slot_floats = (slot + 15) & ~(size_t)15;

	struct pool p = {0};
	int r = plan_grads(nodes, nnodes, &p);
	o->nslot = p.n;
	free(p.ref);
	if (r)
		return r;
	o->slot_off = take(&top, (size_t)o->nslot * o->slot_floats);
	o->arena_floats = top;
	return 0;
}
