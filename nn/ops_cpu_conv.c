/* nn/ops_cpu_conv.c — convolution as matrix products (nn/ops_cpu_gemm.c) over im2col.
 *
 * Per sample, col (CKK = C*kh*kw, OHW) holds the input patches, and
 *   out  (K, OHW)  = w (K, CKK) col + b                 forward
 *   dcol (CKK, OHW) = w^T dout, din = col2im(dcol)      input gradient
 * (the weight gradient is in nn/ops_cpu_conv_wgrad.c).  A stride-1 "same" conv
 * (2*pad == k-1: resnet's 3x3 and 1x1) needs no col with NN_CPU_DIRECT: the gemm reads
 * the zero-padded input in place (conv_same_direct).  Its input gradient is the
 * forward conv of dout with the flipped, transposed filters, which replaces col2im's
 * scattered adds and the zeroing of din.  A 1x1 stride-1 unpadded conv needs no col:
 * the input plane is one already. */
#include <cblas.h>
#include <string.h>
#include "nn/ops_impl.h"

int nn_cpu_conv_is_pointwise(const struct nn_conv_shape *s)
{
	return s->kh == 1 && s->kw == 1 && s->stride == 1 && s->pad == 0;
}

/* Output plane == input plane, one patch row is the input plane shifted. */
int nn_cpu_conv_is_same(const struct nn_conv_shape *s)
{
	return s->stride == 1 && s->kh == s->kw && 2 * s->pad == s->kh - 1;
}

/* The output columns ow whose input column ow*S - P + j lies inside [0, W). */
static void conv_valid_cols(const struct nn_conv_shape *s, int j, int *ow0, int *ow1)
{
	int lo = s->pad - j > 0 ? (s->pad - j + s->stride - 1) / s->stride : 0;
	int last = s->W - 1 + s->pad - j;
	int hi = last < 0 ? 0 : last / s->stride + 1;

	if (hi > s->OW)
		hi = s->OW;
	if (lo > hi)
		lo = hi;
	*ow0 = lo, *ow1 = hi;
}

/* im2col for a same conv: row (c,i,j) is plane c shifted by (i - pad, j - pad), so
 * it is one contiguous copy followed by zeroing the rows and columns that fell
 * outside (no per-row calls: planes of 8x8 make rows short). */
static void im2col_same(float *restrict col, size_t ld, const float *restrict in,
			const struct nn_conv_shape *s)
{
	const int H = s->H, W = s->W, HW = H * W;

	for (int c = 0; c < s->C; c++)
		for (int i = 0; i < s->kh; i++)
			for (int j = 0; j < s->kw; j++) {
				float *restrict row = col + (size_t)((c * s->kh + i) * s->kw + j) * ld;
				const float *restrict plane = in + (size_t)c * HW;
				int di = i - s->pad, dj = j - s->pad, off = di * W + dj;
				int oh0 = di < 0 ? -di : 0, oh1 = di > 0 ? H - di : H;
				int t0 = oh0 * W, t1 = oh1 * W;

				/* the span row[t] = plane[t + off] that stays inside the plane */
				int a = t0 + off < 0 ? -off : t0, b = t1 + off > HW ? HW - off : t1;

				if (oh0 >= oh1) {
					nn_fzero(row, HW);
					continue;
				}
				nn_fzero(row, a);
				nn_fcopy(row + a, plane + a + off, b - a);
				nn_fzero(row + b, HW - b);
				if (dj < 0)
					for (int oh = oh0; oh < oh1; oh++)
						for (int ow = 0; ow < -dj && ow < W; ow++)
							row[oh * W + ow] = 0.0f;
				else if (dj > 0)
					for (int oh = oh0; oh < oh1; oh++)
						for (int ow = W - dj < 0 ? 0 : W - dj; ow < W; ow++)
							row[oh * W + ow] = 0.0f;
			}
}

/* col rows (C*kh*kw of them, ld apart) from one sample's input (C, H, W): OH*OW
 * columns, padding read as zero */
static void im2col(float *restrict col, size_t ld, const float *restrict in,
		   const struct nn_conv_shape *s)
{
	const int S = s->stride, OW = s->OW;

	for (int c = 0; c < s->C; c++)
		for (int i = 0; i < s->kh; i++)
			for (int j = 0; j < s->kw; j++) {
				float *restrict row = col + (size_t)((c * s->kh + i) * s->kw + j) * ld;
				int ow0, ow1;

				conv_valid_cols(s, j, &ow0, &ow1);
				for (int oh = 0; oh < s->OH; oh++) {
					float *restrict r = row + (size_t)oh * OW;
					int h = oh * S - s->pad + i;

					if (h < 0 || h >= s->H) {
						nn_fzero(r, OW);
						continue;
					}
					const float *restrict src = in + ((size_t)c * s->H + h) * s->W +
								    ow0 * S - s->pad + j;

					nn_fzero(r, ow0);
					if (S == 1)
						nn_fcopy(r + ow0, src, ow1 - ow0);
					else
						for (int ow = ow0; ow < ow1; ow++)
							r[ow] = src[(size_t)(ow - ow0) * S];
					nn_fzero(r + ow1, OW - ow1);
				}
			}
}

