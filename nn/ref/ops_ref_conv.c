/* nn/ref/ops_ref_conv.c — reference 2-D convolution: the definition, summed directly in
 * double.  Backward gathers (never scatters) so every output is one accumulation. */
#include "nn/ref/ref.h"

size_t nn_ref_conv_ws_floats(struct nn_backend *be, const struct nn_conv_shape *s)
{
	return 0;
}

/* in (B,C,H,W), w (K,C,kh,kw), b (K) or NULL -> out (B,K,OH,OW) */
void nn_ref_conv_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
		     const float *b, const struct nn_conv_shape *s, float *ws)
{
	for (int n = 0; n < s->B; n++)
		for (int k = 0; k < s->K; k++)
			for (int oh = 0; oh < s->OH; oh++)
				for (int ow = 0; ow < s->OW; ow++) {
					double acc = b ? b[k] : 0.0;

					for (int c = 0; c < s->C; c++)
						for (int i = 0; i < s->kh; i++) {
							int h = oh * s->stride - s->pad + i;

							if (h < 0 || h >= s->H)
								continue;
							for (int j = 0; j < s->kw; j++) {
								int x = ow * s->stride - s->pad + j;

								if (x < 0 || x >= s->W)
									continue;
								acc += (double)in[(((size_t)n * s->C + c) * s->H + h) * s->W + x] *
								       w[(((size_t)k * s->C + c) * s->kh + i) * s->kw + j];
							}
						}
					out[(((size_t)n * s->K + k) * s->OH + oh) * s->OW + ow] = (float)acc;
				}
}

void nn_ref_conv_bwd(struct nn_backend *be, float *din, float *dw, float *db, const float *dout,
		     const float *in, const float *w, const struct nn_conv_shape *s, float *ws)
{
	const int S = s->stride, P = s->pad;

	if (db)
		for (int k = 0; k < s->K; k++) {
			double acc = 0.0;

			for (int n = 0; n < s->B; n++)
				for (int o = 0; o < s->OH * s->OW; o++)
					acc += dout[((size_t)n * s->K + k) * s->OH * s->OW + o];
			db[k] = (float)acc;
		}
	if (dw)
		for (int k = 0; k < s->K; k++)
			for (int c = 0; c < s->C; c++)
				for (int i = 0; i < s->kh; i++)
					for (int j = 0; j < s->kw; j++) {
						double acc = 0.0;

						for (int n = 0; n < s->B; n++)
							for (int oh = 0; oh < s->OH; oh++) {
								int h = oh * S - P + i;

								if (h < 0 || h >= s->H)
									continue;
								for (int ow = 0; ow < s->OW; ow++) {
									int x = ow * S - P + j;

									if (x < 0 || x >= s->W)
										continue;
									acc += (double)dout[(((size_t)n * s->K + k) * s->OH + oh) * s->OW + ow] *
									       in[(((size_t)n * s->C + c) * s->H + h) * s->W + x];
								}
							}
						dw[(((size_t)k * s->C + c) * s->kh + i) * s->kw + j] = (float)acc;
					}
	if (din)
		for (int n = 0; n < s->B; n++)
			for (int c = 0; c < s->C; c++)
				for (int h = 0; h < s->H; h++)
					for (int x = 0; x < s->W; x++) {
						double acc = 0.0;

						/* output rows oh with oh*S - P + i == h */
						for (int i = 0; i < s->kh; i++) {
							int th = h + P - i;

							if (th < 0 || th % S || th / S >= s->OH)
								continue;
							for (int j = 0; j < s->kw; j++) {
								int tw = x + P - j;

								if (tw < 0 || tw % S || tw / S >= s->OW)
									continue;
								for (int k = 0; k < s->K; k++)
									acc += (double)dout[(((size_t)n * s->K + k) * s->OH + th / S) * s->OW + tw / S] *
									       w[(((size_t)k * s->C + c) * s->kh + i) * s->kw + j];
							}
						}
						din[(((size_t)n * s->C + c) * s->H + h) * s->W + x] = (float)acc;
					}
}
