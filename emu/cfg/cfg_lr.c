/* emu/cfg/cfg_lr.c — the learning rate the workers' count gives (train.lr_scaling and
 * train.lr_max), and the checks of the rate and the optimiser (Adam and AdamW step in
 * rps and allreduce; signum and jointspar have rules of their own).
 *
 * Linear scaling (Goyal et al.) multiplies one worker's rate by the workers; past what a
 * model trains at, the run diverges.  Measured with ini/quickstart.ini (LeNet on
 * Fashion-MNIST, RPS, lr 0.03, 3 epochs, one warm-up epoch), final test accuracy at 4,
 * 16 and 64 workers: linear 86.1%, 83.3%, 10.0% (1.92: diverged); linear capped at the
 * 16-worker rate 0.48 (the preset's lr_max) 86.1%, 83.3%, 45.5%; sqrt 84.8%, 78.4%,
 * 60.8%.  (64 workers have 87 steps in 3 epochs.)  Hence the warning below for linear
 * scaling past 16 workers without a cap, and the presets' lr_max: the rate they were
 * tuned at with 16 workers, which keeps their 16-worker numbers bit for bit.
 */
#include <errno.h>
#include <math.h>

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

int cfg_check_lr(struct loader *L)
{
	const struct cfg *c = L->c;
	const struct cfg_key *kmax = cfg_key_find("train", "lr_max");
	const struct cfg_key *ks = cfg_key_find("train", "lr_scaling");
	const struct cfg_key *kw = cfg_key_find("run", "workers");
	loc_t at_max = L->key_loc[kmax - cfg_keys];
	/* the setting given last of the two that make the rate */
	loc_t at_s = cfg_loc_later(L->key_loc[ks - cfg_keys], L->key_loc[kw - cfg_keys]);

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
	if (c->train.lr_scaling == LR_SCALE_LINEAR && c->run.workers > 16 &&
	    c->train.lr_max == 0)
		cfg_warn(L, at_s, "train.lr_scaling = linear takes train.lr = %g to %g with %d "
			 "workers and no train.lr_max: past 16 workers linear scaling diverges "
			 "in emu's presets; cap it (lr_max, the presets' 16-worker rate) or use "
			 "lr_scaling = sqrt", c->train.lr, c->train.lr * c->run.workers,
			 c->run.workers);
	return 0;
}
