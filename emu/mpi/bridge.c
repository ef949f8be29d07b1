/* emu/mpi/bridge.c — a rank's bridge (world.h): the thread that moves the bytes of the
 * links between this rank's rings and the other ranks', gathers the snapshots at the
 * barrier and sends the logs to rank 0.  Built with MPI=1 only.
 *
 * One loop that never blocks in MPI: a pass tests every request (MPI_Testsome), moves
 * what it can between rings and buffers and handles the barrier, all under the world's
 * lock (world_abort takes it to call MPI_Abort between two calls).  After a pass that
 * moved nothing it spins a little (only with a core to spare), then sleeps on the futex
 * words of the rings it waits for: a worker writing into a ring the bridge reads, or
 * reading from one it waits to write, wakes it.  Nothing wakes it for MPI's arrivals or
 * the workers' arrivals at the barrier, so the sleep has a timeout, 20 us after
 * activity and doubling to 1 ms while nothing moves: that is how late the bridge sees
 * them at worst, and what it costs when idle (a wake-up and a pass per ms).
 *
 * A link's bytes go in MPI messages of at most `chunk` bytes (a quarter of its ring,
 * 4 to 64 KiB), in order: sends are posted in order (MPI never lets a message overtake
 * an earlier one of the same source and tag), and a link's receives are posted into its
 * SLOTS buffers round robin and emptied into the ring in the same order.  A receive is
 * posted again only once its bytes are in the ring: a slow reader holds up its own link
 * and no other.  An empty message closes a link.
 */
#include "emu/mpi/world.h"

#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>

#include "emu/shm/region.h"
#include "emu/shm/ring.h"

#define SLOTS 2			/* buffers per link: one in flight while the other fills */
#define CHUNK_MIN (4 << 10)
#define CHUNK_MAX (64 << 10)
#define SPIN_NS 50000
#define SLEEP_MIN_NS 20000
#define SLEEP_MAX_NS 1000000
#define FAIL_WAIT_NS 5000000000LL	/* bridge_fail: how long rank 0 has to end the job */

enum slot_state { SLOT_FREE, SLOT_BUSY, SLOT_FULL };	/* FULL: received, not yet in the ring */

struct slot {
	uint8_t *buf;
	size_t len, off;	/* in: bytes received, and written into the ring so far */
	int state;
};

/* One direction of one link as this rank sees it: a ring it reads and sends from (out),
 * or receives into and writes (in). */
struct blink {
	struct ring *r;
	int peer, tag;
	bool xchg;		/* a link of the exchange (else a worker's log stream) */
	bool closing;		/* out: the empty message is posted */
	bool closed;		/* out: and every send completed; in: the empty message came */
	int head;		/* in: the slot whose bytes go into the ring next */
	size_t chunk;
	struct slot s[SLOTS];
};

struct bridge {
	struct region *rg;
	struct world *w;
	struct notify nt;
	int n;
	int nout, nin;
	struct blink *out, *in;
	MPI_Request *oreq, *ireq;	/* [nout * SLOTS], [nin * SLOTS] */
	bool reqs;			/* they are requests (MPI_REQUEST_NULL or posted) */
	int *idx;			/* Testsome's scratch */
	MPI_Status *st;
	uint8_t *bufs;			/* every slot's buffer: one mapping */
	size_t bufs_len;
	/* the barrier: rounds the bridge has passed; even ones gather the snapshots */
	struct barrier *bar;
	int parties;
	uint64_t round;
	bool gathering;
	MPI_Request greq;
	MPI_Datatype snap;		/* one worker's snapshot area */
	int *counts, *displs;		/* per rank, in snapshot areas */
	int arm_from;			/* out links armed first at the next sleep */
	_Atomic int64_t *heard;		/* per rank: when a message of it last came (bridge_silent) */
	int64_t spin_ns, sleep_ns;
	/* rank 0: another rank's failure, for its status.json (bridge_failed) */
	MPI_Request freq;
	char fail_msg[BRIDGE_WHY];
	/* a rank > 0: why its run failed, until the send to rank 0 completes (bridge_fail) */
	MPI_Request fail_sreq;
	char fail_out[BRIDGE_WHY];
	_Atomic bool failed;
	_Atomic bool finish;		/* the supervisor: the local workers have exited */
	_Atomic bool ended;
	int efd;
	bool started;
	pthread_t thread;
	/* the thread's notify_init: io_uring rings are single-issuer (notify_uring.c), so
	 * the thread that sleeps and wakes through one creates it; bridge_start waits on
	 * inited for init_rc */
	enum notify_mode mode;
	void (*say)(const char *line);	/* for nt (notify.h), from bridge_start */
	int init_rc;
	sem_t inited;
};

