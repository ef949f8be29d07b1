/* emu/net/xchg.c — the partitioned parameter-server collective (see xchg.h).
 *
 * Wire format on a ring (xhdr.h), one message after another (the stream is FIFO, and
 * every worker reads exactly one message per ring per phase, so no other framing is
 * needed): header | arrived bitmap | the bytes of the ARRIVED units only, in unit order.
 * A message lost entirely is header + bitmap (the marker): nobody waits in real time, and
 * the receiver's virtual clock is charged the timeout instead.  The receiver zero-fills
 * the lost units.
 *
 * A phase moves all its messages at once: a non-blocking loop over every unfinished
 * outgoing and incoming ring writes what fits and reads what is there, so two workers
 * streaming big messages at each other through small rings never deadlock.  When a pass
 * moves nothing, the worker spins for nt->spin_ns, then arms every unfinished ring
 * (in-rings' head words, full out-rings' tail words), re-checks, and sleeps in ONE
 * notify_wait covering all of them.
 *
 * Network model: the sender runs net_send for each message when the phase starts, in a
 * fixed order (servers/workers id+1, id+2, ... mod N), through one transmit queue per
 * worker (its NIC: scatter messages and replies serialise one after the other), and the
 * resulting arrival times travel in the header.
 *
 * Virtual clock, per phase: a receiver began waiting at its clock T when the phase
 * started.  On an unreliable link, units arriving after T + timeout of that link are
 * discarded (zeroed, counted late: apply_deadline, from the arrival times the message
 * carries).  For each peer it is then ready at the last arrival it kept when the message
 * is complete, else at T + timeout (unreliable) or at the last arrival or give-up time
 * (reliable).  Its clock becomes the max over peers (and T).
 *
 * Schedules ([event] sections, net.h): the sender's net_send decides per transmission
 * whether a window is in effect; the receiver takes each phase's timeout of a link from
 * the windows in effect for the step and the time it began to wait (phase_timeouts).
 *
 * Corruption: the sender writes the byte holding a flipped bit flipped into the ring
 * (out_progress stops at it), so the receiver gets what an unreliable transport without
 * an end-to-end checksum delivers.
 */
#include "emu/net/xchg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/net.h"
#include "emu/net/xhdr.h"
#include "emu/shm/inbox.h"
#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/shm/ring.h"

enum { PHASE_SCATTER = 0, PHASE_BCAST = 1 };
enum { ST_HDR, ST_BITS, ST_TIMES, ST_DATA, ST_DONE };

/* A bit the network flipped: at byte off of the message (corrupt). */
struct xflip {
	size_t off;
	uint8_t mask;
};

/* One message in flight, either direction.  Data moves in runs of consecutive arrived
 * units: [pos, run_end) of the message's bytes. */
struct xflow {
	struct ring *r;
	int peer;
	int stage;
	size_t off;		/* bytes of the header / bitmap moved */
	struct xhdr h;
	uint64_t *bits;
	size_t bitbytes;
	int64_t *times;		/* [nunits] arrival of each unit, -1 lost */
	/* sender: the flipped bits of the arrived units, in message order */
	struct xflip *flips;
	int nflips, fi;
	int next_unit;		/* first unit after the current run */
	size_t pos, run_end;
	/* sender: the payload */
	const struct xchg_iov *iov;
	int ci;			/* current iov and the message offset where it starts */
	size_t cbase;
	/* receiver: where the payload goes */
	uint8_t *buf;
	/* or, zero-copy, where it is: in the ring (zc_len bytes given back after use), or
	 * in the sender's outbox (by reference: zc_len 0) */
	const uint8_t *zc;
	size_t zc_len;
};

struct xpriv {
	void *mem;			/* one allocation for the arrays below */
	size_t max_msg;
	bool fits;		/* every message fits its ring whole: no sender ever waits for space */
	bool post;		/* one host: a sender posts every whole message to its receiver's inbox */
	bool inbox;		/* and two messages fit every ring into this worker: it sleeps
				 * on its inbox for the last message of a phase (see flows_sleep) */
	uint8_t *outbox;	/* this worker's, when messages go by reference; else NULL */
	size_t outbox_bytes;	/* each worker's */
	size_t stage_off;	/* where the algorithm's staging area begins (xchg_outbox) */
	int ngone;			/* peers down in this step (gone) */
	int max_units, words;	/* bitmap words per message */
	struct net_txq txq;
	int32_t *flip;			/* [max_units] scratch for net_send */
	struct net_link *link;		/* [n]: id -> j */
	int64_t *timeout_in;		/* [n]: j -> id, unreliable timeout; -1 reliable */
	/* the schedules (net.h): the windows of id -> j, then of j -> id, for each j */
	struct net_window *win;		/* own copy, nwin of them */
	int nwin;
	int *win_out, *win_in, *nwin_out, *nwin_in;	/* [n]: first index, count */
	struct net_cfg *from;		/* [n]: the model of j -> id (its timeout) */
	struct xchg_link_stats *stats;	/* [n]: sender side of id -> j */
	struct xchg_link_stats *stats_in;	/* [n]: receiver side of j -> id */
	struct xflow *out, *in;		/* [n] */
	struct xchg_iov *iov;		/* [n][XCHG_MAX_IOV] */
	int *niov;			/* [n] */
	struct xmsg *msg;		/* [n] */
	uint8_t *buf;			/* [n][max_msg] receive buffers; [id]: own message */
	uint8_t *reply;			/* [max_msg]: in the outbox when it fits there */
	uint64_t *bits_out, *bits_in;	/* [n][words] */
	int64_t *times_out, *times_in;	/* [n][max_units] */
	struct xflip *flips;		/* [n][max_units] */
	uint64_t *bits_all;		/* [words], all ones */
	size_t buf_stride;
	struct net_cfg self_cfg;	/* units of one's own message */
	struct xchg_absence *absent;	/* the peers' crashes (own allocation) */
	int nabsent;
	bool *gone;			/* [n]: peer j is down in this step (absent) */
	int64_t *giveup_in;		/* [n]: j -> id, how long a reliable transport tries */
};

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* The next run of arrived units at or after flow->next_unit; false when there is none. */
static bool next_run(struct xflow *f)
{
	return xhdr_next_run(&f->h, f->bits, &f->next_unit, &f->pos, &f->run_end);
}

/* Data stage start: the first non-empty run, or done. */
static void start_data(struct xflow *f)
{
	f->next_unit = 0;
	f->stage = ST_DONE;
	while (next_run(f)) {
		if (f->pos < f->run_end) {
			f->stage = ST_DATA;
			return;
		}
	}
}

static bool advance_run(struct xflow *f)
{
	while (f->pos >= f->run_end) {
		if (!next_run(f)) {
			f->stage = ST_DONE;
			return false;
		}
	}
	return true;
}

/* On a ring, a message of one unit (every message, unless [net] unit = packet) is its
 * header alone: its bitmap is narrived and its arrival time is arrive, or -1 when lost,
 * as net_send leaves them (start_out checks).  The header is one cache line of the
 * ring (a message into an empty ring starts on one) where with them it took two: 64
 * workers move 8064 messages a step, most by reference (the header is all there is). */
