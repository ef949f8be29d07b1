/* emu/study/compare.c — `emu compare A B`: whether two runs computed the same numbers.
 *
 * A run is deterministic (same INI, same seed, same build: same CSVs), so two runs that
 * should agree can be held to it cell by cell: train.csv, eval.csv and net.csv of two run
 * folders (or two CSV files) are compared row by row, their columns matched by name,
 * wall-clock columns left out.  A is the reference, B the run under test: a column only
 * B has is a new one, which --allow-new-columns accepts (a version that adds columns can
 * still show that it kept the old ones); a column only A has was lost, always a
 * difference.  Exit 0 same (within --tol), 1 different, 2 bad arguments or files (all
 * files are read, through csv_load's bounded reader, before a line is printed).
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
	"have are still compared).  Lines may end in CRLF.  Every file is read before\n"
	"anything is printed.  Exit 0 same (or within --tol), 1 different, 2 bad arguments\n"
	"(an --ignore name that is a column of no file among them), or a file missing, not\n"
	"a regular file, over 1 GiB or malformed (FILE:LINE says where): then only why.\n";

static const char *const run_files[] = { "train.csv", "eval.csv", "net.csv" };
#define NRUN_FILES ((int)(sizeof(run_files) / sizeof(run_files[0])))

struct compare_opts {
	double tol;
	int allow_new;
	char *ignore;		/* every --ignore's names, comma-separated (malloc'd), or NULL */
};

/* The files of one comparison, all loaded before anything is printed: a refusal (a
 * file missing or malformed, an --ignore that names no column) prints nothing but its
 * message. */
struct pair {
	const char *name;	/* as printed: "train.csv", or A's file name */
	char pa[4096], pb[4096];
	struct csv a, b;
	int loaded;		/* 0 none, 1 a, 2 both */
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
		fprintf(stderr, "emu compare: %s:1: no header line (or one cut short, or a "
			"column without a name); expected the column names of an emu CSV "
			"file\n", path);
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

/* Compare the loaded files of p, shown as p->name: the first difference, then the
 * summary line.  0 same, 1 different, 2 out of memory. */
static int compare_pair(const struct pair *p, const struct compare_opts *o)
{
	const struct csv *a = &p->a, *b = &p->b;
	const char *name = p->name;
	struct col_diff *d;
	int *bcol, differ, compared = 0, skip = 0, over, within, only_a, only_b;

	d = calloc((size_t)a->ncols, sizeof(*d));
	bcol = calloc((size_t)a->ncols, sizeof(*bcol));
	if (!d || !bcol) {
		fprintf(stderr, "emu compare: %s: out of memory\n", p->pa);
		differ = 2;
		goto out;
	}
	for (int i = 0; i < a->ncols; i++) {
		bcol[i] = csv_col(b, a->names[i]);
		skip += skipped(o, a->names[i]);
		compared += bcol[i] >= 0 && !skipped(o, a->names[i]);
	}
	differ = compare_rows(name, a, b, bcol, d, o);

	printf("%s: %zu rows, %d columns compared", name,
	       a->nrows < b->nrows ? a->nrows : b->nrows, compared);
	for (int i = 0, n = 0; i < a->ncols; i++)
		if (skipped(o, a->names[i]))
			printf("%s%s", n++ ? ", " : " (left out: ", a->names[i]);
	if (skip)
		printf(")");
	over = print_cols(a, bcol, d, o, 1, ", differs: ");
	within = print_cols(a, bcol, d, o, 0, over ? "; within --tol: " : ", within --tol: ");
	if (!over && !within)
		printf(", identical");
	if (a->nrows != b->nrows)
		printf("; %s is shorter (%zu rows against %zu)", a->nrows < b->nrows ? "A" : "B",
		       a->nrows < b->nrows ? a->nrows : b->nrows,
		       a->nrows < b->nrows ? b->nrows : a->nrows);
	only_a = print_only(a, b, o, "; only in A: ");
	only_b = print_only(b, a, o, o->allow_new ? "; new in B (allowed): " :
			    "; only in B: ");
	differ |= a->nrows != b->nrows || only_a || (only_b && !o->allow_new);
	printf("\n");
out:
	free(d);
	free(bcol);
	return differ;
}

/* Loads both files of each pair, saying why for every one that cannot be (so one run
 * shows all that is wrong): 0, or -1 when one could not. */
static int load_pairs(struct pair *p, int n)
{
	int rc = 0;

	for (int i = 0; i < n; i++) {
		if (load(p[i].pa, &p[i].a) < 0) {
			rc = -1;
			continue;
		}
		p[i].loaded = 1;
		if (load(p[i].pb, &p[i].b) < 0) {
			rc = -1;
			continue;
		}
		p[i].loaded = 2;
	}
	return rc;
}

static void free_pairs(struct pair *p, int n)
{
	for (int i = 0; i < n; i++) {
		if (p[i].loaded > 0)
			csv_free(&p[i].a);
		if (p[i].loaded > 1)
			csv_free(&p[i].b);
	}
}

/* Each name --ignore gave must be a column of one of the files: a misspelt name would
 * otherwise leave out nothing and say nothing.  0, or -1 with the message. */
static int check_ignored(const struct pair *p, int n, const struct compare_opts *o)
{
	int rc = 0;

	for (const char *q = o->ignore; q;) {
		const char *end = strchr(q, ',');
		int len = end ? (int)(end - q) : (int)strlen(q), found = 0;

		for (int i = 0; i < n && !found; i++)
			for (int k = 0; k < 2 && !found; k++) {
				const struct csv *c = k ? &p[i].b : &p[i].a;

				for (int j = 0; j < c->ncols && !found; j++)
					found = (int)strlen(c->names[j]) == len &&
						!strncmp(c->names[j], q, (size_t)len);
			}
		if (!found) {
			fprintf(stderr, "emu compare: --ignore %.*s: no column '%.*s' in ", len, q,
				len, q);
			for (int i = 0; i < n; i++)
				fprintf(stderr, "%s%s or %s", i ? ", " : "", p[i].pa, p[i].pb);
			fprintf(stderr, "; expected the names of columns to leave out\n");
			rc = -1;
		}
		q = end ? end + 1 : NULL;
	}
	return rc;
}

/* Compares the n pairs: loads them all, checks --ignore, then prints.  The worst of
 * the pairs' results, 2 when any file is refused (then nothing is printed but why). */
static int compare_pairs(struct pair *p, int n, const struct compare_opts *o)
{
	int rc = 0;

	if (load_pairs(p, n) < 0 || check_ignored(p, n, o) < 0) {
		free_pairs(p, n);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		int r = compare_pair(&p[i], o);

		if (r > rc)
			rc = r;
	}
	free_pairs(p, n);
	return rc;
}

/* --ignore's value appended to o->ignore (every --ignore counts).  0 or -ENOMEM. */
static int add_ignored(struct compare_opts *o, const char *val)
{
	size_t had = o->ignore ? strlen(o->ignore) : 0;
	char *s = realloc(o->ignore, had + 1 + strlen(val) + 1);

	if (!s)
		return -ENOMEM;
	if (had)
		s[had++] = ',';
	strcpy(s + had, val);
	o->ignore = s;
	return 0;
}

/* --tol's value: a finite number >= 0. */
static int parse_tol(const char *s, double *tol)
{
	char *end;

	errno = 0;
	*tol = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*tol) && *tol >= 0 ? 0 : -EINVAL;
}

