/* nn/cpu/ops_cpu_conv.c — convolution as matrix products (nn/cpu/ops_cpu_gemm.c) over im2col.
 *
 * Per sample, col (CKK = C*kh*kw, OHW) holds the input patches, and
 *   out  (K, OHW)  = w (K, CKK) col + b                 forward
 *   dcol (CKK, OHW) = w^T dout, din = col2im(dcol)      input gradient
 * (the weight gradient is in nn/cpu/ops_cpu_conv_wgrad.c).  A stride-1 "same" conv
 * (2*pad == k-1: resnet's 3x3 and 1x1) needs no col with NN_CPU_DIRECT: the gemm reads
 * the zero-padded input in place (conv_same_direct).  Its input gradient is the
 * forward conv of dout with the flipped, transposed filters, which replaces col2im's
 * scattered adds and the zeroing of din.  A 1x1 stride-1 unpadded conv needs no col:
 * the input plane is one already. */
#include <cblas.h>
#include <string.h>
#include "nn/cpu/cpu.h"

/* Stride-1 square convs with pad < k (lenet's 5x5 unpadded one too: im2col copied
 * its input 25 times) run on nn_cpu_gemm_rows in place (conv_direct), and so does
 * their input gradient, a conv of the same kind.  Not 1x1 unpadded: no copy at all. */
static int conv_is_direct(const struct nn_conv_shape *s)
{
	return NN_CPU_DIRECT && s->stride == 1 && s->kh == s->kw && s->pad < s->kh &&
	       !nn_cpu_conv_is_pointwise(s);
}

/* The shape of din = conv(dout, flipped w) for a stride-1 conv: channels swap, the
 * pad becomes k-1-pad (the output is then H x W again). */
static void conv_transposed_shape(struct nn_conv_shape *t, const struct nn_conv_shape *s)
{
	nn_conv_shape_init(t, s->B, s->K, s->OH, s->OW, s->C, s->kh, 1, s->kh - 1 - s->pad);
}

/* A stride-1 conv read in place (NN_CPU_DIRECT): each sample's input zero-padded to
 * (C, H+2p, W+p): a row is p zeros then the W values, and its right padding is the left
 * padding of the next row (of the bottom rows, of the next plane).  The output is
 * computed on the wide grid (K, OH, W+p) whose last W+p-OW columns of each row are
 * junk, then compacted.  Row (c, i, j) of the implicit im2col matrix is then the padded
 * plane c from (i, j) on, contiguous.  The junk columns read up to kw-1 floats past a
 * plane: the slack after the last one.  (Sharing the padding column makes the wide
 * grid p columns narrower: resnet's 8x8 planes did 10 columns of work for 8.) */
static size_t direct_ws(const struct nn_conv_shape *s)
{
	size_t Ws = (size_t)s->W + s->pad, Hp = (size_t)s->H + 2 * s->pad;

	return (size_t)s->C * Hp * Ws + s->kw - 1 + (size_t)s->K * s->OH * Ws;
}

/* out (B, K, OH, OW) = the conv of in (B, C, H, W), filters given as at (C*kk, K) */
static void conv_direct(float *out, const float *in, const float *at, const float *bias,
			const struct nn_conv_shape *s, float *ws)
{
	const int C = s->C, K = s->K, H = s->H, W = s->W, P = s->pad, Ws = W + P;
	const int Hp = H + 2 * P, OH = s->OH, OW = s->OW;
	float *pad = ws, *wide = ws + (size_t)C * Hp * Ws + s->kw - 1;
	struct nn_gemm_rows rows = { .p = pad, .ps = (size_t)Hp * Ws, .rs = (size_t)Ws,
				     .nc = C, .kh = s->kh, .kw = s->kw };

	nn_fzero(pad + (size_t)C * Hp * Ws, s->kw - 1);
	for (int n = 0; n < s->B; n++) {
		const float *x = in + (size_t)n * C * H * W;
		float *o = out + (size_t)n * K * OH * OW;

		for (int c = 0; c < C; c++) {
			float *d = pad + (size_t)c * Hp * Ws;

			nn_fzero(d, P * Ws);
			d += P * Ws;
			for (int h = 0; h < H; h++, d += Ws) {
				nn_fzero(d, P);
				nn_fcopy(d + P, x + ((size_t)c * H + h) * W, W);
			}
			nn_fzero(d, P * Ws);
		}
		nn_cpu_gemm_rows(wide, (size_t)OH * Ws, at, &rows, K, OH * Ws, bias, 0);
		for (int k = 0; k < K; k++)
			for (int h = 0; h < OH; h++)
				nn_fcopy(o + ((size_t)k * OH + h) * OW, wide + ((size_t)k * OH + h) * Ws,
					 OW);
	}
}

/* K*CKK floats (w^T or the flipped filters), then: forward: one col, or the padded
 * input and wide output of conv_same_direct; input grad: one dcol, or the same for the
 * transposed conv.  The weight gradient has its own layout (nn/cpu/ops_cpu_conv_wgrad.c). */
