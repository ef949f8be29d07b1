/* emu/run/train_worker.c — one worker's training loop, in the child after fork.
 *
 * The worker opens its own nn backend (the supervisor never initialises a device) on
 * device (id - lo) % ndevices, lo being its host's first worker (0 on one host).  Per
 * step: batch of its shard -> forward -> algorithm (before_backward, backward, the
 * collective and the update) -> every log_every steps a train record with the
 * consensus distance -> at each epoch end (or every eval_every steps) the evaluation
 * of the mean of the replicas on this worker's share of the test set; with
 * train.eval_at_start, one of the initial model before step 0 as well.  The algorithms
 * see only the model's host mirrors; they move at two points per step: gradients to
 * the host after backward, parameters to the device after the update (no-ops on the
 * CPU backends, whose mirrors are the buffers).  The virtual clock advances by the
 * modelled compute time (FLOPs over the device rate plus a launch overhead per op:
 * deterministic; or measured time times a scale: not deterministic), made this
 * worker's by its slowdown and jitter (emu/run/compute.h).  Stopping (Ctrl-C) is
 * agreed on through the collective's flags, so every worker ends after the same step.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "emu/algo/algo.h"
#include "emu/run/ckpt_worker.h"
#include "emu/run/compute.h"
#include "emu/run/plan.h"
#include "emu/run/record.h"
#include "emu/run/supervisor.h"
#include "emu/run/train.h"
#include "nn/optim.h"

#define FLAG_STOP 1u
#define FLAG_CKPT 2u	/* the supervisor asked for a checkpoint (run.checkpoint_wall) */

/* Scratch of a worker: batch buffers, shard indices, the replicas' mean. */
struct scratch {
	int32_t *idx;		/* shard order of the current epoch */
	int32_t *bidx;		/* the samples of one batch */
	float *x;		/* batch inputs */
	int32_t *tokens;
	void *y;		/* labels (int32) or targets (float) */
	float *mean;		/* mean of all replicas: params then state */
	bool crashes;		/* the run has crash events: see replicas_mean */
};

/* Where a run stands: its length, schedule and what the next train record averages. */
struct progress {
	int64_t spe;		/* steps per epoch, the same on every worker */
	int64_t total;
	struct lr_schedule sched;
	double loss_acc;
	int loss_n;
	int64_t compute_ns;	/* modelled compute since the last train record (workers.csv) */
	int shard_n;		/* samples in this epoch's shard */
	struct wset up;		/* the workers up for this step (crash events) */
	bool after_ckpt;	/* the records now logged follow this step's checkpoint */
};

/* The worker's last words: the backend's own ("cudnnConvolutionForward:
 * CUDNN_STATUS_...") when it failed, else what failed and why. */
static void fail(struct worker *w, const char *what, int rc)
{
	struct worker_slot *s = region_slot(w->rg, w->id);
	if (w->be.err)
		snprintf(s->error, sizeof(s->error), "%s", w->be.msg);
	else
		snprintf(s->error, sizeof(s->error), "%s: %s", what, strerror(rc < 0 ? -rc : rc));
}

static int scratch_init(struct scratch *s, const struct worker *w)
{
	const struct nn_dataset *d = w->train;
	int B = w->c->train.batch;
	size_t feat = (size_t)d->in.C * d->in.H * d->in.W;
	size_t model = w->m.nparams + w->m.nstate;
	s->idx = calloc((size_t)d->n, sizeof(*s->idx));
	s->bidx = calloc((size_t)B, sizeof(*s->bidx));
	s->x = d->x ? calloc((size_t)B * feat, sizeof(float)) : NULL;
	s->tokens = d->tokens ? calloc((size_t)B * d->in.T, sizeof(int32_t)) : NULL;
	s->y = calloc((size_t)B, 4);
	s->mean = calloc(model, sizeof(float));
	if (!s->idx || !s->bidx || (d->x && !s->x) || (d->tokens && !s->tokens) || !s->y || !s->mean)
		return -ENOMEM;
	return 0;
}

static void scratch_free(struct scratch *s)
{
	free(s->idx);
	free(s->bidx);
	free(s->x);
	free(s->tokens);
	free(s->y);
	free(s->mean);
}

