/* nn/model/model_graph.c — the builder: appends nodes in topological order, infers shapes,
 * lays parameters out in the order PyTorch registers them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/model/model_impl.h"

void nn_graph_init(struct nn_graph *g)
{
	memset(g, 0, sizeof(*g));
}

void nn_graph_free(struct nn_graph *g)
{
	free(g->nodes);
	free(g->layers);
	memset(g, 0, sizeof(*g));
}

static int fail(struct nn_graph *g, int err)
{
	if (!g->err)
		g->err = err;
	return -1;
}

static bool valid(const struct nn_graph *g, int i)
{
	return i >= 0 && i < g->nnodes;
}

/* Appends a node with output shape (C,H,W); its parameters follow later. */
static struct nn_node *push(struct nn_graph *g, enum nn_kind kind, int in0, int in1,
			    int C, int H, int W)
{
	if (g->err)
		return NULL;
	if (C < 1 || H < 1 || W < 1) {
		fail(g, -EINVAL);
		return NULL;
	}
	if (g->nnodes == g->cap) {
		int cap = g->cap ? 2 * g->cap : 32;
		struct nn_node *n = realloc(g->nodes, (size_t)cap * sizeof(*n));
		if (!n) {
			fail(g, -ENOMEM);
			return NULL;
		}
		g->nodes = n;
		g->cap = cap;
	}
	struct nn_node *n = &g->nodes[g->nnodes++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->in[0] = in0;
	n->in[1] = in1;
	n->C = C;
	n->H = H;
	n->W = W;
	n->size = (size_t)C * H * W;
	n->layer = -1;
	n->w = n->b = n->b2 = NN_NONE;
	n->st = NN_NONE;
	n->gslot = -1;
	for (int j = 0; j < 2; j++) {
		n->dl[j].din = -1;
		n->dl[j].acc_a = n->dl[j].acc_b = n->dl[j].acc_to = -1;
	}
	if (in0 >= 0)
		g->nodes[in0].consumers++;
	if (in1 >= 0)
		g->nodes[in1].consumers++;
	return n;
}

/* Gives the last node a layer of `size` parameters named `name`. */
static int add_layer(struct nn_graph *g, const char *name, size_t size)
{
	if (g->nlayers == g->lcap) {
		int cap = g->lcap ? 2 * g->lcap : 32;
		struct nn_layer *l = realloc(g->layers, (size_t)cap * sizeof(*l));
		if (!l)
			return fail(g, -ENOMEM);
		g->layers = l;
		g->lcap = cap;
	}
	struct nn_layer *l = &g->layers[g->nlayers];
	memset(l, 0, sizeof(*l));
	if (snprintf(l->name, sizeof(l->name), "%s", name) >= (int)sizeof(l->name))
		return fail(g, -EINVAL);
	l->off = g->nparams;
	l->size = size;
	l->node = g->nnodes - 1;
	g->nodes[l->node].layer = g->nlayers++;
	g->nparams += size;
	return 0;
}

int nn_g_input(struct nn_graph *g, int C, int H, int W)
{
	if (g->nnodes)
		return fail(g, -EINVAL);
	return push(g, NN_INPUT, -1, -1, C, H, W) ? g->nnodes - 1 : -1;
}

int nn_g_conv(struct nn_graph *g, int in, int K, int k, int stride, int pad, bool bias,
	      const char *name)
{
	if (!valid(g, in) || k < 1 || stride < 1 || pad < 0)
		return fail(g, -EINVAL);
	const struct nn_node *x = &g->nodes[in];
	int OH = (x->H + 2 * pad - k) / stride + 1, OW = (x->W + 2 * pad - k) / stride + 1;
	if (x->H + 2 * pad < k || x->W + 2 * pad < k)
		return fail(g, -EINVAL);
	int C = x->C;
	struct nn_node *n = push(g, NN_CONV, in, -1, K, OH, OW);
	if (!n)
		return -1;
	n->K = K;
	n->k = k;
	n->stride = stride;
	n->pad = pad;
	size_t nw = (size_t)K * C * k * k;
	n->w = g->nparams;
	if (bias)
		n->b = g->nparams + nw;
	return add_layer(g, name, nw + (bias ? (size_t)K : 0)) ? -1 : g->nnodes - 1;
}

int nn_g_bn(struct nn_graph *g, int in, const char *name)
{
	if (!valid(g, in))
		return fail(g, -EINVAL);
	const struct nn_node *x = &g->nodes[in];
	struct nn_node *n = push(g, NN_BN, in, -1, x->C, x->H, x->W);
	if (!n)
		return -1;
	n->w = g->nparams;
	n->b = g->nparams + (size_t)n->C;
	n->st = g->nstate;
	g->nstate += 2 * (size_t)n->C;
	return add_layer(g, name, 2 * (size_t)n->C) ? -1 : g->nnodes - 1;
}

int nn_g_relu(struct nn_graph *g, int in)
{
	if (!valid(g, in))
		return fail(g, -EINVAL);
	const struct nn_node *x = &g->nodes[in];
	return push(g, NN_RELU, in, -1, x->C, x->H, x->W) ? g->nnodes - 1 : -1;
}

static int pool(struct nn_graph *g, enum nn_kind kind, int in, int k, int stride)
{
	if (!valid(g, in) || k < 1 || stride < 1)
		return fail(g, -EINVAL);
	const struct nn_node *x = &g->nodes[in];
	if (x->H < k || x->W < k)
		return fail(g, -EINVAL);
	struct nn_node *n = push(g, kind, in, -1, x->C, (x->H - k) / stride + 1,
				 (x->W - k) / stride + 1);
	if (!n)
		return -1;
	n->k = k;
	n->stride = stride;
	return g->nnodes - 1;
}

int nn_g_maxpool(struct nn_graph *g, int in, int k, int stride)
{
	return pool(g, NN_MAXPOOL, in, k, stride);
}

int nn_g_avgpool(struct nn_graph *g, int in, int k, int stride)
{
	return pool(g, NN_AVGPOOL, in, k, stride);
}

int nn_g_gap(struct nn_graph *g, int in)
{
	if (!valid(g, in))
		return fail(g, -EINVAL);
	return push(g, NN_GAP, in, -1, g->nodes[in].C, 1, 1) ? g->nnodes - 1 : -1;
}

int nn_g_linear(struct nn_graph *g, int in, int out, const char *name)
{
	if (!valid(g, in))
		return fail(g, -EINVAL);
	size_t fan_in = g->nodes[in].size;
	struct nn_node *n = push(g, NN_LINEAR, in, -1, out, 1, 1);
	if (!n)
		return -1;
	n->w = g->nparams;
	n->b = g->nparams + fan_in * (size_t)out;
	return add_layer(g, name, (fan_in + 1) * (size_t)out) ? -1 : g->nnodes - 1;
}

int nn_g_add(struct nn_graph *g, int a, int b)
{
	if (!valid(g, a) || !valid(g, b))
		return fail(g, -EINVAL);
	const struct nn_node *x = &g->nodes[a], *z = &g->nodes[b];
	if (x->C != z->C || x->H != z->H || x->W != z->W)
		return fail(g, -EINVAL);
	return push(g, NN_ADD, a, b, x->C, x->H, x->W) ? g->nnodes - 1 : -1;
}

int nn_g_flatten(struct nn_graph *g, int in)
{
	if (!valid(g, in))
		return fail(g, -EINVAL);
	size_t size = g->nodes[in].size;
	if (size > (size_t)INT32_MAX)
		return fail(g, -EINVAL);
	return push(g, NN_FLATTEN, in, -1, (int)size, 1, 1) ? g->nnodes - 1 : -1;
}

int nn_g_embed(struct nn_graph *g, int T, int V, int D, const char *name)
{
	if (g->nnodes || V < 1)
		return fail(g, -EINVAL);
	struct nn_node *n = push(g, NN_EMBED, -1, -1, T, D, 1);
	if (!n)
		return -1;
	n->T = T;
	n->D = D;
	n->V = V;
	n->w = g->nparams;
	return add_layer(g, name, (size_t)V * D) ? -1 : g->nnodes - 1;
}

int nn_g_lstm(struct nn_graph *g, int in, int Hd, const char *name)
{
	if (!valid(g, in) || g->nodes[in].kind != NN_EMBED)
		return fail(g, -EINVAL);
	int T = g->nodes[in].T, D = g->nodes[in].D;
	struct nn_node *n = push(g, NN_LSTM, in, -1, Hd, 1, 1);
	if (!n)
		return -1;
	n->T = T;
	n->D = D;
	n->Hd = Hd;
	size_t G = 4 * (size_t)Hd;
	n->w = g->nparams;
	n->b = n->w + G * D + G * Hd;
	n->b2 = n->b + G;
	return add_layer(g, name, G * D + G * Hd + 2 * G) ? -1 : g->nnodes - 1;
}
