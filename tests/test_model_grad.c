/* tests/test_model_grad.c — whole-model gradients against finite differences of the
 * loss, for every model type at tiny sizes, on the reference backend (double
 * accumulators).  Central differences: (L(p + h) - L(p - h)) / 2h for a sample of
 * parameters of every layer; tolerance atol + rtol |g|.  Batch norm runs in train mode,
 * so the loss is a function of the whole batch, as the backward pass assumes.
 *
 * Finite differences in float through many relus, max pools and batch norms over tiny
 * batches are noisy: a step crosses kinks, and the loss resolves ~1e-7.  Each check
 * takes the best of a few step sizes; measured on resnet20 (1x8x8, B=2) over 12 data
 * seeds, 0-17 of its 172 checks still miss (nearly all in the first stage, the longest
 * path), so models with kinks may miss a fraction of their checks (mlp 5%, lenet 10%,
 * resnet20 15%), the smooth ones none.  Injected bugs fail far more: dropping the
 * fan-out sum of the residual joins misses 148 of 172; leaving lstm's second bias without
 * its gradient misses the tail check at 8x its tolerance.  The exact check is
 * tests/test_torch_grad.c: the same models in PyTorch float64.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "nn/model.h"
#include "tests/rng.h"
#include "tests/backend.h"

struct fd_case {
	const char *name;
	struct nn_input in;
	int B;
	int per_layer;		/* parameters checked per layer */
	double may_miss;	/* fraction of checks allowed to miss (kinks; see below) */
};

static float loss_of(struct nn_model *m, const float *x, const int32_t *tok, const void *y,
		     int B)
{
	return nn_forward(m, x, tok, y, B, true, NULL);
}

struct fd_data {
	const float *x;
	const int32_t *tok;
	const void *lab;
	int B;
};

/* Central difference of the loss along d over params [off, off+n), against `want` (the
 * backward's g.d); returns error / tolerance of the best of several step sizes: a relu
 * or maxpool kink, or the curvature of batch norm over a tiny batch, spoils a large step,
 * float rounding of the loss a small one; a wrong gradient fails them all. */
static double fd_check(struct nn_model *m, const struct fd_data *dd, size_t off, size_t n,
		       const float *d, double want, double *fd_out)
{
	/* a unit direction over many parameters moves each one little: larger steps */
	static const double hs1[] = {1e-3, 3e-4, 1e-4}, hsn[] = {1e-2, 3e-3, 1e-3, 3e-4};
	const double *hs = n == 1 ? hs1 : hsn;
	float *p0 = malloc(n * sizeof(float));
	assert_non_null(p0);
	memcpy(p0, m->params + off, n * sizeof(float));
	double best = INFINITY;
	for (int t = 0; t < (n == 1 ? 3 : 4) && best > 1; t++) {
		double h = hs[t] * (n == 1 ? fmax(1.0, fabs(p0[0])) : 1.0);
		for (size_t k = 0; k < n; k++)
			m->params[off + k] = (float)(p0[k] + h * d[k]);
		double hp = n == 1 ? ((double)m->params[off] - p0[0]) / d[0] : h;
		double lp = loss_of(m, dd->x, dd->tok, dd->lab, dd->B);
		for (size_t k = 0; k < n; k++)
			m->params[off + k] = (float)(p0[k] - h * d[k]);
		double hm = n == 1 ? (p0[0] - (double)m->params[off]) / d[0] : h;
		double lm = loss_of(m, dd->x, dd->tok, dd->lab, dd->B);
		memcpy(m->params + off, p0, n * sizeof(float));
		double fd = (lp - lm) / (hp + hm);
		/* a few float ulps of the loss over the step, plus 3% */
		double tol = 3e-7 * fmax(1.0, fabs(lp)) / h + 3e-2 * fabs(want);
		double r = fabs(fd - want) / tol;
		if (r < best) {
			best = r;
			*fd_out = fd;
		}
	}
	free(p0);
	return best;
}

