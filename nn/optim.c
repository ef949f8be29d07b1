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

double lr_at(const struct lr_schedule *s, double epoch)
{
	double target = s->base * s->scale;

	if (s->max > 0 && target > s->max)
		target = s->max;
	double lr = target;
	/* Goyal et al. 2017, sec. 2.2: gradual warm-up from one worker's rate. */
	if (s->warmup_epochs > 0 && epoch < s->warmup_epochs)
		lr = s->base + (target - s->base) * (epoch / s->warmup_epochs);
	for (int i = 0; i < s->ndecay; i++)
		if (epoch >= s->decay[i])
			lr *= s->factor;
	return lr;
}
