/* nn/cpu/ops_cpu_norm.c — batch norm over (B, C, HW), channels in groups.  A channel
 * holds B*HW values (32K in resnet's first stage), too many for one float sum: rows
 * sum in float lanes, channels in double.  The per-element passes are affine maps
 * x*a + c in float. */
#include <math.h>
#include <string.h>
#include "nn/cpu/cpu.h"

/* Sums go in float lanes within one row of HW values (at most a few hundred terms a
 * lane), and the rows' totals in double: float speed, double-like accuracy. */
#define LANES NN_CPU_VL

/* Channels go in groups of G (a power of two dividing C, at most BN_GMAX), each pass
 * sample by sample over the group's G rows: G*HW adjacent floats, one stream.  A
 * channel alone was B rows of HW floats C*HW apart (64 KB apart in resnet's first
 * stage), a new stream every row: its passes ran at half the speed of a copy, software
 * prefetches or not.  A group holds at most BN_GROUP_BYTES of each array it reads, so
 * that its later passes find them in the last-level cache (the whole tensor in
 * resnet at batch 32: measured fastest, against groups sized for the L2).  Every
 * channel still sums its rows in sample order, each row in the same lanes: the same
 * bits as one channel at a time. */
#define BN_GROUP_BYTES ((size_t)2 << 20)
#define BN_GMAX 64

static int bn_group(int B, int C, int HW)
{
	int g = 1;

	while (2 * g <= BN_GMAX && C % (2 * g) == 0 &&
	       (size_t)B * 2 * g * HW * sizeof(float) <= BN_GROUP_BYTES)
		g *= 2;
	return g;
}

/* One row's sum of r[t] (sq 0), or of (r[t] - fm)^2 (sq 1): float lanes, the rest in
 * order, then the lanes in order */
static inline __attribute__((always_inline)) float bn_row_sum(const float *restrict r,
							      int HW, float fm, const int sq)
{
	float a[LANES] = { 0 }, ra = 0.0f;
	int t = 0;

	for (; t + LANES <= HW; t += LANES)
		for (int j = 0; j < LANES; j++) {
			float d = r[t + j] - fm;

			a[j] += sq ? d * d : r[t + j];
		}
	for (; t < HW; t++) {
		float d = r[t] - fm;

		ra += sq ? d * d : r[t];
	}
	for (int j = 0; j < LANES; j++)
		ra += a[j];
	return ra;
}

/* Per channel c of the group [c0, c0 + G): tot[c - c0] = the sum over samples of its rows'
 * bn_row_sum (with m[c - c0] when sq) */
