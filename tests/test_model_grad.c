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
 * test_vs_torch: the same models in PyTorch float64, when python3-torch is installed.
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

/* ---- the exact check: PyTorch in float64, when python3-torch is installed ---- */

/* The same architectures in PyTorch (float64); reads DIR/NAME.bin = params, grads (as
 * emu computed them), inputs, labels; prints "NAME worst" with the largest
 * |emu - torch| / max |torch| over each parameter tensor. */
static const char torch_script[] =
	"import sys, torch, torch.nn as nn, torch.nn.functional as F\n"
	"torch.set_default_dtype(torch.float64)\n"
	"class Block(nn.Module):\n"
	"    def __init__(s, cin, cout, stride):\n"
	"        super().__init__()\n"
	"        s.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False); s.b1 = nn.BatchNorm2d(cout)\n"
	"        s.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False); s.b2 = nn.BatchNorm2d(cout)\n"
	"        s.sc = None\n"
	"        if stride != 1 or cin != cout:\n"
	"            s.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))\n"
	"    def forward(s, x):\n"
	"        o = F.relu(s.b1(s.c1(x))); o = s.b2(s.c2(o))\n"
	"        return F.relu(o + (x if s.sc is None else s.sc(x)))\n"
	"class Lstm(nn.Module):\n"
	"    def __init__(s, V, K):\n"
	"        super().__init__(); s.e = nn.Embedding(V, 64)\n"
	"        s.l = nn.LSTM(64, 128, batch_first=True); s.fc = nn.Linear(128, K)\n"
	"    def forward(s, x):\n"
	"        o, (h, c) = s.l(s.e(x)); return s.fc(h[-1])\n"
	"def build(n, C, H, W, V, K):\n"
	"    if n == 'mlp': return nn.Sequential(nn.Flatten(), nn.Linear(C*H*W, 256), nn.ReLU(), nn.Linear(256, K))\n"
	"    if n == 'lenet':\n"
	"        f = 16 * ((H // 2 - 4) // 2) * ((W // 2 - 4) // 2)\n"
	"        return nn.Sequential(nn.Conv2d(C, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),\n"
	"            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(f, 120),\n"
	"            nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, K))\n"
	"    if n == 'lstm': return Lstm(V, K)\n"
	"    L = [nn.Conv2d(C, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]; cin = 16\n"
	"    for cout, st in ((16, 1), (32, 2), (64, 2)):\n"
	"        for i in range((int(n[6:]) - 2) // 6): L.append(Block(cin, cout, st if i == 0 else 1)); cin = cout\n"
	"    return nn.Sequential(*L, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, K))\n"
	"for spec in sys.argv[2:]:\n"
	"    n, C, H, W, T, V, K, B = spec.split(':'); C, H, W, T, V, K, B = map(int, (C, H, W, T, V, K, B))\n"
	"    m = build(n, C, H, W, V, K); ps = list(m.parameters()); P = sum(p.numel() for p in ps)\n"
	"    raw = bytearray(open(sys.argv[1] + '/' + n + '.bin', 'rb').read())\n"
	"    f = torch.frombuffer(raw, dtype=torch.float32).double(); i32 = torch.frombuffer(raw, dtype=torch.int32)\n"
	"    o = 2 * P; k = 0\n"
	"    with torch.no_grad():\n"
	"        for p in ps: p.copy_(f[k:k + p.numel()].view_as(p)); k += p.numel()\n"
	"    if T: x = i32[o:o + B * T].long().view(B, T); o += B * T\n"
	"    else: x = f[o:o + B * C * H * W].view(B, C, H, W); o += B * C * H * W\n"
	"    y = i32[o:o + B].long(); m.train()\n"
	"    F.cross_entropy(m(x), y).backward(); k = P; worst = 0\n"
	"    for p in ps:\n"
	"        g = f[k:k + p.numel()].view_as(p); k += p.numel()\n"
	"        worst = max(worst, ((g - p.grad).abs().max() / (p.grad.abs().max() + 1e-30)).item())\n"
	"    print(n, worst)\n";

struct torch_case {
	const char *name;
	struct nn_input in;
	int B;
};