static size_t ring_bits_bytes(const struct xhdr *h)
{
	return h->nunits == 1 ? 0 : xhdr_bitmap_bytes(h);
}

static size_t ring_times_bytes(const struct xhdr *h)
{
	return h->nunits == 1 ? 0 : xhdr_times_bytes(h);
}

/* Receiver: a one-unit message's bitmap and time, from its header. */
static void one_unit(struct xflow *f)
{
	if (f->h.nunits == 1) {
		f->bits[0] = f->h.narrived ? 1 : 0;
		f->times[0] = f->h.narrived ? f->h.arrive : -1;
	}
}

/* Sender: the header, bitmap and times are written; the payload's first run next. */
static void out_start_data(struct xflow *f)
{
	f->ci = 0;
	f->cbase = 0;
	start_data(f);
	if (f->h.ref)
		f->stage = ST_DONE;	/* the payload stays in the outbox */
}

/* Sender: header, bitmap and times, and the payload when it is one piece (every unit
 * arrived, one iov, no flipped bit), in one ring_writev when they fit: one publication
 * instead of four (64 workers write 8064 messages a step).  false when nothing moved. */
static bool out_whole(struct xflow *f, struct notify *nt)
{
	struct ring_vec v[4] = {
		{ &f->h, sizeof(f->h) },
		{ f->bits, ring_bits_bytes(&f->h) },
		{ f->times, ring_times_bytes(&f->h) },
	};
	int nv = 3;

	out_start_data(f);
	bool payload = f->stage == ST_DATA && f->pos == 0 && f->run_end == f->h.len &&
		       f->nflips == 0 && f->iov[0].len == f->h.len;

	if (payload)
		v[nv++] = (struct ring_vec){ (void *)f->iov[0].base, f->h.len };
	if (!ring_writev(f->r, v, nv, nt)) {
		f->stage = ST_HDR;	/* as it was: the pieces go one by one */
		return false;
	}
	if (payload) {
		f->pos = f->run_end;
		advance_run(f);
	}
	return true;
}

/* Sender: write what fits.  Returns whether any byte moved. */
static bool out_progress(struct xflow *f, struct notify *nt)
{
	bool moved = f->stage == ST_HDR && f->off == 0 && out_whole(f, nt);
	size_t k;

	while (f->stage != ST_DONE) {
		if (f->stage == ST_HDR) {
			k = ring_write(f->r, (const uint8_t *)&f->h + f->off, sizeof(f->h) - f->off, nt);
			f->off += k;
			if (f->off < sizeof(f->h))
				return moved || k;
			moved = true;
			f->stage = ST_BITS;
			f->off = 0;
		} else if (f->stage == ST_BITS) {
			size_t bb = ring_bits_bytes(&f->h);

			k = ring_write(f->r, (const uint8_t *)f->bits + f->off, bb - f->off, nt);
			f->off += k;
			if (f->off < bb)
				return moved || k;
			moved = true;
			f->stage = ST_TIMES;
			f->off = 0;
		} else if (f->stage == ST_TIMES) {
			size_t tb = ring_times_bytes(&f->h);

			k = ring_write(f->r, (const uint8_t *)f->times + f->off, tb - f->off, nt);
			f->off += k;
			if (f->off < tb)
				return moved || k;
			moved = true;
			out_start_data(f);
		} else {
			/* the iov holding pos: runs only move forward, so does the cursor */
			while (f->pos >= f->cbase + f->iov[f->ci].len) {
				f->cbase += f->iov[f->ci].len;
				f->ci++;
			}
			size_t in_iov = f->cbase + f->iov[f->ci].len - f->pos;
			size_t want = f->run_end - f->pos < in_iov ? f->run_end - f->pos : in_iov;
			const uint8_t *src = (const uint8_t *)f->iov[f->ci].base + (f->pos - f->cbase);

			if (f->fi < f->nflips && f->flips[f->fi].off < f->pos + want) {
				/* stop at a flipped bit; write its byte alone, flipped */
				const struct xflip *fl = &f->flips[f->fi];

				if (fl->off > f->pos) {
					want = fl->off - f->pos;
				} else {
					uint8_t byte = *src ^ fl->mask;

					k = ring_write(f->r, &byte, 1, nt);
					if (!k)
						return moved;
					moved = true;
					f->pos++;
					f->fi++;
					advance_run(f);
					continue;
				}
			}
			k = ring_write(f->r, src, want, nt);
			f->pos += k;
			moved |= k > 0;
			if (k < want)
				return moved;
			advance_run(f);
		}
	}
	return moved;
}

static int bad_header(const struct xchg *x, const struct xflow *f, int64_t step, int phase,
		      const char *what)
{
	fprintf(stderr,
		"emu: worker %d: xchg step %lld phase %d: bad message from worker %d: %s "
		"(src %u phase %u magic %#x step %lld len %llu unit %llu nunits %d narrived %d)\n",
		x->id, (long long)step, phase, f->peer, what, f->h.src, f->h.phase, f->h.magic,
		(long long)f->h.step, (unsigned long long)f->h.len,
		(unsigned long long)f->h.unit, f->h.nunits, f->h.narrived);
	return -EPROTO;
}

static int check_header(const struct xchg *x, const struct xflow *f, int64_t step, int phase)
{
	const struct xpriv *p = x->priv;
	const struct xhdr_expect e = { .peer = f->peer, .phase = phase, .step = step,
				       .max_msg = p->max_msg, .max_units = p->max_units,
				       .ref_cap = p->outbox ? p->outbox_bytes : 0 };
	const char *why = xhdr_check(&f->h, &e);

	return why ? bad_header(x, f, step, phase, why) : 0;
}

/* Zero-copy: a whole message (every unit arrived: its payload is one run of len
 * bytes) whose payload is in the ring already, in one piece and aligned, is read
 * in place by reduce and apply, and given back after them (release_in_place), instead
 * of being copied out first: a third of the exchange's memory traffic.  Only in inbox
 * mode, where two messages fit every ring: holding one back never stops a sender (a
 * peer has at most two of ours unread, inbox_sleep says why). */
static void in_place(struct xchg *x, struct xflow *f)
{
	const struct xpriv *p = x->priv;
	const uint8_t *q;

	if (!p->inbox || f->stage != ST_DATA || f->h.narrived != f->h.nunits ||
	    f->pos != 0 || f->run_end != f->h.len)
		return;
	q = ring_peek(f->r, f->h.len);
	if (!q || (uintptr_t)q % XHDR_PAYLOAD_ALIGN)
		return;
	f->zc = q;
	f->zc_len = f->h.len;
	f->stage = ST_DONE;
}

/* Give back the payloads read in place, once reduce or apply is done with them. */
static void release_in_place(struct xchg *x)
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++) {
		struct xflow *f = &p->in[j];

		if (j != x->id && f->zc_len) {
			ring_consume(f->r, f->zc_len, x->nt);
			f->zc = NULL;
			f->zc_len = 0;
		}
	}
}

