/* tests/test_models.c — the model executor and the architectures: parameter counts (from
 * the architecture formulas, and from PyTorch when python3-torch is installed), the
 * layer table, batch handling, the fast CPU backend against the reference on whole
 * models, need_wgrad skipping and FLOP counts. */
#include <errno.h>
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
#include "tests/close.h"
#include "tests/backend.h"

struct batch {
	float *x;
	int32_t *tokens;
	int32_t *y;
	float *target;
};

/* Deterministic test data: x ~ U(-1, 1), labels/tokens uniform. */
static void batch_make(struct batch *b, const struct nn_input *in, int B, uint64_t seed)
{
	memset(b, 0, sizeof(*b));
	if (in->T > 0) {
		b->tokens = malloc((size_t)B * in->T * sizeof(int32_t));
		assert_non_null(b->tokens);
		for (int i = 0; i < B * in->T; i++)
			b->tokens[i] = (int32_t)(test_rng(&seed) % (uint64_t)in->vocab);
	} else {
		size_t n = (size_t)B * in->C * in->H * in->W;
		b->x = malloc(n * sizeof(float));
		assert_non_null(b->x);
		for (size_t i = 0; i < n; i++)
			b->x[i] = (float)test_unif(&seed) * 2.0f - 1.0f;
	}
	b->y = malloc((size_t)B * sizeof(int32_t));
	b->target = malloc((size_t)B * sizeof(float));
	assert_non_null(b->y);
	assert_non_null(b->target);
	for (int i = 0; i < B; i++) {
		b->y[i] = (int32_t)(test_rng(&seed) % (uint64_t)in->nclasses);
		b->target[i] = (float)test_unif(&seed) - 0.5f;
	}
}

static void batch_free(struct batch *b)
{
	free(b->x);
	free(b->tokens);
	free(b->y);
	free(b->target);
}

static float forward(struct nn_model *m, const struct batch *b, int B, bool train)
{
	const void *y = m->in.regression ? (const void *)b->target : (const void *)b->y;
	return nn_forward(m, b->x, b->tokens, y, B, train, NULL);
}

static struct nn_input img(int C, int H, int W, int K)
{
	return (struct nn_input){.C = C, .H = H, .W = W, .nclasses = K};
}

static struct nn_input seq(int T, int V, int K)
{
	return (struct nn_input){.T = T, .vocab = V, .nclasses = K};
}

static struct nn_input reg(int C, int H, int W)
{
	return (struct nn_input){.C = C, .H = H, .W = W, .nclasses = 1, .regression = true};
}

/* ---- parameter counts from the architectures' definitions ---- */

static size_t conv_p(size_t cin, size_t cout, size_t k, bool bias)
{
	return cin * cout * k * k + (bias ? cout : 0);
}

static size_t lin_p(size_t in, size_t out)
{
	return in * out + out;
}

static size_t expect_params(const char *name, const struct nn_input *in)
{
	size_t D = (size_t)in->C * in->H * in->W, K = (size_t)in->nclasses;
	if (!strcmp(name, "mlp"))
		return lin_p(D, 256) + lin_p(256, K);
	if (!strcmp(name, "logreg"))
		return lin_p(D, K);
	if (!strcmp(name, "linreg"))
		return lin_p(D, 1);
	if (!strcmp(name, "lenet")) {
		size_t h = ((size_t)in->H / 2 - 4) / 2, w = ((size_t)in->W / 2 - 4) / 2;
		return conv_p(in->C, 6, 5, true) + conv_p(6, 16, 5, true) + lin_p(16 * h * w, 120) +
		       lin_p(120, 84) + lin_p(84, K);
	}
	if (!strcmp(name, "lstm"))
		return (size_t)in->vocab * 64 + 4 * 128 * (64 + 128) + 2 * 4 * 128 + lin_p(128, K);
	int depth = atoi(name + 6), n = (depth - 2) / 6;
	size_t p = conv_p(in->C, 16, 3, false) + 2 * 16, cin = 16;
	for (size_t cout = 16; cout <= 64; cout *= 2)
		for (int i = 0; i < n; i++) {
			p += conv_p(cin, cout, 3, false) + 2 * cout + conv_p(cout, cout, 3, false) +
			     2 * cout;
			if (cin != cout)
				p += conv_p(cin, cout, 1, false) + 2 * cout;
			cin = cout;
		}
	return p + lin_p(64, K);
}