/* Worker w's share [*lo, *hi) of n items cut among the workers up (by its rank among
 * them, in id order). */
static void up_share(const struct worker *w, const struct wset *up, size_t n, size_t *lo,
		     size_t *hi)
{
	size_t nup = (size_t)wset_count(up);
	size_t rank = (size_t)wset_rank(up, w->id);

	*lo = n * rank / nup;
	*hi = n * (rank + 1) / nup;
}

/* Who meets at the barrier: every worker up, and across hosts the bridge (crashes
 * are on one host only, train.c). */
static int parties(const struct worker *w, const struct wset *up)
{
	return wset_count(up) == w->n ? region_barrier_parties(w->rg) : wset_count(up);
}

/* Every worker up publishes its replica; all get the same mean of those in `from`
 * (summed in worker-id order) into s->mean when keep, and, when dist, their own squared
 * distance to it.  On one host each worker up sums only its share of the elements (by
 * its rank among them), into the region's mean area, and reads the rest from there: the
 * replicas are read once per logged step, not once per worker (64 LeNet workers: 16 MB
 * each, 1 GB in all), and every element is summed as before, so the mean is the same
 * to the bit.  Across hosts the bridge is a party of both barriers: it copies the other
 * hosts' snapshots in before it lets the first one go (emu/mpi/world.h), and every
 * worker sums all the elements itself. */
static int replicas_mean(struct worker *w, struct scratch *s, const struct wset *up,
			 const struct wset *from, double *dist, bool keep)
{
	size_t np = w->m.nparams, ns = w->m.nstate, nel = np + ns;
	float *mine = region_snapshot(w->rg, w->id);
	int rc = nn_model_to_host(&w->m, NN_STATE);	/* batch norm moved it on the device */
	if (rc < 0)
		return rc;
	memcpy(mine, w->m.params, np * sizeof(float));
	memcpy(mine + np, w->m.state, ns * sizeof(float));
	barrier_wait(region_barrier(w->rg), parties(w, up), &w->nt);
	/* double accumulators: replicas that agree average to exactly themselves */
	const float *snap[CFG_MAX_WORKERS];
	int nf = 0;
	for (int k = 0; k < w->n; k++)
		if (wset_has(from, k))
			snap[nf++] = region_snapshot(w->rg, k);
	int shared = !region_bridged(w->rg);
	size_t lo = 0, hi = nel;
	if (shared)
		up_share(w, up, nel, &lo, &hi);
	float *mean = shared ? region_mean(w->rg) : s->mean;
	/* a block of elements at a time, each summed over the replicas in order as one
	 * element alone would be, so that the sums run in vector lanes */
	enum { BLOCK = 256 };
	double sum[BLOCK];
	for (size_t b = lo; b < hi; b += BLOCK) {
		size_t m = hi - b < BLOCK ? hi - b : BLOCK;
		for (size_t j = 0; j < m; j++)
			sum[j] = 0;
		for (int k = 0; k < nf; k++) {
			const float *v = snap[k] + b;
#pragma omp simd
			for (size_t j = 0; j < m; j++)
				sum[j] += v[j];
		}
#pragma omp simd
		for (size_t j = 0; j < m; j++)
			mean[b + j] = (float)(sum[j] / nf);
	}
	/* One host: the mean is whole once all have summed their shares; the snapshots are
	 * read by then, and the mean area is written again only after the next call's first
	 * barrier, which everybody reaches after reading it, unless a crash takes a reader
	 * out of the next call: then all meet again once the area is read.  Across hosts:
	 * nobody overwrites a snapshot until everybody has read them all. */
	if (shared) {
		barrier_wait(region_barrier(w->rg), parties(w, up), &w->nt);
		if (keep)	/* (only evaluate and rejoin read it: a logged step need not) */
			memcpy(s->mean, mean, nel * sizeof(float));
	}
	if (dist) {
		*dist = 0;
		for (size_t i = 0; i < np; i++) {
			double d = (double)mine[i] - mean[i];
			*dist += d * d;
		}
	}
	if (!shared || s->crashes)
		barrier_wait(region_barrier(w->rg), parties(w, up), &w->nt);
	return 0;
}

