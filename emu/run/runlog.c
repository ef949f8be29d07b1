/* emu/run/runlog.c — see runlog.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "emu/run/ckpt.h"
#include "emu/run/crash.h"
#include "emu/run/record.h"
#include "emu/run/rundir.h"
#include "emu/run/runlog.h"

/* Records of one worker not yet joined into a row, oldest first.  The supervisor may
 * drain one worker's log ring far ahead of another's, so a row completes when every
 * worker's queue holds its record: every worker logs the same steps, in order. */
struct queue {
	void *rec;		/* cap records of `size` bytes */
	size_t size, head, len, cap;
};

static int queue_push(struct queue *q, const void *rec)
{
	if (q->head + q->len == q->cap) {
		if (q->head > 0) {	/* slide down before growing */
			memmove(q->rec, (char *)q->rec + q->head * q->size, q->len * q->size);
			q->head = 0;
		}
		if (q->len == q->cap) {
			size_t cap = q->cap ? 2 * q->cap : 64;
			void *p = realloc(q->rec, cap * q->size);
			if (!p)
				return -ENOMEM;
			q->rec = p;
			q->cap = cap;
		}
	}
	memcpy((char *)q->rec + (q->head + q->len++) * q->size, rec, q->size);
	return 0;
}

static const void *queue_front(const struct queue *q)
{
	return (const char *)q->rec + q->head * q->size;
}

static void queue_pop(struct queue *q)
{
	q->head++;
	q->len--;
}

/* A CSV that grows a line at a time.  whole is the size up to its last whole line: a
 * failed write is cut back to it, so the file never ends in half a line. */
struct csv {
	const char *name;
	int fd;
	off_t whole;
};

struct runlog {
	const struct cfg *c;
	int n;
	struct rundir dir;
	/* workers: fd -1 unless run.worker_log; ports: unless topology.shape = switch */
	struct csv train, eval, net, workers, ports;
	/* train, eval, link and port records per worker */
	struct queue tq[CFG_MAX_WORKERS], eq[CFG_MAX_WORKERS], lq[CFG_MAX_WORKERS];
	struct queue pq[CFG_MAX_WORKERS];
	struct rec_port port[CFG_MAX_WORKERS][REC_PORTS];	/* the latest, as links_out */
	/* n*n each, per directed link src -> dst (at src * n + dst) at the evaluation being
	 * written: its sender's record (REC_LINK) and its receiver's (REC_LINK_IN), one row
	 * of net.csv */
	struct rec_link *links_out, *links_in;
	double t0;
	int tty;
	bool line_open;		/* a terminal's progress line waits for its newline */
	double every, last_line;	/* run.progress_every (s); when a line was printed */
	int64_t step, steps_total, spe;
	double loss, epoch;
	bool has_loss, has_acc;	/* no made-up number before the first row, evaluation */
	double acc;
	int64_t acc_step;
	char error[512];		/* the first write that failed; the run stops there */
	/* checkpoints: each worker's REC_CKPT records until every worker's is in */
	bool ckpt_on;
	uint64_t ckpt_hash, data_hash, plugin_hash;
	int64_t ckpt_step;	/* of the last manifest written */
	struct queue cq[CFG_MAX_WORKERS];
	/* crash events: who is down when, and the counters a worker left when it went
	 * down, per crash of the plan (its REC_DOWN; step: the step it missed first, -1
	 * until it is in): a worker may be down again before the rows of its last crash
	 * are all joined */
	const struct crash_plan *crashes;
	struct rec_down down[CFG_MAX_EVENTS * CFG_MAX_WORKERS];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Keeps the first failure of o in l->error (the run stops there); returns -1. */
static int csv_failed(struct runlog *l, struct csv *o, int rc)
{
	snprintf(l->error, sizeof(l->error), "%s/%s: %s%s", l->dir.path, o->name, strerror(-rc),
		 rc == -ENOENT ? " (" RUNDIR_REMOVED ")" : "");
	return -1;
}

/* Appends len bytes of whole lines to o in one write; on failure cuts o back to where it
 * ended before (its last whole line: a block of lines goes in whole or not at all), keeps
 * the reason in l->error and returns -1.  A file removed under the run (its folder
 * deleted) is a failure too: the lines would go nowhere. */
static int csv_write(struct runlog *l, struct csv *o, const char *buf, size_t len)
{
	struct stat st;
	int rc = write_all(o->fd, buf, len);

	if (rc == 0 && fstat(o->fd, &st) == 0 && st.st_nlink == 0)
		rc = -ENOENT;
	if (rc < 0) {
		if (ftruncate(o->fd, o->whole) < 0) { /* the error below says enough */ }
		return csv_failed(l, o, rc);
	}
	o->whole += (off_t)len;
	return 0;
}

/* Appends one line to o (csv_write). */
static int csv_line(struct runlog *l, struct csv *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int csv_line(struct runlog *l, struct csv *o, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(line))	/* not with the formats below */
		return csv_failed(l, o, -EOVERFLOW);
	return csv_write(l, o, line, (size_t)len);
}

/* A block of lines being printed (a memory stream) and then appended whole to a CSV. */
struct block {
	FILE *f;
	char *buf;
	size_t len;
};

static int block_open(struct runlog *l, struct block *b)
{
	b->buf = NULL;
	b->f = open_memstream(&b->buf, &b->len);
	if (!b->f)
		snprintf(l->error, sizeof(l->error), "out of memory writing the logs");
	return b->f ? 0 : -1;
}

/* Appends the block to o (csv_write) and frees it: 0 or -1 with l->error. */
static int block_write(struct runlog *l, struct block *b, struct csv *o)
{
	int rc = -1;

	if (fclose(b->f))
		snprintf(l->error, sizeof(l->error), "out of memory writing the logs");
	else
		rc = csv_write(l, o, b->buf, b->len);
	free(b->buf);
	return rc;
}

static int csv_open(struct runlog *l, struct csv *o, const char *name, const char *header,
		    char *err, size_t errlen)
{
	o->name = name;
	o->fd = rundir_create(&l->dir, name, err, errlen);
	if (o->fd < 0)
		return -1;
	if (csv_line(l, o, "%s\n", header) < 0) {
		snprintf(err, errlen, "%s", l->error);
		return -1;
	}
	return 0;
}

/* The whole file, flushed to the disk, closed: 0 or -1 with l->error. */
static int csv_close(struct runlog *l, struct csv *o)
{
	int rc = 0;

	if (o->fd < 0)
		return 0;
	if (fsync(o->fd) < 0)
		rc = -errno;
	if (close(o->fd) < 0 && !rc)
		rc = -errno;
	o->fd = -1;
	if (rc < 0 && !l->error[0])
		snprintf(l->error, sizeof(l->error), "%s/%s: %s", l->dir.path, o->name, strerror(-rc));
	return rc < 0 ? -1 : 0;
}

/* Replaces NAME in the run folder with what print writes: 0, or -1 with err. */
static int replace_printed(struct runlog *l, const char *name,
			   void (*print)(const struct runlog *, FILE *), char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f) {
		snprintf(err, errlen, "%s/%s: out of memory", l->dir.path, name);
		return -1;
	}
	print(l, f);
	if (fclose(f)) {
		snprintf(err, errlen, "%s/%s: out of memory", l->dir.path, name);
		free(buf);
		return -1;
	}
	rc = rundir_replace(&l->dir, name, buf, len, err, errlen);
	free(buf);
	return rc;
}

