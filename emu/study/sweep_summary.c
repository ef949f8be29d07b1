/* emu/study/sweep_summary.c — a sweep's statistics over seeds: ROOT/summary.csv, one row
 * per configuration, and ROOT/curves/CONFIG.csv, its mean test accuracy per evaluation
 * with the spread over the seeds, listed in ROOT/curves/configs.txt (see sweep.h).  Only
 * runs whose status.json says done count; their numbers are read from their own eval.csv
 * and train.csv. */
#include "emu/study/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/study/csv_read.h"
#include "nn/infile.h"

/* What summary.csv takes from one run. */
enum { M_ACC, M_LOSS, M_TTA, M_BYTES, M_CONSENSUS, NMETRICS };
static const char *const metric_names[NMETRICS] = {
	"test_acc", "train_loss", "tta_s", "bytes_sent", "consensus"
};

/* One finished run of a configuration: its eval.csv (for the curves) and its numbers. */
struct seed_run {
	struct csv eval;
	double m[NMETRICS];	/* m[M_TTA] is NAN when the target was never reached */
};

/* The columns of eval.csv the curves read. */
enum { E_STEP, E_EPOCH, E_VTIME, E_ACC, E_LOSS, E_BYTES, NECOLS };
static const char *const ecol_names[NECOLS] = {
	"step", "epoch", "vtime_s", "test_acc", "test_loss", "bytes_sent"
};

/* A run's file refused (missing, not a regular file, over CSV_MAX_BYTES, malformed, a
 * column missing): the message in err, -EINVAL. */
static int say(char *err, size_t errlen, const char *fmt, const char *path, const char *what)
{
	snprintf(err, errlen, fmt, path, what);
	return -EINVAL;
}

/* A write that failed: the message in err, -EIO. */
static int say_io(char *err, size_t errlen, const char *path, int e)
{
	snprintf(err, errlen, "%s: %s", path, strerror(e));
	return -EIO;
}

static int load(const char *dir, const char *name, struct csv *c, char *err, size_t errlen)
{
	char path[CFG_STR + 16], why[64];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = csv_load(path, c);
	if (rc == -EPROTO) {
		snprintf(why, sizeof(why), "line %d is cut short or has a wrong field count",
			 c->bad_line);
		return say(err, errlen, "%s: %s", path, why);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", c->err);
		return -EINVAL;
	}
	if (!c->nrows) {
		csv_free(c);
		return say(err, errlen, "%s: %s", path, "no rows");
	}
	return 0;
}

/* The value of column name in row of c, which must be a number. */
static int cell(const struct csv *c, size_t row, const char *name, const char *path,
		double *out, char *err, size_t errlen)
{
	int col = csv_col(c, name);

	if (col < 0)
		return say(err, errlen, "%s: no column %s", path, name);
	if (csv_double(c, row, col, out) < 0)
		return say(err, errlen, "%s: column %s is not a number", path, name);
	return 0;
}

/* Virtual time to the target test accuracy: the first evaluation at or above it, linear
 * between it and the evaluation before (scripts/tta-grid's rule); the first evaluation's
 * time when that one reaches it; NAN when none does. */
static int time_to_target(const struct csv *e, double target, const char *path, double *out,
			  char *err, size_t errlen)
{
	double t, a, pt = 0, pa = 0;

	*out = NAN;
	for (size_t i = 0; i < e->nrows; i++) {
		if (cell(e, i, "vtime_s", path, &t, err, errlen) < 0 ||
		    cell(e, i, "test_acc", path, &a, err, errlen) < 0)
			return -EINVAL;
		if (a >= target) {
			*out = i ? pt + (target - pa) / (a - pa) * (t - pt) : t;
			return 0;
		}
		pt = t;
		pa = a;
	}
	return 0;
}

/* Reads run dir's numbers; keeps its eval.csv in r->eval.  0, or -EINVAL with the
 * message. */