/* Above every link's and log stream's tag. */
static int fail_tag(const struct bridge *b)
{
	return b->n * b->n + b->n;
}

static int rank_of(const struct bridge *b, int worker)
{
	int r = 0;

	while (worker >= world_first(b->n, b->w->size, r + 1))
		r++;
	return r;
}

static bool local(const struct bridge *b, int worker)
{
	return worker >= b->w->lo && worker < b->w->hi;
}

static size_t chunk_of(const struct ring *r)
{
	size_t c = r->size / 4;

	return c < CHUNK_MIN ? CHUNK_MIN : c > CHUNK_MAX ? CHUNK_MAX : c;
}

static void link_set(struct blink *l, struct ring *r, int peer, int tag, bool xchg)
{
	l->r = r;
	l->peer = peer;
	l->tag = tag;
	l->xchg = xchg;
	l->chunk = chunk_of(r);
}

/* The links of this rank: exchange links whose one end is here and the other not, and
 * the log streams (out of a rank > 0, into rank 0).  count only: out/in NULL. */
static void find_links(struct bridge *b, struct blink *out, struct blink *in)
{
	int n = b->n, no = 0, ni = 0, rank = b->w->rank;

	for (int src = 0; src < n; src++)
		for (int dst = 0; dst < n; dst++) {
			if (src == dst || local(b, src) == local(b, dst))
				continue;
			if (local(b, src) && out)
				link_set(&out[no], region_ring(b->rg, src, dst), rank_of(b, dst),
					 src * n + dst, true);
			if (!local(b, src) && in)
				link_set(&in[ni], region_ring(b->rg, src, dst), rank_of(b, src),
					 src * n + dst, true);
			no += local(b, src);
			ni += !local(b, src);
		}
	for (int w = 0; w < n; w++) {
		if (rank != 0 && local(b, w)) {
			if (out)
				link_set(&out[no], region_log_ring(b->rg, w), 0, n * n + w, false);
			no++;
		} else if (rank == 0 && !local(b, w)) {
			if (in)
				link_set(&in[ni], region_log_ring(b->rg, w), rank_of(b, w),
					 n * n + w, false);
			ni++;
		}
	}
	b->nout = no;
	b->nin = ni;
}

static void post_recv(struct bridge *b, int li, int si)
{
	struct blink *l = &b->in[li];
	struct slot *s = &l->s[si];

	s->state = SLOT_BUSY;
	MPI_Irecv(s->buf, (int)l->chunk, MPI_BYTE, l->peer, l->tag, MPI_COMM_WORLD,
		  &b->ireq[li * SLOTS + si]);
}

/* Sends: completions free slots; a ring's bytes go out while a slot is free; once the
 * workers are gone and a ring is empty, the empty message closes its link. */
static bool pass_out(struct bridge *b)
{
	bool moved = false, finish = atomic_load(&b->finish);
	int cnt = 0;

	if (b->nout)
		MPI_Testsome(b->nout * SLOTS, b->oreq, &cnt, b->idx, MPI_STATUSES_IGNORE);
	for (int i = 0; i < cnt && cnt != MPI_UNDEFINED; i++)
		b->out[b->idx[i] / SLOTS].s[b->idx[i] % SLOTS].state = SLOT_FREE;
	moved |= cnt > 0 && cnt != MPI_UNDEFINED;
	for (int li = 0; li < b->nout; li++) {
		struct blink *l = &b->out[li];
		int busy = 0;

		for (int si = 0; si < SLOTS; si++)
			busy += l->s[si].state == SLOT_BUSY;
		if (l->closing) {
			l->closed = busy == 0;
			continue;
		}
		for (int si = 0; si < SLOTS; si++) {
			struct slot *s = &l->s[si];
			size_t k;

			if (s->state != SLOT_FREE)
				continue;
			k = ring_read(l->r, s->buf, l->chunk, &b->nt);
			if (k == 0 && !(finish && ring_readable(l->r) == 0))
				break;
			/* k == 0 here: the link's last message, empty */
			MPI_Isend(s->buf, (int)k, MPI_BYTE, l->peer, l->tag, MPI_COMM_WORLD,
				  &b->oreq[li * SLOTS + si]);
			s->state = SLOT_BUSY;
			moved = true;
			if (k == 0) {
				l->closing = true;
				break;
			}
		}
	}
	return moved;
}

