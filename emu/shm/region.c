/* emu/shm/region.c — the shared region: one memfd mapping, offsets computed once (region.h). */
#include "emu/shm/region.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu/shm/inbox.h"
#include "emu/shm/notify.h"
#include "emu/shm/ring.h"
#include "emu/shm/slots.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)
#define LOG_RING_DEFAULT (64 * 1024)
/* The rings lie in tiles of RING_TILE x RING_TILE links, each tile's rings together, so
 * that a worker's rings to its peers (a row) and from them (a column) both lie in n /
 * RING_TILE stretches.  Laid out row by row, a column's n rings would each lie under a
 * page-table page of their own: 1,024 workers of an MLP (rings of 4 KiB), 4 MiB of page
 * tables a worker, 4 GiB in all. */
#define RING_TILE 16

/* The mapped header; everything after it is addressed by the offsets. */
struct region {
	uint64_t magic;
	uint32_t version, nworkers;
	uint64_t total;			/* bytes mapped */
	uint64_t ring_size, log_ring_size, snapshot_bytes, outbox_bytes, board_bytes;
	uint64_t off_slots, off_barrier, off_inbox, off_rings, ring_stride;
	uint64_t off_logs, log_stride, off_snapshots, snapshot_stride;
	uint64_t off_mean, off_outbox, outbox_stride, off_board, board_stride;
	uint32_t barrier_parties, bridged, ring_tile;
	_Alignas(64) _Atomic uint32_t stop;
	uint32_t lanes;			/* CPUs of the creator's affinity, at most REGION_LANES */
	int32_t lane_cpu[REGION_LANES];
	struct run_slots slots[REGION_LANES];	/* one run slot per lane */
};

static size_t pow2_at_least(size_t x)
{
	size_t p = 64;

	while (p < x)
		p <<= 1;
	return p;
}

static void *at(const struct region *r, uint64_t off)
{
	return (uint8_t *)r + off;
}

