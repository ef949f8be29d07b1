/* nn/ops_cpu_conv.c — convolution as matrix products (im2col + sgemm).
 *
 * col (C*kh*kw, m*OH*OW) holds the input patches of m samples side by side, and
 *   out  (K, m*OHW)  = w (K, CKK) col                      forward
 *   dw   (K, CKK)   += dout (K, m*OHW) col^T               backward, weights
 *   dcol (CKK, m*OHW) = w^T dout, din = col2im(dcol)       backward, input
 * in row-major with the transposes given to sgemm.  Small planes are batched (m > 1)
 * because sgemm is slow on few columns; large ones go one sample at a time straight
 * into out.  A stride-1 "same" conv (2*pad == k-1, resnet's 3x3) takes its input
 * gradient as the forward conv of dout with the flipped, transposed filters: an im2col
 * of dout replaces col2im's scattered adds and the zeroing of din. */
#include <cblas.h>
#include <string.h>
#include "nn/ops_impl.h"

/* Output plane == input plane, one patch row is the input plane shifted. */
static int conv_is_same(const struct nn_conv_shape *s)
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

/* Inline copies: rows are short (8 floats in resnet's last stage), too short to pay
 * for a libc call each. */
static inline void fcopy(float *restrict dst, const float *restrict src, int n)
{
	int t = 0;

	for (; t + NN_CPU_VL <= n; t += NN_CPU_VL)
		for (int q = 0; q < NN_CPU_VL; q++)
			dst[t + q] = src[t + q];
	for (; t < n; t++)
		dst[t] = src[t];
}

static inline void fzero(float *restrict dst, int n)
{
	int t = 0;

	for (; t + NN_CPU_VL <= n; t += NN_CPU_VL)
		for (int q = 0; q < NN_CPU_VL; q++)
			dst[t + q] = 0.0f;
	for (; t < n; t++)
		dst[t] = 0.0f;
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
					fzero(row, HW);
					continue;
				}
				fzero(row, a);
				fcopy(row + a, plane + a + off, b - a);
				fzero(row + b, HW - b);
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
						fzero(r, OW);
						continue;
					}
					const float *restrict src = in + ((size_t)c * s->H + h) * s->W +
								    ow0 * S - s->pad + j;

					fzero(r, ow0);
					if (S == 1)
						fcopy(r + ow0, src, ow1 - ow0);
					else
						for (int ow = ow0; ow < ow1; ow++)
							r[ow] = src[(size_t)(ow - ow0) * S];
					fzero(r + ow1, OW - ow1);
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
						for (; t + NN_CPU_VL <= n; t += NN_CPU_VL)
							for (int q = 0; q < NN_CPU_VL; q++)
								dst[t + q] += r[t + q];
						for (; t < n; t++)
							dst[t] += r[t];
					} else {
						for (; t < n; t++)
							dst[(size_t)t * S] += r[t];
					}
				}
			}
}

/* Samples per sgemm: planes smaller than NN_CONV_COLS are batched until sgemm sees
 * that many columns; the col block then stays a few MB at most. */
#ifndef NN_CONV_COLS
#define NN_CONV_COLS 256
#endif

static int conv_chunk(const struct nn_conv_shape *s)
{
	int ohw = s->OH * s->OW, nb = (NN_CONV_COLS + ohw - 1) / ohw;

	return nb < s->B ? nb : s->B;
}

static void conv_im2col(float *col, size_t ld, const float *in, const struct nn_conv_shape *s)
{
	if (conv_is_same(s))
		im2col_same(col, ld, in, s);
	else
		im2col(col, ld, in, s);
}

/* (CKK + K) * chunk * OHW for the col and the batched out/dout; a same conv's input
 * gradient runs the forward on the transposed shape and needs the flipped filters. */
static size_t conv_fwd_ws(const struct nn_conv_shape *s)
{
	size_t cols = (size_t)conv_chunk(s) * s->OH * s->OW;

	return ((size_t)s->C * s->kh * s->kw + (conv_chunk(s) > 1 ? s->K : 0)) * cols;
}

/* The shape of din = conv(dout, flipped w) for a same conv: channels swap. */
static void conv_transposed_shape(struct nn_conv_shape *t, const struct nn_conv_shape *s)
{
	nn_conv_shape_init(t, s->B, s->K, s->H, s->W, s->C, s->kh, 1, s->pad);
}

/* Backward: dw^T (or the flipped filters) first, then the col and dout blocks (or the
 * workspace of the transposed forward). */
size_t nn_cpu_conv_ws_floats(const struct nn_conv_shape *s)
{
	size_t cols = (size_t)conv_chunk(s) * s->OH * s->OW;
	size_t CKK = (size_t)s->C * s->kh * s->kw;
	size_t bwd = (CKK + s->K) * cols, fwd = conv_fwd_ws(s);

	if (conv_is_same(s)) {
		struct nn_conv_shape t;

		conv_transposed_shape(&t, s);
		if (conv_fwd_ws(&t) > bwd)
			bwd = conv_fwd_ws(&t);
	}
	bwd += (size_t)s->K * CKK;
	return fwd > bwd ? fwd : bwd;
}

