/* nn/model/model_exec.c — forward and backward over the planned nodes.  No allocation, no
 * copies: every buffer was placed by nn/model_plan.c. */
#include <math.h>
#include "nn/model/model_impl.h"

#define BN_MOMENTUM 0.1f	/* PyTorch's defaults */
#define BN_EPS 1e-5f

static void conv_shape(struct nn_conv_shape *s, const struct nn_node *n,
		       const struct nn_node *x, int B)
{
	nn_conv_shape_init(s, B, x->C, x->H, x->W, n->K, n->k, n->stride, n->pad);
}

static void pool_shape(struct nn_pool_shape *s, const struct nn_node *n,
		       const struct nn_node *x, int B)
{
	nn_pool_shape_init(s, B, x->C, x->H, x->W, n->k, n->stride, n->pad);
}

/* Batch norm node n's forward into out: with res, relu(bn + res) (n->fuse_add: the
 * add and relu after it), else with its fused relu if any */
static void bn_forward(struct nn_model *m, const struct nn_node *n, float *out,
		       const float *res, int B, bool train)
{
	struct nn_backend *be = m->be;
	const struct nn_ops *o = be->ops;
	const float *P = m->exec->params, *x = m->nodes[n->in[0]].y;
	float *save = (float *)m->exec->arena + n->save, *st = m->exec->state + n->st;

	if (res)
		o->bn_add_relu_fwd(be, out, x, res, P + n->w, P + n->b, st, st + n->C, save,
				   save + n->C, B, n->C, n->H * n->W, BN_MOMENTUM, BN_EPS, train);
	else
		(n->fuse_relu ? o->bn_relu_fwd : o->bn_fwd)(be, out, x, P + n->w, P + n->b, st,
							     st + n->C, save, save + n->C, B,
							     n->C, n->H * n->W, BN_MOMENTUM,
							     BN_EPS, train);
}

static void forward_node(struct nn_model *m, struct nn_node *n, const float *x,
			 const int32_t *tokens, int B, bool train)
{
	struct nn_backend *be = m->be;
	const struct nn_ops *o = be->ops;
	const float *P = m->exec->params;
	float *arena = m->exec->arena;
	struct nn_node *a = n->in[0] >= 0 ? &m->nodes[n->in[0]] : NULL;
	size_t nb = (size_t)B * n->size;

	switch (n->kind) {
	case NN_INPUT:
		n->y = (float *)x;	/* never written: the input gets no gradient */
		break;
	case NN_FLATTEN:
		n->y = a->y;
		break;
	case NN_CONV: {
		struct nn_conv_shape s;
		conv_shape(&s, n, a, B);
		o->conv_fwd(be, n->y, a->y, P + n->w, n->b != NN_NONE ? P + n->b : NULL, &s,
			    m->exec->ws);
		break;
	}
	case NN_BN:
		if (!n->fuse_add)	/* else its add runs it */
			bn_forward(m, n, n->y, NULL, B, train);
		break;
	case NN_RELU:
		if (!n->fused)	/* else done by its producer, in place */
			o->relu_fwd(be, n->y, a->y, nb);
		break;
	case NN_MAXPOOL: {
		struct nn_pool_shape s;
		pool_shape(&s, n, a, B);
		o->maxpool_fwd(be, n->y, (int32_t *)(arena + n->save), a->y, &s);
		break;
	}
	case NN_AVGPOOL: {
		struct nn_pool_shape s;
		pool_shape(&s, n, a, B);
		o->avgpool_fwd(be, n->y, a->y, &s);
		break;
	}
	case NN_GAP:
		o->gap_fwd(be, n->y, a->y, B, a->C, a->H * a->W);
		break;
	case NN_LINEAR:
		o->linear_fwd(be, n->y, a->y, P + n->w, P + n->b, B, (int)a->size, n->C);
		break;
	case NN_ADD:
		if (a->fuse_add)
			bn_forward(m, a, n->y, m->nodes[n->in[1]].y, B, train);
		else
			(n->fuse_relu ? o->add_relu_fwd : o->add_fwd)(be, n->y, a->y,
								      m->nodes[n->in[1]].y, nb);
		break;
	case NN_EMBED:
		o->embed_fwd(be, n->y, tokens, P + n->w, B, n->T, n->D);
		break;
	case NN_LSTM: {
		float *bsum = arena + n->extra;
		o->add_fwd(be, bsum, P + n->b, P + n->b2, 4 * (size_t)n->Hd);
		o->lstm_fwd(be, n->y, arena + n->save, a->y, P + n->w,
			    P + n->w + 4 * (size_t)n->Hd * n->D, bsum, B, n->T, n->D, n->Hd);
		break;
	}
	}
}