/* The model's params and state from src (params then state), on both sides. */
static int load_model(struct worker *w, const float *src)
{
	memcpy(w->m.params, src, w->m.nparams * sizeof(float));
	memcpy(w->m.state, src + w->m.nparams, w->m.nstate * sizeof(float));
	return nn_model_to_device(&w->m, NN_PARAMS | NN_STATE);
}

/* Evaluate the mean model on test samples [lo, hi) of this worker's share (the test set
 * cut among the workers up).  Called right after replicas_mean: this worker's snapshot
 * still holds its own params and state (only their owner writes snapshots), and they
 * come back from there. */
static int evaluate(struct worker *w, struct scratch *s, const struct wset *up,
		    struct rec_eval *r)
{
	int rc = load_model(w, s->mean);
	const struct nn_dataset *d = w->test;
	size_t share_lo, share_hi;
	up_share(w, up, (size_t)d->n, &share_lo, &share_hi);
	int lo = (int)share_lo, hi = (int)share_hi, B = w->c->train.batch;
	r->loss_sum = 0;
	r->correct = 0;
	r->count = 0;
	for (int i = lo; i < hi && rc == 0; i += B) {
		int b = hi - i < B ? hi - i : B;
		for (int k = 0; k < b; k++)
			s->bidx[k] = i + k;
		data_batch(d, s->bidx, b, s->x, s->tokens, s->y);
		int correct = 0;
		float loss = nn_forward(&w->m, s->x, s->tokens, s->y, b, false, &correct);
		r->loss_sum += (double)loss * b;
		r->correct += correct;
		r->count += b;
		rc = w->be.err;
		atomic_fetch_add_explicit(&region_slot(w->rg, w->id)->beats, 1, memory_order_relaxed);
	}
	return rc ? rc : load_model(w, region_snapshot(w->rg, w->id));
}

/* This worker's side of each of its links: what it sent to peer p (id -> p) and what
 * reached it from p (p -> id); the supervisor joins the two sides of a link.  And the
 * switch port toward it, where there is one. */
static void log_links(struct worker *w, int64_t step)
{
	for (int p = 0; p < w->n; p++) {
		if (p == w->id)
			continue;
		struct xchg_link_stats st;
		xchg_link_stats(&w->x, p, &st);
		struct rec_link out = rec_link_out(w->id, p, step, &st);
		worker_log(w->rg, w->id, &out, sizeof(out), &w->nt);
		xchg_link_stats_in(&w->x, p, &st);
		struct rec_link in = rec_link_in(p, w->id, step, &st);
		worker_log(w->rg, w->id, &in, sizeof(in), &w->nt);
	}
	for (int k = 0; k < REC_PORTS; k++) {
		struct rec_port port = { .type = REC_PORT, .worker = w->id, .step = step, .k = k };

		if (!xchg_port_stats(&w->x, k, port.name, sizeof(port.name), &port.st))
			break;
		worker_log(w->rg, w->id, &port, sizeof(port), &w->nt);
	}
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* compute = measured: the backend's own clock where it has one (a GPU's events: the
 * time its kernels took), else this thread's CPU time.  Returns the start mark. */
static double measure_start(struct worker *w)
{
	if (w->be.ops->time_start) {
		w->be.ops->time_start(&w->be);
		return 0;
	}
	return cpu_seconds();
}

static double measure_seconds(struct worker *w, double start)
{
	return w->be.ops->time_stop ? w->be.ops->time_stop(&w->be) : cpu_seconds() - start;
}

static void progress_init(struct progress *p, const struct worker *w)
{
	const struct cfg *c = w->c;
	memset(p, 0, sizeof(*p));
	train_length(c, w->train->n, &p->spe, &p->total);
	p->sched = (struct lr_schedule){
		.kind = c->train.lr_schedule, .base = c->train.lr, .scale = cfg_lr_scale(c),
		.max = c->train.lr_max, .end = c->train.lr_end, .power = c->train.lr_power,
		.spe = (double)p->spe, .total_steps = (double)p->total,
		.warmup_epochs = fmax(c->train.warmup_epochs,
				      (double)c->train.warmup_steps / (double)p->spe),
		.ndecay = c->train.ndecay,
		.decay = c->train.decay_epochs, .factor = c->train.decay_factor,
	};
}

