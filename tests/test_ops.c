/* tests/test_ops.c — every op of the fast backend (nn_ops_cpu) against the reference
 * (nn_ops_ref) on random shapes: odd sizes, batch 1 and odd, strides 1-3, paddings 0-2,
 * kernels 1/3/5/7.  Forward and every backward output must agree within
 * |fast - ref| <= atol + rtol |ref|.  Outputs are filled with garbage first (backward
 * overwrites, it never accumulates) and followed by a guard zone that must stay intact;
 * every combination of NULL gradient pointers is run on both backends. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cblas.h>
#include "nn/ops.h"
#include "tests/rng.h"
#include "tests/close.h"

static const struct nn_ops *const backends[] = { &nn_ops_ref, &nn_ops_cpu };
#define NBACKENDS 2

static int rng_int(uint64_t *s, int lo, int hi)	/* [lo, hi] */
{
	return lo + (int)(test_rng(s) % (uint64_t)(hi - lo + 1));
}

/* --- buffers with a guard zone --- */

#define GUARD 16
#define GARBAGE 7.25e7f

static float *buf_new(size_t n)
{
	float *b = malloc((n + GUARD) * sizeof(float));

	assert_non_null(b);
	for (size_t i = 0; i < n + GUARD; i++)
		b[i] = GARBAGE;
	return b;
}

static float *buf_rand(size_t n, uint64_t *s, float lo, float hi)
{
	float *b = buf_new(n);

	for (size_t i = 0; i < n; i++)
		b[i] = test_unif_f(s, lo, hi);
	return b;
}

static void buf_garble(float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = GARBAGE;
}

static int guard_ok(const char *what, const float *b, size_t n)
{
	for (size_t i = n; i < n + GUARD; i++)
		if (b[i] != GARBAGE) {
			printf("%s: wrote past its end (element %zu of %zu)\n", what, i, n);
			return 0;
		}
	return 1;
}

/* a skipped gradient: not one element written */
static int untouched(const char *what, const float *b, size_t n)
{
	for (size_t i = 0; i < n + GUARD; i++)
		if (b[i] != GARBAGE) {
			printf("%s: skipped (NULL) but element %zu was written\n", what, i);
			return 0;
		}
	return 1;
}

/* The shared check, labelled with the backend, and the guard words after the output. */
static int close_enough(const char *what, const char *backend, const float *got,
			const float *want, size_t n, double atol, double rtol)
{
	char label[160];

	snprintf(label, sizeof(label), "%s (%s)", what, backend);
	return floats_close(label, got, want, n, atol, rtol) && guard_ok(what, got, n);
}

#define ATOL 2e-5
#define RTOL 2e-5

/* --- linear --- */

static void check_linear(uint64_t *s, int B, int Cin, int Cout)
{
	size_t nx = (size_t)B * Cin, nw = (size_t)Cout * Cin, no = (size_t)B * Cout;
	float *x = buf_rand(nx, s, -1, 1), *w = buf_rand(nw, s, -1, 1);
	float *b = buf_rand(Cout, s, -1, 1), *dout = buf_rand(no, s, -1, 1);
	float *ro = buf_new(no), *rdx = buf_new(nx), *rdw = buf_new(nw), *rdb = buf_new(Cout);
	float *o = buf_new(no), *dx = buf_new(nx), *dw = buf_new(nw), *db = buf_new(Cout);
	double atol = ATOL * sqrt(Cin + B + Cout);

	for (int bias = 0; bias < 2; bias++) {
		nn_ops_ref.linear_fwd(ro, x, w, bias ? b : NULL, B, Cin, Cout);
		for (int k = 0; k < NBACKENDS; k++) {
			buf_garble(o, no);
			backends[k]->linear_fwd(o, x, w, bias ? b : NULL, B, Cin, Cout);
			assert_true(close_enough("linear out", backends[k]->name, o, ro, no, atol, RTOL));
		}
	}
	nn_ops_ref.linear_bwd(rdx, rdw, rdb, dout, x, w, B, Cin, Cout);
	for (int k = 0; k < NBACKENDS; k++)
		for (int mask = 0; mask < 8; mask++) {
			buf_garble(dx, nx), buf_garble(dw, nw), buf_garble(db, Cout);
			backends[k]->linear_bwd(mask & 1 ? dx : NULL, mask & 2 ? dw : NULL,
						mask & 4 ? db : NULL, dout, x, w, B, Cin, Cout);
			const char *nm = backends[k]->name;

			assert_true(mask & 1 ? close_enough("linear din", nm, dx, rdx, nx, atol, RTOL)
					     : untouched("linear din", dx, nx));
			assert_true(mask & 2 ? close_enough("linear dw", nm, dw, rdw, nw, atol, RTOL)
					     : untouched("linear dw", dw, nw));
			assert_true(mask & 4 ? close_enough("linear db", nm, db, rdb, Cout, atol, RTOL)
					     : untouched("linear db", db, Cout));
		}
	free(x), free(w), free(b), free(dout), free(ro), free(rdx), free(rdw), free(rdb);
	free(o), free(dx), free(dw), free(db);
}