static const char *const all_models[] = {"mlp",      "lenet",    "resnet20", "resnet32",
					 "resnet44", "resnet56", "resnet110", "lstm",
					 "logreg",   "linreg"};

static struct nn_input input_for(const char *name)
{
	if (!strcmp(name, "lstm"))
		return seq(16, 1000, 4);
	if (!strcmp(name, "linreg"))
		return reg(1, 5, 7);
	if (!strncmp(name, "resnet", 6))
		return img(3, 32, 32, 10);
	return img(1, 28, 28, 10);
}

static void test_param_counts(void **state)
{
	for (size_t i = 0; i < sizeof(all_models) / sizeof(all_models[0]); i++) {
		struct nn_model m;
		struct nn_input in = input_for(all_models[i]);
		assert_int_equal(nn_model_init(&m, all_models[i], &in, test_be("ref"), 2, 1), 0);
		size_t want = expect_params(all_models[i], &in);
		if (m.nparams != want)
			fail_msg("%s: %zu parameters, the architecture has %zu", all_models[i],
				 m.nparams, want);
		nn_model_free(&m);
	}
	/* lenet on 32x32: the first fc's fan-in follows the shape (16*6*6) */
	struct nn_model m;
	struct nn_input in = img(3, 32, 32, 10);
	assert_int_equal(nn_model_init(&m, "lenet", &in, test_be("ref"), 2, 1), 0);
	assert_int_equal(m.nparams, expect_params("lenet", &in));
	assert_int_equal(m.layers[2].size, 16 * 6 * 6 * 120 + 120);
	nn_model_free(&m);
}

static void test_bad_inputs(void **state)
{
	struct nn_model m;
	struct nn_input in = img(1, 28, 28, 10);
	assert_int_equal(nn_model_init(&m, "resnet21", &in, test_be("ref"), 2, 1), -EINVAL);
	assert_int_equal(nn_model_init(&m, "nosuch", &in, test_be("ref"), 2, 1), -EINVAL);
	assert_int_equal(nn_model_init(&m, "lstm", &in, test_be("ref"), 2, 1), -EINVAL);
	assert_int_equal(nn_model_init(&m, "linreg", &in, test_be("ref"), 2, 1), -EINVAL);
	assert_int_equal(nn_model_init(&m, "mlp", &in, test_be("ref"), 0, 1), -EINVAL);
	in = img(1, 8, 8, 10);	/* too small for lenet's two 5x5 convs and pools */
	assert_int_equal(nn_model_init(&m, "lenet", &in, test_be("ref"), 2, 1), -EINVAL);
	in = reg(1, 4, 4);
	assert_int_equal(nn_model_init(&m, "mlp", &in, test_be("ref"), 2, 1), -EINVAL);
	in = seq(4, 10, 3);
	assert_int_equal(nn_model_init(&m, "mlp", &in, test_be("ref"), 2, 1), -EINVAL);
}

