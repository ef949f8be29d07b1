/* nn/ops_cpu_norm.c — batch norm over (B, C, HW), one channel at a time.  A channel
 * holds B*HW values (32K in resnet's first stage), too many for one float sum: rows
 * sum in float lanes, channels in double.  The per-element passes are affine maps
 * x*a + c in float. */
#include <math.h>
#include "nn/ops_impl.h"

/* Sums go in float lanes within one row of HW values (at most a few hundred terms a
 * lane), and the rows' totals in double: float speed, double-like accuracy. */
#define LANES NN_CPU_VL

/* sum of x[t], and of (x[t] - m)^2 when sq is not NULL, over the B rows of one channel */
static void bn_sums(const float *restrict x, int B, size_t stride, int HW, double m,
		    double *sum, double *sq)
{
	const float fm = (float)m;
	double ta = 0.0, tq = 0.0;

	for (int n = 0; n < B; n++) {
		const float *restrict r = x + (size_t)n * stride;
		float a[LANES] = { 0 }, q[LANES] = { 0 }, ra = 0.0f, rq = 0.0f;
		int t = 0;

		if (sq)
			for (; t + LANES <= HW; t += LANES)
				for (int j = 0; j < LANES; j++) {
					float d = r[t + j] - fm;

					q[j] += d * d;
				}
		else
			for (; t + LANES <= HW; t += LANES)
				for (int j = 0; j < LANES; j++)
					a[j] += r[t + j];
		for (; t < HW; t++) {
			float d = r[t] - fm;

			ra += r[t];
			rq += d * d;
		}
		for (int j = 0; j < LANES; j++)
			ra += a[j], rq += q[j];
		ta += ra, tq += rq;
	}
	*sum = ta;
	if (sq)
		*sq = tq;
}

/* y = x * a + c over the B rows of one channel */
static void bn_affine(float *restrict y, const float *restrict x, int B, size_t stride,
		      int HW, float a, float c)
{
	for (int n = 0; n < B; n++) {
		const float *restrict r = x + (size_t)n * stride;
		float *restrict o = y + (size_t)n * stride;

		int t = 0;

		for (; t + NN_CPU_VL <= HW; t += NN_CPU_VL)
			for (int j = 0; j < NN_CPU_VL; j++)
				o[t + j] = r[t + j] * a + c;
		for (; t < HW; t++)
			o[t] = r[t] * a + c;
	}
}

void nn_cpu_bn_fwd(float *out, const float *in, const float *gamma, const float *beta,
		   float *run_mean, float *run_var, float *save_mean, float *save_invstd,
		   int B, int C, int HW, float momentum, float eps, int train)
{
	const double N = (double)B * HW;
	const size_t stride = (size_t)C * HW;

	for (int c = 0; c < C; c++) {
		const float *x = in + (size_t)c * HW;
		double mean, invstd, sum, sq;

		if (train) {
			bn_sums(x, B, stride, HW, 0.0, &sum, NULL);
			mean = sum / N;
			bn_sums(x, B, stride, HW, mean, &sum, &sq);
			invstd = 1.0 / sqrt(sq / N + eps);
			if (save_mean)
				save_mean[c] = (float)mean;
			if (save_invstd)
				save_invstd[c] = (float)invstd;
			if (run_mean)
				run_mean[c] = (float)((1.0 - momentum) * run_mean[c] + momentum * mean);
			if (run_var)
				run_var[c] = (float)((1.0 - momentum) * run_var[c] +
						     momentum * sq / (N > 1 ? N - 1 : 1));
		} else {
			mean = run_mean[c];
			invstd = 1.0 / sqrt((double)run_var[c] + eps);
		}
		double a = gamma[c] * invstd;

		bn_affine(out + (size_t)c * HW, x, B, stride, HW, (float)a,
			  (float)(beta[c] - mean * a));
	}
}

/* din = gamma invstd (dout - dbeta/N - xh dgamma/N), xh = (x - mean) invstd, written as
 * din = a dout + b x + c */
void nn_cpu_bn_bwd(float *din, float *dgamma, float *dbeta, const float *dout,
		   const float *in, const float *gamma, const float *save_mean,
		   const float *save_invstd, int B, int C, int HW)
{
	const double N = (double)B * HW;
	const size_t stride = (size_t)C * HW;

	for (int c = 0; c < C; c++) {
		const float *restrict x0 = in + (size_t)c * HW;
		const float *restrict d0 = dout + (size_t)c * HW;
		const double m = save_mean[c], is = save_invstd[c];
		const float fm = (float)m;
		double tsd = 0.0, tsdx = 0.0;

		for (int n = 0; n < B; n++) {
			const float *restrict x = x0 + (size_t)n * stride;
			const float *restrict d = d0 + (size_t)n * stride;
			float sd[LANES] = { 0 }, sdx[LANES] = { 0 }, rsd = 0.0f, rsdx = 0.0f;
			int t = 0;

			for (; t + LANES <= HW; t += LANES)
				for (int j = 0; j < LANES; j++) {
					sd[j] += d[t + j];
					sdx[j] += d[t + j] * (x[t + j] - fm);
				}
			for (; t < HW; t++) {
				rsd += d[t];
				rsdx += d[t] * (x[t] - fm);
			}
			for (int j = 0; j < LANES; j++)
				rsd += sd[j], rsdx += sdx[j];
			tsd += rsd, tsdx += rsdx;
		}
		double dg = tsdx * is;

		if (dbeta)
			dbeta[c] = (float)tsd;
		if (dgamma)
			dgamma[c] = (float)dg;
		if (!din)
			continue;
		double a = gamma[c] * is, b = -a * is * dg / N, k = -a * tsd / N - b * m;

		for (int n = 0; n < B; n++) {
			const float *restrict x = x0 + (size_t)n * stride;
			const float *restrict d = d0 + (size_t)n * stride;
			float *restrict o = din + (size_t)c * HW + (size_t)n * stride;
			const float fa = (float)a, fb = (float)b, fk = (float)k;

			int t = 0;

			for (; t + NN_CPU_VL <= HW; t += NN_CPU_VL)
				for (int j = 0; j < NN_CPU_VL; j++)
					o[t + j] = d[t + j] * fa + x[t + j] * fb + fk;
			for (; t < HW; t++)
				o[t] = d[t] * fa + x[t] * fb + fk;
		}
	}
}
