/* tests/test_torch_model_ini.c — models described in an INI file's [model] section against
 * PyTorch: each INI text below is loaded as emu loads a configuration (cfg_load), built
 * (train.model = custom) on the reference backend and run forward and backward on a
 * random batch; tests/torch_model_ini.py reads the same INI files into the same networks
 * in PyTorch (float64, its own reader and shapes), copies emu's initial parameters in and
 * runs the same batches, all in one python3 (its start is most of the time).  Per model:
 * the parameter counts are equal, the losses within 1e-5 of each other (relative), every
 * gradient tensor within 1e-4 of its largest element, or of the model's largest gradient
 * where the tensor's is 0 in exact arithmetic (a bias before batch norm: float32 rounding
 * noise in emu).  float32 storage of activations and parameters gives ~1e-7 relative per
 * value and below 1e-6 after a few layers (the worst measured: 5.5e-7); 1e-4 is the bound
 * tests/test_torch.c holds the built-in models to.  A dropped relu is off by more than 1,
 * an average pool's gradient 0.1% too large by 1e-3.  A program of its own, so that a
 * machine without PyTorch shows it as SKIP (77). */
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
#include "emu/cfg/cfg.h"
#include "nn/model.h"
#include "tests/backend.h"
#include "tests/rng.h"

struct described {
	const char *name;
	struct nn_input in;	/* desc filled in from the INI */
	int B;
	const char *ini;
};

static const struct described cases[] = {
	/* an MLP with two hidden layers */
	{ "mlp2", { .C = 2, .H = 5, .W = 5, .nclasses = 3 }, 4,
	  "[train]\nmodel = custom\n[model]\n"
	  "flat = flatten\n"
	  "fc1 = linear 32\n"
	  "relu1 = relu\n"
	  "fc2 = linear 16\n"
	  "relu2 = relu\n"
	  "fc3 = linear classes\n" },
	/* a small CNN: batch norm on images and on flat input, both pools, a stride, a conv
	 * without bias */
	{ "cnn_bn", { .C = 3, .H = 10, .W = 10, .nclasses = 3 }, 4,
	  "[train]\nmodel = custom\n[model]\n"
	  "conv1 = conv 6 3 pad=1\n"
	  "bn1 = batchnorm\n"
	  "relu1 = relu\n"
	  "pool1 = avgpool 2\n"
	  "conv2 = conv 8 3 stride=2 pad=1 bias=false\n"
	  "bn2 = batchnorm\n"
	  "relu2 = relu\n"
	  "pool2 = maxpool 2 stride=1\n"
	  "flat = flatten\n"
	  "fc1 = linear 16\n"
	  "bn3 = batchnorm\n"
	  "relu3 = relu\n"
	  "fc2 = linear classes\n" },
	/* a small residual CNN: an identity block and a strided block with a projection
	 * shortcut, then global average pooling */
	{ "resblocks", { .C = 2, .H = 8, .W = 8, .nclasses = 3 }, 4,
	  "[train]\nmodel = custom\n[model]\n"
	  "conv1 = conv 8 3 pad=1 bias=false\n"
	  "bn1 = batchnorm\n"
	  "relu1 = relu\n"
	  "b1_conv1 = conv 8 3 pad=1 bias=false\n"
	  "b1_bn1 = batchnorm\n"
	  "b1_relu1 = relu\n"
	  "b1_conv2 = conv 8 3 pad=1 bias=false\n"
	  "b1_bn2 = batchnorm\n"
	  "b1_add = add from b1_bn2 relu1\n"
	  "b1_relu2 = relu\n"
	  "b2_conv1 = conv 16 3 stride=2 pad=1 bias=false\n"
	  "b2_bn1 = batchnorm\n"
	  "b2_relu1 = relu\n"
	  "b2_conv2 = conv 16 3 pad=1 bias=false\n"
	  "b2_bn2 = batchnorm\n"
	  "b2_short = conv 16 1 stride=2 bias=false from b1_relu2\n"
	  "b2_short_bn = batchnorm\n"
	  "b2_add = add from b2_bn2 b2_short_bn\n"
	  "b2_relu2 = relu\n"
	  "pool = gap\n"
	  "fc = linear classes\n" },
	/* tokens: an embedding and an lstm */
	{ "lstm_small", { .T = 5, .vocab = 7, .nclasses = 3 }, 3,
	  "[train]\nmodel = custom\n[data]\ndataset = text\n[model]\n"
	  "embed = embedding 8\n"
	  "lstm = lstm 12\n"
	  "fc = linear classes\n" },
};
enum { N = sizeof(cases) / sizeof(cases[0]) };