void nn_cpu_conv_fwd(float *out, const float *in, const float *w, const float *b,
		     const struct nn_conv_shape *s, float *ws)
{
	const int CKK = s->C * s->kh * s->kw, OHW = s->OH * s->OW, nb = conv_chunk(s);
	const size_t in_sz = (size_t)s->C * s->H * s->W, out_sz = (size_t)s->K * OHW;

	for (int n0 = 0; n0 < s->B; n0 += nb) {
		int m = s->B - n0 < nb ? s->B - n0 : nb;
		size_t ld = (size_t)m * OHW;
		float *col = ws, *res = nb > 1 ? ws + (size_t)CKK * ld : out + n0 * out_sz;

		for (int n = 0; n < m; n++)
			conv_im2col(col + (size_t)n * OHW, ld, in + (n0 + n) * in_sz, s);
		if (nb == 1 && b)	/* sgemm adds onto the bias */
			for (int k = 0; k < s->K; k++)
				for (int t = 0; t < OHW; t++)
					res[(size_t)k * OHW + t] = b[k];
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->K, (int)ld, CKK, 1.0f,
			    w, CKK, col, (int)ld, nb == 1 && b ? 1.0f : 0.0f, res, (int)ld);
		if (nb == 1)
			continue;
		/* (K, m*OHW) -> m samples of (K, OHW), adding the bias on the way */
		for (int n = 0; n < m; n++)
			for (int k = 0; k < s->K; k++) {
				const float *restrict r = res + k * ld + (size_t)n * OHW;
				float *restrict o = out + (n0 + n) * out_sz + (size_t)k * OHW;
				const float bk = b ? b[k] : 0.0f;
				int t = 0;

				for (; t + NN_CPU_VL <= OHW; t += NN_CPU_VL)
					for (int q = 0; q < NN_CPU_VL; q++)
						o[t + q] = r[t + q] + bk;
				for (; t < OHW; t++)
					o[t] = r[t] + bk;
			}
	}
}

/* db (K) = dout summed over batch and plane */
static void conv_bias_grad(float *db, const float *dout, const struct nn_conv_shape *s)
{
	const int OHW = s->OH * s->OW;

	memset(db, 0, (size_t)s->K * sizeof(float));
	for (int n = 0; n < s->B; n++)
		for (int k = 0; k < s->K; k++) {
			const float *restrict d = dout + ((size_t)n * s->K + k) * OHW;
			float acc[NN_CPU_VL] = { 0 }, sum = 0.0f;
			int t = 0;

			for (; t + NN_CPU_VL <= OHW; t += NN_CPU_VL)
				for (int j = 0; j < NN_CPU_VL; j++)
					acc[j] += d[t + j];
			for (; t < OHW; t++)
				sum += d[t];
			for (int j = 0; j < NN_CPU_VL; j++)
				sum += acc[j];
			db[k] += sum;
		}
}

/* din of a same conv: wt (C, K, kh, kw) = w (K, C, kh, kw) transposed and flipped
 * in space, then the forward conv of dout with wt */
static void conv_same_din(float *din, const float *dout, const float *w,
			  const struct nn_conv_shape *s, float *ws)
{
	const int kk = s->kh * s->kw;
	struct nn_conv_shape t;
	float *wt = ws;

	conv_transposed_shape(&t, s);
	for (int k = 0; k < s->K; k++)
		for (int c = 0; c < s->C; c++)
			for (int q = 0; q < kk; q++)
				wt[((size_t)c * s->K + k) * kk + (kk - 1 - q)] = w[((size_t)k * s->C + c) * kk + q];
	nn_cpu_conv_fwd(din, dout, wt, NULL, &t, ws + (size_t)s->K * s->C * kk);
}

void nn_cpu_conv_bwd(float *din, float *dw, float *db, const float *dout,
		     const float *in, const float *w, const struct nn_conv_shape *s, float *ws)
{
	const int CKK = s->C * s->kh * s->kw, OHW = s->OH * s->OW, nb = conv_chunk(s);
	const size_t in_sz = (size_t)s->C * s->H * s->W, out_sz = (size_t)s->K * OHW;
	const int same = conv_is_same(s);

	if (db)
		conv_bias_grad(db, dout, s);
	/* dw^T (CKK, K) = col dout^T: sgemm is faster this way round than dw = dout col^T
	 * (its packing favours the long side first) */
	float *dwt = ws;

	ws += (size_t)s->K * CKK;
	for (int n0 = 0; n0 < s->B && (dw || (din && !same)); n0 += nb) {
		int m = s->B - n0 < nb ? s->B - n0 : nb;
		size_t ld = (size_t)m * OHW;
		float *col = ws, *dres = ws + (size_t)CKK * ld;
		const float *d = dout + n0 * out_sz;

		if (m > 1) {	/* m samples of dout (K, OHW) -> (K, m*OHW) */
			for (int n = 0; n < m; n++)
				for (int k = 0; k < s->K; k++)
					fcopy(dres + k * ld + (size_t)n * OHW,
					      dout + (n0 + n) * out_sz + (size_t)k * OHW, OHW);
			d = dres;
		}
		if (dw) {	/* dw^T (CKK, K) += col dout (K, m*OHW)^T */
			for (int n = 0; n < m; n++)
				conv_im2col(col + (size_t)n * OHW, ld, in + (n0 + n) * in_sz, s);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, CKK, s->K, (int)ld, 1.0f,
				    col, (int)ld, d, (int)ld, n0 ? 1.0f : 0.0f, dwt, s->K);
		}
		if (din && !same) {	/* dcol (CKK, m*OHW) = w^T dout, into col's space */
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, CKK, (int)ld, s->K, 1.0f,
				    w, CKK, d, (int)ld, 0.0f, col, (int)ld);
			for (int n = 0; n < m; n++)
				col2im(din + (n0 + n) * in_sz, col + (size_t)n * OHW, ld, s);
		}
	}
	if (dw)
		for (int k = 0; k < s->K; k++)
			for (int r = 0; r < CKK; r++)
				dw[(size_t)k * CKK + r] = dwt[(size_t)r * s->K + k];
	if (din && same)	/* dwt's space is free again: the flipped filters go there */
		conv_same_din(din, dout, w, s, dwt);
}