static int read_run(const char *dir, double target, struct seed_run *r, char *err, size_t errlen)
{
	char path[CFG_STR + 16];
	struct csv train;
	size_t last;
	int rc;

	if (load(dir, "eval.csv", &r->eval, err, errlen) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/eval.csv", dir);
	last = r->eval.nrows - 1;
	for (int i = 0; i < NECOLS; i++)
		if (csv_col(&r->eval, ecol_names[i]) < 0) {
			csv_free(&r->eval);
			return say(err, errlen, "%s: no column %s", path, ecol_names[i]);
		}
	if (cell(&r->eval, last, "test_acc", path, &r->m[M_ACC], err, errlen) < 0 ||
	    cell(&r->eval, last, "bytes_sent", path, &r->m[M_BYTES], err, errlen) < 0 ||
	    time_to_target(&r->eval, target, path, &r->m[M_TTA], err, errlen) < 0 ||
	    load(dir, "train.csv", &train, err, errlen) < 0) {
		csv_free(&r->eval);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/train.csv", dir);
	last = train.nrows - 1;
	rc = cell(&train, last, "loss", path, &r->m[M_LOSS], err, errlen) < 0 ||
	     cell(&train, last, "consensus", path, &r->m[M_CONSENSUS], err,
		  errlen) < 0 ? -EINVAL : 0;
	csv_free(&train);
	if (rc < 0)
		csv_free(&r->eval);
	return rc;
}

/* mean, std (the sample's, over m - 1; NAN for fewer than two), min and max of x[0..m) */
static void summarise(const double *x, int m, double out[4])
{
	double sum = 0, ss = 0;

	/* a seed that is not a number makes every statistic nan, as in summary.csv (fmin
	 * and fmax would skip it and leave a finite range beside a nan mean) */
	for (int i = 0; i < m; i++) {
		if (isnan(x[i])) {
			out[0] = out[1] = out[2] = out[3] = NAN;
			return;
		}
	}

	out[2] = INFINITY;
	out[3] = -INFINITY;
	for (int i = 0; i < m; i++) {
		sum += x[i];
		out[2] = fmin(out[2], x[i]);
		out[3] = fmax(out[3], x[i]);
	}
	out[0] = sum / m;
	for (int i = 0; i < m; i++)
		ss += (x[i] - out[0]) * (x[i] - out[0]);
	out[1] = m > 1 ? sqrt(ss / (m - 1)) : NAN;
}

/* ",v": empty where there is nothing to say */
static void field(FILE *f, double v)
{
	if (isnan(v))
		fputc(',', f);
	else
		fprintf(f, ",%.10g", v);
}

/* ",mean,std,min,max" of x[0..m), all empty for none, all nan when one is not a
 * number. */
static void stats(FILE *f, const double *x, int m)
{
	double st[4] = { NAN, NAN, NAN, NAN };

	for (int i = 0; i < m; i++) {
		if (!isfinite(x[i])) {
			fputs(",nan,nan,nan,nan", f);
			return;
		}
	}
	if (m > 0)
		summarise(x, m, st);
	for (int i = 0; i < 4; i++)
		field(f, st[i]);
}

/* The files a summary writes, each first as a temporary beside it (.NAME.tmp): only
 * when every one is written are they renamed over the old ones, the curves first and
 * summary.csv last.  A summary that fails (a run's file refused, a write that failed)
 * leaves the old files as they were and no temporary. */
struct staged {
	char **path;		/* [n]: the files to replace, malloc'd */
	size_t n, cap;
};

/* DIR/.NAME.tmp for DIR/NAME */
static void tmp_of(const char *path, char *tmp, size_t n)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	snprintf(tmp, n, "%.*s.%s.tmp", (int)(base - path), path, base);
}

/* Writes path's temporary with write_fn (0, or < 0 with its message in err) and adds
 * path to st.  0, or -errno with the message. */
static int stage(struct staged *st, const char *path, int (*write_fn)(FILE *f, void *arg),
		 void *arg, char *err, size_t errlen)
{
	char tmp[CFG_STR * 2 + 64];
	FILE *f;
	int fd, rc = 0;

	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		char **p = realloc(st->path, cap * sizeof(*p));

		if (!p)
			return say_io(err, errlen, path, ENOMEM);
		st->path = p;
		st->cap = cap;
	}
	tmp_of(path, tmp, sizeof(tmp));
	/* O_NOFOLLOW: a link planted at the temporary's name is not written through */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rc = say_io(err, errlen, tmp, errno);
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return rc;
	}
	if (!(st->path[st->n] = strdup(path))) {
		fclose(f);
		unlink(tmp);
		return say_io(err, errlen, path, ENOMEM);
	}
	st->n++;		/* from here on, the temporary is unstage()'s to remove */
	rc = write_fn(f, arg);
	if (rc < 0) {
		fclose(f);
		return rc;
	}
	errno = 0;
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		rc = -(errno ? errno : EIO);
	if (fclose(f) && !rc)
		rc = -(errno ? errno : EIO);
	return rc ? say_io(err, errlen, tmp, -rc) : 0;
}

