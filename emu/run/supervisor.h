/* emu/run/supervisor.h — fork the workers, watch them, collect their log records.
 *
 * supervise() creates the region, forks nworkers children that run ops->worker, and
 * waits on pidfds, signals and the log rings through io_uring (no polling).  Records a
 * worker sends with worker_log() reach ops->on_record in the supervisor, in the order
 * that worker sent them.  A worker that dies (signal or non-zero exit) is reported as
 * "worker 3 died at step 120: SIGSEGV"; the others are killed and reaped; on_end runs so
 * that what was logged is flushed; supervise returns 1.  SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1 and SIGUSR2 set the region's stop word: workers finish their step and
 * exit; supervise returns 128+signal; a second such signal kills them at once, and so
 * does run.stop_grace passing without them stopping.  Workers ignore those signals (a
 * terminal's Ctrl-C or hang-up reaches the whole process group) and die with the
 * supervisor (PR_SET_PDEATHSIG).  The watchdog: when no worker's beat (region.h) moves
 * for run.stall_timeout, one worker is blamed ("worker 2 not responding at step 311
 * (stopped)"), all are killed and supervise returns 1.
 * No process and no shared memory outlives supervise().  Prints to stderr, once:
 * "emu: N workers, notifications: io_uring|futex", and otherwise only errors.  Without
 * io_uring (notify mode futex), it waits in ppoll on pidfds + signalfd and drains the
 * log rings every 10 ms.  Setup errors are printed and return 1 (on_end still runs).
 */
#ifndef EMU_SUPERVISOR_H
#define EMU_SUPERVISOR_H

#include <signal.h>
#include <stddef.h>
#include "emu/cfg/cfg.h"
#include "emu/shm/region.h"

struct supervisor_ops {
	/* In the child, after fork.  Returns the exit status (0 = success). */
	int (*worker)(void *ctx, struct region *rg, int id);
	/* In the supervisor: one record of worker id.  < 0 fails the run (the reason
	 * printed already): the workers are killed. */
	int (*on_record)(void *ctx, int id, const void *rec, size_t len);
	/* In the supervisor, last: status is the run's exit status so far and why what
	 * ended it badly (NULL after success).  Returns what supervise returns. */
	int (*on_end)(void *ctx, int status, const char *why);
	/* In the supervisor, optional: at every wake-up, at least every run.progress_every
	 * (and every second): what runs by the clock, such as a progress line. */
	void (*on_tick)(void *ctx);
	/* In the supervisor, optional (one host): when worker id's next process begins.
	 * after < 0: at the start of the run; -2 (fork it at once, its slot's start -1: the
	 * run's first step), or it is down then (a run resumed inside its crash): the step
	 * it comes back at, or -1 for never.  after >= 0: its process exited 0 saying it
	 * crashed as planned (its slot's state WORKER_CRASHED) before step `after`: the
	 * step it comes back at, -1 for never, or -2 when no such crash is planned (then it
	 * is a failure like any other death).  A worker that comes back at step k is forked
	 * once every running worker has begun step k, with its slot's start k. */
	int64_t (*rejoin_at)(void *ctx, int id, int64_t after);
};

int supervise(const struct cfg *c, const struct region_params *p,
	      const struct supervisor_ops *ops, void *ctx);

/* The same for rank w of an MPI job (emu/mpi/world.h; NULL or one rank: supervise):
 * forks the workers [w->lo, w->hi) only, into a region for all of them whose barrier
 * the bridge joins, and starts the bridge.  Rank 0 reads every worker's records (the
 * others' through the bridge) and waits for the other ranks' last ones before on_end;
 * a rank > 0 reads none (ops->on_record is not called).  Reports name the host and the
 * rank ("worker 5 on node2 (rank 1) died at step 12: SIGKILL").  A failure, or workers
 * killed here, ends every rank: world_abort after on_end, so supervise_world returns
 * only when the run ended well or was stopped with every worker's agreement; the
 * launcher gets run.stop_grace to end the job before it is killed (world_leaving).  The
 * launcher's SIGTERM (mpirun ending the job: SIGKILL follows) that the workers cannot
 * stop for within half of odls_base_sigkill_timeout fails the run at once, and a stalled
 * run's report names the rank heard from longest ago (bridge_silent): "...; nothing came
 * from rank 1 on node2 for 3 s". */
struct world;
int supervise_world(const struct cfg *c, const struct region_params *p,
		    const struct supervisor_ops *ops, void *ctx, struct world *w);

/* The signals that stop a run (above), less SIGHUP when it is ignored (nohup), for a caller
 * that must block them before it starts threads of its own (world_init: MPI's), and for
 * emu sweep. */
void supervisor_stop_signals(sigset_t *set);

/* Worker side: send one record (at most 4 KiB; more is a programming error and aborts
 * the worker, which the supervisor then reports) to the supervisor; blocks on
 * back-pressure.  nt is the worker's own notify. */
void worker_log(struct region *rg, int id, const void *rec, size_t len, struct notify *nt);

#endif
