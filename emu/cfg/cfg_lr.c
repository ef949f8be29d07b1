/* emu/cfg/cfg_lr.c — the learning rate the workers' count gives (train.lr_scaling and
 * train.lr_max), and the checks of the rate and the optimiser (Adam and AdamW step in
 * rps and allreduce; signum and jointspar have rules of their own).
 *
 * Linear scaling (Goyal et al.) multiplies one worker's rate by the workers; past what a
 * model trains at, the run diverges.  The presets cap it at the rate they were tuned at
 * with 16 workers and keep the 16-worker run's warm-up and length in steps
 * (train.warmup_steps, train.min_steps), which trains the quickstart to 86.1%, 83.3%,
 * 85.5% and 85.2% at 4, 16, 64 and 256 workers (docs/configuration.md); hence the
 * warning below for a rate far from what the model trains at.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/cfg_loader.h"

double cfg_lr_scale(const struct cfg *c)
{
	switch (c->train.lr_scaling) {
	case LR_SCALE_LINEAR:
		return c->run.workers;
	case LR_SCALE_SQRT:
		return sqrt((double)c->run.workers);
	default:
		return 1;
	}
}

/* The rate (plain SGD, batch 32 a worker) each built-in model trains at: of 0.1, 0.3, 1
 * and 3, the highest with which 4 workers of all-reduce trained it for 150 steps from lr
 * alone (no warm-up) as well as with 0.1 (test accuracy, Fashion-MNIST): mlp 80.5, 79.6,
 * 43.5, 17.1%; lenet 69.0, 74.1, 10.0 (diverged), 10.0%; logreg 79.1, 74.1, 75.3,
 * 76.7% (its loss 0.71, 2.07, 4.64, 19.7); resnet20 68.8, 61.4, 61.0, 42.9%; linreg's
 * test loss 0.010, 0.012, 1.6e29, nan.  The next rate up, 3.3 times higher, diverges or
 * trains far worse (hence RATE_FAR); so does lenet at 1.92 (64 workers of the
 * quickstart, linear scaling, 4 times its 0.48).  RATE_SLOW times lower, a run's length
 * hardly moves it.  The lstm (no text set by default) is not measured. */
#define RATE_FAR 3.5
#define RATE_SLOW 100
static const struct {
	const char *model;
	double lr;
} trains_at[] = {
	{ "mlp", 0.3 }, { "lenet", 0.3 }, { "logreg", 0.1 }, { "linreg", 0.3 },
	{ "resnet", 0.3 },	/* every depth */
};

static void warn_rate(struct loader *L, loc_t at)
{
	const struct cfg *c = L->c;
	double peak = c->train.lr * cfg_lr_scale(c);

	if (c->train.lr_max > 0 && peak > c->train.lr_max)
		peak = c->train.lr_max;
	double rate = peak / (1 - c->train.momentum);	/* momentum's steady-state step */

	for (size_t i = 0; i < sizeof(trains_at) / sizeof(trains_at[0]); i++) {
		double good = trains_at[i].lr;

		if (strncmp(c->train.model, trains_at[i].model, strlen(trains_at[i].model)))
			continue;
		if (rate > RATE_FAR * good || rate * RATE_SLOW < good)
			cfg_warn(L, at, "train.lr = %g gives model %s a rate of %g (%d workers, "
				 "lr_scaling = %s%s, momentum %g): %s than the %g it trains at; "
				 "%s", c->train.lr, c->train.model, rate, c->run.workers,
				 cfg_lr_scaling_names[c->train.lr_scaling],
				 c->train.lr_max > 0 ? ", lr_max" : "", c->train.momentum,
				 rate > good ? "far more" : "far less", good,
				 rate > good ? "runs diverge or train far worse there (cap it "
				 "with lr_max, or use lr_scaling = sqrt)" : "it hardly trains");
		return;
	}
	/* the lstm, or a model of the INI's: the presets' limit of linear scaling */
	if (c->train.lr_scaling == LR_SCALE_LINEAR && c->run.workers > 16 && c->train.lr_max == 0)
		cfg_warn(L, at, "train.lr_scaling = linear takes train.lr = %g to %g with %d "
			 "workers and no train.lr_max: past 16 workers linear scaling diverges "
			 "in emu's presets; cap it (lr_max, the presets' 16-worker rate) or use "
			 "lr_scaling = sqrt", c->train.lr, c->train.lr * c->run.workers,
			 c->run.workers);
}

int cfg_check_lr(struct loader *L)
{
	const struct cfg *c = L->c;
	const struct cfg_key *kmax = cfg_key_find("train", "lr_max");
	loc_t at_max = L->key_loc[kmax - cfg_keys], at_s = at_max;
	/* the setting given last of those that make the rate */
	static const char *const makers[][2] = { { "train", "lr" }, { "train", "lr_scaling" },
		{ "run", "workers" }, { "train", "momentum" } };

	for (size_t i = 0; i < sizeof(makers) / sizeof(makers[0]); i++)
		at_s = cfg_loc_later(at_s, L->key_loc[cfg_key_find(makers[i][0], makers[i][1]) -
						   cfg_keys]);

	if (c->train.lr_max > 0 && c->train.lr_max < c->train.lr)
		return cfg_fail(L, at_max, "train.lr_max = %g is below train.lr = %g: a cap "
				"under one worker's rate; expected lr_max >= lr, or 0 (no cap)",
				c->train.lr_max, c->train.lr);
	if (c->train.optimizer != OPTIM_SGD && (c->train.algorithm == ALGO_SIGNUM ||
	    c->train.algorithm == ALGO_JOINTSPAR || c->train.algorithm == ALGO_JOINTSPAR_LARS))
		return cfg_fail(L, L->key_loc[cfg_key_find("train", "optimizer") - cfg_keys],
				"train.optimizer = %s with train.algorithm = %s: signum and "
				"jointspar step by their own rules; expected optimizer = sgd, or "
				"another algorithm",
				cfg_optimizer_names[c->train.optimizer],
				cfg_algo_names[c->train.algorithm]);
	if (c->train.optimizer == OPTIM_SGD && c->train.algorithm != ALGO_SIGNUM &&
	    c->train.algorithm != ALGO_JOINTSPAR && c->train.algorithm != ALGO_JOINTSPAR_LARS &&
	    c->train.algorithm != ALGO_PLUGIN)
		warn_rate(L, at_s);
	return 0;
}
