/* nn/cpu/ops_cpu_pool.c — pooling in float.  Windows are clipped to the input once per
 * output (no per-element bounds tests); backward scatters into a zeroed din. */
#include <string.h>
#include "nn/cpu/cpu.h"

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

/* ev = the even floats of the 32 in lo (0..15) and hi (16..31), od the odd ones, in
 * order: data movement only, each level its own way */
static inline void vf_deinterleave(vf16 lo, vf16 hi, vf16 *ev, vf16 *od)
{
#if NN_ISA_IS(avx512)
	const __m512i e = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
					    28, 30);

	*ev = _mm512_permutex2var_ps(lo, e, hi);
	*od = _mm512_permutex2var_ps(lo, _mm512_add_epi32(e, _mm512_set1_epi32(1)), hi);
#elif NN_ISA_IS(avx2)
	/* per 128-bit lane the evens (odds) of two registers, then the 64-bit pairs in order */
#define DEINT(a, b, imm) _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(	\
		_mm256_shuffle_ps(a, b, imm)), 0xd8))
	*ev = (vf16){ DEINT(lo.lo, lo.hi, 0x88), DEINT(hi.lo, hi.hi, 0x88) };
	*od = (vf16){ DEINT(lo.lo, lo.hi, 0xdd), DEINT(hi.lo, hi.hi, 0xdd) };
#undef DEINT
#else
	for (int j = 0; j < 8; j++) {
		ev->f[j] = lo.f[2 * j], ev->f[8 + j] = hi.f[2 * j];
		od->f[j] = lo.f[2 * j + 1], od->f[8 + j] = hi.f[2 * j + 1];
	}
#endif
}

/* 2x2 windows, stride 2, no padding (lenet's): always inside the plane.  16 outputs at
 * a time: the even and odd columns of the window's two input rows split into vectors,
 * then the window's elements in row-major order, the first maximum winning (a later
 * one replaces it only when greater), as the general loop below compares them. */
static void maxpool2_fwd(float *out, int32_t *argmax, const float *in,
			 const struct nn_pool_shape *s)
{
	const int W = s->W, OW = s->OW;
	const int off[4] = { 0, 1, W, W + 1 };

	for (size_t p = 0; p < (size_t)s->B * s->C; p++) {
		const float *x = in + p * s->H * W;
		float *o = out + p * s->OH * OW;
		int32_t *am = argmax + p * s->OH * OW;

		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < OW; ow += 16) {
				int n = OW - ow < 16 ? OW - ow : 16, i0 = 2 * oh * W + 2 * ow;
				/* 2n floats of each row: the first 16, then the rest */
				vm16 k0 = vm_first(2 * n), k1 = vm_first(2 * n - 16);
				const float *r0 = x + i0, *r1 = r0 + W;
				vf16 v[4], best, q = vf_zero();
				float qf[16];

				vf_deinterleave(vf_loadm(r0, k0), vf_loadm(r0 + 16, k1), &v[0], &v[1]);
				vf_deinterleave(vf_loadm(r1, k0), vf_loadm(r1 + 16, k1), &v[2], &v[3]);
				best = v[0];
				for (int e = 1; e < 4; e++) {
					vm16 gt = vf_gt(v[e], best);

					best = vf_select(gt, v[e], best);
					q = vf_select(gt, vf_set1((float)e), q);
				}
				vf_storem(o + oh * OW + ow, vm_first(n), best);
				vf_store(qf, q);
				for (int j = 0; j < n; j++)
					am[oh * OW + ow + j] = i0 + 2 * j + off[(int)qf[j]];
			}
	}
}

void nn_cpu_maxpool_fwd(struct nn_backend *be, float *out, int32_t *argmax, const float *in,
			const struct nn_pool_shape *s)
{
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