/* This step's batch from the worker's shard (re-drawn at each epoch's start). */
static int next_batch(struct worker *w, struct scratch *s, struct progress *p)
{
	const struct cfg *c = w->c;
	int B = c->train.batch;
	int64_t in_epoch = w->step % p->spe;
	if (in_epoch == 0 || p->shard_n == 0)	/* (0: resumed within an epoch) */
		p->shard_n = data_shard(w->train, plan_shard_kind(c->data.shard), c->data.alpha, w->n,
					w->id, c->run.seed, w->epoch, s->idx, w->train->n);
	if (p->shard_n <= 0) {
		fail(w, "data shard", p->shard_n < 0 ? p->shard_n : -ENODATA);
		return -ENODATA;
	}
	/* a non-iid shard may be smaller than an epoch's steps: wrap around */
	for (int k = 0; k < B; k++)
		s->bidx[k] = s->idx[(in_epoch * B + k) % p->shard_n];
	data_batch(w->train, s->bidx, B, s->x, s->tokens, s->y);
	return 0;
}

/* Advances the virtual clock by this step's modelled compute time (emu/run/compute.h):
 * secs measured, or the FLOPs and ops of the step's graph (need_wgrad as backward ran);
 * p keeps the sum for the next train record. */
static int modelled_compute(struct worker *w, struct progress *p, double secs)
{
	const struct cfg *c = w->c;
	double base;
	if (c->train.compute == COMPUTE_MEASURED) {
		base = secs * c->train.compute_scale * 1e9;
	} else {
		int B = c->train.batch;
		double flops = nn_flops(&w->m, B, true, w->need_wgrad);
		int ops = nn_step_ops(&w->m, B, true, w->need_wgrad);
		if (isnan(flops) || ops < 0) {
			fail(w, "memory", -ENOMEM);
			return -ENOMEM;
		}
		base = compute_flops_ns(c, flops, ops);
	}
	int64_t ns = compute_step_ns(c, w->id, w->step, base,
				     compute_events_factor(c, p->spe, w->id, w->step, w->x.clock));
	xchg_compute(&w->x, ns);
	p->compute_ns += ns;
	return 0;
}

/* Forward, backward (the gradients come to the host), the modelled compute time, the
 * algorithm's exchange and update (the parameters go back to the device).  *all gets the
 * flags of every worker. */
static int train_step(struct worker *w, const struct algo *a, void *state, struct scratch *s,
		      struct progress *p, uint32_t *all)
{
	const struct cfg *c = w->c;
	int B = c->train.batch;
	int64_t t = usage_clock(&w->usage);	/* the compute parts' time, for benchmarks */
	int rc = next_batch(w, s, p);
	if (rc < 0)
		return rc;
	t = usage_add(&w->usage, USAGE_BATCH, t);
	w->lr = lr_at(&p->sched, (double)w->step / (double)p->spe);

	bool measured = c->train.compute == COMPUTE_MEASURED;
	double t0 = measured ? measure_start(w) : 0;
	w->loss = nn_forward(&w->m, s->x, s->tokens, s->y, B, true, NULL);
	w->need_wgrad = NULL;
	if (a->before_backward)
		a->before_backward(w, state);
	nn_backward(&w->m, w->need_wgrad);
	double secs = measured ? measure_seconds(w, t0) : 0;
	usage_add(&w->usage, USAGE_NN, t);
	rc = nn_model_to_host(&w->m, NN_GRADS);
	if (rc < 0) {
		fail(w, "backward", rc);
		return rc;
	}
	rc = modelled_compute(w, p, secs);
	if (rc < 0)
		return rc;

