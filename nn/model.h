/* nn/model.h — models as a small graph of nodes over one flat parameter buffer.
 *
 * A model owns: params and grads (one contiguous buffer each, nparams floats), state
 * (batch-norm running statistics, nstate floats), activations for up to batch_cap
 * samples, and a table of layers: every node with parameters is one layer (name,
 * offset, size in params).  The exchange moves blocks of params/grads without copies;
 * layer-wise methods (JointSpar, LARS) address layers through the table.
 * Built deterministically from a seed (PyTorch's default init: kaiming-uniform(a=sqrt 5)
 * for conv/linear weights, uniform(+-1/sqrt(fan_in)) biases, BN gamma 1 beta 0).
 */
#ifndef NN_MODEL_H
#define NN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nn/ops.h"

/* What a model consumes: images (C,H,W) or token sequences (T tokens < vocab). */
struct nn_input {
	int C, H, W;		/* images */
	int T, vocab;		/* sequences (T > 0 selects tokens) */
	int nclasses;		/* classes; 1 with regression (mean squared error) */
	bool regression;
};

struct nn_layer {
	char name[32];		/* e.g. "conv1", "layer2.0.bn1", "fc" */
	size_t off, size;	/* in params / grads */
	int node;		/* the node that owns it */
};

struct nn_node;			/* private to nn/model*.c */
struct nn_exec;			/* private to nn/model*.c */

struct nn_model {
	const struct nn_ops *ops;
	struct nn_input in;
	int batch_cap;
	float *params, *grads;	/* nparams each; backend memory */
	size_t nparams;
	float *state;		/* nstate floats: BN running mean/var */
	size_t nstate;
	int nlayers;
	struct nn_layer *layers;
	int nnodes;
	struct nn_node *nodes;
	void *arena;		/* activations, gradients, scratch: one allocation */
	float *logits;		/* (B, nclasses) after nn_forward */
	struct nn_exec *exec;	/* plan and run-time scratch (host memory) */
};

/* Names: mlp lenet resnet20 resnet32 resnet44 resnet56 resnet110 lstm logreg linreg.
 * Returns 0, -EINVAL (unknown name or input that does not fit), -ENOMEM. */
int nn_model_init(struct nn_model *m, const char *name, const struct nn_input *in,
		  const struct nn_ops *ops, int batch_cap, uint64_t seed);
void nn_model_free(struct nn_model *m);

/* Forward of B <= batch_cap samples: x is (B,C,H,W) floats or tokens (B,T) int32 (pass
 * the other NULL); y are labels (or targets, regression).  train selects batch-norm
 * mode.  Returns the mean loss; *correct (may be NULL) counts right predictions. */
float nn_forward(struct nn_model *m, const float *x, const int32_t *tokens,
		 const void *y, int B, bool train, int *correct);
/* Backward of the last forward: fills grads.  need_wgrad[l] == 0 skips layer l's
 * parameter gradient (left untouched); the pass stops below the lowest layer that needs
 * one.  need_wgrad == NULL: every layer. */
void nn_backward(struct nn_model *m, const uint8_t *need_wgrad);

/* Floating-point operations of one forward (and backward with the given need_wgrad)
 * for B samples: the modelled compute time is flops / device rate. */
double nn_flops(const struct nn_model *m, int B, bool backward, const uint8_t *need_wgrad);

/* The layer owning parameter index i (binary search), or -1. */
int nn_layer_of(const struct nn_model *m, size_t i);

#endif
