/* nn/cpu/ops_cpu_im2col.c — the patch matrices of convolution: im2col (input patches as
 * rows of a matrix, padding read as zero) and its adjoint col2im, and the shape tests
 * that choose between the paths.  Below both the conv forward/input-gradient file
 * (nn/cpu/ops_cpu_conv.c) and the weight-gradient file (nn/cpu/ops_cpu_conv_wgrad.c). */
#include <string.h>
#include "nn/cpu/cpu.h"

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

/* Output row oh of col row (c, i, j) (OW floats at r): the input row it reads, padding
 * read as zero; ow0..ow1 the columns inside the plane (conv_valid_cols) */
static void im2col_out_row(float *restrict r, const float *restrict in, int c, int i, int j,
			   int oh, int ow0, int ow1, const struct nn_conv_shape *s)
{
	const int S = s->stride, OW = s->OW, h = oh * S - s->pad + i;

	if (h < 0 || h >= s->H) {
		nn_fzero(r, OW);
		return;
	}
	const float *restrict src = in + ((size_t)c * s->H + h) * s->W + ow0 * S - s->pad + j;

	nn_fzero(r, ow0);
	if (S == 1)
		nn_fcopy(r + ow0, src, ow1 - ow0);
	else
		for (int ow = ow0; ow < ow1; ow++)
			r[ow] = src[(size_t)(ow - ow0) * S];
	nn_fzero(r + ow1, OW - ow1);
}

/* col rows (C*kh*kw of them, ld apart) from one sample's input (C, H, W): OH*OW
 * columns, padding read as zero.  With stride 1, row (c, i, j) is row (c, i-1, j) moved
 * up one output row, plus its last output row: one long copy instead of OH short ones
 * (lenet's 5x5 convs: rows of 10 floats). */
void nn_cpu_im2col(float *restrict col, size_t ld, const float *restrict in,
		   const struct nn_conv_shape *s)
{
	const int OW = s->OW, OH = s->OH;

	for (int c = 0; c < s->C; c++)
		for (int i = 0; i < s->kh; i++)
			for (int j = 0; j < s->kw; j++) {
				float *restrict row = col + (size_t)((c * s->kh + i) * s->kw + j) * ld;
				int ow0, ow1;

				conv_valid_cols(s, j, &ow0, &ow1);
				if (s->stride == 1 && i > 0) {
					nn_fcopy(row, row - (size_t)s->kw * ld + OW, (OH - 1) * OW);
					im2col_out_row(row + (size_t)(OH - 1) * OW, in, c, i, j, OH - 1,
						       ow0, ow1, s);
					continue;
				}
				for (int oh = 0; oh < OH; oh++)
					im2col_out_row(row + (size_t)oh * OW, in, c, i, j, oh, ow0, ow1, s);
			}
}

/* din (C, H, W) = sum of the patches in col (rows ld apart): the adjoint of im2col */
void nn_cpu_col2im(float *restrict din, const float *restrict col, size_t ld,
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
