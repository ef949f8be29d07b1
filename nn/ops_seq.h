/* nn/ops_seq.h — the memory layout the embedding and one-layer LSTM ops of every backend
 * share (nn/ref/ops_seq_ref.c: plain loops with double accumulators, the oracle;
 * nn/cpu/ops_seq_cpu.c: OpenBLAS; nn/cuda/: its port).  nn/ops.h says what they compute.
 *
 * LSTM cache (nn_lstm_cache_floats(B, T, Hd) floats, batch-major; every backend's):
 *   gates (B, T, 4Hd)  i, f, g, o after their nonlinearities
 *   c     (B, T, Hd)   cell state after step t
 *   h     (B, T, Hd)   hidden state after step t (out is h[:, T-1])
 *   work  (B, T, 4Hd) + 3 (B, Hd)   scratch of lstm_bwd (gate pre-activation gradients,
 *                      running dh/dc): lstm_bwd writes here although the nn_ops signature
 *                      passes the cache as const; the memory is the model's writable
 *                      arena and the forward part stays intact, so backward can be run
 *                      twice on one forward.  This spares an allocation per step.
 * Embedding: tokens outside [0, V) are skipped by embed_bwd; embed_fwd trusts them.
 */
#ifndef NN_OPS_SEQ_H
#define NN_OPS_SEQ_H

#include <stddef.h>
#include <stdint.h>
#include "nn/ops.h"

/* Where the parts of the cache start (shared by both backends). */
struct nn_lstm_cache {
	float *gates, *c, *h, *dA, *dh, *dc, *tmp;
};
static inline struct nn_lstm_cache nn_lstm_cache_split(const float *cache, int B, int T,
						       int Hd)
{
	size_t bt = (size_t)B * T, bh = (size_t)B * Hd;
	float *p = (float *)cache;	/* see the note on lstm_bwd's scratch above */
	struct nn_lstm_cache s;

	s.gates = p;
	s.c = p + bt * 4 * Hd;
	s.h = p + bt * 5 * Hd;
	s.dA = p + bt * 6 * Hd;
	s.dh = s.dA + bt * 4 * Hd;
	s.dc = s.dh + bh;
	s.tmp = s.dc + bh;
	return s;
}

#endif