/* din (C, H, W) = sum of the patches in col (rows ld apart): the adjoint of im2col */
static void col2im(float *restrict din, const float *restrict col, size_t ld,
		   const struct nn_conv_shape *s)
{
	const int S = s->stride, OW = s->OW;

	memset(din, 0, (size_t)s->C * s->H * s->W * sizeof(float));
	for (int c = 0; c < s->C; c++)
		for (int i = 0; i < s->kh; i++)
			for (int j = 0; j < s->kw; j++) {
				const float *restrict row = col + (size_t)((c * s->kh + i) * s->kw + j) * ld;
				int ow0, ow1;

				conv_valid_cols(s, j, &ow0, &ow1);
				for (int oh = 0; oh < s->OH; oh++) {
					int h = oh * S - s->pad + i;

					if (h < 0 || h >= s->H)
						continue;
					const float *restrict r = row + (size_t)oh * OW + ow0;
					float *restrict dst = din + ((size_t)c * s->H + h) * s->W +
							      ow0 * S - s->pad + j;
					int n = ow1 - ow0, t = 0;

					if (S == 1) {
						nn_fadd(dst, r, n);
					} else {
						for (; t < n; t++)
							dst[(size_t)t * S] += r[t];
					}
				}
			}
}

void nn_cpu_im2col(float *col, size_t ld, const float *in, const struct nn_conv_shape *s)
{
	if (nn_cpu_conv_is_same(s))
		im2col_same(col, ld, in, s);
	else
		im2col(col, ld, in, s);
}

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
 * (C, H+2p, W+2p), the output computed on the wide grid (K, OH, W+2p) whose last
 * W+2p-OW columns of each row are junk, then compacted.  Row (c, i, j) of the implicit
 * im2col matrix is then the padded plane c from (i, j) on, contiguous.  The junk
 * columns read up to kw-1 floats past a plane: the slack after the last one. */
static size_t direct_ws(const struct nn_conv_shape *s)
{
	size_t Wp = (size_t)s->W + 2 * s->pad, Hp = (size_t)s->H + 2 * s->pad;

	return (size_t)s->C * Hp * Wp + s->kw - 1 + (size_t)s->K * s->OH * Wp;
}

/* out (B, K, OH, OW) = the conv of in (B, C, H, W), filters given as at (C*kk, K) */
static void conv_direct(float *out, const float *in, const float *at, const float *bias,
			const struct nn_conv_shape *s, float *ws)
{
	const int C = s->C, K = s->K, H = s->H, W = s->W, P = s->pad, Wp = W + 2 * P;
	const int Hp = H + 2 * P, OH = s->OH, OW = s->OW;
	float *pad = ws, *wide = ws + (size_t)C * Hp * Wp + s->kw - 1;
	struct nn_gemm_rows rows = { .p = pad, .ps = (size_t)Hp * Wp, .rs = (size_t)Wp,
				     .nc = C, .kh = s->kh, .kw = s->kw };

	nn_fzero(pad + (size_t)C * Hp * Wp, s->kw - 1);
	for (int n = 0; n < s->B; n++) {
		const float *x = in + (size_t)n * C * H * W;
		float *o = out + (size_t)n * K * OH * OW;

		for (int c = 0; c < C; c++) {
			float *d = pad + (size_t)c * Hp * Wp;

			nn_fzero(d, P * Wp);
			d += P * Wp;
			for (int h = 0; h < H; h++, d += Wp) {
				nn_fzero(d, P);
				nn_fcopy(d + P, x + ((size_t)c * H + h) * W, W);
				nn_fzero(d + P + W, P);
			}
			nn_fzero(d, P * Wp);
		}
		nn_cpu_gemm_rows(wide, (size_t)OH * Wp, at, &rows, K, OH * Wp, bias, 0);
		for (int k = 0; k < K; k++)
			for (int h = 0; h < OH; h++)
				nn_fcopy(o + ((size_t)k * OH + h) * OW, wide + ((size_t)k * OH + h) * Wp,
					 OW);
	}
}

/* K*CKK floats (w^T or the flipped filters), then: forward: one col, or the padded
 * input and wide output of conv_same_direct; input grad: one dcol, or the same for the
 * transposed conv.  The weight gradient has its own layout (nn/ops_cpu_conv_wgrad.c). */
size_t nn_cpu_conv_ws_floats(const struct nn_conv_shape *s)
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

void nn_cpu_conv_fwd(float *out, const float *in, const float *w, const float *b,
		     const struct nn_conv_shape *s, float *ws)
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
		im2col_same(col, HW, dout + (size_t)n * s->K * HW, &t);
		nn_cpu_gemm_at(din + (size_t)n * s->C * HW, HW, at, col, HW, s->C, HW, s->K * kk, NULL, 0);
	}
}

void nn_cpu_conv_bwd(float *din, float *dw, float *db, const float *dout,
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
		col2im(din + n * in_sz, ws, OHW, s);
	}
}