	/* the stop word: 1 a stop, 2 a checkpoint asked for by the wall clock (supervisor.c) */
	uint32_t word = atomic_load(region_stop(w->rg));
	uint32_t flags = (word & 1 ? FLAG_STOP : 0) | (word & 2 ? FLAG_CKPT : 0);
	rc = a->step(w, state, flags, all);
	if (rc < 0) {
		if (w->x.err[0])	/* what the exchange could say (xchg.h) */
			fprintf(stderr, "emu: %s\n", w->x.err);
		fail(w, "exchange", rc);
		return rc;
	}
	rc = nn_model_to_device(&w->m, NN_PARAMS);
	if (rc < 0)
		fail(w, "update", rc);
	p->loss_acc += w->loss;
	p->loss_n++;
	return rc;
}

/* The evaluation of the replicas' mean (just computed) after `done` steps, the links'
 * records of that evaluation and its own record.  0, or -errno (reported). */
static int eval_record(struct worker *w, struct scratch *s, const struct progress *p,
		       int64_t done, double epoch)
{
	struct rec_eval er = {
		.type = REC_EVAL, .worker = w->id, .step = done, .epoch = epoch,
		.vclock_s = (double)w->x.clock * 1e-9, .bytes_sent = w->x.bytes_sent,
		.bytes_delivered = w->x.bytes_delivered, .after_ckpt = p->after_ckpt,
	};
	int rc = evaluate(w, s, &p->up, &er);

	if (rc < 0) {
		fail(w, "evaluation", rc);
		return rc;
	}
	log_links(w, done);
	worker_log(w->rg, w->id, &er, sizeof(er), &w->nt);
	return 0;
}

/* After step w->step: the train record (with the consensus distance) and, when eval, the
 * evaluation of the replicas' mean and the link statistics. */
static int log_step(struct worker *w, struct scratch *s, struct progress *p, int eval)
{
	int64_t done = w->step + 1;
	double consensus;
	usage_mark(&w->usage, &w->nt, done);
	int rc = replicas_mean(w, s, &p->up, &p->up, &consensus, eval);
	if (rc < 0) {
		fail(w, "snapshot", rc);
		return rc;
	}
	struct rec_train tr = {
		.type = REC_TRAIN, .worker = w->id, .step = done, .steps_total = p->total,
		.epoch = (double)done / (double)p->spe, .loss = p->loss_acc / p->loss_n, .lr = w->lr,
		.vclock_s = (double)w->x.clock * 1e-9, .consensus = consensus,
		.bytes_sent = w->x.bytes_sent, .units_dropped = w->x.units_dropped,
		.bytes_delivered = w->x.bytes_delivered, .units_late = w->x.units_late,
		.compute_s = (double)p->compute_ns * 1e-9, .after_ckpt = p->after_ckpt,
	};
	worker_log(w->rg, w->id, &tr, sizeof(tr), &w->nt);
	p->loss_acc = 0;
	p->loss_n = 0;
	p->compute_ns = 0;
	if (!eval)
		return 0;
	return eval_record(w, s, p, done, tr.epoch);
}

/* The evaluation of the replicas' mean after step w->step, whose train record is
 * logged already (a stop after a logged step that was not to be evaluated). */
static int log_eval(struct worker *w, struct scratch *s, const struct progress *p)
{
	int64_t done = w->step + 1;
	int rc = replicas_mean(w, s, &p->up, &p->up, NULL, true);
	if (rc < 0) {
		fail(w, "snapshot", rc);
		return rc;
	}
	return eval_record(w, s, p, done, (double)done / (double)p->spe);
}

/* The evaluation of the initial model, before step 0: eval.csv's row and net.csv's block
 * of step 0 (epoch 0, nothing sent yet); train.csv has no row there (no step has a loss
 * yet).  The workers up then are those of the supervisor's row of step 0.  0, or < 0
 * (reported). */
static int log_eval_start(struct worker *w, const struct train_run *t, struct scratch *s,
			  struct progress *p)
{
	p->up = crash_up(&t->crashes, w->n, -1);
	int rc = replicas_mean(w, s, &p->up, &p->up, NULL, true);
	if (rc < 0) {
		fail(w, "snapshot", rc);
		return rc;
	}
	return eval_record(w, s, p, 0, 0.0);
}

/* This worker's part of the checkpoint after step w->step, then the record that tells
 * the supervisor (after every record of the steps up to it).  0 or -1 (reported). */
