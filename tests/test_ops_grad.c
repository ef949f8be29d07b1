/* tests/test_ops_grad.c — the reference backend ("ref") against calculus.
 *
 * Each op's forward is re-derived here in double precision, independently of nn/;
 * the reference forward must match it, and every output of the reference backward
 * must match central finite differences of the double forward, for the loss
 * L = sum(out * R) with a random R (so dL/dout = R is what backward receives).
 * Inputs are floats, so the double copies hold the very same values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "nn/ops.h"
#include "tests/backend.h"
#include "tests/rng.h"


/* A tensor in both precisions; f is what the op sees, d what the calculus sees. */
struct ten {
	size_t n;
	float *f;
	double *d;
};

static void ten_init(struct ten *t, size_t n, uint64_t *s, float lo, float hi)
{
	t->n = n;
	t->f = calloc(n ? n : 1, sizeof(float));
	t->d = calloc(n ? n : 1, sizeof(double));
	assert_non_null(t->f);
	assert_non_null(t->d);
	for (size_t i = 0; i < n; i++) {
		t->f[i] = test_unif_f(s, lo, hi);
		t->d[i] = t->f[i];
	}
}

/* values at least `gap` apart (ranks shuffled): max pooling and relu stay away from
 * their kinks under a perturbation of size H */
static void ten_init_distinct(struct ten *t, size_t n, uint64_t *s, float gap)
{
	ten_init(t, n, s, 0, 0);
	for (size_t i = 0; i < n; i++)
		t->f[i] = ((float)i - (float)n / 2 + 0.25f) * gap;	/* never 0 */
	for (size_t i = n; i > 1; i--) {
		size_t j = test_rng(s) % i;
		float x = t->f[i - 1];

		t->f[i - 1] = t->f[j];
		t->f[j] = x;
	}
	for (size_t i = 0; i < n; i++)
		t->d[i] = t->f[i];
}

static void ten_free(struct ten *t)
{
	free(t->f);
	free(t->d);
}

/* --- the ops in double, straight from their definitions --- */

struct conv { int B, C, H, W, K, k, S, P, OH, OW; };

static void d_conv(double *out, const double *in, const double *w, const double *b,
		   const struct conv *c)
{
	for (int n = 0; n < c->B; n++)
		for (int k = 0; k < c->K; k++)
			for (int oh = 0; oh < c->OH; oh++)
				for (int ow = 0; ow < c->OW; ow++) {
					double acc = b ? b[k] : 0;

					for (int ci = 0; ci < c->C; ci++)
						for (int i = 0; i < c->k; i++)
							for (int j = 0; j < c->k; j++) {
								int h = oh * c->S - c->P + i, x = ow * c->S - c->P + j;

								if (h >= 0 && h < c->H && x >= 0 && x < c->W)
									acc += in[((n * c->C + ci) * c->H + h) * c->W + x] *
									       w[((k * c->C + ci) * c->k + i) * c->k + j];
							}
					out[((n * c->K + k) * c->OH + oh) * c->OW + ow] = acc;
				}
}

static void d_bn_train(double *out, const double *in, const double *g, const double *be,
		       int B, int C, int HW, double eps, double *mean_out, double *var_out)
{
	for (int c = 0; c < C; c++) {
		double m = 0, v = 0;

		for (int n = 0; n < B; n++)
			for (int i = 0; i < HW; i++)
				m += in[(n * C + c) * HW + i];
		m /= (double)B * HW;
		for (int n = 0; n < B; n++)
			for (int i = 0; i < HW; i++)
				v += pow(in[(n * C + c) * HW + i] - m, 2);
		v /= (double)B * HW;
		for (int n = 0; n < B; n++)
			for (int i = 0; i < HW; i++)
				out[(n * C + c) * HW + i] =
					g[c] * (in[(n * C + c) * HW + i] - m) / sqrt(v + eps) + be[c];
		if (mean_out)
			mean_out[c] = m, var_out[c] = v;
	}
}

/* max (avg == 0) or average (avg == 1) pooling, padding excluded from the max and
 * counted as zeros in the average */
static void d_pool(double *out, const double *in, const struct nn_pool_shape *s, int avg)
{
	for (int p = 0; p < s->B * s->C; p++)
		for (int oh = 0; oh < s->OH; oh++)
			for (int ow = 0; ow < s->OW; ow++) {
				double acc = avg ? 0 : -INFINITY;

				for (int i = 0; i < s->k; i++)
					for (int j = 0; j < s->k; j++) {
						int h = oh * s->stride - s->pad + i;
						int w = ow * s->stride - s->pad + j;

						if (h < 0 || h >= s->H || w < 0 || w >= s->W)
							continue;
						double x = in[(p * s->H + h) * s->W + w];

						if (avg)
							acc += x;
						else if (x > acc)
							acc = x;
					}
				out[(p * s->OH + oh) * s->OW + ow] = avg ? acc / (s->k * s->k) : acc;
			}
}

