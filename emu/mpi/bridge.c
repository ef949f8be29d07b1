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
 * The links between two ranks share one byte stream each way: MPI messages of at most
 * STREAM_BYTES, SLOTS of them in flight, each a run of records (a link's tag, its next
 * bytes; no bytes: the link's end).  Messages of one source and tag never overtake each
 * other, and the records of a link go in its order, so each link's bytes arrive as
 * sent.  A record whose ring is full is held for it (and the link's later records
 * after it) while the stream goes on: a slow reader holds up its own link and no other.
 * Why not a message per link: each link would need its receives posted, and MPI matches
 * an arriving message against its source's posted receives one by one, a cost that
 * grows with the square of the links (1,024 workers on 4 ranks: 390,000 links a rank).
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

#define SLOTS 2			/* buffers per stream: one in flight while the other fills */
#define STREAM_BYTES (256 << 10)	/* an MPI message of a stream, at most */
#define STREAM_TAG 1
#define FAIL_TAG 2
#define SPIN_NS 50000
#define SLEEP_MIN_NS 20000
#define SLEEP_MAX_NS 1000000
#define FAIL_WAIT_NS 5000000000LL	/* bridge_fail: how long rank 0 has to end the job */

enum slot_state { SLOT_FREE, SLOT_BUSY, SLOT_FULL };	/* FULL: received, not yet unpacked */

struct slot {
	uint8_t *buf;
	size_t len;
	int state;
};

/* A record of a stream: a link's next bytes (len 0: the link's end), padded to 8. */
struct rec {
	uint32_t tag, len;
};

/* One direction of one link as this rank sees it: a ring it reads and sends from (out),
 * or receives into and writes (in). */
struct blink {
	struct ring *r;
	int peer;		/* the rank at the other end: its stream */
	uint32_t tag;		/* src * n + dst; a worker w's log stream: n * n + w */
	bool xchg;		/* a link of the exchange (else a worker's log stream) */
	bool closing;		/* out: its end is in a stream; in: its end came */
	bool pending;		/* in: in the bridge's list of links with bytes held */
	uint8_t *held;		/* in: bytes that came while its ring was full, in order */
	size_t held_len, held_off, held_cap;
};

/* The links between this rank and one other, one direction: one byte stream. */
struct stream {
	struct slot s[SLOTS];
	int head;		/* in: the slot unpacked next (slots are posted in turn) */
	int *links, nlinks;	/* its links (out: their indices into out) */
	int next;		/* out: the link whose bytes go first in the next message */
};

struct bridge {
	struct region *rg;
	struct world *w;
	struct notify nt;
	int n;
	int nout, nin;
	struct blink *out, *in;		/* in: by tag, increasing */
	struct stream *os, *is;		/* per rank */
	int *olinks;			/* every stream's out links, stream by stream */
	int *pending, npending;		/* in links with bytes held */
	MPI_Request *oreq, *ireq;	/* [size * SLOTS] each */
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

static void link_set(struct blink *l, struct ring *r, int peer, uint32_t tag, bool xchg)
{
	*l = (struct blink){ .r = r, .peer = peer, .tag = tag, .xchg = xchg };
}

/* The links of this rank: exchange links whose one end is here and the other not, and
 * the log streams (out of a rank > 0, into rank 0); each list by tag.  count only:
 * out/in NULL. */
static void find_links(struct bridge *b, struct blink *out, struct blink *in)
{
	int n = b->n, no = 0, ni = 0, rank = b->w->rank;

	for (int src = 0; src < n; src++)
		for (int dst = 0; dst < n; dst++) {
			if (src == dst || local(b, src) == local(b, dst))
				continue;
			if (local(b, src) && out)
				link_set(&out[no], region_ring(b->rg, src, dst), rank_of(b, dst),
					 (uint32_t)(src * n + dst), true);
			if (!local(b, src) && in)
				link_set(&in[ni], region_ring(b->rg, src, dst), rank_of(b, src),
					 (uint32_t)(src * n + dst), true);
			no += local(b, src);
			ni += !local(b, src);
		}
	for (int w = 0; w < n; w++) {
		if (rank != 0 && local(b, w)) {
			if (out)
				link_set(&out[no], region_log_ring(b->rg, w), 0,
					 (uint32_t)(n * n + w), false);
			no++;
		} else if (rank == 0 && !local(b, w)) {
			if (in)
				link_set(&in[ni], region_log_ring(b->rg, w), rank_of(b, w),
					 (uint32_t)(n * n + w), false);
			ni++;
		}
	}
	b->nout = no;
	b->nin = ni;
}

static void post_recv(struct bridge *b, int rank, int si)
{
	struct slot *s = &b->is[rank].s[si];

	s->state = SLOT_BUSY;
	MPI_Irecv(s->buf, STREAM_BYTES, MPI_BYTE, rank, STREAM_TAG, MPI_COMM_WORLD,
		  &b->ireq[rank * SLOTS + si]);
}

static size_t pad8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

/* The next message of stream st into buf: its links' bytes, each as far as fits, from
 * the link after the last that did not fit (so that every link has its turn); a link
 * whose ring is empty once the workers are gone gets its end.  The bytes taken. */
static size_t fill_stream(struct bridge *b, struct stream *st, uint8_t *buf, bool finish)
{
	size_t used = 0;

	for (int k = 0; k < st->nlinks; k++) {
		int at = (st->next + k) % st->nlinks;
		struct blink *l = &b->out[st->links[at]];
		size_t room = STREAM_BYTES - used, got;

		if (l->closing)
			continue;
		if (room < sizeof(struct rec) + 8) {
			st->next = at;
			break;
		}
		got = ring_read(l->r, buf + used + sizeof(struct rec),
				(room - sizeof(struct rec)) & ~(size_t)7, &b->nt);
		if (got == 0 && !(finish && ring_readable(l->r) == 0))
			continue;
		memcpy(buf + used, &(struct rec){ l->tag, (uint32_t)got }, sizeof(struct rec));
		used += sizeof(struct rec) + pad8(got);
		l->closing = got == 0;	/* its end */
	}
	return used;
}

/* Sends: completions free slots; each stream's free slots take what its links' rings
 * hold.  Once the workers are gone and a ring is empty, its link's end goes. */
static bool pass_out(struct bridge *b)
{
	bool moved = false, finish = atomic_load(&b->finish);
	int cnt = 0, size = b->w->size;

	MPI_Testsome(size * SLOTS, b->oreq, &cnt, b->idx, MPI_STATUSES_IGNORE);
	for (int i = 0; i < cnt && cnt != MPI_UNDEFINED; i++)
		b->os[b->idx[i] / SLOTS].s[b->idx[i] % SLOTS].state = SLOT_FREE;
	moved |= cnt > 0 && cnt != MPI_UNDEFINED;
	for (int r = 0; r < size; r++) {
		struct stream *st = &b->os[r];

		for (int si = 0; si < SLOTS && st->nlinks; si++) {
			struct slot *s = &st->s[si];

			if (s->state != SLOT_FREE)
				continue;
			s->len = fill_stream(b, st, s->buf, finish);
			if (s->len == 0)
				break;
			MPI_Isend(s->buf, (int)s->len, MPI_BYTE, r, STREAM_TAG, MPI_COMM_WORLD,
				  &b->oreq[r * SLOTS + si]);
			s->state = SLOT_BUSY;
			moved = true;
		}
	}
	return moved;
}

/* The in link of a tag (in is by tag), or NULL. */
static struct blink *in_link(struct bridge *b, uint32_t tag)
{
	int lo = 0, hi = b->nin;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (b->in[mid].tag < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nin && b->in[lo].tag == tag ? &b->in[lo] : NULL;
}

/* Bytes of link l that its full ring cannot take now, kept in order after what it holds. */
static int hold(struct bridge *b, struct blink *l, const uint8_t *p, size_t len)
{
	if (l->held_off == l->held_len)
		l->held_off = l->held_len = 0;
	if (l->held_len + len > l->held_cap) {
		size_t cap = 2 * (l->held_len + len);
		uint8_t *h = realloc(l->held, cap);

		if (!h)
			return -ENOMEM;
		l->held = h;
		l->held_cap = cap;
	}
	memcpy(l->held + l->held_len, p, len);
	l->held_len += len;
	if (!l->pending) {
		l->pending = true;
		b->pending[b->npending++] = (int)(l - b->in);
	}
	return 0;
}

/* What a link holds, into its ring as far as it goes.  True when it moved bytes. */
static bool release(struct bridge *b, struct blink *l)
{
	size_t k = ring_write(l->r, l->held + l->held_off, l->held_len - l->held_off, &b->nt);

	l->held_off += k;
	return k > 0;
}

/* A message of a stream into its links' rings; what a full ring cannot take is held
 * (the stream never waits for one reader).  What comes for an exchange link after the
 * workers are gone has no reader: it is dropped (a finished run sends none). */
static int unpack(struct bridge *b, const struct slot *s, bool finish)
{
	for (size_t off = 0; off + sizeof(struct rec) <= s->len;) {
		struct rec h;

		memcpy(&h, s->buf + off, sizeof(h));
		const uint8_t *p = s->buf + off + sizeof(h);
		struct blink *l = in_link(b, h.tag);

		off += sizeof(h) + pad8(h.len);
		if (!l || off > s->len)
			return -EPROTO;
		if (h.len == 0) {
			l->closing = true;
			continue;
		}
		if (l->xchg && finish)
			continue;
		size_t k = l->pending ? 0 : ring_write(l->r, p, h.len, &b->nt);

		if (k < h.len && hold(b, l, p + k, h.len - k) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Receives: completions fill slots; each stream's slots are unpacked in the order they
 * were posted, and posted again; links' held bytes go into their rings as room frees. */
static bool pass_in(struct bridge *b)
{
	bool moved = false, finish = atomic_load(&b->finish);
	int cnt = 0, size = b->w->size;

	MPI_Testsome(size * SLOTS, b->ireq, &cnt, b->idx, b->st);
	for (int i = 0; i < cnt && cnt != MPI_UNDEFINED; i++) {
		struct slot *s = &b->is[b->idx[i] / SLOTS].s[b->idx[i] % SLOTS];
		int len = 0;

		MPI_Get_count(&b->st[i], MPI_BYTE, &len);
		atomic_store_explicit(&b->heard[b->idx[i] / SLOTS], notify_now_ns(),
				      memory_order_relaxed);
		s->state = SLOT_FULL;
		s->len = (size_t)len;
		moved = true;
	}
	for (int r = 0; r < size; r++) {
		struct stream *st = &b->is[r];

		while (st->s[st->head].state == SLOT_FULL) {
			int rc = unpack(b, &st->s[st->head], finish);

			if (rc < 0) {	/* a link's bytes would be lost: nothing to go on with */
				char line[160];

				snprintf(line, sizeof(line), "rank %d: the stream from rank %d: %s",
					 b->w->rank, r, strerror(-rc));
				if (b->say)
					b->say(line);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			post_recv(b, r, st->head);
			st->head = (st->head + 1) % SLOTS;
		}
	}
	for (int i = 0; i < b->npending; i++) {
		struct blink *l = &b->in[b->pending[i]];

		if (l->xchg && finish)
			l->held_off = l->held_len;
		else
			moved |= release(b, l);
		if (l->held_off == l->held_len) {
			l->pending = false;
			b->pending[i--] = b->pending[--b->npending];
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

/* Every link ended both ways, its bytes delivered, every send completed. */
static bool all_closed(const struct bridge *b)
{
	for (int i = 0; i < b->nout; i++)
		if (!b->out[i].closing)
			return false;
	for (int i = 0; i < b->nin; i++)
		if (!b->in[i].closing)
			return false;
	for (int i = 0; i < b->w->size * SLOTS; i++)
		if (b->os[i / SLOTS].s[i % SLOTS].state == SLOT_BUSY)
			return false;
	return b->npending == 0 && !b->gathering;
}

static bool has_free_slot(const struct stream *st)
{
	for (int si = 0; si < SLOTS; si++)
		if (st->s[si].state == SLOT_FREE)
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

	for (int i = 0; i < b->npending && cnt < NOTIFY_MAX_WORDS; i++) {
		struct blink *l = &b->in[b->pending[i]];

		expect[cnt] = ring_arm_write(l->r);
		words[cnt] = ring_tail_word(l->r);
		armed[cnt] = l->r;
		reading[cnt++] = false;
		ready |= ring_writable(l->r) > 0;
	}
	for (int k = 0; k < b->nout && cnt < NOTIFY_MAX_WORDS; k++) {
		struct blink *l = &b->out[(b->arm_from + k) % b->nout];

		/* Bytes in a ring whose stream's both buffers still wait on MPI cannot
		 * move: not a reason to stay awake (the loop would never sleep), nor to be
		 * woken for more.  The sends' completions are seen at the timeout. */
		if (l->closing || !has_free_slot(&b->os[l->peer]))
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

/* A receive still posted (the run over, or the bridge never started): cancelled, and
 * waited for, so that MPI no longer writes into the buffer. */
static void cancel_recv(MPI_Request *req)
{
	if (*req == MPI_REQUEST_NULL)
		return;
	MPI_Cancel(req);
	MPI_Wait(req, MPI_STATUS_IGNORE);
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
		if (done) {	/* no failure, nor another stream message, will come now */
			cancel_recv(&b->freq);
			for (int i = 0; i < b->w->size * SLOTS; i++)
				cancel_recv(&b->ireq[i]);
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

/* Buffers, requests, streams, the snapshot type; the receives posted.  0 or -errno. */
static int bridge_setup(struct bridge *b)
{
	int size = b->w->size, nreq = size * SLOTS, *at;
	size_t stride = region_snapshot_stride(b->rg), off = 0;

	find_links(b, NULL, NULL);
	b->out = calloc((size_t)b->nout + 1, sizeof(*b->out));
	b->in = calloc((size_t)b->nin + 1, sizeof(*b->in));
	b->os = calloc((size_t)size, sizeof(*b->os));
	b->is = calloc((size_t)size, sizeof(*b->is));
	b->olinks = calloc((size_t)b->nout + 1, sizeof(*b->olinks));
	b->pending = calloc((size_t)b->nin + 1, sizeof(*b->pending));
	b->oreq = calloc((size_t)nreq, sizeof(*b->oreq));
	b->ireq = calloc((size_t)nreq, sizeof(*b->ireq));
	b->idx = calloc((size_t)nreq, sizeof(*b->idx));
	b->st = calloc((size_t)nreq, sizeof(*b->st));
	b->counts = calloc((size_t)size, sizeof(*b->counts));
	b->displs = calloc((size_t)size, sizeof(*b->displs));
	b->heard = calloc((size_t)size, sizeof(*b->heard));
	at = calloc((size_t)size + 1, sizeof(*at));
	if (!b->out || !b->in || !b->os || !b->is || !b->olinks || !b->pending || !b->oreq ||
	    !b->ireq || !b->idx || !b->st || !b->counts || !b->displs || !b->heard || !at) {
		free(at);
		return -ENOMEM;
	}
	for (int r = 0; r < size; r++)	/* (the start counts as news of every rank) */
		atomic_store(&b->heard[r], notify_now_ns());
	for (int i = 0; i < nreq; i++)	/* from here bridge_free reads them */
		b->oreq[i] = b->ireq[i] = MPI_REQUEST_NULL;
	b->reqs = true;
	find_links(b, b->out, b->in);
	/* each stream's out links, in the order of their tags */
	for (int i = 0; i < b->nout; i++)
		b->os[b->out[i].peer].nlinks++;
	for (int r = 0; r < size; r++) {
		b->os[r].links = b->olinks + at[r];
		at[r + 1] = at[r] + b->os[r].nlinks;
		b->os[r].nlinks = 0;
	}
	for (int i = 0; i < b->nout; i++) {
		struct stream *st = &b->os[b->out[i].peer];

		st->links[st->nlinks++] = i;
	}
	free(at);
	for (int i = 0; i < b->nin; i++)	/* a stream from every rank that sends here */
		b->is[b->in[i].peer].nlinks++;
	b->bufs_len = 2 * (size_t)size * SLOTS * STREAM_BYTES;
	/* untouched pages cost nothing: a stream uses what its messages fill */
	b->bufs = mmap(NULL, b->bufs_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->bufs == MAP_FAILED) {
		b->bufs = NULL;
		return -ENOMEM;
	}
	for (int r = 0; r < size; r++)
		for (int si = 0; si < SLOTS; si++) {
			b->os[r].s[si].buf = b->bufs + off;
			b->is[r].s[si].buf = b->bufs + off + STREAM_BYTES;
			off += 2 * STREAM_BYTES;
		}
	if (stride > (size_t)INT32_MAX)
		return -EFBIG;
	for (int r = 0; r < size; r++) {
		b->displs[r] = world_first(b->n, size, r);
		b->counts[r] = world_first(b->n, size, r + 1) - b->displs[r];
	}
	MPI_Type_contiguous((int)stride, MPI_BYTE, &b->snap);
	MPI_Type_commit(&b->snap);
	for (int r = 0; r < size; r++)
		for (int si = 0; si < SLOTS && b->is[r].nlinks; si++)
			post_recv(b, r, si);
	if (b->w->rank == 0)
		MPI_Irecv(b->fail_msg, (int)sizeof(b->fail_msg), MPI_CHAR, MPI_ANY_SOURCE,
			  FAIL_TAG, MPI_COMM_WORLD, &b->freq);
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
	MPI_Isend(b->fail_out, (int)strlen(b->fail_out) + 1, MPI_CHAR, 0, FAIL_TAG,
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
	for (int i = 0; b->reqs && i < b->w->size * SLOTS; i++)
		cancel_recv(&b->ireq[i]);
	cancel_recv(&b->freq);
	for (int i = 0; b->reqs && i < b->w->size * SLOTS; i++)
		sending |= release_send(&b->oreq[i]);
	if (b->snap != MPI_DATATYPE_NULL)
		MPI_Type_free(&b->snap);
	if (b->bufs && !sending)	/* (else left mapped: MPI may still read it) */
		munmap(b->bufs, b->bufs_len);
	if (b->efd >= 0)
		close(b->efd);
	if (b->nt.mode == NOTIFY_IO_URING || b->nt.mode == NOTIFY_FUTEX)
		notify_free(&b->nt);
	sem_destroy(&b->inited);
	for (int i = 0; b->in && i < b->nin; i++)
		free(b->in[i].held);
	free(b->out);
	free(b->in);
	free(b->os);
	free(b->is);
	free(b->olinks);
	free(b->pending);
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
