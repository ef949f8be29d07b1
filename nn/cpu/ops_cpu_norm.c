/* nn/cpu/ops_cpu_norm.c — batch norm over (B, C, HW), one channel at a time.  A channel
 * holds B*HW values (32K in resnet's first stage), too many for one float sum: rows
 * sum in float lanes, channels in double.  The per-element passes are affine maps
 * x*a + c in float. */
#include <math.h>
#include <string.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif
#include "nn/cpu/cpu.h"

/* Sums go in float lanes within one row of HW values (at most a few hundred terms a
 * lane), and the rows' totals in double: float speed, double-like accuracy. */
#define LANES NN_CPU_VL

/* Asks for the HW floats at p, a channel's row of the next sample: a channel's rows are
 * C*HW apart, a jump the hardware prefetcher does not follow (on 8x8 planes a row is 4
 * lines), and the first pass over a channel reads from far (the saved activations
 * of the forward pass). */
static inline void bn_prefetch_row(const float *p, int HW)
{
#ifdef __AVX512F__
	for (int t = 0; t < HW; t += 16)
		_mm_prefetch((const char *)(p + t), _MM_HINT_T0);
#else
	(void)p, (void)HW;
#endif
}

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

		if (!sq && n + 1 < B)	/* the first pass */
			bn_prefetch_row(r + stride, HW);
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

/* o = r * a + c over one row of HW, then + s when add, then relu when relu: each step
 * rounded as the separate ops did.  Inlined with constant flags: one plain loop each,
 * which gcc vectorises. */
static inline __attribute__((always_inline)) void
bn_affine_row(float *restrict o, const float *restrict r, const float *restrict s, int HW,
	      float a, float c, const int add, const int relu)
{
	int t = 0;

	for (; t + NN_CPU_VL <= HW; t += NN_CPU_VL)
		for (int j = 0; j < NN_CPU_VL; j++) {
			float v = r[t + j] * a + c;

			if (add)
				v = v + s[t + j];
			o[t + j] = !relu || v > 0.0f ? v : 0.0f;
		}
	for (; t < HW; t++) {
		float v = r[t] * a + c;

		if (add)
			v = v + s[t];
		o[t] = !relu || v > 0.0f ? v : 0.0f;
	}
}

/* y = x * a + c over the B rows of one channel, then relu when asked; with res (the rows
 * of a residual, laid out as y) relu(x * a + c + res) */
static void bn_affine(float *restrict y, const float *restrict x, const float *restrict res,
		      int B, size_t stride, int HW, float a, float c, int relu)
{
	for (int n = 0; n < B; n++) {
		size_t off = (size_t)n * stride;

		if (res)
			bn_affine_row(y + off, x + off, res + off, HW, a, c, 1, 1);
		else if (relu)
			bn_affine_row(y + off, x + off, NULL, HW, a, c, 0, 1);
		else
			bn_affine_row(y + off, x + off, NULL, HW, a, c, 0, 0);
	}
}

static void bn_fwd(float *out, const float *in, const float *res, const float *gamma,
		   const float *beta, float *run_mean, float *run_var, float *save_mean,
		   float *save_invstd, int B, int C, int HW, float momentum, float eps,
		   int train, int relu)
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
			nn_bn_store_stats(c, mean, invstd, sq, N, momentum, save_mean, save_invstd,
					  run_mean, run_var);
		} else {
			mean = run_mean[c];
			invstd = 1.0 / sqrt((double)run_var[c] + eps);
		}
		double a = gamma[c] * invstd;

		bn_affine(out + (size_t)c * HW, x, res ? res + (size_t)c * HW : NULL, B, stride,
			  HW, (float)a, (float)(beta[c] - mean * a), relu);
	}
}

void nn_cpu_bn_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
		   const float *beta, float *run_mean, float *run_var, float *save_mean,
		   float *save_invstd, int B, int C, int HW, float momentum, float eps,
		   int train)
{
	bn_fwd(out, in, NULL, gamma, beta, run_mean, run_var, save_mean, save_invstd, B, C, HW,
	       momentum, eps, train, 0);
}

void nn_cpu_bn_relu_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
			const float *beta, float *run_mean, float *run_var, float *save_mean,
			float *save_invstd, int B, int C, int HW, float momentum, float eps,
			int train)
{
	bn_fwd(out, in, NULL, gamma, beta, run_mean, run_var, save_mean, save_invstd, B, C, HW,
	       momentum, eps, train, 1);
}