static void bn_sums(const float *restrict x, int B, int C, int HW, int c0, int G,
		    const double *m, double *tot, int sq)
{
	const size_t stride = (size_t)C * HW;

	for (int g = 0; g < G; g++)
		tot[g] = 0.0;
	for (int n = 0; n < B; n++) {
		const float *r = x + (size_t)n * stride + (size_t)c0 * HW;

		for (int g = 0; g < G; g++, r += HW)
			tot[g] += sq ? bn_row_sum(r, HW, (float)m[g], 1) : bn_row_sum(r, HW, 0.0f, 0);
	}
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

/* y = x * a[g] + c[g] over the rows of the group's channels, then relu when asked; with
 * res (the rows of a residual, laid out as y) relu(x * a[g] + c[g] + res) */
static void bn_affine(float *restrict y, const float *restrict x, const float *restrict res,
		      int B, int C, int HW, int c0, int G, const float *a, const float *c,
		      int relu)
{
	const size_t stride = (size_t)C * HW;

	for (int n = 0; n < B; n++)
		for (int g = 0; g < G; g++) {
			size_t off = (size_t)n * stride + (size_t)(c0 + g) * HW;

			if (res)
				bn_affine_row(y + off, x + off, res + off, HW, a[g], c[g], 1, 1);
			else if (relu)
				bn_affine_row(y + off, x + off, NULL, HW, a[g], c[g], 0, 1);
			else
				bn_affine_row(y + off, x + off, NULL, HW, a[g], c[g], 0, 0);
		}
}

static void bn_fwd(float *out, const float *in, const float *res, const float *gamma,
		   const float *beta, float *run_mean, float *run_var, float *save_mean,
		   float *save_invstd, int B, int C, int HW, float momentum, float eps,
		   int train, int relu)
{
	const double N = (double)B * HW;
	const int G = bn_group(B, C, HW);

	for (int c0 = 0; c0 < C; c0 += G) {
		double mean[BN_GMAX], sum[BN_GMAX], sq[BN_GMAX];
		float fa[BN_GMAX], fc[BN_GMAX];

		if (train) {
			bn_sums(in, B, C, HW, c0, G, NULL, sum, 0);
			for (int g = 0; g < G; g++)
				mean[g] = sum[g] / N;
			bn_sums(in, B, C, HW, c0, G, mean, sq, 1);
		}
		for (int g = 0; g < G; g++) {
			int c = c0 + g;
			double invstd;

			if (train) {
				invstd = 1.0 / sqrt(sq[g] / N + eps);
				nn_bn_store_stats(c, mean[g], invstd, sq[g], N, momentum, save_mean,
						  save_invstd, run_mean, run_var);
			} else {
				mean[g] = run_mean[c];
				invstd = 1.0 / sqrt((double)run_var[c] + eps);
			}
			double a = gamma[c] * invstd;

			fa[g] = (float)a;
			fc[g] = (float)(beta[c] - mean[g] * a);
		}
		bn_affine(out, in, res, B, C, HW, c0, G, fa, fc, relu);
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

/* o = (y > 0 ? d : 0) * fa + x * fb + fk (y NULL: no mask) over 16 lanes from t: those
 * of m, or all when full.  gcc -O2 leaves the plain loop scalar, hence vf16; each lane
 * does the same operations in the same order on every level. */
static inline __attribute__((always_inline)) void
bn_bwd16(float *o, const float *d, const float *y, const float *x, int t, vf16 va, vf16 vb,
	 vf16 vk, vm16 m, const int full)
{
	vf16 vd = full ? vf_load(d + t) : vf_loadm(d + t, m);
	vf16 vx = full ? vf_load(x + t) : vf_loadm(x + t, m);
	vf16 v;

	if (y)
		vd = vf_maskz(vf_gt(full ? vf_load(y + t) : vf_loadm(y + t, m), vf_zero()), vd);
	v = vf_add(vf_add(vf_mul(vd, va), vf_mul(vx, vb)), vk);
	if (full)
		vf_store(o + t, v);
	else
		vf_storem(o + t, m, v);
}

static void bn_bwd_row(float *restrict o, const float *restrict d, const float *restrict y,
		       const float *restrict x, int HW, float fa, float fb, float fk)
{
	const vf16 va = vf_set1(fa), vb = vf_set1(fb), vk = vf_set1(fk);
	int t = 0;

	for (; t + 16 <= HW; t += 16)
		bn_bwd16(o, d, y, x, t, va, vb, vk, vm_first(16), 1);
	if (t < HW)
		bn_bwd16(o, d, y, x, t, va, vb, vk, vm_first(HW - t), 0);
}

/* One row's sums of d (masked by y > 0 when y is not NULL) and of d (x - fm): float
 * lanes, the rest in order, then the lanes in order */
static inline void bn_bwd_row_sums(const float *restrict d, const float *restrict y,
				   const float *restrict x, int HW, float fm, float *psd,
				   float *psdx)
{
	float sd[LANES] = { 0 }, sdx[LANES] = { 0 }, rsd = 0.0f, rsdx = 0.0f;
	int t = 0;

	if (y) {
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
	*psd = rsd;
	*psdx = rsdx;
}

/* din = gamma invstd (dout - dbeta/N - xh dgamma/N), xh = (x - mean) invstd, written as
 * din = a dout + b x + c; with y (the fused relu's output), dout is masked by y > 0 as
 * it is read.  In groups of channels (bn_group); both passes read d, x and y. */
static void bn_bwd(float *din, float *dgamma, float *dbeta, const float *dout,
		   const float *y0, const float *in, const float *gamma,
		   const float *save_mean, const float *save_invstd, int B, int C, int HW)
{
	const double N = (double)B * HW;
	const size_t stride = (size_t)C * HW;
	const int G = bn_group(B, C, HW);

	for (int c0 = 0; c0 < C; c0 += G) {
		double tsd[BN_GMAX], tsdx[BN_GMAX];
		float fm[BN_GMAX], fa[BN_GMAX], fb[BN_GMAX], fk[BN_GMAX];

		for (int g = 0; g < G; g++) {
			tsd[g] = tsdx[g] = 0.0;
			fm[g] = save_mean[c0 + g];
		}
		for (int n = 0; n < B; n++) {
			size_t off = (size_t)n * stride + (size_t)c0 * HW;

			for (int g = 0; g < G; g++, off += HW) {
				float rsd, rsdx;

				bn_bwd_row_sums(dout + off, y0 ? y0 + off : NULL, in + off, HW, fm[g],
						&rsd, &rsdx);
				tsd[g] += rsd, tsdx[g] += rsdx;
			}
		}
		for (int g = 0; g < G; g++) {
			int c = c0 + g;
			double m = save_mean[c], is = save_invstd[c], dg = tsdx[g] * is;

			if (dbeta)
				dbeta[c] = (float)tsd[g];
			if (dgamma)
				dgamma[c] = (float)dg;
			double a = gamma[c] * is, b = -a * is * dg / N, k = -a * tsd[g] / N - b * m;

			fa[g] = (float)a, fb[g] = (float)b, fk[g] = (float)k;
		}
		if (!din)
			continue;
		for (int n = 0; n < B; n++)
			for (int g = 0; g < G; g++) {
				size_t off = (size_t)n * stride + (size_t)(c0 + g) * HW;

				bn_bwd_row(din + off, dout + off, y0 ? y0 + off : NULL, in + off, HW,
					   fa[g], fb[g], fk[g]);
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