static void check_model(const struct fd_case *c)
{
	struct nn_backend *ops = test_be("ref");
	struct nn_model m;
	const struct nn_input *in = &c->in;
	int B = c->B;
	uint64_t s = 12345;

	assert_int_equal(nn_model_init(&m, c->name, in, ops, B, s), 0);
	float *x = NULL, *target = malloc((size_t)B * sizeof(float));
	int32_t *tok = NULL, *y = malloc((size_t)B * sizeof(int32_t));
	assert_non_null(target);
	assert_non_null(y);
	if (in->T) {
		tok = malloc((size_t)B * in->T * sizeof(int32_t));
		assert_non_null(tok);
		for (int i = 0; i < B * in->T; i++)
			tok[i] = (int32_t)(test_rng(&s) % (uint64_t)in->vocab);
	} else {
		size_t n = (size_t)B * in->C * in->H * in->W;
		x = malloc(n * sizeof(float));
		assert_non_null(x);
		for (size_t i = 0; i < n; i++)
			x[i] = (float)(2 * test_unif(&s) - 1);
	}
	for (int i = 0; i < B; i++) {
		y[i] = (int32_t)(test_rng(&s) % (uint64_t)in->nclasses);
		target[i] = (float)(2 * test_unif(&s) - 1);
	}
	const void *lab = in->regression ? (const void *)target : (const void *)y;

	loss_of(&m, x, tok, lab, B);
	nn_backward(&m, NULL);
	float *g = malloc(m.nparams * sizeof(float));
	assert_non_null(g);
	memcpy(g, m.grads, m.nparams * sizeof(float));

	struct fd_data dd = {x, tok, lab, B};
	int checked = 0, bad = 0;
	double worst = 0;
	for (int l = 0; l < m.nlayers; l++) {
		const struct nn_layer *L = &m.layers[l];
		/* the whole layer, then its tail (where biases sit: lstm's two), along random
		 * unit directions of signs: every entry of the gradient counts, and the step
		 * is as long as a single parameter's */
		float *d = malloc(L->size * sizeof(float));
		assert_non_null(d);
		for (int k = -2; k < c->per_layer; k++) {
			size_t i = L->off, n = L->size;
			double want, fd = 0, r;
			if (k == -1 && L->size > 1) {
				n = L->size / 2 < 1024 ? L->size / 2 : 1024;
				i += L->size - n;
			} else if (k >= 0) {
				/* single parameters: the first, the last and random ones */
				i += k == 0 ? 0 : k == 1 ? L->size - 1 : test_rng(&s) % L->size;
				n = 1;
			}
			want = 0;
			for (size_t j = 0; j < n; j++) {
				d[j] = n == 1 ? 1.0f :
				       (float)((test_rng(&s) & 1 ? 1 : -1) / sqrt((double)n));
				want += (double)g[i + j] * d[j];
			}
			r = fd_check(&m, &dd, i, n, d, want, &fd);
			checked++;
			worst = fmax(worst, r);
			if (r > 1) {
				bad++;
				printf("%s: %s %s %zu (%zu): backward %.6g, finite difference %.6g\n",
				       c->name, L->name, n > 1 ? "direction at" : "param", i - L->off,
				       n, want, fd);
			}
		}
		free(d);
	}
	printf("%s: %d checks, worst error/tolerance %.3f\n", c->name, checked,
	       worst);
	if (bad > c->may_miss * checked)
		fail_msg("%s: %d of %d gradients disagree with finite differences", c->name, bad,
			 checked);
	free(g);
	free(x);
	free(tok);
	free(y);
	free(target);
	nn_model_free(&m);
}

static void test_mlp(void **state)
{
	struct fd_case c = {"mlp", {.C = 1, .H = 4, .W = 4, .nclasses = 3}, 3, 12, 0.05};
	check_model(&c);
}

static void test_lenet(void **state)
{
	struct fd_case c = {"lenet", {.C = 1, .H = 12, .W = 12, .nclasses = 3}, 2, 10, 0.1};
	check_model(&c);
}

static void test_resnet20(void **state)
{
	struct fd_case c = {"resnet20", {.C = 1, .H = 8, .W = 8, .nclasses = 3}, 2, 2, 0.15};
	check_model(&c);
}

static void test_lstm(void **state)
{
	struct fd_case c = {"lstm", {.T = 5, .vocab = 7, .nclasses = 3}, 3, 12, 0};
	check_model(&c);
}

static void test_logreg(void **state)
{
	struct fd_case c = {"logreg", {.C = 2, .H = 3, .W = 3, .nclasses = 4}, 4, 12, 0};
	check_model(&c);
}

static void test_linreg(void **state)
{
	struct fd_case c = {"linreg", {.C = 1, .H = 2, .W = 3, .nclasses = 1,
				       .regression = true}, 5, 7, 0};
	check_model(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mlp),	 cmocka_unit_test(test_lenet),
		cmocka_unit_test(test_resnet20), cmocka_unit_test(test_lstm),
		cmocka_unit_test(test_logreg),	 cmocka_unit_test(test_linreg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
