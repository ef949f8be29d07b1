/* nn/optim.c — optimiser pieces on flat float vectors (see nn/optim.h). */
#include <math.h>
#include "nn/optim.h"

void optim_sgd_to(float *dst, const float *x, const float *g, size_t n, float lr, float wd)
{
#pragma omp simd
	for (size_t i = 0; i < n; i++)
		dst[i] = x[i] - lr * (g[i] + wd * x[i]);
}

void optim_sgd(float *x, const float *g, size_t n, float lr, float wd)
{
	optim_sgd_to(x, x, g, n, lr, wd);
}

void optim_momentum(float *v, const float *g, size_t n, float beta)
{
#pragma omp simd
	for (size_t i = 0; i < n; i++)
		v[i] = beta * v[i] + g[i];
}

void optim_ema(float *v, const float *g, size_t n, float beta)
{
#pragma omp simd
	for (size_t i = 0; i < n; i++)
		v[i] = (1.0f - beta) * g[i] + beta * v[i];
}

void optim_sgd_step(float *dst, const float *x, float *g, float *v, size_t n, float lr,
		    float wd, float beta, int nesterov)
{
	if (!v) {
		optim_sgd_to(dst, x, g, n, lr, wd);
		return;
	}
	if (wd != 0)
		optim_sgd(g, x, n, -wd, 0);	/* g += wd x */
	optim_momentum(v, g, n, beta);
	if (nesterov)
		optim_sgd(g, v, n, -beta, 0);	/* g += beta v */
	optim_sgd_to(dst, x, nesterov ? g : v, n, lr, 0);
}

void optim_adam_step(float *dst, const float *x, const float *g, float *m, float *v,
		     size_t n, double lr, float wd, double b1, double b2, float eps, int64_t t,
		     int decoupled)
{
	/* the scalars as PyTorch computes them, in double, then applied to floats */
	float step = (float)(lr / (1.0 - pow(b1, (double)t)));
	float bc2 = (float)sqrt(1.0 - pow(b2, (double)t));
	float keep = decoupled ? (float)(1.0 - lr * wd) : 1.0f;
	float fb1 = (float)b1, fb2 = (float)b2, a1 = (float)(1.0 - b1), a2 = (float)(1.0 - b2);

	for (size_t i = 0; i < n; i++) {
		float gi = decoupled || wd == 0 ? g[i] : g[i] + wd * x[i];

		m[i] = fb1 * m[i] + a1 * gi;
		v[i] = fb2 * v[i] + a2 * gi * gi;
		dst[i] = x[i] * keep - step * (m[i] / (sqrtf(v[i]) / bc2 + eps));
	}
}

void optim_lamb_update(float *u, const float *x, const float *g, float *m, float *v,
		       size_t n, double b1, double b2, float eps, float wd, int64_t t)
{
	float bc1 = (float)(1.0 - pow(b1, (double)t)), bc2 = (float)(1.0 - pow(b2, (double)t));
	float fb1 = (float)b1, fb2 = (float)b2, a1 = (float)(1.0 - b1), a2 = (float)(1.0 - b2);

	for (size_t i = 0; i < n; i++) {
		float gi = g[i];

		m[i] = fb1 * m[i] + a1 * gi;
		v[i] = fb2 * v[i] + a2 * gi * gi;
		u[i] = (m[i] / bc1) / (sqrtf(v[i] / bc2) + eps) + wd * x[i];
	}
}

float optim_lamb_ratio(double x2, double u2)
{
	/* a layer at zero, or one that does not move, takes the global rate */
	return x2 == 0 || u2 == 0 ? 1.0f : (float)(sqrt(x2) / sqrt(u2));
}

double optim_norm2(const float *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)v[i] * v[i];
	return s;
}

float optim_lars_ratio(double w2, double g2, float trust, float wd, float eps)
{
	double wn = sqrt(w2), gn = sqrt(g2);
	/* A fresh zero layer (|w| = 0) or one without gradient keeps the global rate. */
	if (wn == 0 || gn == 0)
		return 1.0f;
	return (float)(trust * wn / (gn + wd * wn + eps));
}

/* PyTorch's _annealing_cos: from start at pct 0 to end at pct 1 */
static double anneal_cos(double start, double end, double pct)
{
	return end + (start - end) / 2.0 * (cos(M_PI * pct) + 1.0);
}

/* OneCycleLR (pct_start 0.3, div_factor 25, final_div_factor 1e4, cos) at step i of n */
static double one_cycle(double peak, double i, double n)
{
	double initial = peak / 25.0, floor = initial / 1e4, up = 0.3 * n - 1.0;

	if (i <= up)
		return anneal_cos(initial, peak, up > 0 ? i / up : 1.0);
	return anneal_cos(peak, floor, n - 1.0 > up ? (i - up) / (n - 1.0 - up) : 1.0);
}

double lr_at(const struct lr_schedule *s, double epoch)
{
	double target = s->base * s->scale, step = epoch * s->spe;

	if (s->max > 0 && target > s->max)
		target = s->max;
	if (s->kind == LR_ONECYCLE)
		return one_cycle(target, step, s->total_steps);
	double lr = target;
	/* Goyal et al. 2017, sec. 2.2: gradual warm-up from one worker's rate. */
	if (s->warmup_epochs > 0 && epoch < s->warmup_epochs)
		lr = s->base + (target - s->base) * (epoch / s->warmup_epochs);
	if (s->kind == LR_STEP) {
		for (int i = 0; i < s->ndecay; i++)
			if (epoch >= s->decay[i])
				lr *= s->factor;
		return lr;
	}
	if (s->warmup_epochs > 0 && epoch < s->warmup_epochs)
		return lr;
	double w = s->warmup_epochs * s->spe, span = s->total_steps - w;
	double t = span > 0 ? (step - w) / span : 1.0;

	t = t < 0 ? 0 : t > 1 ? 1 : t;
	switch (s->kind) {
	case LR_COSINE:
		return anneal_cos(target, s->end, t);
	case LR_LINEAR:
		return target + (s->end - target) * t;
	default:	/* LR_POLY */
		return target * pow(1.0 - t, s->power);
	}
}

void optim_lars_grad(float *g, const float *x, size_t n, float wd, float r)
{
	for (size_t i = 0; i < n; i++)
		g[i] = (g[i] + wd * x[i]) * r;
}
