/* nn/model.h — models as a small graph of nodes over one flat parameter buffer.
 *
 * A model owns: params and grads (one contiguous buffer each, nparams floats), state
 * (batch-norm running statistics, nstate floats), activations for up to batch_cap
 * samples, and a table of layers: every node with parameters is one layer (name,
 * offset, size in params).  The exchange moves blocks of params/grads without copies;
 * layer-wise methods (JointSpar, LARS) address layers through the table.
 * Built deterministically from a seed (PyTorch's default init: kaiming-uniform(a=sqrt 5)
 * for conv/linear weights, uniform(+-1/sqrt(fan_in)) biases, BN gamma 1 beta 0,
 * embedding N(0,1), lstm uniform(+-1/sqrt(hidden))).  Parameters are laid out in
 * PyTorch's parameters() order (weight then bias; bn gamma then beta; lstm weight_ih,
 * weight_hh, bias_ih, bias_hh), layers named as in a torchvision-style state dict:
 * mlp fc1 fc2; lenet conv1 conv2 fc1 fc2 fc3; resnet conv1 bn1 layerS.B.{conv1,bn1,
 * conv2,bn2,shortcut.0,shortcut.1} fc; lstm embed lstm fc; logreg/linreg fc; custom: the
 * lines that have parameters, by their names.
 * Memory: everything a step needs is in params, grads, state and the arena of the
 * backend (planned at init, nn/model/model_impl.h); a step allocates nothing.  The host
 * side sees only the mirrors: the line between host and device is drawn here once.
 */
#ifndef NN_MODEL_H
#define NN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nn/backend.h"

struct nn_desc;

/* What a model consumes: images (C,H,W) or token sequences (T tokens < vocab). */
struct nn_input {
	int C, H, W;		/* images */
	int T, vocab;		/* sequences (T > 0 selects tokens) */
	int nclasses;		/* classes; 1 with regression (mean squared error) */
	bool regression;
	/* the model "custom": its layers (nn/model_desc.h); borrowed, read only while
	 * nn_model_init or nn_model_size runs */
	const struct nn_desc *desc;
};

struct nn_layer {
	char name[32];		/* e.g. "conv1", "layer2.0.bn1", "fc" */
	size_t off, size;	/* in params / grads */
	int node;		/* the node that owns it */
};

struct nn_node;			/* private to nn/model*.c */
struct nn_exec;			/* private to nn/model*.c */

struct nn_model {
	struct nn_backend *be;	/* borrowed: opened before, closed after the model */
	struct nn_input in;
	int batch_cap;
	/* Host mirrors: what everything outside nn/ reads and writes.  params and grads
	 * (nparams floats each), state (batch-norm running mean/var, nstate floats).  On a
	 * host backend these are the buffers the ops use (no copies); on a device they are
	 * pinned copies that move at the points the caller chooses (nn_model_to_host,
	 * nn_model_to_device). */
	float *params, *grads;
	size_t nparams;
	float *state;
	size_t nstate;
	int nlayers;
	struct nn_layer *layers;
	int nnodes;
	struct nn_node *nodes;
	struct nn_exec *exec;	/* backend buffers, plan and run-time scratch (private) */
};

/* Names: mlp lenet resnet20 resnet32 resnet44 resnet56 resnet110 lstm logreg linreg, and
 * custom: the layers in->desc describes (nn/model_desc.h; nn_desc_check says what is
 * wrong with a description).  Images for all but lstm (tokens; embedding 64, hidden 128);
 * linreg needs regression with nclasses 1, the others classification.  Builds on backend be (open, see
 * nn/backend.h); the mirrors and the backend hold the same initial values.  Returns 0,
 * -EINVAL (unknown name or input that does not fit), -ENOMEM or the backend's error
 * (be->msg); on error m is zeroed (nn_model_free is safe). */
int nn_model_init(struct nn_model *m, const char *name, const struct nn_input *in,
		  struct nn_backend *be, int batch_cap, uint64_t seed);
void nn_model_free(struct nn_model *m);
/* The sizes of a model without building it on a backend (nlayers: its layers with
 * parameters, may be NULL): 0 or -EINVAL. */
int nn_model_size(const char *name, const struct nn_input *in, size_t *nparams,
		  size_t *nstate, int *nlayers);

/* Forward of B <= batch_cap samples, from host memory: x is (B,C,H,W) floats or tokens
 * (B,T) int32 (pass the other NULL), y labels int32 (or float targets, regression: mean
 * squared error, *correct stays 0).  On a host backend x and tokens are read where they
 * lie and again by nn_backward: keep them unchanged until then; a device backend copies
 * them in.  train selects batch-norm mode (batch statistics, running stats updated on
 * the backend; else running stats).  Returns the mean loss (NAN if B is out of range or
 * the backend failed: be->err); *correct (may be NULL) counts right predictions.
 * Allocates nothing. */
float nn_forward(struct nn_model *m, const float *x, const int32_t *tokens,
		 const void *y, int B, bool train, int *correct);
/* Backward of the last forward (a train-mode one if the model has batch norm): fills
 * the backend's grads, overwriting (never accumulating).  need_wgrad[l] == 0 skips layer
 * l's parameter gradient (left untouched); no input gradient is computed where no layer
 * below needs one, so the pass stops below the lowest layer that needs one.
 * need_wgrad == NULL: every layer.  May run again on the same forward. */
void nn_backward(struct nn_model *m, const uint8_t *need_wgrad);

/* Moving the mirrors (no-ops on a host backend).  parts: NN_PARAMS, NN_GRADS, NN_STATE.
 * To the host, NN_GRADS brings the layers the last backward computed (the others keep
 * their mirror values); to the device, NN_GRADS is not allowed.  0 or the backend's
 * sticky error (be->msg). */
enum { NN_PARAMS = 1, NN_GRADS = 2, NN_STATE = 4 };
int nn_model_to_host(struct nn_model *m, unsigned parts);
int nn_model_to_device(struct nn_model *m, unsigned parts);
/* The logits (B, nclasses) of the last forward, into host memory: 0 or the error. */
int nn_model_logits(struct nn_model *m, float *out);

/* Floating-point operations of one forward (and backward with the given need_wgrad)
 * for B samples: the modelled compute time is flops / device rate.  Counts 2 per
 * multiply-add of conv, linear and lstm; backward adds each such layer's dweight (if
 * needed) and dinput (if some layer below needs a gradient; the lstm's recurrence
 * whenever it runs).  Elementwise ops, pooling, batch norm, embedding and the loss are
 * not counted.  NAN on allocation failure. */
double nn_flops(const struct nn_model *m, int B, bool backward, const uint8_t *need_wgrad);

/* The ops a GPU launches for B samples (nn/model/model_step_ops.c): each kernel launch,
 * cuBLAS or cuDNN call and memset of nn/cuda/, the count of the compute model's per-op
 * overhead.  train: a training step (forward with batch statistics, the loss, backward
 * with need_wgrad as nn_backward takes it); else an evaluation forward and its loss.
 * Copies between host and device are not ops.  -ENOMEM on allocation failure. */
int nn_step_ops(const struct nn_model *m, int B, bool train, const uint8_t *need_wgrad);

/* The layer owning parameter index i (binary search), or -1. */
int nn_layer_of(const struct nn_model *m, size_t i);

#endif