static void test_layer_table(void **state)
{
	for (size_t i = 0; i < sizeof(all_models) / sizeof(all_models[0]); i++) {
		struct nn_model m;
		struct nn_input in = input_for(all_models[i]);
		assert_int_equal(nn_model_init(&m, all_models[i], &in, test_be("ref"), 2, 1), 0);
		size_t off = 0;
		assert_true(m.nlayers > 0);
		for (int l = 0; l < m.nlayers; l++) {
			const struct nn_layer *L = &m.layers[l];
			if (L->off != off || L->size == 0)
				fail_msg("%s layer %d (%s): off %zu size %zu, expected off %zu",
					 all_models[i], l, L->name, L->off, L->size, off);
			assert_true(L->name[0] != '\0');
			assert_true(L->node >= 0 && L->node < m.nnodes);
			for (int k = 0; k < l; k++)
				if (!strcmp(m.layers[k].name, L->name))
					fail_msg("%s: layer name %s twice", all_models[i], L->name);
			assert_int_equal(nn_layer_of(&m, L->off), l);
			assert_int_equal(nn_layer_of(&m, L->off + L->size - 1), l);
			off += L->size;
		}
		assert_int_equal(off, m.nparams);
		assert_int_equal(nn_layer_of(&m, m.nparams), -1);
		nn_model_free(&m);
	}
	/* state-dict names and order (PyTorch registers shortcut after bn2) */
	struct nn_model m;
	struct nn_input in = img(3, 32, 32, 10);
	assert_int_equal(nn_model_init(&m, "resnet20", &in, test_be("ref"), 2, 1), 0);
	static const char *const names[] = {"conv1", "bn1", "layer1.0.conv1", "layer1.0.bn1",
					    "layer1.0.conv2", "layer1.0.bn2"};
	for (int l = 0; l < 6; l++)
		assert_string_equal(m.layers[l].name, names[l]);
	int sc = -1;
	for (int l = 0; l < m.nlayers; l++)
		if (!strcmp(m.layers[l].name, "layer2.0.shortcut.0"))
			sc = l;
	assert_true(sc > 0);
	assert_string_equal(m.layers[sc - 1].name, "layer2.0.bn2");
	assert_string_equal(m.layers[sc + 1].name, "layer2.0.shortcut.1");
	assert_int_equal(m.layers[sc].size, 16 * 32);
	assert_string_equal(m.layers[m.nlayers - 1].name, "fc");
	assert_int_equal(m.nlayers, 1 + 1 + 9 * 4 + 2 * 2 + 1);
	nn_model_free(&m);
}

static void test_init(void **state)
{
	struct nn_model a, b, c;
	struct nn_input in = img(3, 16, 16, 10);
	assert_int_equal(nn_model_init(&a, "resnet20", &in, test_be("ref"), 2, 7), 0);
	assert_int_equal(nn_model_init(&b, "resnet20", &in, test_be("ref"), 2, 7), 0);
	assert_int_equal(nn_model_init(&c, "resnet20", &in, test_be("ref"), 2, 8), 0);
	assert_memory_equal(a.params, b.params, a.nparams * sizeof(float));
	assert_memory_not_equal(a.params, c.params, a.nparams * sizeof(float));
	for (int l = 0; l < a.nlayers; l++) {
		const struct nn_layer *L = &a.layers[l];
		const float *p = a.params + L->off;
		if (strstr(L->name, "bn") || strstr(L->name, "shortcut.1")) {
			size_t C = L->size / 2;
			for (size_t i = 0; i < C; i++) {
				assert_true(p[i] == 1.0f && p[C + i] == 0.0f);
			}
			continue;
		}
		/* conv without bias: fan_in = size / out channels */
		size_t out = !strcmp(L->name, "fc") ? 10 : 0;
		double fan_in;
		if (out)
			fan_in = (double)(L->size - out) / out;
		else if (!strcmp(L->name, "conv1"))
			fan_in = 3 * 9;
		else
			fan_in = (double)L->size / (strstr(L->name, "layer1") ? 16 : strstr(L->name, "layer2") ? 32 : 64);
		double bound = 1 / sqrt(fan_in), mx = 0, sum = 0;
		for (size_t i = 0; i < L->size; i++) {
			mx = fmax(mx, fabs(p[i]));
			sum += p[i];
		}
		if (mx > bound || mx < 0.9 * bound)
			fail_msg("%s: max |w| %g, expected close to the bound %g", L->name, mx, bound);
		assert_true(fabs(sum / L->size) < 0.2 * bound);
	}
	for (size_t i = 0; i < a.nstate; i++)	/* mean 0 then var 1 per bn */
		assert_true(a.state[i] == 0.0f || a.state[i] == 1.0f);
	nn_model_free(&a);
	nn_model_free(&b);
	nn_model_free(&c);
}

