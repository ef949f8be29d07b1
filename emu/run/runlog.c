/* emu/run/runlog.c — see runlog.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "emu/run/record.h"
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

struct runlog {
	const struct cfg *c;
	int n;
	char dir[CFG_STR];
	FILE *train, *eval;
	struct queue tq[CFG_MAX_WORKERS], eq[CFG_MAX_WORKERS];	/* train, eval records */
	struct rec_link *links;		/* n*n, latest per directed link */
	double t0;
	int tty;
	int64_t step, steps_total;
	double loss, acc, epoch;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static FILE *open_csv(struct runlog *l, const char *name, const char *header, char *err,
		      size_t errlen)
{
	char path[CFG_STR + 32];
	snprintf(path, sizeof(path), "%s/%s", l->dir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		return NULL;
	}
	setvbuf(f, NULL, _IOLBF, 0);	/* every line reaches the file as it is written */
	fprintf(f, "%s\n", header);
	return f;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
	char p[CFG_STR];
	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, 0777) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

struct runlog *runlog_open(const struct cfg *c, const char *dir, char *err, size_t errlen)
{
	struct runlog *l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->c = c;
	l->n = c->run.workers;
	l->t0 = now_s();
	l->tty = isatty(STDERR_FILENO);
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	for (int i = 0; i < l->n; i++) {
		l->tq[i].size = sizeof(struct rec_train);
		l->eq[i].size = sizeof(struct rec_eval);
	}
	l->links = calloc((size_t)l->n * (size_t)l->n, sizeof(*l->links));
	int rc = make_dirs(dir);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot create directory: %s", dir, strerror(-rc));
		goto fail;
	}
	char path[CFG_STR + 32];
	snprintf(path, sizeof(path), "%s/config.ini", dir);
	FILE *f = fopen(path, "w");
	if (!f || !l->links) {
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		if (f)
			fclose(f);
		goto fail;
	}
	cfg_print(c, f);
	fclose(f);
	l->train = open_csv(l, "train.csv",
			    "step,epoch,loss,lr,vtime_s,wall_s,consensus,bytes_sent,units_dropped",
			    err, errlen);
	if (!l->train)
		goto fail;
	l->eval = open_csv(l, "eval.csv", "epoch,step,vtime_s,wall_s,test_loss,test_acc,bytes_sent", err,
			   errlen);
	if (!l->eval)
		goto fail;
	return l;
fail:
	if (l->train)
		fclose(l->train);
	free(l->links);
	free(l);
	return NULL;
}

static void progress(struct runlog *l, int final)
{
	double wall = now_s() - l->t0;
	if (l->tty) {
		double eta = l->step > 0 ? wall / (double)l->step * (double)(l->steps_total - l->step) : 0;
		fprintf(stderr, "\r\033[Kepoch %.2f/%d  step %lld/%lld  loss %.4f  acc %.2f%%  ETA %d:%02d",
			l->epoch, l->c->train.epochs, (long long)l->step, (long long)l->steps_total,
			l->loss, 100 * l->acc, (int)eta / 60, (int)eta % 60);
		if (final)
			fputc('\n', stderr);
	} else if (final) {
		fprintf(stderr, "epoch %.2f  step %lld/%lld  loss %.4f  test acc %.2f%%  wall %.1fs\n",
			l->epoch, (long long)l->step, (long long)l->steps_total, l->loss, 100 * l->acc,
			wall);
	}
}

static void train_row(struct runlog *l, const struct rec_train w[])
{
	double loss = 0, cons = 0, vt = 0;
	uint64_t bytes = 0, dropped = 0;
	for (int i = 0; i < l->n; i++) {	/* worker-id order: deterministic sums */
		loss += w[i].loss;
		cons += w[i].consensus;
		bytes += w[i].bytes_sent;
		dropped += w[i].units_dropped;
		if (w[i].vclock_s > vt)
			vt = w[i].vclock_s;
	}
	loss /= l->n;
	cons /= l->n;
	fprintf(l->train, "%lld,%.6f,%.9g,%.9g,%.9f,%.3f,%.9g,%llu,%llu\n", (long long)w[0].step,
		w[0].epoch, loss, w[0].lr, vt, now_s() - l->t0, cons,
		(unsigned long long)bytes, (unsigned long long)dropped);
	l->step = w[0].step;
	l->steps_total = w[0].steps_total;
	l->loss = loss;
	l->epoch = w[0].epoch;
	progress(l, 0);
}

