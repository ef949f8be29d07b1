/* nn/model_desc.h — a model described line by line, as the [model] section of an INI
 * file writes it (docs/models.md): each line NAME = OP [ARG...] [from INPUT...] is one
 * layer of the graph builder (nn/model/model_impl.h), in the order of the lines.  A
 * line reads the line above it unless it names its inputs after "from" (add names two;
 * "input" is the data); the last line gives the logits.  Layers with parameters are
 * named by their line (nn_layer.name), in PyTorch's parameters() order.
 *
 *   conv OUT K [stride=S] [pad=P] [bias=false]   Conv2d(in, OUT, K, S, P); stride 1, pad 0
 *   batchnorm                                     BatchNorm2d (BatchNorm1d on flat input)
 *   relu | flatten | gap                          gap: global average pool, C values
 *   maxpool K [stride=S] | avgpool K [stride=S]   stride K unless given
 *   linear OUT                                    OUT or "classes"; needs flat input
 *   add from A B                                  A + B, of one shape
 *   embedding DIM                                 first line, on tokens (vocab of the data)
 *   lstm HIDDEN                                   after an embedding: last hidden state
 *
 * The struct owns no heap memory (a struct cfg holds one and is copied as is).
 */
#ifndef NN_MODEL_DESC_H
#define NN_MODEL_DESC_H

#include <stddef.h>

#define NN_DESC_LINES 128	/* lines of one description */
#define NN_DESC_NAME 32		/* bytes of a line's name, its NUL included (nn_layer.name) */
#define NN_DESC_TEXT 128	/* bytes of a line's text, its NUL included */

struct nn_desc {
	int n;
	struct nn_desc_line {
		char name[NN_DESC_NAME];	/* the layer's name */
		char text[NN_DESC_TEXT];	/* OP [ARG...] [from INPUT...] */
		int line;	/* where it was given, for the caller's messages */
	} l[NN_DESC_LINES];
};

struct nn_input;

/* Checks d: with in == NULL what needs no data (each line's op, arguments and inputs,
 * the names); with in also the shapes on that input (a kernel larger than its input, an
 * add of two shapes, a linear on unflattened input, a line nobody reads, the last line
 * not giving in->nclasses values).  0, or -EINVAL with the index of the offending line
 * in *bad (-1: the description as a whole) and "NAME: what is wrong; expected ..." in
 * msg; -ENOMEM. */
int nn_desc_check(const struct nn_desc *d, const struct nn_input *in, int *bad, char *msg,
		  size_t n);

#endif
