/* tests/test_data_fmnist.c — the real Fashion-MNIST of Debian's dataset-fashion-mnist:
 * sizes, balanced labels, and the published normalisation constants against the pixels
 * (normalised training pixels have mean 0 and std 1 to 1e-3).  Its own program, so
 * that a machine without the package shows SKIP (77); tests/test_data.c checks the
 * loader on generated files. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "nn/data.h"

#define FM_MEAN 0.2860	/* Fashion-MNIST, as published (see nn/data.h) */
#define FM_STD 0.3530

static void test_fashion_mnist_real(void **state)
{
	struct nn_dataset tr, te;
	char err[512];
	assert_int_equal(data_fashion_mnist(&tr, &te, NULL, err, sizeof(err)), 0);
	assert_int_equal(tr.n, 60000);
	assert_int_equal(te.n, 10000);
	assert_int_equal(tr.in.C, 1);
	assert_int_equal(tr.in.H, 28);
	assert_int_equal(tr.in.W, 28);
	assert_int_equal(tr.in.nclasses, 10);
	int hist[10] = { 0 }, thist[10] = { 0 };
	for (int i = 0; i < tr.n; i++)
		hist[tr.y[i]]++;	/* ASan catches a label outside 0..9 */
	for (int i = 0; i < te.n; i++)
		thist[te.y[i]]++;
	for (int c = 0; c < 10; c++) {
		assert_int_equal(hist[c], 6000);
		assert_int_equal(thist[c], 1000);
	}
	/* Pixel range: 0 and 255 both occur, so the extremes are exactly the normalised
	 * ends; mean 0 and std 1 check the published constants against the data. */
	double lo = (0 - FM_MEAN) / FM_STD, hi = (1 - FM_MEAN) / FM_STD;
	double mn = 1e9, mx = -1e9, s = 0, s2 = 0;
	size_t n = (size_t)tr.n * 784;
	for (size_t i = 0; i < n; i++) {
		double v = tr.x[i];
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
		s += v;
		s2 += v * v;
	}
	double mean = s / n, sd = sqrt(s2 / n - mean * mean);
	print_message("fashion-mnist train: min %.5f max %.5f mean %.5f std %.5f\n", mn, mx,
		      mean, sd);
	assert_true(fabs(mn - lo) < 1e-5 && fabs(mx - hi) < 1e-5);
	assert_true(fabs(mean) < 1e-3);
	assert_true(fabs(sd - 1) < 1e-3);
	data_free(&tr);
	data_free(&te);
}

int main(void)
{
	struct stat st;
	if (stat(DATA_FASHION_MNIST_DIR, &st) != 0) {
		printf("no %s (Debian's dataset-fashion-mnist)\n", DATA_FASHION_MNIST_DIR);
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fashion_mnist_real),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
