/* nn/cpu/ops_cpu_conv.c — convolution as matrix products (nn/cpu/ops_cpu_gemm.c) over im2col.
 *
 * Per sample, col (CKK = C*kh*kw, OHW) holds the input patches, and
 *   out  (K, OHW)  = w (K, CKK) col + b                 forward
 *   dcol (CKK, OHW) = w^T dout, din = col2im(dcol)      input gradient
 * (the weight gradient is in nn/cpu/ops_cpu_conv_wgrad.c).  A stride-1 conv with
 * pad < k (resnet's 3x3 same convs, lenet's 5x5) needs no col: the gemm reads kw
 * shifted copies of the zero-padded input (conv_direct).  Its input gradient is the
 * forward conv of dout with the flipped, transposed filters, which replaces col2im's
 * scattered adds and the zeroing of din.  A 1x1 stride-1 unpadded conv needs no col:
 * the input plane is one already. */
#include <string.h>
#include "nn/cpu/cpu.h"

/* Stride-1 square convs with pad < k (lenet's 5x5 unpadded one too: im2col copied
 * its input 25 times) run on nn_cpu_gemm_rows over kw copies (conv_direct), and so does
 * their input gradient, a conv of the same kind.  Not 1x1 unpadded: no copy at all. */
static int conv_is_direct(const struct nn_conv_shape *s)
{
	return s->stride == 1 && s->kh == s->kw && s->pad < s->kh &&
	       !nn_cpu_conv_is_pointwise(s);
}

/* The shape of din = conv(dout, flipped w) for a stride-1 conv: channels swap, the
 * pad becomes k-1-pad (the output is then H x W again). */
static void conv_transposed_shape(struct nn_conv_shape *t, const struct nn_conv_shape *s)
{
	nn_conv_shape_init(t, s->B, s->K, s->OH, s->OW, s->C, s->kh, 1, s->kh - 1 - s->pad);
}

/* A stride-1 conv read in place: per sample and input channel, kw
 * copies of the zero-padded plane (H+2p rows), copy j shifted left by j and cut to OW
 * columns: copy j at (r, ow) holds the padded input at (r, ow + j).  Row (c, i, j) of the
 * implicit im2col matrix is then copy j of plane c from row i on: OH*OW contiguous
 * floats, exactly the output grid.  (One padded plane read at shifts of j needs a wide
 * output grid whose junk columns cost as much as used ones, 72 columns of work for 64
 * on resnet's 8x8 planes, and a compaction copy afterwards; kw copies of the input
 * cost far less than that.)  Layout (C, kw, H+2p, OW).
 *
 * A 3x3 same conv (resnet's) needs only the unshifted copy, (C, H+2, W): the gemm makes
 * the shifted rows in registers (nn_cpu_gemm_same3).  16 floats of slack before the
 * copy and 32 after keep its loads inside ws; the row-edge masks follow. */
static int direct_same3(const struct nn_conv_shape *s)
{
	return s->kw == 3 && s->pad == 1 && s->OW == s->W;
}

static size_t edge_floats(const struct nn_conv_shape *s)
{
	return ((size_t)(s->H * s->W + 15) / 16 * sizeof(uint16_t[2]) + 3) / sizeof(float);
}

/* Floats of the padded copy, with its slack */
static size_t same3_planes(const struct nn_conv_shape *s)
{
	return 16 + (size_t)s->C * (s->H + 2) * s->W + 32;
}

static size_t direct_ws(const struct nn_conv_shape *s)
{
	if (direct_same3(s))
		return same3_planes(s) + edge_floats(s);
	return (size_t)s->C * s->kw * (s->H + 2 * s->pad) * s->OW;
}

/* edge[t][0] clears the lanes of vector t (columns 16t..16t+15 of an n-float plane w
 * wide) in a row's first column, edge[t][1] those in its last */
static void plane_edges(uint16_t (*edge)[2], int n, int w)
{
	for (int t = 0, col = 0; t < (n + 15) / 16; t++) {
		unsigned l = 0xffff, r = 0xffff;

		for (int b = 0; b < 16; b++, col = col + 1 == w ? 0 : col + 1) {
			if (col == 0)
				l &= ~(1u << b);
			if (col == w - 1)
				r &= ~(1u << b);
		}
		edge[t][0] = (uint16_t)l, edge[t][1] = (uint16_t)r;
	}
}

/* conv_direct of a 3x3 same conv: one padded copy per sample */
static void conv_same3(float *out, const float *in, const float *at, const float *bias,
		       const struct nn_conv_shape *s, float *ws, const float *add)
{
	const int C = s->C, K = s->K, HW = s->H * s->W;
	const size_t ps = (size_t)(s->H + 2) * s->W, planes = same3_planes(s);
	uint16_t (*edge)[2] = (uint16_t (*)[2])(ws + planes);
	struct nn_gemm_same3 rows = { .p = ws + 16, .ps = ps, .W = s->W, .nc = C,
				      .edge = (const uint16_t (*)[2])edge };

	plane_edges(edge, HW, s->W);
	nn_fzero(ws, (int)planes);	/* the padding rows and slack, once */
	for (int n = 0; n < s->B; n++) {
		const float *x = in + (size_t)n * C * HW;

		for (int c = 0; c < C; c++)
			nn_fcopy(ws + 16 + c * ps + s->W, x + (size_t)c * HW, HW);
		nn_cpu_gemm_same3(out + (size_t)n * K * HW, (size_t)HW, at, &rows, K, HW, bias,
				  add ? add + (size_t)n * K * HW : NULL);
	}
}

