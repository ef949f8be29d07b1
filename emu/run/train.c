/* emu/run/train.c — `emu run`: load the data once, open the logs, supervise the workers. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/commands.h"
#include "emu/mpi/world.h"
#include "emu/run/ckpt.h"
#include "emu/run/events.h"
#include "emu/run/plan.h"
#include "emu/run/rundir.h"
#include "emu/run/runlog.h"
#include "emu/run/supervisor.h"
#include "emu/run/train.h"
#include "nn/backend.h"
#include "nn/model.h"

int train_load_data(const struct cfg *c, struct nn_dataset *train, struct nn_dataset *test,
		    char *err, size_t errlen)
{
	int rc = 0;
	uint64_t seed = c->run.seed ^ 0x5eed0da7aULL;	/* the data never shares the model's draws */
	int n = (int)c->data.synthetic_size, ntest = n / 4 > 256 ? n / 4 : 256;
	switch (c->data.dataset) {
	case DATA_FASHION_MNIST:
		rc = data_fashion_mnist(train, test, c->data.dir, err, errlen);
		break;
	case DATA_CIFAR10:
		rc = data_cifar10(train, test, c->data.dir, err, errlen);
		break;
	case DATA_TEXT:
		rc = data_text(train, test, c->data.dir, c->data.seq_len, err, errlen);
		break;
	case DATA_GAUSSIAN:
		rc = data_gaussian(train, test, n, ntest, c->data.dim, c->data.classes, seed);
		break;
	case DATA_LINREG:
		rc = data_linreg(train, test, n, ntest, c->data.dim, c->data.noise, seed);
		break;
	}
	if (rc < 0 && (c->data.dataset == DATA_GAUSSIAN || c->data.dataset == DATA_LINREG))
		snprintf(err, errlen, "%s: the synthetic data set (%d samples of %d features): %s",
			 c->path, n, c->data.dim, strerror(-rc));
	if (rc < 0)
		return rc;
	data_truncate(train, (int)c->data.train_limit);
	data_truncate(test, (int)c->data.test_limit);
	int need = c->run.workers * c->train.batch;
	if (train->n < need) {
		snprintf(err, errlen, "%s: %d training samples cannot feed %d workers with batch %d",
			 c->path, train->n, c->run.workers, c->train.batch);
		data_free(train);
		data_free(test);
		return -EINVAL;
	}
	return 0;
}

void train_length(const struct cfg *c, int ntrain, int64_t *spe, int64_t *total)
{
	*spe = ntrain / c->run.workers / c->train.batch;
	if (*spe < 1)
		*spe = 1;
	*total = *spe * c->train.epochs;
	if (c->train.min_steps > *total)
		*total = c->train.min_steps;
	if (c->train.max_steps > 0 && c->train.max_steps < *total)
		*total = c->train.max_steps;
}

static int on_record(void *ctx, int id, const void *rec, size_t len)
{
	struct train_run *t = ctx;
	return runlog_record(t->log, id, rec, len);
}

static void on_tick(void *ctx)
{
	struct train_run *t = ctx;
	runlog_tick(t->log);
}

/* supervisor_ops.rejoin_at: from the crash plan.  A run resumed after step S - 1 starts
 * without the workers that were down for it (they have no part in the checkpoint). */
static int64_t rejoin_at(void *ctx, int id, int64_t after)
{
	struct train_run *t = ctx;
	int64_t first = t->resume_step > 0 ? t->resume_step : 0;
	const struct crash_span *sp = after >= 0 ? crash_starting(&t->crashes, id, after) :
				      first > 0 ? crash_span_at(&t->crashes, id, first - 1) : NULL;

	if (!sp)
		return -2;
	return sp->to >= t->total ? -1 : sp->to;
}

/* The crash events as steps (crash.h), on one host only; 0, or 2 with the reason
 * printed. */