/* Receiver: the bitmap is read (0, or -EPROTO when it disagrees with the header). */
static int in_bits_read(struct xchg *x, struct xflow *f, int64_t step, int phase)
{
	const char *why = xhdr_apply_bitmap(&f->h, f->bits, f->buf);

	return why ? bad_header(x, f, step, phase, why) : 0;
}

/* Receiver: the times are read; the payload's first run next, in place if it can be. */
static void in_start_data(struct xchg *x, struct xflow *f)
{
	if (f->h.ref) {		/* by reference (xhdr_check kept it inside the outbox) */
		f->zc = (const uint8_t *)region_outbox(x->rg, f->peer) + (f->h.ref - 1);
		f->stage = ST_DONE;
		return;
	}
	start_data(f);
	in_place(x, f);
}

/* Receiver: header, bitmap and times in one ring_readv when all are there (out_whole's
 * counterpart), then the payload's first run as in_progress would.  1 when read, 0 when
 * not all there (nothing consumed), or -EPROTO. */
static int in_whole(struct xchg *x, struct xflow *f, int64_t step, int phase)
{
	if (!ring_peek_copy(f->r, &f->h, sizeof(f->h)))
		return 0;
	int rc = check_header(x, f, step, phase);

	if (rc)
		return rc;
	struct ring_vec v[3] = {
		{ &f->h, sizeof(f->h) },
		{ f->bits, ring_bits_bytes(&f->h) },
		{ f->times, ring_times_bytes(&f->h) },
	};

	if (!ring_readv(f->r, v, 3, x->nt))
		return 0;
	f->bitbytes = xhdr_bitmap_bytes(&f->h);
	one_unit(f);
	rc = in_bits_read(x, f, step, phase);
	if (rc)
		return rc;
	in_start_data(x, f);
	return 1;
}

/* Receiver: read what is there.  Returns 1 if bytes moved, 0 if not, or -EPROTO. */
static int in_progress(struct xchg *x, struct xflow *f, int64_t step, int phase)
{
	struct notify *nt = x->nt;
	bool moved = false;
	size_t k;
	int rc;

	if (f->stage == ST_HDR && f->off == 0) {
		rc = in_whole(x, f, step, phase);
		if (rc < 0)
			return rc;
		moved = rc > 0;
	}
	while (f->stage != ST_DONE) {
		if (f->stage == ST_HDR) {
			k = ring_read(f->r, (uint8_t *)&f->h + f->off, sizeof(f->h) - f->off, nt);
			f->off += k;
			if (f->off < sizeof(f->h))
				return moved || k;
			moved = true;
			rc = check_header(x, f, step, phase);
			if (rc)
				return rc;
			f->stage = ST_BITS;
			f->off = 0;
			f->bitbytes = xhdr_bitmap_bytes(&f->h);
			one_unit(f);
		} else if (f->stage == ST_BITS) {
			size_t bb = ring_bits_bytes(&f->h);

			k = ring_read(f->r, (uint8_t *)f->bits + f->off, bb - f->off, nt);
			f->off += k;
			if (f->off < bb)
				return moved || k;
			moved = true;
			rc = in_bits_read(x, f, step, phase);
			if (rc)
				return rc;
			f->stage = ST_TIMES;
			f->off = 0;
		} else if (f->stage == ST_TIMES) {
			size_t tb = ring_times_bytes(&f->h);

			k = ring_read(f->r, (uint8_t *)f->times + f->off, tb - f->off, nt);
			f->off += k;
			if (f->off < tb)
				return moved || k;
			moved = true;
			in_start_data(x, f);
		} else {
			size_t want = f->run_end - f->pos;

			k = ring_read(f->r, f->buf + f->pos, want, nt);
			f->pos += k;
			moved |= k > 0;
			if (k < want)
				return moved;
			advance_run(f);
		}
	}
	return moved;
}

/* One non-blocking pass over every unfinished flow of the phase: 1 while some flow is
 * unfinished (*moved: whether any made progress), 0 when all are done, or -errno. */
static int flows_pass(struct xchg *x, int64_t step, int phase, bool *moved)
{
	struct xpriv *p = x->priv;
	bool busy = false;

	*moved = false;
	/* Every ring's lines this pass will touch, asked for at once: 64 workers touch
	 * 8064 rings a step, each line last written by another process, and one miss
	 * after the other costs more than the messages themselves. */
	for (int j = 0; j < x->n; j++) {
		if (j == x->id)
			continue;
		if (p->out[j].stage != ST_DONE) {
			struct ring *r = p->out[j].r;

			__builtin_prefetch(&r->head, 1);
			__builtin_prefetch(&r->tail, 0);
			__builtin_prefetch(r->data, 1);
		}
		if (p->in[j].stage != ST_DONE) {
			struct ring *r = p->in[j].r;

			__builtin_prefetch(&r->head, 0);
			__builtin_prefetch(&r->tail, 1);
			__builtin_prefetch(r->data, 0);
		}
	}
	for (int j = 0; j < x->n; j++) {
		if (j == x->id)
			continue;
		if (p->out[j].stage != ST_DONE) {
			*moved |= out_progress(&p->out[j], x->nt);
			busy |= p->out[j].stage != ST_DONE;
			if (p->post && p->out[j].stage == ST_DONE)
				inbox_post(region_inbox(x->rg, j), phase, x->nt);
		}
		if (p->in[j].stage != ST_DONE) {
			int rc = in_progress(x, &p->in[j], step, phase);

			if (rc < 0)
				return rc;
			*moved |= rc > 0;
			busy |= p->in[j].stage != ST_DONE;
		}
	}
	return busy;
}

/* In inbox mode, with every outgoing message written: one sleep until the last incoming
 * one is whole (inbox.h), instead of one per ring.  Every peer writes its message of
 * this phase whole without waiting: at most two of its messages are in our ring at a
 * time (it writes the next scatter only after our broadcast, and the next broadcast
 * only after our scatter), and two fit.  False when some outgoing message is unfinished:
 * the rings' own sleep then. */
static bool inbox_sleep(struct xchg *x, int phase)
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++)
		if (j != x->id && p->out[j].stage != ST_DONE)
			return false;
	struct inbox *in = region_inbox(x->rg, x->id);

	inbox_wait(in, phase, in->target[phase], x->nt);
	return true;
}

/* Arm, re-check, sleep once on all unfinished rings, disarm.  When every message fits
 * its ring, no sender can be waiting for this worker to make space, so only the first
 * unfinished in-ring is armed: a worker waiting for N-1 messages then wakes a few times,
 * not once per message (with 16 workers on 2 cores, each wake is a context switch). */