static void test_vs_torch(void **state)
{
	static const struct torch_case cases[] = {
		{"mlp", {.C = 1, .H = 6, .W = 6, .nclasses = 3}, 3},
		{"lenet", {.C = 1, .H = 12, .W = 12, .nclasses = 3}, 2},
		{"resnet20", {.C = 1, .H = 8, .W = 8, .nclasses = 3}, 2},
		{"lstm", {.T = 5, .vocab = 7, .nclasses = 3}, 3},
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	if (system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
		printf("python3-torch is not installed: the PyTorch check is skipped\n");
		skip();
	}
	char dir[] = "/tmp/emu-test-grad-XXXXXX", path[256];
	static char cmd[sizeof(torch_script) + 1024];
	assert_non_null(mkdtemp(dir));
	int n = snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$EMU_TORCH_SCRIPT\" %s", dir);
	for (int c = 0; c < N; c++) {
		const struct torch_case *t = &cases[c];
		const struct nn_input *in = &t->in;
		struct nn_model m;
		uint64_t s = 99 + (uint64_t)c;
		assert_int_equal(nn_model_init(&m, t->name, in, test_be("ref"), t->B, 5), 0);
		size_t nx = in->T ? (size_t)t->B * in->T : (size_t)t->B * in->C * in->H * in->W;
		float *x = malloc(nx * sizeof(float));
		int32_t *tok = malloc(nx * sizeof(int32_t)), y[8];
		assert_non_null(x);
		assert_non_null(tok);
		for (size_t i = 0; i < nx; i++) {
			x[i] = (float)(2 * test_unif(&s) - 1);
			tok[i] = (int32_t)(test_rng(&s) % (uint64_t)(in->vocab ? in->vocab : 1));
		}
		for (int i = 0; i < t->B; i++)
			y[i] = (int32_t)(test_rng(&s) % (uint64_t)in->nclasses);
		nn_forward(&m, in->T ? NULL : x, in->T ? tok : NULL, y, t->B, true, NULL);
		nn_backward(&m, NULL);
		snprintf(path, sizeof(path), "%s/%s.bin", dir, t->name);
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		fwrite(m.params, sizeof(float), m.nparams, f);
		fwrite(m.grads, sizeof(float), m.nparams, f);
		if (in->T)
			fwrite(tok, sizeof(int32_t), nx, f);
		else
			fwrite(x, sizeof(float), nx, f);
		fwrite(y, sizeof(int32_t), (size_t)t->B, f);
		assert_int_equal(fclose(f), 0);
		n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, " %s:%d:%d:%d:%d:%d:%d:%d", t->name,
			      in->C, in->H, in->W, in->T, in->vocab, in->nclasses, t->B);
		free(x);
		free(tok);
		nn_model_free(&m);
	}
	setenv("EMU_TORCH_SCRIPT", torch_script, 1);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[512];
	int seen = 0, bad = 0;
	while (fgets(line, sizeof(line), p)) {
		char name[32];
		double worst;
		if (sscanf(line, "%31s %lf", name, &worst) != 2) {
			printf("torch: %s", line);
			continue;
		}
		printf("%s: gradients against PyTorch float64: worst %.2g of the tensor's largest\n",
		       name, worst);
		/* float storage of every activation: ~1e-6 relative; 1e-4 leaves room */
		if (!(worst < 1e-4)) {
			printf("%s: a gradient differs from PyTorch's by %g of its tensor's largest\n",
			       name, worst);
			bad++;
		}
		seen++;
	}
	int st = pclose(p);
	for (int c = 0; c < N; c++) {
		snprintf(path, sizeof(path), "%s/%s.bin", dir, cases[c].name);
		unlink(path);
	}
	rmdir(dir);
	assert_int_equal(bad, 0);
	assert_int_equal(st, 0);
	assert_int_equal(seen, N);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mlp),	 cmocka_unit_test(test_lenet),
		cmocka_unit_test(test_resnet20), cmocka_unit_test(test_lstm),
		cmocka_unit_test(test_logreg),	 cmocka_unit_test(test_linreg),
		cmocka_unit_test(test_vs_torch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
