/* emu/run/train.h — a distributed training run: what the supervisor shares with the workers. */
#ifndef EMU_TRAIN_H
#define EMU_TRAIN_H

#include "emu/cfg/cfg.h"
#include "emu/run/crash.h"
#include "emu/shm/region.h"
#include "nn/data.h"

struct train_run {
	const struct cfg *c;
	const char *backend;		/* nn backend of every worker (nn/backend.h) */
	int ndevices;			/* worker i computes on device (i - lo) % ndevices */
	int lo;				/* the first worker of this host (emu/mpi/world.h) */
	int nlocal;			/* this host's workers: all of them on one host */
	struct nn_dataset train, test;	/* loaded before fork, read-only after */
	size_t nparams, nstate;		/* of the model, for the snapshot areas */
	int nlayers;			/* its layers with parameters (ring_bytes) */
	struct runlog *log;
	/* checkpoints (emu/run/ckpt.h): the run folder they go into (NULL: none taken),
	 * the configuration's hash, and the checkpoint to resume from (its step; < 0: a
	 * new run) */
	const char *ckpt_run;
	uint64_t cfg_hash;
	int64_t resume_step;
	/* the run folder, its length (steps per epoch, steps), and its crash events: a
	 * crashed worker keeps what it comes back with in the folder (crash.h), under
	 * cfg_hash */
	const char *dir;
	int64_t spe, total;
	struct crash_plan crashes;
};

/* A run (or, with resume, the rest of one from its checkpoint after resume_step steps,
 * checked by emu resume) into the folder dir.  Returns the exit code. */
struct ckpt_manifest;
int train_run_in(const struct cfg *c, const char *dir, int argc, char *const argv[],
		 const struct ckpt_manifest *resume, int64_t resume_step);

/* The body of worker `id` (a supervisor_ops.worker).  Returns its exit status. */
int train_worker(void *run, struct region *rg, int id);

/* The run's length: steps per epoch (the training set of ntrain samples cut among the
 * workers in batches; at least 1) and the steps that will run, epochs x that unless
 * train.max_steps cuts it shorter.  The workers and the start banner agree on it. */
void train_length(const struct cfg *c, int ntrain, int64_t *spe, int64_t *total);

/* Load the data set the configuration names (with limits applied). */
int train_load_data(const struct cfg *c, struct nn_dataset *train, struct nn_dataset *test,
		    char *err, size_t errlen);

#endif
