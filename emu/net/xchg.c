/* emu/net/xchg.c — the partitioned parameter-server collective (see xchg.h).
 *
 * Wire format on a ring, one message after another (the stream is FIFO, and every
 * worker reads exactly one message per ring per phase, so no other framing is needed):
 *   struct xhdr (56 bytes) | arrived bitmap, ceil(nunits/64) uint64 words | the bytes of
 *   the ARRIVED units only, in unit order.
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
 * started; for each peer it waited for, it is ready at the last arrival of the message
 * when the message is complete, else (something lost, unreliable transport) at
 * max(last arrival, T + timeout of that link).  Its clock becomes the max over peers
 * (and T).  Late arrivals (after T + timeout) are still accepted: the timeout only
 * charges time.
 */
#include "emu/net/xchg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/net.h"
#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/shm/ring.h"

#define XHDR_MAGIC 0xE7u

enum { PHASE_SCATTER = 0, PHASE_BCAST = 1 };
enum { ST_HDR, ST_BITS, ST_DATA, ST_DONE };

struct xhdr {
	uint16_t src;
	uint8_t phase;
	uint8_t magic;
	uint32_t flags;
	int64_t step;
	uint64_t len;
	uint64_t unit;
	int32_t nunits;
	int32_t narrived;
	int64_t depart;		/* virtual ns: left the sender (after its queue) */
	int64_t arrive;		/* virtual ns: last arrived unit; depart if none */
};
_Static_assert(sizeof(struct xhdr) == 56, "the header is part of the wire format");

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
	int next_unit;		/* first unit after the current run */
	size_t pos, run_end;
	/* sender: the payload */
	const struct xchg_iov *iov;
	int ci;			/* current iov and the message offset where it starts */
	size_t cbase;
	/* receiver: where the payload goes */
	uint8_t *buf;
};

struct xpriv {
	size_t max_msg;
	bool fits;		/* every message fits its ring whole: no sender ever waits for space */
	int max_units, words;	/* bitmap words per message */
	struct net_txq txq;
	struct net_link *link;		/* [n]: id -> j */
	int64_t *timeout_in;		/* [n]: j -> id, unreliable timeout; -1 reliable */
	struct xchg_link_stats *stats;	/* [n] */
	struct xflow *out, *in;		/* [n] */
	struct xchg_iov *iov;		/* [n][XCHG_MAX_IOV] */
	int *niov;			/* [n] */
	struct xmsg *msg;		/* [n] */
	uint8_t *buf;			/* [n][max_msg] receive buffers; [id]: own message */
	uint8_t *reply;			/* [max_msg] */
	uint64_t *bits_out, *bits_in;	/* [n][words] */
	uint64_t *bits_all;		/* [words], all ones */
	size_t buf_stride;
	struct net_cfg self_cfg;	/* units of one's own message */
};

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* Units a message of max_msg bytes is cut into on a link (1 unless packets). */
static int link_units(const struct net_cfg *nc, size_t max_msg)
{
	return nc->unit == UNIT_PACKET && nc->mtu > 0 ? net_nunits(nc, max_msg) : 1;
}

static size_t unit_end(const struct xhdr *h, int u)
{
	size_t e = (size_t)(u + 1) * h->unit;

	return e < h->len ? e : h->len;
}

