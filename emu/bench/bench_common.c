/* emu/bench/bench_common.c — what the benchmarks share (emu/bench/bench.h): the answer to
 * --help or a bad option, the CSV line, the comparator of timings, and the notify and the
 * exchange with their messages printed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "emu/bench/bench.h"
#include "emu/net/xchg.h"

int bench_usage(const char *name, const char *arg, const char *text)
{
	if (arg && (!strcmp(arg, "--help") || !strcmp(arg, "-h"))) {
		fputs(text, stdout);
		return 0;
	}
	if (arg && arg[0] == '-')
		fprintf(stderr, "emu bench %s: unknown option '%s' (or it needs a value)\n", name,
			arg);
	else if (arg)
		fprintf(stderr, "emu bench %s: unexpected argument '%s'\n", name, arg);
	fputs(text, stderr);
	return 2;
}

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

void bench_notify_say(const char *line)
{
	fprintf(stderr, "emu: %s\n", line);
}

int bench_notify_init(struct notify *nt, enum notify_mode mode)
{
	int rc = notify_init(nt, mode);

	nt->say = bench_notify_say;
	return rc;
}

int bench_xchg_run(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
		   uint32_t flags, uint32_t *flags_out)
{
	int rc = xchg_run(x, step, ops, ctx, flags, flags_out);

	if (rc && x->err[0])
		fprintf(stderr, "emu: %s\n", x->err);
	return rc;
}
