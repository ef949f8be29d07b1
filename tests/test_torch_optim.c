/* tests/test_torch_optim.c — the optimiser against PyTorch's (Debian's python3-torch):
 * the learning-rate schedules (nn/optim.h lr_at) against the schedulers of the same name
 * stepped once a training step, every step's rate within 1e-12 of PyTorch's, relative;
 * SGD with momentum, weight decay and Nesterov (optim_sgd_step), Adam and AdamW
 * (optim_adam_step) against torch.optim's over 8 steps, every parameter within 1e-6. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "nn/optim.h"

/* argv: NAME STEPS PEAK END POWER; prints one line: the rate before each step */
static const char torch_script[] =
	"import sys, torch\n"
	"name, T, peak, end, power = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), "
	"float(sys.argv[4]), float(sys.argv[5])\n"
	"opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)\n"
	"L = torch.optim.lr_scheduler\n"
	"s = {'cosine': lambda: L.CosineAnnealingLR(opt, T_max=T, eta_min=end),\n"
	"     'linear': lambda: L.LinearLR(opt, start_factor=1.0, end_factor=end / peak, total_iters=T),\n"
	"     'poly': lambda: L.PolynomialLR(opt, total_iters=T, power=power),\n"
	"     'onecycle': lambda: L.OneCycleLR(opt, max_lr=peak, total_steps=T, cycle_momentum=False)}[name]()\n"
	"out = []\n"
	"for i in range(T):\n"
	"    out.append(opt.param_groups[0]['lr'])\n"
	"    opt.step(); s.step()\n"
	"print(' '.join('%.17g' % x for x in out))\n";

/* argv: OPT MOMENTUM WD NESTEROV; 8 steps of OPT (sgd at lr 0.1, adam or adamw at 0.01)
 * on x_i = cos(i), gradients g_i,t = sin(3i + t); prints x after each step, 16 floats a
 * line */
static const char torch_sgd[] =
	"import sys, math, torch\n"
	"o, m, wd, nest = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == '1'\n"
	"p = torch.nn.Parameter(torch.tensor([math.cos(i) for i in range(16)], dtype=torch.float32))\n"
	"opt = {'sgd': lambda: torch.optim.SGD([p], lr=0.1, momentum=m, weight_decay=wd, nesterov=nest),\n"
	"       'adam': lambda: torch.optim.Adam([p], lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd),\n"
	"       'adamw': lambda: torch.optim.AdamW([p], lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd)}[o]()\n"
	"for t in range(8):\n"
	"    p.grad = torch.tensor([math.sin(3 * i + t) for i in range(16)], dtype=torch.float32)\n"
	"    opt.step()\n"
	"    print(' '.join('%.9g' % v for v in p.detach().tolist()))\n";

/* One schedule: 5 epochs of 10 steps, one worker's 0.1 scaled by 4 (peak 0.4) */
static void check(enum lr_kind kind, const char *name, double end, double power)
{
	enum { SPE = 10, T = 50 };
	struct lr_schedule s = { .kind = kind, .base = 0.1, .scale = 4, .end = end,
				 .power = power, .spe = SPE, .total_steps = T };
	char cmd[256], line[8192], *p = line, *q;
	FILE *f;
	double worst = 0;

	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$EMU_TORCH_LR\" %s %d 0.4 %.17g %.17g",
		 name, T, end, power);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(pclose(f), 0);
	for (int i = 0; i < T; i++, p = q) {
		double want = strtod(p, &q), got = lr_at(&s, (double)i / SPE);

		assert_true(q != p);
		if (fabs(got - want) > 1e-12 * fabs(want))
			fail_msg("%s, step %d: %.17g here, %.17g in PyTorch", name, i, got, want);
		worst = fmax(worst, fabs(got - want) / fabs(want));
	}
	print_message("%s: %d steps, largest relative difference %.2g\n", name, T, worst);
}

static void test_cosine(void **state)
{
	check(LR_COSINE, "cosine", 0.01, 1);
}

static void test_linear(void **state)
{
	check(LR_LINEAR, "linear", 0.01, 1);
}

static void test_poly(void **state)
{
	check(LR_POLY, "poly", 0, 2);
}

static void test_onecycle(void **state)
{
	check(LR_ONECYCLE, "onecycle", 0, 1);
}

/* opt: 0 sgd, 1 adam, 2 adamw */
static void step_vs_torch(int opt, float momentum, float wd, int nesterov)
{
	static const char *const name[] = { "sgd", "adam", "adamw" };
	enum { N = 16 };
	float x[N], g[N], v[2 * N] = { 0 };
	char cmd[256], line[1024];
	double worst = 0;
	FILE *f;

	for (int i = 0; i < N; i++)
		x[i] = (float)cos(i);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$EMU_TORCH_SGD\" %s %g %g %d", name[opt],
		 momentum, wd, nesterov);
	f = popen(cmd, "r");
	assert_non_null(f);
	for (int t = 0; t < 8; t++) {
		char *p = line, *q;

		for (int i = 0; i < N; i++)
			g[i] = (float)sin(3 * i + t);
		if (opt)
			optim_adam_step(x, x, g, v, v + N, N, 0.01, wd, 0.9, 0.999, 1e-8f, t + 1,
					opt == 2);
		else
			optim_sgd_step(x, x, g, momentum > 0 ? v : NULL, N, 0.1f, wd, momentum,
				       nesterov);
		assert_non_null(fgets(line, sizeof(line), f));
		for (int i = 0; i < N; i++, p = q) {
			double want = strtod(p, &q);

			assert_true(q != p);
			if (fabs(x[i] - want) > 1e-6 * fmax(1, fabs(want)))
				fail_msg("%s momentum %g wd %g nesterov %d, step %d, x[%d]: %.9g "
					 "here, %.9g in PyTorch", name[opt], momentum, wd, nesterov, t,
					 i, x[i], want);
			worst = fmax(worst, fabs(x[i] - want));
		}
	}
	assert_int_equal(pclose(f), 0);
	print_message("%s momentum %g wd %g nesterov %d: 8 steps, largest difference %.2g\n",
		      name[opt], momentum, wd, nesterov, worst);
}

static void test_sgd(void **state)
{
	step_vs_torch(0, 0, 0, 0);
	step_vs_torch(0, 0, 1e-2f, 0);
	step_vs_torch(0, 0.9f, 1e-2f, 0);
	step_vs_torch(0, 0.9f, 1e-2f, 1);
}

static void test_adam(void **state)
{
	step_vs_torch(1, 0, 0, 0);
	step_vs_torch(1, 0, 1e-2f, 0);
	step_vs_torch(2, 0, 1e-2f, 0);
}

int main(void)
{
	if (system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
		printf("python3-torch is not installed (scripts/install-deps test installs it)\n");
		return 77;
	}
	setenv("EMU_TORCH_LR", torch_script, 1);
	setenv("EMU_TORCH_SGD", torch_sgd, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cosine),
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_poly),
		cmocka_unit_test(test_onecycle),
		cmocka_unit_test(test_sgd),
		cmocka_unit_test(test_adam),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