static int checkpoint(struct worker *w, const struct train_run *t, const struct algo *a,
		      void *state, const struct progress *p)
{
	struct ckpt_acc acc = { p->loss_acc, p->loss_n, p->compute_ns };
	struct worker_slot *slot = region_slot(w->rg, w->id);
	struct rec_ckpt rec;

	if (ckpt_worker_save(w, a, state, &acc, t->ckpt_run, t->cfg_hash, &rec, slot->error,
			     sizeof(slot->error)) < 0)
		return -1;
	worker_log(w->rg, w->id, &rec, sizeof(rec), &w->nt);
	return 0;
}

/* This process ends as a crash event planned, before step w->step (crash.h): it leaves
 * what it may come back with, its links' records and its counters (for the logs while
 * it is down), and says so in its slot.  0 (the process exits 0; the supervisor sees a
 * planned death), or -1 (reported). */
static int crash(struct worker *w, const struct train_run *t, const struct algo *a,
		 void *state, const struct progress *p)
{
	struct ckpt_acc acc = { p->loss_acc, p->loss_n, p->compute_ns };
	struct worker_slot *slot = region_slot(w->rg, w->id);
	struct rec_down d = rec_down_of(w->id, w->step, &w->x);

	if (ckpt_worker_save_crash(w, a, state, &acc, t->dir, t->cfg_hash, slot->error,
				   sizeof(slot->error)) < 0)
		return -1;
	log_links(w, w->step);
	worker_log(w->rg, w->id, &d, sizeof(d), &w->nt);
	atomic_store(&slot->state, WORKER_CRASHED);
	return 0;
}

/* A process forked in place of a crashed worker, to begin at step sp->to: the network
 * state the crash left; the model and algorithm state too with rejoin = own (fresh and
 * mean start from worker_init's: the initial model; mean takes the others' mean at its
 * first step, train_loop); the clock of the latest of the workers that ran the step
 * before.  0, or -1 (reported). */
static int rejoin(struct worker *w, const struct train_run *t, const struct algo *a,
		  void *state, const struct crash_span *sp)
{
	struct worker_slot *slot = region_slot(w->rg, w->id);
	struct ckpt_acc acc;

	if (ckpt_worker_load_crash(w, a, state, &acc, t->dir, sp->from, t->cfg_hash,
				   sp->rejoin != REJOIN_OWN, slot->error, sizeof(slot->error)) < 0)
		return -1;
	/* they all began step sp->to before this process was forked (supervisor.c) */
	struct wset ran = crash_up(&t->crashes, w->n, sp->to - 1);
	for (int k = 0; k < w->n; k++) {
		int64_t v = atomic_load(&region_slot(w->rg, k)->vclock);

		if (wset_has(&ran, k) && v > w->x.clock)
			w->x.clock = v;
	}
	return 0;
}

/* At a step where workers rejoin with rejoin = mean, everyone up meets: those take the
 * mean of the replicas of the others.  0, or < 0 (reported). */
static int rejoin_mean(struct worker *w, const struct train_run *t, struct scratch *s,
		       const struct wset *up)
{
	struct wset mean, back = crash_rejoining(&t->crashes, w->step, &mean);
	struct wset from = wset_minus(*up, &back);
	int rc;

	if (wset_empty(&mean) || wset_empty(&from))	/* nobody to take it from: fresh */
		return 0;
	rc = replicas_mean(w, s, up, &from, NULL, true);
	if (rc == 0 && wset_has(&mean, w->id))
		rc = load_model(w, s->mean);
	if (rc < 0)
		fail(w, "rejoin", rc);
	return rc;
}

/* 0 when the run is done, 1 when it stopped early (agreed), < 0 on failure (reported).
 * With checkpoints, one is taken after the step's own logs and before what a stop or
 * the end adds (that step's evaluation), and always at a stop and at the end: a resumed
 * run's logs are then those of a run that never stopped, and a finished run can be
 * extended (train.max_steps) as if it had been longer from the start.  A resumed run starts after the checkpoint's step, its state loaded. */
