/* nn/cuda/cuda_pool.cu — max, average and global average pooling (NCHW), one thread per
 * output in forward and per input in backward (a gather over the windows that cover it,
 * in the reference's order: no scattered adds). */
#include "nn/cuda/cuda.cuh"

extern "C" void nn_cuda_maxpool_fwd(struct nn_backend *be, float *out, int32_t *argmax,
				    const float *in, const struct nn_pool_shape *sp)
{
	struct nn_pool_shape s = *sp;
	size_t n = (size_t)s.B * s.C * s.OH * s.OW;

	nn_cuda_launch(be, n, [=] __device__(size_t o) {
		int ow = (int)(o % s.OW), oh = (int)(o / s.OW % s.OH);
		const float *x = in + o / ((size_t)s.OW * s.OH) * s.H * s.W;
		int best = -1;

		/* padding is -inf; the first maximum in row-major window order wins */
		for (int i = 0; i < s.k; i++) {
			int h = oh * s.stride - s.pad + i;

			if (h < 0 || h >= s.H)
				continue;
			for (int j = 0; j < s.k; j++) {
				int w = ow * s.stride - s.pad + j;

				if (w >= 0 && w < s.W && (best < 0 || x[h * s.W + w] > x[best]))
					best = h * s.W + w;
			}
		}
		out[o] = best < 0 ? 0.0f : x[best];
		argmax[o] = best;
	});
}

/* f(o) for every output o whose window covers input element e, in the reference's order
 * (window rows, then columns). */
template <typename F>
static __device__ inline void covering(const struct nn_pool_shape &s, size_t e, F f)
{
	int w = (int)(e % s.W), h = (int)(e / s.W % s.H);
	size_t p = e / ((size_t)s.W * s.H);

	for (int i = 0; i < s.k; i++) {
		int th = h + s.pad - i;

		if (th < 0 || th % s.stride || th / s.stride >= s.OH)
			continue;
		for (int j = 0; j < s.k; j++) {
			int tw = w + s.pad - j;

			if (tw >= 0 && tw % s.stride == 0 && tw / s.stride < s.OW)
				f((p * s.OH + th / s.stride) * s.OW + tw / s.stride);
		}
	}
}

extern "C" void nn_cuda_maxpool_bwd(struct nn_backend *be, float *din, const float *dout,
				    const int32_t *argmax, const struct nn_pool_shape *sp)
{
	struct nn_pool_shape s = *sp;

	nn_cuda_launch(be, (size_t)s.B * s.C * s.H * s.W, [=] __device__(size_t e) {
		int at = (int)(e % ((size_t)s.H * s.W));	/* h * W + w in its plane */
		double acc = 0.0;

		covering(s, e, [&](size_t o) {
			if (argmax[o] == at)
				acc += dout[o];
		});
		din[e] = (float)acc;
	});
}

extern "C" void nn_cuda_avgpool_fwd(struct nn_backend *be, float *out, const float *in,
				    const struct nn_pool_shape *sp)
{
	struct nn_pool_shape s = *sp;

	nn_cuda_launch(be, (size_t)s.B * s.C * s.OH * s.OW, [=] __device__(size_t o) {
		int ow = (int)(o % s.OW), oh = (int)(o / s.OW % s.OH);
		const float *x = in + o / ((size_t)s.OW * s.OH) * s.H * s.W;
		double acc = 0.0;

		/* divided by k*k, padding included (PyTorch's count_include_pad) */
		for (int i = 0; i < s.k; i++) {
			int h = oh * s.stride - s.pad + i;

			if (h < 0 || h >= s.H)
				continue;
			for (int j = 0; j < s.k; j++) {
				int w = ow * s.stride - s.pad + j;

				if (w >= 0 && w < s.W)
					acc += x[h * s.W + w];
			}
		}
		out[o] = (float)(acc / (s.k * s.k));
	});
}

extern "C" void nn_cuda_avgpool_bwd(struct nn_backend *be, float *din, const float *dout,
				    const struct nn_pool_shape *sp)
{
	struct nn_pool_shape s = *sp;

	nn_cuda_launch(be, (size_t)s.B * s.C * s.H * s.W, [=] __device__(size_t e) {
		double acc = 0.0;

		covering(s, e, [&](size_t o) { acc += dout[o]; });
		din[e] = (float)(acc / (s.k * s.k));
	});
}

/* (B,C,HW) -> (B,C) */
extern "C" void nn_cuda_gap_fwd(struct nn_backend *be, float *out, const float *in, int B,
				int C, int HW)
{
	nn_cuda_launch(be, (size_t)B * C, [=] __device__(size_t p) {
		double acc = 0.0;

		for (int i = 0; i < HW; i++)
			acc += in[p * HW + i];
		out[p] = (float)(acc / HW);
	});
}

extern "C" void nn_cuda_gap_bwd(struct nn_backend *be, float *din, const float *dout, int B,
				int C, int HW)
{
	nn_cuda_launch(be, (size_t)B * C * HW,
		       [=] __device__(size_t i) { din[i] = (float)((double)dout[i / HW] / HW); });
}