int region_create(struct region **out, const struct region_params *p)
{
	struct region h = { .magic = REGION_MAGIC, .version = REGION_VERSION };
	size_t n = (size_t)p->nworkers, off;
	void *map;
	int fd, e;

	*out = NULL;
	if (p->nworkers < 1 || p->nworkers > 1024 || p->ring_size > (1ULL << 31) ||
	    p->log_ring_size > (1ULL << 31) || p->outbox_bytes > (1ULL << 36) ||
	    p->board_bytes > (1ULL << 36) ||
	    p->barrier_parties < 0 ||
	    p->barrier_parties > p->nworkers + 1)
		return -EINVAL;
	h.nworkers = (uint32_t)n;
	h.barrier_parties = (uint32_t)(p->barrier_parties ? p->barrier_parties : p->nworkers);
	h.bridged = p->barrier_parties != 0;
	h.ring_size = pow2_at_least(p->ring_size ? p->ring_size : 4096);
	h.log_ring_size = pow2_at_least(p->log_ring_size ? p->log_ring_size : LOG_RING_DEFAULT);
	h.snapshot_bytes = p->snapshot_bytes;
	h.outbox_bytes = p->outbox_bytes;
	h.board_bytes = p->board_bytes;
	off = ALIGN64(sizeof(struct region));
	h.off_slots = off;
	off += ALIGN64(n * sizeof(struct worker_slot));
	h.off_barrier = off;
	off += ALIGN64(sizeof(struct barrier));
	h.off_inbox = off;
	off += n * sizeof(struct inbox);
	h.off_rings = off;
	h.ring_stride = ring_footprint(h.ring_size);
	h.ring_tile = n < RING_TILE ? (uint32_t)n : RING_TILE;
	size_t tiles = (n + h.ring_tile - 1) / h.ring_tile;
	off += tiles * tiles * h.ring_tile * h.ring_tile * h.ring_stride;
	h.off_logs = off;
	h.log_stride = ring_footprint(h.log_ring_size);
	off += n * h.log_stride;
	h.off_snapshots = off;
	h.snapshot_stride = ALIGN64(h.snapshot_bytes);
	off += n * h.snapshot_stride;
	h.off_mean = off;
	off += h.snapshot_stride;
	h.off_outbox = off;
	h.outbox_stride = ALIGN64(h.outbox_bytes);
	off += n * h.outbox_stride;
	h.off_board = off;
	h.board_stride = ALIGN64(h.board_bytes);
	off += n * h.board_stride;
	h.total = off;

	/* No name in /dev/shm; the pages go when the last mapping does. */
	fd = memfd_create("emu-region", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)h.total) < 0)
		goto err;
	map = mmap(NULL, h.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto err;
	/* Huge pages where the system lets shared memory have them (shmem_enabled
	 * advise or always; the kernel's default is never): 64 workers touch ~250 rings,
	 * inboxes and outboxes a step each, a TLB miss apiece in 4 KiB pages (with them,
	 * measured where allowed: the exchange's passes 3.5 -> 2.9 ms a step).  Advice
	 * only. */
	madvise(map, h.total, MADV_HUGEPAGE);
	close(fd);

	struct region *r = map;	/* fresh memfd pages are zero */
	memcpy(r, &h, sizeof(h));
	atomic_init(&r->stop, 0);
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
		for (int c = 0; c < CPU_SETSIZE && r->lanes < REGION_LANES; c++)
			if (CPU_ISSET(c, &cpus))
				r->lane_cpu[r->lanes++] = c;
	}
	if (r->lanes == 0)
		r->lane_cpu[r->lanes++] = -1;	/* unknown: one lane, not pinned */
	for (uint32_t i = 0; i < r->lanes; i++)
		slots_init(&r->slots[i], 1);
	int lo = p->local_hi > 0 ? p->local_lo : 0, hi = p->local_hi > 0 ? p->local_hi : p->nworkers;

	for (int i = 0; i < p->nworkers; i++) {
		region_slot(r, i)->error[0] = '\0';
		ring_init(region_log_ring(r, i), h.log_ring_size);
		/* a ring between two other hosts' workers is never used here: its pages are
		 * never touched (1,024 workers on 4 hosts: 44% of the rings) */
		for (int j = 0; j < p->nworkers; j++)
			if (j != i && ((i >= lo && i < hi) || (j >= lo && j < hi)))
				ring_init(region_ring(r, i, j), h.ring_size);
	}
	*out = r;
	return 0;
err:
	e = -errno;
	close(fd);
	return e;
}

void region_destroy(struct region *r)
{
	if (r)
		munmap(r, r->total);
}

int region_nworkers(const struct region *r)
{
	return (int)r->nworkers;
}

_Atomic uint32_t *region_stop(struct region *r)
{
	return &r->stop;
}

int region_lanes(const struct region *r)
{
	return (int)r->lanes;
}

struct run_slots *region_run_slots(struct region *r, int lane)
{
	return &r->slots[(uint32_t)lane % r->lanes];
}

int region_join_lane(struct region *r, int local, struct notify *nt)
{
	int lane = (int)((uint32_t)local % r->lanes), cpu = r->lane_cpu[lane];
	cpu_set_t one;

	if (cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			return -errno;	/* not pinned: no slot either, as before */
	}
	/* SCHED_BATCH: a worker woken here does not preempt the one that woke it.  A worker
	 * gives its slot back and wakes the next just before it sleeps; as SCHED_OTHER the
	 * woken one preempted it at once, and it ran again later only to fall asleep: 11 of
	 * the 16-worker run's 15 involuntary switches a step, 0.8 ms of CPU.  Best effort:
	 * without it (a policy refused), the run is as before. */
	struct sched_param none = { 0 };

	sched_setscheduler(0, SCHED_BATCH, &none);
	int member = (int)((uint32_t)local / r->lanes);

	notify_use_slots(nt, &r->slots[lane], member);
	if (!r->bridged && (uint32_t)local < r->nworkers) {	/* one host: local is the id */
		region_inbox(r, local)->member = member;
		atomic_store_explicit(&region_inbox(r, local)->lane, &r->slots[lane],
				      memory_order_release);
	}
	return 0;
}