/* Renames every temporary of st over its file, in the order staged.  0, or -EIO with
 * the message (the files renamed before it are new, the rest old). */
static int commit(struct staged *st, char *err, size_t errlen)
{
	char tmp[CFG_STR * 2 + 64];

	for (size_t i = 0; i < st->n; i++) {
		tmp_of(st->path[i], tmp, sizeof(tmp));
		if (rename(tmp, st->path[i]) < 0)
			return say_io(err, errlen, st->path[i], errno);
	}
	return 0;
}

/* Removes the temporaries still there and frees st. */
static void unstage(struct staged *st)
{
	char tmp[CFG_STR * 2 + 64];

	for (size_t i = 0; i < st->n; i++) {
		tmp_of(st->path[i], tmp, sizeof(tmp));
		unlink(tmp);	/* ENOENT for those commit renamed */
		free(st->path[i]);
	}
	free(st->path);
	memset(st, 0, sizeof(*st));
}

/* A configuration's finished seeds, as the writers get them. */
struct config {
	const struct sweep *s;
	long k;
	char name[CFG_STR];
	struct seed_run *run;	/* [nseeds]: the finished ones, n of them */
	int n;
	double *x;		/* [nseeds]: scratch */
};

/* One row of summary.csv. */
static void summary_row(FILE *f, struct config *c)
{
	const struct sweep *s = c->s;
	long r = sweep_run_of(s, c->k, 0);
	int never = 0, diverged = 0, m;

	for (int a = 0; a < s->naxes; a++)
		if (a != s->seed_axis)
			fprintf(f, "%s,", s->axis[a].vals[sweep_value(s, r, a)]);
	for (int j = 0; j < c->n; j++)
		diverged += !isfinite(c->run[j].m[M_LOSS]);
	fprintf(f, "%d,%d,%g", c->n, diverged, s->target);
	for (int i = 0; i < NMETRICS; i++) {
		m = 0;
		for (int j = 0; j < c->n; j++) {
			double v = c->run[j].m[i];

			/* a time to target that does not exist is counted apart (never); any
			 * other metric that is not a number (a diverged run's loss or consensus)
			 * makes its statistics nan: a mean without that seed would hide it */
			if (i == M_TTA && isnan(v))
				never++;
			else
				c->x[m++] = v;
		}
		if (i == M_TTA)
			fprintf(f, ",%d", never);
		stats(f, c->x, m);
	}
	fputc('\n', f);
}