void nn_cpu_bn_add_relu_fwd(struct nn_backend *be, float *out, const float *in,
			    const float *res, const float *gamma, const float *beta,
			    float *run_mean, float *run_var, float *save_mean, float *save_invstd,
			    int B, int C, int HW, float momentum, float eps, int train)
{
	bn_fwd(out, in, res, gamma, beta, run_mean, run_var, save_mean, save_invstd, B, C, HW,
	       momentum, eps, train, 1);
}

/* o = (y > 0 ? d : 0) * fa + x * fb + fk (y NULL: no mask), one row.  gcc -O2 leaves
 * this loop scalar, hence the intrinsics; same operations in the same order. */
static void bn_bwd_row(float *restrict o, const float *restrict d, const float *restrict y,
		       const float *restrict x, int HW, float fa, float fb, float fk)
{
	int t = 0;
#ifdef __AVX512F__
	const __m512 va = _mm512_set1_ps(fa), vb = _mm512_set1_ps(fb), vk = _mm512_set1_ps(fk);

	for (; t < HW; t += 16) {
		__mmask16 m = HW - t >= 16 ? 0xffff : (__mmask16)((1u << (HW - t)) - 1);
		__m512 vd = _mm512_maskz_loadu_ps(m, d + t), vx = _mm512_maskz_loadu_ps(m, x + t);

		if (y)
			vd = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(m, y + t),
								    _mm512_setzero_ps(), _CMP_GT_OQ),
						 vd);
		_mm512_mask_storeu_ps(o + t, m, _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(vd, va),
									    _mm512_mul_ps(vx, vb)),
							      vk));
	}
#endif
	for (; t < HW; t++)
		o[t] = (y && !(y[t] > 0.0f) ? 0.0f : d[t]) * fa + x[t] * fb + fk;
}

/* din = gamma invstd (dout - dbeta/N - xh dgamma/N), xh = (x - mean) invstd, written as
 * din = a dout + b x + c; with y (the fused relu's output), dout is masked by y > 0 as
 * it is read. */
static void bn_bwd(float *din, float *dgamma, float *dbeta, const float *dout,
		   const float *y0, const float *in, const float *gamma,
		   const float *save_mean, const float *save_invstd, int B, int C, int HW)
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

			if (n + 1 < B) {
				bn_prefetch_row(x + stride, HW);
				bn_prefetch_row(d + stride, HW);
				if (y0)
					bn_prefetch_row(y0 + (size_t)c * HW + (size_t)(n + 1) * stride, HW);
			}

			if (y0) {
				const float *restrict y = y0 + (size_t)c * HW + (size_t)n * stride;

				for (; t + LANES <= HW; t += LANES) {
					float dm[LANES];

					/* loaded whole: the select vectorises */
					memcpy(dm, d + t, sizeof(dm));
					for (int j = 0; j < LANES; j++)
						dm[j] = y[t + j] > 0.0f ? dm[j] : 0.0f;
					for (int j = 0; j < LANES; j++) {
						sd[j] += dm[j];
						sdx[j] += dm[j] * (x[t + j] - fm);
					}
				}
				for (; t < HW; t++) {
					float dm = y[t] > 0.0f ? d[t] : 0.0f;

					rsd += dm;
					rsdx += dm * (x[t] - fm);
				}
			}
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

			bn_bwd_row(o, d, y0 ? y0 + (size_t)c * HW + (size_t)n * stride : NULL, x,
				   HW, fa, fb, fk);
		}
	}
}

void nn_cpu_bn_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
		   const float *dout, const float *in, const float *gamma,
		   const float *save_mean, const float *save_invstd, int B, int C, int HW)
{
	bn_bwd(din, dgamma, dbeta, dout, NULL, in, gamma, save_mean, save_invstd, B, C, HW);
}

void nn_cpu_bn_relu_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
			const float *dout, const float *y, const float *in, const float *gamma,
			const float *save_mean, const float *save_invstd, int B, int C, int HW)
{
	bn_bwd(din, dgamma, dbeta, dout, y, in, gamma, save_mean, save_invstd, B, C, HW);
}
