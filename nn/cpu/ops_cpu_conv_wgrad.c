/* nn/cpu/ops_cpu_conv_wgrad.c — the weight gradient of a conv, dw (K, C, kh, kw) =
 * sum over samples of dout (K, OHW) col^T, in three ways, fastest first:
 *   same convs with NN_CPU_DIRECT  channel-last input read in place (no im2row)
 *   K >= 32                        channel-last copies and im2row, nn_cpu_gemm_at
 *   otherwise                      dot products of rows, nn_cpu_gemm_abt
 * nn_cpu_gemm_at's outer products run about twice as fast as the dot products, but
 * need the channel-last transposes. */
#include "nn/cpu/cpu.h"

/* Samples per dot-product gemm: planes smaller than NN_CONV_COLS are batched side by
 * side until the dot products are that long (each ends in a horizontal sum); the col
 * block then stays in L2. */
#ifndef NN_CONV_COLS
#define NN_CONV_COLS 256
#endif

static int conv_chunk(const struct nn_conv_shape *s)
{
	int ohw = s->OH * s->OW, nb = (NN_CONV_COLS + ohw - 1) / ohw;

	return nb < s->B ? nb : s->B;
}

/* dw (K, CKK) = dout col^T, summed over chunks of m samples: dot products of rows */
static void conv_weight_grad(float *dw, const float *dout, const float *in,
			     const struct nn_conv_shape *s, float *ws)
{
	const int CKK = s->C * s->kh * s->kw, OHW = s->OH * s->OW, nb = conv_chunk(s);
	const size_t in_sz = (size_t)s->C * s->H * s->W, out_sz = (size_t)s->K * OHW;
	for (int n0 = 0; n0 < s->B; n0 += nb) {
		int m = s->B - n0 < nb ? s->B - n0 : nb;
		size_t ld = (size_t)m * OHW;
		float *col = ws + (size_t)s->K * CKK, *dres = col + (size_t)CKK * ld;
		const float *d = dout + n0 * out_sz;

		if (m > 1) {	/* m samples of dout (K, OHW) -> (K, m*OHW) */
			for (int n = 0; n < m; n++)
				for (int k = 0; k < s->K; k++)
					nn_fcopy(dres + k * ld + (size_t)n * OHW,
					      dout + (n0 + n) * out_sz + (size_t)k * OHW, OHW);
			d = dres;
		}
		if (nn_cpu_conv_is_pointwise(s) && m == 1)
			col = (float *)in + n0 * in_sz;	/* read only */
		else
			for (int n = 0; n < m; n++)
				nn_cpu_im2col(col + (size_t)n * OHW, ld, in + (n0 + n) * in_sz, s);
		nn_cpu_gemm_abt(dw, CKK, d, ld, col, ld, s->K, CKK, (int)ld, n0 > 0);
	}
}

/* rows (OH*OW, kh*kw*C): row (oh, ow) is the patch in (i, j, c) order, read from the
 * input in (H, W, C) layout, where the j of one i are C*kw adjacent floats */
static void im2row_hwc(float *restrict rows, const float *restrict in,
		       const struct nn_conv_shape *s)
{
	const int C = s->C, S = s->stride, P = s->pad;
	float *restrict r = rows;

	for (int oh = 0; oh < s->OH; oh++)
		for (int ow = 0; ow < s->OW; ow++)
			for (int i = 0; i < s->kh; i++, r += s->kw * C) {
				int h = oh * S - P + i, w0 = ow * S - P;
				int j0 = w0 < 0 ? -w0 : 0, j1 = s->W - w0 < s->kw ? s->W - w0 : s->kw;

				if (h < 0 || h >= s->H || j0 >= j1) {
					nn_fzero(r, s->kw * C);
					continue;
				}
				nn_fzero(r, j0 * C);
				nn_fcopy(r + j0 * C, in + ((size_t)h * s->W + w0 + j0) * C, (j1 - j0) * C);
				nn_fzero(r + j1 * C, (s->kw - j1) * C);
			}
}

/* dw (K, C, kh, kw) from the channels-last weight gradient dwp (K, kh, kw, C) */
static void wgrad_from_hwc(float *dw, const float *dwp, const struct nn_conv_shape *s)
{
	const int C = s->C, kk = s->kh * s->kw, CKK = C * kk;

	for (int k = 0; k < s->K; k++)
		for (int c = 0; c < C; c++)
			for (int q = 0; q < kk; q++)
				dw[((size_t)k * C + c) * kk + q] = dwp[(size_t)k * CKK + q * C + c];
}

/* With dout^T (OHW, K) and the patches as rows (OHW, kh*kw*C): see conv_use_hwc_wgrad */
static void conv_weight_grad_hwc(float *dw, const float *dout, const float *in,
				 const struct nn_conv_shape *s, float *ws)
{
	const int C = s->C, kk = s->kh * s->kw, CKK = C * kk, OHW = s->OH * s->OW;
	const int HW = s->H * s->W;
	float *dwp = ws, *in_t = dwp + (size_t)s->K * CKK, *dout_t = in_t + (size_t)C * HW;
	float *rows = dout_t + (size_t)s->K * OHW;

	for (int n = 0; n < s->B; n++) {
		nn_cpu_transpose(in_t, in + (size_t)n * C * HW, C, HW);
		nn_cpu_transpose(dout_t, dout + (size_t)n * s->K * OHW, s->K, OHW);
		im2row_hwc(rows, in_t, s);
		nn_cpu_gemm_at(dwp, CKK, dout_t, rows, CKK, s->K, CKK, OHW, NULL, n > 0);
	}
	wgrad_from_hwc(dw, dwp, s);
}

