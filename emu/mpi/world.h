/* emu/mpi/world.h — one experiment across hosts: the ranks of an MPI job, and the bridge
 * that carries the links between them.
 *
 * `make MPI=1` builds build-mpi/emu with world_mpi.c and bridge.c (Open MPI); every other
 * build links world_none.c, whose world is one rank and has no bridge, so the default
 * build needs no MPI.  Under mpirun -n H (or srun), rank r runs the contiguous workers
 * [lo, hi) = [r*N/H, (r+1)*N/H) (world_place).  Every rank loads the INI and the data
 * itself, and maps a region for all N workers, of which it uses the rings that touch its
 * own workers (the pages of the others are never touched, so they cost nothing).
 *
 * Workers never call MPI (Open MPI does not support MPI in processes forked after
 * MPI_Init).  The bridge, a thread of each rank's supervisor, is the only caller of MPI
 * while the workers run (MPI_THREAD_SERIALIZED: the main thread calls MPI before the
 * fork and after the bridge has ended, and MPI_Abort only under the bridge's lock):
 *  - a ring src -> dst with src here and dst on rank R: the bridge reads what worker src
 *    writes and sends it to R (tag: the link), whose bridge writes it into ring src ->
 *    dst of its own region, which dst reads as any ring.  Flow control is the rings':
 *    a full ring keeps the bytes in the bridge, which posts no further receive for that
 *    link until they are in (two buffers per link and direction).
 *  - the barrier (replicas_mean's pair): the bridge is one more party
 *    (region_params.barrier_parties = local workers + 1).  When the local workers have
 *    all arrived at the first of a pair, it gathers every rank's snapshot areas into
 *    every region (MPI_Iallgatherv), then arrives, which releases them; at the second it
 *    arrives at once (the next gather needs every rank's workers at the next first
 *    barrier, so no area is overwritten while anybody still reads it).
 *  - logs: a rank r > 0 reads its workers' log rings in its bridge and sends the bytes to
 *    rank 0, whose bridge writes them into the same log rings of its region: rank 0's
 *    supervisor reads every worker's records as it reads its own workers'.
 * When its workers have exited, a rank sends what is left and closes each of its links
 * with an empty message; its bridge ends when every link into it is closed too.  A rank
 * whose run fails tells rank 0 why (bridge_fail), so that the run folder's status.json
 * says it, and rank 0 or itself ends the job (world_abort).
 */
#ifndef EMU_WORLD_H
#define EMU_WORLD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "emu/shm/notify.h"

struct region;

struct world {
	int rank, size;		/* 0 and 1 on one host */
	int nworkers;		/* run.workers, over all ranks */
	int lo, hi;		/* this rank's workers: [lo, hi) */
	char host[64];		/* gethostname(), for messages */
	char (*hosts)[64];	/* every rank's host, by rank (world_host); NULL on one rank */
	pid_t launcher;		/* the process that started this rank (mpirun's or its daemon) */
	bool leaving;		/* world_leaving ran */
	bool mpi;		/* MPI_Init ran: world_finalize or world_abort must follow */
	pthread_mutex_t lock;	/* held around each MPI call once the bridge runs */
};

/* The first worker of rank r of size ranks: r * n / size (rank size: n). */
static inline int world_first(int n, int size, int r)
{
	return (int)((int64_t)n * r / size);
}

/* Joins the MPI job when emu was started by mpirun or srun (their environment says so);
 * otherwise, and in a build without MPI, the world is one rank.  Call it before any
 * thread or child exists: it blocks the signals of block first, in every thread MPI
 * starts too, so that they wait for the supervisor's signalfd (supervisor.h).  Returns
 * 0, or -errno with the reason in err.
 *
 * err, errlen of world_init, world_place, world_agree and world_same: what the caller
 * prints to stderr, each of its lines after "emu: ": no line, one, or (world_agree,
 * world_same: one a rank) several separated by newlines; a line that does not fit whole
 * is left out.  WORLD_ERRLEN bytes hold a line of each rank. */
#define WORLD_ERRLEN 16384
int world_init(struct world *w, const sigset_t *block, char *err, size_t errlen);

/* The world of one rank on this host, world_init's start in either build (the MPI
 * build's when no launcher started it). */
