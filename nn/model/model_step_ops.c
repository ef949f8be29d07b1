/* nn/model/model_step_ops.c — the ops a GPU runs for one step, counted the way nn/cuda/
 * issues them: one per kernel launch, cuBLAS or cuDNN call, or memset on the stream.
 * Each is charged train.op_overhead by the compute model (emu/run/compute.c), since a
 * small model's step on a GPU is bound by launching its kernels, not by its FLOPs.
 *
 * Host<->device copies are not counted: the inputs' upload, the loss's two read-backs and
 * the per-layer gradient downloads are how emu's workers reach their host-side exchange;
 * a data-parallel trainer keeps them on the device.  For the same reason there is no
 * optimiser op: emu's algorithms update the host mirrors (one parameter upload follows).
 *
 * tests/test_cudahost_model.c counts what the CUDA backend built for the host actually
 * launches and requires these numbers: a change in nn/cuda/ that adds or removes a
 * launch must change them too. */
#include <errno.h>
#include <stdlib.h>
#include "nn/model/model_impl.h"

/* Forward of node n: train selects batch norm's batch statistics (3 launches: the
 * channel sums of the mean, and of the centred squares with the statistics; the output)
 * over the running ones (2: the statistics, the output). */
static int fwd_ops(const struct nn_node *n, bool train)
{
	switch (n->kind) {
	case NN_CONV:		/* cudnnConvolutionForward, the bias kernel */
	case NN_LINEAR:		/* the bias laid down, cublasSgemm */
		return 1 + (n->b != NN_NONE);
	case NN_BN:		/* bn_relu_fwd when a relu is fused: the same launches */
		return train ? 3 : 2;
	case NN_RELU:
		return n->fused ? 0 : 1;	/* fused: applied by its producer */
	case NN_MAXPOOL:
	case NN_AVGPOOL:
	case NN_GAP:
	case NN_ADD:
	case NN_EMBED:
		return 1;
	case NN_LSTM:
		/* the bias sum; gates = x wx^T and the bias; per time step one gate kernel
		 * and (after the first) h wh^T; the last hidden state out */
		return 3 + 2 * n->T;
	default:		/* input, flatten: views */
		return 0;
	}
}

/* Backward of node n (which runs: needg); own: its weight gradient is needed, din: its
 * input's gradient is. */
static int bwd_ops(const struct nn_node *n, int B, bool own, bool din)
{
	switch (n->kind) {
	case NN_CONV:		/* backward data, backward filter, the bias's channel sums */
		return din + own + (own && n->b != NN_NONE);
	case NN_LINEAR:		/* two sgemms and a column sum */
		return din + own + (own && n->b != NN_NONE);
	case NN_BN:		/* the two channel sums (dbeta, dgamma) always run */
		return 2 + din;
	case NN_RELU:
		return n->fused == 2 ? 0 : 1;	/* after bn: bn_relu_bwd masks */
	case NN_MAXPOOL:
	case NN_AVGPOOL:
	case NN_GAP:
		return 1;
	case NN_EMBED:		/* memset, then the ordered sums */
		return own ? 2 : 0;
	case NN_LSTM: {
		/* dh/dc set up; per time step one kernel and (after the first) one sgemm;
		 * with own: db (column sum), dwx (sgemm), dwh (B sgemms; a memset when T < 2)
		 * and bias_hh's copy of bias_ih's gradient; din: one sgemm */
		int k = 2 * n->T + din;
		if (own)
			k += 3 + (n->T < 2 ? 1 : B);
		return k;
	}
	default:		/* input, flatten, add: the plan passes the slot through */
		return 0;
	}
}

int nn_step_ops(const struct nn_model *m, int B, bool train, const uint8_t *need_wgrad)
{
	int ops = m->in.regression ? 0 : 2;	/* cross-entropy: per sample, then the sum */
	for (int i = 0; i < m->nnodes; i++)
		ops += fwd_ops(&m->nodes[i], train);
	if (!train)
		return ops;
	/* which nodes run in backward: nn_model_mark_needg on a private array (the model
	 * is const here), as nn_flops does */
	bool *needg = malloc((size_t)m->nnodes * sizeof(*needg));
	if (!needg)
		return -ENOMEM;
	for (int i = 0; i < m->nnodes; i++) {
		const struct nn_node *n = &m->nodes[i];
		needg[i] = n->layer >= 0 && (!need_wgrad || need_wgrad[n->layer]);
		for (int j = 0; j < 2; j++)
			if (n->in[j] >= 0 && needg[n->in[j]])
				needg[i] = true;
	}
	for (int i = m->nnodes - 1; i >= 0; i--) {
		const struct nn_node *n = &m->nodes[i];
		if (!needg[i])
			continue;
		bool own = n->layer >= 0 && (!need_wgrad || need_wgrad[n->layer]);
		bool din = n->in[0] >= 0 && needg[n->in[0]];
		ops += bwd_ops(n, B, own, din);
		/* an input with several consumers: the contributions summed (add_fwd) */
		for (int j = 0; j < 2; j++)
			if (n->dl[j].acc_to >= 0 && needg[n->in[j]])
				ops++;
	}
	free(needg);
	return ops;
}
