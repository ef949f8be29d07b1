/* nn/optim.h — the optimiser pieces the algorithms share, on flat float vectors. */
#ifndef NN_OPTIM_H
#define NN_OPTIM_H

#include <stddef.h>
#include <stdint.h>

/* x -= lr * (g + wd * x) */
void optim_sgd(float *x, const float *g, size_t n, float lr, float wd);
/* The same into dst (which may be x): dst = x - lr * (g + wd * x), bit for bit */
void optim_sgd_to(float *dst, const float *x, const float *g, size_t n, float lr, float wd);
/* v = beta * v + g  (PyTorch's SGD momentum, no dampening) */
void optim_momentum(float *v, const float *g, size_t n, float beta);
/* v = (1 - beta) * g + beta * v  (Signum's momentum) */
void optim_ema(float *v, const float *g, size_t n, float beta);
/* One step of PyTorch's SGD (no dampening) into dst (which may be x): without v,
 * dst = x - lr (g + wd x); with v, g += wd x, v = beta v + g, then dst = x - lr v, or
 * with nesterov dst = x - lr (g + beta v).  g is overwritten where v is given. */
void optim_sgd_step(float *dst, const float *x, float *g, float *v, size_t n, float lr,
		    float wd, float beta, int nesterov);
/* Step t (1, 2, ...) of PyTorch's Adam (decoupled = 0: wd adds wd x to g) or AdamW
 * (decoupled = 1: x first shrinks by lr wd) into dst (which may be x), m and v its two
 * moments: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g g, then
 * dst = x - lr / (1 - b1^t) m / (sqrt(v) / sqrt(1 - b2^t) + eps). */
void optim_adam_step(float *dst, const float *x, const float *g, float *m, float *v,
		     size_t n, double lr, float wd, double b1, double b2, float eps, int64_t t,
		     int decoupled);
/* Step t (1, 2, ...) of LAMB (You et al., ICLR 2020, Algorithm 2) before its layer-wise
 * trust ratio: m, v as Adam's (no weight decay in g), u = m / (1 - b1^t) / (sqrt(v / (1 -
 * b2^t)) + eps) + wd x into u (which may be g).  A layer then steps x -= lr r u, r =
 * optim_lamb_ratio(|x|^2, |u|^2) = |x| / |u| (1 where either is 0). */
void optim_lamb_update(float *u, const float *x, const float *g, float *m, float *v,
		       size_t n, double b1, double b2, float eps, float wd, int64_t t);
float optim_lamb_ratio(double x2, double u2);
/* LARS trust ratio of one layer from its squared norms w2 = |w|^2, g2 = |g|^2
 * (optim_norm2): trust * |w| / (|g| + wd * |w| + eps); 1 if |w| or |g| is 0 */
float optim_lars_ratio(double w2, double g2, float trust, float wd, float eps);
/* LARS's gradient of one layer, as timm's Lars: g = (g + wd x) r, r its optim_lars_ratio
 * from the raw gradient's norm; the step is then SGD's without weight decay. */
void optim_lars_grad(float *g, const float *x, size_t n, float wd, float r);
double optim_norm2(const float *v, size_t n);	/* squared Euclidean norm, double accumulator */

/* The shape of the rate after the warm-up, each as PyTorch's scheduler of that name
 * stepped once a training step (t: the share of the steps after the warm-up done):
 *   LR_STEP      factor at each epoch of decay[] (MultiStepLR)
 *   LR_COSINE    end + (peak - end) (1 + cos(pi t)) / 2 (CosineAnnealingLR, eta_min = end)
 *   LR_LINEAR    peak + (end - peak) t (LinearLR to end / peak)
 *   LR_POLY      peak (1 - t)^power (PolynomialLR)
 *   LR_ONECYCLE  OneCycleLR's two cosine phases, from peak / 25 up to peak over the first
 *                30% of the steps, then down to peak / 25e4 (no warm-up of its own; the
 *                momentum is not cycled) */
enum lr_kind { LR_STEP, LR_COSINE, LR_LINEAR, LR_POLY, LR_ONECYCLE };

/* Learning-rate schedule of Goyal et al. (2017): base * scale (the workers' factor: 1,
 * n for linear scaling, sqrt n), capped at max when max > 0: the peak; a linear warm-up
 * from base (one worker's rate) to the peak over warmup_epochs, then the kind's shape
 * over the rest of the total_steps steps of spe a epoch.  epoch is fractional. */
struct lr_schedule {
	enum lr_kind kind;
	double base;
	double scale, max;
	double end, power;
	double spe, total_steps;
	double warmup_epochs;
	int ndecay;
	const double *decay;
	double factor;
};
double lr_at(const struct lr_schedule *s, double epoch);

#endif
