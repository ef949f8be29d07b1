/* tests/close.h — the tests' element-wise tolerance check of float results. */
#ifndef TESTS_CLOSE_H
#define TESTS_CLOSE_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* Whether |got[i] - want[i]| <= atol + rtol |want[i]| for every i (NaN never is).  Prints
 * the first 5 misses and the largest error (llm.c style), labelled what. */
static inline int floats_close(const char *what, const float *got, const float *want,
			       size_t n, double atol, double rtol)
{
	size_t bad = 0, worst_i = 0;
	double worst = 0;

	for (size_t i = 0; i < n; i++) {
		double err = fabs((double)got[i] - want[i]);

		if (!(err <= worst))	/* NaN counts as the worst */
			worst = isnan(err) ? INFINITY : err, worst_i = i;
		if (!(err <= atol + rtol * fabs(want[i])) && bad++ < 5)
			printf("%s[%zu]: got %.9g, reference %.9g\n", what, i, got[i], want[i]);
	}
	if (bad)
		printf("%s: %zu of %zu out of tolerance, largest error %.3g at %zu\n", what, bad, n,
		       worst, worst_i);
	return bad == 0;
}

#endif
