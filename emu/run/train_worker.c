/* emu/run/train_worker.c — one worker's training loop, in the child after fork.
 *
 * Per step: batch of its shard -> forward -> algorithm (before_backward, backward, the
 * collective and the update) -> every log_every steps a train record with the consensus
 * distance -> at each epoch end (or every eval_every steps) the evaluation of the mean
 * of the replicas on this worker's share of the test set.  The virtual clock advances by
 * the modelled compute time (FLOPs over the device rate: deterministic) or by measured
 * CPU time times a scale (not deterministic; say so).  Stopping (Ctrl-C) is agreed on
 * through the collective's flags, so every worker ends after the same step.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cblas.h>
#include "emu/algo/algo.h"
#include "emu/run/record.h"
#include "emu/run/supervisor.h"
#include "emu/run/train.h"
#include "nn/optim.h"

#define FLAG_STOP 1u

/* Scratch of a worker: batch buffers, shard indices, the replicas' mean. */
struct scratch {
	int32_t *idx;		/* shard order of the current epoch */
	int32_t *bidx;		/* the samples of one batch */
	float *x;		/* batch inputs */
	int32_t *tokens;
	void *y;		/* labels (int32) or targets (float) */
	float *mean;		/* mean of all replicas: params then state */
};

static void fail(struct worker *w, const char *what, int rc)
{
	struct worker_slot *s = region_slot(w->rg, w->id);
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

/* Every worker publishes its replica; all compute the same mean (summed in worker-id
 * order) into s->mean, and their own squared distance to it. */
static double replicas_mean(struct worker *w, struct scratch *s)
{
	size_t np = w->m.nparams, ns = w->m.nstate;
	float *mine = region_snapshot(w->rg, w->id);
	memcpy(mine, w->m.params, np * sizeof(float));
	memcpy(mine + np, w->m.state, ns * sizeof(float));
	barrier_wait(region_barrier(w->rg), w->n, &w->nt);
	/* double accumulators: replicas that agree average to exactly themselves */
	const float *snap[CFG_MAX_WORKERS];
	for (int k = 0; k < w->n; k++)
		snap[k] = region_snapshot(w->rg, k);
	double dist = 0;
	for (size_t i = 0; i < np + ns; i++) {
		double sum = 0;
		for (int k = 0; k < w->n; k++)
			sum += snap[k][i];
		s->mean[i] = (float)(sum / w->n);
		if (i < np) {
			double d = (double)mine[i] - s->mean[i];
			dist += d * d;
		}
	}
	/* nobody overwrites a snapshot until everybody has read them all */
	barrier_wait(region_barrier(w->rg), w->n, &w->nt);
	return dist;
}

/* Evaluate the mean model on test samples [lo, hi) of this worker's share.  Called right
 * after replicas_mean: this worker's snapshot still holds its own params and state (only
 * their owner writes snapshots), and they come back from there. */
static void evaluate(struct worker *w, struct scratch *s, struct rec_eval *r)
{
	size_t np = w->m.nparams, ns = w->m.nstate;
	const float *own = region_snapshot(w->rg, w->id);
	memcpy(w->m.params, s->mean, np * sizeof(float));
	memcpy(w->m.state, s->mean + np, ns * sizeof(float));
	const struct nn_dataset *d = w->test;
	int lo = (int)((int64_t)d->n * w->id / w->n), hi = (int)((int64_t)d->n * (w->id + 1) / w->n);
	int B = w->c->train.batch;
	r->loss_sum = 0;
	r->correct = 0;
	r->count = 0;
	for (int i = lo; i < hi; i += B) {
		int b = hi - i < B ? hi - i : B;
		for (int k = 0; k < b; k++)
			s->bidx[k] = i + k;
		data_batch(d, s->bidx, b, s->x, s->tokens, s->y);
		int correct = 0;
		float loss = nn_forward(&w->m, s->x, s->tokens, s->y, b, false, &correct);
		r->loss_sum += (double)loss * b;
		r->correct += correct;
		r->count += b;
	}
	memcpy(w->m.params, own, np * sizeof(float));
	memcpy(w->m.state, own + np, ns * sizeof(float));
}

static void log_links(struct worker *w)
{
	for (int d = 0; d < w->n; d++) {
		if (d == w->id)
			continue;
		struct xchg_link_stats st;
		xchg_link_stats(&w->x, d, &st);
		struct rec_link r = {
			.type = REC_LINK, .src = w->id, .dst = d, .messages = st.messages,
			.units = st.units, .units_dropped = st.units_dropped,
			.retransmits = st.retransmits, .bytes = st.bytes,
			.delay_sum_ns = st.delay_sum_ns,
		};
		worker_log(w->rg, w->id, &r, sizeof(r), &w->nt);
	}
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static enum data_shard_kind shard_kind(enum cfg_shard s)
{
	return s == SHARD_LABEL ? SHARD_KIND_LABEL : s == SHARD_DIRICHLET ? SHARD_KIND_DIRICHLET
									: SHARD_KIND_IID;
}

static int train_loop(struct worker *w, const struct algo *a, void *state, struct scratch *s)
{
	const struct cfg *c = w->c;
	int B = c->train.batch;
	int64_t spe = w->train->n / w->n / B;	/* steps per epoch, the same on every worker */
	if (spe < 1)
		spe = 1;
	int64_t total = spe * c->train.epochs;
	if (c->train.max_steps > 0 && c->train.max_steps < total)
		total = c->train.max_steps;
	struct lr_schedule sched = {
		.base = c->train.lr, .nworkers = w->n,
		.linear_scaling = c->train.lr_scaling == LR_SCALE_LINEAR,
		.warmup_epochs = c->train.warmup_epochs, .ndecay = c->train.ndecay,
		.decay = c->train.decay_epochs, .factor = c->train.decay_factor,
	};
	struct worker_slot *slot = region_slot(w->rg, w->id);
	double loss_acc = 0;
	int loss_n = 0, shard_n = 0;
	for (w->step = 0; w->step < total; w->step++) {
		int64_t in_epoch = w->step % spe;
		w->epoch = (int)(w->step / spe);
		atomic_store(&slot->step, w->step);
		if (in_epoch == 0)
			shard_n = data_shard(w->train, shard_kind(c->data.shard), c->data.alpha, w->n,
					     w->id, c->run.seed, w->epoch, s->idx, w->train->n);
		if (shard_n <= 0) {
			fail(w, "data shard", shard_n < 0 ? shard_n : -ENODATA);
			return -ENODATA;
		}
		/* a non-iid shard may be smaller than an epoch's steps: wrap around */
		for (int k = 0; k < B; k++)
			s->bidx[k] = s->idx[(in_epoch * B + k) % shard_n];
		data_batch(w->train, s->bidx, B, s->x, s->tokens, s->y);
		w->lr = lr_at(&sched, (double)w->step / (double)spe);

		double t0 = c->train.compute == COMPUTE_MEASURED ? cpu_seconds() : 0;
		w->loss = nn_forward(&w->m, s->x, s->tokens, s->y, B, true, NULL);
		w->need_wgrad = NULL;
		if (a->before_backward)
			a->before_backward(w, state);
		nn_backward(&w->m, w->need_wgrad);
		if (c->train.compute == COMPUTE_MEASURED)
			xchg_compute(&w->x, (int64_t)((cpu_seconds() - t0) * c->train.compute_scale * 1e9));
		else
			xchg_compute(&w->x, (int64_t)(nn_flops(&w->m, B, true, w->need_wgrad) /
						      c->train.device_flops * 1e9));

		uint32_t flags = atomic_load(region_stop(w->rg)) ? FLAG_STOP : 0, all = 0;
		int rc = a->step(w, state, flags, &all);
		if (rc < 0) {
			fail(w, "exchange", rc);
			return rc;
		}
		loss_acc += w->loss;
		loss_n++;

		int64_t done = w->step + 1;
		int stop = (all & FLAG_STOP) != 0;
		int last = done == total || stop;
		int epoch_end = done % spe == 0;
		int eval = last || (c->train.eval_every > 0 ? done % c->train.eval_every == 0 : epoch_end);
		int log = eval || done % c->train.log_every == 0;
		if (!log)
			continue;
		double consensus = replicas_mean(w, s);
		struct rec_train tr = {
			.type = REC_TRAIN, .worker = w->id, .step = done, .steps_total = total,
			.epoch = (double)done / (double)spe, .loss = loss_acc / loss_n, .lr = w->lr,
			.vclock_s = (double)w->x.clock * 1e-9, .consensus = consensus,
			.bytes_sent = w->x.bytes_sent, .units_dropped = w->x.units_dropped,
		};
		worker_log(w->rg, w->id, &tr, sizeof(tr), &w->nt);
		loss_acc = 0;
		loss_n = 0;
		if (eval) {
			struct rec_eval er = {
				.type = REC_EVAL, .worker = w->id, .step = done,
				.epoch = tr.epoch, .vclock_s = tr.vclock_s,
				.bytes_sent = w->x.bytes_sent,
			};
			evaluate(w, s, &er);
			log_links(w);
			worker_log(w->rg, w->id, &er, sizeof(er), &w->nt);
		}
		if (stop)
			return 1;
	}
	return 0;
}

int train_worker(void *run, struct region *rg, int id)
{
	const struct train_run *t = run;
	const struct cfg *c = t->c;
	static struct worker w;	/* one per process; big, so not on the stack */
	struct scratch s = { 0 };
	void *state = NULL;
	const struct algo *a = algo_find(c->train.algorithm);
	int rc;

	memset(&w, 0, sizeof(w));
	w.c = c;
	w.train = &t->train;
	w.test = &t->test;
	w.rg = rg;
	w.id = id;
	w.n = c->run.workers;
	openblas_set_num_threads(c->run.threads);
	rc = notify_init(&w.nt, c->run.notify);
	if (rc < 0) {
		fail(&w, "notifications", rc);
		return 1;
	}
	/* More workers than cores: a peer being waited for needs this very core, so
	 * spinning before sleeping only burns the time it needs. */
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && w.n > CPU_COUNT(&cpus))
		w.nt.spin_ns = 0;
	/* every replica starts from the same model: the seed is the run's, not the worker's */
	rc = nn_model_init(&w.m, c->train.model, &t->train.in, &nn_ops_cpu, c->train.batch,
			   c->run.seed);
	if (rc < 0) {
		fail(&w, "model", rc);
		goto out_notify;
	}
	for (int j = 0; j <= w.n; j++)
		w.block_off[j] = w.m.nparams * (size_t)j / (size_t)w.n;
	size_t max_msg = 0;
	rc = scratch_init(&s, &w);
	if (rc == 0)
		rc = a->init(&w, &state, &max_msg);
	if (rc < 0) {
		fail(&w, "memory", rc);
		goto out_model;
	}
	struct xchg_links links;
	cfg_xchg_links(c, id, &links);
	rc = xchg_init(&w.x, &links, rg, &w.nt, id, max_msg);
	if (rc < 0) {
		fail(&w, "exchange", rc);
		goto out_algo;
	}
	atomic_store(&region_slot(rg, id)->state, WORKER_RUNNING);
	rc = train_loop(&w, a, state, &s);
	xchg_free(&w.x);
out_algo:
	a->free(state);
out_model:
	scratch_free(&s);
	nn_model_free(&w.m);
out_notify:
	notify_free(&w.nt);
	return rc < 0 ? 1 : 0;
}
