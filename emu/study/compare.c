/* emu/study/compare.c — `emu compare A B`: whether two runs computed the same numbers.
 *
 * A run is deterministic (same INI, same seed, same build: same CSVs), so two runs that
 * should agree can be held to it cell by cell: train.csv, eval.csv and net.csv of two run
 * folders (or two CSV files) are compared row by row, their columns matched by name,
 * wall-clock columns left out.  A is the reference, B the run under test: a column only
 * B has is a new one, which --allow-new-columns accepts (a version that adds columns can
 * still show that it kept the old ones); a column only A has was lost, always a
 * difference.  Exit 0 same (within --tol), 1 different, 2 bad arguments or files.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emu/commands.h"
#include "emu/study/csv_read.h"

static const char help[] =
	"usage: emu compare [--tol REL] [--allow-new-columns] [--ignore COL,...] A B\n"
	"\n"
	"Compares two runs: train.csv, eval.csv and net.csv of the run folders A and B (or\n"
	"the two CSV files A and B), row by row, columns matched by name.  Wall-clock\n"
	"columns (wall_s, wall_*, *_wall_s: real time, never the same twice) are not\n"
	"compared.  A is the reference, B the run under test.  Prints the first difference\n"
	"of each file (row, column, both values) and one summary line per file: rows\n"
	"compared, and the largest relative difference of each column that differs, or\n"
	"'identical'.\n"
	"\n"
	"  --tol REL            numbers a, b agree when |a - b| <= REL * max(|a|, |b|)\n"
	"                       (default 0: equal values; '1' and '1.0' are equal); other\n"
	"                       cells must be the same text\n"
	"  --allow-new-columns  a column only B has is reported, not counted as a difference\n"
	"                       (a column only A has always is one)\n"
	"  --ignore COL,...     leave these columns out too (e.g. the times of compute =\n"
	"                       measured)\n"
	"\n"
	"A row count that differs is a difference (the shorter file is named; the rows both\n"
	"have are still compared).  Exit 0 same (or within --tol), 1 different, 2 bad\n"
	"arguments, or a file missing, unreadable or malformed (FILE:LINE says where).\n";

static const char *const run_files[] = { "train.csv", "eval.csv", "net.csv" };

struct compare_opts {
	double tol;
	int allow_new;
	const char *ignore;	/* comma-separated names, or NULL */
};

/* What one column of a file came to: its largest relative difference, and how many
 * rows differ beyond the tolerance. */
struct col_diff {
	double max_rel;		/* inf: text, NaN against a number, or an infinity */
	size_t rows_over;
};

/* Wall-clock columns measure this machine, not the run: never equal twice. */
static int wall_clock(const char *name)
{
	size_t n = strlen(name);

	return !strcmp(name, "wall_s") || !strncmp(name, "wall_", 5) ||
	       (n > 7 && !strcmp(name + n - 7, "_wall_s"));
}

static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static int skipped(const struct compare_opts *o, const char *name)
{
	return wall_clock(name) || in_list(o->ignore, name);
}

/* The relative difference of two cells: 0 when they are equal (as text, or as numbers:
 * "1" and "1.0", or both NaN), |a - b| / max(|a|, |b|) for other numbers, INFINITY when
 * they cannot be compared as numbers (text, or NaN against a number). */
static double rel_diff(const char *a, const char *b)
{
	double x, y, m;
	char *ea, *eb;

	if (!strcmp(a, b))
		return 0;
	x = strtod(a, &ea);
	y = strtod(b, &eb);
	if (!*a || !*b || *ea || *eb)
		return INFINITY;
	if (x == y || (isnan(x) && isnan(y)))
		return 0;
	if (isnan(x) || isnan(y) || isinf(x) || isinf(y))
		return INFINITY;
	m = fmax(fabs(x), fabs(y));
	return fabs(x / m - y / m);	/* scaled first: no overflow near DBL_MAX */
}

/* Which row of a file this is, for people: "row 3 (line 4, step 15)"; the columns that
 * name a row (step, src, dst, worker) where the file has them. */
static void row_name(const struct csv *c, size_t row, char *buf, size_t len)
{
	static const char *const keys[] = { "step", "src", "dst", "worker" };
	int n = snprintf(buf, len, "row %zu (line %zu", row + 1, row + 2);

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		int col = csv_col(c, keys[k]);

		if (col >= 0 && n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, ", %s %s", keys[k],
				      csv_cell(c, row, col));
	}
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ")");
}

