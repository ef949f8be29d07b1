/* emu/run/plan.c — see plan.h. */
#include "emu/run/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/cfg/cfg_check_timeout.h"
#include "emu/cfg/cfg_keys.h"
#include "nn/model.h"
#include "nn/model_desc.h"

/* The input of each data set before its files are read.  Only what the model's shape
 * depends on matters: a text set's vocabulary is known once read, and no model's layers
 * depend on it. */
static struct nn_input nominal_input(const struct cfg *c)
{
	switch (c->data.dataset) {
	case DATA_FASHION_MNIST:
		return (struct nn_input){ .C = 1, .H = 28, .W = 28, .nclasses = 10 };
	case DATA_CIFAR10:
		return (struct nn_input){ .C = 3, .H = 32, .W = 32, .nclasses = 10 };
	case DATA_TEXT:
		return (struct nn_input){ .T = c->data.seq_len, .vocab = 3, .nclasses = 2 };
	case DATA_GAUSSIAN:
		return (struct nn_input){ .C = 1, .H = 1, .W = c->data.dim,
					  .nclasses = c->data.classes };
	case DATA_LINREG:
		break;
	}
	return (struct nn_input){ .C = 1, .H = 1, .W = c->data.dim, .nclasses = 1,
				  .regression = true };
}

/* Bytes of memory the kernel could give now (MemAvailable), or 0 when unknown. */
static double available_bytes(void)
{
	char line[128];
	double kib = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib * 1024;
}

/* A synthetic set is generated in the supervisor before the fork: samples of dim floats
 * plus a label, a test set of a quarter (at least 256), and each worker's shard index. */
static int check_synthetic_memory(const struct cfg *c, char *err, size_t errlen)
{
	double n = (double)c->data.synthetic_size, ntest = n / 4 > 256 ? n / 4 : 256;
	double need = (n + ntest) * ((double)c->data.dim + 1) * 4 + n * 4 * c->run.workers;
	double have = available_bytes();
	char at[CFG_STR + 16];

	if (c->data.dataset != DATA_GAUSSIAN && c->data.dataset != DATA_LINREG)
		return 0;
	if (have == 0 || need <= have * 0.9)
		return 0;
	cfg_where(c, (const char *[]){ "data.synthetic_size", "data.dim", NULL }, at, sizeof(at));
	snprintf(err, errlen, "%s: data.synthetic_size = %lld samples of data.dim = %d features "
		 "need %.1f GiB, more than the %.1f GiB of memory available; expected fewer "
		 "samples or features", at, (long long)c->data.synthetic_size, c->data.dim,
		 need / (1 << 30), have / (1 << 30));
	return -EINVAL;
}

struct nn_input plan_model_input(const struct cfg *c, const struct nn_input *in)
{
	struct nn_input out = *in;

	out.desc = strcmp(c->train.model, "custom") ? NULL : &c->model;
	return out;
}

/* A described model on in: the place and what is wrong, from the line that is. */
static int check_described(const struct cfg *c, const struct nn_input *in, char *err,
			   size_t errlen)
{
	char msg[512], at[CFG_STR + 16];
	int bad, r = nn_desc_check(&c->model, in, &bad, msg, sizeof(msg));
	int loc = bad >= 0 ? c->model.l[bad].line : 0;

	if (!r)
		return 0;
	if (loc > 0)
		snprintf(at, sizeof(at), "%s:%d", c->path, loc);
	else if (loc < 0)
		snprintf(at, sizeof(at), "argument %d", -loc);
	else
		cfg_where(c, (const char *[]){ "train.model", NULL }, at, sizeof(at));
	snprintf(err, errlen, "%s: %s%s", at, bad >= 0 ? "model." : "[model]: ", msg);
	return -EINVAL;
}

int plan_check_config(const struct cfg *c, const struct nn_input *in, char *err,
		      size_t errlen)
{
	struct nn_input nominal = nominal_input(c), model_in;
	size_t nparams, nstate;
	int nlayers = 0;
	char at[CFG_STR + 16];

	if (check_synthetic_memory(c, err, errlen))
		return -EINVAL;
	bool nominal_pass = !in;

	if (!in)
		in = &nominal;
	model_in = plan_model_input(c, in);
	in = &model_in;
	if (in->desc && check_described(c, in, err, errlen))
		return -EINVAL;
	if (nn_model_size(c->train.model, in, &nparams, &nstate, &nlayers) < 0) {
		cfg_where(c, (const char *[]){ "train.model", "data.dataset", NULL }, at, sizeof(at));
		snprintf(err, errlen, "%s: model '%s' does not fit the data set (input %dx%dx%d%s, "
			 "%d classes); expected %s", at, c->train.model, in->C, in->H, in->W,
			 in->T ? " tokens" : "", in->nclasses,
			 in->T ? "lstm for sequences" : in->regression ? "linreg for a regression" :
			 in->H == 1 ? "mlp or logreg for features" :
			 "mlp, logreg, lenet or a resnet for images");
		return -EINVAL;
	}
	/* the message size needs the model; once, on the nominal pass (the run checks twice) */
	if (nominal_pass)
		cfg_warn_timeouts(c, nparams, stderr);
	if ((c->train.algorithm == ALGO_JOINTSPAR || c->train.algorithm == ALGO_JOINTSPAR_LARS) &&
	    c->jointspar.p_min * nlayers > c->jointspar.budget * (1 + 1e-12)) {
		cfg_where(c, (const char *[]){ "jointspar.p_min", "jointspar.budget", "train.model",
					       NULL }, at, sizeof(at));
		snprintf(err, errlen, "%s: jointspar.p_min = %g for each of the %d layers of %s "
			 "adds up to %g, more than jointspar.budget = %g layers per step; expected "
			 "p_min <= %g or budget >= %g", at, c->jointspar.p_min, nlayers,
			 c->train.model, c->jointspar.p_min * nlayers, c->jointspar.budget,
			 c->jointspar.budget / nlayers, c->jointspar.p_min * nlayers);
		return -EINVAL;
	}
	return 0;
}

enum data_shard_kind plan_shard_kind(enum cfg_shard s)
{
	return s == SHARD_LABEL ? SHARD_KIND_LABEL : s == SHARD_DIRICHLET ? SHARD_KIND_DIRICHLET
									: SHARD_KIND_IID;
}

int plan_check_shards(const struct cfg *c, const struct nn_dataset *train, char *err,
		      size_t errlen)
{
	int32_t *idx = malloc((size_t)train->n * sizeof(*idx));
	char at[CFG_STR + 16];
	int rc = 0;

	if (!idx) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* the sizes are the same every epoch (only the order is drawn again): epoch 0 */
	for (int w = 0; w < c->run.workers && rc == 0; w++) {
		int n = data_shard(train, plan_shard_kind(c->data.shard), c->data.alpha, c->run.workers, w,
				   c->run.seed, 0, idx, train->n);

		if (n > 0)
			continue;
		cfg_where(c, (const char *[]){ "data.shard", "data.alpha", "run.workers",
					       "run.seed", NULL }, at, sizeof(at));
		snprintf(err, errlen, "%s: data.shard = %s leaves worker %d of %d without samples "
			 "(seed %llu%s); expected %s", at, cfg_shard_names[c->data.shard], w,
			 c->run.workers, (unsigned long long)c->run.seed,
			 c->data.shard == SHARD_DIRICHLET ? ", data.alpha small" : "",
			 c->data.shard == SHARD_DIRICHLET ? "a larger data.alpha, fewer workers or "
			 "another seed" : "fewer workers or data.shard = iid");
		rc = -EINVAL;
	}
	free(idx);
	return rc;
}