static void flows_sleep(struct xchg *x, int phase)
{
	struct xpriv *p = x->priv;

	if (p->inbox && inbox_sleep(x, phase))
		return;
	_Atomic uint32_t *words[NOTIFY_MAX_WORDS];
	uint32_t expect[NOTIFY_MAX_WORDS];
	struct ring *armed_r[NOTIFY_MAX_WORDS];
	bool armed_read[NOTIFY_MAX_WORDS];
	int cnt = 0;
	bool ready = false, armed_one_in = false;

	for (int j = 0; j < x->n; j++) {
		if (j == x->id)
			continue;
		if (p->in[j].stage != ST_DONE) {
			struct ring *r = p->in[j].r;

			ready |= ring_readable(r) > 0;
			if (!p->fits || !armed_one_in) {
				expect[cnt] = ring_arm_read(r);
				words[cnt] = ring_head_word(r);
				armed_r[cnt] = r;
				armed_read[cnt++] = true;
				armed_one_in = true;
				/* again, after arming: data written between the check above and
				 * the arm would otherwise wake nobody */
				ready |= ring_readable(r) > 0;
			}
		}
		if (p->out[j].stage != ST_DONE) {
			struct ring *r = p->out[j].r;

			expect[cnt] = ring_arm_write(r);
			words[cnt] = ring_tail_word(r);
			armed_r[cnt] = r;
			armed_read[cnt++] = false;
			ready |= ring_writable(r) > 0;
		}
	}
	if (!ready && x->nt->race_ns > 0)	/* tests: widen the window before the sleep */
		notify_delay_ns(x->nt->race_ns);
	if (!ready && cnt > 0)	/* cnt > 0: some flow is unfinished */
		notify_wait(x->nt, cnt, words, expect, -1);
	for (int i = 0; i < cnt; i++) {
		if (armed_read[i])
			ring_disarm_read(armed_r[i]);
		else
			ring_disarm_write(armed_r[i]);
	}
}

static int move_flows(struct xchg *x, int64_t step, int phase)
{
	int64_t spin_until = -1;

	for (;;) {
		bool moved;
		int rc = flows_pass(x, step, phase, &moved);

		if (rc <= 0)
			return rc;
		if (moved) {
			spin_until = -1;
			continue;
		}
		if (x->nt->spin_ns > 0) {
			int64_t now = notify_now_ns();

			if (spin_until < 0)
				spin_until = now + x->nt->spin_ns;
			if (now < spin_until) {
				for (int i = 0; i < 32; i++)
					notify_cpu_relax();
				continue;
			}
		}
		flows_sleep(x, phase);
		spin_until = -1;
	}
}

/* Move every flow of the phase to completion: passes while they move, a spin of
 * nt->spin_ns when they stop, then a sleep (see the file comment).  With run slots
 * (more workers than cores) and messages that fit their rings whole, the phase's wakes
 * (a receiver's last message posted) go out together, with the sleep that follows the
 * pass or when the phase is done (notify_hold): no sender waits for a receiver to make
 * room, so nobody needs them sooner. */
static int run_flows(struct xchg *x, int64_t step, int phase)
{
	bool hold = ((struct xpriv *)x->priv)->fits && x->nt->slots;

	if (hold)
		notify_hold(x->nt);
	int rc = move_flows(x, step, phase);

	if (hold)
		notify_release(x->nt);
	return rc;
}

/* By reference: a whole message (every unit arrived, no bit flipped) in one piece in
 * this worker's outbox goes as its header, bitmap and times only; the receiver reads the
 * payload where it lies (in_start_data).  Every message and reply is then written once,
 * by whoever computes it, instead of once more into each ring: a third of the
 * exchange's memory traffic.  The payload must stay as it is until every receiver has
 * used it, and it does: a server reads a worker's scatter message before it sends its
 * reply, and the worker changes it only after every reply of the step is in; a worker
 * reads a server's reply before it sends its next scatter message, and the server
 * writes its next reply only after every scatter message of that step is in. */
static void by_reference(struct xchg *x, struct xflow *f, const struct xchg_iov *iov,
			 size_t len)
{
	struct xpriv *p = x->priv;
	uintptr_t b = (uintptr_t)iov[0].base, o = (uintptr_t)p->outbox;

	if (!p->outbox || f->h.narrived != f->h.nunits || f->nflips || iov[0].len != len ||
	    b < o || len > p->outbox_bytes || b - o > p->outbox_bytes - len ||
	    (b - o) % XHDR_PAYLOAD_ALIGN)
		return;
	f->h.ref = (uint64_t)(b - o) + 1;
	x->by_ref++;
}

/* Prepare the outgoing message to peer j: run the network model, fill the header. */
static int start_out(struct xchg *x, int j, int64_t step, int phase, uint32_t flags,
		     const struct xchg_iov *iov, size_t len)
{
	struct xpriv *p = x->priv;
	struct xflow *f = &p->out[j];
	struct xchg_link_stats *st = &p->stats[j];
	struct net_msg m;

	memset(f, 0, sizeof(*f));
	f->r = region_ring(x->rg, x->id, j);
	f->peer = j;
	f->bits = p->bits_out + (size_t)j * p->words;
	f->times = p->times_out + (size_t)j * p->max_units;
	f->flips = p->flips + (size_t)j * p->max_units;
	f->iov = iov;
	/* len <= max_msg was checked, so nunits <= max_units (sized for every model the link
	 * may take), and the queue was sized for every link's limit: net_send cannot fail */
	int rc = net_send(&p->link[j], &p->txq, len, step, phase, x->clock, f->bits, f->times,
			  p->flip, &m);

	if (rc < 0 || m.nunits > p->max_units) {
		fprintf(stderr, "emu: worker %d: xchg step %lld: the network model of link %d -> %d "
			"could not send %zu bytes (%s)\n", x->id, (long long)step, x->id, j, len,
			rc < 0 ? strerror(-rc) : "more units than sized for");
		return -EPROTO;
	}
	for (int u = 0; u < m.nunits; u++)
		if (p->flip[u] >= 0)
			f->flips[f->nflips++] = (struct xflip){
				.off = (size_t)u * m.unit + (size_t)(p->flip[u] >> 3),
				.mask = (uint8_t)(1u << (p->flip[u] & 7)) };
	f->h = (struct xhdr){ .src = (uint16_t)x->id, .phase = (uint8_t)phase,
			      .magic = XHDR_MAGIC, .flags = flags, .step = step, .len = len,
			      .unit = m.unit, .nunits = m.nunits, .narrived = m.narrived,
			      .depart = m.depart, .arrive = m.last_arrival };
	if (m.nunits == 1 && f->times[0] != (m.narrived ? m.last_arrival : -1)) {
		fprintf(stderr, "emu: worker %d: xchg step %lld: the network model of link %d -> "
			"%d gave one unit arriving at %lld, the message at %lld\n", x->id,
			(long long)step, x->id, j, (long long)f->times[0],
			(long long)m.last_arrival);
		return -EPROTO;	/* one_unit would not give the receiver its time */
	}
	f->bitbytes = xhdr_bitmap_bytes(&f->h);
	f->stage = ST_HDR;
	by_reference(x, f, iov, len);

	/* on the wire: the message's header once, and every copy of every unit sent */
	uint64_t bytes = XHDR_WIRE_BYTES + f->bitbytes + m.wire_bytes;

	st->messages++;
	st->units += (uint64_t)m.nunits;
	st->units_dropped += (uint64_t)(m.nunits - m.narrived);
	st->retransmits += m.retransmits;
	st->units_duplicated += m.duplicated;
	st->units_corrupted += m.corrupted;
	st->units_overflow += m.overflow;
	st->bytes += bytes;
	st->delay_sum_ns += m.delay_sum_ns;
	x->bytes_sent += bytes;
	x->units_dropped += (uint64_t)(m.nunits - m.narrived);
	return 0;
}