/* A link closed by its empty message: its other receive will never match; cancelled,
 * it completes as such in a later Testsome. */
static void close_in(struct bridge *b, int li)
{
	struct blink *l = &b->in[li];

	l->closed = true;
	for (int si = 0; si < SLOTS; si++)
		if (l->s[si].state == SLOT_BUSY)
			MPI_Cancel(&b->ireq[li * SLOTS + si]);
}

/* Receives: completions fill slots; each link's slots go into its ring in the order
 * they were posted, and are posted again once empty.  What comes for an exchange link
 * after the workers are gone has no reader: it is dropped (a finished run sends none). */
static bool pass_in(struct bridge *b)
{
	bool moved = false, finish = atomic_load(&b->finish);
	int cnt = 0;

	if (b->nin)
		MPI_Testsome(b->nin * SLOTS, b->ireq, &cnt, b->idx, b->st);
	for (int i = 0; i < cnt && cnt != MPI_UNDEFINED; i++) {
		struct blink *l = &b->in[b->idx[i] / SLOTS];
		struct slot *s = &l->s[b->idx[i] % SLOTS];
		int len = 0, cancelled = 0;

		MPI_Test_cancelled(&b->st[i], &cancelled);
		if (cancelled) {
			s->state = SLOT_FREE;
			continue;
		}
		MPI_Get_count(&b->st[i], MPI_BYTE, &len);
		atomic_store_explicit(&b->heard[l->peer], notify_now_ns(), memory_order_relaxed);
		s->state = SLOT_FULL;
		s->len = (size_t)len;
		s->off = 0;
		moved = true;
	}
	for (int li = 0; li < b->nin; li++) {
		struct blink *l = &b->in[li];
		struct slot *s;

		while (!l->closed && (s = &l->s[l->head])->state == SLOT_FULL) {
			if (s->len == 0) {
				s->state = SLOT_FREE;
				close_in(b, li);
				break;
			}
			if (l->xchg && finish)
				s->off = s->len;
			else
				s->off += ring_write(l->r, s->buf + s->off, s->len - s->off, &b->nt);
			if (s->off < s->len)
				break;	/* the ring is full: the link waits for its reader */
			post_recv(b, li, l->head);
			l->head = (l->head + 1) % SLOTS;
			moved = true;
		}
	}
	return moved;
}

/* The bridge's part in the barrier: the last party, once the local workers are in. */
static bool pass_barrier(struct bridge *b)
{
	if (b->gathering) {
		int done = 0;

		MPI_Test(&b->greq, &done, MPI_STATUS_IGNORE);
		if (!done)
			return false;
		b->gathering = false;
		for (int r = 0; r < b->w->size; r++)	/* every rank's areas came */
			atomic_store_explicit(&b->heard[r], notify_now_ns(), memory_order_relaxed);
	} else {
		if (barrier_arrived(b->bar) != (uint32_t)(b->parties - 1))
			return false;
		if (b->round % 2 == 0) {
			/* every rank's areas [lo, hi) into every region: in place, each rank's
			 * own already where it belongs */
			MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
					region_snapshot(b->rg, 0), b->counts, b->displs, b->snap,
					MPI_COMM_WORLD, &b->greq);
			b->gathering = true;
			return true;
		}
	}
	barrier_wait(b->bar, b->parties, &b->nt);	/* the last: releases the workers */
	b->round++;
	return true;
}

/* Rank 0: another rank's failure came; the supervisor learns it through the eventfd. */
static void pass_fail(struct bridge *b)
{
	uint64_t one = 1;
	int done = 0;

	if (b->freq == MPI_REQUEST_NULL)
		return;
	MPI_Test(&b->freq, &done, MPI_STATUS_IGNORE);
	if (!done || atomic_load(&b->failed))
		return;
	b->fail_msg[sizeof(b->fail_msg) - 1] = '\0';
	atomic_store(&b->failed, true);
	if (write(b->efd, &one, sizeof(one)) < 0) { /* a counter: cannot overflow here */ }
}

static bool all_closed(const struct bridge *b)
{
	for (int i = 0; i < b->nout; i++)
		if (!b->out[i].closed)
			return false;
	for (int i = 0; i < b->nin; i++) {
		if (!b->in[i].closed)
			return false;
		for (int si = 0; si < SLOTS; si++)	/* a cancel not yet completed */
			if (b->in[i].s[si].state == SLOT_BUSY)
				return false;
	}
	return !b->gathering;
}

