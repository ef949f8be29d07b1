/* nn/cpu/ops_cpu_conv_wgrad.c — the weight gradient of a conv, dw (K, C, kh, kw) =
 * sum over samples of dout (K, OHW) col^T, in three ways, fastest first:
 *   same convs                     channel-last input read in place (no im2row), dout as is
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

/* Weight gradient of a same conv: per sample, the input channel-last
 * and zero-padded, xp (Hp*Ws, C) with Ws = W+P (a row's right padding is the next row's
 * left, as the padding rows of conv_direct).  For kernel row i, the patch of output
 * position (h, w) in (j, c) order is kw*C adjacent floats of xp from ((h+i)*Ws + w)*C
 * on, so dw' (K, (i, j, c)) += dout xp_i, summed over positions in order, is
 * nn_cpu_gemm_rows_a's form with dout's planes read in place as A (no transpose of
 * dout, and no junk positions: B's rows skip the padding column at each row end).
 * Each sum is the one a channel-last dout on the wide grid H x Ws gave, less the
 * junk positions' zero products. */
static void conv_weight_grad_same(float *dw, const float *dout, const float *in,
				  const struct nn_conv_shape *s, float *ws)
{
	const int C = s->C, K = s->K, H = s->H, W = s->W, P = s->pad, kw = s->kw;
	const int Ws = W + P, Hp = H + 2 * P, HW = H * W, CKK = C * s->kh * kw;
	float *dwp = ws, *xp = dwp + (size_t)K * CKK, *tmp = xp + ((size_t)Hp * Ws + kw) * C;
	/* blocks of 16 channels x 16 positions transpose straight into xp: the positions
	 * are two runs of 8 in one row each */
	const int direct = C % 16 == 0 && W % 8 == 0 && HW % 16 == 0;

	/* the padding: the same zeros for every sample, laid down once */
	nn_fzero(xp, (Hp * Ws + kw) * C);
	for (int n = 0; n < s->B; n++) {
		const float *x = in + (size_t)n * C * HW;

		if (direct) {
			const float *nx = C > 16 && n + 1 < s->B ? x + (size_t)C * HW : NULL;

			for (int p0 = 0; p0 < HW; p0 += 16) {
				size_t r0 = (size_t)(P + p0 / W) * Ws + P + p0 % W;
				size_t r8 = (size_t)(P + (p0 + 8) / W) * Ws + P + (p0 + 8) % W;

				for (int c0 = 0; c0 < C; c0 += 16) {
					const float *src = x + (size_t)c0 * HW + p0;

					/* The C planes are read in step, a line of each per
					 * 16 positions, from far (the forward pass wrote them
					 * long ago).  The hardware prefetcher follows 16 such
					 * streams, not 32 or 64: then each block asks for its
					 * 16 lines' worth of the next sample, in order, one
					 * stream (the transposes of resnet's second and third
					 * stages 30% and 45% faster, cold; the first stage's
					 * are fastest without) */
					if (nx)
						for (int l = 0; l < 16; l++, nx += 16)
							__builtin_prefetch(nx, 0, 3);
					nn_cpu_transpose16(xp + r0 * C + c0, xp + r8 * C + c0, C, src, HW);
				}
			}
		} else {
			nn_cpu_transpose(tmp, x, C, HW);
			for (int h = 0; h < H; h++)
				nn_fcopy(xp + ((size_t)(P + h) * Ws + P) * C, tmp + (size_t)h * W * C,
					 W * C);
		}
		for (int i = 0; i < s->kh; i++) {
			struct nn_gemm_rows rows = { .p = xp + (size_t)i * Ws * C,
						     .ps = (size_t)Ws * C, .qs = (size_t)C,
						     .nc = H, .kh = 1, .kw = W };

			nn_cpu_gemm_rows_a(dwp + i * kw * C, CKK, dout + (size_t)n * K * HW,
					   (size_t)HW, 1, &rows, K, kw * C, n > 0);
		}
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

	return (size_t)s->K * CKK + (Hp * Ws + s->kw) * s->C + HW * s->C;
}

size_t nn_cpu_conv_wgrad_ws(const struct nn_conv_shape *s)
{
	size_t CKK = (size_t)s->C * s->kh * s->kw, OHW = (size_t)s->OH * s->OW;

	if (nn_cpu_conv_is_same(s))
		return same_wgrad_ws(s);
	if (conv_use_hwc_wgrad(s))
		return conv_hwc_wgrad_ws(s);
	return (size_t)s->K * CKK + (CKK + s->K) * conv_chunk(s) * OHW;
}

void nn_cpu_conv_wgrad(float *dw, const float *dout, const float *in,
		       const struct nn_conv_shape *s, float *ws)
{
	if (nn_cpu_conv_is_same(s))
		conv_weight_grad_same(dw, dout, in, s, ws);
	else if (conv_use_hwc_wgrad(s))
		conv_weight_grad_hwc(dw, dout, in, s, ws);
	else
		conv_weight_grad(dw, dout, in, s, ws);
}
