/* tests/test_fusions.c — the fused ops of a residual block's ends (bn_add_relu_fwd,
 * conv_bwd_add) give the very bits of the ops they replace, op by op and in a whole
 * model, and batch norm's channel groups those of one channel at a time: a speed-up,
 * never a change of result.  On every backend that has
 * them (the CPU one), against the same backend without them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "nn/model.h"
#include "nn/model/model_impl.h"
#include "tests/backend.h"
#include "tests/rng.h"

static float *randv(size_t n, uint64_t *s, float lo, float hi)
{
	float *p = malloc((n ? n : 1) * sizeof(float));

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = test_unif_f(s, lo, hi);
	return p;
}

static float *copyv(const float *a, size_t n)
{
	float *p = malloc((n ? n : 1) * sizeof(float));

	assert_non_null(p);
	memcpy(p, a, n * sizeof(float));
	return p;
}

static void assert_same_bits(const float *a, const float *b, size_t n, const char *what)
{
	if (memcmp(a, b, n * sizeof(float))) {
		size_t i = 0;

		while (!memcmp(a + i, b + i, sizeof(float)))
			i++;
		fail_msg("%s: element %zu of %zu: %.9g fused, %.9g unfused", what, i, n, a[i],
			 b[i]);
	}
}

/* relu(bn(x) + res) against bn_fwd then add_relu_fwd: output, saved and running stats */
static void bn_add_relu_case(struct nn_backend *be, int B, int C, int HW, int train,
			     uint64_t *s)
{
	const struct nn_ops *o = be->ops;
	size_t n = (size_t)B * C * HW;
	float *x = randv(n, s, -2, 3), *res = randv(n, s, -1, 1);
	float *g = randv(C, s, 0.5f, 1.5f), *b = randv(C, s, -0.5f, 0.5f);
	float *rm = randv(C, s, -0.1f, 0.1f), *rv = randv(C, s, 0.5f, 2);
	float *sv = randv(2 * C, s, 0, 0);
	float *rm2 = copyv(rm, C), *rv2 = copyv(rv, C), *sv2 = copyv(sv, 2 * C);
	float *y = randv(n, s, 0, 0), *y2 = randv(n, s, 0, 0), *t = randv(n, s, 0, 0);

	o->bn_add_relu_fwd(be, y, x, res, g, b, rm, rv, sv, sv + C, B, C, HW, 0.1f, 1e-5f, train);
	o->bn_fwd(be, t, x, g, b, rm2, rv2, sv2, sv2 + C, B, C, HW, 0.1f, 1e-5f, train);
	o->add_relu_fwd(be, y2, t, res, n);
	assert_same_bits(y, y2, n, "bn_add_relu_fwd out");
	assert_same_bits(rm, rm2, C, "bn_add_relu_fwd run_mean");
	assert_same_bits(rv, rv2, C, "bn_add_relu_fwd run_var");
	assert_same_bits(sv, sv2, 2 * C, "bn_add_relu_fwd save");
	float *all[] = { x, res, g, b, rm, rv, sv, rm2, rv2, sv2, y, y2, t };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
}

/* conv_bwd_add against conv_bwd then add_fwd (add_fwd's order: the earlier gradient
 * first, as the model sums them) */
static void conv_bwd_add_case(struct nn_backend *be, int B, int C, int H, int K, int k,
			      int stride, int pad, uint64_t *s)
{
	const struct nn_ops *o = be->ops;
	struct nn_conv_shape sh;

	nn_conv_shape_init(&sh, B, C, H, H, K, k, stride, pad);
	size_t nin = (size_t)B * C * H * H, nout = (size_t)B * K * sh.OH * sh.OW;
	size_t nw = (size_t)K * C * k * k, nws = o->conv_ws_floats(be, &sh);
	float *x = randv(nin, s, -1, 1), *w = randv(nw, s, -0.5f, 0.5f);
	float *dout = randv(nout, s, -1, 1), *add = randv(nin, s, -1, 1);
	float *ws = randv(nws, s, 0, 0);
	float *din = randv(nin, s, 0, 0), *din2 = randv(nin, s, 0, 0), *sum = randv(nin, s, 0, 0);
	float *dw = randv(nw, s, 0, 0), *dw2 = randv(nw, s, 0, 0);
	float *db = randv(K, s, 0, 0), *db2 = randv(K, s, 0, 0);

	o->conv_bwd_add(be, din, add, dw, db, dout, x, w, &sh, ws);
	o->conv_bwd(be, din2, dw2, db2, dout, x, w, &sh, ws);
	o->add_fwd(be, sum, add, din2, nin);
	assert_same_bits(din, sum, nin, "conv_bwd_add din");
	assert_same_bits(dw, dw2, nw, "conv_bwd_add dw");
	assert_same_bits(db, db2, K, "conv_bwd_add db");
	float *all[] = { x, w, dout, add, ws, din, din2, sum, dw, dw2, db, db2 };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
}

