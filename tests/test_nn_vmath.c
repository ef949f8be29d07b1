/* tests/test_nn_vmath.c — the CPU backend's exp, sigmoid and tanh (nn/vmath.h):
 * within a few ulp of double-precision libm over a sweep of float bit patterns, and
 * the 16-wide forms (nn/cpu/vmath16.h) give the scalar forms' bits on every input, at
 * the level of nn/cpu/vec16.h this program is built for: avx2 where the compiler
 * targets AVX2 and FMA (the Makefile's x86-64-v3), else generic.  The avx512 level
 * does the same lane operations with wider registers; tests/test_backend_ops and the
 * runs compared across levels check it. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#if defined(__AVX2__) && defined(__FMA__)
#define NN_ISA avx2
#else
#define NN_ISA generic
#endif
#include "nn/cpu/vmath16.h"

/* About cap/2 floats evenly spaced in bits between 0 and lim, and their negatives (all
 * exponents, an odd stride so that the mantissas vary) */
static int sweep(float *x, int cap, float lim)
{
	int n = 0;
	uint32_t top, step;

	memcpy(&top, &lim, sizeof(top));
	step = top / (uint32_t)(cap / 2 - 1) | 1;
	for (uint32_t b = 0; b <= top && n + 2 <= cap; b += step) {
		float v;

		memcpy(&v, &b, sizeof(v));
		x[n++] = v;
		x[n++] = -v;
	}
	return n;
}

#define CAP 2400000
static float xs[CAP];

/* max relative error of f against g over xs[0..n), in units of FLT_EPSILON; the
 * floor keeps tiny results (sigmoid far left) from dividing by nothing */
static double max_err(float (*f)(float), double (*g)(double), const float *x, int n,
		      double floor)
{
	double worst = 0;

	for (int i = 0; i < n; i++) {
		double want = g(x[i]), got = f(x[i]);
		double e = fabs(got - want) / fmax(fabs(want), floor) / FLT_EPSILON;

		if (e > worst)
			worst = e;
	}
	return worst;
}

static double sigm_d(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static void test_accuracy(void **state)
{
	int n = sweep(xs, CAP, 86.0f);
	double e_exp = max_err(nn_vexpf, exp, xs, n, 0);
	double e_sig = max_err(nn_vsigmf, sigm_d, xs, n, 1e-30);
	double e_tanh = max_err(nn_vtanhf, tanh, xs, n, 0);

	printf("%d inputs in [-86, 86]: max error exp %.2f, sigmoid %.2f, tanh %.2f "
	       "(x FLT_EPSILON, relative)\n", n, e_exp, e_sig, e_tanh);
	assert_true(e_exp < 2.0);
	assert_true(e_sig < 3.0);
	assert_true(e_tanh < 3.0);
	/* the clamped ends: finite, ordered, exact where the float result is 0 or 1 */
	assert_true(isfinite(nn_vexpf(1000.0f)) && nn_vexpf(-1000.0f) > 0.0f);
	assert_true(nn_vsigmf(-1000.0f) < 2e-38f && nn_vsigmf(1000.0f) == 1.0f);
	assert_true(nn_vtanhf(50.0f) == 1.0f && nn_vtanhf(-50.0f) == -1.0f);
	assert_true(nn_vtanhf(0.0f) == 0.0f && nn_vexpf(0.0f) == 1.0f);
}

#define NN_ISA_NAME_(isa) #isa
#define NN_ISA_NAME(isa) NN_ISA_NAME_(isa)

/* lanes of vf(16 x) == f(x), bit for bit */
static void same_bits(vf16 (*vf)(vf16), float (*f)(float), const float *x, int n)
{
	for (int i = 0; i + 16 <= n; i += 16) {
		float v[16];

		vf_store(v, vf(vf_load(x + i)));
		for (int j = 0; j < 16; j++) {
			float s = f(x[i + j]);

			if (memcmp(&s, &v[j], sizeof(s)))
				fail_msg("x = %.9g: 16-wide (%s) %.9g, scalar %.9g", x[i + j],
					 NN_ISA_NAME(NN_ISA), v[j], s);
		}
	}
}

static void test_same_bits(void **state)
{
	int n = sweep(xs, CAP, 1000.0f);

	printf("16-wide forms at level %s against the scalar forms, %d inputs\n",
	       NN_ISA_NAME(NN_ISA), n);
	same_bits(nn_vexp16, nn_vexpf, xs, n);
	same_bits(nn_vsigm16, nn_vsigmf, xs, n);
	same_bits(nn_vtanh16, nn_vtanhf, xs, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accuracy),
		cmocka_unit_test(test_same_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