size_t nn_cpu_conv_ws_floats(struct nn_backend *be, const struct nn_conv_shape *s)
{
	size_t CKK = (size_t)s->C * s->kh * s->kw, OHW = (size_t)s->OH * s->OW;
	size_t need = nn_cpu_conv_is_pointwise(s) ? 0 : CKK * OHW, wg = nn_cpu_conv_wgrad_ws(s);

	if (nn_cpu_conv_is_same(s)) {
		size_t din = (size_t)s->K * s->kh * s->kw * s->H * s->W;

		if (din > need)
			need = din;
	}
	if (conv_is_direct(s)) {
		struct nn_conv_shape t;

		conv_transposed_shape(&t, s);
		size_t f = direct_ws(s), b = direct_ws(&t);

		if (f > need)
			need = f;
		if (b > need)
			need = b;
	}
	need += (size_t)s->K * CKK;
	return need > wg ? need : wg;
}

void nn_cpu_conv_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
		     const float *b, const struct nn_conv_shape *s, float *ws)
{
	const int CKK = s->C * s->kh * s->kw, OHW = s->OH * s->OW;
	const size_t in_sz = (size_t)s->C * s->H * s->W, out_sz = (size_t)s->K * OHW;
	float *wt = ws, *col = ws + (size_t)s->K * CKK;

	nn_cpu_transpose(wt, w, s->K, CKK);
	if (conv_is_direct(s)) {
		conv_direct(out, in, wt, b, s, col);
		return;
	}
	for (int n = 0; n < s->B; n++) {
		const float *bm = in + n * in_sz;

		if (!nn_cpu_conv_is_pointwise(s)) {
			nn_cpu_im2col(col, OHW, bm, s);
			bm = col;
		}
		nn_cpu_gemm_at(out + n * out_sz, OHW, wt, bm, OHW, s->K, OHW, CKK, b, 0);
	}
}

/* db (K) = dout summed over batch and plane */
static void conv_bias_grad(float *db, const float *dout, const struct nn_conv_shape *s)
{
	const int OHW = s->OH * s->OW;

	memset(db, 0, (size_t)s->K * sizeof(float));
	for (int n = 0; n < s->B; n++)
		for (int k = 0; k < s->K; k++)
			db[k] += nn_cpu_sum(dout + ((size_t)n * s->K + k) * OHW, OHW);
}

/* din of a same (or direct) conv: the forward conv of dout with filters (C, K, kh, kw)
 * that are w transposed and flipped in space; given to the gemm transposed:
 * (K*kh*kw, C) */
static void conv_same_input_grad(float *din, const float *dout, const float *w,
				 const struct nn_conv_shape *s, float *ws)
{
	const int kk = s->kh * s->kw, HW = s->H * s->W;
	struct nn_conv_shape t;
	float *at = ws, *col = ws + (size_t)s->K * s->C * kk;

	conv_transposed_shape(&t, s);
	for (int k = 0; k < s->K; k++)
		for (int c = 0; c < s->C; c++)
			for (int q = 0; q < kk; q++)
				at[((size_t)k * kk + (kk - 1 - q)) * s->C + c] = w[((size_t)k * s->C + c) * kk + q];
	if (NN_CPU_DIRECT) {
		conv_direct(din, dout, at, NULL, &t, col);
		return;
	}
	for (int n = 0; n < s->B; n++) {
		nn_cpu_im2col(col, HW, dout + (size_t)n * s->K * HW, &t);	/* t is a same conv */
		nn_cpu_gemm_at(din + (size_t)n * s->C * HW, HW, at, col, HW, s->C, HW, s->K * kk, NULL, 0);
	}
}

void nn_cpu_conv_bwd(struct nn_backend *be, float *din, float *dw, float *db, const float *dout,
		     const float *in, const float *w, const struct nn_conv_shape *s, float *ws)
{
	const int CKK = s->C * s->kh * s->kw, OHW = s->OH * s->OW;
	const size_t in_sz = (size_t)s->C * s->H * s->W, out_sz = (size_t)s->K * OHW;

	if (db)
		conv_bias_grad(db, dout, s);
	if (dw)
		nn_cpu_conv_wgrad(dw, dout, in, s, ws);
	if (!din)
		return;
	if (nn_cpu_conv_is_same(s) || conv_is_direct(s)) {
		conv_same_input_grad(din, dout, w, s, ws);
		return;
	}
	/* dcol (CKK, OHW) = w^T dout: w (K, CKK) is already w^T transposed.  (A pointwise
	 * conv is "same" and never gets here.) */
	for (int n = 0; n < s->B; n++) {
		nn_cpu_gemm_at(ws, OHW, w, dout + n * out_sz, OHW, CKK, OHW, s->K, NULL, 0);
		nn_cpu_col2im(din + n * in_sz, ws, OHW, s);
	}
}