/* out (B, K, OH, OW) = the conv of in (B, C, H, W), filters given as at (C*kk, K),
 * + add (as out) when add is not NULL */
static void conv_direct(float *out, const float *in, const float *at, const float *bias,
			const struct nn_conv_shape *s, float *ws, const float *add)
{
	const int C = s->C, K = s->K, H = s->H, W = s->W, P = s->pad, kw = s->kw;
	const int Hp = H + 2 * P, OW = s->OW, OHW = s->OH * s->OW;
	const size_t cs = (size_t)Hp * OW;	/* one copy */
	struct nn_gemm_rows rows = { .p = ws, .ps = kw * cs, .rs = (size_t)OW, .qs = cs,
				     .nc = C, .kh = s->kh, .kw = kw };

	if (direct_same3(s)) {
		conv_same3(out, in, at, bias, s, ws, add);
		return;
	}
	/* the padding: the same zeros for every sample, laid down once */
	nn_fzero(ws, (int)(C * kw * cs));
	for (int n = 0; n < s->B; n++) {
		const float *x = in + (size_t)n * C * H * W;

		for (int c = 0; c < C; c++)
			for (int j = 0; j < kw; j++) {
				float *d = ws + ((size_t)c * kw + j) * cs + (size_t)P * OW;
				const float *xc = x + (size_t)c * H * W;
				/* columns ow with input column ow + j - P in [0, W) */
				int ow0 = P - j > 0 ? P - j : 0;
				int ow1 = W + P - j < OW ? W + P - j : OW;

				if (ow0 == 0 && ow1 == W && OW == W) {	/* unshifted: one block */
					nn_fcopy(d, xc, H * W);
					continue;
				}
				for (int h = 0; h < H; h++)
					nn_fcopy(d + (size_t)h * OW + ow0, xc + (size_t)h * W + ow0 + j - P,
						 ow1 - ow0);
			}
		nn_cpu_gemm_rows(out + (size_t)n * K * OHW, (size_t)OHW, at, &rows, K, OHW, bias, 0,
				 add ? add + (size_t)n * K * OHW : NULL);
	}
}

/* K*CKK floats (w^T or the flipped filters), then: forward: one col, or the shifted
 * padded copies of conv_direct; input grad: one dcol, or the same for the
 * transposed conv.  The weight gradient has its own layout (nn/cpu/ops_cpu_conv_wgrad.c). */
size_t nn_cpu_conv_ws_floats(struct nn_backend *be, const struct nn_conv_shape *s)
{
	size_t CKK = (size_t)s->C * s->kh * s->kw, OHW = (size_t)s->OH * s->OW;
	size_t need = nn_cpu_conv_is_pointwise(s) ? 0 : CKK * OHW, wg = nn_cpu_conv_wgrad_ws(s);

	if (conv_is_direct(s) && direct_ws(s) > need)
		need = direct_ws(s);
	if (conv_is_direct(s) || nn_cpu_conv_is_same(s)) {	/* the input gradient's */
		struct nn_conv_shape t;

		conv_transposed_shape(&t, s);
		if (direct_ws(&t) > need)
			need = direct_ws(&t);
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
		conv_direct(out, in, wt, b, s, col, NULL);
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
 * (K*kh*kw, C).  + add when add is not NULL. */
static void conv_same_input_grad(float *din, const float *dout, const float *w,
				 const struct nn_conv_shape *s, float *ws, const float *add)
{
	const int kk = s->kh * s->kw;
	struct nn_conv_shape t;
	float *at = ws, *col = ws + (size_t)s->K * s->C * kk;

	conv_transposed_shape(&t, s);
	for (int k = 0; k < s->K; k++)
		for (int c = 0; c < s->C; c++)
			for (int q = 0; q < kk; q++)
				at[((size_t)k * kk + (kk - 1 - q)) * s->C + c] = w[((size_t)k * s->C + c) * kk + q];
	conv_direct(din, dout, at, NULL, &t, col, add);
}

/* conv_bwd, and din += add when add is not NULL: in the store of din's tiles when the
 * input gradient is a direct conv, else as add_fwd would, after it (x + y == y + x) */
void nn_cpu_conv_bwd_add(struct nn_backend *be, float *din, const float *add, float *dw,
			 float *db, const float *dout, const float *in, const float *w,
			 const struct nn_conv_shape *s, float *ws)
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
		conv_same_input_grad(din, dout, w, s, ws, add);
		return;
	}
	/* dcol (CKK, OHW) = w^T dout: w (K, CKK) is already w^T transposed.  (A pointwise
	 * conv is "same" and never gets here.) */
	for (int n = 0; n < s->B; n++) {
		nn_cpu_gemm_at(ws, OHW, w, dout + n * out_sz, OHW, CKK, OHW, s->K, NULL, 0);
		nn_cpu_col2im(din + n * in_sz, ws, OHW, s);
	}
	if (add)
		nn_fadd(din, add, (int)(s->B * in_sz));
}

void nn_cpu_conv_bwd(struct nn_backend *be, float *din, float *dw, float *db, const float *dout,
		     const float *in, const float *w, const struct nn_conv_shape *s, float *ws)
{
	nn_cpu_conv_bwd_add(be, din, NULL, dw, db, dout, in, w, s, ws);
}