/* Channel c of a (B, C, HW) tensor as a (B, 1, HW) one */
static float *channel(const float *a, int B, int C, int HW, int c)
{
	float *p = malloc((size_t)B * HW * sizeof(float));

	assert_non_null(p);
	for (int n = 0; n < B; n++)
		memcpy(p + (size_t)n * HW, a + ((size_t)n * C + c) * HW, HW * sizeof(float));
	return p;
}

/* The CPU batch norm takes channels in groups, a sample's rows of a group at a time
 * (nn/cpu/ops_cpu_norm.c): each channel's output, batch statistics and gradients must be
 * the bits it gets alone, whatever group it fell in.  Every op, forward and backward
 * (op 0-2: bn, bn + relu, bn + add + relu forward; 3-4: bn and bn + relu backward). */
static void bn_groups_case(struct nn_backend *be, int B, int C, int HW, uint64_t *s)
{
	const struct nn_ops *o = be->ops;
	size_t n = (size_t)B * C * HW, nc = (size_t)B * HW;
	float *x = randv(n, s, -2, 3), *res = randv(n, s, -1, 1), *d = randv(n, s, -1, 1);
	float *g = randv(C, s, 0.5f, 1.5f), *b = randv(C, s, -0.5f, 0.5f);
	float *run = randv(2 * (size_t)C, s, 0.5f, 1.5f), *sv = randv(2 * (size_t)C, s, 0, 0);
	float *y = randv(n, s, 0, 0), *dx = randv(n, s, 0, 0);
	float *dg = randv(C, s, 0, 0), *db = randv(C, s, 0, 0), *oc = randv(nc, s, 0, 0);

	for (int op = 0; op < 5; op++) {
		float *out = op < 3 ? y : dx;

		if (op == 0)
			o->bn_fwd(be, y, x, g, b, run, run + C, sv, sv + C, B, C, HW, 0.1f, 1e-5f, 1);
		else if (op == 1)
			o->bn_relu_fwd(be, y, x, g, b, run, run + C, sv, sv + C, B, C, HW, 0.1f,
				       1e-5f, 1);
		else if (op == 2)
			o->bn_add_relu_fwd(be, y, x, res, g, b, run, run + C, sv, sv + C, B, C,
					   HW, 0.1f, 1e-5f, 1);
		else if (op == 3)
			o->bn_bwd(be, dx, dg, db, d, x, g, sv, sv + C, B, C, HW);
		else
			o->bn_relu_bwd(be, dx, dg, db, d, y, x, g, sv, sv + C, B, C, HW);
		for (int c = 0; c < C; c++) {
			float *xc = channel(x, B, C, HW, c), *rc = channel(res, B, C, HW, c);
			float *dc = channel(d, B, C, HW, c), *yc = channel(y, B, C, HW, c);
			float *want = channel(out, B, C, HW, c);
			float sv1[2] = { sv[c], sv[C + c] }, run1[2] = { 0, 1 }, got[2], dgc, dbc;

			if (op == 0)
				o->bn_fwd(be, oc, xc, &g[c], &b[c], &run1[0], &run1[1], &got[0],
					  &got[1], B, 1, HW, 0.1f, 1e-5f, 1);
			else if (op == 1)
				o->bn_relu_fwd(be, oc, xc, &g[c], &b[c], &run1[0], &run1[1], &got[0],
					       &got[1], B, 1, HW, 0.1f, 1e-5f, 1);
			else if (op == 2)
				o->bn_add_relu_fwd(be, oc, xc, rc, &g[c], &b[c], &run1[0], &run1[1],
						   &got[0], &got[1], B, 1, HW, 0.1f, 1e-5f, 1);
			else if (op == 3)
				o->bn_bwd(be, oc, &dgc, &dbc, dc, xc, &g[c], &sv1[0], &sv1[1], B, 1,
					  HW);
			else
				o->bn_relu_bwd(be, oc, &dgc, &dbc, dc, yc, xc, &g[c], &sv1[0],
					       &sv1[1], B, 1, HW);
			assert_same_bits(oc, want, nc, "a channel alone: output");
			if (op < 3) {
				assert_same_bits(got, sv1, 2, "a channel alone: batch statistics");
			} else {
				assert_same_bits(&dgc, &dg[c], 1, "a channel alone: dgamma");
				assert_same_bits(&dbc, &db[c], 1, "a channel alone: dbeta");
			}
			free(xc), free(rc), free(dc), free(yc), free(want);
		}
	}
	float *all[] = { x, res, d, g, b, run, sv, y, dx, dg, db, oc };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
}

