/* emu/run/ckpt_worker.h — a worker's part of a checkpoint (emu/run/ckpt.h): written by
 * the worker itself after a step, read back by the worker that resumes in its place.
 *
 * The part holds, in order, each piece with its length before it: the model's
 * parameters and its state (batch-norm statistics), the log accumulators (struct
 * ckpt_acc), the exchange's state (xchg_state_save: clock, totals, every link's chain,
 * reorder counter and counters, the transmit queue), and the algorithm's state parts
 * (algo.h: momentum, JointSpar's bandit).  The data position is the step: a shard's
 * order follows from (seed, epoch), and the scratch is rebuilt every step.
 */
#ifndef EMU_CKPT_WORKER_H
#define EMU_CKPT_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "emu/algo/algo.h"
#include "emu/run/record.h"

/* What the next log records average: the loss since the last train record and the
 * compute time since the last workers.csv row. */
struct ckpt_acc {
	double loss_acc;
	int64_t loss_n;
	int64_t compute_ns;
};

/* Writes RUN/ckpt/step-N/worker-ID.bin for w after w->step + 1 steps, and fills rec
 * (the record that tells the supervisor).  0, or -1 with the reason in err. */
int ckpt_worker_save(struct worker *w, const struct algo *a, void *state,
		     const struct ckpt_acc *acc, const char *run, uint64_t hash,
		     struct rec_ckpt *rec, char *err, size_t errlen);

/* Loads the part of worker w->id of the checkpoint after `step` steps into w (its
 * model on the device too), the algorithm's state and acc.  0, or -1 with the reason
 * in err (a part that does not fit this worker, model or configuration). */
int ckpt_worker_load(struct worker *w, const struct algo *a, void *state,
		     struct ckpt_acc *acc, const char *run, int64_t step, uint64_t hash,
		     char *err, size_t errlen);

/* A worker that crashes (emu/run/crash.h) before step w->step: its part, of w->step
 * steps, into RUN/crash/step-N/worker-ID.bin (ckpt_crash_dir), and, for the
 * process that comes back in its place, the same read back: all of it, or with
 * net_only only the exchange's state (the model, the algorithm's state and acc stay
 * as they are).  0, or -1 with the reason in err. */
int ckpt_worker_save_crash(struct worker *w, const struct algo *a, void *state,
			   const struct ckpt_acc *acc, const char *run, uint64_t hash,
			   char *err, size_t errlen);
int ckpt_worker_load_crash(struct worker *w, const struct algo *a, void *state,
			   struct ckpt_acc *acc, const char *run, int64_t step, uint64_t hash,
			   bool net_only, char *err, size_t errlen);

/* The exchange's state (xchg_state_save) in the crash part worker id of n left before
 * step `from`, for the logs of a run resumed while it is down: *state (malloc'd), *len.
 * 0, or -1 with the reason in err (a missing, corrupt or foreign part). */
int ckpt_crash_xchg_state(const char *run, int id, int n, int64_t from, uint64_t hash,
			  void **state, size_t *len, char *err, size_t errlen);

#endif
