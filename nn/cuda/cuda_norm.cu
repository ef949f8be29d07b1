/* nn/cuda/cuda_norm.cu — batch norm over (B, C, HW), as the reference computes it:
 * statistics in double (the mean, then the centred sum of squares: two reductions of
 * nn_cuda_channel_sums), PyTorch's running averages (unbiased variance), the output in
 * double per element; the relu-fused variants mask after the normalisation (forward) or
 * the gradient before the sums (backward: y > 0). */
#include <math.h>
#include "nn/cuda/cuda.cuh"

static void bn_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
		   const float *beta, float *run_mean, float *run_var, float *save_mean,
		   float *save_invstd, int B, int C, int HW, float momentum, float eps, int train,
		   bool relu)
{
	size_t per = (size_t)B * HW;
	double N = (double)per;
	/* scratch: partial sums, then the mean and invstd of every channel */
	double *part = (double *)nn_cuda_scratch(be, ((size_t)C * NN_CUDA_PARTS + 2 * C) *
							 sizeof(double));

	if (!part)
		return;
	double *mean = part + (size_t)C * NN_CUDA_PARTS, *invstd = mean + C;

	if (train) {
		nn_cuda_channel_sums(
			be, B, C, HW, part, [=] __device__(int c, size_t e) { return (double)in[e]; },
			[=] __device__(int c, double sum) { mean[c] = sum / N; });
		nn_cuda_channel_sums(
			be, B, C, HW, part,
			[=] __device__(int c, size_t e) {
				double d = in[e] - mean[c];

				return d * d;
			},
			/* nn_bn_store_stats of the reference, channel by channel */
			[=] __device__(int c, double sq) {
				invstd[c] = 1.0 / sqrt(sq / N + eps);
				if (save_mean)
					save_mean[c] = (float)mean[c];
				if (save_invstd)
					save_invstd[c] = (float)invstd[c];
				if (run_mean)
					run_mean[c] = (float)((1.0 - momentum) * run_mean[c] +
							      momentum * mean[c]);
				if (run_var)
					run_var[c] = (float)((1.0 - momentum) * run_var[c] +
							     momentum * sq / (N > 1 ? N - 1 : 1));
			});
	} else {
		nn_cuda_launch(be, (size_t)C, [=] __device__(size_t c) {
			mean[c] = run_mean[c];
			invstd[c] = 1.0 / sqrt((double)run_var[c] + eps);
		});
	}
	nn_cuda_launch(be, per * C, [=] __device__(size_t i) {
		int c = (int)(i / HW % C);
		float v = (float)(gamma[c] * (in[i] - mean[c]) * invstd[c] + beta[c]);

		out[i] = relu && !(v > 0.0f) ? 0.0f : v;
	});
}

/* With xh = (x - mean) invstd:  dbeta = sum dout,  dgamma = sum dout xh,
 * din = gamma invstd (dout - dbeta/N - xh dgamma/N); dout masked by y > 0 when y is not
 * NULL (the fused relu). */
static void bn_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
		   const float *dout, const float *y, const float *in, const float *gamma,
		   const float *save_mean, const float *save_invstd, int B, int C, int HW)
{
	size_t per = (size_t)B * HW;
	double N = (double)per;
	double *part = (double *)nn_cuda_scratch(be, ((size_t)C * NN_CUDA_PARTS + 2 * C) *
							 sizeof(double));

	if (!part)
		return;
	double *sd = part + (size_t)C * NN_CUDA_PARTS, *sdx = sd + C;

	nn_cuda_channel_sums(
		be, B, C, HW, part,
		[=] __device__(int c, size_t e) {
			return y && !(y[e] > 0.0f) ? 0.0 : (double)dout[e];
		},
		[=] __device__(int c, double sum) {
			sd[c] = sum;
			if (dbeta)
				dbeta[c] = (float)sum;
		});
	nn_cuda_channel_sums(
		be, B, C, HW, part,
		[=] __device__(int c, size_t e) {
			double d = y && !(y[e] > 0.0f) ? 0.0 : (double)dout[e];

			return d * ((in[e] - (double)save_mean[c]) * save_invstd[c]);
		},
		[=] __device__(int c, double sum) {
			sdx[c] = sum;
			if (dgamma)
				dgamma[c] = (float)sum;
		});
	if (!din)
		return;
	nn_cuda_launch(be, per * C, [=] __device__(size_t i) {
		int c = (int)(i / HW % C);
		double mean = save_mean[c], invstd = save_invstd[c];
		double d = y && !(y[i] > 0.0f) ? 0.0 : (double)dout[i];
		double xh = (in[i] - mean) * invstd;

		din[i] = (float)(gamma[c] * invstd * (d - sd[c] / N - xh * sdx[c] / N));
	});
}

extern "C" void nn_cuda_bn_fwd(struct nn_backend *be, float *out, const float *in,
			       const float *gamma, const float *beta, float *run_mean,
			       float *run_var, float *save_mean, float *save_invstd, int B, int C,
			       int HW, float momentum, float eps, int train)
{
	bn_fwd(be, out, in, gamma, beta, run_mean, run_var, save_mean, save_invstd, B, C, HW,
	       momentum, eps, train, false);
}

extern "C" void nn_cuda_bn_relu_fwd(struct nn_backend *be, float *out, const float *in,
				    const float *gamma, const float *beta, float *run_mean,
				    float *run_var, float *save_mean, float *save_invstd, int B,
				    int C, int HW, float momentum, float eps, int train)
{
	bn_fwd(be, out, in, gamma, beta, run_mean, run_var, save_mean, save_invstd, B, C, HW,
	       momentum, eps, train, true);
}

extern "C" void nn_cuda_bn_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
			       const float *dout, const float *in, const float *gamma,
			       const float *save_mean, const float *save_invstd, int B, int C,
			       int HW)
{
	bn_bwd(be, din, dgamma, dbeta, dout, NULL, in, gamma, save_mean, save_invstd, B, C, HW);
}

extern "C" void nn_cuda_bn_relu_bwd(struct nn_backend *be, float *din, float *dgamma,
				    float *dbeta, const float *dout, const float *y,
				    const float *in, const float *gamma, const float *save_mean,
				    const float *save_invstd, int B, int C, int HW)
{
	bn_bwd(be, din, dgamma, dbeta, dout, y, in, gamma, save_mean, save_invstd, B, C, HW);
}