static void test_linear(void **state)
{
	uint64_t s = 11;

	check_linear(&s, 1, 1, 1);
	check_linear(&s, 8, 784, 256);
	check_linear(&s, 32, 256, 10);
	for (int t = 0; t < 12; t++)
		check_linear(&s, rng_int(&s, 1, 9), rng_int(&s, 1, 70), rng_int(&s, 1, 40));
}

/* --- conv --- */

static void check_conv(uint64_t *s, const struct nn_conv_shape *sh)
{
	size_t nx = (size_t)sh->B * sh->C * sh->H * sh->W, nw = (size_t)sh->K * sh->C * sh->kh * sh->kw;
	size_t no = (size_t)sh->B * sh->K * sh->OH * sh->OW;
	float *x = buf_rand(nx, s, -1, 1), *w = buf_rand(nw, s, -1, 1);
	float *b = buf_rand(sh->K, s, -1, 1), *dout = buf_rand(no, s, -1, 1);
	float *ro = buf_new(no), *rdx = buf_new(nx), *rdw = buf_new(nw), *rdb = buf_new(sh->K);
	float *ro0 = buf_new(no), *o = buf_new(no), *dx = buf_new(nx), *dw = buf_new(nw), *db = buf_new(sh->K);
	/* tolerance grows with the length of the sums (float error is ~ sqrt(terms)) */
	double atol_f = ATOL * sqrt(sh->C * sh->kh * sh->kw);
	double atol_b = ATOL * sqrt((double)sh->B * sh->OH * sh->OW + sh->K * sh->kh * sh->kw);
	char what[160];

	snprintf(what, sizeof(what), "conv B%d C%d %dx%d K%d k%d s%d p%d", sh->B, sh->C, sh->H,
		 sh->W, sh->K, sh->kh, sh->stride, sh->pad);
	nn_ops_ref.conv_fwd(ro, x, w, b, sh, NULL);
	nn_ops_ref.conv_fwd(ro0, x, w, NULL, sh, NULL);
	nn_ops_ref.conv_bwd(rdx, rdw, rdb, dout, x, w, sh, NULL);
	for (int k = 0; k < NBACKENDS; k++) {
		size_t nws = backends[k]->conv_ws_floats(sh);
		float *ws = nws ? buf_new(nws) : NULL;

		for (int bias = 0; bias < 2; bias++) {
			buf_garble(o, no);
			backends[k]->conv_fwd(o, x, w, bias ? b : NULL, sh, ws);
			if (!close_enough(what, backends[k]->name, o, bias ? ro : ro0, no, atol_f, RTOL))
				fail_msg("%s: forward (bias %d) differs", what, bias);
			if (ws && !guard_ok("conv ws", ws, nws))
				fail();
		}
		for (int mask = 0; mask < 8; mask++) {
			buf_garble(dx, nx), buf_garble(dw, nw), buf_garble(db, sh->K);
			backends[k]->conv_bwd(mask & 1 ? dx : NULL, mask & 2 ? dw : NULL,
					      mask & 4 ? db : NULL, dout, x, w, sh, ws);
			const char *nm = backends[k]->name;

			if (!(mask & 1 ? close_enough(what, nm, dx, rdx, nx, atol_b, RTOL) : untouched(what, dx, nx)))
				fail_msg("%s: din differs (mask %d)", what, mask);
			if (!(mask & 2 ? close_enough(what, nm, dw, rdw, nw, atol_b, RTOL) : untouched(what, dw, nw)))
				fail_msg("%s: dw differs (mask %d)", what, mask);
			if (!(mask & 4 ? close_enough(what, nm, db, rdb, sh->K, atol_b, RTOL) : untouched(what, db, sh->K)))
				fail_msg("%s: db differs (mask %d)", what, mask);
			if (ws && !guard_ok("conv ws", ws, nws))
				fail();
		}
		free(ws);
	}
	free(x), free(w), free(b), free(dout), free(ro), free(rdx), free(rdw), free(rdb);
	free(ro0), free(o), free(dx), free(dw), free(db);
}