/* Mean squared error over B predictions against host targets (a host loop; on a device
 * the predictions come down and their gradient goes up). */
static float mse(struct nn_model *m, float *dpred, const float *pred, const float *target,
		 int B)
{
	struct nn_backend *be = m->be;
	float *hp = m->exec->host;
	be->ops->download(be, hp, pred, (size_t)B * sizeof(float));
	double loss = 0;
	for (int i = 0; i < B; i++) {
		double d = (double)hp[i] - target[i];
		loss += d * d;
		hp[i] = (float)(2.0 * d / B);
	}
	if (dpred)
		be->ops->upload(be, dpred, hp, (size_t)B * sizeof(float));
	return (float)(loss / B);
}

/* Where the ops read the batch: the caller's host memory on a host backend, else the
 * model's device buffers, filled here. */
static void inputs_in(struct nn_model *m, const float **x, const int32_t **tokens,
		      const void **y, int B)
{
	struct nn_backend *be = m->be;
	struct nn_exec *e = m->exec;
	if (be->ops->host)
		return;
	if (*x) {
		be->ops->upload(be, e->x, *x,
				(size_t)B * m->in.C * m->in.H * m->in.W * sizeof(float));
		*x = e->x;
	}
	if (*tokens) {
		be->ops->upload(be, e->tokens_in, *tokens,
				(size_t)B * m->in.T * sizeof(int32_t));
		*tokens = e->tokens_in;
	}
	if (!m->in.regression) {	/* the loss reads labels on the backend, targets here */
		be->ops->upload(be, e->y, *y, (size_t)B * sizeof(int32_t));
		*y = e->y;
	}
}

float nn_forward(struct nn_model *m, const float *x, const int32_t *tokens,
		 const void *y, int B, bool train, int *correct)
{
	if (correct)
		*correct = 0;
	if (B < 1 || B > m->batch_cap)
		return NAN;
	inputs_in(m, &x, &tokens, &y, B);
	for (int i = 0; i < m->nnodes; i++)
		forward_node(m, &m->nodes[i], x, tokens, B, train);
	struct nn_node *last = &m->nodes[m->nnodes - 1];
	struct nn_exec *e = m->exec;
	float *dlogits = last->gslot >= 0 ? e->slot[last->gslot] : NULL;
	e->B = B;
	e->tokens = tokens;
	e->logits = last->y;
	float loss = m->in.regression ? mse(m, dlogits, last->y, y, B) :
		m->be->ops->xent_fwd_bwd(m->be, dlogits, last->y, y, B, m->in.nclasses, correct);
	return m->be->err ? NAN : loss;
}

void nn_model_mark_needg(struct nn_node *nodes, int nnodes, const uint8_t *need_wgrad)
{
	for (int i = 0; i < nnodes; i++) {
		struct nn_node *n = &nodes[i];
		n->needg = n->layer >= 0 && (!need_wgrad || need_wgrad[n->layer]);
		for (int j = 0; j < 2; j++)
			if (n->in[j] >= 0 && nodes[n->in[j]].needg)
				n->needg = true;
	}
}

/* The slot the op writes input j's gradient into, or NULL when nobody needs it. */
static float *din(struct nn_model *m, const struct nn_node *n, int j)
{
	if (n->in[j] < 0 || !m->nodes[n->in[j]].needg || n->dl[j].din < 0)
		return NULL;
	return m->exec->slot[n->dl[j].din];
}