/* Any B <= batch_cap; in eval mode every sample's logits depend on that sample only. */
static void test_batches(void **state)
{
	static const char *const names[] = {"mlp", "lenet", "resnet20", "lstm", "logreg",
					    "linreg"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct nn_model m;
		struct nn_input in = input_for(names[i]);
		if (!strcmp(names[i], "resnet20"))
			in = img(3, 12, 12, 10);
		int K = in.nclasses;
		assert_int_equal(nn_model_init(&m, names[i], &in, test_be("cpu"), 6, 3), 0);
		struct batch b;
		batch_make(&b, &in, 6, 11);
		assert_true(isnan(forward(&m, &b, 0, false)));
		assert_true(isnan(forward(&m, &b, 7, false)));
		float l6 = forward(&m, &b, 6, false);
		assert_true(isfinite(l6));
		float *full = malloc(6 * (size_t)K * sizeof(float));
		float *two = malloc(2 * (size_t)K * sizeof(float));
		assert_true(full && two);
		assert_int_equal(nn_model_logits(&m, full), 0);
		float l2 = forward(&m, &b, 2, false);
		assert_true(isfinite(l2));
		assert_int_equal(nn_model_logits(&m, two), 0);
		for (int k = 0; k < 2 * K; k++)
			if (fabsf(full[k] - two[k]) > 1e-5f * (1 + fabsf(full[k])))
				fail_msg("%s: logit %d is %g with B=6 and %g with B=2", names[i], k,
					 full[k], two[k]);
		/* the loss of classification at init is near log K */
		if (!in.regression && (l6 < 0.5 * log(K) || l6 > 2 * log(K) + 1))
			fail_msg("%s: initial loss %g, log K = %g", names[i], l6, log(K));
		free(full);
		free(two);
		batch_free(&b);
		nn_model_free(&m);
	}
}

static void compare(const char *what, const float *a, const float *r, size_t n, double atol,
		    double rtol)
{
	if (!floats_close(what, a, r, n, atol, rtol))
		fail_msg("%s: out of tolerance", what);
}

static void test_cpu_vs_ref(void **state)
{
	static const char *const names[] = {"mlp", "lenet", "resnet20", "lstm", "logreg",
					    "linreg"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct nn_model c, r;
		struct nn_input in = input_for(names[i]);
		if (!strcmp(names[i], "resnet20"))
			in = img(3, 16, 16, 10);
		int B = 4, K = in.nclasses;
		assert_int_equal(nn_model_init(&c, names[i], &in, test_be("cpu"), B, 5), 0);
		assert_int_equal(nn_model_init(&r, names[i], &in, test_be("ref"), B, 5), 0);
		struct batch b;
		batch_make(&b, &in, B, 21);
		float lc = forward(&c, &b, B, true), lr = forward(&r, &b, B, true);
		char what[64];
		snprintf(what, sizeof(what), "%s logits", names[i]);
		float *lgc = malloc((size_t)B * K * sizeof(float));
		float *lgr = malloc((size_t)B * K * sizeof(float));
		assert_true(lgc && lgr);
		assert_int_equal(nn_model_logits(&c, lgc), 0);
		assert_int_equal(nn_model_logits(&r, lgr), 0);
		compare(what, lgc, lgr, (size_t)B * K, 1e-4, 1e-3);
		free(lgc);
		free(lgr);
		compare(names[i], &lc, &lr, 1, 1e-5, 1e-4);
		nn_backward(&c, NULL);
		nn_backward(&r, NULL);
		for (int l = 0; l < c.nlayers; l++) {
			const struct nn_layer *L = &c.layers[l];
			double mx = 0;
			for (size_t k = 0; k < L->size; k++)
				mx = fmax(mx, fabs(r.grads[L->off + k]));
			snprintf(what, sizeof(what), "%s grad of %s", names[i], L->name);
			compare(what, c.grads + L->off, r.grads + L->off, L->size, 1e-3 * mx + 1e-7,
				2e-3);
		}
		if (c.nstate)
			compare("running stats", c.state, r.state, c.nstate, 1e-5, 1e-4);
		batch_free(&b);
		nn_model_free(&c);
		nn_model_free(&r);
	}
}

