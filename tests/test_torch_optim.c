/* tests/test_torch_optim.c — the optimiser against PyTorch's (Debian's python3-torch):
 * the learning-rate schedules (nn/optim.h lr_at) against the schedulers of the same name
 * stepped once a training step, every step's rate within 1e-12 of PyTorch's, relative;
 * SGD with momentum, weight decay and Nesterov (optim_sgd_step), Adam and AdamW
 * (optim_adam_step) against torch.optim's, and LAMB (optim_lamb_update, optim_lamb_ratio)
 * and LARS (optim_lars_ratio, optim_lars_grad, then SGD) against their formulas in torch's
 * tensors (torch.optim has neither; LARS as timm's Lars, trust 0.1), over 10 steps,
 * every parameter within 1e-6. */
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

/* One run of python for every case (each start of torch costs a second): argv, one
 * word a case, "lr:NAME:END:POWER" (a schedule over T = 50 steps at peak 0.4: one line,
 * the rate before each step) or "opt:OPT:MOMENTUM:WD:NESTEROV" (10 steps of OPT, sgd and
 * lars at lr 0.1, adam, adamw and lamb at 0.01, on x_i = cos(i) with gradients g_i,t =
 * sin(3i + t), lamb and lars in two layers of 8: 10 lines, x after each step). */
static const char torch_script[] =
	"import sys, math, torch\n"
	"L = torch.optim.lr_scheduler\n"
	"for case in sys.argv[1:]:\n"
	"    w = case.split(':')\n"
	"    if w[0] == 'lr':\n"
	"        name, T, peak, end, power = w[1], 50, 0.4, float(w[2]), float(w[3])\n"
	"        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)\n"
	"        s = {'cosine': lambda: L.CosineAnnealingLR(opt, T_max=T, eta_min=end),\n"
	"             'linear': lambda: L.LinearLR(opt, start_factor=1.0, end_factor=end / peak, total_iters=T),\n"
	"             'poly': lambda: L.PolynomialLR(opt, total_iters=T, power=power),\n"
	"             'onecycle': lambda: L.OneCycleLR(opt, max_lr=peak, total_steps=T, cycle_momentum=False)}[name]()\n"
	"        out = []\n"
	"        for i in range(T):\n"
	"            out.append(opt.param_groups[0]['lr'])\n"
	"            opt.step(); s.step()\n"
	"        print(' '.join('%.17g' % x for x in out))\n"
	"        continue\n"
	"    o, m, wd, nest = w[1], float(w[2]), float(w[3]), w[4] == '1'\n"
	"    if o == 'lamb':\n"
	"        x = [torch.tensor([math.cos(i) for i in range(k, k + 8)], dtype=torch.float32) for k in (0, 8)]\n"
	"        ms = [torch.zeros(8), torch.zeros(8)]\n"
	"        vs = [torch.zeros(8), torch.zeros(8)]\n"
	"        for t in range(10):\n"
	"            g = torch.tensor([math.sin(3 * i + t) for i in range(16)], dtype=torch.float32)\n"
	"            for k in (0, 1):\n"
	"                gk = g[8 * k:8 * k + 8]\n"
	"                ms[k] = 0.9 * ms[k] + (1 - 0.9) * gk\n"
	"                vs[k] = 0.999 * vs[k] + (1 - 0.999) * gk * gk\n"
	"                u = ms[k] / (1 - 0.9 ** (t + 1)) / ((vs[k] / (1 - 0.999 ** (t + 1))).sqrt() + 1e-8) + wd * x[k]\n"
	"                xn, un = x[k].norm().item(), u.norm().item()\n"
	"                r = xn / un if xn > 0 and un > 0 else 1.0\n"
	"                x[k] = x[k] - 0.01 * r * u\n"
	"            print(' '.join('%.9g' % v for v in torch.cat(x).tolist()))\n"
	"        continue\n"
	"    if o == 'lars':\n"
	"        x = [torch.tensor([math.cos(i) for i in range(k, k + 8)], dtype=torch.float32) for k in (0, 8)]\n"
	"        bufs = [None, None]\n"
	"        for t in range(10):\n"
	"            g = torch.tensor([math.sin(3 * i + t) for i in range(16)], dtype=torch.float32)\n"
	"            for k in (0, 1):\n"
	"                gk = g[8 * k:8 * k + 8].clone()\n"
	"                wn, gn = x[k].norm(), gk.norm()\n"
	"                gk = gk.add(x[k], alpha=wd)\n"
	"                r = torch.where(wn > 0, torch.where(gn > 0, 0.1 * wn / (gn + wn * wd + 1e-8), torch.ones_like(wn)), torch.ones_like(wn))\n"
	"                gk = gk.mul(r)\n"
	"                if m:\n"
	"                    bufs[k] = gk.clone() if bufs[k] is None else bufs[k].mul(m).add(gk)\n"
	"                    gk = gk.add(bufs[k], alpha=m) if nest else bufs[k]\n"
	"                x[k] = x[k].add(gk, alpha=-0.1)\n"
	"            print(' '.join('%.9g' % v for v in torch.cat(x).tolist()))\n"
	"        continue\n"
	"    p = torch.nn.Parameter(torch.tensor([math.cos(i) for i in range(16)], dtype=torch.float32))\n"
	"    opt = {'sgd': lambda: torch.optim.SGD([p], lr=0.1, momentum=m, weight_decay=wd, nesterov=nest),\n"
	"           'adam': lambda: torch.optim.Adam([p], lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd),\n"
	"           'adamw': lambda: torch.optim.AdamW([p], lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd)}[o]()\n"
	"    for t in range(10):\n"
	"        p.grad = torch.tensor([math.sin(3 * i + t) for i in range(16)], dtype=torch.float32)\n"
	"        opt.step()\n"
	"        print(' '.join('%.9g' % v for v in p.detach().tolist()))\n";