static void backward_node(struct nn_model *m, struct nn_node *n, const uint8_t *need)
{
	struct nn_backend *be = m->be;
	const struct nn_ops *o = be->ops;
	struct nn_exec *e = m->exec;
	const float *P = e->params;
	const float *arena = e->arena;
	float *G = e->grads;
	int B = e->B;
	struct nn_node *a = n->in[0] >= 0 ? &m->nodes[n->in[0]] : NULL;
	const float *dout = e->slot[n->gslot];
	bool own = n->layer >= 0 && (!need || need[n->layer]);
	float *dw = own ? G + n->w : NULL;
	float *db = own && n->b != NN_NONE ? G + n->b : NULL;
	int summed = 0;		/* inputs [0, summed) got their gradient sum from the op */

	switch (n->kind) {
	case NN_INPUT:
	case NN_FLATTEN:
	case NN_ADD:
		break;		/* pass-through: the plan shares the slot */
	case NN_CONV: {
		struct nn_conv_shape s;
		const struct nn_delivery *d = &n->dl[0];
		conv_shape(&s, n, a, B);
		if (o->conv_bwd_add && d->acc_to >= 0 && a->needg) {
			/* the input's gradient summed as it is stored */
			o->conv_bwd_add(be, e->slot[d->acc_to], e->slot[d->acc_a], dw, db, dout,
					a->y, P + n->w, &s, e->ws);
			summed = 1;
		} else
			o->conv_bwd(be, din(m, n, 0), dw, db, dout, a->y, P + n->w, &s, e->ws);
		break;
	}
	case NN_BN: {
		const float *save = arena + n->save;
		if (n->fuse_relu)	/* dout is the relu's: the plan passed it through */
			o->bn_relu_bwd(be, din(m, n, 0), dw, db, dout, n->y, a->y, P + n->w,
				       save, save + n->C, B, n->C, n->H * n->W);
		else
			o->bn_bwd(be, din(m, n, 0), dw, db, dout, a->y, P + n->w, save,
				  save + n->C, B, n->C, n->H * n->W);
		break;
	}
	case NN_RELU:
		if (n->fused != 2)
			o->relu_bwd(be, din(m, n, 0), dout, n->y, (size_t)B * n->size);
		break;
	case NN_MAXPOOL: {
		struct nn_pool_shape s;
		pool_shape(&s, n, a, B);
		o->maxpool_bwd(be, din(m, n, 0), dout,
			       (const int32_t *)(arena + n->save), &s);
		break;
	}
	case NN_AVGPOOL: {
		struct nn_pool_shape s;
		pool_shape(&s, n, a, B);
		o->avgpool_bwd(be, din(m, n, 0), dout, &s);
		break;
	}
	case NN_GAP:
		o->gap_bwd(be, din(m, n, 0), dout, B, a->C, a->H * a->W);
		break;
	case NN_LINEAR:
		o->linear_bwd(be, din(m, n, 0), dw, db, dout, a->y, P + n->w, B, (int)a->size,
			      n->C);
		break;
	case NN_EMBED:
		if (own)
			o->embed_bwd(be, dw, dout, e->tokens, B, n->T, n->D, n->V);
		break;
	case NN_LSTM: {
		size_t G4 = 4 * (size_t)n->Hd;
		o->lstm_bwd(be, din(m, n, 0), dw, own ? dw + G4 * n->D : NULL, db, dout,
			    arena + n->save, a->y, P + n->w, P + n->w + G4 * n->D,
			    B, n->T, n->D, n->Hd);
		/* PyTorch keeps two biases that are always summed: same gradient */
		if (own)
			o->add_fwd(be, G + n->b2, G + n->b, e->zero, G4);
		break;
	}
	}
	for (int j = summed; j < 2; j++) {
		const struct nn_delivery *d = &n->dl[j];
		if (d->acc_to < 0 || !m->nodes[n->in[j]].needg)
			continue;
		o->add_fwd(be, e->slot[d->acc_to], e->slot[d->acc_a], e->slot[d->acc_b],
			   (size_t)B * m->nodes[n->in[j]].size);
	}
}

void nn_backward(struct nn_model *m, const uint8_t *need_wgrad)
{
	if (m->exec->B < 1)
		return;
	nn_model_mark_needg(m->nodes, m->nnodes, need_wgrad);
	for (int l = 0; l < m->nlayers; l++)
		m->exec->computed[l] = !need_wgrad || need_wgrad[l];
	for (int t = m->nnodes - 1; t >= 0; t--)
		if (m->nodes[t].needg)
			backward_node(m, &m->nodes[t], need_wgrad);
}
