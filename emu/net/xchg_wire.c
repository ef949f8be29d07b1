/* emu/net/xchg_wire.c — one message of the exchange on a ring, either direction: the
 * sender's header (the network model's verdict) and what it writes, the receiver's
 * checks and what it reads.
 *
 * Wire format on a ring (xhdr.h), one message after another (the stream is FIFO, and
 * every worker reads exactly one message per ring per phase, so no other framing is
 * needed): header | arrived bitmap | the bytes of the ARRIVED units only, in unit order.
 * A message lost entirely is header + bitmap (the marker): nobody waits in real time, and
 * the receiver's virtual clock is charged the timeout instead.  The receiver zero-fills
 * the lost units.
 *
 * Corruption: the sender writes the byte holding a flipped bit flipped into the ring
 * (xchg_out_progress stops at it), so the receiver gets what an unreliable transport without
 * an end-to-end checksum delivers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/net/xchg_impl.h"
#include "emu/shm/region.h"
#include "emu/shm/ring.h"

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
 * as net_send leaves them (xchg_start_out checks); on a tcp link its time follows, as the
 * receiver's simulation needs it whole (xchg_tcp_units: lost or marked on the link).  The header is one cache line of the
 * ring (a message into an empty ring starts on one) where with them it took two: 64
 * workers move 8064 messages a step, most by reference (the header is all there is). */
static size_t ring_bits_bytes(const struct xhdr *h)
{
	return h->nunits == 1 ? 0 : xhdr_bitmap_bytes(h);
}

static size_t ring_times_bytes(const struct xflow *f)
{
	return f->h.nunits == 1 && !f->tcp ? 0 : xhdr_times_bytes(&f->h);
}

/* Receiver: a one-unit message's bitmap and time, from its header. */
static void one_unit(struct xflow *f)
{
	if (f->h.nunits == 1) {
		f->bits[0] = f->h.narrived ? 1 : 0;
		if (!f->tcp)
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
		{ f->times, ring_times_bytes(f) },
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
bool xchg_out_progress(struct xflow *f, struct notify *nt)
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
			size_t tb = ring_times_bytes(f);

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

static int bad_header(struct xchg *x, const struct xflow *f, int64_t step, int phase,
		      const char *what)
{
	snprintf(x->err, sizeof(x->err),
		 "worker %d: xchg step %lld phase %d: bad message from worker %d: %s "
		 "(src %u phase %u magic %#x step %lld len %llu unit %llu nunits %d narrived %d)",
		 x->id, (long long)step, phase, f->peer, what, f->h.src, f->h.phase, f->h.magic,
		 (long long)f->h.step, (unsigned long long)f->h.len,
		 (unsigned long long)f->h.unit, f->h.nunits, f->h.narrived);
	return -EPROTO;
}

static int check_header(struct xchg *x, const struct xflow *f, int64_t step, int phase)
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
 * in place by reduce and apply, and given back after them (xchg_release_in_place),
 * instead of being copied out first: a third of the exchange's memory traffic.  Only in
 * inbox mode, where two messages fit every ring: holding one back never stops a sender
 * (a peer has at most two of ours unread, inbox_sleep in xchg_flows.c says why). */
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
void xchg_release_in_place(struct xchg *x)
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
 * counterpart), then the payload's first run as xchg_in_progress would.  1 when read, 0 when
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
		{ f->times, ring_times_bytes(f) },
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
int xchg_in_progress(struct xchg *x, struct xflow *f, int64_t step, int phase)
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
			size_t tb = ring_times_bytes(f);

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
int xchg_start_out(struct xchg *x, int j, int64_t step, int phase, uint32_t flags,
		   const struct xchg_iov *iov, size_t len)
{
	struct xpriv *p = x->priv;
	struct xflow *f = &p->out[j];
	struct xchg_link_stats *st = &p->stats[j];
	struct net_msg m;

	memset(f, 0, sizeof(*f));
	f->r = region_ring(x->rg, x->id, j);
	f->peer = j;
	f->tcp = p->link[j].cfg.transport == TRANSPORT_TCP;
	f->bits = p->bits_out + (size_t)j * p->words;
	f->times = p->times_out + (size_t)j * p->max_units;
	f->flips = p->flips + (size_t)j * p->max_units;
	f->iov = iov;
	/* len <= max_msg was checked, so nunits <= max_units (sized for every model the link
	 * may take), and the queue was sized for every link's limit: net_send cannot fail */
	int rc = net_send_marked(&p->link[j], &p->txq, len, step, phase, x->clock, f->bits,
				 f->times, p->flip, p->marks, &m);

	if (rc < 0 || m.nunits > p->max_units) {
		snprintf(x->err, sizeof(x->err), "worker %d: xchg step %lld: the network model "
			 "of link %d -> %d could not send %zu bytes (%s)", x->id, (long long)step,
			 x->id, j, len, rc < 0 ? strerror(-rc) : "more units than sized for");
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
		snprintf(x->err, sizeof(x->err), "worker %d: xchg step %lld: the network model "
			 "of link %d -> %d gave one unit arriving at %lld, the message at %lld",
			 x->id, (long long)step, x->id, j, (long long)f->times[0],
			 (long long)m.last_arrival);
		return -EPROTO;	/* one_unit would not give the receiver its time */
	}
	if (f->tcp)
		xchg_tcp_units(&p->link[j], f, p->marks);
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
	st->units_marked += m.marked;
	st->bytes += bytes;
	st->delay_sum_ns += m.delay_sum_ns;
	x->bytes_sent += bytes;
	x->units_dropped += (uint64_t)(m.nunits - m.narrived);
	return 0;
}

void xchg_start_in(struct xchg *x, int j)
{
	struct xpriv *p = x->priv;
	struct xflow *f = &p->in[j];

	memset(f, 0, sizeof(*f));
	f->r = region_ring(x->rg, j, x->id);
	f->peer = j;
	f->tcp = p->from[j].transport == TRANSPORT_TCP;	/* no event changes it */
	f->bits = p->bits_in + (size_t)j * p->words;
	f->times = p->times_in + (size_t)j * p->max_units;
	f->buf = p->buf + (size_t)j * p->buf_stride;
	f->stage = ST_HDR;
}