static bool has_free_slot(const struct blink *l)
{
	for (int si = 0; si < SLOTS; si++)
		if (l->s[si].state == SLOT_FREE)
			return true;
	return false;
}

/* Sleep until a ring the bridge waits on moves, or the timeout (file comment).  Arms at
 * most NOTIFY_MAX_WORDS rings, starting at a different out link each time: the others
 * are seen at the timeout. */
static void sleep_on_rings(struct bridge *b)
{
	_Atomic uint32_t *words[NOTIFY_MAX_WORDS];
	uint32_t expect[NOTIFY_MAX_WORDS];
	struct ring *armed[NOTIFY_MAX_WORDS];
	bool reading[NOTIFY_MAX_WORDS], ready = false;
	int cnt = 0;

	for (int i = 0; i < b->nin && cnt < NOTIFY_MAX_WORDS; i++) {
		struct blink *l = &b->in[i];

		if (l->closed || l->s[l->head].state != SLOT_FULL)
			continue;
		expect[cnt] = ring_arm_write(l->r);
		words[cnt] = ring_tail_word(l->r);
		armed[cnt] = l->r;
		reading[cnt++] = false;
		ready |= ring_writable(l->r) > 0;
	}
	for (int k = 0; k < b->nout && cnt < NOTIFY_MAX_WORDS; k++) {
		struct blink *l = &b->out[(b->arm_from + k) % b->nout];

		/* Bytes in a ring whose both buffers still wait on MPI cannot move: not a
		 * reason to stay awake (the loop would never sleep), nor to be woken for
		 * more.  The sends' completions are seen at the timeout. */
		if (l->closing || !has_free_slot(l))
			continue;
		expect[cnt] = ring_arm_read(l->r);
		words[cnt] = ring_head_word(l->r);
		armed[cnt] = l->r;
		reading[cnt++] = true;
		ready |= ring_readable(l->r) > 0;
	}
	if (b->nout)
		b->arm_from = (b->arm_from + NOTIFY_MAX_WORDS) % b->nout;
	if (!ready && cnt > 0) {
		notify_wait(&b->nt, cnt, words, expect, b->sleep_ns);
	} else if (!ready) {
		struct timespec ts = { .tv_nsec = b->sleep_ns };

		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < cnt; i++) {
		if (reading[i])
			ring_disarm_read(armed[i]);
		else
			ring_disarm_write(armed[i]);
	}
	b->sleep_ns = b->sleep_ns * 2 < SLEEP_MAX_NS ? b->sleep_ns * 2 : SLEEP_MAX_NS;
}

/* The notify of the bridge's thread, created there (struct bridge says why); its
 * result to bridge_start. */
static int bridge_notify_init(struct bridge *b)
{
	int rc = notify_init(&b->nt, b->mode);

	b->nt.say = b->say;
	b->init_rc = rc;
	sem_post(&b->inited);
	return rc;
}

static void *bridge_main(void *arg)
{
	struct bridge *b = arg;
	int64_t last_move = notify_now_ns();
	uint64_t one = 1;

	if (bridge_notify_init(b) < 0)
		return NULL;
	for (;;) {
		bool moved, done;

		pthread_mutex_lock(&b->w->lock);
		moved = pass_out(b);
		moved |= pass_in(b);
		moved |= pass_barrier(b);
		pass_fail(b);
		done = atomic_load(&b->finish) && all_closed(b);
		if (done && b->freq != MPI_REQUEST_NULL) {	/* no failure will come now */
			MPI_Cancel(&b->freq);
			MPI_Wait(&b->freq, MPI_STATUS_IGNORE);
		}
		pthread_mutex_unlock(&b->w->lock);
		if (done)
			break;
		if (moved) {
			last_move = notify_now_ns();
			b->sleep_ns = SLEEP_MIN_NS;
		} else if (notify_now_ns() - last_move < b->spin_ns) {
			sched_yield();
		} else {
			sleep_on_rings(b);
		}
	}
	atomic_store(&b->ended, true);
	if (write(b->efd, &one, sizeof(one)) < 0) { /* a counter: cannot overflow here */ }
	return NULL;
}

