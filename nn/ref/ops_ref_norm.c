/* nn/ref/ops_ref_norm.c — reference batch norm over (B, C, HW), statistics in double. */
#include <math.h>
#include "nn/ref/ref.h"

#define AT(n, c, i) (((size_t)(n) * C + (c)) * HW + (i))

void nn_ref_bn_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
		   const float *beta, float *run_mean, float *run_var, float *save_mean,
		   float *save_invstd, int B, int C, int HW, float momentum, float eps,
		   int train)
{
	const double N = (double)B * HW;

	for (int c = 0; c < C; c++) {
		double mean, invstd;

		if (train) {
			double sum = 0.0, sq = 0.0;

			for (int n = 0; n < B; n++)
				for (int i = 0; i < HW; i++)
					sum += in[AT(n, c, i)];
			mean = sum / N;
			for (int n = 0; n < B; n++)
				for (int i = 0; i < HW; i++) {
					double d = in[AT(n, c, i)] - mean;

					sq += d * d;
				}
			invstd = 1.0 / sqrt(sq / N + eps);
			nn_bn_store_stats(c, mean, invstd, sq, N, momentum, save_mean, save_invstd,
					  run_mean, run_var);
		} else {
			mean = run_mean[c];
			invstd = 1.0 / sqrt((double)run_var[c] + eps);
		}
		for (int n = 0; n < B; n++)
			for (int i = 0; i < HW; i++)
				out[AT(n, c, i)] = (float)(gamma[c] * (in[AT(n, c, i)] - mean) * invstd +
							   beta[c]);
	}
}

/* With xh = (x - mean) invstd:  dbeta = sum dout,  dgamma = sum dout xh,
 * din = gamma invstd (dout - dbeta/N - xh dgamma/N); dout masked by y > 0 when y is not
 * NULL (the fused relu). */
/* Batch statistics of one channel into save_* and the running averages (PyTorch's
 * semantics: unbiased variance for the running one); any pointer may be NULL. */
void nn_bn_store_stats(int c, double mean, double invstd, double sq, double N, float momentum,
		       float *save_mean, float *save_invstd, float *run_mean, float *run_var)
{
	if (save_mean)
		save_mean[c] = (float)mean;
	if (save_invstd)
		save_invstd[c] = (float)invstd;
	if (run_mean)
		run_mean[c] = (float)((1.0 - momentum) * run_mean[c] + momentum * mean);
	if (run_var)
		run_var[c] = (float)((1.0 - momentum) * run_var[c] +
				     momentum * sq / (N > 1 ? N - 1 : 1));
}

static void ref_bn_bwd(float *din, float *dgamma, float *dbeta, const float *dout,
		       const float *y, const float *in, const float *gamma,
		       const float *save_mean, const float *save_invstd, int B, int C, int HW)
{
	const double N = (double)B * HW;

#define DOUT(n, c, i) (y && !(y[AT(n, c, i)] > 0.0f) ? 0.0 : (double)dout[AT(n, c, i)])
	for (int c = 0; c < C; c++) {
		double mean = save_mean[c], invstd = save_invstd[c], sd = 0.0, sdx = 0.0;

		for (int n = 0; n < B; n++)
			for (int i = 0; i < HW; i++) {
				sd += DOUT(n, c, i);
				sdx += DOUT(n, c, i) * ((in[AT(n, c, i)] - mean) * invstd);
			}
		if (dbeta)
			dbeta[c] = (float)sd;
		if (dgamma)
			dgamma[c] = (float)sdx;
		if (din)
			for (int n = 0; n < B; n++)
				for (int i = 0; i < HW; i++) {
					double xh = (in[AT(n, c, i)] - mean) * invstd;

					din[AT(n, c, i)] = (float)(gamma[c] * invstd *
								   (DOUT(n, c, i) - sd / N - xh * sdx / N));
				}
	}
#undef DOUT
}

void nn_ref_bn_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
		   const float *dout, const float *in, const float *gamma,
		   const float *save_mean, const float *save_invstd, int B, int C, int HW)
{
	ref_bn_bwd(din, dgamma, dbeta, dout, NULL, in, gamma, save_mean, save_invstd, B, C, HW);
}

void nn_ref_bn_relu_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
			const float *beta, float *run_mean, float *run_var, float *save_mean,
			float *save_invstd, int B, int C, int HW, float momentum, float eps,
			int train)
{
	size_t n = (size_t)B * C * HW;

	nn_ref_bn_fwd(be, out, in, gamma, beta, run_mean, run_var, save_mean, save_invstd, B, C,
		      HW, momentum, eps, train);
	for (size_t i = 0; i < n; i++)
		out[i] = out[i] > 0.0f ? out[i] : 0.0f;
}

void nn_ref_bn_relu_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
			const float *dout, const float *y, const float *in, const float *gamma,
			const float *save_mean, const float *save_invstd, int B, int C, int HW)
{
	ref_bn_bwd(din, dgamma, dbeta, dout, y, in, gamma, save_mean, save_invstd, B, C, HW);
}
