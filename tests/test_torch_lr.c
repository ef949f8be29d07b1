/* tests/test_torch_lr.c — the learning-rate schedules (nn/optim.h lr_at) against PyTorch's
 * schedulers of the same name (Debian's python3-torch), stepped once a training step:
 * every step's rate within 1e-12 of PyTorch's, relative. */
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

int main(void)
{
	if (system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
		printf("python3-torch is not installed (scripts/install-deps test installs it)\n");
		return 77;
	}
	setenv("EMU_TORCH_LR", torch_script, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cosine),
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_poly),
		cmocka_unit_test(test_onecycle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