/* Buffers, requests, the snapshot type; the receives posted.  0 or -errno. */
static int bridge_setup(struct bridge *b)
{
	int size = b->w->size, nreq;
	size_t stride = region_snapshot_stride(b->rg), off = 0;

	find_links(b, NULL, NULL);
	nreq = (b->nout > b->nin ? b->nout : b->nin) * SLOTS;
	b->out = calloc((size_t)b->nout + 1, sizeof(*b->out));
	b->in = calloc((size_t)b->nin + 1, sizeof(*b->in));
	b->oreq = calloc((size_t)b->nout * SLOTS + 1, sizeof(*b->oreq));
	b->ireq = calloc((size_t)b->nin * SLOTS + 1, sizeof(*b->ireq));
	b->idx = calloc((size_t)nreq + 1, sizeof(*b->idx));
	b->st = calloc((size_t)nreq + 1, sizeof(*b->st));
	b->counts = calloc((size_t)size, sizeof(*b->counts));
	b->displs = calloc((size_t)size, sizeof(*b->displs));
	b->heard = calloc((size_t)size, sizeof(*b->heard));
	if (!b->out || !b->in || !b->oreq || !b->ireq || !b->idx || !b->st || !b->counts ||
	    !b->displs || !b->heard)
		return -ENOMEM;
	for (int r = 0; r < size; r++)	/* (the start counts as news of every rank) */
		atomic_store(&b->heard[r], notify_now_ns());
	for (int i = 0; i < b->nout * SLOTS; i++)	/* from here bridge_free reads them */
		b->oreq[i] = MPI_REQUEST_NULL;
	for (int i = 0; i < b->nin * SLOTS; i++)
		b->ireq[i] = MPI_REQUEST_NULL;
	b->reqs = true;
	find_links(b, b->out, b->in);
	for (int i = 0; i < b->nout; i++)
		b->bufs_len += SLOTS * b->out[i].chunk;
	for (int i = 0; i < b->nin; i++)
		b->bufs_len += SLOTS * b->in[i].chunk;
	/* untouched pages cost nothing: a link uses what its messages fill */
	b->bufs = mmap(NULL, b->bufs_len + 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->bufs == MAP_FAILED) {
		b->bufs = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < b->nout + b->nin; i++) {
		struct blink *l = i < b->nout ? &b->out[i] : &b->in[i - b->nout];

		for (int si = 0; si < SLOTS; si++, off += l->chunk)
			l->s[si].buf = b->bufs + off;
	}
	if (stride > (size_t)INT32_MAX)
		return -EFBIG;
	for (int r = 0; r < size; r++) {
		b->displs[r] = world_first(b->n, size, r);
		b->counts[r] = world_first(b->n, size, r + 1) - b->displs[r];
	}
	MPI_Type_contiguous((int)stride, MPI_BYTE, &b->snap);
	MPI_Type_commit(&b->snap);
	for (int i = 0; i < b->nin; i++)
		for (int si = 0; si < SLOTS; si++)
			post_recv(b, i, si);
	if (b->w->rank == 0)
		MPI_Irecv(b->fail_msg, (int)sizeof(b->fail_msg), MPI_CHAR, MPI_ANY_SOURCE,
			  fail_tag(b), MPI_COMM_WORLD, &b->freq);
	return 0;
}

