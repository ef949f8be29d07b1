/* nn/model/model_impl.h — private to nn/model*.c and nn/models*.c: the node graph, the
 * builder the model files use, and the execution plan (arena offsets, gradient slots).
 *
 * Memory plan (nn/model/model_plan.c), all in one arena, offsets in floats:
 * - every node that is not a view owns an output buffer of batch_cap * size floats; the
 *   input node is the caller's x, flatten is its input's buffer, and a relu whose input
 *   has no other consumer runs in place (conv, bn and linear backward need their input,
 *   add backward nothing, so the overwritten value is never needed); such a relu after
 *   bn or add is fused into it when the backend has the fused op (see fuse_relu), and
 *   a bn into the add and relu that end a residual block (see fuse_add);
 * - output gradients live in a small pool of equal slots, assigned once at init by
 *   simulating the backward pass with reference counts: add and flatten pass their
 *   gradient through by sharing the slot, a node with several consumers sums their
 *   contributions into a fresh slot (copy-on-write, never in place);
 * - per node scratch (bn saved statistics, maxpool argmax, lstm cache), one conv
 *   workspace (the largest), and a zero vector.
 */
#ifndef NN_MODEL_IMPL_H
#define NN_MODEL_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "nn/model.h"

enum nn_kind {
	NN_INPUT, NN_CONV, NN_BN, NN_RELU, NN_MAXPOOL, NN_AVGPOOL, NN_GAP, NN_LINEAR,
	NN_ADD, NN_FLATTEN, NN_EMBED, NN_LSTM,
};

#define NN_NONE ((size_t)-1)

/* How one input's gradient is delivered in backward (plan). */
struct nn_delivery {
	int din;		/* slot the op writes the input gradient into; -1: pass-through */
	int acc_a, acc_b, acc_to;	/* acc_to = acc_a + acc_b after the op; -1: none */
};

struct nn_node {
	enum nn_kind kind;
	int in[2];		/* producers, -1: none */
	int C, H, W;		/* output per sample (embed: C = T, H = D) */
	size_t size;		/* C*H*W */
	int layer;		/* -1: no parameters */
	size_t w, b, b2;	/* parameter offsets (bn: gamma, beta; lstm: wx, wh at w + 4Hd*D,
				 * bias_ih at b, bias_hh at b2); NN_NONE: absent */
	int K, k, stride, pad;	/* conv, pools */
	int T, D, Hd, V;	/* embed, lstm */
	size_t st;		/* bn: running mean at state + st, var at + C */
	bool can_grad;		/* some parameter at or above this node (plan) */
	int consumers;

	/* plan: arena offsets (floats) */
	size_t out, save, extra;	/* extra: lstm bias sum */
	int gslot;		/* slot holding the gradient of the output in backward */
	/* fusions (plan; when the backend has the fused op): a bn or add followed by an
	 * in-place relu applies the relu itself (fuse_relu); that relu then does nothing
	 * in forward (fused = 1), and after a bn nothing in backward either (fused = 2:
	 * its gradient passes through, bn_relu_bwd masks it) */
	bool fuse_relu;
	int fused;
	/* a bn whose only reader is an add (its first input) that a relu is fused into:
	 * the add runs the three as bn_add_relu_fwd, and the bn has no output buffer */
	bool fuse_add;
	struct nn_delivery dl[2];

	/* run time */
	float *y;		/* output of the last forward */
	bool needg;		/* backward: this node's output gradient is needed */
};

/* Run-time data of a model (nn/model/model.c owns it).  Pointers are backend memory
 * unless said otherwise. */
struct nn_exec {
	float *params, *grads, *state;	/* the mirrors themselves on a host backend */
	void *arena;		/* activations, gradient slots, scratch: one allocation */
	float *x;		/* a device backend's copy of the batch's inputs (batch_cap); */
	int32_t *tokens_in;	/* NULL on a host backend, which reads the caller's */
	void *y;
	float **slot;		/* nslot pointers into the arena (host array) */
	int nslot;
	size_t slot_floats;
	float *ws;		/* conv workspace */
	float *zero;		/* zero vector, zero_floats long, never written */
	float *host;		/* host scratch for the regression loss: batch_cap floats */
	uint8_t *computed;	/* per layer (host): the last backward wrote its gradient */
	float *logits;		/* (B, nclasses) after nn_forward */
	int B;			/* batch of the last forward; 0: none */
	const int32_t *tokens;	/* of the last forward */
};

/* Builder: nodes appended in topological order; shapes inferred; parameters laid out in
 * order.  Every function returns the new node's index or -1 (error kept in g->err). */
struct nn_graph {
	struct nn_node *nodes;
	int nnodes, cap;
	struct nn_layer *layers;
	int nlayers, lcap;
	size_t nparams, nstate;
	int err;		/* first error: -EINVAL, -ENOMEM */
};

void nn_graph_init(struct nn_graph *g);
void nn_graph_free(struct nn_graph *g);
int nn_g_input(struct nn_graph *g, int C, int H, int W);
int nn_g_conv(struct nn_graph *g, int in, int K, int k, int stride, int pad, bool bias,
	      const char *name);
int nn_g_bn(struct nn_graph *g, int in, const char *name);
int nn_g_relu(struct nn_graph *g, int in);
int nn_g_maxpool(struct nn_graph *g, int in, int k, int stride);
int nn_g_avgpool(struct nn_graph *g, int in, int k, int stride);
int nn_g_gap(struct nn_graph *g, int in);
int nn_g_linear(struct nn_graph *g, int in, int out, const char *name);
int nn_g_add(struct nn_graph *g, int a, int b);
int nn_g_flatten(struct nn_graph *g, int in);
int nn_g_embed(struct nn_graph *g, int T, int V, int D, const char *name);
int nn_g_lstm(struct nn_graph *g, int in, int Hd, const char *name);

/* nn/model/models.c: builds the named architecture ("custom": in->desc); 0, -EINVAL,
 * -ENOMEM. */
int nn_models_build(struct nn_graph *g, const char *name, const struct nn_input *in);

/* nn/model/model_desc.c: builds the described model d (nn/model_desc.h) on input in, or
 * with in == NULL only reads it; as nn_desc_check (bad and msg may be NULL). */
struct nn_desc;
int nn_desc_build(struct nn_graph *g, const struct nn_desc *d, const struct nn_input *in,
		  int *bad, char *msg, size_t n);

/* nn/model/model_init.c: PyTorch's default initialisation of every parameter and the bn
 * running statistics, into host buffers, deterministic in seed. */
void nn_model_init_params(const struct nn_graph *g, float *params, float *state,
			  uint64_t seed);

/* nn/model/model_plan.c: assigns arena offsets and gradient slots; returns the arena size in
 * floats, *nslot and *slot_floats the gradient pool; *ws_off, *zero_off, *slot_off. */
struct nn_plan_out {
	size_t arena_floats, ws_off, zero_off, slot_off, slot_floats;
	int nslot;
};
int nn_model_plan(struct nn_node *nodes, int nnodes, struct nn_backend *be,
		  int batch_cap, struct nn_plan_out *p);

/* nn/model/model_exec.c: marks node->needg for a backward with need_wgrad. */
void nn_model_mark_needg(struct nn_node *nodes, int nnodes, const uint8_t *need_wgrad);

#endif