static int train_loop(struct worker *w, const struct train_run *t, const struct algo *a,
		      void *state, struct scratch *s)
{
	const struct cfg *c = w->c;
	struct worker_slot *slot = region_slot(w->rg, w->id);
	struct progress p;
	/* where this process begins: the run's first step (0, or after the checkpoint it
	 * resumes from), or the end of a crash it comes back from (slot->start) */
	int64_t start = atomic_load(&slot->start);
	int64_t first = start >= 0 ? start : t->resume_step > 0 ? t->resume_step : 0;
	const struct crash_span *back = first > 0 ? crash_span_at(&t->crashes, w->id, first - 1) :
					NULL;
	progress_init(&p, w);
	if (back) {
		if (rejoin(w, t, a, state, back) < 0)
			return -1;
	} else if (t->resume_step >= 0) {
		struct ckpt_acc acc;
		if (ckpt_worker_load(w, a, state, &acc, t->ckpt_run, t->resume_step, t->cfg_hash,
				     slot->error, sizeof(slot->error)) < 0)
			return -1;
		p.loss_acc = acc.loss_acc;
		p.loss_n = (int)acc.loss_n;
		p.compute_ns = acc.compute_ns;
	}
	if (first == 0 && c->train.eval_at_start && log_eval_start(w, t, s, &p) < 0)
		return -1;
	for (w->step = first; w->step < p.total; w->step++) {
		w->epoch = (int)(w->step / p.spe);
		atomic_store(&slot->vclock, w->x.clock);	/* before step: a rejoin reads it */
		atomic_store(&slot->step, w->step);
		atomic_fetch_add_explicit(&slot->beats, 1, memory_order_relaxed);
		if (crash_starting(&t->crashes, w->id, w->step))
			return crash(w, t, a, state, &p);
		p.up = crash_up(&t->crashes, w->n, w->step);
		uint32_t all = 0;
		int rc = rejoin_mean(w, t, s, &p.up);
		if (rc < 0)
			return rc;
		rc = train_step(w, a, state, s, &p, &all);
		if (rc < 0)
			return rc;
		int64_t done = w->step + 1;
		int stop = (all & FLAG_STOP) != 0;
		int last = done == p.total || stop;
		int epoch_end = done % p.spe == 0;
		int eval = last || (c->train.eval_every > 0 ? done % c->train.eval_every == 0 : epoch_end);
		if (!t->ckpt_run) {	/* no checkpoints: the step's logs, a stop's included */
			if (eval || done % c->train.log_every == 0) {
				rc = log_step(w, s, &p, eval);
				if (rc < 0)
					return rc;
			}
			if (stop)
				return 1;
			continue;
		}
		/* what a run that goes on after this step logs: a stop or the end adds an
		 * evaluation, after the checkpoint (a resumed or extended run has none here) */
		int own_eval = c->train.eval_every > 0 ? done % c->train.eval_every == 0 : epoch_end;
		int own_log = own_eval || done % c->train.log_every == 0;
		if (own_log && (rc = log_step(w, s, &p, own_eval)) < 0)
			return rc;
		if (all & FLAG_CKPT)	/* agreed: every worker clears it after this step */
			atomic_fetch_and(region_stop(w->rg), ~2u);
		if ((c->run.checkpoint_every > 0 && done % c->run.checkpoint_every == 0) ||
		    (all & FLAG_CKPT) || last) {
			if (checkpoint(w, t, a, state, &p) < 0)
				return -1;
		}
		p.after_ckpt = last;	/* the end's own rows come after its checkpoint */
		if (last && !own_log && (rc = log_step(w, s, &p, 1)) < 0)
			return rc;
		if (last && own_log && !own_eval && (rc = log_eval(w, s, &p)) < 0)
			return rc;
		if (stop)
			return 1;
	}
	return 0;
}

/* The crashes of the plan as the exchange takes them (xchg.h): 0 or -ENOMEM. */
static int absences(const struct crash_plan *p, struct xchg_links *l)
{
	struct xchg_absence *a = p->n ? calloc((size_t)p->n, sizeof(*a)) : NULL;

	if (p->n && !a)
		return -ENOMEM;
	for (int i = 0; i < p->n; i++)
		a[i] = (struct xchg_absence){ p->s[i].worker, p->s[i].from, p->s[i].to };
	l->absent = a;
	l->nabsent = p->n;
	return 0;
}