int bridge_start(struct bridge **out, struct region *rg, struct world *w, enum notify_mode mode,
		 void (*say)(const char *line))
{
	struct bridge *b = calloc(1, sizeof(*b));
	cpu_set_t cpus;
	int rc;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	b->rg = rg;
	b->w = w;
	b->n = region_nworkers(rg);
	b->bar = region_barrier(rg);
	b->parties = region_barrier_parties(rg);
	b->snap = MPI_DATATYPE_NULL;
	b->freq = b->fail_sreq = b->greq = MPI_REQUEST_NULL;
	b->sleep_ns = SLEEP_MIN_NS;
	b->mode = mode;
	b->say = say;
	sem_init(&b->inited, 0, 0);
	/* Spinning takes a core from a worker unless there is one to spare (the workers
	 * spin the same way: train_worker.c). */
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > w->hi - w->lo)
		b->spin_ns = SPIN_NS;
	b->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = b->efd < 0 ? -errno : bridge_setup(b);
	if (rc == 0)
		rc = -pthread_create(&b->thread, NULL, bridge_main, b);
	b->started = rc == 0;
	if (rc == 0) {
		while (sem_wait(&b->inited) < 0 && errno == EINTR)
			;
		rc = b->init_rc;	/* < 0: the thread has returned; bridge_free joins it */
	}
	if (rc < 0) {
		bridge_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

void bridge_finish(struct bridge *b)
{
	if (b)
		atomic_store(&b->finish, true);
}

int bridge_fd(const struct bridge *b)
{
	return b ? b->efd : -1;
}

bool bridge_ended(const struct bridge *b)
{
	return !b || atomic_load(&b->ended);
}

int bridge_silent(struct bridge *b, double *secs)
{
	int64_t now = notify_now_ns(), oldest = now;
	int who = -1;

	*secs = 0;
	if (!b || !b->heard)
		return -1;
	for (int r = 0; r < b->w->size; r++) {
		int64_t t = atomic_load_explicit(&b->heard[r], memory_order_relaxed);

		if (r != b->w->rank && (who < 0 || t < oldest)) {
			who = r;
			oldest = t;
		}
	}
	*secs = (double)(now - oldest) * 1e-9;
	return who;
}

bool bridge_failed(struct bridge *b, char *err, size_t errlen)
{
	uint64_t v;

	if (!b)
		return false;
	if (read(b->efd, &v, sizeof(v)) < 0) { /* nothing new: the flags below say */ }
	if (!atomic_load(&b->failed))
		return false;
	snprintf(err, errlen, "%s", b->fail_msg);
	return true;
}

void bridge_fail(struct bridge *b, const char *why)
{
	int64_t until = notify_now_ns() + FAIL_WAIT_NS;
	int done = 0;

	if (!b || b->w->rank == 0)
		return;
	/* in the bridge, not on this stack: the send may still be pending at the return */
	snprintf(b->fail_out, sizeof(b->fail_out), "%s", why);
	pthread_mutex_lock(&b->w->lock);
	MPI_Isend(b->fail_out, (int)strlen(b->fail_out) + 1, MPI_CHAR, 0, fail_tag(b),
		  MPI_COMM_WORLD, &b->fail_sreq);
	pthread_mutex_unlock(&b->w->lock);
	/* rank 0 writes its logs and ends the job; if it cannot, the caller does */
	while (notify_now_ns() < until) {
		struct timespec ts = { .tv_nsec = 10000000 };

		if (!done) {
			pthread_mutex_lock(&b->w->lock);
			MPI_Test(&b->fail_sreq, &done, MPI_STATUS_IGNORE);
			pthread_mutex_unlock(&b->w->lock);
		}
		nanosleep(&ts, NULL);
	}
}

/* A receive still posted (the bridge never started, or a link never closed): cancelled,
 * and waited for, so that MPI no longer writes into the buffer. */
static void cancel_recv(MPI_Request *req)
{
	if (*req == MPI_REQUEST_NULL)
		return;
	MPI_Cancel(req);
	MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* A send still pending: MPI may not cancel sends (Open MPI does not), and waiting could
 * wait for a receive never posted.  Released; true when one was, so that the caller keeps
 * the buffers it reads from. */
static bool release_send(MPI_Request *req)
{
	if (*req == MPI_REQUEST_NULL)
		return false;
	MPI_Request_free(req);
	return true;
}

void bridge_free(struct bridge *b)
{
	bool sending = false;

	if (!b)
		return;
	if (b->started)
		pthread_join(b->thread, NULL);
	/* Nothing is pending after a bridge that ended (every link closed); these are for
	 * one that never ran (pthread_create or the thread's notify_init failed after the
	 * receives were posted). */
	for (int i = 0; b->reqs && i < b->nin * SLOTS; i++)
		cancel_recv(&b->ireq[i]);
	cancel_recv(&b->freq);
	for (int i = 0; b->reqs && i < b->nout * SLOTS; i++)
		sending |= release_send(&b->oreq[i]);
	if (b->snap != MPI_DATATYPE_NULL)
		MPI_Type_free(&b->snap);
	if (b->bufs && !sending)	/* (else left mapped: MPI may still read it) */
		munmap(b->bufs, b->bufs_len + 1);
	if (b->efd >= 0)
		close(b->efd);
	if (b->nt.mode == NOTIFY_IO_URING || b->nt.mode == NOTIFY_FUTEX)
		notify_free(&b->nt);
	sem_destroy(&b->inited);
	free(b->out);
	free(b->in);
	free(b->oreq);
	free(b->ireq);
	free(b->idx);
	free(b->st);
	free(b->counts);
	free(b->displs);
	free((void *)b->heard);
	if (b->fail_sreq == MPI_REQUEST_NULL)	/* (else fail_out stays: MPI reads it) */
		free(b);
}