static void test_conv(void **state)
{
	static const int kernels[] = { 1, 3, 5, 7 };
	/* B C H W K k stride pad: resnet's shapes at a small batch, and edge cases */
	static const int fixed[][8] = {
		{ 1, 16, 32, 32, 16, 3, 1, 1 }, { 2, 16, 32, 32, 32, 3, 2, 1 },
		{ 1, 32, 16, 16, 64, 1, 2, 0 }, { 3, 64, 8, 8, 64, 3, 1, 1 },
		{ 2, 8, 6, 6, 4, 1, 1, 0 }, { 1, 1, 1, 1, 1, 1, 1, 0 }, { 1, 2, 1, 1, 3, 3, 1, 1 },
		{ 1, 3, 28, 28, 6, 5, 1, 2 }, { 3, 2, 7, 9, 2, 7, 3, 2 },
		/* K >= 32 with odd sizes: the channel-last paths and their edges */
		{ 1, 5, 7, 9, 33, 3, 1, 1 }, { 2, 17, 5, 6, 40, 3, 2, 2 }, { 1, 19, 9, 7, 35, 5, 1, 2 },
	};
	uint64_t s = 12;
	struct nn_conv_shape sh;

	for (size_t t = 0; t < sizeof(fixed) / sizeof(fixed[0]); t++) {
		const int *q = fixed[t];

		nn_conv_shape_init(&sh, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
		check_conv(&s, &sh);
	}
	for (int t = 0; t < 60; t++) {
		int k = kernels[rng_int(&s, 0, 3)], pad = rng_int(&s, 0, 2);
		int lo = k - 2 * pad > 1 ? k - 2 * pad : 1;	/* at least one output */

		nn_conv_shape_init(&sh, rng_int(&s, 1, 3) * 2 - 1, rng_int(&s, 1, 6),
				   rng_int(&s, lo, 13), rng_int(&s, lo, 13), rng_int(&s, 1, 7), k,
				   rng_int(&s, 1, 3), pad);
		check_conv(&s, &sh);
	}
}

/* --- batch norm --- */

static void check_bn(uint64_t *s, int B, int C, int HW)
{
	size_t n = (size_t)B * C * HW;
	float *x = buf_rand(n, s, -1, 1), *g = buf_rand(C, s, 0.5f, 1.5f);
	float *be = buf_rand(C, s, -1, 1), *dout = buf_rand(n, s, -1, 1);
	float *rm0 = buf_rand(C, s, -1, 1), *rv0 = buf_rand(C, s, 0.5f, 2);
	float *ro = buf_new(n), *rrm = buf_new(C), *rrv = buf_new(C), *rsm = buf_new(C);
	float *rsi = buf_new(C), *rdx = buf_new(n), *rdg = buf_new(C), *rdb = buf_new(C);
	float *o = buf_new(n), *rm = buf_new(C), *rv = buf_new(C), *sm = buf_new(C);
	float *si = buf_new(C), *dx = buf_new(n), *dg = buf_new(C), *db = buf_new(C);
	float *ry = buf_new(n), *rdm = buf_new(n), *rdmx = buf_new(n), *rdmg = buf_new(C);
	float *rdmb = buf_new(C);
	double atol = ATOL * sqrt((double)B * HW);

	for (size_t i = 0; i < n; i++)	/* offset channels: the mean matters */
		x[i] = x[i] * 3 + (float)(i / HW % C);
	memcpy(rrm, rm0, C * 4), memcpy(rrv, rv0, C * 4);
	nn_ops_ref.bn_fwd(ro, x, g, be, rrm, rrv, rsm, rsi, B, C, HW, 0.1f, 1e-5f, 1);
	nn_ops_ref.bn_bwd(rdx, rdg, rdb, dout, x, g, rsm, rsi, B, C, HW);
	for (int k = 0; k < NBACKENDS; k++) {
		const char *nm = backends[k]->name;

		memcpy(rm, rm0, C * 4), memcpy(rv, rv0, C * 4);
		buf_garble(o, n), buf_garble(sm, C), buf_garble(si, C);
		backends[k]->bn_fwd(o, x, g, be, rm, rv, sm, si, B, C, HW, 0.1f, 1e-5f, 1);
		assert_true(close_enough("bn out", nm, o, ro, n, ATOL, RTOL));
		assert_true(close_enough("bn run_mean", nm, rm, rrm, C, 1e-6, 1e-6));
		assert_true(close_enough("bn run_var", nm, rv, rrv, C, 1e-6, 1e-6));
		assert_true(close_enough("bn save_mean", nm, sm, rsm, C, 1e-6, 1e-6));
		assert_true(close_enough("bn save_invstd", nm, si, rsi, C, 1e-6, 1e-6));
		/* no running stats, nothing saved: the output is the same */
		buf_garble(o, n);
		backends[k]->bn_fwd(o, x, g, be, NULL, NULL, NULL, NULL, B, C, HW, 0.1f, 1e-5f, 1);
		assert_true(close_enough("bn out (no stats)", nm, o, ro, n, ATOL, RTOL));
		for (int mask = 0; mask < 8; mask++) {
			buf_garble(dx, n), buf_garble(dg, C), buf_garble(db, C);
			backends[k]->bn_bwd(mask & 1 ? dx : NULL, mask & 2 ? dg : NULL,
					    mask & 4 ? db : NULL, dout, x, g, rsm, rsi, B, C, HW);
			assert_true(mask & 1 ? close_enough("bn din", nm, dx, rdx, n, atol, 1e-4)
					     : untouched("bn din", dx, n));
			assert_true(mask & 2 ? close_enough("bn dgamma", nm, dg, rdg, C, atol, RTOL)
					     : untouched("bn dgamma", dg, C));
			assert_true(mask & 4 ? close_enough("bn dbeta", nm, db, rdb, C, atol, RTOL)
					     : untouched("bn dbeta", db, C));
		}
		/* fused relu: against relu(bn_fwd) and bn_bwd of the masked gradient */
		assert_non_null(backends[k]->bn_relu_fwd);
		assert_non_null(backends[k]->bn_relu_bwd);
		for (size_t i = 0; i < n; i++) {
			ry[i] = ro[i] > 0.0f ? ro[i] : 0.0f;
			rdm[i] = ro[i] > 0.0f ? dout[i] : 0.0f;
		}
		nn_ops_ref.bn_bwd(rdmx, rdmg, rdmb, rdm, x, g, rsm, rsi, B, C, HW);
		memcpy(rm, rm0, C * 4), memcpy(rv, rv0, C * 4);
		buf_garble(o, n), buf_garble(sm, C), buf_garble(si, C);
		backends[k]->bn_relu_fwd(o, x, g, be, rm, rv, sm, si, B, C, HW, 0.1f, 1e-5f, 1);
		assert_true(close_enough("bn+relu out", nm, o, ry, n, ATOL, RTOL));
		assert_true(close_enough("bn+relu run_var", nm, rv, rrv, C, 1e-6, 1e-6));
		assert_true(close_enough("bn+relu save_invstd", nm, si, rsi, C, 1e-6, 1e-6));
		buf_garble(dx, n), buf_garble(dg, C), buf_garble(db, C);
		backends[k]->bn_relu_bwd(dx, dg, db, dout, ry, x, g, rsm, rsi, B, C, HW);
		assert_true(close_enough("bn+relu din", nm, dx, rdmx, n, atol, 1e-4));
		assert_true(close_enough("bn+relu dgamma", nm, dg, rdmg, C, atol, RTOL));
		assert_true(close_enough("bn+relu dbeta", nm, db, rdmb, C, atol, RTOL));
		buf_garble(dx, n);
		backends[k]->bn_relu_bwd(dx, NULL, NULL, dout, ry, x, g, rsm, rsi, B, C, HW);
		assert_true(close_enough("bn+relu din only", nm, dx, rdmx, n, atol, 1e-4));
		/* eval mode with the running statistics of the reference */
		nn_ops_ref.bn_fwd(ro, x, g, be, rrm, rrv, NULL, NULL, B, C, HW, 0.1f, 1e-5f, 0);
		buf_garble(o, n);
		backends[k]->bn_fwd(o, x, g, be, rrm, rrv, NULL, NULL, B, C, HW, 0.1f, 1e-5f, 0);
		assert_true(close_enough("bn eval out", nm, o, ro, n, ATOL, RTOL));
		nn_ops_ref.bn_fwd(ro, x, g, be, NULL, NULL, NULL, NULL, B, C, HW, 0.1f, 1e-5f, 1);
	}
	free(x), free(g), free(be), free(dout), free(rm0), free(rv0), free(ro), free(rrm);
	free(rrv), free(rsm), free(rsi), free(rdx), free(rdg), free(rdb), free(o), free(rm);
	free(rv), free(sm), free(si), free(dx), free(dg), free(db);
	free(ry), free(rdm), free(rdmx), free(rdmg), free(rdmb);
}

static void test_bn(void **state)
{
	uint64_t s = 13;

	check_bn(&s, 32, 16, 1024);	/* resnet's first stage: 32K values per channel */
	check_bn(&s, 1, 1, 2);
	for (int t = 0; t < 10; t++)
		check_bn(&s, rng_int(&s, 1, 7), rng_int(&s, 1, 9), rng_int(&s, 1, 70));
}

/* --- pooling --- */

static void check_pool(uint64_t *s, const struct nn_pool_shape *p, int ties)
{
	size_t ni = (size_t)p->B * p->C * p->H * p->W, no = (size_t)p->B * p->C * p->OH * p->OW;
	float *x = buf_rand(ni, s, -1, 1), *dout = buf_rand(no, s, -1, 1);
	float *ro = buf_new(no), *rdx = buf_new(ni), *o = buf_new(no), *dx = buf_new(ni);
	int32_t *ram = calloc(no + 1, 4), *am = calloc(no + 1, 4);

	if (ties)	/* a few values only: argmax must pick the same first maximum */
		for (size_t i = 0; i < ni; i++)
			x[i] = (float)rng_int(s, 0, 2);
	nn_ops_ref.maxpool_fwd(ro, ram, x, p);
	nn_ops_ref.maxpool_bwd(rdx, dout, ram, p);
	for (int k = 0; k < NBACKENDS; k++) {
		const char *nm = backends[k]->name;

		buf_garble(o, no), buf_garble(dx, ni);
		backends[k]->maxpool_fwd(o, am, x, p);
		assert_true(close_enough("maxpool out", nm, o, ro, no, 0, 0));
		assert_memory_equal(am, ram, no * 4);
		backends[k]->maxpool_bwd(dx, dout, am, p);
		assert_true(close_enough("maxpool din", nm, dx, rdx, ni, ATOL, RTOL));
	}
	nn_ops_ref.avgpool_fwd(ro, x, p);
	nn_ops_ref.avgpool_bwd(rdx, dout, p);
	for (int k = 0; k < NBACKENDS; k++) {
		const char *nm = backends[k]->name;

		buf_garble(o, no), buf_garble(dx, ni);
		backends[k]->avgpool_fwd(o, x, p);
		assert_true(close_enough("avgpool out", nm, o, ro, no, ATOL, RTOL));
		backends[k]->avgpool_bwd(dx, dout, p);
		assert_true(close_enough("avgpool din", nm, dx, rdx, ni, ATOL, RTOL));
	}
	free(x), free(dout), free(ro), free(rdx), free(o), free(dx), free(ram), free(am);
}

static void test_pool(void **state)
{
	uint64_t s = 14;
	struct nn_pool_shape p;

	nn_pool_shape_init(&p, 32, 6, 28, 28, 2, 2, 0);	/* lenet */
	check_pool(&s, &p, 0);
	nn_pool_shape_init(&p, 3, 2, 9, 7, 3, 2, 1);
	check_pool(&s, &p, 1);
	nn_pool_shape_init(&p, 2, 3, 8, 7, 2, 2, 0);	/* lenet's windows, with ties */
	check_pool(&s, &p, 1);
	for (int t = 0; t < 30; t++) {
		int k = rng_int(&s, 1, 5), pad = rng_int(&s, 0, k - 1 < 2 ? k - 1 : 2);
		int lo = k - 2 * pad > 1 ? k - 2 * pad : 1;

		nn_pool_shape_init(&p, rng_int(&s, 1, 3) * 2 - 1, rng_int(&s, 1, 4),
				   rng_int(&s, lo, 12), rng_int(&s, lo, 12), k, rng_int(&s, 1, 3), pad);
		check_pool(&s, &p, t & 1);
	}
}

/* --- global average pool, relu, add, cross-entropy --- */

static void test_elementwise(void **state)
{
	uint64_t s = 15;
	const int B = 5, C = 7, HW = 67;
	const size_t n = (size_t)B * C * HW;
	float *x = buf_rand(n, &s, -1, 1), *y = buf_rand(n, &s, -1, 1);
	float *d = buf_rand(n, &s, -1, 1), *r1 = buf_new(n), *r2 = buf_new(n);
	float *o = buf_new(n), *o2 = buf_new(n);

	nn_ops_ref.gap_fwd(r1, x, B, C, HW);
	nn_ops_ref.gap_bwd(r2, d, B, C, HW);
	for (int k = 0; k < NBACKENDS; k++) {
		buf_garble(o, n), buf_garble(o2, n);
		backends[k]->gap_fwd(o, x, B, C, HW);
		assert_true(close_enough("gap out", backends[k]->name, o, r1, (size_t)B * C, ATOL, RTOL));
		backends[k]->gap_bwd(o2, d, B, C, HW);
		assert_true(close_enough("gap din", backends[k]->name, o2, r2, n, ATOL, RTOL));
	}
	nn_ops_ref.relu_fwd(r1, x, n);
	nn_ops_ref.relu_bwd(r2, d, r1, n);
	for (int k = 0; k < NBACKENDS; k++) {
		const char *nm = backends[k]->name;

		backends[k]->relu_fwd(o, x, n);
		assert_true(close_enough("relu out", nm, o, r1, n, 0, 0));
		backends[k]->relu_bwd(o2, d, o, n);
		assert_true(close_enough("relu din", nm, o2, r2, n, 0, 0));
		memcpy(o, x, n * 4), memcpy(o2, d, n * 4);	/* in place */
		backends[k]->relu_fwd(o, o, n);
		assert_true(close_enough("relu out (in place)", nm, o, r1, n, 0, 0));
		backends[k]->relu_bwd(o2, o2, o, n);
		assert_true(close_enough("relu din (in place)", nm, o2, r2, n, 0, 0));
	}
	nn_ops_ref.add_fwd(r1, x, y, n);
	for (int k = 0; k < NBACKENDS; k++) {
		backends[k]->add_fwd(o, x, y, n);
		assert_true(close_enough("add out", backends[k]->name, o, r1, n, 0, 0));
		memcpy(o, x, n * 4);
		backends[k]->add_fwd(o, o, y, n);
		assert_true(close_enough("add out (in place)", backends[k]->name, o, r1, n, 0, 0));
	}
	for (size_t i = 0; i < n; i++)	/* r1 = x + y from above */
		r2[i] = r1[i] > 0.0f ? r1[i] : 0.0f;
	for (int k = 0; k < NBACKENDS; k++) {
		const char *nm = backends[k]->name;

		assert_non_null(backends[k]->add_relu_fwd);
		buf_garble(o, n);
		backends[k]->add_relu_fwd(o, x, y, n);
		assert_true(close_enough("add+relu out", nm, o, r2, n, 0, 0));
		memcpy(o, x, n * 4);
		backends[k]->add_relu_fwd(o, o, y, n);
		assert_true(close_enough("add+relu out (in place)", nm, o, r2, n, 0, 0));
		memcpy(o, y, n * 4);
		backends[k]->add_relu_fwd(o, x, o, n);
		assert_true(close_enough("add+relu out (in place, b)", nm, o, r2, n, 0, 0));
	}
	free(x), free(y), free(d), free(r1), free(r2), free(o), free(o2);
}

static void test_xent(void **state)
{
	uint64_t s = 16;

	for (int t = 0; t < 10; t++) {
		int B = t ? rng_int(&s, 1, 40) : 1, K = t ? rng_int(&s, 2, 20) : 2;
		size_t n = (size_t)B * K;
		float *l = buf_rand(n, &s, -8, 8), *rd = buf_new(n), *d = buf_new(n);
		int32_t *y = malloc((size_t)B * 4);
		int rc, c;

		for (int i = 0; i < B; i++)
			y[i] = rng_int(&s, 0, K - 1);
		float rl = nn_ops_ref.xent_fwd_bwd(rd, l, y, B, K, &rc);

		for (int k = 0; k < NBACKENDS; k++) {
			buf_garble(d, n);
			c = -1;
			float loss = backends[k]->xent_fwd_bwd(d, l, y, B, K, &c);

			assert_true(fabsf(loss - rl) <= 1e-6f + 1e-6f * rl);
			assert_int_equal(c, rc);
			assert_true(close_enough("xent dlogits", backends[k]->name, d, rd, n, 1e-7, 1e-5));
			assert_true(backends[k]->xent_fwd_bwd(NULL, l, y, B, K, NULL) == loss);
		}
		free(l), free(rd), free(d), free(y);
	}
}

int main(void)
{
	/* as in the workers; and the machine is shared */
	openblas_set_num_threads(1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear), cmocka_unit_test(test_conv),
		cmocka_unit_test(test_bn), cmocka_unit_test(test_pool),
		cmocka_unit_test(test_elementwise), cmocka_unit_test(test_xent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