static double d_xent(const double *l, const int32_t *y, int B, int K)
{
	double loss = 0;

	for (int n = 0; n < B; n++) {
		double sum = 0;

		for (int k = 0; k < K; k++)
			sum += exp(l[n * K + k]);
		loss += log(sum) - l[n * K + y[n]];
	}
	return loss / B;
}

/* --- finite differences --- */

#define FD_H 1e-4

/* A loss of the double tensors in ctx. */
typedef double (*loss_fn)(void *ctx);

/* Checks grad (float, from the reference backward) against central differences of
 * loss with respect to every element of x (at most 300, spread over x). */
static int fd_check(const char *what, loss_fn loss, void *ctx, struct ten *x,
		    const float *grad, double atol, double rtol)
{
	size_t step = x->n > 300 ? x->n / 300 + 1 : 1, bad = 0;
	double worst = 0;

	for (size_t i = 0; i < x->n; i += step) {
		double keep = x->d[i], lp, lm, fd, err;

		x->d[i] = keep + FD_H;
		lp = loss(ctx);
		x->d[i] = keep - FD_H;
		lm = loss(ctx);
		x->d[i] = keep;
		fd = (lp - lm) / (2 * FD_H);
		err = fabs(fd - grad[i]);
		if (err > worst)
			worst = err;
		if (err > atol + rtol * fabs(fd) && bad++ < 5)
			printf("%s[%zu]: backward %.8g, finite difference %.8g\n", what, i,
			       grad[i], fd);
	}
	if (bad)
		printf("%s: %zu mismatches, largest error %.3g\n", what, bad, worst);
	return bad == 0;
}

/* Compares a forward output of the reference with the double definition. */
static int fwd_check(const char *what, const float *got, const double *want, size_t n,
		     double atol, double rtol)
{
	size_t bad = 0;
	double worst = 0;

	for (size_t i = 0; i < n; i++) {
		double err = fabs(got[i] - want[i]);

		if (err > worst)
			worst = err;
		if (!(err <= atol + rtol * fabs(want[i])) && bad++ < 5)
			printf("%s[%zu]: reference %.8g, definition %.8g\n", what, i, got[i],
			       want[i]);
	}
	if (bad)
		printf("%s: %zu mismatches, largest error %.3g\n", what, bad, worst);
	return bad == 0;
}

static double dot(const double *a, const float *r, size_t n)
{
	double acc = 0;

	for (size_t i = 0; i < n; i++)
		acc += a[i] * r[i];
	return acc;
}

#define ATOL 1e-5
#define RTOL 1e-4

/* --- linear --- */

struct lin_ctx { struct ten x, w, b, r; int B, Cin, Cout; double *out; };

static void d_linear(struct lin_ctx *c)
{
	for (int n = 0; n < c->B; n++)
		for (int o = 0; o < c->Cout; o++) {
			double acc = c->b.d[o];

			for (int i = 0; i < c->Cin; i++)
				acc += c->x.d[n * c->Cin + i] * c->w.d[o * c->Cin + i];
			c->out[n * c->Cout + o] = acc;
		}
}

static double lin_loss(void *p)
{
	struct lin_ctx *c = p;

	d_linear(c);
	return dot(c->out, c->r.f, (size_t)c->B * c->Cout);
}

static void test_linear(void **state)
{
	struct nn_backend *be = test_be("ref");
	const struct nn_ops *ops = be->ops;
	static const int shapes[][3] = { { 1, 1, 1 }, { 3, 7, 5 }, { 8, 33, 10 }, { 5, 64, 17 } };
	uint64_t s = 1;

	for (size_t t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
		struct lin_ctx c = { .B = shapes[t][0], .Cin = shapes[t][1], .Cout = shapes[t][2] };
		size_t no = (size_t)c.B * c.Cout;
		float *out = calloc(no, 4), *dx, *dw, *db;

		ten_init(&c.x, (size_t)c.B * c.Cin, &s, -1, 1);
		ten_init(&c.w, (size_t)c.Cout * c.Cin, &s, -1, 1);
		ten_init(&c.b, c.Cout, &s, -1, 1);
		ten_init(&c.r, no, &s, -1, 1);
		c.out = calloc(no, sizeof(double));
		dx = calloc(c.x.n, 4), dw = calloc(c.w.n, 4), db = calloc(c.b.n, 4);
		ops->linear_fwd(be, out, c.x.f, c.w.f, c.b.f, c.B, c.Cin, c.Cout);
		d_linear(&c);
		assert_true(fwd_check("linear out", out, c.out, no, ATOL, RTOL));
		ops->linear_bwd(be, dx, dw, db, c.r.f, c.x.f, c.w.f, c.B, c.Cin, c.Cout);
		assert_true(fd_check("linear din", lin_loss, &c, &c.x, dx, ATOL, RTOL));
		assert_true(fd_check("linear dw", lin_loss, &c, &c.w, dw, ATOL, RTOL));
		assert_true(fd_check("linear db", lin_loss, &c, &c.b, db, ATOL, RTOL));
		ten_free(&c.x), ten_free(&c.w), ten_free(&c.b), ten_free(&c.r);
		free(c.out), free(out), free(dx), free(dw), free(db);
	}
}