enum { SPE = 10, T = 50, N = 16, STEPS = 10 };

static const struct lr_case {
	enum lr_kind kind;
	const char *name;
	double end, power;
} lr_cases[] = {
	{ LR_COSINE, "cosine", 0.01, 1 }, { LR_LINEAR, "linear", 0.01, 1 },
	{ LR_POLY, "poly", 0, 2 }, { LR_ONECYCLE, "onecycle", 0, 1 },
};

/* opt: 0 sgd, 1 adam, 2 adamw, 3 lamb, 4 lars (PyTorch has neither: their formulas in
 * torch's tensors, two layers of 8) */
static const struct opt_case {
	int opt;
	float momentum, wd;
	int nesterov;
} opt_cases[] = {
	{ 0, 0, 0, 0 }, { 0, 0, 1e-2f, 0 }, { 0, 0.9f, 1e-2f, 0 }, { 0, 0.9f, 1e-2f, 1 },
	{ 1, 0, 0, 0 }, { 1, 0, 1e-2f, 0 }, { 2, 0, 1e-2f, 0 }, { 3, 0, 0, 0 }, { 3, 0, 1e-2f, 0 },
	{ 4, 0, 0, 0 }, { 4, 0.9f, 1e-2f, 0 }, { 4, 0.9f, 1e-2f, 1 },
};
static const char *const opt_name[] = { "sgd", "adam", "adamw", "lamb", "lars" };

#define NLR (sizeof(lr_cases) / sizeof(lr_cases[0]))
#define NOPT (sizeof(opt_cases) / sizeof(opt_cases[0]))

/* PyTorch's lines: one per schedule, then STEPS per optimiser case */
static char *torch_lines[NLR + NOPT * STEPS];

static int run_torch(void **state)
{
	char cmd[2048], line[8192];
	int n = snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$EMU_TORCH_OPTIM\"");
	FILE *f;

	for (size_t k = 0; k < NLR; k++)
		n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, " lr:%s:%.17g:%.17g",
			      lr_cases[k].name, lr_cases[k].end, lr_cases[k].power);
	for (size_t k = 0; k < NOPT; k++)
		n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, " opt:%s:%g:%g:%d",
			      opt_name[opt_cases[k].opt], opt_cases[k].momentum, opt_cases[k].wd,
			      opt_cases[k].nesterov);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	for (size_t i = 0; i < NLR + NOPT * STEPS; i++)
		if (!fgets(line, sizeof(line), f) || !(torch_lines[i] = strdup(line)))
			break;
	return pclose(f) == 0 && torch_lines[NLR + NOPT * STEPS - 1] ? 0 : -1;
}

