/* emu/shm/region.h — the one shared-memory region of a run.
 *
 * Created by the supervisor before fork (memfd + MAP_SHARED, so nothing appears in
 * /dev/shm and the memory dies with the last process), inherited by every worker.
 * Layout: header (magic, layout version, sizes) | worker slots | barrier |
 * N*(N-1) link rings | N log rings (worker -> supervisor) | N snapshot areas.
 */
#ifndef EMU_REGION_H
#define EMU_REGION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define REGION_MAGIC 0x454d5552454731ULL	/* "EMUREG1" */
#define REGION_VERSION 4

/* WORKER_CRASHED: the process ended as a crash event planned (emu/run/crash.h) */
enum worker_state { WORKER_STARTING, WORKER_RUNNING, WORKER_DONE, WORKER_FAILED,
		    WORKER_CRASHED };

struct worker_slot {
	_Alignas(64) _Atomic int32_t pid;
	_Atomic int32_t state;		/* enum worker_state */
	_Atomic int64_t start;		/* the step its process begins at: -1 the run's first;
					 * else it rejoins after a crash (supervisor.h) */
	_Atomic int64_t step;		/* the step the worker is in, for reports */
	_Atomic int64_t vclock;		/* its virtual clock when it began that step */
	_Atomic uint64_t beats;		/* bumped at every step and evaluation batch: the
					 * supervisor's watchdog sees progress by it */
	char error[192];		/* a failing worker's last words */
};

struct barrier {
	_Alignas(64) _Atomic uint32_t count;
	_Atomic uint32_t generation;	/* futex word */
};

struct region_params {
	int nworkers;
	size_t ring_size;		/* per directed link */
	size_t log_ring_size;		/* per worker, records to the supervisor */
	size_t snapshot_bytes;		/* per worker */
	int barrier_parties;		/* who meets at the barrier; 0 = nworkers (one host).
					 * Across hosts: the rank's workers and its bridge
					 * (emu/mpi/world.h) */
};

struct region;				/* opaque: the mapped header */

/* Supervisor side: create and map into *out.  Returns 0 or -errno (-EINVAL for sizes
 * out of range). */
int region_create(struct region **out, const struct region_params *p);
void region_destroy(struct region *r);

int region_nworkers(const struct region *r);
_Atomic uint32_t *region_stop(struct region *r);	/* nonzero: stop requested */
struct worker_slot *region_slot(struct region *r, int worker);
struct barrier *region_barrier(struct region *r);
struct ring *region_ring(struct region *r, int src, int dst);	/* src != dst */
struct ring *region_log_ring(struct region *r, int worker);
void *region_snapshot(struct region *r, int worker);
size_t region_snapshot_bytes(const struct region *r);
/* Bytes from one worker's snapshot area to the next (the areas are one array). */
size_t region_snapshot_stride(const struct region *r);
int region_barrier_parties(const struct region *r);

struct notify;
/* All `parties` meet (region_barrier_parties); sleeps through nt.  The last to arrive
 * releases the others: a participant that waits until barrier_arrived() is parties - 1
 * before it calls barrier_wait is that last one, and never sleeps (the bridge). */
void barrier_wait(struct barrier *b, int parties, struct notify *nt);
/* How many have arrived at the current round. */
uint32_t barrier_arrived(struct barrier *b);

#endif