/* --- conv --- */

struct conv_ctx { struct ten x, w, b, r; struct conv cv; double *out; };

static double conv_loss(void *p)
{
	struct conv_ctx *c = p;

	d_conv(c->out, c->x.d, c->w.d, c->b.d, &c->cv);
	return dot(c->out, c->r.f, c->r.n);
}

static void test_conv(void **state)
{
	struct nn_backend *be = test_be("ref");
	const struct nn_ops *ops = be->ops;
	/* B C H W K k stride pad */
	static const int shapes[][8] = {
		{ 1, 1, 5, 5, 1, 3, 1, 1 }, { 2, 3, 7, 6, 4, 3, 1, 1 }, { 2, 2, 9, 8, 3, 3, 2, 1 },
		{ 1, 3, 8, 7, 2, 1, 2, 0 }, { 3, 2, 11, 10, 2, 5, 3, 2 }, { 1, 2, 9, 9, 3, 7, 1, 2 },
		{ 2, 4, 6, 5, 5, 3, 2, 0 }, { 1, 1, 4, 4, 2, 5, 1, 2 },
	};
	uint64_t s = 2;

	for (size_t t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
		const int *q = shapes[t];
		struct nn_conv_shape sh;
		struct conv_ctx c;

		nn_conv_shape_init(&sh, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
		/* the output size from its definition: the last window fits the padded input */
		assert_true((sh.OH - 1) * sh.stride + sh.kh <= sh.H + 2 * sh.pad);
		assert_true(sh.OH * sh.stride + sh.kh > sh.H + 2 * sh.pad);
		assert_true((sh.OW - 1) * sh.stride + sh.kw <= sh.W + 2 * sh.pad);
		assert_true(sh.OW * sh.stride + sh.kw > sh.W + 2 * sh.pad);
		c.cv = (struct conv){ sh.B, sh.C, sh.H, sh.W, sh.K, sh.kh, sh.stride, sh.pad,
				      sh.OH, sh.OW };
		size_t no = (size_t)sh.B * sh.K * sh.OH * sh.OW;
		size_t nw = ops->conv_ws_floats(be, &sh);
		float *ws = calloc(nw ? nw : 1, 4), *out = calloc(no, 4), *dx, *dw, *db;

		ten_init(&c.x, (size_t)sh.B * sh.C * sh.H * sh.W, &s, -1, 1);
		ten_init(&c.w, (size_t)sh.K * sh.C * sh.kh * sh.kw, &s, -1, 1);
		ten_init(&c.b, sh.K, &s, -1, 1);
		ten_init(&c.r, no, &s, -1, 1);
		c.out = calloc(no, sizeof(double));
		dx = calloc(c.x.n, 4), dw = calloc(c.w.n, 4), db = calloc(c.b.n, 4);
		ops->conv_fwd(be, out, c.x.f, c.w.f, c.b.f, &sh, ws);
		d_conv(c.out, c.x.d, c.w.d, c.b.d, &c.cv);
		assert_true(fwd_check("conv out", out, c.out, no, ATOL, RTOL));
		ops->conv_bwd(be, dx, dw, db, c.r.f, c.x.f, c.w.f, &sh, ws);
		assert_true(fd_check("conv din", conv_loss, &c, &c.x, dx, ATOL, RTOL));
		assert_true(fd_check("conv dw", conv_loss, &c, &c.w, dw, ATOL, RTOL));
		assert_true(fd_check("conv db", conv_loss, &c, &c.b, db, ATOL, RTOL));
		ten_free(&c.x), ten_free(&c.w), ten_free(&c.b), ten_free(&c.r);
		free(c.out), free(out), free(dx), free(dw), free(db), free(ws);
	}
}

/* --- batch norm --- */

struct bn_ctx { struct ten x, g, be, r; int B, C, HW; double *out; };

#define BN_EPS 1e-5

static double bn_loss(void *p)
{
	struct bn_ctx *c = p;

	d_bn_train(c->out, c->x.d, c->g.d, c->be.d, c->B, c->C, c->HW, BN_EPS, NULL, NULL);
	return dot(c->out, c->r.f, c->r.n);
}

static void test_bn(void **state)
{
	struct nn_backend *be = test_be("ref");
	const struct nn_ops *ops = be->ops;
	static const int shapes[][3] = { { 2, 1, 1 }, { 4, 3, 5 }, { 3, 2, 9 }, { 1, 4, 7 } };
	uint64_t s = 3;

	for (size_t t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
		struct bn_ctx c = { .B = shapes[t][0], .C = shapes[t][1], .HW = shapes[t][2] };
		size_t n = (size_t)c.B * c.C * c.HW;
		const float mom = 0.1f;
		float *out = calloc(n, 4), *dx = calloc(n, 4), *dg = calloc(c.C, 4);
		float *db = calloc(c.C, 4), *rm = calloc(c.C, 4), *rv = calloc(c.C, 4);
		float *sm = calloc(c.C, 4), *si = calloc(c.C, 4), *rm0 = calloc(c.C, 4);
		float *rv0 = calloc(c.C, 4);
		double *mean = calloc(c.C, 8), *var = calloc(c.C, 8), *eval = calloc(n, 8);

		/* an offset and scale per channel, so normalisation has work to do */
		ten_init(&c.x, n, &s, -1, 1);
		for (size_t i = 0; i < n; i++) {
			int ch = (int)(i / c.HW % c.C);

			c.x.f[i] = c.x.f[i] * (1 + ch) + 0.5f * ch;
			c.x.d[i] = c.x.f[i];
		}
		ten_init(&c.g, c.C, &s, 0.5f, 1.5f);
		ten_init(&c.be, c.C, &s, -1, 1);
		ten_init(&c.r, n, &s, -1, 1);
		c.out = calloc(n, sizeof(double));
		for (int ch = 0; ch < c.C; ch++) {
			rm0[ch] = rm[ch] = test_unif_f(&s, -1, 1);
			rv0[ch] = rv[ch] = test_unif_f(&s, 0.5f, 2);
		}
		ops->bn_fwd(be, out, c.x.f, c.g.f, c.be.f, rm, rv, sm, si, c.B, c.C, c.HW, mom,
			    (float)BN_EPS, 1);
		d_bn_train(c.out, c.x.d, c.g.d, c.be.d, c.B, c.C, c.HW, BN_EPS, mean, var);
		assert_true(fwd_check("bn out", out, c.out, n, ATOL, RTOL));
		for (int ch = 0; ch < c.C; ch++) {
			double N = (double)c.B * c.HW;
			double unb = N > 1 ? var[ch] * N / (N - 1) : var[ch];
			double want_rm = (1 - mom) * rm0[ch] + mom * mean[ch];
			double want_rv = (1 - mom) * rv0[ch] + mom * unb;

			assert_true(fabs(rm[ch] - want_rm) <= 1e-6 + 1e-5 * fabs(want_rm));
			assert_true(fabs(rv[ch] - want_rv) <= 1e-6 + 1e-5 * fabs(want_rv));
			assert_true(fabs(sm[ch] - mean[ch]) <= 1e-6 + 1e-5 * fabs(mean[ch]));
			assert_true(fabs(si[ch] - 1 / sqrt(var[ch] + BN_EPS)) <=
				    1e-5 / sqrt(var[ch] + BN_EPS));
		}
		ops->bn_bwd(be, dx, dg, db, c.r.f, c.x.f, c.g.f, sm, si, c.B, c.C, c.HW);
		/* one element per channel: normalised output is constant, din is ~0 */
		assert_true(fd_check("bn din", bn_loss, &c, &c.x, dx, 1e-4, 1e-3));
		assert_true(fd_check("bn dgamma", bn_loss, &c, &c.g, dg, ATOL, RTOL));
		assert_true(fd_check("bn dbeta", bn_loss, &c, &c.be, db, ATOL, RTOL));

		/* eval: the running statistics, which stay as they are */
		memcpy(rm0, rm, c.C * 4), memcpy(rv0, rv, c.C * 4);
		ops->bn_fwd(be, out, c.x.f, c.g.f, c.be.f, rm, rv, NULL, NULL, c.B, c.C, c.HW,
			    mom, (float)BN_EPS, 0);
		for (size_t i = 0; i < n; i++) {
			int ch = (int)(i / c.HW % c.C);

			eval[i] = c.g.d[ch] * (c.x.d[i] - rm[ch]) / sqrt((double)rv[ch] + BN_EPS) +
				  c.be.d[ch];
		}
		assert_true(fwd_check("bn eval out", out, eval, n, ATOL, RTOL));
		assert_memory_equal(rm, rm0, c.C * 4);
		assert_memory_equal(rv, rv0, c.C * 4);
		ten_free(&c.x), ten_free(&c.g), ten_free(&c.be), ten_free(&c.r);
		free(c.out), free(out), free(dx), free(dg), free(db), free(rm), free(rv);
		free(sm), free(si), free(rm0), free(rv0), free(mean), free(var), free(eval);
	}
}

/* --- pooling --- */

struct pool_ctx { struct ten x, r; struct nn_pool_shape s; int avg; double *out; };

static double pool_loss(void *p)
{
	struct pool_ctx *c = p;

	d_pool(c->out, c->x.d, &c->s, c->avg);
	return dot(c->out, c->r.f, c->r.n);
}

static void test_pool(void **state)
{
	struct nn_backend *be = test_be("ref");
	const struct nn_ops *ops = be->ops;
	/* B C H W k stride pad */
	static const int shapes[][7] = {
		{ 1, 1, 4, 4, 2, 2, 0 }, { 2, 3, 7, 5, 3, 2, 1 }, { 1, 2, 9, 8, 3, 1, 1 },
		{ 3, 1, 10, 11, 5, 3, 2 }, { 2, 2, 6, 6, 2, 1, 0 }, { 1, 1, 1, 1, 1, 1, 0 },
	};
	uint64_t s = 4;

	for (int avg = 0; avg < 2; avg++)
		for (size_t t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
			const int *q = shapes[t];
			struct pool_ctx c = { .avg = avg };

			nn_pool_shape_init(&c.s, q[0], q[1], q[2], q[3], q[4], q[5], q[6]);
			size_t ni = (size_t)q[0] * q[1] * q[2] * q[3];
			size_t no = (size_t)q[0] * q[1] * c.s.OH * c.s.OW;
			float *out = calloc(no, 4), *dx = calloc(ni, 4);
			int32_t *am = calloc(no, 4);

			ten_init_distinct(&c.x, ni, &s, 0.01f);
			ten_init(&c.r, no, &s, -1, 1);
			c.out = calloc(no, sizeof(double));
			if (avg) {
				ops->avgpool_fwd(be, out, c.x.f, &c.s);
				ops->avgpool_bwd(be, dx, c.r.f, &c.s);
			} else {
				ops->maxpool_fwd(be, out, am, c.x.f, &c.s);
				for (size_t i = 0; i < no; i++) {
					size_t plane = i / ((size_t)c.s.OH * c.s.OW);

					assert_true(am[i] >= 0 && am[i] < q[2] * q[3]);
					assert_true(out[i] == c.x.f[plane * q[2] * q[3] + am[i]]);
				}
				ops->maxpool_bwd(be, dx, c.r.f, am, &c.s);
			}
			d_pool(c.out, c.x.d, &c.s, avg);
			assert_true(fwd_check(avg ? "avgpool out" : "maxpool out", out, c.out, no,
					      ATOL, RTOL));
			assert_true(fd_check(avg ? "avgpool din" : "maxpool din", pool_loss, &c,
					     &c.x, dx, ATOL, RTOL));
			ten_free(&c.x), ten_free(&c.r);
			free(c.out), free(out), free(dx), free(am);
		}
}

/* --- global average pool, relu, add --- */

struct ew_ctx { struct ten x, y, r; int kind, B, C, HW; double *out; };
enum { EW_GAP, EW_RELU, EW_ADD };

static double ew_loss(void *p)
{
	struct ew_ctx *c = p;

	if (c->kind == EW_GAP) {
		for (int i = 0; i < c->B * c->C; i++) {
			c->out[i] = 0;
			for (int j = 0; j < c->HW; j++)
				c->out[i] += c->x.d[(size_t)i * c->HW + j] / c->HW;
		}
	} else {
		for (size_t i = 0; i < c->x.n; i++)
			c->out[i] = c->kind == EW_RELU ? fmax(c->x.d[i], 0) : c->x.d[i] + c->y.d[i];
	}
	return dot(c->out, c->r.f, c->r.n);
}

static void test_elementwise(void **state)
{
	struct nn_backend *be = test_be("ref");
	const struct nn_ops *ops = be->ops;
	uint64_t s = 5;

	for (int kind = EW_GAP; kind <= EW_ADD; kind++) {
		struct ew_ctx c = { .kind = kind, .B = 3, .C = 5, .HW = 7 };
		size_t n = (size_t)c.B * c.C * c.HW, no = kind == EW_GAP ? (size_t)c.B * c.C : n;
		float *out = calloc(n, 4), *dx = calloc(n, 4);

		ten_init_distinct(&c.x, n, &s, 0.01f);
		ten_init(&c.y, n, &s, -1, 1);
		ten_init(&c.r, no, &s, -1, 1);
		c.out = calloc(n, sizeof(double));
		if (kind == EW_GAP) {
			ops->gap_fwd(be, out, c.x.f, c.B, c.C, c.HW);
			ops->gap_bwd(be, dx, c.r.f, c.B, c.C, c.HW);
		} else if (kind == EW_RELU) {
			ops->relu_fwd(be, out, c.x.f, n);
			ops->relu_bwd(be, dx, c.r.f, out, n);
		} else {
			ops->add_fwd(be, out, c.x.f, c.y.f, n);
			memcpy(dx, c.r.f, n * 4);	/* backward of add is the identity */
		}
		ew_loss(&c);
		assert_true(fwd_check("elementwise out", out, c.out, no, ATOL, RTOL));
		assert_true(fd_check("elementwise din", ew_loss, &c, &c.x, dx, ATOL, RTOL));
		ten_free(&c.x), ten_free(&c.y), ten_free(&c.r);
		free(c.out), free(out), free(dx);
	}
}

/* --- softmax cross-entropy --- */

struct xent_ctx { struct ten l; int32_t *y; int B, K; };

static double xent_loss(void *p)
{
	struct xent_ctx *c = p;

	return d_xent(c->l.d, c->y, c->B, c->K);
}

static void test_xent(void **state)
{
	struct nn_backend *be = test_be("ref");
	const struct nn_ops *ops = be->ops;
	static const int shapes[][2] = { { 1, 2 }, { 4, 10 }, { 7, 3 }, { 32, 10 } };
	uint64_t s = 6;

	for (size_t t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
		struct xent_ctx c = { .B = shapes[t][0], .K = shapes[t][1] };
		float *dl = calloc((size_t)c.B * c.K, 4);
		int correct = -1, want_correct = 0;

		ten_init(&c.l, (size_t)c.B * c.K, &s, -4, 4);
		c.y = calloc(c.B, 4);
		for (int n = 0; n < c.B; n++) {
			int best = 0;

			c.y[n] = (int32_t)(test_rng(&s) % c.K);
			for (int k = 1; k < c.K; k++)
				if (c.l.f[n * c.K + k] > c.l.f[n * c.K + best])
					best = k;
			want_correct += best == c.y[n];
		}
		float loss = ops->xent_fwd_bwd(be, dl, c.l.f, c.y, c.B, c.K, &correct);
		double want = d_xent(c.l.d, c.y, c.B, c.K);

		assert_true(fabs(loss - want) <= 1e-6 + 1e-6 * want);
		assert_int_equal(correct, want_correct);
		assert_true(fd_check("xent dlogits", xent_loss, &c, &c.l, dl, 1e-6, RTOL));
		/* loss only: no gradient, no count */
		assert_true(ops->xent_fwd_bwd(be, NULL, c.l.f, c.y, c.B, c.K, NULL) == loss);
		ten_free(&c.l);
		free(c.y), free(dl);
	}
}

/* --- fused ops: the reference's fusions against its parts --- */

static void test_fused(void **state)
{
	struct nn_backend *be = test_be("ref");
	const struct nn_ops *ops = be->ops;
	const int B = 3, C = 4, HW = 9;
	const size_t n = (size_t)B * C * HW;
	uint64_t s = 7;
	float *x = malloc(n * 4), *dout = malloc(n * 4), *g = malloc(C * 4), *b = malloc(C * 4);
	float *y = malloc(n * 4), *ry = malloc(n * 4), *masked = malloc(n * 4);
	float *sm = malloc(C * 4), *si = malloc(C * 4), *dx = malloc(n * 4), *rdx = malloc(n * 4);
	float *dg = malloc(C * 4), *rdg = malloc(C * 4), *db = malloc(C * 4), *rdb = malloc(C * 4);
	assert_true(x && dout && g && b && y && ry && masked && sm && si && dx && rdx && dg && rdg);
	assert_true(db && rdb);
	for (size_t i = 0; i < n; i++)
		x[i] = test_unif_f(&s, -1, 1), dout[i] = test_unif_f(&s, -1, 1);
	for (int c = 0; c < C; c++)
		g[c] = test_unif_f(&s, 0.5f, 1.5f), b[c] = test_unif_f(&s, -1, 1);
	/* bn + relu = relu(bn); its backward = bn's of the gradient masked by y > 0 */
	ops->bn_fwd(be, ry, x, g, b, NULL, NULL, sm, si, B, C, HW, 0.1f, 1e-5f, 1);
	for (size_t i = 0; i < n; i++) {
		masked[i] = ry[i] > 0 ? dout[i] : 0;
		ry[i] = ry[i] > 0 ? ry[i] : 0;
	}
	ops->bn_relu_fwd(be, y, x, g, b, NULL, NULL, NULL, NULL, B, C, HW, 0.1f, 1e-5f, 1);
	assert_memory_equal(y, ry, n * 4);
	ops->bn_bwd(be, rdx, rdg, rdb, masked, x, g, sm, si, B, C, HW);
	ops->bn_relu_bwd(be, dx, dg, db, dout, y, x, g, sm, si, B, C, HW);
	assert_memory_equal(dx, rdx, n * 4);
	assert_memory_equal(dg, rdg, C * 4);
	assert_memory_equal(db, rdb, C * 4);
	/* add + relu = relu(add), in place too */
	ops->add_fwd(be, ry, x, dout, n);
	for (size_t i = 0; i < n; i++)
		ry[i] = ry[i] > 0 ? ry[i] : 0;
	ops->add_relu_fwd(be, y, x, dout, n);
	assert_memory_equal(y, ry, n * 4);
	memcpy(y, x, n * 4);
	ops->add_relu_fwd(be, y, y, dout, n);
	assert_memory_equal(y, ry, n * 4);
	free(x), free(dout), free(g), free(b), free(y), free(ry), free(masked), free(sm), free(si);
	free(dx), free(rdx), free(dg), free(rdg), free(db), free(rdb);
}

/* --- embedding --- */

static void test_embed(void **state)
{
	struct nn_backend *be = test_be("ref");
	static const int shapes[][4] = { { 1, 1, 1, 3 }, { 3, 7, 5, 4 }, { 4, 13, 17, 9 } };
	uint64_t s = 11;
	for (size_t t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
		int B = shapes[t][0], T = shapes[t][1], D = shapes[t][2], V = shapes[t][3];
		size_t P = (size_t)B * T, nt = (size_t)V * D;
		int32_t *tok = malloc(P * sizeof(int32_t));
		float *table = malloc(nt * 4), *dout = malloc(P * D * 4), *out = malloc(P * D * 4);
		float *g = malloc(nt * 4);
		double *want = calloc(nt, sizeof(double));
		assert_true(tok && table && dout && out && g && want);
		for (size_t i = 0; i < nt; i++)
			table[i] = test_unif_f(&s, -1, 1), g[i] = 1e9f;	/* g starts as junk */
		for (size_t i = 0; i < P * D; i++)
			dout[i] = test_unif_f(&s, -1, 1);
		for (size_t p = 0; p < P; p++)	/* V < P: tokens repeat and must add up */
			tok[p] = (int32_t)(test_rng(&s) % (uint64_t)V);
		be->ops->embed_fwd(be, out, tok, table, B, T, D);
		for (size_t p = 0; p < P; p++)
			for (int d = 0; d < D; d++)
				assert_true(out[p * D + d] == table[(size_t)tok[p] * D + d]);
		/* L = sum dout * out is linear in the table: dL/dtable[v,d] is the sum of dout
		 * over the positions of token v, summed here in double */
		for (size_t p = 0; p < P; p++)
			for (int d = 0; d < D; d++)
				want[(size_t)tok[p] * D + d] += dout[p * D + d];
		be->ops->embed_bwd(be, g, dout, tok, B, T, D, V);
		assert_true(fwd_check("embed dtable", g, want, nt, 1e-6, 1e-6));
		free(tok), free(table), free(dout), free(out), free(g), free(want);
	}
}

/* --- LSTM --- */

struct lstm_ctx {
	int B, T, D, H;
	struct ten in, wx, wh, b;
	float *dout;
};

static double dsig(double x)
{
	return 1 / (1 + exp(-x));
}

/* Independent forward in double, written from the PyTorch formulas:
 * i = s(Wii x + Whi h + b_i), f = s(..), g = tanh(..), o = s(..), c = f c + i g,
 * h = o tanh(c); returns L = sum dout * h_T. */
static double lstm_loss(void *p)
{
	const struct lstm_ctx *k = p;
	int B = k->B, T = k->T, D = k->D, H = k->H, G = 4 * H;
	const double *in = k->in.d, *wx = k->wx.d, *wh = k->wh.d, *b = k->b.d;
	double *h = calloc((size_t)H, sizeof(double)), *c = calloc((size_t)H, sizeof(double));
	double *a = malloc((size_t)G * sizeof(double)), L = 0;
	assert_true(h && c && a);
	for (int n = 0; n < B; n++) {
		memset(h, 0, (size_t)H * sizeof(double));
		memset(c, 0, (size_t)H * sizeof(double));
		for (int t = 0; t < T; t++) {
			for (int j = 0; j < G; j++) {
				a[j] = b[j];
				for (int d = 0; d < D; d++)
					a[j] += wx[j * D + d] * in[(n * T + t) * D + d];
				for (int m = 0; m < H; m++)
					a[j] += wh[j * H + m] * h[m];
			}
			for (int m = 0; m < H; m++) {
				c[m] = dsig(a[H + m]) * c[m] + dsig(a[m]) * tanh(a[2 * H + m]);
				h[m] = dsig(a[3 * H + m]) * tanh(c[m]);
			}
		}
		for (int m = 0; m < H; m++)
			L += k->dout[n * H + m] * h[m];
	}
	free(h), free(c), free(a);
	return L;
}

/* The reference forward against the double one, every gradient against central
 * differences, and a second backward on the same forward (its scratch lives in the
 * cache) giving the same bits, with NULL outputs skipped. */
static void test_lstm(void **state)
{
	struct nn_backend *be = test_be("ref");
	const struct nn_ops *ops = be->ops;
	static const int shapes[][4] = { { 2, 3, 3, 4 }, { 1, 5, 2, 3 }, { 3, 1, 2, 2 } };
	uint64_t s = 13;
	for (size_t t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
		struct lstm_ctx k = { .B = shapes[t][0], .T = shapes[t][1], .D = shapes[t][2],
				       .H = shapes[t][3] };
		int B = k.B, T = k.T, D = k.D, H = k.H, G = 4 * H;
		float sc = 1 / sqrtf(H);	/* PyTorch's init range */
		ten_init(&k.in, (size_t)B * T * D, &s, -1, 1);
		ten_init(&k.wx, (size_t)G * D, &s, -2 * sc, 2 * sc);
		ten_init(&k.wh, (size_t)G * H, &s, -2 * sc, 2 * sc);
		ten_init(&k.b, (size_t)G, &s, -sc, sc);
		k.dout = malloc((size_t)B * H * 4);
		float *out = malloc((size_t)B * H * 4);
		float *cache = malloc(nn_lstm_cache_floats(B, T, H) * 4);
		float *din = malloc(k.in.n * 4), *dwx = malloc(k.wx.n * 4), *dwh = malloc(k.wh.n * 4);
		float *db = malloc(k.b.n * 4), *again = malloc(k.wx.n * 4);
		assert_true(k.dout && out && cache && din && dwx && dwh && db && again);
		for (int i = 0; i < B * H; i++)
			k.dout[i] = test_unif_f(&s, -1, 1);
		ops->lstm_fwd(be, out, cache, k.in.f, k.wx.f, k.wh.f, k.b.f, B, T, D, H);
		double L = 0;
		for (int i = 0; i < B * H; i++)
			L += (double)k.dout[i] * out[i];
		assert_true(fabs(L - lstm_loss(&k)) < 1e-5);
		ops->lstm_bwd(be, din, dwx, dwh, db, k.dout, cache, k.in.f, k.wx.f, k.wh.f, B,
			      T, D, H);
		assert_true(fd_check("lstm din", lstm_loss, &k, &k.in, din, 2e-5, 1e-3));
		assert_true(fd_check("lstm dwx", lstm_loss, &k, &k.wx, dwx, 2e-5, 1e-3));
		assert_true(fd_check("lstm dwh", lstm_loss, &k, &k.wh, dwh, 2e-5, 1e-3));
		assert_true(fd_check("lstm db", lstm_loss, &k, &k.b, db, 2e-5, 1e-3));
		ops->lstm_bwd(be, NULL, again, NULL, NULL, k.dout, cache, k.in.f, k.wx.f,
			      k.wh.f, B, T, D, H);
		assert_memory_equal(again, dwx, k.wx.n * 4);
		ten_free(&k.in), ten_free(&k.wx), ten_free(&k.wh), ten_free(&k.b);
		free(k.dout), free(out), free(cache), free(din), free(dwx), free(dwh), free(db);
		free(again);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear), cmocka_unit_test(test_conv),
		cmocka_unit_test(test_bn), cmocka_unit_test(test_pool),
		cmocka_unit_test(test_elementwise), cmocka_unit_test(test_xent),
		cmocka_unit_test(test_fused), cmocka_unit_test(test_embed),
		cmocka_unit_test(test_lstm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