static int plan_crashes(const struct cfg *c, struct train_run *t, const struct world *w)
{
	char err[512];

	if (crash_plan_build(c, t->spe, &t->crashes, err, sizeof(err)) < 0) {
		if (w->rank == 0)
			fprintf(stderr, "emu: %s\n", err);
		return 2;
	}
	if (t->crashes.n && w->size > 1) {
		if (w->rank == 0)
			fprintf(stderr, "emu: %s: crash events work on one host only, not across "
				"%d MPI ranks\n", c->path, w->size);
		return 2;
	}
	if (t->crashes.n)
		t->cfg_hash = ckpt_cfg_hash(c);	/* of the parts crashed workers leave */
	return 0;
}

static int on_end(void *ctx, int status, const char *why)
{
	struct train_run *t = ctx;
	status = runlog_close(t->log, status, why);
	t->log = NULL;
	return status;
}

/* The backend run.device = auto takes when it finds a usable device, else "cpu". */
#define AUTO_BACKEND "cuda"

/* Why backend name has no device here: this build lacks it, or the probe's reason. */
static const char *no_device(const char *name, int rc, const char *why)
{
	const char *absent = nn_backend_absent(name);

	return rc == -ENOENT && absent ? absent : why;
}

/* The backend every worker opens after fork, from run.device.  A GPU is looked for in
 * a short-lived child (nn_backend_devices): the supervisor itself never initialises a
 * device, so forking the workers stays safe.  Returns 0, or 2 with the reason printed. */
static int choose_backend(const struct cfg *c, struct train_run *t)
{
	char why[256] = "";
	bool automatic = !strcmp(c->run.device, "auto");
	const struct nn_ops *ops;

	t->ndevices = 1;
	t->backend = automatic ? AUTO_BACKEND : c->run.device;
	ops = nn_backend_find(t->backend);
	/* a host backend answers at once, in this process: the CPU backend refuses here
	 * an EMU_ISA that names a level this CPU cannot run */
	if (ops && ops->host && ops->devices(t->nlocal, why, sizeof(why)) <= 0) {
		fprintf(stderr, "emu: run.device = %s: %s\n", t->backend, why);
		return 2;
	}
	if (ops && ops->host)
		return 0;
	/* the devices of this host are shared by its workers, not by every rank's */
	t->ndevices = nn_backend_devices(t->backend, t->nlocal, why, sizeof(why));
	if (t->ndevices <= 0 && !automatic) {
		fprintf(stderr, "emu: %s: run.device = %s, but %s\n", c->path, t->backend,
			no_device(t->backend, t->ndevices, why));
		return 2;
	}
	if (t->ndevices <= 0) {
		fprintf(stderr, "emu: run.device = auto, and %s: the workers compute on the CPU\n",
			no_device(t->backend, t->ndevices, why));
		t->backend = "cpu";
		t->ndevices = 1;
		return 0;
	}
	if (t->nlocal < c->run.workers)	/* across hosts (emu/mpi/world.h) */
		fprintf(stderr, "emu: workers %d-%d on %d GPU%s of this host (worker i on GPU "
			"(i - %d) mod %d)\n", t->lo, t->lo + t->nlocal - 1, t->ndevices,
			t->ndevices > 1 ? "s" : "", t->lo, t->ndevices);
	else
		fprintf(stderr, "emu: %d workers on %d GPU%s (worker i on GPU i mod %d)\n",
			c->run.workers, t->ndevices, t->ndevices > 1 ? "s" : "", t->ndevices);
	return 0;
}

/* FNV-1a, continued from h over len bytes (a 64-bit word at a time, then the tail). */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, b + i, 8);
		h = (h ^ v) * 0x100000001b3ULL;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* A hash of the data as loaded (both sets): what a checkpoint's resume and every MPI
 * rank must read alike.  Not a digest against malice: a check of the same files. */
static uint64_t data_hash(const struct train_run *t)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const struct nn_dataset *sets[] = { &t->train, &t->test };

	for (int k = 0; k < 2; k++) {
		const struct nn_dataset *d = sets[k];
		size_t n = (size_t)d->n, feat = (size_t)d->in.C * d->in.H * d->in.W;

		h = (h ^ n) * 0x100000001b3ULL;
		h = fnv(h, d->x, d->x ? n * feat * sizeof(float) : 0);
		h = fnv(h, d->tokens, d->tokens ? n * (size_t)d->in.T * sizeof(int32_t) : 0);
		h = fnv(h, d->y, d->y ? n * sizeof(int32_t) : 0);
		h = fnv(h, d->target, d->target ? n * sizeof(float) : 0);
	}
	return h;
}