static void write_net(struct runlog *l)
{
	char path[CFG_STR + 32], tmp[CFG_STR + 40];
	snprintf(path, sizeof(path), "%s/net.csv", l->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "src,dst,messages,units,units_dropped,drop_rate,retransmits,bytes,mean_delay_ms\n");
	for (int s = 0; s < l->n; s++)
		for (int d = 0; d < l->n; d++) {
			const struct rec_link *k = &l->links[s * l->n + d];
			if (s == d || !k->type)
				continue;
			uint64_t arrived = k->units - k->units_dropped;
			fprintf(f, "%d,%d,%llu,%llu,%llu,%.6f,%llu,%llu,%.6f\n", s, d,
				(unsigned long long)k->messages, (unsigned long long)k->units,
				(unsigned long long)k->units_dropped,
				k->units ? (double)k->units_dropped / (double)k->units : 0.0,
				(unsigned long long)k->retransmits, (unsigned long long)k->bytes,
				arrived ? k->delay_sum_ns / (double)arrived * 1e-6 : 0.0);
		}
	/* rename: a reader (or a crash) sees the old table or the new one, never half */
	if (fclose(f) == 0)
		rename(tmp, path);
}

static void eval_row(struct runlog *l, const struct rec_eval w[])
{
	double loss = 0, vt = 0;
	int64_t correct = 0, count = 0;
	uint64_t bytes = 0;
	for (int i = 0; i < l->n; i++) {
		bytes += w[i].bytes_sent;
		loss += w[i].loss_sum;
		correct += w[i].correct;
		count += w[i].count;
		if (w[i].vclock_s > vt)
			vt = w[i].vclock_s;
	}
	l->acc = count ? (double)correct / (double)count : 0;
	fprintf(l->eval, "%.6f,%lld,%.9f,%.3f,%.9g,%.6f,%llu\n", w[0].epoch, (long long)w[0].step,
		vt, now_s() - l->t0, count ? loss / (double)count : 0.0, l->acc,
		(unsigned long long)bytes);
	write_net(l);
	progress(l, 1);
}

/* Whether every worker's queue holds a record. */
static int all_queued(const struct queue q[], int n)
{
	for (int i = 0; i < n; i++)
		if (q[i].len == 0)
			return 0;
	return 1;
}

void runlog_record(struct runlog *l, int worker, const void *rec, size_t len)
{
	int32_t type;
	if (len < sizeof(type))
		return;
	memcpy(&type, rec, sizeof(type));
	if (type == REC_TRAIN && len == sizeof(struct rec_train)) {
		if (queue_push(&l->tq[worker], rec) < 0)
			return;
		while (all_queued(l->tq, l->n)) {
			struct rec_train row[CFG_MAX_WORKERS];
			for (int i = 0; i < l->n; i++) {
				row[i] = *(const struct rec_train *)queue_front(&l->tq[i]);
				queue_pop(&l->tq[i]);
			}
			train_row(l, row);
		}
	} else if (type == REC_EVAL && len == sizeof(struct rec_eval)) {
		if (queue_push(&l->eq[worker], rec) < 0)
			return;
		while (all_queued(l->eq, l->n)) {
			struct rec_eval row[CFG_MAX_WORKERS];
			for (int i = 0; i < l->n; i++) {
				row[i] = *(const struct rec_eval *)queue_front(&l->eq[i]);
				queue_pop(&l->eq[i]);
			}
			eval_row(l, row);
		}
	} else if (type == REC_LINK && len == sizeof(struct rec_link)) {
		const struct rec_link *r = rec;
		if (r->src >= 0 && r->src < l->n && r->dst >= 0 && r->dst < l->n)
			l->links[r->src * l->n + r->dst] = *r;
	}
}

void runlog_close(struct runlog *l, int status)
{
	if (!l)
		return;
	write_net(l);
	if (l->tty && l->step > 0)
		fputc('\n', stderr);
	fclose(l->train);
	fclose(l->eval);
	fprintf(stderr, "emu: %s: %s after %lld steps, %.1f s; logs in %s\n", l->c->run.name,
		status == 0 ? "done" : status == 1 ? "failed" : "interrupted", (long long)l->step,
		now_s() - l->t0, l->dir);
	for (int i = 0; i < l->n; i++) {
		free(l->tq[i].rec);
		free(l->eq[i].rec);
	}
	free(l->links);
	free(l);
}
