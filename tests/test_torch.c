/* tests/test_torch.c — the models against PyTorch (Debian's python3-torch), the same
 * architectures written in PyTorch here: every model's parameter count, and the
 * gradients of mlp, lenet, resnet20 and the lstm on the reference backend against
 * PyTorch in float64 with the same parameters, inputs and labels (every parameter
 * tensor to 1e-4 of its largest element).  A program of its own, so that a machine
 * without PyTorch shows it as SKIP (77), never as PASS. */
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
#include "tests/backend.h"
#include "tests/rng.h"

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
	"if sys.argv[1] == 'count':\n"
	"    for spec in sys.argv[2:]:\n"
	"        n, C, H, W, T, V, K = spec.split(':'); C, H, W, T, V, K = map(int, (C, H, W, T, V, K))\n"
	"        print(n, sum(p.numel() for p in build(n, C, H, W, V, K).parameters()))\n"
	"    sys.exit(0)\n"
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

/* Every model's parameter count, emu's against PyTorch's, at the data sets' shapes. */
static void test_param_counts(void **state)
{
	static const struct {
		const char *name;
		struct nn_input in;
	} cases[] = {
		{ "mlp", { .C = 1, .H = 28, .W = 28, .nclasses = 10 } },
		{ "lenet", { .C = 1, .H = 28, .W = 28, .nclasses = 10 } },
		{ "resnet20", { .C = 3, .H = 32, .W = 32, .nclasses = 10 } },
		{ "resnet32", { .C = 3, .H = 32, .W = 32, .nclasses = 10 } },
		{ "resnet44", { .C = 3, .H = 32, .W = 32, .nclasses = 10 } },
		{ "resnet56", { .C = 3, .H = 32, .W = 32, .nclasses = 10 } },
		{ "resnet110", { .C = 3, .H = 32, .W = 32, .nclasses = 10 } },
		{ "lstm", { .T = 16, .vocab = 1000, .nclasses = 4 } },
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	static char cmd[sizeof(torch_script) + 1024];
	int n = snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$EMU_TORCH_SCRIPT\" count");
	for (int c = 0; c < N; c++) {
		const struct nn_input *in = &cases[c].in;
		n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, " %s:%d:%d:%d:%d:%d:%d", cases[c].name,
			      in->C, in->H, in->W, in->T, in->vocab, in->nclasses);
	}
	setenv("EMU_TORCH_SCRIPT", torch_script, 1);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	char line[256];
	int seen = 0;
	while (fgets(line, sizeof(line), f)) {
		char name[32];
		size_t count, nparams, nstate;
		if (sscanf(line, "%31s %zu", name, &count) != 2)
			fail_msg("torch printed: %s", line);
		assert_true(seen < N && !strcmp(name, cases[seen].name));
		assert_int_equal(nn_model_size(name, &cases[seen].in, &nparams, &nstate, NULL), 0);
		printf("%s: %zu parameters, PyTorch %zu\n", name, nparams, count);
		if (nparams != count)
			fail_msg("%s: emu has %zu parameters, PyTorch %zu", name, nparams, count);
		seen++;
	}
	assert_int_equal(pclose(f), 0);
	assert_int_equal(seen, N);
}

int main(void)
{
	if (system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
		printf("python3-torch is not installed (scripts/install-deps test installs it)\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_param_counts),
		cmocka_unit_test(test_vs_torch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
