/* emu/algo/worker.h — one worker's context, passed explicitly to everything it runs.
 * It lies at the algorithms' layer (they take it and touch only what is below them:
 * the configuration, the exchange, the model); emu/run/ creates and drives it.
 *
 * Created in the child after fork (emu/run/train.c).  The data sets were loaded by the
 * supervisor before fork and are shared copy-on-write, read-only.  params are cut into
 * n blocks (block_off, in floats): block j is served by worker j unless an algorithm
 * maps blocks to servers differently.
 */
#ifndef EMU_WORKER_H
#define EMU_WORKER_H

#include <stdint.h>
#include "emu/cfg/cfg.h"
#include "emu/shm/notify.h"
#include "emu/shm/usage.h"
#include "emu/net/xchg.h"
#include "nn/data.h"
#include "nn/model.h"

struct region;

struct worker {
	const struct cfg *c;
	const struct nn_dataset *train, *test;
	struct region *rg;
	int id, n;
	struct notify nt;
	struct xchg x;
	struct nn_backend be;	/* opened after fork: its device is this process's */
	struct nn_model m;	/* on be; the algorithms touch only its host mirrors */
	size_t block_off[CFG_MAX_WORKERS + 1];	/* block j: params[block_off[j], block_off[j+1]) */
	int64_t step;		/* global step, from 0 */
	int epoch;
	double lr;		/* learning rate of this step (schedule applied) */
	float loss;		/* this step's mean batch loss */
	uint8_t *need_wgrad;	/* per layer; NULL: every layer (algorithms may point it) */
	struct usage_marks usage;	/* at logged steps, for emu bench train (usage.h) */
};

#endif