/* The plugin algorithm's file, as loaded for this run (0: none). */
static uint64_t plugin_hash(const struct cfg *c)
{
	return c->train.algorithm == ALGO_PLUGIN ? algo_plugin_digest() : 0;
}

/* A hash of what every rank must agree on: this build, the resolved configuration, the
 * data as loaded, a plugin's file (FNV-1a over the configuration's text, then the data's
 * and the plugin's hashes). */
static uint64_t run_hash(const struct cfg *c, const struct train_run *t)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uint64_t h;

	if (f) {
		fputs(EMU_VERSION "\n", f);
		cfg_print(c, f);
		fclose(f);
	}
	h = fnv(0xcbf29ce484222325ULL, text, text ? len : 0);
	free(text);
	h ^= data_hash(t) ^ plugin_hash(c);
	return h * 0x100000001b3ULL;
}

/* A resumed run reads the data and runs the plugin its checkpoint was taken with: 0, or 2
 * with the reason printed. */
static int check_resumed_data(const struct cfg *c, const struct train_run *t,
			      const struct ckpt_manifest *resume, const char *dir)
{
	if (resume && resume->plugin_hash != plugin_hash(c)) {
		fprintf(stderr, "emu resume: %s: the plugin's shared object (train.plugin = %s) "
			"differs from the one the checkpoint was taken with; expected the same "
			"file\n", dir, c->train.plugin);
		return 2;
	}
	if (!resume || resume->data_hash == data_hash(t))
		return 0;
	fprintf(stderr, "emu resume: %s: the data as read now (data.dataset = %s, data.dir = %s) "
		"differs from the data the checkpoint was taken with; expected the same files\n",
		dir, cfg_dataset_names[c->data.dataset], c->data.dir);
	return 2;
}

/* Everything before the logs: the backend, the checks, the data, the model's size.
 * Returns 0, or 2 with the reason printed. */