/* The spread of column k of eval.csv row i over the seeds, in st[4]. */
static void spread(struct config *c, size_t i, int k, double st[4])
{
	for (int j = 0; j < c->n; j++) {
		const struct csv *e = &c->run[j].eval;

		if (csv_double(e, i, csv_col(e, ecol_names[k]), &c->x[j]) < 0)
			c->x[j] = NAN;	/* a test loss may be nan */
	}
	summarise(c->x, c->n, st);
}

/* curves/CONFIG.csv: per evaluation, the seeds' mean virtual time and bytes, and the
 * spread of test accuracy and test loss over them. */
static int write_curve(FILE *f, void *arg)
{
	struct config *c = arg;
	size_t rows = (size_t)-1;

	fputs("step,epoch,n,vtime_s,bytes_sent,test_acc_mean,test_acc_std,test_acc_min,"
	      "test_acc_max,test_loss_mean,test_loss_min,test_loss_max\n", f);
	for (int j = 0; j < c->n; j++)
		rows = c->run[j].eval.nrows < rows ? c->run[j].eval.nrows : rows;
	for (size_t i = 0; c->n && i < rows; i++) {
		double step[4], epoch[4], vt[4], bytes[4], acc[4], loss[4];

		spread(c, i, E_STEP, step);
		if (step[2] != step[3]) {	/* seeds of a configuration evaluate alike */
			fprintf(stderr, "emu sweep: %s: the seeds' evaluation %zu is at steps "
				"%g to %g; its curve ends before it\n", c->name, i + 1, step[2],
				step[3]);
			break;
		}
		spread(c, i, E_EPOCH, epoch);
		spread(c, i, E_VTIME, vt);
		spread(c, i, E_BYTES, bytes);
		spread(c, i, E_ACC, acc);
		spread(c, i, E_LOSS, loss);
		fprintf(f, "%.10g", step[0]);
		field(f, epoch[0]);
		fprintf(f, ",%d", c->n);
		field(f, vt[0]);
		field(f, bytes[0]);
		for (int q = 0; q < 4; q++)
			field(f, acc[q]);
		field(f, loss[0]);
		field(f, loss[2]);
		field(f, loss[3]);
		fputc('\n', f);
	}
	return 0;
}

/* Reads configuration k's finished runs into c. */
static int read_config(struct config *c, char *err, size_t errlen)
{
	c->n = 0;
	sweep_config_name(c->s, c->k, c->name, sizeof(c->name));
	for (int j = 0; j < sweep_nseeds(c->s); j++) {
		char dir[CFG_STR];

		sweep_run_dir(c->s, sweep_run_of(c->s, c->k, j), dir, sizeof(dir));
		if (!sweep_run_done(dir))
			continue;
		if (read_run(dir, c->s->target, &c->run[c->n], err, errlen) < 0)
			return -EINVAL;
		c->n++;
	}
	return 0;
}

static void free_config(struct config *c)
{
	for (int j = 0; j < c->n; j++)
		csv_free(&c->run[j].eval);
	c->n = 0;
}

struct summary {
	const struct sweep *s;
	struct config c;
	struct staged *st;
	char *err;
	size_t errlen;
};