static void start_in(struct xchg *x, int j)
{
	struct xpriv *p = x->priv;
	struct xflow *f = &p->in[j];

	memset(f, 0, sizeof(*f));
	f->r = region_ring(x->rg, j, x->id);
	f->peer = j;
	f->bits = p->bits_in + (size_t)j * p->words;
	f->times = p->times_in + (size_t)j * p->max_units;
	f->buf = p->buf + (size_t)j * p->buf_stride;
	f->stage = ST_HDR;
}

/* The unreliable receiver's deadline: it began waiting at t0 and gives up on a peer at
 * t0 + timeout of that link, so a unit arriving later is as good as lost: zeroed, its
 * bit cleared, counted late.  The message's arrival becomes that of the units kept. */
static void apply_deadline(struct xchg *x, int64_t t0)
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++) {
		struct xflow *f = &p->in[j];
		struct xhdr *h = &f->h;
		struct xchg_link_stats *st = &p->stats_in[j];
		uint64_t kept = 0;

		if (j == x->id || p->gone[j])
			continue;
		bool unreliable = p->timeout_in[j] >= 0;
		int64_t deadline = unreliable ? t0 + p->timeout_in[j] : INT64_MAX;

		/* a reliable sender's arrive may be when it gave a unit up: keep it.  An
		 * unreliable one's becomes the last unit kept, or t0 when none was: the
		 * sender's departure may lie past the deadline, and waiting for it would undo
		 * the timeout */
		if (unreliable)
			h->arrive = t0;
		for (int u = 0; u < h->nunits; u++) {
			if (!xchg_bit(f->bits, u))
				continue;
			size_t s = (size_t)u * h->unit, e = xhdr_unit_end(h, u);

			if (f->times[u] > deadline) {
				if (f->zc) {	/* read in place: copy it out to zero the unit */
					memcpy(f->buf, f->zc, h->len);
					f->zc = NULL;
				}
				f->bits[u >> 6] &= ~(1ULL << (u & 63));
				h->narrived--;
				st->units_late++;
				x->units_late++;
				if (e > s)
					memset(f->buf + s, 0, e - s);
				continue;
			}
			kept += e - s;
			if (unreliable && f->times[u] > h->arrive)
				h->arrive = f->times[u];
		}
		uint64_t bytes = XHDR_WIRE_BYTES + xhdr_bitmap_bytes(h) + kept;

		st->bytes_delivered += bytes;
		x->bytes_delivered += bytes;
	}
}

/* How long a reliable transport tries a unit that is never acknowledged: the first
 * attempt and max_retries resends, each after its rto (net_send's give-up time). */
static int64_t giveup_ns(const struct net_cfg *c)
{
	int64_t t = 0;

	for (int k = 0; k <= c->max_retries; k++)
		t += net_rto(c, k);
	return t;
}

/* The receiver's deadlines of a phase of `step` that it begins to wait for at t0: the
 * timeout of each link j -> id in effect then (a schedule may change it).  A peer that
 * is down is waited for until that deadline, or until a reliable transport would give
 * up on it. */
static void phase_timeouts(struct xchg *x, int64_t step, int64_t t0)
{
	struct xpriv *p = x->priv;
	struct net_cfg m;

	for (int j = 0; j < x->n; j++) {
		if (!p->nwin_in[j])
			continue;
		net_model_at(&p->from[j], p->win + p->win_in[j], p->nwin_in[j], step, t0, &m);
		p->timeout_in[j] = m.transport == TRANSPORT_RELIABLE ? -1 : m.timeout;
		p->giveup_in[j] = giveup_ns(&m);
	}
	for (int j = 0; j < x->n; j++)
		if (p->gone[j])
			p->in[j].h.arrive = t0 + (p->timeout_in[j] >= 0 ? 0 : p->giveup_in[j]);
}

/* The receiver's clock after waiting from t0 for every peer's message. */
static int64_t wait_clock(const struct xchg *x, int64_t t0)
{
	const struct xpriv *p = x->priv;
	int64_t t = t0;

	for (int j = 0; j < x->n; j++) {
		const struct xhdr *h = &p->in[j].h;
		int64_t ready = h->arrive;

		if (j == x->id)
			continue;
		if (h->narrived < h->nunits && p->timeout_in[j] >= 0 && t0 + p->timeout_in[j] > ready)
			ready = t0 + p->timeout_in[j];
		if (ready > t)
			t = ready;
	}
	return t;
}

static void fill_msg(struct xmsg *m, const struct xflow *f)
{
	m->data = f->zc ? f->zc : f->buf;
	m->len = f->h.len;
	m->unit = f->h.unit;
	m->nunits = f->h.nunits;
	m->narrived = f->h.narrived;
	m->arrived = f->bits;
}

/* One's own message or reply: complete, in the units of the [net] default link. */
static void fill_own(const struct xchg *x, struct xmsg *m, const uint8_t *data, size_t len)
{
	const struct xpriv *p = x->priv;

	m->data = data;
	m->len = len;
	m->unit = net_unit_bytes(&p->self_cfg, len);
	m->nunits = net_nunits(&p->self_cfg, len);
	m->narrived = m->nunits;
	m->arrived = p->bits_all;
}

static size_t iov_total(const struct xchg_iov *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].len;
	return t;
}

/* Every message of the scatter, encoded (net_send needs the lengths first): 0 or -errno. */
static int encode_all(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
		      size_t len[])
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++) {
		struct xchg_iov *iov = p->iov + (size_t)j * XCHG_MAX_IOV;
		int k = ops->encode(ctx, j, iov);

		if (k < 0 || k > XCHG_MAX_IOV)
			return -EINVAL;
		p->niov[j] = k;
		len[j] = iov_total(iov, k);
		if (len[j] > p->max_msg) {
			fprintf(stderr, "emu: worker %d: xchg step %lld: message for server %d "
				"is %zu bytes, more than max_msg %zu\n", x->id, (long long)step, j,
				len[j], p->max_msg);
			return -EMSGSIZE;
		}
	}
	return 0;
}

/* One's own scatter message as one piece: gathered into its receive buffer unless it
 * is one piece already. */
static const uint8_t *own_message(struct xchg *x)
{
	struct xpriv *p = x->priv;
	const struct xchg_iov *own = p->iov + (size_t)x->id * XCHG_MAX_IOV;
	uint8_t *buf = p->buf + (size_t)x->id * p->buf_stride;
	size_t off = 0;

	if (p->niov[x->id] == 1)
		return own[0].base;
	for (int i = 0; i < p->niov[x->id]; i++) {
		if (own[i].len)
			memcpy(buf + off, own[i].base, own[i].len);
		off += own[i].len;
	}
	return buf;
}