/* The next run of arrived units at or after flow->next_unit; false when there is none. */
static bool next_run(struct xflow *f)
{
	int u = f->next_unit, n = f->h.nunits;

	while (u < n && !xchg_bit(f->bits, u))
		u++;
	if (u >= n)
		return false;
	f->pos = (size_t)u * f->h.unit;
	while (u < n && xchg_bit(f->bits, u))
		u++;
	f->next_unit = u;
	f->run_end = unit_end(&f->h, u - 1);
	return true;
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

/* Sender: write what fits.  Returns whether any byte moved. */
static bool out_progress(struct xflow *f, struct notify *nt)
{
	bool moved = false;
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
			k = ring_write(f->r, (const uint8_t *)f->bits + f->off, f->bitbytes - f->off, nt);
			f->off += k;
			if (f->off < f->bitbytes)
				return moved || k;
			moved = true;
			f->ci = 0;
			f->cbase = 0;
			start_data(f);
		} else {
			/* the iov holding pos: runs only move forward, so does the cursor */
			while (f->pos >= f->cbase + f->iov[f->ci].len) {
				f->cbase += f->iov[f->ci].len;
				f->ci++;
			}
			size_t in_iov = f->cbase + f->iov[f->ci].len - f->pos;
			size_t want = f->run_end - f->pos < in_iov ? f->run_end - f->pos : in_iov;

			k = ring_write(f->r, (const uint8_t *)f->iov[f->ci].base + (f->pos - f->cbase),
				       want, nt);
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
	const struct xhdr *h = &f->h;

	if (h->magic != XHDR_MAGIC || h->src != f->peer || h->phase != phase || h->step != step)
		return bad_header(x, f, step, phase, "out of sequence");
	if (h->len > p->max_msg)
		return bad_header(x, f, step, phase, "longer than max_msg");
	if (h->unit == 0 || h->nunits < 1 || h->nunits > p->max_units || h->narrived < 0 ||
	    h->narrived > h->nunits)
		return bad_header(x, f, step, phase, "bad unit counts");
	uint64_t need = h->len == 0 ? 1 : (h->len + h->unit - 1) / h->unit;

	if ((uint64_t)h->nunits != need)
		return bad_header(x, f, step, phase, "units do not cover the length");
	return 0;
}

/* Receiver: read what is there.  Returns 1 if bytes moved, 0 if not, or -EPROTO. */
static int in_progress(struct xchg *x, struct xflow *f, int64_t step, int phase)
{
	struct notify *nt = x->nt;
	bool moved = false;
	size_t k;
	int rc;

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
			f->bitbytes = (size_t)(f->h.nunits + 63) / 64 * sizeof(uint64_t);
		} else if (f->stage == ST_BITS) {
			k = ring_read(f->r, (uint8_t *)f->bits + f->off, f->bitbytes - f->off, nt);
			f->off += k;
			if (f->off < f->bitbytes)
				return moved || k;
			moved = true;
			int cnt = 0;

			for (int u = 0; u < f->h.nunits; u++) {
				if (xchg_bit(f->bits, u)) {
					cnt++;
				} else {
					size_t s = (size_t)u * f->h.unit, e = unit_end(&f->h, u);

					if (e > s)
						memset(f->buf + s, 0, e - s);
				}
			}
			if (cnt != f->h.narrived)
				return bad_header(x, f, step, phase, "bitmap disagrees with narrived");
			start_data(f);
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

/* Move every flow of the phase to completion; see the file comment. */
static int run_flows(struct xchg *x, int64_t step, int phase)
{
	struct xpriv *p = x->priv;
	_Atomic uint32_t *words[NOTIFY_MAX_WORDS];
	uint32_t expect[NOTIFY_MAX_WORDS];
	struct ring *armed_r[NOTIFY_MAX_WORDS];
	bool armed_read[NOTIFY_MAX_WORDS];
	int64_t spin_until = -1;

	for (;;) {
		bool moved = false, busy = false;

		for (int j = 0; j < x->n; j++) {
			if (j == x->id)
				continue;
			if (p->out[j].stage != ST_DONE) {
				moved |= out_progress(&p->out[j], x->nt);
				busy |= p->out[j].stage != ST_DONE;
			}
			if (p->in[j].stage != ST_DONE) {
				int rc = in_progress(x, &p->in[j], step, phase);

				if (rc < 0)
					return rc;
				moved |= rc > 0;
				busy |= p->in[j].stage != ST_DONE;
			}
		}
		if (!busy)
			return 0;
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
		/* Arm, re-check, sleep once on all of them, disarm.  When every message fits
		 * its ring, no sender can be waiting for this worker to make space, so only
		 * the first unfinished in-ring is armed: a worker waiting for N-1 messages
		 * then wakes a few times, not once per message (with 16 workers on 2 cores,
		 * each wake is a context switch). */
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
					/* again, after arming: data written between the check
					 * above and the arm would otherwise wake nobody */
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
		if (!ready)
			notify_wait(x->nt, cnt, words, expect, -1);
		for (int i = 0; i < cnt; i++) {
			if (armed_read[i])
				ring_disarm_read(armed_r[i]);
			else
				ring_disarm_write(armed_r[i]);
		}
		spin_until = -1;
	}
}

/* Prepare the outgoing message to peer j: run the network model, fill the header. */
static void start_out(struct xchg *x, int j, int64_t step, int phase, uint32_t flags,
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
	f->iov = iov;
	/* len <= max_msg was checked, so nunits <= max_units: net_send cannot fail */
	net_send(&p->link[j], &p->txq, len, step, phase, x->clock, f->bits, NULL, &m);
	f->h = (struct xhdr){ .src = (uint16_t)x->id, .phase = (uint8_t)phase,
			      .magic = XHDR_MAGIC, .flags = flags, .step = step, .len = len,
			      .unit = m.unit, .nunits = m.nunits, .narrived = m.narrived,
			      .depart = m.depart, .arrive = m.last_arrival };
	f->bitbytes = (size_t)(m.nunits + 63) / 64 * sizeof(uint64_t);
	f->stage = ST_HDR;

	uint64_t payload = 0;

	for (int u = 0; u < m.nunits; u++)
		if (xchg_bit(f->bits, u))
			payload += unit_end(&f->h, u) - (size_t)u * m.unit;
	uint64_t bytes = sizeof(f->h) + f->bitbytes + payload;

	st->messages++;
	st->units += (uint64_t)m.nunits;
	st->units_dropped += (uint64_t)(m.nunits - m.narrived);
	st->retransmits += m.retransmits;
	st->bytes += bytes;
	st->delay_sum_ns += m.delay_sum_ns;
	x->bytes_sent += bytes;
	x->units_dropped += (uint64_t)(m.nunits - m.narrived);
}

static void start_in(struct xchg *x, int j)
{
	struct xpriv *p = x->priv;
	struct xflow *f = &p->in[j];

	memset(f, 0, sizeof(*f));
	f->r = region_ring(x->rg, j, x->id);
	f->peer = j;
	f->bits = p->bits_in + (size_t)j * p->words;
	f->buf = p->buf + (size_t)j * p->buf_stride;
	f->stage = ST_HDR;
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
	m->data = f->buf;
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

int xchg_run(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
	     uint32_t flags, uint32_t *flags_out)
{
	struct xpriv *p = x->priv;
	int n = x->n, id = x->id, rc;
	size_t len[NET_MAX_WORKERS];
	uint32_t or_flags = flags;

	/* Scatter: encode every message first (net_send needs the lengths), then send in
	 * the fixed order id+1, id+2, ... */
	for (int j = 0; j < n; j++) {
		struct xchg_iov *iov = p->iov + (size_t)j * XCHG_MAX_IOV;
		int k = ops->encode(ctx, j, iov);

		if (k < 0 || k > XCHG_MAX_IOV)
			return -EINVAL;
		p->niov[j] = k;
		len[j] = iov_total(iov, k);
		if (len[j] > p->max_msg) {
			fprintf(stderr, "emu: worker %d: xchg step %lld: message for server %d "
				"is %zu bytes, more than max_msg %zu\n", id, (long long)step, j,
				len[j], p->max_msg);
			return -EMSGSIZE;
		}
	}
	for (int k = 1; k < n; k++) {
		int j = (id + k) % n;

		start_out(x, j, step, PHASE_SCATTER, flags, p->iov + (size_t)j * XCHG_MAX_IOV,
			  len[j]);
		start_in(x, j);
	}
	/* one's own message, gathered unless it is one piece already */
	const struct xchg_iov *own = p->iov + (size_t)id * XCHG_MAX_IOV;
	const uint8_t *own_data = p->buf + (size_t)id * p->buf_stride;

	if (p->niov[id] == 1) {
		own_data = own[0].base;
	} else {
		size_t off = 0;

		for (int i = 0; i < p->niov[id]; i++) {
			if (own[i].len)
				memcpy((uint8_t *)own_data + off, own[i].base, own[i].len);
			off += own[i].len;
		}
	}
	rc = run_flows(x, step, PHASE_SCATTER);
	if (rc)
		return rc;
	int64_t t1 = wait_clock(x, x->clock);

	for (int j = 0; j < n; j++) {
		if (j == id)
			fill_own(x, &p->msg[j], own_data, len[id]);
		else {
			fill_msg(&p->msg[j], &p->in[j]);
			or_flags |= p->in[j].h.flags;
		}
	}
	size_t rlen = ops->reduce(ctx, id, p->msg, p->reply, p->max_msg);

	if (rlen > p->max_msg)
		return -EMSGSIZE;
	x->clock = t1;

	/* Broadcast the reply, carrying this server's OR of the flags it received. */
	struct xchg_iov riov = { p->reply, rlen };

	for (int k = 1; k < n; k++) {
		int j = (id + k) % n;

		start_out(x, j, step, PHASE_BCAST, or_flags, &riov, rlen);
		start_in(x, j);
	}
	rc = run_flows(x, step, PHASE_BCAST);
	if (rc)
		return rc;
	x->clock = wait_clock(x, t1);

	/* Apply in server order; everybody ends with the OR of every worker's flags. */
	for (int j = 0; j < n; j++) {
		if (j == id) {
			fill_own(x, &p->msg[j], p->reply, rlen);
		} else {
			fill_msg(&p->msg[j], &p->in[j]);
			or_flags |= p->in[j].h.flags;
		}
		ops->apply(ctx, j, &p->msg[j]);
	}
	if (flags_out)
		*flags_out = or_flags;
	return 0;
}

int xchg_init(struct xchg *x, const struct xchg_links *l, struct region *rg,
	      struct notify *nt, int id, size_t max_msg)
{
	int n = region_nworkers(rg), rc = 0;
	struct xpriv *p;

	memset(x, 0, sizeof(*x));
	if (n < 1 || n > NET_MAX_WORKERS || id < 0 || id >= n)
		return -EINVAL;
	if (2 * (n - 1) > NOTIFY_MAX_WORDS)
		return -EINVAL;

	/* Units per message: the most any link in or out of this worker cuts max_msg into. */
	int max_units = 1;

	for (int j = 0; j < n; j++) {
		int u = link_units(&l->to[j], max_msg), v = link_units(&l->from[j], max_msg);

		if (u < 0 || v < 0)
			return -EINVAL;
		max_units = u > max_units ? u : max_units;
		max_units = v > max_units ? v : max_units;
	}
	int words = (max_units + 63) / 64;
	size_t nn = (size_t)n, stride = align64(max_msg > 0 ? max_msg : 1);
	size_t o_priv = 0, o_link = align64(o_priv + sizeof(*p));
	size_t o_tmo = align64(o_link + nn * sizeof(struct net_link));
	size_t o_stats = align64(o_tmo + nn * sizeof(int64_t));
	size_t o_out = align64(o_stats + nn * sizeof(struct xchg_link_stats));
	size_t o_in = align64(o_out + nn * sizeof(struct xflow));
	size_t o_iov = align64(o_in + nn * sizeof(struct xflow));
	size_t o_niov = align64(o_iov + nn * XCHG_MAX_IOV * sizeof(struct xchg_iov));
	size_t o_msg = align64(o_niov + nn * sizeof(int));
	size_t o_bo = align64(o_msg + nn * sizeof(struct xmsg));
	size_t o_bi = align64(o_bo + nn * (size_t)words * sizeof(uint64_t));
	size_t o_ba = align64(o_bi + nn * (size_t)words * sizeof(uint64_t));
	size_t o_buf = align64(o_ba + (size_t)words * sizeof(uint64_t));
	size_t o_reply = o_buf + nn * stride;
	size_t total = o_reply + stride;
	uint8_t *mem = aligned_alloc(64, total);

	if (!mem)
		return -ENOMEM;
	memset(mem, 0, o_buf);
	p = (struct xpriv *)(mem + o_priv);
	p->link = (struct net_link *)(mem + o_link);
	p->timeout_in = (int64_t *)(mem + o_tmo);
	p->stats = (struct xchg_link_stats *)(mem + o_stats);
	p->out = (struct xflow *)(mem + o_out);
	p->in = (struct xflow *)(mem + o_in);
	p->iov = (struct xchg_iov *)(mem + o_iov);
	p->niov = (int *)(mem + o_niov);
	p->msg = (struct xmsg *)(mem + o_msg);
	p->bits_out = (uint64_t *)(mem + o_bo);
	p->bits_in = (uint64_t *)(mem + o_bi);
	p->bits_all = (uint64_t *)(mem + o_ba);
	p->buf = mem + o_buf;
	p->reply = mem + o_reply;
	p->buf_stride = stride;
	p->max_msg = max_msg;
	p->fits = n < 2 || sizeof(struct xhdr) + (size_t)words * sizeof(uint64_t) + max_msg <=
				   region_ring(rg, (id + 1) % n, id)->size;
	p->max_units = max_units;
	p->words = words;
	memset(p->bits_all, 0xff, (size_t)words * sizeof(uint64_t));

	for (int j = 0; j < n; j++) {
		if (j == id) {
			p->self_cfg = l->to[id];
			continue;
		}
		rc = net_link_init(&p->link[j], &l->to[j], l->seed, id, j);
		if (rc) {
			fprintf(stderr, "emu: worker %d: invalid network model for link %d -> %d\n",
				id, id, j);
			goto err;
		}
		p->timeout_in[j] = l->from[j].transport == TRANSPORT_RELIABLE ? -1 : l->from[j].timeout;
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
	free(mem);
	return rc;
}

void xchg_free(struct xchg *x)
{
	free(x->priv);
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
