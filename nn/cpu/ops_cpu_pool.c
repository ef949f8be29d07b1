/* nn/cpu/ops_cpu_pool.c — pooling in float.  Windows are clipped to the input once per
 * output (no per-element bounds tests); backward scatters into a zeroed din. */
#include <string.h>
#include "nn/cpu/cpu.h"
#ifdef __AVX512F__
#include <immintrin.h>
#endif

/* The rows [h0, h1) and columns [w0, w1) of the window of output (oh, ow). */
static void pool_window(const struct nn_pool_shape *s, int oh, int ow, int *h0, int *h1,
			int *w0, int *w1)
{
	*h0 = oh * s->stride - s->pad, *w0 = ow * s->stride - s->pad;
	*h1 = *h0 + s->k, *w1 = *w0 + s->k;
	if (*h0 < 0)
		*h0 = 0;
	if (*w0 < 0)
		*w0 = 0;
	if (*h1 > s->H)
		*h1 = s->H;
	if (*w1 > s->W)
		*w1 = s->W;
}

/* 2x2 windows, stride 2, no padding (lenet's): always inside the plane */
static void maxpool2_fwd(float *out, int32_t *argmax, const float *in,
			 const struct nn_pool_shape *s)
{
	const int W = s->W;

	for (size_t p = 0; p < (size_t)s->B * s->C; p++) {
		const float *restrict x = in + p * s->H * W;
		float *restrict o = out + p * s->OH * s->OW;
		int32_t *restrict am = argmax + p * s->OH * s->OW;

		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < s->OW; ow++) {
				int i = 2 * oh * W + 2 * ow, best = i;

				/* row-major window order, the first maximum wins */
				if (x[i + 1] > x[best])
					best = i + 1;
				if (x[i + W] > x[best])
					best = i + W;
				if (x[i + W + 1] > x[best])
					best = i + W + 1;
				o[oh * s->OW + ow] = x[best];
				am[oh * s->OW + ow] = best;
			}
	}
}

#ifdef __AVX512F__
/* maxpool2_fwd, 16 outputs at a time: the even and odd columns of two input rows split
 * into vectors, then the same comparisons in the same order, as masks */
static void maxpool2_fwd_avx512(float *out, int32_t *argmax, const float *in,
				const struct nn_pool_shape *s)
{
	const int W = s->W, OW = s->OW;
	const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
					     28, 30);
	const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));

	for (size_t p = 0; p < (size_t)s->B * s->C; p++) {
		const float *x = in + p * s->H * W;
		float *o = out + p * s->OH * OW;
		int32_t *am = argmax + p * s->OH * OW;

		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < OW; ow += 16) {
				int n = OW - ow < 16 ? OW - ow : 16, i0 = 2 * oh * W + 2 * ow;
				__mmask16 km = (__mmask16)((1u << n) - 1);
				/* 2n floats of each row: the first 16, then the rest */
				__mmask16 k0 = 2 * n >= 16 ? 0xffff : (__mmask16)((1u << (2 * n)) - 1);
				__mmask16 k1 = 2 * n > 16 ? (__mmask16)((1u << (2 * n - 16)) - 1) : 0;
				const float *r0 = x + i0, *r1 = r0 + W;
				__m512 a0 = _mm512_maskz_loadu_ps(k0, r0);
				__m512 a1 = _mm512_maskz_loadu_ps(k1, r0 + 16);
				__m512 b0 = _mm512_maskz_loadu_ps(k0, r1);
				__m512 b1 = _mm512_maskz_loadu_ps(k1, r1 + 16);
				__m512 v[4] = { _mm512_permutex2var_ps(a0, ev, a1),
						_mm512_permutex2var_ps(a0, od, a1),
						_mm512_permutex2var_ps(b0, ev, b1),
						_mm512_permutex2var_ps(b0, od, b1) };
				const int off[4] = { 0, 1, W, W + 1 };
				__m512i base = _mm512_add_epi32(_mm512_set1_epi32(i0),
								_mm512_slli_epi32(_mm512_setr_epi32(
									0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
									11, 12, 13, 14, 15), 1));
				__m512 best = v[0];
				__m512i bi = base;

				for (int q = 1; q < 4; q++) {
					__mmask16 gt = _mm512_cmp_ps_mask(v[q], best, _CMP_GT_OQ);

					best = _mm512_mask_mov_ps(best, gt, v[q]);
					bi = _mm512_mask_add_epi32(bi, gt, base, _mm512_set1_epi32(off[q]));
				}
				_mm512_mask_storeu_ps(o + oh * OW + ow, km, best);
				_mm512_mask_storeu_epi32(am + oh * OW + ow, km, bi);
			}
	}
}
#endif