static inline void world_one_rank(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->size = 1;
	pthread_mutex_init(&w->lock, NULL);
	if (gethostname(w->host, sizeof(w->host)) < 0)
		strcpy(w->host, "localhost");
	w->host[sizeof(w->host) - 1] = '\0';
}
/* Rank r's host name (this host's on one rank). */
static inline const char *world_host(const struct world *w, int r)
{
	return w->hosts && r >= 0 && r < w->size ? w->hosts[r] : w->host;
}
/* Whether every rank runs on this host. */
static inline bool world_one_host(const struct world *w)
{
	for (int r = 0; w->hosts && r < w->size; r++)
		if (strcmp(w->hosts[r], w->host) != 0)
			return false;
	return true;
}
/* This rank's share of nworkers: 0, or -EINVAL with more ranks than workers (the reason
 * in err on rank 0). */
int world_place(struct world *w, int nworkers, char *err, size_t errlen);
/* The worst of every rank's status (the largest exit code); status itself on one
 * rank.  Every rank calls it at the same point.  Where rank 0 did not fail, it names
 * each rank that did, with its host, in err ("rank 1 of 2 on node2 failed (exit 2): ..."):
 * that rank's own message says why, but not where it ran. */
int world_agree(struct world *w, int status, char *err, size_t errlen);
/* How the run ended, once the bridge has ended: the worst status of every rank (as
 * world_agree), and in err on rank 0 the reason of the lowest rank that has it (a stop
 * signal may have reached one rank only: rank 0's status.json must say so).  status and
 * err are returned unchanged on one rank.  Every rank calls it at the same point. */
int world_agree_end(struct world *w, int status, char *err, size_t errlen);
/* true when every rank passed the same hash (of the configuration and the data); else
 * rank 0 names in err each rank whose hash differs from its own, with both hosts. */
bool world_same(struct world *w, uint64_t hash, char *err, size_t errlen);
/* Every rank meets here, without spinning (a rank that waits sleeps 1 ms at a time,
 * leaving the cores to one that measures). */
void world_wait(struct world *w);
/* Ranks 0 and 1: MPI's own bandwidth, iters round trips of `bytes` each way
 * (MPI_Send/MPI_Recv); GB/s on rank 0, 0 elsewhere or on one rank. */
double world_pingpong(struct world *w, size_t bytes, int iters);
/* This rank ends the job through a failure (world_abort, at once or after telling rank 0
 * why): its launcher gets grace_ns to end the job after MPI_Abort; a launcher of Open
 * MPI's (mpirun, orterun, mpiexec, orted, prterun, prted: the parent of this rank) still
 * running then is killed, with a line on its own stderr.  Without it, a launcher that
 * cannot reach another host (the network between them down) waits for that host until
 * the network returns, long after every rank has ended.  A helper process waits for
 * that, holding nothing of the rank's (no socket, no pipe: the launcher learns the rank's
 * end as usual); it ends with the launcher.  Once per process; nothing on one rank or
 * under another launcher (srun's slurmstepd has its own timeouts). */
void world_leaving(struct world *w, int64_t grace_ns);
#define WORLD_LEAVE_GRACE_NS 10000000000LL	/* world_abort's, where world_leaving has not run */
/* Ends every rank of the job with code (MPI_Abort); on one host, exit(code). */
void world_abort(struct world *w, int code) __attribute__((noreturn));
/* Leaves the job (MPI_Finalize) after the bridge has ended. */
void world_finalize(struct world *w);

struct bridge;

/* Starts the bridge of rank w over rg, after the workers were forked (region_params'
 * barrier_parties: the local workers + 1); mode: how it sleeps (run.notify); say: who
 * says its thread's notify notice (notify.h), NULL for nobody.  Returns 0 or -errno
 * (-ENOSYS in a build without MPI). */
int bridge_start(struct bridge **out, struct region *rg, struct world *w,
		 enum notify_mode mode, void (*say)(const char *line));
/* The local workers have all exited: send what is left, close every link. */
void bridge_finish(struct bridge *b);
/* Readable (an eventfd) once the bridge has ended: every link closed both ways. */
int bridge_fd(const struct bridge *b);
bool bridge_ended(const struct bridge *b);
/* Rank 0: true once another rank has sent why its run failed (bridge_fail), with
 * the reason in err; also takes the eventfd's count (bridge_fd is readable again only
 * for news). */
#define BRIDGE_WHY 256
bool bridge_failed(struct bridge *b, char *err, size_t errlen);
/* The other rank heard from longest ago (a receive, a gather), and in secs how long
 * ago; -1 on one rank.  What a rank that stalls or is being killed can say about the
 * rank it waits for (a rank that died, the network to it down). */
int bridge_silent(struct bridge *b, double *secs);
/* A rank > 0 whose run failed: tells rank 0 why (its status.json says it), then gives it
 * a few seconds to end the job (world_abort) before returning. */
void bridge_fail(struct bridge *b, const char *why);
/* Joins an ended bridge and frees it. */
void bridge_free(struct bridge *b);

#endif
