/* emu/run/train.c — `emu run`: load the data once, open the logs, supervise the workers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/commands.h"
#include "emu/run/events.h"
#include "emu/run/plan.h"
#include "emu/run/runlog.h"
#include "emu/run/supervisor.h"
#include "emu/run/train.h"
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

static int on_end(void *ctx, int status, const char *why)
{
	struct train_run *t = ctx;
	status = runlog_close(t->log, status, why);
	t->log = NULL;
	return status;
}

#define NO_CUDA "this emu is built without CUDA (make CUDA=1 builds build-cuda/emu)"

/* The backend every worker opens after fork, from run.device.  A GPU is looked for in
 * a short-lived child (nn_backend_devices): the supervisor itself never initialises a
 * device, so forking the workers stays safe.  Returns 0, or 2 with the reason printed. */
static int choose_backend(const struct cfg *c, struct train_run *t)
{
	char why[256] = "";
	t->ndevices = 1;
	switch (c->run.device) {
	case DEV_CPU:
	case DEV_REF:
		t->backend = cfg_device_names[c->run.device];
		return 0;
	case DEV_CUDA:
	case DEV_AUTO:
		t->backend = "cuda";
		t->ndevices = nn_backend_devices("cuda", c->run.workers, why, sizeof(why));
		if (t->ndevices > 0)
			break;
		if (c->run.device == DEV_CUDA) {
			fprintf(stderr, "emu: %s: run.device = cuda, but %s\n", c->path,
				t->ndevices == -ENOENT ? NO_CUDA : why);
			return 2;
		}
		fprintf(stderr, "emu: run.device = auto, and %s: the workers compute on the CPU\n",
			t->ndevices == -ENOENT ? NO_CUDA : why);
		t->backend = "cpu";
		t->ndevices = 1;
		return 0;
	}
	fprintf(stderr, "emu: %d workers on %d GPU%s (worker i on GPU i mod %d)\n", c->run.workers,
		t->ndevices, t->ndevices > 1 ? "s" : "", t->ndevices);
	return 0;
}

int cmd_run(const struct cfg *c, int argc, char *const argv[])
{
	struct train_run t = { .c = c };	/* the workers get its address after fork */
	char err[512];
	char dir[CFG_STR];
	if (c->run.output[0])
		snprintf(dir, sizeof(dir), "%s", c->run.output);
	else
		snprintf(dir, sizeof(dir), "runs/%.240s", c->run.name);

	if (choose_backend(c, &t))
		return 2;
	if (plan_check_config(c, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		return 2;
	}
	if (train_load_data(c, &t.train, &t.test, err, sizeof(err)) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		return 2;
	}
	/* The model on the input as read (a text set's vocabulary); its size decides the
	 * snapshot areas. */
	if (plan_check_config(c, &t.train.in, err, sizeof(err)) < 0 ||
	    plan_check_shards(c, &t.train, err, sizeof(err)) < 0 ||
	    nn_model_size(c->train.model, &t.train.in, &t.nparams, &t.nstate, NULL) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		data_free(&t.train);
		data_free(&t.test);
		return 2;
	}

	int status;
	t.log = runlog_open(c, dir, argc, argv, &status, err, sizeof(err));
	if (!t.log) {
		fprintf(stderr, "emu: %s\n", err);
		data_free(&t.train);
		data_free(&t.test);
		return status;
	}
	/* The length that will run: train.max_steps may cut the epochs short. */
	int64_t spe, total;
	char len[160];
	train_length(c, t.train.n, &spe, &total);
	if (total < spe * c->train.epochs)
		snprintf(len, sizeof(len), "%lld steps = %.3g epochs (train.max_steps; %d epochs "
			 "would be %lld)", (long long)total, (double)total / (double)spe,
			 c->train.epochs, (long long)(spe * c->train.epochs));
	else
		snprintf(len, sizeof(len), "%d epochs (%lld steps)", c->train.epochs,
			 (long long)total);
	runlog_length(t.log, total, spe);
	if (events_write(c, spe, total, dir, err, sizeof(err)) < 0) {	/* the schedule */
		fprintf(stderr, "emu: %s\n", err);
		status = runlog_close(t.log, 1, err);
		data_free(&t.train);
		data_free(&t.test);
		return status;
	}
	fprintf(stderr, "emu: %s: %d workers, %s, model %s (%zu parameters), %s, logs in %s\n",
		c->run.name, c->run.workers, cfg_algo_names[c->train.algorithm], c->train.model,
		t.nparams, len, dir);
	struct region_params rp = {
		.nworkers = c->run.workers,
		.ring_size = (size_t)c->run.ring_size,
		.log_ring_size = 64 << 10,
		.snapshot_bytes = (t.nparams + t.nstate) * sizeof(float),
	};
	struct supervisor_ops ops = { train_worker, on_record, on_end, on_tick };
	status = supervise(c, &rp, &ops, &t);
	if (t.log)	/* supervise failed before it could end the run */
		status = runlog_close(t.log, status, "the supervisor could not start");
	data_free(&t.train);
	data_free(&t.test);
	return status;
}