void nn_cpu_maxpool_fwd(struct nn_backend *be, float *out, int32_t *argmax, const float *in,
			const struct nn_pool_shape *s)
{
#ifdef __AVX512F__
	if (s->k == 2 && s->stride == 2 && s->pad == 0) {
		maxpool2_fwd_avx512(out, argmax, in, s);
		return;
	}
#endif
	if (s->k == 2 && s->stride == 2 && s->pad == 0) {
		maxpool2_fwd(out, argmax, in, s);
		return;
	}
	for (size_t p = 0; p < (size_t)s->B * s->C; p++) {
		const float *restrict x = in + p * s->H * s->W;
		float *restrict o = out + p * s->OH * s->OW;
		int32_t *restrict am = argmax + p * s->OH * s->OW;

		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < s->OW; ow++) {
				int h0, h1, w0, w1, best = -1;

				pool_window(s, oh, ow, &h0, &h1, &w0, &w1);
				for (int h = h0; h < h1; h++)
					for (int w = w0; w < w1; w++)
						if (best < 0 || x[h * s->W + w] > x[best])
							best = h * s->W + w;
				o[oh * s->OW + ow] = best < 0 ? 0.0f : x[best];
				am[oh * s->OW + ow] = best;
			}
	}
}

void nn_cpu_maxpool_bwd(struct nn_backend *be, float *din, const float *dout,
			const int32_t *argmax, const struct nn_pool_shape *s)
{
	const size_t ohw = (size_t)s->OH * s->OW, hw = (size_t)s->H * s->W;

	memset(din, 0, (size_t)s->B * s->C * hw * sizeof(float));
	for (size_t p = 0; p < (size_t)s->B * s->C; p++)
		for (size_t o = 0; o < ohw; o++)
			if (argmax[p * ohw + o] >= 0)
				din[p * hw + argmax[p * ohw + o]] += dout[p * ohw + o];
}

void nn_cpu_avgpool_fwd(struct nn_backend *be, float *out, const float *in,
			const struct nn_pool_shape *s)
{
	const float scale = 1.0f / (float)(s->k * s->k);

	for (size_t p = 0; p < (size_t)s->B * s->C; p++) {
		const float *restrict x = in + p * s->H * s->W;
		float *restrict o = out + p * s->OH * s->OW;

		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < s->OW; ow++) {
				int h0, h1, w0, w1;
				float acc = 0.0f;

				pool_window(s, oh, ow, &h0, &h1, &w0, &w1);
				for (int h = h0; h < h1; h++)
					for (int w = w0; w < w1; w++)
						acc += x[h * s->W + w];
				o[oh * s->OW + ow] = acc * scale;
			}
	}
}

void nn_cpu_avgpool_bwd(struct nn_backend *be, float *din, const float *dout,
			const struct nn_pool_shape *s)
{
	const float scale = 1.0f / (float)(s->k * s->k);

	memset(din, 0, (size_t)s->B * s->C * s->H * s->W * sizeof(float));
	for (size_t p = 0; p < (size_t)s->B * s->C; p++) {
		float *restrict x = din + p * s->H * s->W;
		const float *restrict d = dout + p * s->OH * s->OW;

		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < s->OW; ow++) {
				int h0, h1, w0, w1;
				float g = d[oh * s->OW + ow] * scale;

				pool_window(s, oh, ow, &h0, &h1, &w0, &w1);
				for (int h = h0; h < h1; h++)
					for (int w = w0; w < w1; w++)
						x[h * s->W + w] += g;
			}
	}
}

void nn_cpu_gap_fwd(struct nn_backend *be, float *out, const float *in, int B, int C, int HW)
{
	for (size_t p = 0; p < (size_t)B * C; p++)
		out[p] = nn_cpu_sum(in + p * HW, HW) / (float)HW;
}

void nn_cpu_gap_bwd(struct nn_backend *be, float *din, const float *dout, int B, int C, int HW)
{
	for (size_t p = 0; p < (size_t)B * C; p++) {
		float g = dout[p] / (float)HW;

		for (int t = 0; t < HW; t++)
			din[p * HW + t] = g;
	}
}
