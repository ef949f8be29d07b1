/* emu/bench/bench_csv.c — what the pieces of `emu bench net` share (emu/bench/bench.h):
 * the CSV line and the comparator of timings. */
#include <stdint.h>
#include <stdio.h>
#include "emu/bench/bench.h"

void bench_csv_line(FILE *csv, const char *test, const char *variant, size_t bytes,
		    double value, const char *unit, const char *ref, double ref_value)
{
	if (csv)
		fprintf(csv, "%s,%s,%zu,%.4g,%s,%s,%.4g,%.4g\n", test, variant, bytes, value, unit,
			ref, ref_value, ref_value > 0 ? value / ref_value : 0.0);
}

int bench_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}