/* Which peers are down for this step's exchange (struct xchg_absence). */
static void mark_gone(struct xchg *x, int64_t step)
{
	struct xpriv *p = x->priv;

	memset(p->gone, 0, (size_t)x->n * sizeof(*p->gone));
	p->ngone = 0;
	for (int i = 0; i < p->nabsent; i++) {
		const struct xchg_absence *a = &p->absent[i];

		if (a->worker != x->id && a->from <= step && step < a->to && !p->gone[a->worker]) {
			p->gone[a->worker] = true;
			p->ngone++;
		}
	}
}

/* A peer that is down: its message to us is lost entirely and never read; ours to it
 * went through the network model (lost on the down link) but is not written. */
static void gone_flows(struct xchg *x, int j)
{
	struct xpriv *p = x->priv;

	p->out[j].stage = ST_DONE;
	p->in[j].h = (struct xhdr){ .src = (uint16_t)j, .unit = 1, .nunits = 1, .narrived = 0 };
	p->in[j].bits[0] = 0;
	p->in[j].stage = ST_DONE;
}

/* Sends to every peer in the fixed order id+1, id+2, ... (iov(j): the message for j)
 * and receives from each, to completion. */
static int run_phase(struct xchg *x, int64_t step, int phase, uint32_t flags,
		     const struct xchg_iov *(*iov)(struct xchg *x, int j, void *arg), void *arg,
		     const size_t len[])
{
	struct xpriv *p = x->priv;

	for (int k = 1; k < x->n; k++) {
		int j = (x->id + k) % x->n;
		int rc = start_out(x, j, step, phase, flags, iov(x, j, arg), len[j]);

		if (rc)
			return rc;
		start_in(x, j);
		if (p->gone[j])
			gone_flows(x, j);
	}
	/* every peer's message counts once; a peer that is down sends none (its own count
	 * stays as the crash left it, for the process that comes back: inbox.h) */
	if (p->post)
		region_inbox(x->rg, x->id)->target[phase] += (uint32_t)(x->n - 1 - p->ngone);
	return run_flows(x, step, phase);
}

static const struct xchg_iov *scatter_iov(struct xchg *x, int j, void *arg)
{
	return ((struct xpriv *)x->priv)->iov + (size_t)j * XCHG_MAX_IOV;
}

static const struct xchg_iov *reply_iov(struct xchg *x, int j, void *arg)
{
	return arg;
}

/* What arrived in this phase, into p->msg (one's own is data, complete); the flags
 * the peers sent are OR-ed into *flags. */
static void collect(struct xchg *x, const uint8_t *own, size_t own_len, uint32_t *flags)
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++) {
		if (j == x->id) {
			fill_own(x, &p->msg[j], own, own_len);
		} else {
			fill_msg(&p->msg[j], &p->in[j]);
			*flags |= p->in[j].h.flags;
		}
		/* the payloads' first lines, asked for at once (flows_pass says why); the
		 * core's prefetcher follows each stream from there */
		for (size_t o = 0; o < 256 && o < p->msg[j].len; o += 64)
			__builtin_prefetch(p->msg[j].data + o, 0);
	}
	for (int j = 0; j + 1 < x->n; j++) {
		bool some = p->msg[j + 1].narrived > 0;

		p->msg[j].next = some ? p->msg[j + 1].data : NULL;
		p->msg[j].next_len = some ? p->msg[j + 1].len : 0;
	}
	p->msg[x->n - 1].next = NULL;
	p->msg[x->n - 1].next_len = 0;
}

int xchg_run(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
	     uint32_t flags, uint32_t *flags_out)
{
	struct xpriv *p = x->priv;
	size_t len[NET_MAX_WORKERS], rlen[NET_MAX_WORKERS];
	uint32_t or_flags = flags;
	int rc = encode_all(x, step, ops, ctx, len);

	if (rc)
		return rc;
	mark_gone(x, step);
	/* Scatter, then reduce in worker-id order. */
	rc = run_phase(x, step, PHASE_SCATTER, flags, scatter_iov, NULL, len);
	if (rc)
		return rc;
	phase_timeouts(x, step, x->clock);
	apply_deadline(x, x->clock);
	int64_t t1 = wait_clock(x, x->clock);

	collect(x, own_message(x), len[x->id], &or_flags);
	size_t reply = ops->reduce(ctx, x->id, p->msg, p->reply, p->max_msg);

	release_in_place(x);
	if (reply > p->max_msg)
		return -EMSGSIZE;
	x->clock = t1;

	/* Broadcast the reply, carrying this server's OR of the flags it received. */
	struct xchg_iov riov = { p->reply, reply };

	for (int j = 0; j < x->n; j++)
		rlen[j] = reply;
	rc = run_phase(x, step, PHASE_BCAST, or_flags, reply_iov, &riov, rlen);
	if (rc)
		return rc;
	phase_timeouts(x, step, t1);
	apply_deadline(x, t1);
	x->clock = wait_clock(x, t1);

	/* Apply in server order; everybody ends with the OR of every worker's flags. */
	collect(x, p->reply, reply, &or_flags);
	for (int j = 0; j < x->n; j++)
		ops->apply(ctx, j, &p->msg[j]);
	release_in_place(x);
	if (flags_out)
		*flags_out = or_flags;
	return 0;
}

/* The arrays of p, in one 64-byte aligned allocation (zeroed), sized for n peers. */
static int alloc_arrays(struct xpriv *p, int n)
{
	size_t nn = (size_t)n, w = (size_t)p->words;
	struct {
		void **at;
		size_t bytes;
	} part[] = {
		{ (void **)&p->link, nn * sizeof(struct net_link) },
		{ (void **)&p->timeout_in, nn * sizeof(int64_t) },
		{ (void **)&p->win, (size_t)p->nwin * sizeof(struct net_window) },
		{ (void **)&p->win_out, nn * sizeof(int) },
		{ (void **)&p->win_in, nn * sizeof(int) },
		{ (void **)&p->nwin_out, nn * sizeof(int) },
		{ (void **)&p->nwin_in, nn * sizeof(int) },
		{ (void **)&p->from, nn * sizeof(struct net_cfg) },
		{ (void **)&p->stats, nn * sizeof(struct xchg_link_stats) },
		{ (void **)&p->stats_in, nn * sizeof(struct xchg_link_stats) },
		{ (void **)&p->flip, (size_t)p->max_units * sizeof(int32_t) },
		{ (void **)&p->times_out, nn * (size_t)p->max_units * sizeof(int64_t) },
		{ (void **)&p->times_in, nn * (size_t)p->max_units * sizeof(int64_t) },
		{ (void **)&p->flips, nn * (size_t)p->max_units * sizeof(struct xflip) },
		{ (void **)&p->out, nn * sizeof(struct xflow) },
		{ (void **)&p->in, nn * sizeof(struct xflow) },
		{ (void **)&p->iov, nn * XCHG_MAX_IOV * sizeof(struct xchg_iov) },
		{ (void **)&p->niov, nn * sizeof(int) },
		{ (void **)&p->msg, nn * sizeof(struct xmsg) },
		{ (void **)&p->bits_out, nn * w * sizeof(uint64_t) },
		{ (void **)&p->bits_in, nn * w * sizeof(uint64_t) },
		{ (void **)&p->bits_all, w * sizeof(uint64_t) },
		{ (void **)&p->buf, nn * p->buf_stride },
		{ (void **)&p->reply, p->buf_stride },
	};
	size_t total = 0;

	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		total += align64(part[i].bytes);
	p->mem = aligned_alloc(64, total);
	if (!p->mem)
		return -ENOMEM;
	memset(p->mem, 0, total);
	total = 0;
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++) {
		*part[i].at = (uint8_t *)p->mem + total;
		total += align64(part[i].bytes);
	}
	return 0;
}

