/* emu/shm/region.h — the one shared-memory region of a run.
 *
 * Created by the supervisor before fork (memfd + MAP_SHARED, so nothing appears in
 * /dev/shm and the memory dies with the last process), inherited by every worker.
 * Layout: header (magic, layout version, sizes, stop word, run slots) | worker slots |
 * barrier | N inboxes |
 * N*(N-1) link rings | N log rings (worker -> supervisor) | N snapshot areas | the
 * mean of the snapshots (one more area of snapshot_bytes) | N outboxes | N boards.
 */
#ifndef EMU_REGION_H
#define EMU_REGION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define REGION_MAGIC 0x454d5552454731ULL	/* "EMUREG1" */
#define REGION_VERSION 7

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
	size_t outbox_bytes;		/* per worker: payloads sent by reference (xchg.h);
					 * 0: none */
	size_t board_bytes;		/* per worker: its units of a phase, for every
					 * worker's fabric (emu/net/xchg_port.c); 0: none */
	int barrier_parties;		/* who meets at the barrier; 0 = nworkers (one host).
					 * Across hosts: the rank's workers and its bridge
					 * (emu/mpi/world.h) */
	int local_lo, local_hi;		/* across hosts, this host's workers [lo, hi): only
					 * the rings of links that touch them are set up (and
					 * their pages taken); 0, 0: all */
};

struct region;				/* opaque: the mapped header */

/* Supervisor side: create and map into *out.  Returns 0 or -errno (-EINVAL for sizes
 * out of range). */
int region_create(struct region **out, const struct region_params *p);
void region_destroy(struct region *r);

int region_nworkers(const struct region *r);
_Atomic uint32_t *region_stop(struct region *r);	/* nonzero: stop requested */
/* Lanes: one per CPU the creator may run on (at most REGION_LANES), each with one run
 * slot (slots.h).  With more workers on a host than cores, worker `local` (its index
 * among the host's workers) joins lane local % lanes: region_join_lane pins it to that
 * lane's CPU and makes its notify take and give that lane's slot, so that on each core
 * one worker runs at a time and a hand-off (one sleeps, the next in its lane wakes)
 * stays on that core: no migration, no cross-core wake-up.  It also runs the worker as
 * SCHED_BATCH, so that a worker it wakes waits until it sleeps (region.c says why).
 * 0 or -errno (not pinned, and then no slot either). */
#define REGION_LANES 64
struct notify;
int region_lanes(const struct region *r);
struct run_slots *region_run_slots(struct region *r, int lane);
int region_join_lane(struct region *r, int local, struct notify *nt);
struct worker_slot *region_slot(struct region *r, int worker);
struct barrier *region_barrier(struct region *r);
struct ring *region_ring(struct region *r, int src, int dst);	/* src != dst */
/* Worker's count of messages written whole into its rings (inbox.h). */
struct inbox *region_inbox(struct region *r, int worker);
struct ring *region_log_ring(struct region *r, int worker);
/* Map in now the pages of every ring into and out of worker id, in this process
 * (MADV_POPULATE_WRITE), so that a benchmark's timing holds no first touch (a process
 * maps a page of MAP_SHARED memory on its first touch even when another process has
 * touched it already).  Runs do not: rings rewind (ring.h), so a link touches only the
 * few pages its messages need, and mapping in every ring's pages cost 64 workers 8 s of
 * start-up and 4 GiB of memory.  0 or -errno (-EINVAL before Linux 5.14). */
int region_prefault(struct region *r, int id);
void *region_snapshot(struct region *r, int worker);
size_t region_snapshot_bytes(const struct region *r);
/* One area of snapshot_bytes where the workers of one host build the snapshots' mean
 * together, each its share of the elements (emu/run/train_worker.c). */
float *region_mean(struct region *r);
/* Whether a bridge joins the barrier (barrier_parties was given: workers on other
 * hosts); only then are some workers' snapshots copies, and the mean area is not
 * shared with them. */
int region_bridged(const struct region *r);
/* Bytes from one worker's snapshot area to the next (the areas are one array). */
size_t region_snapshot_stride(const struct region *r);
/* Worker's outbox: outbox_bytes, 64-byte aligned, where the exchange keeps the payloads
 * it sends by reference (xchg.h); NULL when outbox_bytes was 0. */
void *region_outbox(struct region *r, int worker);
size_t region_outbox_bytes(const struct region *r);
/* Worker's board (board_bytes, 64-byte aligned), or NULL without boards. */
void *region_board(struct region *r, int worker);
size_t region_board_bytes(const struct region *r);
int region_barrier_parties(const struct region *r);

struct notify;
struct inbox;
/* All `parties` meet (region_barrier_parties); sleeps through nt.  The last to arrive
 * releases the others: a participant that waits until barrier_arrived() is parties - 1
 * before it calls barrier_wait is that last one, and never sleeps (the bridge). */
void barrier_wait(struct barrier *b, int parties, struct notify *nt);
/* How many have arrived at the current round. */
uint32_t barrier_arrived(struct barrier *b);

#endif