struct worker_slot *region_slot(struct region *r, int worker)
{
	return (struct worker_slot *)at(r, r->off_slots) + worker;
}

struct barrier *region_barrier(struct region *r)
{
	return at(r, r->off_barrier);
}

struct inbox *region_inbox(struct region *r, int worker)
{
	return (struct inbox *)at(r, r->off_inbox) + worker;
}

struct ring *region_ring(struct region *r, int src, int dst)
{
	size_t t = r->ring_tile, tiles = (r->nworkers + t - 1) / t;
	size_t i = (((size_t)src / t * tiles + (size_t)dst / t) * t + (size_t)src % t) * t +
		   (size_t)dst % t;

	return at(r, r->off_rings + i * r->ring_stride);
}

struct ring *region_log_ring(struct region *r, int worker)
{
	return at(r, r->off_logs + (size_t)worker * r->log_stride);
}

void *region_snapshot(struct region *r, int worker)
{
	return at(r, r->off_snapshots + (size_t)worker * r->snapshot_stride);
}

/* A range of the mapping, page-aligned outwards, mapped in now. */
static int populate(struct region *r, uint64_t off, uint64_t len)
{
	uint64_t lo = off & ~(uint64_t)4095, hi = (off + len + 4095) & ~(uint64_t)4095;

	if (hi > r->total)
		hi = r->total;
	return madvise(at(r, lo), hi - lo, MADV_POPULATE_WRITE) < 0 ? -errno : 0;
}

int region_prefault(struct region *r, int id)
{
	int n = (int)r->nworkers, rc = 0;

	for (int j = 0; j < n && rc == 0; j++)
		if (j != id) {
			rc = populate(r, (uint64_t)((uint8_t *)region_ring(r, id, j) - (uint8_t *)r),
				      r->ring_stride);
			if (rc == 0)
				rc = populate(r, (uint64_t)((uint8_t *)region_ring(r, j, id) -
							    (uint8_t *)r), r->ring_stride);
		}
	return rc;
}

float *region_mean(struct region *r)
{
	return at(r, r->off_mean);
}

int region_bridged(const struct region *r)
{
	return (int)r->bridged;
}

size_t region_snapshot_bytes(const struct region *r)
{
	return r->snapshot_bytes;
}

size_t region_snapshot_stride(const struct region *r)
{
	return r->snapshot_stride;
}

void *region_outbox(struct region *r, int worker)
{
	return r->outbox_bytes ? at(r, r->off_outbox + (size_t)worker * r->outbox_stride) : NULL;
}

void *region_board(struct region *r, int worker)
{
	return r->board_bytes ? at(r, r->off_board + (size_t)worker * r->board_stride) : NULL;
}

size_t region_board_bytes(const struct region *r)
{
	return r->board_bytes;
}

size_t region_outbox_bytes(const struct region *r)
{
	return r->outbox_bytes;
}

int region_barrier_parties(const struct region *r)
{
	return (int)r->barrier_parties;
}

uint32_t barrier_arrived(struct barrier *b)
{
	return atomic_load_explicit(&b->count, memory_order_acquire);
}

void barrier_wait(struct barrier *b, int parties, struct notify *nt)
{
	uint32_t gen = atomic_load_explicit(&b->generation, memory_order_acquire);

	if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) + 1 == (uint32_t)parties) {
		/* The last one resets count before anybody can see the new generation. */
		atomic_store_explicit(&b->count, 0, memory_order_relaxed);
		atomic_store_explicit(&b->generation, gen + 1, memory_order_release);
		notify_wake(nt, &b->generation);
		return;
	}
	_Atomic uint32_t *w = &b->generation;
	for (int spin = 0; atomic_load_explicit(w, memory_order_acquire) == gen; spin++) {
		if (spin < 256)
			continue;
		notify_wait(nt, 1, &w, &gen, -1);
	}
}