static int free_torch(void **state)
{
	for (size_t i = 0; i < NLR + NOPT * STEPS; i++)
		free(torch_lines[i]);
	return 0;
}

/* Schedules: 5 epochs of 10 steps, one worker's 0.1 scaled by 4 (peak 0.4); every
 * step's rate within 1e-12 of PyTorch's, relative */
static void test_schedules(void **state)
{
	for (size_t k = 0; k < NLR; k++) {
		const struct lr_case *c = &lr_cases[k];
		struct lr_schedule s = { .kind = c->kind, .base = 0.1, .scale = 4, .end = c->end,
					 .power = c->power, .spe = SPE, .total_steps = T };
		char *p = torch_lines[k], *q;
		double worst = 0;

		for (int i = 0; i < T; i++, p = q) {
			double want = strtod(p, &q), got = lr_at(&s, (double)i / SPE);

			assert_true(q != p);
			if (fabs(got - want) > 1e-12 * fabs(want))
				fail_msg("%s, step %d: %.17g here, %.17g in PyTorch", c->name, i, got,
					 want);
			worst = fmax(worst, fabs(got - want) / fabs(want));
		}
		print_message("%s: %d steps, largest relative difference %.2g\n", c->name, T,
			      worst);
	}
}

/* The optimisers: every parameter within 1e-6 of PyTorch's after each of 10 steps */
static void test_optimisers(void **state)
{
	for (size_t k = 0; k < NOPT; k++) {
		const struct opt_case *c = &opt_cases[k];
		float x[N], g[N], v[2 * N] = { 0 };
		double worst = 0;

		for (int i = 0; i < N; i++)
			x[i] = (float)cos(i);
		for (int t = 0; t < STEPS; t++) {
			char *p = torch_lines[NLR + k * STEPS + (size_t)t], *q;

			for (int i = 0; i < N; i++)
				g[i] = (float)sin(3 * i + t);
			if (c->opt == 4) {
				for (int l = 0; l < 2; l++) {
					float r = optim_lars_ratio(optim_norm2(x + 8 * l, 8),
								   optim_norm2(g + 8 * l, 8), 0.1f,
								   c->wd, 1e-8f);

					optim_lars_grad(g + 8 * l, x + 8 * l, 8, c->wd, r);
				}
				optim_sgd_step(x, x, g, c->momentum > 0 ? v : NULL, N, 0.1f, 0,
					       c->momentum, c->nesterov);
			} else if (c->opt == 3) {
				optim_lamb_update(g, x, g, v, v + N, N, 0.9, 0.999, 1e-8f, c->wd, t + 1);
				for (int l = 0; l < 2; l++) {
					float r = optim_lamb_ratio(optim_norm2(x + 8 * l, 8),
								   optim_norm2(g + 8 * l, 8));

					optim_sgd_to(x + 8 * l, x + 8 * l, g + 8 * l, 8, 0.01f * r, 0);
				}
			} else if (c->opt)
				optim_adam_step(x, x, g, v, v + N, N, 0.01, c->wd, 0.9, 0.999, 1e-8f,
						t + 1, c->opt == 2);
			else
				optim_sgd_step(x, x, g, c->momentum > 0 ? v : NULL, N, 0.1f, c->wd,
					       c->momentum, c->nesterov);
			for (int i = 0; i < N; i++, p = q) {
				double want = strtod(p, &q);

				assert_true(q != p);
				if (fabs(x[i] - want) > 1e-6 * fmax(1, fabs(want)))
					fail_msg("%s momentum %g wd %g nesterov %d, step %d, x[%d]: "
						 "%.9g here, %.9g in PyTorch", opt_name[c->opt],
						 c->momentum, c->wd, c->nesterov, t, i, x[i], want);
				worst = fmax(worst, fabs(x[i] - want));
			}
		}
		print_message("%s momentum %g wd %g nesterov %d: %d steps, largest difference "
			      "%.2g\n", opt_name[c->opt], c->momentum, c->wd, c->nesterov, STEPS,
			      worst);
	}
}

int main(void)
{
	if (system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
		printf("python3-torch is not installed (scripts/install-deps test installs it)\n");
		return 77;
	}
	setenv("EMU_TORCH_OPTIM", torch_script, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedules),
		cmocka_unit_test(test_optimisers),
	};
	return cmocka_run_group_tests(tests, run_torch, free_torch);
}