static void write_file(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* emu's side of one model: loaded from its INI text into DIR/NAME.ini, built, run forward
 * and backward; DIR/NAME.bin gets the parameters, gradients, inputs and labels.  Its
 * parameter count and loss into *nparams, *loss. */
static void emu_side(const struct described *t, const char *dir, int idx, size_t *nparams,
		     float *loss)
{
	static struct cfg c;
	char ini[256], data[256], err[2048];
	struct nn_input in = t->in;
	struct nn_model m;
	uint64_t s = 77 + (uint64_t)idx;

	snprintf(ini, sizeof(ini), "%s/%s.ini", dir, t->name);
	snprintf(data, sizeof(data), "%s/%s.bin", dir, t->name);
	write_file(ini, t->ini, strlen(t->ini));
	if (cfg_load(&c, ini, 0, NULL, err, sizeof(err)))
		fail_msg("%s: %s", t->name, err);
	assert_string_equal(c.train.model, "custom");
	in.desc = &c.model;
	assert_int_equal(nn_model_init(&m, "custom", &in, test_be("ref"), t->B, 5), 0);

	size_t nx = in.T ? (size_t)t->B * in.T : (size_t)t->B * in.C * in.H * in.W;
	float *x = malloc(nx * sizeof(float));
	int32_t *tok = malloc(nx * sizeof(int32_t)), y[8];
	assert_non_null(x);
	assert_non_null(tok);
	for (size_t i = 0; i < nx; i++) {
		x[i] = (float)(2 * test_unif(&s) - 1);
		tok[i] = (int32_t)(test_rng(&s) % (uint64_t)(in.vocab ? in.vocab : 1));
	}
	for (int i = 0; i < t->B; i++)
		y[i] = (int32_t)(test_rng(&s) % (uint64_t)in.nclasses);
	*loss = nn_forward(&m, in.T ? NULL : x, in.T ? tok : NULL, y, t->B, true, NULL);
	nn_backward(&m, NULL);
	FILE *f = fopen(data, "wb");
	assert_non_null(f);
	fwrite(m.params, sizeof(float), m.nparams, f);
	fwrite(m.grads, sizeof(float), m.nparams, f);
	if (in.T)
		fwrite(tok, sizeof(int32_t), nx, f);
	else
		fwrite(x, sizeof(float), nx, f);
	fwrite(y, sizeof(int32_t), (size_t)t->B, f);
	assert_int_equal(fclose(f), 0);
	*nparams = m.nparams;
	free(x);
	free(tok);
	nn_model_free(&m);
}

static void test_described_vs_torch(void **state)
{
	char dir[] = "/tmp/emu-test-model-ini-XXXXXX", script[512], cmd[2048], line[512];
	const char *src = getenv("SRCDIR");
	size_t nparams[N];
	float loss[N];
	int n, seen = 0, bad = 0;

	snprintf(script, sizeof(script), "%s/tests/torch_model_ini.py", src ? src : ".");
	assert_int_equal(access(script, R_OK), 0);
	assert_non_null(mkdtemp(dir));
	n = snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s", script, dir);
	for (int i = 0; i < N; i++) {
		const struct nn_input *in = &cases[i].in;

		emu_side(&cases[i], dir, i, &nparams[i], &loss[i]);
		n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, " %s:%d:%d:%d:%d:%d:%d:%d",
			      cases[i].name, in->C, in->H, in->W, in->T, in->vocab, in->nclasses,
			      cases[i].B);
	}
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char name[32], where[128];
		size_t count;
		double tloss, worst;

		if (sscanf(line, "%31s params %zu loss %lf worst %lf at %127s", name, &count,
			   &tloss, &worst, where) != 5 || seen == N ||
		    strcmp(name, cases[seen].name)) {
			printf("torch: %s", line);
			continue;
		}
		double rel = fabs(loss[seen] - tloss) / fabs(tloss);
		printf("%s: %zu parameters (PyTorch %zu), loss %.7g (PyTorch %.7g, %.2g "
		       "relative), gradients worst %.2g of the tensor's largest (%s)\n", name,
		       nparams[seen], count, (double)loss[seen], tloss, rel, worst, where);
		if (nparams[seen] != count)
			bad += printf("%s: emu has %zu parameters, PyTorch %zu\n", name,
				      nparams[seen], count) > 0;
		if (!(rel < 1e-5))
			bad += printf("%s: loss %.9g, PyTorch's %.9g\n", name, (double)loss[seen],
				      tloss) > 0;
		if (!(worst < 1e-4))
			bad += printf("%s: the gradient of %s differs from PyTorch's by %.3g of its "
				      "largest\n", name, where, worst) > 0;
		seen++;
	}
	int st = pclose(p);
	for (int i = 0; i < N; i++) {
		snprintf(line, sizeof(line), "%s/%s.ini", dir, cases[i].name);
		unlink(line);
		snprintf(line, sizeof(line), "%s/%s.bin", dir, cases[i].name);
		unlink(line);
	}
	rmdir(dir);
	assert_int_equal(bad, 0);
	assert_int_equal(st, 0);
	assert_int_equal(seen, N);
}

int main(void)
{
	if (system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
		printf("python3-torch is not installed (scripts/install-deps test installs it)\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_described_vs_torch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