/* Whether window w belongs to a link in or out of worker id of n. */
static bool window_ours(const struct net_window *w, int n, int id)
{
	return w->src >= 0 && w->src < n && w->dst >= 0 && w->dst < n && w->src != w->dst &&
	       (w->src == id || w->dst == id);
}

/* The model of link src -> dst under window w alone: what it may take in the run. */
static void window_model(const struct xchg_links *l, int id, const struct net_window *w,
			 struct net_cfg *out)
{
	const struct net_cfg *base = w->src == id ? &l->to[w->dst] : &l->from[w->src];

	net_model_at(base, w, 1, w->from, w->from, out);
}

/* Units per message: the most any link in or out of worker id may cut max_msg into.
 * Overlapping windows combine (one may set unit = packet, another a small mtu), so the
 * bound takes the smallest mtu of any model the worker's links may use, whenever any of
 * them cuts packets. */
static int max_units(const struct xchg_links *l, int n, int id, size_t max_msg)
{
	struct net_cfg worst = { .unit = UNIT_MESSAGE, .mtu = INT64_MAX };
	struct net_cfg m;

	for (int k = 0; k < 2 * n + l->nwin; k++) {
		if (k < 2 * n)
			m = k < n ? l->to[k] : l->from[k - n];
		else if (window_ours(&l->win[k - 2 * n], n, id))
			window_model(l, id, &l->win[k - 2 * n], &m);
		else
			continue;
		if (m.unit == UNIT_PACKET)
			worst.unit = UNIT_PACKET;
		if (m.mtu > 0 && m.mtu < worst.mtu)
			worst.mtu = m.mtu;
	}
	return worst.unit == UNIT_PACKET ? net_nunits(&worst, max_msg) : 1;
}

/* The largest limit of worker id's outgoing links, windows included: its queue's
 * capacity. */
static uint32_t max_limit(const struct xchg_links *l, int n, int id)
{
	int64_t most = 0;

	for (int j = 0; j < n; j++)
		if (j != id && l->to[j].limit > most)
			most = l->to[j].limit;
	for (int i = 0; i < l->nwin; i++) {
		struct net_cfg m;

		if (!window_ours(&l->win[i], n, id) || l->win[i].src != id)
			continue;
		window_model(l, id, &l->win[i], &m);
		most = m.limit > most ? m.limit : most;
	}
	return most > UINT32_MAX ? UINT32_MAX : (uint32_t)most;
}

/* Worker id's copy of the windows of its links, grouped by link in their order: those of
 * id -> j from win_out[j], those of j -> id from win_in[j]. */
static void copy_windows(struct xpriv *p, const struct xchg_links *l, int n, int id)
{
	int k = 0;

	for (int j = 0; j < n; j++) {
		p->win_out[j] = k;
		for (int i = 0; i < l->nwin; i++)
			if (window_ours(&l->win[i], n, id) && l->win[i].src == id &&
			    l->win[i].dst == j)
				p->win[k++] = l->win[i];
		p->nwin_out[j] = k - p->win_out[j];
		p->win_in[j] = k;
		for (int i = 0; i < l->nwin; i++)
			if (window_ours(&l->win[i], n, id) && l->win[i].dst == id &&
			    l->win[i].src == j)
				p->win[k++] = l->win[i];
		p->nwin_in[j] = k - p->win_in[j];
	}
}

static void xchg_free_priv(struct xpriv *p)
{
	if (p) {
		net_txq_free(&p->txq);
		free(p->mem);
		free(p->gone);
		free(p->giveup_in);
		free(p->absent);
	}
	free(p);
}

int xchg_init(struct xchg *x, const struct xchg_links *l, struct region *rg,
	      struct notify *nt, int id, size_t max_msg)
{
	int n = region_nworkers(rg), rc;
	struct xpriv *p;

	memset(x, 0, sizeof(*x));
	if (n < 1 || n > NET_MAX_WORKERS || id < 0 || id >= n)
		return -EINVAL;
	if (2 * (n - 1) > NOTIFY_MAX_WORDS)
		return -EINVAL;
	int units = max_units(l, n, id, max_msg);

	if (units < 0)
		return units;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (int i = 0; i < l->nwin; i++)
		p->nwin += window_ours(&l->win[i], n, id);
	p->max_units = units;
	p->words = (units + 63) / 64;
	p->buf_stride = align64(max_msg > 0 ? max_msg : 1);
	p->max_msg = max_msg;
	rc = alloc_arrays(p, n);
	if (rc)
		goto err;
	p->gone = calloc((size_t)n, sizeof(*p->gone));
	p->giveup_in = calloc((size_t)n, sizeof(*p->giveup_in));
	p->absent = l->nabsent ? calloc((size_t)l->nabsent, sizeof(*p->absent)) : NULL;
	if (!p->gone || !p->giveup_in || (l->nabsent && !p->absent)) {
		rc = -ENOMEM;
		goto err;
	}
	if (l->nabsent)
		memcpy(p->absent, l->absent, (size_t)l->nabsent * sizeof(*p->absent));
	p->nabsent = l->nabsent;
	size_t wire = sizeof(struct xhdr) + (size_t)p->words * sizeof(uint64_t) +
		      (size_t)units * sizeof(int64_t) + max_msg;
	size_t ring = n < 2 ? 0 : region_ring(rg, (id + 1) % n, id)->size;

	p->fits = n < 2 || wire <= ring;
	/* the bridge writes the messages of other hosts and posts nothing: rings only */
	p->post = n >= 2 && !region_bridged(rg);
	p->inbox = p->post && 2 * wire <= ring;
	/* by reference (by_reference): one host, where every outbox has the same address in
	 * every process; the reply at the outbox's start, the algorithm's staging after it */
	if (p->post && region_outbox(rg, id) && align64(max_msg) <= region_outbox_bytes(rg)) {
		p->outbox = region_outbox(rg, id);
		p->outbox_bytes = region_outbox_bytes(rg);
		p->stage_off = align64(max_msg);
		p->reply = p->outbox;
	}
	rc = net_txq_init(&p->txq, max_limit(l, n, id));
	if (rc)
		goto err;
	memset(p->bits_all, 0xff, (size_t)p->words * sizeof(uint64_t));
	copy_windows(p, l, n, id);