/* 1 a folder, 0 something else, -1 nothing there (said, naming it).  Whether a file is
 * one emu reads is csv_load's to say. */
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

/* The options and the two paths of argv into o and path: 0, 1 when --help was printed,
 * or 2 with the message. */
static int parse_args(int argc, char **argv, struct compare_opts *o, const char *path[2])
{
	int npath = 0, opts = 1;

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
			return 1;
		} else if (!strcmp(arg, "--allow-new-columns")) {
			o->allow_new = 1;
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
				if (add_ignored(o, val) < 0) {
					fprintf(stderr, "emu compare: out of memory\n");
					return 2;
				}
			} else if (parse_tol(val, &o->tol) < 0) {
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
	return 0;
}

/* The pairs to compare for paths A and B: one pair of files, or a pair of each of
 * run_files for two folders.  How many, or -1 with the message. */
static int make_pairs(const char *path[2], struct pair *p)
{
	int da = is_dir(path[0]), db = is_dir(path[1]);

	if (da < 0 || db < 0)
		return -1;
	if (da != db) {
		fprintf(stderr, "emu compare: %s is a folder and %s is not; expected two run "
			"folders or two CSV files\n", path[!da], path[da]);
		return -1;
	}
	if (!da) {
		const char *name = strrchr(path[0], '/');

		p[0].name = name ? name + 1 : path[0];
		snprintf(p[0].pa, sizeof(p[0].pa), "%s", path[0]);
		snprintf(p[0].pb, sizeof(p[0].pb), "%s", path[1]);
		if (strlen(path[0]) < sizeof(p[0].pa) && strlen(path[1]) < sizeof(p[0].pb))
			return 1;
	}
	for (int f = 0; da && f < NRUN_FILES; f++) {
		int na = snprintf(p[f].pa, sizeof(p[f].pa), "%s/%s", path[0], run_files[f]);
		int nb = snprintf(p[f].pb, sizeof(p[f].pb), "%s/%s", path[1], run_files[f]);

		p[f].name = run_files[f];
		if (na < 0 || nb < 0 || (size_t)na >= sizeof(p[f].pa) ||
		    (size_t)nb >= sizeof(p[f].pb))
			break;
		if (f == NRUN_FILES - 1)
			return NRUN_FILES;
	}
	fprintf(stderr, "emu compare: %s: path too long\n",
		strlen(path[0]) > strlen(path[1]) ? path[0] : path[1]);
	return -1;
}

/* argv[0] is "compare"; messages count arguments as emu's argv does (emu is 0). */
int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { 0 };
	const char *path[2] = { NULL, NULL };
	struct pair *p = calloc(NRUN_FILES, sizeof(*p));
	int rc, n;

	if (!p) {
		fprintf(stderr, "emu compare: out of memory\n");
		return 2;
	}
	rc = parse_args(argc, argv, &o, path);
	if (rc == 0) {
		n = make_pairs(path, p);
		rc = n < 0 ? 2 : compare_pairs(p, n, &o);
	} else if (rc == 1) {
		rc = 0;	/* --help */
	}
	free(o.ignore);
	free(p);
	return rc;
}