/* config.ini: the resolved configuration, as `emu check` prints it. */
static void print_config(const struct runlog *l, FILE *f)
{
	cfg_print(l->c, f);
}

/* A CSV of a resumed run, opened and checked: a regular file at least off bytes long
 * (its size at the checkpoint).  Nothing is written.  0, or -1 with err and *status 2
 * (missing, not a file, shorter: not the logs the checkpoint knew) or 1. */
static int csv_reopen(struct runlog *l, struct csv *o, const char *name, int64_t off,
		      int *status, char *err, size_t errlen)
{
	struct stat st;

	o->name = name;
	/* O_NONBLOCK: a FIFO planted there fails at once instead of waiting for a reader */
	o->fd = openat(l->dir.dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (o->fd < 0 || fstat(o->fd, &st) < 0) {
		int e = errno;

		snprintf(err, errlen, "%s/%s: %s%s", l->dir.path, name, strerror(e),
			 e == ENOENT ? " (the checkpoint's logs are gone)" : "");
		*status = e == ENOENT || e == ELOOP || e == ENXIO || e == EISDIR ? 2 : 1;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s/%s: not a regular file", l->dir.path, name);
		*status = 2;
		return -1;
	}
	if (off < 0 || st.st_size < off) {
		snprintf(err, errlen, "%s/%s: %lld bytes, shorter than at the checkpoint (%lld): "
			 "not the logs the checkpoint was taken with", l->dir.path, name,
			 (long long)st.st_size, (long long)off);
		*status = 2;
		return -1;
	}
	if (fcntl(o->fd, F_SETFL, 0) < 0) {
		snprintf(err, errlen, "%s/%s: %s", l->dir.path, name, strerror(errno));
		*status = 1;
		return -1;
	}
	o->whole = off;
	return 0;
}

/* A checked CSV (csv_reopen) cut back to its size at the checkpoint: 0, or -1 with err. */
static int csv_cut(struct runlog *l, struct csv *o, char *err, size_t errlen)
{
	if (o->fd < 0)
		return 0;
	if (ftruncate(o->fd, o->whole) < 0 || lseek(o->fd, o->whole, SEEK_SET) < 0) {
		snprintf(err, errlen, "%s/%s: %s", l->dir.path, o->name, strerror(errno));
		return -1;
	}
	return 0;
}

/* A resumed run's logs, checked before anything is written: each CSV there and at least
 * as long as at the checkpoint.  0, or -1 with err and *status. */
static int logs_check(struct runlog *l, const struct ckpt_manifest *m, int *status, char *err,
		      size_t errlen)
{
	if (csv_reopen(l, &l->train, "train.csv", m->off[0], status, err, errlen) < 0 ||
	    csv_reopen(l, &l->eval, "eval.csv", m->off[1], status, err, errlen) < 0 ||
	    csv_reopen(l, &l->net, "net.csv", m->off[2], status, err, errlen) < 0 ||
	    (l->c->run.worker_log &&
	     csv_reopen(l, &l->workers, "workers.csv", m->off[3], status, err, errlen) < 0) ||
	    (l->c->topology.shape != SHAPE_NONE &&
	     csv_reopen(l, &l->ports, "ports.csv", m->off[4], status, err, errlen) < 0))
		return -1;
	return 0;
}

/* A resumed run's logs: each CSV cut back to the checkpoint, the progress line's
 * numbers as they were.  0, or -1 with err. */
static int logs_resume(struct runlog *l, const struct ckpt_manifest *m, char *err,
		       size_t errlen)
{
	if (csv_cut(l, &l->train, err, errlen) < 0 || csv_cut(l, &l->eval, err, errlen) < 0 ||
	    csv_cut(l, &l->net, err, errlen) < 0 || csv_cut(l, &l->workers, err, errlen) < 0 ||
	    csv_cut(l, &l->ports, err, errlen) < 0)
		return -1;
	l->step = m->log_step;
	l->loss = m->loss;
	l->epoch = m->epoch;
	l->has_loss = m->has_loss;
	l->has_acc = m->has_acc;
	l->acc = m->acc;
	l->acc_step = m->acc_step;
	l->t0 -= m->wall_s;	/* wall_s goes on from where it was */
	return 0;
}

struct runlog *runlog_open(const struct cfg *c, const char *dir, int argc, char *const argv[],
			   const struct ckpt_manifest *resume, int *status, char *err,
			   size_t errlen)
{
	struct runlog *l = calloc(1, sizeof(*l));

	*status = 1;
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->c = c;
	l->n = c->run.workers;
	l->t0 = now_s();
	l->last_line = l->t0;
	l->tty = isatty(STDERR_FILENO);
	l->every = (double)c->run.progress_every * 1e-9;
	l->train.fd = l->eval.fd = l->net.fd = l->workers.fd = l->ports.fd = -1;
	for (int i = 0; i < l->n; i++) {
		l->tq[i].size = sizeof(struct rec_train);
		l->eq[i].size = sizeof(struct rec_eval);
		l->lq[i].size = sizeof(struct rec_link);
		l->pq[i].size = sizeof(struct rec_port);
		l->cq[i].size = sizeof(struct rec_ckpt);
	}
	l->links_out = calloc((size_t)l->n * (size_t)l->n, sizeof(*l->links_out));
	l->links_in = calloc((size_t)l->n * (size_t)l->n, sizeof(*l->links_in));
	if (!l->links_out || !l->links_in) {
		snprintf(err, errlen, "out of memory");
		free(l->links_out);
		free(l->links_in);
		free(l);
		return NULL;
	}
	if (resume) {
		/* every refusal before the first write: the lock, then the logs */
		*status = rundir_lock(&l->dir, dir, 0, err, errlen);
		if (*status || logs_check(l, resume, status, err, errlen) < 0)
			goto fail;
		*status = rundir_start(&l->dir, c, argc, argv, 1, err, errlen);
		if (*status)
			goto fail;
		*status = 1;
		if (replace_printed(l, "config.ini", print_config, err, errlen) < 0 ||
		    logs_resume(l, resume, err, errlen) < 0)
			goto fail;
		*status = 0;
		return l;
	}
	*status = rundir_open(&l->dir, c, dir, argc, argv, 0, err, errlen);
	if (*status)
		goto fail;
	*status = 1;
	if (replace_printed(l, "config.ini", print_config, err, errlen) < 0 ||
	    csv_open(l, &l->train, "train.csv",
		     "step,epoch,loss,lr,vtime_s,wall_s,consensus,bytes_sent,units_dropped,"
		     "bytes_delivered,units_late,vtime_min_s", err, errlen) < 0 ||
	    csv_open(l, &l->eval, "eval.csv",
		     "epoch,step,vtime_s,wall_s,test_loss,test_acc,bytes_sent,bytes_delivered", err,
		     errlen) < 0 ||
	    csv_open(l, &l->net, "net.csv",
		     "step,vtime_s,src,dst,messages,units,units_dropped,drop_rate,retransmits,"
		     "bytes_sent,mean_delay_ms,bytes_delivered,units_late,units_duplicated,"
		     "units_corrupted,units_overflow,units_marked", err, errlen) < 0 ||
	    (c->run.worker_log &&
	     csv_open(l, &l->workers, "workers.csv",
		      "step,worker,vtime_s,loss,compute_s,bytes_sent,bytes_delivered,"
		      "units_dropped,units_late", err, errlen) < 0) ||
	    (c->topology.shape != SHAPE_NONE &&
	     csv_open(l, &l->ports, "ports.csv",
		      "step,vtime_s,port,units,bytes,drops,ecn_marks,resends,peak_units,peak_bytes,"
		      "mean_units,mean_bytes", err, errlen) < 0))
		goto fail;
	*status = 0;
	return l;
fail:
	if (l->dir.statusfd >= 0)	/* the folder is ours: say why the run never started */
		rundir_status(&l->dir, "failed", *status, 0, 0, err, l->error, sizeof(l->error));
	csv_close(l, &l->train);
	csv_close(l, &l->eval);
	csv_close(l, &l->net);
	csv_close(l, &l->workers);
	csv_close(l, &l->ports);
	rundir_close(&l->dir);
	free(l->links_out);
	free(l->links_in);
	free(l);
	return NULL;
}

void runlog_length(struct runlog *l, int64_t steps_total, int64_t steps_per_epoch)
{
	l->steps_total = steps_total;
	l->spe = steps_per_epoch > 0 ? steps_per_epoch : 1;
}

/* The progress line: where the run stands, with no number it does not have yet (no loss
 * before the first train row, no accuracy before the first evaluation).  On a terminal
 * it is one line rewritten in place (a newline after each evaluation keeps that line);
 * otherwise a line at each evaluation (eval) and, with run.progress_every, one whenever
 * that much wall time passed since the last: the heartbeat of a run under nohup or in a
 * batch job.  An accuracy older than the line's step says which step it is of. */
static void progress(struct runlog *l, bool eval)
{
	double now = now_s(), wall = now - l->t0;
	double epochs = (double)l->steps_total / (double)(l->spe ? l->spe : 1);
	char loss[32] = "-", acc[48] = "-", eta[32] = "-";

	if (!l->tty && !eval && (l->every <= 0 || now - l->last_line < l->every))
		return;
	l->last_line = now;
	if (l->has_loss)
		snprintf(loss, sizeof(loss), "%.4f", l->loss);
	if (l->has_acc && l->acc_step == l->step)
		snprintf(acc, sizeof(acc), "%.2f%%", 100 * l->acc);
	else if (l->has_acc)
		snprintf(acc, sizeof(acc), "%.2f%% (step %lld)", 100 * l->acc,
			 (long long)l->acc_step);
	if (l->step > 0) {
		int s = (int)(wall / (double)l->step * (double)(l->steps_total - l->step));
		snprintf(eta, sizeof(eta), "%d:%02d", s / 60, s % 60);
	}
	/* (whole epochs as they are, a cut run's part of one to 3 digits) */
	fprintf(stderr, "%sepoch %.2f/%.*g  step %lld/%lld  loss %s  test acc %s  wall %.1fs  "
		"ETA %s%s", l->tty ? "\r\033[K" : "", l->epoch, epochs == floor(epochs) ? 10 : 3,
		epochs, (long long)l->step, (long long)l->steps_total, loss, acc, wall, eta,
		l->tty && !eval ? "" : "\n");
	l->line_open = l->tty && !eval;
}

void runlog_tick(struct runlog *l)
{
	if (l && !l->tty && !l->error[0])
		progress(l, false);
}

/* workers.csv: the row of every worker that ran this step (up), in worker-id order, as
 * one block. */
static int worker_rows(struct runlog *l, const struct rec_train w[], const struct wset *up)
{
	struct block b;

	if (l->workers.fd < 0)
		return 0;
	if (block_open(l, &b) < 0)
		return -1;
	for (int i = 0; i < l->n; i++)
		if (wset_has(up, i))
			fprintf(b.f, "%lld,%d,%.9f,%.9g,%.9f,%llu,%llu,%llu,%llu\n",
			(long long)w[i].step, i, w[i].vclock_s, w[i].loss, w[i].compute_s,
			(unsigned long long)w[i].bytes_sent,
			(unsigned long long)w[i].bytes_delivered,
			(unsigned long long)w[i].units_dropped,
			(unsigned long long)w[i].units_late);
	return block_write(l, &b, &l->workers);
}

/* The REC_DOWN of the crash that has worker i down for step s (one of the plan's), or
 * NULL while it has not come in. */
static const struct rec_down *down_rec(const struct runlog *l, int i, int64_t s)
{
	const struct crash_span *sp = crash_span_at(l->crashes, i, s);
	const struct rec_down *d = &l->down[sp - l->crashes->s];

	return d->step == sp->from ? d : NULL;
}

/* The totals of the row after `done` steps: the up workers' counters from w[], a down
 * worker's as it left them (it sent and received nothing since). */
static void row_totals(const struct runlog *l, const struct rec_train w[], const struct wset *up,
		       int64_t done, uint64_t *bytes, uint64_t *dropped, uint64_t *delivered,
		       uint64_t *late)
{
	*bytes = *dropped = *delivered = *late = 0;
	for (int i = 0; i < l->n; i++) {	/* worker-id order: deterministic sums */
		bool on = wset_has(up, i);
		const struct rec_down *d = on ? NULL : down_rec(l, i, done - 1);

		*bytes += on ? w[i].bytes_sent : d->bytes_sent;
		*dropped += on ? w[i].units_dropped : d->units_dropped;
		*delivered += on ? w[i].bytes_delivered : d->bytes_delivered;
		*late += on ? w[i].units_late : d->units_late;
	}
}

static int train_row(struct runlog *l, const struct rec_train w[], const struct wset *up)
{
	double loss = 0, cons = 0, vt = 0, vt_min = HUGE_VAL;
	uint64_t bytes, dropped, delivered, late;
	int nup = wset_count(up);

	const struct rec_train *f = &w[wset_first(up)];	/* the first up: step, lr */

	row_totals(l, w, up, f->step, &bytes, &dropped, &delivered, &late);
	for (int i = 0; i < l->n; i++) {	/* worker-id order: deterministic sums */
		if (!wset_has(up, i))
			continue;
		loss += w[i].loss;
		cons += w[i].consensus;
		if (w[i].vclock_s > vt)
			vt = w[i].vclock_s;
		if (w[i].vclock_s < vt_min)
			vt_min = w[i].vclock_s;
	}
	loss /= nup;
	cons /= nup;
	if (csv_line(l, &l->train, "%lld,%.6f,%.9g,%.9g,%.9f,%.3f,%.9g,%llu,%llu,%llu,%llu,%.9f\n",
		     (long long)f->step, f->epoch, loss, f->lr, vt, now_s() - l->t0, cons,
		     (unsigned long long)bytes, (unsigned long long)dropped,
		     (unsigned long long)delivered, (unsigned long long)late, vt_min) < 0 ||
	    worker_rows(l, w, up) < 0)
		return -1;
	l->step = f->step;
	l->steps_total = f->steps_total;
	l->loss = loss;
	l->has_loss = true;
	l->epoch = f->epoch;
	progress(l, false);
	return rundir_status(&l->dir, "running", -1, l->step, l->steps_total, NULL, l->error,
			     sizeof(l->error));
}

/* The link records of every worker up to this evaluation's step, into links_out and
 * links_in (a worker sends them before its evaluation record; a fast worker's records of
 * a later evaluation stay queued).  A worker that is down sent none: its side of its
 * links stays as its last records left it (those it sent as it went down). */
static void take_links(struct runlog *l, int64_t step)
{
	for (int i = 0; i < l->n; i++)
		while (l->lq[i].len) {
			const struct rec_link *r = queue_front(&l->lq[i]);
			struct rec_link *side = r->type == REC_LINK ? l->links_out : l->links_in;

			if (r->step > step)
				break;
			side[r->src * l->n + r->dst] = *r;
			queue_pop(&l->lq[i]);
		}
}

/* net.csv's block of one evaluation: every directed link, its sender's and its
 * receiver's records side by side, counters cumulative since the start (the columns
 * after mean_delay_ms came later: appended, so that readers by column number keep
 * theirs), appended whole. */
static int net_block(struct runlog *l, int64_t step, double vt)
{
	struct block b;

	take_links(l, step);
	if (block_open(l, &b) < 0)
		return -1;
	for (int s = 0; s < l->n; s++)
		for (int d = 0; d < l->n; d++) {
			const struct rec_link *k = &l->links_out[s * l->n + d];
			const struct rec_link *r = &l->links_in[s * l->n + d];
			if (s == d || (!k->type && !r->type))
				continue;
			uint64_t arrived = k->units - k->units_dropped;
			fprintf(b.f, "%lld,%.9f,%d,%d,%llu,%llu,%llu,%.6f,%llu,%llu,%.6f,%llu,%llu,"
				"%llu,%llu,%llu,%llu\n", (long long)step, vt,
				s, d, (unsigned long long)k->messages, (unsigned long long)k->units,
				(unsigned long long)k->units_dropped,
				k->units ? (double)k->units_dropped / (double)k->units : 0.0,
				(unsigned long long)k->retransmits, (unsigned long long)k->bytes_sent,
				arrived ? k->delay_sum_ns / (double)arrived * 1e-6 : 0.0,
				(unsigned long long)r->bytes_delivered, (unsigned long long)r->units_late,
				(unsigned long long)k->units_duplicated,
				(unsigned long long)k->units_corrupted,
				(unsigned long long)k->units_overflow,
				(unsigned long long)k->units_marked);
		}
	return block_write(l, &b, &l->net);
}

/* ports.csv's block of one evaluation: the port toward each worker, its counters since
 * the start (its owner's latest records up to the step: a worker that is down sent
 * none, its port's row stays as it left it), and its mean occupancy over the run's
 * virtual time so far (Little's law: the waiting time of all units over that time). */
static int ports_block(struct runlog *l, int64_t step, double vt)
{
	struct block b;

	if (l->ports.fd < 0)
		return 0;
	for (int i = 0; i < l->n; i++)
		while (l->pq[i].len) {
			const struct rec_port *r = queue_front(&l->pq[i]);

			if (r->step > step)
				break;
			l->port[i][r->k] = *r;
			queue_pop(&l->pq[i]);
		}
	if (block_open(l, &b) < 0)
		return -1;
	for (int i = 0; i < l->n; i++)
		for (int k = 0; k < REC_PORTS && l->port[i][k].type; k++) {
			const struct port_stats *s = &l->port[i][k].st;
			double ns = vt > 0 ? vt * 1e9 : 1;

			fprintf(b.f, "%lld,%.9f,%.23s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.6f,%.3f\n",
				(long long)step, vt, l->port[i][k].name, (unsigned long long)s->units,
				(unsigned long long)s->bytes, (unsigned long long)s->drops,
				(unsigned long long)s->marks, (unsigned long long)s->resends,
				(unsigned long long)s->peak_units, (unsigned long long)s->peak_bytes,
				s->wait_units_ns / ns, s->wait_bytes_ns / ns);
		}
	return block_write(l, &b, &l->ports);
}

static int eval_row(struct runlog *l, const struct rec_eval w[], const struct wset *up)
{
	double loss = 0, vt = 0;
	int64_t correct = 0, count = 0;
	uint64_t bytes = 0, delivered = 0;
	const struct rec_eval *f = &w[wset_first(up)];	/* the first up: step, epoch */
	for (int i = 0; i < l->n; i++) {
		if (!wset_has(up, i)) {	/* down: its counters as it left them */
			const struct rec_down *d = down_rec(l, i, f->step - 1);

			bytes += d->bytes_sent;
			delivered += d->bytes_delivered;
			continue;
		}
		bytes += w[i].bytes_sent;
		delivered += w[i].bytes_delivered;
		loss += w[i].loss_sum;
		correct += w[i].correct;
		count += w[i].count;
		if (w[i].vclock_s > vt)
			vt = w[i].vclock_s;
	}
	l->acc = count ? (double)correct / (double)count : 0;
	l->has_acc = true;
	l->acc_step = f->step;
	if (csv_line(l, &l->eval, "%.6f,%lld,%.9f,%.3f,%.9g,%.6f,%llu,%llu\n", f->epoch,
		     (long long)f->step, vt, now_s() - l->t0,
		     count ? loss / (double)count : 0.0, l->acc, (unsigned long long)bytes,
		     (unsigned long long)delivered) < 0 ||
	    net_block(l, f->step, vt) < 0 || ports_block(l, f->step, vt) < 0)
		return -1;
	progress(l, true);
	return 0;
}

/* The steps done of a queued train, eval or checkpoint record (all have it at the same
 * place). */
static int64_t rec_step(const void *rec)
{
	return ((const struct rec_train *)rec)->step;
}

/* Whether a queued train or eval record was logged after its step's checkpoint. */
static bool rec_after_ckpt(const void *rec)
{
	int32_t type;

	memcpy(&type, rec, sizeof(type));
	return type == REC_TRAIN ? ((const struct rec_train *)rec)->after_ckpt :
	       type == REC_EVAL ? ((const struct rec_eval *)rec)->after_ckpt : false;
}

/* Whether the next row (or checkpoint) of q is complete: the one after the fewest steps
 * queued, with a record from every worker up for the last of those steps (its mask
 * into *up; one that is down has none) and the counters of every worker down then (the
 * rows up to it need them: its REC_DOWN).  A row logged after its step's checkpoint
 * waits for that checkpoint's manifest: a checkpoint's logs end before it (a worker's
 * REC_DOWN, late, may free both at once). */
static bool next_ready(const struct runlog *l, const struct queue q[], struct wset *up)
{
	int64_t step = INT64_MAX;

	for (int i = 0; i < l->n; i++)
		if (q[i].len && rec_step(queue_front(&q[i])) < step)
			step = rec_step(queue_front(&q[i]));
	if (step == INT64_MAX)
		return false;
	*up = crash_up(l->crashes, l->n, step - 1);
	for (int i = 0; i < l->n; i++) {
		if (wset_has(up, i)) {
			if (!q[i].len || rec_step(queue_front(&q[i])) != step)
				return false;
			if (l->ckpt_on && q != l->cq && rec_after_ckpt(queue_front(&q[i])) &&
			    l->ckpt_step < step)
				return false;
		} else if (!down_rec(l, i, step - 1)) {
			return false;	/* its REC_DOWN of this crash is still on the way */
		}
	}
	return true;
}

/* Joins the rows that the workers' queues can complete; 0 or -1. */
static int join_rows(struct runlog *l, struct queue q[], int train)
{
	struct wset up;

	while (next_ready(l, q, &up)) {
		union {
			struct rec_train t[CFG_MAX_WORKERS];
			struct rec_eval e[CFG_MAX_WORKERS];
		} row;
		for (int i = 0; i < l->n; i++) {
			if (!wset_has(&up, i))
				continue;
			if (train)
				row.t[i] = *(const struct rec_train *)queue_front(&q[i]);
			else
				row.e[i] = *(const struct rec_eval *)queue_front(&q[i]);
			queue_pop(&q[i]);
		}
		if ((train ? train_row(l, row.t, &up) : eval_row(l, row.e, &up)) < 0)
			return -1;
	}
	return 0;
}

void runlog_crashes(struct runlog *l, const struct crash_plan *p)
{
	for (int i = 0; i < p->n; i++)
		l->down[i].step = -1;
	l->crashes = p->n ? p : NULL;
}

void runlog_checkpoints(struct runlog *l, uint64_t hash, uint64_t data_hash,
			uint64_t plugin_hash)
{
	l->ckpt_on = true;
	l->ckpt_hash = hash;
	l->data_hash = data_hash;
	l->plugin_hash = plugin_hash;
}

/* At a checkpoint (every row of the steps up to it written, none after: record.h, struct
 * rec_ckpt): the logs onto the disk, and where they stand (their sizes, the progress
 * line) into m, the supervisor's part of the manifest.  0, or -1 with l->error (the run
 * fails: it would go on without its checkpoints). */
static int logs_at_checkpoint(struct runlog *l, struct ckpt_manifest *m)
{
	struct csv *o[CKPT_LOGS] = { &l->train, &l->eval, &l->net, &l->workers, &l->ports };

	*m = (struct ckpt_manifest){
		.log_step = l->step, .acc_step = l->acc_step, .loss = l->loss, .epoch = l->epoch,
		.acc = l->acc, .wall_s = now_s() - l->t0, .has_loss = l->has_loss,
		.has_acc = l->has_acc, .data_hash = l->data_hash, .plugin_hash = l->plugin_hash,
	};
	for (int k = 0; k < CKPT_LOGS; k++) {
		m->off[k] = o[k]->fd >= 0 ? (int64_t)o[k]->whole : -1;
		if (o[k]->fd >= 0 && fsync(o[k]->fd) < 0)
			return csv_failed(l, o[k], -errno);
	}
	return 0;
}

/* The checkpoints every worker's REC_CKPT is in for (they come in step order). */
static int join_checkpoints(struct runlog *l)
{
	struct wset up;

	while (next_ready(l, l->cq, &up)) {
		struct rec_ckpt r[CFG_MAX_WORKERS] = { 0 };
		int64_t step = 0;

		for (int i = 0; i < l->n; i++) {
			if (!wset_has(&up, i))
				continue;	/* down: no part (size 0 in the manifest) */
			r[i] = *(const struct rec_ckpt *)queue_front(&l->cq[i]);
			step = r[i].step;
			queue_pop(&l->cq[i]);
		}
		/* the logs on the disk, then the manifest with their sizes (ckpt.h) */
		struct ckpt_manifest m;

		if (logs_at_checkpoint(l, &m) < 0 ||
		    ckpt_manifest_write(l->dir.path, l->ckpt_hash, step, l->n, &m, r, l->error,
					sizeof(l->error)) < 0)
			return -1;
		l->ckpt_step = step;
	}
	return 0;
}

/* Everything the queues can complete, in the order the workers logged it: the rows,
 * the checkpoints, then the rows that follow a checkpoint. */
static int join_all(struct runlog *l)
{
	int rc = join_rows(l, l->tq, 1);

	if (rc == 0)
		rc = join_rows(l, l->eq, 0);
	if (rc == 0 && l->ckpt_on) {
		rc = join_checkpoints(l);
		if (rc == 0)
			rc = join_rows(l, l->tq, 1);
		if (rc == 0)
			rc = join_rows(l, l->eq, 0);
	}
	return rc;
}

int runlog_record(struct runlog *l, int worker, const void *rec, size_t len)
{
	int32_t type;
	int rc = 0;

	if (l->error[0] || len < sizeof(type))
		return l->error[0] ? -1 : 0;
	memcpy(&type, rec, sizeof(type));
	if (type == REC_TRAIN && len == sizeof(struct rec_train)) {
		rc = queue_push(&l->tq[worker], rec);
		if (rc == 0)
			rc = join_all(l);
	} else if (type == REC_EVAL && len == sizeof(struct rec_eval)) {
		rc = queue_push(&l->eq[worker], rec);
		if (rc == 0)
			rc = join_all(l);
	} else if (type == REC_CKPT && len == sizeof(struct rec_ckpt) && l->ckpt_on) {
		rc = queue_push(&l->cq[worker], rec);
		if (rc == 0)
			rc = join_all(l);
	} else if (type == REC_DOWN && len == sizeof(struct rec_down)) {
		const struct rec_down *d = rec;
		const struct crash_span *sp = l->crashes ?
			crash_starting(l->crashes, worker, d->step) : NULL;

		if (sp)	/* (only from the crash its plan has) */
			memcpy(&l->down[sp - l->crashes->s], rec, len);
		rc = join_all(l);	/* what waited for it may go */
	} else if ((type == REC_LINK || type == REC_LINK_IN) && len == sizeof(struct rec_link)) {
		const struct rec_link *r = rec;
		if (r->src >= 0 && r->src < l->n && r->dst >= 0 && r->dst < l->n)
			rc = queue_push(&l->lq[worker], rec);	/* until its evaluation */
	} else if (type == REC_PORT && len == sizeof(struct rec_port) && l->ports.fd >= 0) {
		const struct rec_port *r = rec;

		if (r->k >= 0 && r->k < REC_PORTS)
			rc = queue_push(&l->pq[worker], rec);	/* until its evaluation */
	}
	if (rc == -ENOMEM)
		snprintf(l->error, sizeof(l->error), "out of memory joining the workers' records");
	if (rc < 0)
		fprintf(stderr, "emu: %s\n", l->error);
	return rc < 0 ? -1 : 0;
}

/* The workers are gone: a checkpoint they began and never completed (a part that could
 * not be written, a full disk) is removed, so that it takes no room and the latest stays
 * the one a resume uses; says so. */
static void drop_incomplete(struct runlog *l)
{
	char err[512];
	int64_t latest = -1;
	int rc = ckpt_latest(l->dir.path, &latest, err, sizeof(err));

	if (rc < 0 && rc != -ENOENT)
		return;	/* garbled: a resume says so; nothing is removed on a guess */
	if (ckpt_prune_newer(l->dir.path, rc < 0 ? -1 : latest) <= 0)
		return;
	if (rc < 0)
		fprintf(stderr, "emu: %s/" CKPT_DIR ": the run's first checkpoint was not "
			"completed and is removed: the run has none to resume from\n", l->dir.path);
	else
		fprintf(stderr, "emu: %s/" CKPT_DIR ": a checkpoint begun after the one after step "
			"%lld was not completed and is removed; emu resume %s starts from the one "
			"after step %lld\n", l->dir.path, (long long)latest, l->dir.path,
			(long long)latest);
}

int runlog_close(struct runlog *l, int status, const char *why)
{
	char err[512];

	if (!l)
		return status;
	/* Every file whole on the disk (csv_close keeps the first error); a failure here
	 * fails a run that had succeeded. */
	bool failed_before = l->error[0] != 0;

	/* a run that ended well joined every record into a row: one left is a bug that
	 * lost rows, never a success */
	for (int i = 0; i < l->n && status == 0 && !l->error[0]; i++)
		if (l->tq[i].len || l->eq[i].len)
			snprintf(l->error, sizeof(l->error), "internal error: %zu records of worker "
				 "%d joined no row of train.csv or eval.csv (the run's rows are "
				 "incomplete)", l->tq[i].len + l->eq[i].len, i);
	csv_close(l, &l->train);
	csv_close(l, &l->eval);
	csv_close(l, &l->net);
	csv_close(l, &l->workers);
	csv_close(l, &l->ports);
	if (!failed_before && l->error[0])
		fprintf(stderr, "emu: %s\n", l->error);
	if (l->ckpt_on)
		drop_incomplete(l);
	if (l->error[0]) {
		why = l->error;
		if (status == 0)
			status = 1;
	}
	if (rundir_status(&l->dir, status == 0 ? "done" : status == 1 ? "failed" : "interrupted",
			  status, l->step, l->steps_total, why, err,
			  sizeof(err)) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		if (status == 0)
			status = 1;
	}
	if (l->line_open)
		fputc('\n', stderr);
	fprintf(stderr, "emu: %s: %s after %lld steps, %.1f s; logs in %s\n", l->c->run.name,
		status == 0 ? "done" : status == 1 ? "failed" : "interrupted", (long long)l->step,
		now_s() - l->t0, l->dir.path);
	rundir_close(&l->dir);
	for (int i = 0; i < l->n; i++) {
		free(l->tq[i].rec);
		free(l->eq[i].rec);
		free(l->lq[i].rec);
		free(l->pq[i].rec);
		free(l->cq[i].rec);
	}
	free(l->links_out);
	free(l->links_in);
	free(l);
	return status;
}
