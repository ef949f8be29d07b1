/* emu/algo/jointspar_msg.h — JointSpar's messages: the sampled layers of one block.
 *
 * Block j of the flat vector, [b0, b1), meets layers [l0, l1) of the model's layer table
 * (layers tile the vector in order).  A message for block j, and a server's reply, is
 *   header: ceil((l1 - l0) / 32) uint32 words, bit k set if layer l0 + k is present;
 *   body:   for each present layer in order, its floats inside [b0, b1).
 * A worker's message carries its sampled layers scaled by 1/p_l; the reply carries the
 * layers present in any arrived message, averaged over every worker whose header
 * arrived (a worker that skipped a layer counts as zero there, so the mean is unbiased).
 * A message whose header is hit by a lost unit counts as lost entirely; lost floats of
 * the body do not count (neither in the sum nor in the number of workers).
 */
#ifndef EMU_JOINTSPAR_MSG_H
#define EMU_JOINTSPAR_MSG_H

#include <stddef.h>
#include <stdint.h>
#include "emu/net/xchg.h"
#include "nn/model.h"

struct jointspar_block {
	size_t b0, b1;		/* floats of the flat vector */
	int l0, l1;		/* layers meeting [b0, b1) */
	size_t hdr_bytes;
};

/* Fill blk for [b0, b1).  Returns 0, or -EINVAL if the layers do not tile the vector. */
int jointspar_block_init(struct jointspar_block *blk, const struct nn_layer *layers,
			 int nlayers, size_t nparams, size_t b0, size_t b1);
/* The largest message for this block: every layer present. */
static inline size_t jointspar_msg_max(const struct jointspar_block *blk)
{
	return blk->hdr_bytes + (blk->b1 - blk->b0) * sizeof(float);
}

/* A worker's message into buf (jointspar_msg_max bytes): layers with sampled[l], their
 * gradient g (the flat vector) times 1/p[l].  Returns the length in bytes. */
size_t jointspar_msg_build(uint8_t *buf, const struct jointspar_block *blk,
			   const struct nn_layer *layers, const uint8_t *sampled,
			   const double *p, const float *g);

/* Server: reduce in[0..n) into reply (cap bytes, >= jointspar_msg_max).  sum and cnt are
 * scratch of b1 - b0 entries.  Returns the reply's length. */
size_t jointspar_msg_reduce(const struct jointspar_block *blk, const struct nn_layer *layers,
			    const struct xmsg in[], int n, float *sum, uint32_t *cnt,
			    uint8_t *reply, size_t cap);

/* Worker: take a reply: for every float of the block, agg[i] = the aggregate and
 * arrived[i] = 1 (layers absent from the reply are 0), or arrived[i] = 0 where the float,
 * or the header, was lost.  agg and arrived are indexed by the flat vector.  Returns the
 * number of floats that arrived. */
size_t jointspar_msg_take(const struct jointspar_block *blk, const struct nn_layer *layers,
			  const struct xmsg *reply, float *agg, uint8_t *arrived);

#endif