static int run_prepare(const struct cfg *c, struct train_run *t)
{
	struct nn_input model_in;
	char err[512];

	if (choose_backend(c, t))
		return 2;
	if (plan_check_config(c, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		return 2;
	}
	if (train_load_data(c, &t->train, &t->test, err, sizeof(err)) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		return 2;
	}
	/* The model on the input as read (a text set's vocabulary); its size decides the
	 * snapshot areas. */
	model_in = plan_model_input(c, &t->train.in);
	if (plan_check_config(c, &t->train.in, err, sizeof(err)) < 0 ||
	    plan_check_shards(c, &t->train, err, sizeof(err)) < 0 ||
	    nn_model_size(c->train.model, &model_in, &t->nparams, &t->nstate,
			  &t->nlayers) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		return 2;
	}
	return 0;
}

/* run.ring_size, or with 0 (auto) one for the largest message any algorithm sends in
 * this run (xchg_ring_size): a server's block of ceil(nparams / workers) floats, and
 * JointSpar's layer bits on top. */
static size_t ring_bytes(const struct cfg *c, const struct train_run *t)
{
	size_t n = (size_t)c->run.workers;

	return xchg_ring_size(c->run.ring_size, (t->nparams + n - 1) / n * sizeof(float) +
			      ((size_t)t->nlayers + 31) / 32 * sizeof(uint32_t));
}

/* [topology] shape = hosts: each worker's board (emu/net/xchg_port.c), two halves of
 * the units of its messages of a phase to every peer: a message at most twice a
 * server's share of the model and 64 KiB, cut at the smallest mtu of the links. */
static size_t board_bytes(const struct cfg *c, const struct train_run *t)
{
	size_t n = (size_t)c->run.workers, msg = 2 * ((t->nparams + n - 1) / n * sizeof(float)) +
		   (64 << 10), units = 1;

	if (c->topology.shape != SHAPE_HOSTS)
		return 0;
	for (int s = 0; s < c->run.workers; s++)
		for (int d = 0; d < c->run.workers; d++) {
			struct net_cfg m;

			cfg_link_net(c, s, d, &m);
			if (s != d && m.unit == UNIT_PACKET && m.mtu > 0 &&
			    msg / (size_t)m.mtu + 1 > units)
				units = msg / (size_t)m.mtu + 1;
		}
	return 2 * (128 + (n - 1) * units * 32);
}

/* The lines of a world call's err (world.h), each after "emu: ". */
static void print_world_err(const char *err)
{
	while (*err) {
		size_t k = strcspn(err, "\n");

		fprintf(stderr, "emu: %.*s\n", (int)k, err);
		err += k + (err[k] == '\n');
	}
}

/* world_agree, with the failed ranks it names printed. */
static int agree(struct world *w, int status)
{
	char err[WORLD_ERRLEN];

	status = world_agree(w, status, err, sizeof(err));
	print_world_err(err);
	return status;
}

/* Across hosts, every rank prepares on its own and they agree: any rank's failure
 * (printed there) ends them all with its exit code, and so do hosts that differ in
 * build, configuration or data.  Returns 0 or the exit code. */
static int agree_prepared(const struct cfg *c, struct train_run *t, struct world *w, int status)
{
	char err[WORLD_ERRLEN];

	status = agree(w, status);
	if (status || w->size == 1)
		return status;
	if (!world_same(w, run_hash(c, t), err, sizeof(err))) {
		print_world_err(err);
		if (w->rank == 0)
			fprintf(stderr, "emu: %s: the %d MPI ranks differ in emu's build, the "
				"resolved configuration or the data; expected the same emu, INI file "
				"and data files on every host\n", c->path, w->size);
		return 2;
	}
	return 0;
}

/* Rank 0 (and a single host) owns the run folder and writes the events' schedule into it
 * (spe steps an epoch, total steps); every rank learns whether it could. */
static int open_logs(const struct cfg *c, struct train_run *t, struct world *w,
		     const char *dir, int argc, char *const argv[], int64_t spe, int64_t total,
		     const struct ckpt_manifest *resume)
{
	char err[512];
	int status = 0;

	if (w->rank == 0) {
		t->log = runlog_open(c, dir, argc, argv, resume, &status, err, sizeof(err));
		if (!t->log) {
			fprintf(stderr, "emu: %s\n", err);
		} else if (events_write(c, spe, total, dir, err, sizeof(err)) < 0) {
			fprintf(stderr, "emu: %s\n", err);
			status = runlog_close(t->log, 1, err);
			t->log = NULL;
		}
	}
	return agree(w, t->log || w->rank != 0 ? 0 : status);
}

int cmd_run(const struct cfg *c, int argc, char *const argv[])
{
	char dir[CFG_STR];

	rundir_path(c, dir, sizeof(dir));
	return train_run_in(c, dir, argc, argv, NULL, -1);
}

int train_run_in(const struct cfg *c, const char *dir, int argc, char *const argv[],
		 const struct ckpt_manifest *resume, int64_t resume_step)
{
	struct train_run t = { .c = c, .resume_step = resume_step, .dir = dir };	/* the
						 * workers get its address after fork */
	struct world w;
	sigset_t stops;
	int status;
	char werr[WORLD_ERRLEN];

	/* a plugin is loaded before fork, so that every worker has it */
	if (c->train.algorithm == ALGO_PLUGIN && algo_plugin_open(c, werr, sizeof(werr))) {
		fprintf(stderr, "emu: %s\n", werr);
		return 2;
	}
	supervisor_stop_signals(&stops);
	if (world_init(&w, &stops, werr, sizeof(werr)) < 0) {
		print_world_err(werr);
		world_finalize(&w);	/* MPI_Init may have run (-ENOTSUP): every rank leaves */
		return 1;
	}
	status = world_place(&w, c->run.workers, werr, sizeof(werr)) < 0 ? 2 : 0;
	print_world_err(werr);
	t.lo = w.lo;	/* run_prepare shares this host's devices among its own workers */
	t.nlocal = w.hi - w.lo;
	if (!status && w.size > 1 && (resume || c->run.checkpoint_every > 0 ||
				      c->run.checkpoint_wall > 0)) {
		if (w.rank == 0)
			fprintf(stderr, "emu: %s: checkpoints (run.checkpoint_every, "
				"run.checkpoint_wall, emu resume) work on one host only, not across "
				"%d MPI ranks\n", c->path, w.size);
		status = 2;
	}
	if (resume || c->run.checkpoint_every > 0 || c->run.checkpoint_wall > 0) {
		t.ckpt_run = dir;
		t.cfg_hash = ckpt_cfg_hash(c);
	}
	if (!status)
		status = run_prepare(c, &t);
	if (!status)
		status = check_resumed_data(c, &t, resume, dir);
	status = agree_prepared(c, &t, &w, status);
	/* The length that will run: train.min_steps may lengthen the epochs, train.max_steps
	 * cut them short. */
	int64_t spe = 0, total = 0;
	char len[160];
	if (!status) {
		train_length(c, t.train.n, &spe, &total);
		t.spe = spe;
		t.total = total;
		status = plan_crashes(c, &t, &w);
	}
	struct crash_rec *down = NULL;	/* a resume while workers are down: their records */
	int ndown = 0;
	char err[512];
	if (!status && resume && crash_resume_records(&t.crashes, dir, c->run.workers,
						      resume_step, t.cfg_hash, &down, &ndown,
						      err, sizeof(err)) < 0) {
		fprintf(stderr, "emu resume: %s\n", err);
		status = 2;
	}
	if (!status)
		status = open_logs(c, &t, &w, dir, argc, argv, spe, total, resume);
	if (status) {		/* (only rank 0 opens the logs, and it opens them last) */
		free(down);
		crash_plan_free(&t.crashes);
		data_free(&t.train);
		data_free(&t.test);
		world_finalize(&w);
		return status;
	}
	if (total != spe * c->train.epochs)
		snprintf(len, sizeof(len), "%lld steps = %.3g epochs (train.%s_steps; %d epochs "
			 "would be %lld)", (long long)total, (double)total / (double)spe,
			 total < spe * c->train.epochs ? "max" : "min", c->train.epochs,
			 (long long)(spe * c->train.epochs));
	else
		snprintf(len, sizeof(len), "%d epochs (%lld steps)", c->train.epochs,
			 (long long)total);
	if (t.log && t.ckpt_run)
		runlog_checkpoints(t.log, t.cfg_hash, data_hash(&t), plugin_hash(c));
	if (t.log)
		runlog_crashes(t.log, &t.crashes);
	for (int i = 0; t.log && i < ndown; i++)
		runlog_record(t.log, down[i].worker, &down[i].r, down[i].len);
	free(down);
	if (t.log) {
		runlog_length(t.log, total, spe);
		fprintf(stderr, "emu: %s: %d workers, %s, model %s (%zu parameters), %s, logs in "
			"%s\n", c->run.name, c->run.workers, cfg_algo_names[c->train.algorithm],
			c->train.model, t.nparams, len, dir);
	}
	struct region_params rp = {
		.nworkers = c->run.workers,
		.ring_size = ring_bytes(c, &t),
		.log_ring_size = 64 << 10,
		.snapshot_bytes = (t.nparams + t.nstate) * sizeof(float),
		/* a server's reply, and a worker's scatter staged by its algorithm: each at
		 * most the parameter vector (xchg.h; only the pages used are touched) */
		.outbox_bytes = 2 * (((t.nparams * sizeof(float)) + 63) & ~(size_t)63) + 64,
		.board_bytes = board_bytes(c, &t),
	};
	/* Only rank 0 writes logs: the others' supervisors get no record (supervisor.h). */
	struct supervisor_ops ops = { train_worker, on_record, on_end, on_tick, rejoin_at };
	if (!t.log)
		ops = (struct supervisor_ops){ .worker = train_worker, .rejoin_at = rejoin_at };
	status = supervise_world(c, &rp, &ops, &t, &w);
	if (t.log)	/* supervise failed before it could end the run */
		status = runlog_close(t.log, status, "the supervisor could not start");
	crash_plan_free(&t.crashes);
	data_free(&t.train);
	data_free(&t.test);
	world_finalize(&w);
	return status;
}