/* Load path; on failure say why, naming the file (and line), and return -1. */
static int load(const char *path, struct csv *c)
{
	int rc = csv_load(path, c);

	if (rc == -EPROTO && c->bad_line == 1)
		fprintf(stderr, "emu compare: %s:1: no header line (or one cut short); "
			"expected the column names of an emu CSV file\n", path);
	else if (rc == -EPROTO)
		fprintf(stderr, "emu compare: %s:%d: a row cut short or with another number of "
			"fields than the header's; expected a whole CSV line\n", path,
			c->bad_line);
	else if (rc)
		fprintf(stderr, "emu compare: %s\n", c->err);
	if (rc)
		return -1;
	for (int i = 0; i < c->ncols; i++)
		if (csv_col(c, c->names[i]) != i) {
			fprintf(stderr, "emu compare: %s:1: column '%s' appears twice; "
				"expected one column of each name\n", path, c->names[i]);
			csv_free(c);
			return -1;
		}
	return 0;
}

/* The summary line's list: "loss 3.1e-05 in 8 rows, ..." of the columns whose
 * difference is over the tolerance (over), or within it but not zero (!over). */
static int print_cols(const struct csv *a, const int *bcol, const struct col_diff *d,
		      const struct compare_opts *o, int over, const char *lead)
{
	int n = 0;

	for (int i = 0; i < a->ncols; i++) {
		if (bcol[i] < 0 || skipped(o, a->names[i]) || d[i].max_rel == 0 ||
		    (d[i].rows_over > 0) != over)
			continue;
		printf("%s%s ", n++ ? ", " : lead, a->names[i]);
		if (isinf(d[i].max_rel))
			printf("(not numbers)");
		else
			printf("%.3g", d[i].max_rel);
		if (over)
			printf(" in %zu row%s", d[i].rows_over, d[i].rows_over == 1 ? "" : "s");
	}
	return n;
}

/* The columns of x that y lacks, as "; LEAD a, b"; how many. */
static int print_only(const struct csv *x, const struct csv *y,
		      const struct compare_opts *o, const char *lead)
{
	int n = 0;

	for (int i = 0; i < x->ncols; i++)
		if (csv_col(y, x->names[i]) < 0 && !skipped(o, x->names[i]))
			printf("%s%s", n++ ? ", " : lead, x->names[i]);
	return n;
}

/* The first cell of the rows both files have that differs beyond the tolerance, said
 * as where it is and both values; every cell's difference goes into d. */
static int compare_rows(const char *name, const struct csv *a, const struct csv *b,
			const int *bcol, struct col_diff *d, const struct compare_opts *o)
{
	size_t rows = a->nrows < b->nrows ? a->nrows : b->nrows;
	int differ = 0;

	for (size_t r = 0; r < rows; r++)
		for (int i = 0; i < a->ncols; i++) {
			const char *va, *vb;
			char where[256];
			double rel;

			if (bcol[i] < 0 || skipped(o, a->names[i]))
				continue;
			va = csv_cell(a, r, i);
			vb = csv_cell(b, r, bcol[i]);
			rel = rel_diff(va, vb);
			if (rel > d[i].max_rel)
				d[i].max_rel = rel;
			if (rel <= o->tol)
				continue;
			d[i].rows_over++;
			if (differ++)
				continue;
			row_name(a, r, where, sizeof(where));
			printf("%s: first difference at %s, column %s: %s (A) against %s (B), ",
			       name, where, a->names[i], va, vb);
			if (isinf(rel))
				printf("not comparable as numbers\n");
			else
				printf("relative difference %.3g\n", rel);
		}
	return differ > 0;
}

/* Compare the CSV files pa and pb, shown as name: the first difference, then the summary
 * line.  0 same, 1 different, 2 unreadable or malformed. */
static int compare_file(const char *name, const char *pa, const char *pb,
			const struct compare_opts *o)
{
	struct csv a, b;
	struct col_diff *d;
	int *bcol, differ, compared = 0, skip = 0, over, within, only_a, only_b;

	if (load(pa, &a) < 0)
		return 2;
	if (load(pb, &b) < 0) {
		csv_free(&a);
		return 2;
	}
	d = calloc((size_t)a.ncols, sizeof(*d));
	bcol = calloc((size_t)a.ncols, sizeof(*bcol));
	if (!d || !bcol) {
		fprintf(stderr, "emu compare: out of memory\n");
		differ = 2;
		goto out;
	}
	for (int i = 0; i < a.ncols; i++) {
		bcol[i] = csv_col(&b, a.names[i]);
		skip += skipped(o, a.names[i]);
		compared += bcol[i] >= 0 && !skipped(o, a.names[i]);
	}
	differ = compare_rows(name, &a, &b, bcol, d, o);

	printf("%s: %zu rows, %d columns compared", name,
	       a.nrows < b.nrows ? a.nrows : b.nrows, compared);
	for (int i = 0, n = 0; i < a.ncols; i++)
		if (skipped(o, a.names[i]))
			printf("%s%s", n++ ? ", " : " (left out: ", a.names[i]);
	if (skip)
		printf(")");
	over = print_cols(&a, bcol, d, o, 1, ", differs: ");
	within = print_cols(&a, bcol, d, o, 0, over ? "; within --tol: " : ", within --tol: ");
	if (!over && !within)
		printf(", identical");
	if (a.nrows != b.nrows)
		printf("; %s is shorter (%zu rows against %zu)", a.nrows < b.nrows ? "A" : "B",
		       a.nrows < b.nrows ? a.nrows : b.nrows,
		       a.nrows < b.nrows ? b.nrows : a.nrows);
	only_a = print_only(&a, &b, o, "; only in A: ");
	only_b = print_only(&b, &a, o, o->allow_new ? "; new in B (allowed): " :
			    "; only in B: ");
	differ |= a.nrows != b.nrows || only_a || (only_b && !o->allow_new);
	printf("\n");
out:
	free(d);
	free(bcol);
	csv_free(&a);
	csv_free(&b);
	return differ;
}

