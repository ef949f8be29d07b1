/* emu/run/crash.h — a run's crash events as steps: which worker is down for which steps,
 * and what it comes back with (docs/events.md, "Crashes").
 *
 * A crash of worker w over steps [from, to): w runs steps up to from - 1 (its logs of
 * them included), then its process saves what it would need to come back (RUN/crash/
 * step-FROM/worker-W.bin: a checkpoint part, ckpt_worker.h) and exits; the supervisor
 * sees a planned death (the worker says so in its slot, and the plan agrees).  Nobody runs w's
 * steps [from, to).  At step `to` (when every worker that is up has begun it) the
 * supervisor forks a new process for w, which rejoins with its network state (clock
 * set to the latest of the others', every link's chain and counters as they were) and
 * the model rejoin says: own (its model and algorithm state at the crash), fresh (the
 * initial model, the algorithm's initial state) or mean (the mean of the replicas of
 * the workers that were up at step to - 1, with the algorithm's initial state).  Every
 * worker knows the plan, so no message is needed to learn who is down.
 */
#ifndef EMU_CRASH_H
#define EMU_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "emu/cfg/cfg.h"
#include "emu/run/record.h"

struct crash_span {
	int worker, event;	/* the event: its index in the configuration */
	int64_t from, to;	/* steps [from, to); to == INT64_MAX: to the end */
	enum cfg_rejoin rejoin;
};

struct crash_plan {
	int n;			/* spans, ordered by worker, then from */
	struct crash_span *s;
};

/* The plan of configuration c in a run of spe steps per epoch, into p (freed by
 * crash_plan_free; none without crash events).  Crashes of one worker that overlap, or
 * a step at which every worker would be down, are refused: -1 with "FILE:LINE: ..." in
 * err; else 0. */
int crash_plan_build(const struct cfg *c, int64_t spe, struct crash_plan *p, char *err,
		     size_t errlen);
void crash_plan_free(struct crash_plan *p);

/* The crash that has worker w down for step's exchange, or NULL. */
const struct crash_span *crash_span_at(const struct crash_plan *p, int w, int64_t step);
/* The workers of n up at step: all but those down; p may be NULL (no crash). */
struct wset crash_up(const struct crash_plan *p, int n, int64_t step);
/* The span of w that starts at step, or NULL. */
const struct crash_span *crash_starting(const struct crash_plan *p, int w, int64_t step);
/* The workers that rejoin at step, those of them with rejoin = mean in *mean. */
struct wset crash_rejoining(const struct crash_plan *p, int64_t step, struct wset *mean);

/* A run resumed after `step` steps (its checkpoint) while workers are down (they went
 * down before it and come back after it): the records each sent as it went down (its
 * links' REC_LINK and REC_LINK_IN, its REC_DOWN, as crash() in train_worker.c sends
 * them), rebuilt from its crash part, for the logs, which keep its counters while it is
 * down.  *recs (malloc'd), *nrecs of them.  0, or -1 with the reason in err (a missing,
 * corrupt or foreign crash part). */
struct crash_rec {
	int worker;
	size_t len;
	union {
		struct rec_link link;
		struct rec_down down;
	} r;
};
int crash_resume_records(const struct crash_plan *p, const char *run, int n, int64_t step,
			 uint64_t hash, struct crash_rec **recs, int *nrecs, char *err,
			 size_t errlen);

#endif