/* A notify's notice (notify.h: say), printed when it happens. */
static void notify_say(const char *line)
{
	fprintf(stderr, "emu: %s\n", line);
}

/* Everything a worker holds, built in order; each failure is reported (fail) and undone
 * by worker_free. */
static int worker_init(struct worker *w, const struct train_run *t, struct region *rg, int id,
		       const struct algo *a, void **state, struct scratch *s)
{
	const struct cfg *c = t->c;
	w->c = c;
	w->train = &t->train;
	w->test = &t->test;
	w->rg = rg;
	w->id = id;
	w->n = c->run.workers;
	usage_marks_init(&w->usage);
	int rc = notify_init(&w->nt, c->run.notify);
	if (rc < 0) {
		fail(w, "notifications", rc);
		return rc;
	}
	w->nt.say = notify_say;
	/* More workers on this host than cores: a peer being waited for needs this very
	 * core, so spinning before sleeping only burns the time it needs.  The workers of
	 * other ranks run on other hosts' cores (the bridge counts the same way). */
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && t->nlocal > CPU_COUNT(&cpus)) {
		w->nt.spin_ns = 0;
		region_join_lane(rg, id - t->lo, &w->nt);	/* one runs per core */
	}
	rc = nn_backend_open(&w->be, t->backend, (id - t->lo) % t->ndevices);
	if (rc < 0) {
		fail(w, "backend", rc);
		return rc;
	}
	/* every replica starts from the same model: the seed is the run's, not the worker's */
	struct nn_input model_in = plan_model_input(c, &t->train.in);
	rc = nn_model_init(&w->m, c->train.model, &model_in, &w->be, c->train.batch,
			   c->run.seed);
	if (rc < 0) {
		fail(w, "model", rc);
		return rc;
	}
	for (int j = 0; j <= w->n; j++)
		w->block_off[j] = w->m.nparams * (size_t)j / (size_t)w->n;
	size_t max_msg = 0;
	rc = scratch_init(s, w);
	s->crashes = t->crashes.n > 0;
	if (rc == 0)
		rc = a->init(w, state, &max_msg);
	if (rc < 0) {
		fail(w, a == &algo_plugin ? "the plugin's init" : "memory", rc);
		return rc;
	}
	struct xchg_links links;
	int64_t spe, total;
	char err[160] = "";
	train_length(c, t->train.n, &spe, &total);
	rc = cfg_xchg_links(c, id, &links);
	if (rc == 0)
		rc = cfg_xchg_windows(c, spe, id, &links);	/* the links' schedules ([event]) */
	if (rc == 0)
		rc = absences(&t->crashes, &links);
	if (rc == 0)
		rc = xchg_init(&w->x, &links, rg, &w->nt, id, max_msg, err, sizeof(err));
	cfg_xchg_links_free(&links);
	if (rc < 0) {
		if (err[0])
			fprintf(stderr, "emu: %s\n", err);
		fail(w, "exchange", rc);
	}
	return rc;
}

static void worker_free(struct worker *w, const struct algo *a, void *state, struct scratch *s)
{
	usage_report(&w->usage, w->id);
	xchg_free(&w->x);
	if (state)
		a->free(state);
	scratch_free(s);
	nn_model_free(&w->m);
	nn_backend_close(&w->be);
	notify_free(&w->nt);
}

int train_worker(void *run, struct region *rg, int id)
{
	const struct train_run *t = run;
	struct worker *w = calloc(1, sizeof(*w));	/* big: not on the stack */
	struct scratch s = { 0 };
	void *state = NULL;
	const struct algo *a = algo_find(t->c->train.algorithm);
	if (!w) {
		snprintf(region_slot(rg, id)->error, sizeof(region_slot(rg, id)->error),
			 "worker: out of memory");
		return 1;
	}
	int rc = worker_init(w, t, rg, id, a, &state, &s);
	if (rc == 0) {
		atomic_store(&region_slot(rg, id)->state, WORKER_RUNNING);
		rc = train_loop(w, t, a, state, &s);
	}
	worker_free(w, a, state, &s);
	free(w);
	return rc < 0 ? 1 : 0;
}