/* need_wgrad: skipped layers untouched, the others as in the full backward; FLOPs fall. */
static void check_skip(const char *name, struct nn_input in, const uint8_t *need)
{
	struct nn_model m;
	int B = 3;
	assert_int_equal(nn_model_init(&m, name, &in, test_be("cpu"), B, 9), 0);
	struct batch b;
	batch_make(&b, &in, B, 31);
	forward(&m, &b, B, true);
	nn_backward(&m, NULL);
	float *full = malloc(m.nparams * sizeof(float));
	assert_non_null(full);
	memcpy(full, m.grads, m.nparams * sizeof(float));
	nn_backward(&m, NULL);	/* backward overwrites: twice gives the same */
	assert_memory_equal(full, m.grads, m.nparams * sizeof(float));
	for (size_t k = 0; k < m.nparams; k++)
		m.grads[k] = 12345.0f;
	nn_backward(&m, need);
	for (int l = 0; l < m.nlayers; l++) {
		const struct nn_layer *L = &m.layers[l];
		for (size_t k = 0; k < L->size; k++) {
			float want = need[l] ? full[L->off + k] : 12345.0f;
			if (m.grads[L->off + k] != want)
				fail_msg("%s: layer %s (need %d) grad[%zu] = %g, expected %g", name,
					 L->name, need[l], k, m.grads[L->off + k], want);
		}
	}
	double f_all = nn_flops(&m, B, true, NULL), f_need = nn_flops(&m, B, true, need);
	double f_fwd = nn_flops(&m, B, false, NULL);
	int nneed = 0;
	for (int l = 0; l < m.nlayers; l++)
		nneed += need[l] != 0;
	assert_true(f_need < f_all);
	assert_true(f_need >= f_fwd);
	if (nneed == 0)
		assert_true(f_need == f_fwd);
	free(full);
	batch_free(&b);
	nn_model_free(&m);
}

static void test_need_wgrad(void **state)
{
	uint8_t need[128];
	struct nn_input in = img(3, 12, 12, 10);
	struct nn_model m;
	assert_int_equal(nn_model_init(&m, "resnet20", &in, test_be("ref"), 1, 9), 0);
	int L = m.nlayers;
	nn_model_free(&m);
	assert_true(L <= 128);
	for (int l = 0; l < L; l++)	/* every other layer */
		need[l] = l % 2;
	check_skip("resnet20", in, need);
	for (int l = 0; l < L; l++)	/* the upper half: backward stops in the middle */
		need[l] = l >= L / 2;
	check_skip("resnet20", in, need);
	for (int l = 0; l < L; l++)	/* only a shortcut projection */
		need[l] = l == 9 + 4 + 4;
	check_skip("resnet20", in, need);
	memset(need, 0, sizeof(need));
	check_skip("resnet20", in, need);
	in = img(1, 28, 28, 10);
	uint8_t lenet_need[5] = {0, 1, 0, 1, 0};
	check_skip("lenet", in, lenet_need);
	uint8_t lstm_need[3] = {1, 0, 1};
	check_skip("lstm", seq(6, 50, 3), lstm_need);
	uint8_t lstm_need2[3] = {0, 1, 0};
	check_skip("lstm", seq(6, 50, 3), lstm_need2);
}

/* LeNet's FLOPs from its shapes: the products of conv and linear, x2 per multiply-add;
 * backward: dW of every layer and dX of every layer but the first. */
static void test_flops(void **state)
{
	struct nn_model m;
	struct nn_input in = img(1, 28, 28, 10);
	assert_int_equal(nn_model_init(&m, "lenet", &in, test_be("ref"), 8, 1), 0);
	int B = 5;
	double c1 = 2.0 * B * 6 * 28 * 28 * 25, c2 = 2.0 * B * 16 * 10 * 10 * 6 * 25;
	double f1 = 2.0 * B * 400 * 120, f2 = 2.0 * B * 120 * 84, f3 = 2.0 * B * 84 * 10;
	double fwd = c1 + c2 + f1 + f2 + f3;
	assert_true(fabs(nn_flops(&m, B, false, NULL) - fwd) < 1);
	assert_true(fabs(nn_flops(&m, B, true, NULL) - (3 * fwd - c1)) < 1);
	uint8_t top[5] = {0, 0, 0, 0, 1};
	assert_true(fabs(nn_flops(&m, B, true, top) - (fwd + f3)) < 1);
	uint8_t mid[5] = {0, 1, 0, 0, 0};	/* dW of conv2, dX down to conv2's output */
	assert_true(fabs(nn_flops(&m, B, true, mid) - (fwd + c2 + f1 + f2 + f3)) < 1);
	nn_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_param_counts),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_layer_table),
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_cpu_vs_ref),
		cmocka_unit_test(test_need_wgrad),
		cmocka_unit_test(test_flops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
