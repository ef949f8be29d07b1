/* nn/shape.c — output sizes of conv and pooling windows. */
#include "nn/ops.h"

void nn_conv_shape_init(struct nn_conv_shape *s, int B, int C, int H, int W, int K,
			int k, int stride, int pad)
{
	s->B = B, s->C = C, s->H = H, s->W = W;
	s->K = K, s->kh = k, s->kw = k;
	s->stride = stride, s->pad = pad;
	s->OH = (H + 2 * pad - k) / stride + 1;
	s->OW = (W + 2 * pad - k) / stride + 1;
}

void nn_pool_shape_init(struct nn_pool_shape *s, int B, int C, int H, int W, int k,
			int stride, int pad)
{
	s->B = B, s->C = C, s->H = H, s->W = W;
	s->k = k, s->stride = stride, s->pad = pad;
	s->OH = (H + 2 * pad - k) / stride + 1;
	s->OW = (W + 2 * pad - k) / stride + 1;
}
