/* nn/model/model_flops.c — FLOPs of a step: 2 per multiply-add of conv, linear and lstm
 * (the matrix products that dominate); elementwise ops, pooling, batch norm, the
 * embedding lookup and the loss are not counted. */
#include <math.h>
#include <stdlib.h>
#include "nn/model/model_impl.h"

/* Multiply-adds x 2 of one forward of node n (the same for each backward product). */
static double fwd(const struct nn_node *nodes, const struct nn_node *n, int B)
{
	switch (n->kind) {
	case NN_CONV: {
		const struct nn_node *x = &nodes[n->in[0]];
		return 2.0 * B * n->size * x->C * n->k * n->k;
	}
	case NN_LINEAR:
		return 2.0 * B * n->C * nodes[n->in[0]].size;
	case NN_LSTM:
		return 2.0 * B * n->T * 4.0 * n->Hd * (n->D + n->Hd);
	default:
		return 0;
	}
}

double nn_flops(const struct nn_model *m, int B, bool backward, const uint8_t *need_wgrad)
{
	double f = 0;
	for (int i = 0; i < m->nnodes; i++)
		f += fwd(m->nodes, &m->nodes[i], B);
	if (!backward)
		return f;
	/* which nodes run in backward: a copy of nn_model_mark_needg on a private array,
	 * since the model is const here */
	bool *needg = malloc((size_t)m->nnodes * sizeof(*needg));
	if (!needg)
		return NAN;
	for (int i = 0; i < m->nnodes; i++) {
		const struct nn_node *n = &m->nodes[i];
		bool own = n->layer >= 0 && (!need_wgrad || need_wgrad[n->layer]);
		bool din = n->in[0] >= 0 && needg[n->in[0]];
		needg[i] = own || din || (n->in[1] >= 0 && needg[n->in[1]]);
		if (!needg[i])
			continue;
		double one = fwd(m->nodes, n, B);
		if (n->kind == NN_LSTM) {
			/* the recurrence through wh runs whenever lstm backward runs */
			double rec = 2.0 * B * n->T * 4.0 * n->Hd * n->Hd;
			double x = 2.0 * B * n->T * 4.0 * n->Hd * n->D;
			f += rec + (own ? one : 0) + (din ? x : 0);
		} else {
			f += (own ? one : 0) + (din ? one : 0);
		}
	}
	free(needg);
	return f;
}
