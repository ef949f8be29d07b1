/* nn/ref/ops_ref_pool.c — reference max, average and global average pooling (NCHW).
 * Backward gathers over the windows that cover each input element. */
#include "nn/ref/ref.h"

void nn_ref_maxpool_fwd(struct nn_backend *be, float *out, int32_t *argmax, const float *in,
			const struct nn_pool_shape *s)
{
	for (size_t p = 0; p < (size_t)s->B * s->C; p++) {
		const float *x = in + p * s->H * s->W;

		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < s->OW; ow++) {
				int best = -1;

				for (int i = 0; i < s->k; i++) {
					int h = oh * s->stride - s->pad + i;

					if (h < 0 || h >= s->H)
						continue;
					for (int j = 0; j < s->k; j++) {
						int w = ow * s->stride - s->pad + j;

						if (w < 0 || w >= s->W)
							continue;
						if (best < 0 || x[h * s->W + w] > x[best])
							best = h * s->W + w;
					}
				}
				size_t o = (p * s->OH + oh) * s->OW + ow;

				out[o] = best < 0 ? 0.0f : x[best];
				argmax[o] = best;
			}
	}
}

void nn_ref_maxpool_bwd(struct nn_backend *be, float *din, const float *dout,
			const int32_t *argmax, const struct nn_pool_shape *s)
{
	const int S = s->stride, P = s->pad;

	for (size_t p = 0; p < (size_t)s->B * s->C; p++)
		for (int h = 0; h < s->H; h++)
			for (int w = 0; w < s->W; w++) {
				double acc = 0.0;

				for (int i = 0; i < s->k; i++) {
					int th = h + P - i;

					if (th < 0 || th % S || th / S >= s->OH)
						continue;
					for (int j = 0; j < s->k; j++) {
						int tw = w + P - j;

						if (tw < 0 || tw % S || tw / S >= s->OW)
							continue;
						size_t o = (p * s->OH + th / S) * s->OW + tw / S;

						if (argmax[o] == h * s->W + w)
							acc += dout[o];
					}
				}
				din[(p * s->H + h) * s->W + w] = (float)acc;
			}
}

void nn_ref_avgpool_fwd(struct nn_backend *be, float *out, const float *in,
			const struct nn_pool_shape *s)
{
	for (size_t p = 0; p < (size_t)s->B * s->C; p++)
		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < s->OW; ow++) {
				double acc = 0.0;

				for (int i = 0; i < s->k; i++) {
					int h = oh * s->stride - s->pad + i;

					if (h < 0 || h >= s->H)
						continue;
					for (int j = 0; j < s->k; j++) {
						int w = ow * s->stride - s->pad + j;

						if (w >= 0 && w < s->W)
							acc += in[(p * s->H + h) * s->W + w];
					}
				}
				out[(p * s->OH + oh) * s->OW + ow] = (float)(acc / (s->k * s->k));
			}
}

void nn_ref_avgpool_bwd(struct nn_backend *be, float *din, const float *dout,
			const struct nn_pool_shape *s)
{
	const int S = s->stride, P = s->pad;

	for (size_t p = 0; p < (size_t)s->B * s->C; p++)
		for (int h = 0; h < s->H; h++)
			for (int w = 0; w < s->W; w++) {
				double acc = 0.0;

				for (int i = 0; i < s->k; i++) {
					int th = h + P - i;

					if (th < 0 || th % S || th / S >= s->OH)
						continue;
					for (int j = 0; j < s->k; j++) {
						int tw = w + P - j;

						if (tw >= 0 && tw % S == 0 && tw / S < s->OW)
							acc += dout[(p * s->OH + th / S) * s->OW + tw / S];
					}
				}
				din[(p * s->H + h) * s->W + w] = (float)(acc / (s->k * s->k));
			}
}

/* (B,C,HW) -> (B,C) */
void nn_ref_gap_fwd(struct nn_backend *be, float *out, const float *in, int B, int C, int HW)
{
	for (size_t p = 0; p < (size_t)B * C; p++) {
		double acc = 0.0;

		for (int i = 0; i < HW; i++)
			acc += in[p * HW + i];
		out[p] = (float)(acc / HW);
	}
}

void nn_ref_gap_bwd(struct nn_backend *be, float *din, const float *dout, int B, int C, int HW)
{
	for (size_t p = 0; p < (size_t)B * C; p++)
		for (int i = 0; i < HW; i++)
			din[p * HW + i] = (float)((double)dout[p] / HW);
}