/* summary.csv, and each configuration's curve on the way */
static int write_summary(FILE *f, void *arg)
{
	struct summary *u = arg;
	const struct sweep *s = u->s;
	char path[CFG_STR + 16 + CFG_STR];

	for (int a = 0; a < s->naxes; a++)
		if (a != s->seed_axis)
			fprintf(f, "%s,", s->axis[a].key);
	fputs("n,diverged,target", f);
	for (int i = 0; i < NMETRICS; i++)
		fprintf(f, "%s,%s_mean,%s_std,%s_min,%s_max", i == M_TTA ? ",never" : "",
			metric_names[i], metric_names[i], metric_names[i], metric_names[i]);
	fputc('\n', f);
	for (long k = 0; k < s->nconfigs; k++) {
		int rc;

		u->c.k = k;
		rc = read_config(&u->c, u->err, u->errlen);
		if (rc < 0) {
			free_config(&u->c);
			return rc;
		}
		summary_row(f, &u->c);
		snprintf(path, sizeof(path), "%s/curves/%s.csv", s->root, u->c.name);
		rc = stage(u->st, path, write_curve, &u->c, u->err, u->errlen);
		free_config(&u->c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* curves/configs.txt: the configurations' names in the order of summary.csv, one a line
 * (a name has commas: summary.csv cannot hold it) */
static int write_configs(FILE *f, void *arg)
{
	const struct sweep *s = arg;
	char name[CFG_STR];

	for (long k = 0; k < s->nconfigs; k++) {
		sweep_config_name(s, k, name, sizeof(name));
		fprintf(f, "%s\n", name);
	}
	return 0;
}

/* ROOT/NAME, if it is there, is of the type want (S_IFREG, S_IFDIR), not a link:
 * 0, or -EINVAL with the message. */
static int own_entry(const char *root, const char *name, unsigned want, char *err, size_t errlen)
{
	char path[CFG_STR + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	if (lstat(path, &st) < 0 || (st.st_mode & S_IFMT) == want)
		return 0;
	snprintf(err, errlen, "emu sweep: %s: %s, where the sweep writes its %s; expected %s (emu "
		 "never writes through a link): remove it, or sweep into another run.output",
		 path, infile_kind(st.st_mode), want == S_IFDIR ? "curves" : "summary",
		 want == S_IFDIR ? "a folder" : "a regular file");
	return -EINVAL;
}

int sweep_summary_check(const struct sweep *s, char *err, size_t errlen)
{
	int rc = own_entry(s->root, "summary.csv", S_IFREG, err, errlen);

	return rc ? rc : own_entry(s->root, "curves", S_IFDIR, err, errlen);
}

/* As sweep.h says; the value is -EINVAL when a finished run's file is refused (bad
 * input: missing, not a regular file, over CSV_MAX_BYTES, malformed, a column missing),
 * -EIO when a write failed. */
int sweep_summary(const struct sweep *s, char *err, size_t errlen)
{
	struct staged st = { 0 };
	struct summary u = { .s = s, .c = { .s = s }, .st = &st, .err = err, .errlen = errlen };
	char curves[CFG_STR + 32], path[CFG_STR + 64];
	int rc;

	snprintf(curves, sizeof(curves), "%s/curves", s->root);
	if ((rc = sweep_summary_check(s, err, errlen)) < 0)	/* again: the sweep took its time */
		return rc;
	u.c.run = calloc((size_t)sweep_nseeds(s), sizeof(*u.c.run));
	u.c.x = calloc((size_t)sweep_nseeds(s), sizeof(*u.c.x));
	if (!u.c.run || !u.c.x) {
		rc = say_io(err, errlen, s->root, ENOMEM);
		goto out;
	}
	if (mkdir(curves, 0777) < 0 && errno != EEXIST) {
		rc = say_io(err, errlen, curves, errno);
		goto out;
	}
	/* summary.csv is staged first, as its rows are read, and so renamed last: once it
	 * is there, the curves it lists are too.  Its temporary is written while the curves'
	 * are made: the order of st is the order of the renames, not of the writes */
	snprintf(path, sizeof(path), "%s/summary.csv", s->root);
	rc = stage(&st, path, write_summary, &u, err, errlen);
	snprintf(path, sizeof(path), "%s/configs.txt", curves);
	if (!rc)
		rc = stage(&st, path, write_configs, (void *)s, err, errlen);
	if (!rc && st.n > 1) {
		/* summary.csv last */
		char *first = st.path[0];

		memmove(st.path, st.path + 1, (st.n - 1) * sizeof(*st.path));
		st.path[st.n - 1] = first;
	}
	if (!rc)
		rc = commit(&st, err, errlen);
out:
	unstage(&st);
	free(u.c.run);
	free(u.c.x);
	return rc;
}