/* --tol's value: a finite number >= 0. */
static int parse_tol(const char *s, double *tol)
{
	char *end;

	errno = 0;
	*tol = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*tol) && *tol >= 0 ? 0 : -EINVAL;
}

/* 1 a folder, 0 something else, -1 nothing there (said, naming it) */
static int is_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "emu compare: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return S_ISDIR(st.st_mode);
}

/* The value of option argv[*i] (--tol REL or --tol=REL), or NULL when it has none. */
static const char *opt_value(int argc, char **argv, int *i)
{
	const char *eq = strchr(argv[*i], '=');

	if (eq)
		return eq + 1;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

static int opt_is(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (!arg[n] || arg[n] == '=');
}

/* argv[0] is "compare"; messages count arguments as emu's argv does (emu is 0). */
int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { 0 };
	const char *path[2] = { NULL, NULL }, *name;
	int npath = 0, rc = 0, da, db, opts = 1;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val;

		if (!opts || arg[0] != '-' || !arg[1]) {
			if (npath == 2) {
				fprintf(stderr, "emu compare: argument %d (%s): a third run; "
					"expected emu compare [OPTIONS] A B\n", i + 1, arg);
				return 2;
			}
			path[npath++] = arg;
		} else if (!strcmp(arg, "--")) {
			opts = 0;
		} else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			fputs(help, stdout);
			return 0;
		} else if (!strcmp(arg, "--allow-new-columns")) {
			o.allow_new = 1;
		} else if (opt_is(arg, "--tol") || opt_is(arg, "--ignore")) {
			int at = i;

			val = opt_value(argc, argv, &i);
			if (!val) {
				fprintf(stderr, "emu compare: argument %d (%s): missing value; "
					"expected %s\n", at + 1, arg, arg[2] == 't' ?
					"--tol REL, e.g. --tol 1e-9" : "--ignore COL,...");
				return 2;
			}
			if (arg[2] == 'i') {
				o.ignore = val;
			} else if (parse_tol(val, &o.tol) < 0) {
				fprintf(stderr, "emu compare: argument %d (--tol %s): not a "
					"relative tolerance; expected a number >= 0, "
					"e.g. 1e-9\n", i + 1, val);
				return 2;
			}
		} else {
			fprintf(stderr, "emu compare: unknown option '%s' (argument %d); "
				"expected --tol REL, --allow-new-columns, --ignore COL,... or "
				"--help\n", arg, i + 1);
			return 2;
		}
	}
	if (npath != 2) {
		fprintf(stderr, "emu compare: missing %s; expected emu compare [OPTIONS] A B, "
			"two run folders or two CSV files (emu compare --help)\n",
			npath ? "run B" : "runs A and B");
		return 2;
	}
	da = is_dir(path[0]);
	db = is_dir(path[1]);
	if (da < 0 || db < 0)
		return 2;
	if (da != db) {
		fprintf(stderr, "emu compare: %s is a folder and %s is not; expected two run "
			"folders or two CSV files\n", path[!da], path[da]);
		return 2;
	}
	if (!da) {
		name = strrchr(path[0], '/');
		return compare_file(name ? name + 1 : path[0], path[0], path[1], &o);
	}
	for (size_t f = 0; f < sizeof(run_files) / sizeof(run_files[0]); f++) {
		char pa[4096], pb[4096];
		int na = snprintf(pa, sizeof(pa), "%s/%s", path[0], run_files[f]);
		int nb = snprintf(pb, sizeof(pb), "%s/%s", path[1], run_files[f]);
		int r;

		if (na < 0 || nb < 0 || (size_t)na >= sizeof(pa) || (size_t)nb >= sizeof(pb)) {
			fprintf(stderr, "emu compare: %s: path too long\n",
				strlen(path[0]) > strlen(path[1]) ? path[0] : path[1]);
			return 2;
		}
		r = compare_file(run_files[f], pa, pb, &o);
		if (r > rc)
			rc = r;
	}
	return rc;
}