/* Weight gradient of a same conv read in place (NN_CPU_DIRECT): per sample, the input
 * channel-last and zero-padded, xp (Hp*Ws, C) with Ws = W+P (a row's right padding is
 * the next row's left, as in conv_direct), and dout channel-last on the wide grid,
 * dt (H*Ws, K), zero in the junk columns.  For kernel row i, the patches' (j, c)
 * entries at wide position t are kw*C adjacent floats of xp from (t + i*Ws)*C on, so
 * dw' (K, (i, j, c)) += dt^T xp_i is nn_cpu_gemm_at's form with no im2row; junk
 * positions read past their row (into the slack after xp) but meet dout zeros. */
static void conv_weight_grad_same(float *dw, const float *dout, const float *in,
				  const struct nn_conv_shape *s, float *ws)
{
	const int C = s->C, K = s->K, H = s->H, W = s->W, P = s->pad, kk = s->kh * s->kw;
	const int Ws = W + P, Hp = H + 2 * P, HW = H * W, CKK = C * kk;
	float *dwp = ws, *xp = dwp + (size_t)K * CKK, *dt = xp + ((size_t)Hp * Ws + s->kw) * C;
	float *tmp = dt + (size_t)H * Ws * K;

	nn_fzero(xp, P * Ws * C);
	nn_fzero(xp + (size_t)(P + H) * Ws * C, (P * Ws + s->kw) * C);
	for (int n = 0; n < s->B; n++) {
		nn_cpu_transpose(tmp, in + (size_t)n * C * HW, C, HW);
		for (int h = 0; h < H; h++) {
			float *row = xp + (size_t)(P + h) * Ws * C;

			nn_fzero(row, P * C);
			nn_fcopy(row + P * C, tmp + (size_t)h * W * C, W * C);
		}
		nn_cpu_transpose(tmp, dout + (size_t)n * K * HW, K, HW);
		for (int h = 0; h < H; h++) {
			nn_fcopy(dt + (size_t)h * Ws * K, tmp + (size_t)h * W * K, W * K);
			nn_fzero(dt + ((size_t)h * Ws + W) * K, P * K);
		}
		for (int i = 0; i < s->kh; i++)
			nn_cpu_gemm_at(dwp + i * s->kw * C, CKK, dt, xp + (size_t)i * Ws * C, C, K,
				       s->kw * C, H * Ws, NULL, n > 0);
	}
	wgrad_from_hwc(dw, dwp, s);
}

/* Weight gradient through channel-last copies: with dout^T (OHW, K) and the patches as
 * rows (OHW, kh*kw*C), dw' (K, kh*kw*C) = sum over samples of dout rows, which is
 * nn_cpu_gemm_at's form (it runs about twice as fast as the dot products of
 * conv_weight_grad); dw is dw' with (i, j, c) reordered to (c, i, j).  Pays two
 * transposes per sample, which only larger K earn back. */
static int conv_use_hwc_wgrad(const struct nn_conv_shape *s)
{
	return s->K >= 32;	/* at K = 16 (resnet's first stage) it loses ~10% */
}

static size_t conv_hwc_wgrad_ws(const struct nn_conv_shape *s)
{
	size_t CKK = (size_t)s->C * s->kh * s->kw, OHW = (size_t)s->OH * s->OW;

	return (size_t)s->K * CKK + (size_t)s->C * s->H * s->W + (s->K + CKK) * OHW;
}

static size_t same_wgrad_ws(const struct nn_conv_shape *s)
{
	size_t Ws = (size_t)s->W + s->pad, Hp = (size_t)s->H + 2 * s->pad, HW = (size_t)s->H * s->W;
	size_t CKK = (size_t)s->C * s->kh * s->kw;

	return (size_t)s->K * CKK + (Hp * Ws + s->kw) * s->C + (size_t)s->H * Ws * s->K +
	       HW * (s->C > s->K ? s->C : s->K);
}

size_t nn_cpu_conv_wgrad_ws(const struct nn_conv_shape *s)
{
	size_t CKK = (size_t)s->C * s->kh * s->kw, OHW = (size_t)s->OH * s->OW;

	if (NN_CPU_DIRECT && nn_cpu_conv_is_same(s))
		return same_wgrad_ws(s);
	if (conv_use_hwc_wgrad(s))
		return conv_hwc_wgrad_ws(s);
	return (size_t)s->K * CKK + (CKK + s->K) * conv_chunk(s) * OHW;
}

void nn_cpu_conv_wgrad(float *dw, const float *dout, const float *in,
		       const struct nn_conv_shape *s, float *ws)
{
	if (NN_CPU_DIRECT && nn_cpu_conv_is_same(s))
		conv_weight_grad_same(dw, dout, in, s, ws);
	else if (conv_use_hwc_wgrad(s))
		conv_weight_grad_hwc(dw, dout, in, s, ws);
	else
		conv_weight_grad(dw, dout, in, s, ws);
}