	for (int j = 0; j < n; j++) {
		if (j == id) {
			p->self_cfg = l->to[id];
			continue;
		}
		rc = net_link_init(&p->link[j], &l->to[j], l->seed, id, j);
		if (!rc)
			rc = net_link_schedule(&p->link[j], p->win + p->win_out[j], p->nwin_out[j]);
		if (rc) {
			fprintf(stderr, "emu: worker %d: invalid network model for link %d -> %d\n",
				id, id, j);
			goto err;
		}
		p->timeout_in[j] = l->from[j].transport == TRANSPORT_RELIABLE ? -1 : l->from[j].timeout;
		p->giveup_in[j] = giveup_ns(&l->from[j]);
		p->from[j] = l->from[j];
		p->in[j].stage = p->out[j].stage = ST_DONE;
	}
	if (p->self_cfg.unit == UNIT_PACKET && p->self_cfg.mtu <= 0)
		p->self_cfg.unit = UNIT_MESSAGE;
	x->id = id;
	x->n = n;
	x->rg = rg;
	x->nt = nt;
	x->priv = p;
	return 0;
err:
	xchg_free_priv(p);
	return rc;
}

size_t xchg_ring_size(int64_t ring_size, size_t payload)
{
	size_t wire = 128 + payload + payload / 4, r = 4096;

	if (ring_size > 0)
		return (size_t)ring_size;
	while (r < 2 * wire && r < (256u << 20))
		r <<= 1;
	return r;
}

void *xchg_outbox(struct xchg *x, size_t *cap)
{
	struct xpriv *p = x->priv;

	*cap = p->outbox ? p->outbox_bytes - p->stage_off : 0;
	return p->outbox ? p->outbox + p->stage_off : NULL;
}

void xchg_free(struct xchg *x)
{
	xchg_free_priv(x->priv);
	x->priv = NULL;
}

void xchg_compute(struct xchg *x, int64_t ns)
{
	if (ns > 0)
		x->clock += ns;
}

void xchg_link_stats(const struct xchg *x, int dst, struct xchg_link_stats *out)
{
	const struct xpriv *p = x->priv;

	memset(out, 0, sizeof(*out));
	if (p && dst >= 0 && dst < x->n && dst != x->id)
		*out = p->stats[dst];
}

void xchg_link_stats_in(const struct xchg *x, int src, struct xchg_link_stats *out)
{
	const struct xpriv *p = x->priv;

	memset(out, 0, sizeof(*out));
	if (p && src >= 0 && src < x->n && src != x->id)
		*out = p->stats_in[src];
}

/* The state that outlives a step, in this order: the clock and totals, then per peer j
 * the link id -> j (its chain, reorder counter and the model of the transmission under
 * way: the schedule's pointer stays this process's), both sides' counters, then the
 * transmit queue (idle time and the finish times still in its ring, oldest first).
 * Messages are not part of it: between two steps none is in flight for this worker. */
struct xsave_head {
	int64_t clock;
	uint64_t bytes_sent, units_dropped, bytes_delivered, units_late;
	int64_t free_at;
	uint32_t count, n;
};

size_t xchg_state_size(const struct xchg *x)
{
	const struct xpriv *p = x->priv;

	return sizeof(struct xsave_head) + (size_t)x->n * (sizeof(struct net_link) +
	       2 * sizeof(struct xchg_link_stats)) + (size_t)p->txq.count * sizeof(int64_t);
}

void xchg_state_save(const struct xchg *x, void *dst)
{
	const struct xpriv *p = x->priv;
	struct xsave_head h = {
		.clock = x->clock, .bytes_sent = x->bytes_sent, .units_dropped = x->units_dropped,
		.bytes_delivered = x->bytes_delivered, .units_late = x->units_late,
		.free_at = p->txq.free_at, .count = p->txq.count, .n = (uint32_t)x->n,
	};
	uint8_t *o = dst;

	memcpy(o, &h, sizeof(h));
	o += sizeof(h);
	memcpy(o, p->link, (size_t)x->n * sizeof(*p->link));
	o += (size_t)x->n * sizeof(*p->link);
	memcpy(o, p->stats, (size_t)x->n * sizeof(*p->stats));
	o += (size_t)x->n * sizeof(*p->stats);
	memcpy(o, p->stats_in, (size_t)x->n * sizeof(*p->stats_in));
	o += (size_t)x->n * sizeof(*p->stats_in);
	for (uint32_t k = 0; k < p->txq.count; k++, o += sizeof(int64_t))
		memcpy(o, &p->txq.fin[(p->txq.head + k) % p->txq.cap], sizeof(int64_t));
}

int xchg_state_counters(const void *src, size_t len, int n, struct xchg *tot,
			struct xchg_link_stats out[], struct xchg_link_stats in[])
{
	struct xsave_head h;
	const uint8_t *at = src;
	size_t links = (size_t)n * sizeof(struct net_link), st = (size_t)n * sizeof(*out);

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, at, sizeof(h));
	if (h.n != (uint32_t)n || len != sizeof(h) + links + 2 * st + (size_t)h.count * sizeof(int64_t))
		return -EINVAL;
	memset(tot, 0, sizeof(*tot));
	tot->clock = h.clock;
	tot->bytes_sent = h.bytes_sent;
	tot->units_dropped = h.units_dropped;
	tot->bytes_delivered = h.bytes_delivered;
	tot->units_late = h.units_late;
	at += sizeof(h) + links;
	memcpy(out, at, st);
	memcpy(in, at + st, st);
	return 0;
}

int xchg_state_load(struct xchg *x, const void *src, size_t len)
{
	struct xpriv *p = x->priv;
	struct xsave_head h;
	const uint8_t *in = src;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, in, sizeof(h));
	in += sizeof(h);
	if (h.n != (uint32_t)x->n || h.count > p->txq.cap || (h.count && !p->txq.fin) ||
	    len != sizeof(h) + (size_t)x->n * (sizeof(struct net_link) +
	    2 * sizeof(struct xchg_link_stats)) + (size_t)h.count * sizeof(int64_t))
		return -EINVAL;
	x->clock = h.clock;
	x->bytes_sent = h.bytes_sent;
	x->units_dropped = h.units_dropped;
	x->bytes_delivered = h.bytes_delivered;
	x->units_late = h.units_late;
	for (int j = 0; j < x->n; j++, in += sizeof(struct net_link)) {
		struct net_link l;

		memcpy(&l, in, sizeof(l));
		l.win = p->link[j].win;		/* this process's copy of the schedule */
		l.nwin = p->link[j].nwin;
		p->link[j] = l;
	}
	memcpy(p->stats, in, (size_t)x->n * sizeof(*p->stats));
	in += (size_t)x->n * sizeof(*p->stats);
	memcpy(p->stats_in, in, (size_t)x->n * sizeof(*p->stats_in));
	in += (size_t)x->n * sizeof(*p->stats_in);
	p->txq.free_at = h.free_at;
	p->txq.head = 0;
	p->txq.count = h.count;
	for (uint32_t k = 0; k < h.count; k++, in += sizeof(int64_t))
		memcpy(&p->txq.fin[k], in, sizeof(int64_t));
	return 0;
}