static void test_ops(void **state)
{
	struct nn_backend *be = test_be("cpu");
	uint64_t s = 7;

	assert_non_null(be->ops->bn_add_relu_fwd);
	assert_non_null(be->ops->conv_bwd_add);
	for (int train = 0; train < 2; train++) {
		bn_add_relu_case(be, 4, 3, 5, train, &s);	/* rows not a multiple of 16 */
		bn_add_relu_case(be, 3, 16, 64, train, &s);
		bn_add_relu_case(be, 2, 8, 1024, train, &s);
	}
	bn_groups_case(be, 32, 16, 1024, &s);	/* resnet's stages at batch 32: one group */
	bn_groups_case(be, 32, 64, 64, &s);
	bn_groups_case(be, 3, 96, 7, &s);	/* groups of 32, rows of 7 */
	bn_groups_case(be, 2, 6, 1024, &s);	/* groups of 2 */
	/* every input-gradient path: 3x3 same (copies made a plane at a time), 5x5 same,
	 * 5x5 unpadded (shifted row copies), 1x1, strided (col2im) */
	conv_bwd_add_case(be, 3, 16, 8, 16, 3, 1, 1, &s);
	conv_bwd_add_case(be, 2, 5, 7, 6, 3, 1, 1, &s);
	conv_bwd_add_case(be, 2, 4, 9, 8, 5, 1, 2, &s);
	conv_bwd_add_case(be, 2, 3, 12, 6, 5, 1, 0, &s);
	conv_bwd_add_case(be, 2, 16, 8, 32, 1, 1, 0, &s);
	conv_bwd_add_case(be, 2, 16, 8, 32, 3, 2, 1, &s);
	conv_bwd_add_case(be, 2, 16, 8, 32, 1, 2, 0, &s);
}

/* A resnet's training step and evaluation on the CPU backend with and without the
 * fusions: the same loss, gradients and running statistics, bit for bit; and the plan
 * really fused (every block's end, every block input's gradient sum). */
static void test_model(void **state)
{
	static struct nn_ops plain;
	struct nn_backend fused_be = { 0 }, plain_be = { 0 };
	struct nn_input in = { .C = 3, .H = 8, .W = 8, .nclasses = 10 };
	struct nn_model a, b;
	const int B = 4;
	uint64_t s = 11;

	plain = *nn_backend_find("cpu");
	plain.bn_add_relu_fwd = NULL;
	plain.conv_bwd_add = NULL;
	assert_int_equal(nn_backend_open(&fused_be, "cpu", 0), 0);
	assert_int_equal(nn_backend_open_ops(&plain_be, &plain, 0), 0);
	assert_int_equal(nn_model_init(&a, "resnet20", &in, &fused_be, B, 3), 0);
	assert_int_equal(nn_model_init(&b, "resnet20", &in, &plain_be, B, 3), 0);

	int fuse_add = 0, conv_sums = 0;
	for (int i = 0; i < a.nnodes; i++) {
		const struct nn_node *n = &a.nodes[i];

		fuse_add += n->fuse_add;
		conv_sums += n->kind == NN_CONV && n->dl[0].acc_to >= 0;
		assert_false(b.nodes[i].fuse_add);
	}
	assert_int_equal(fuse_add, 9);	/* 3 stages of 3 blocks */
	assert_int_equal(conv_sums, 9);	/* each block's first conv meets its shortcut */

	float *x = randv((size_t)B * 3 * 8 * 8, &s, -1, 1);
	int32_t y[B];
	for (int i = 0; i < B; i++)
		y[i] = (int32_t)(test_rng(&s) % 10);
	for (int step = 0; step < 2; step++) {
		float la = nn_forward(&a, x, NULL, y, B, true, NULL);
		float lb = nn_forward(&b, x, NULL, y, B, true, NULL);

		assert_true(isfinite(la));
		assert_same_bits(&la, &lb, 1, "loss");
		nn_backward(&a, NULL);
		nn_backward(&b, NULL);
		assert_same_bits(a.grads, b.grads, a.nparams, "gradients");
		assert_same_bits(a.state, b.state, a.nstate, "running statistics");
		for (size_t i = 0; i < a.nparams; i++) {	/* a step, so the next differs */
			a.params[i] -= 0.1f * a.grads[i];
			b.params[i] -= 0.1f * b.grads[i];
		}
	}
	int ca, cb;
	float la = nn_forward(&a, x, NULL, y, B, false, &ca);
	float lb = nn_forward(&b, x, NULL, y, B, false, &cb);
	assert_same_bits(&la, &lb, 1, "evaluation loss");
	assert_int_equal(ca, cb);
	free(x);
	nn_model_free(&a);
	nn_model_free(&b);
	nn_backend_close(&fused_be);
	nn_backend_close(&plain_be);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
