/* emu/net/tcp.c — connections through a switch port (tcp.h): one event loop over the
 * senders' links, the port's arrivals, the receiver's ACKs and the senders' timers, in
 * virtual-time order.  The sender's state machine is ns-3's (tcp-socket-base.cc,
 * tcp-tx-buffer.cc, TcpNewReno, TcpClassicRecovery in 3.37, SACK off), unit for unit;
 * the comments name the ns-3 function each part stands for. */
#include "emu/net/tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/net.h"

enum ev_type { EV_START, EV_TC, EV_PORT, EV_ACK, EV_RTO };
enum ca_state { CA_OPEN, CA_DISORDER, CA_RECOVERY, CA_LOSS };

#define NONE UINT32_MAX
#define DUPTHRESH 3

/* Per unit: the sender's scoreboard (TcpTxItem's flags) and what it knows of it. */
enum {
	U_SACKED = 1,	/* a duplicate ACK counted it as arrived (ns-3's "Reno SACK") */
	U_LOST = 2,
	U_RETX = 4,	/* resent since it was last marked lost */
	U_HRETX = 8,	/* resent while its RTT sample was pending: no sample (Karn) */
	U_ONLINK = 16,	/* its link has sent it at least once */
	U_GOT = 32,	/* the receiver has it */
};

struct ev {
	int64_t t;
	uint32_t src;
	uint8_t type;
	bool first, ce;		/* a unit's first transmission, its ECN mark so far; an
				 * ACK's ECN echo (ce) */
	uint8_t hop;		/* a unit's port on its route */
	uint32_t a;		/* a unit (port, link), an ack number (ACK), a generation (RTO) */
};

/* A message under way: its units are u[off, off + k), j below a unit's index in it. */
struct flow {
	uint32_t off, k;
	uint32_t una, high, rcv_nxt;	/* high: units [0, high) were sent at least once */
	uint64_t total;			/* payload bytes of the message */
	/* the scoreboard's sums over [una, high), bytes of payload */
	uint64_t sent, sacked, lost, retx;
	uint32_t highest_sack, lost_from;	/* lost_from: no lost unit to resend below */
	/* the congestion state (TcpSocketState::m_congState) and recovery */
	uint8_t state;
	bool recover_active, first_partial, gave_up, timer_on;
	uint32_t dupacks, recover, high_rx_ack;
	uint32_t hist_from;		/* RTT samples pending for units [hist_from, high) */
	uint32_t gen, timeouts;		/* timer generation; timeouts in a row */
	/* the sender's link: busy until its unit ends; the units waiting for it */
	bool busy;
	uint32_t qhead, qtail;		/* into sim.q, NONE: empty */
	uint32_t wnd_end;		/* dctcp's window of data */
	uint64_t wnd_acked, wnd_marked;
};

struct qent {
	uint32_t unit, next;
};

struct sim {
	struct port *ports;
	const struct tcp_route *route;
	struct tcp_conn *conn;
	struct tcp_unit *u;
	struct tcp_stats *st;
	struct flow *f;			/* [by src] */
	uint8_t *fl;			/* [n] U_* */
	uint32_t *tries;		/* [n] resends, for units without a window */
	int64_t *sent_at;		/* [n] its first transmission, for the RTT sample */
	uint64_t *before;		/* [n] payload bytes of its message before it */
	struct qent *q;			/* the links' waiting units */
	uint32_t nq, capq;
	uint64_t seq;			/* events scheduled so far: the tie order */
	struct vheap h;
};

/* An event in the heap (vheap.h): simultaneous events run in the order they were
 * scheduled, as ns-3 runs them, so that a unit a link releases at the end of the one
 * before it and a unit an ACK releases at the same instant meet the port in ns-3's
 * order. */
static int push(struct sim *s, struct ev e)
{
	return vheap_push(&s->h, e.t, s->seq++, (uint64_t)e.a << 32 | (uint64_t)e.src << 8 |
			  (uint64_t)e.hop << 5 | (uint64_t)e.ce << 4 | (uint64_t)e.first << 3 |
			  e.type);
}

static struct ev pop(struct sim *s)
{
	struct vheap_ent x = vheap_pop(&s->h);

	return (struct ev){ .t = x.t, .type = (uint8_t)(x.val & 7), .first = x.val >> 3 & 1,
			    .ce = x.val >> 4 & 1, .hop = (uint8_t)(x.val >> 5 & 7),
			    .src = (uint32_t)(x.val >> 8 & 0xffffff), .a = (uint32_t)(x.val >> 32) };
}

void tcp_conn_start(struct tcp_conn *c)
{
	c->cwnd = (uint64_t)(c->init_cwnd ? c->init_cwnd : 1) * c->mss;
	c->ssthresh = UINT64_MAX;
	c->acked_rest = 0;
	c->alpha = 1;		/* DCTCP starts cautious (RFC 8257) */
	c->srtt = -1;
	c->rttvar = 0;
	c->rto = c->rto_init;
}

static uint32_t payload(const struct sim *s, int src, uint32_t i)
{
	uint32_t b = s->u[i].bytes, hdr = s->conn[src].hdr;

	return b > hdr ? b - hdr : 0;
}

/* Payload bytes of flow f's units [0, j). */
static uint64_t upto(const struct sim *s, const struct flow *f, uint32_t j)
{
	return j < f->k ? s->before[f->off + j] : f->total;
}

/* ---- the sender's link: one unit at a time (PointToPointNetDevice) ---- */

/* Unit i starts down src's link at t: the end of it frees the link, and it reaches the
 * port tx + owd later (its first transmission no earlier than its link's own time),
 * unless the link lost it. */
static int transmit_start(struct sim *s, int src, uint32_t i, int64_t t)
{
	struct tcp_conn *c = &s->conn[src];
	struct tcp_unit *x = &s->u[i];
	int64_t tx = c->rate ? port_tx_ns(c->rate, x->bytes) : 0;
	int64_t arrive = t + tx + c->owd;
	bool first = !(s->fl[i] & U_ONLINK);
	int rc;

	s->f[src].busy = true;
	s->fl[i] |= U_ONLINK;
	rc = push(s, (struct ev){ .t = t + tx, .src = (uint32_t)src, .type = EV_TC });
	if (rc || (first && x->lost_on_link))
		return rc;	/* the link took it: the receiver never sees it */
	if (first && x->t > arrive)
		arrive = x->t;
	return push(s, (struct ev){ .t = arrive, .src = (uint32_t)src, .type = EV_PORT,
				    .first = first, .a = i });
}

static int link_send(struct sim *s, int src, uint32_t i, int64_t t)
{
	struct flow *f = &s->f[src];

	if (!f->busy)
		return transmit_start(s, src, i, t);
	if (s->nq == s->capq) {
		uint32_t cap = s->capq ? 2 * s->capq : 64;
		struct qent *q = realloc(s->q, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		s->q = q;
		s->capq = cap;
	}
	s->q[s->nq] = (struct qent){ .unit = i, .next = NONE };
	if (f->qtail != NONE)
		s->q[f->qtail].next = s->nq;
	else
		f->qhead = s->nq;
	f->qtail = s->nq++;
	return 0;
}

static int on_tc(struct sim *s, const struct ev *e)
{
	struct flow *f = &s->f[e->src];
	uint32_t q = f->qhead;

	f->busy = false;
	if (q == NONE)
		return 0;
	f->qhead = s->q[q].next;
	if (f->qhead == NONE)
		f->qtail = NONE;
	return transmit_start(s, e->src, s->q[q].unit, e->t);
}

/* ---- the timer and the RTT estimate ---- */

static int arm(struct sim *s, int src, int64_t now)
{
	struct flow *f = &s->f[src];

	f->gen++;
	f->timer_on = true;
	return push(s, (struct ev){ .t = now + s->conn[src].rto, .src = (uint32_t)src,
				    .type = EV_RTO, .a = f->gen });
}

static void disarm(struct flow *f)
{
	f->gen++;
	f->timer_on = false;
}

/* max(rto_min, srtt + max(granularity, 4 rttvar)), at most rto_max */
static void rto_from_estimate(struct tcp_conn *c)
{
	int64_t var4 = 4 * c->rttvar;

	c->rto = c->srtt < 0 ? c->rto_init :
		 c->srtt + (var4 > c->granularity ? var4 : c->granularity);
	if (c->rto < c->rto_min)
		c->rto = c->rto_min;
	if (c->rto > c->rto_max)
		c->rto = c->rto_max;
}

/* RttMeanDeviation's integer update (alpha 1/8, beta 1/4) */
static void rtt_sample(struct tcp_conn *c, int64_t r)
{
	if (c->srtt < 0) {
		c->srtt = r;
		c->rttvar = r / 2;
	} else {
		int64_t d = c->srtt > r ? c->srtt - r : r - c->srtt;

		c->srtt = (7 * c->srtt + r) / 8;
		c->rttvar = (3 * c->rttvar + d) / 4;
	}
	rto_from_estimate(c);
}

/* EstimateRtt: the oldest pending sample, if this ACK covers it, then every sample it
 * covers is dropped. */
static void estimate_rtt(struct sim *s, int src, uint32_t ack, int64_t now)
{
	struct flow *f = &s->f[src];
	uint32_t h = f->hist_from;

	if (h < f->high && ack > h && !(s->fl[f->off + h] & U_HRETX))
		rtt_sample(&s->conn[src], now - s->sent_at[f->off + h]);
	if (ack > f->hist_from)
		f->hist_from = ack;
}

/* ---- the scoreboard (TcpTxBuffer) ---- */

static uint64_t in_flight(const struct flow *f)
{
	return f->sent - (f->sacked + f->lost) + f->retx;
}

static void set_flag(struct sim *s, struct flow *f, uint32_t j, uint8_t flag, bool on)
{
	uint32_t i = f->off + j;
	uint64_t b = payload(s, s->u[i].src, i);
	uint64_t *sum = flag == U_SACKED ? &f->sacked : flag == U_LOST ? &f->lost : &f->retx;

	if (on == !!(s->fl[i] & flag))
		return;
	s->fl[i] ^= flag;
	*sum = on ? *sum + b : *sum - b;
}

/* AddRenoSack: a duplicate ACK says one more unit after the head has arrived. */
static void add_reno_sack(struct sim *s, struct flow *f)
{
	uint32_t j = f->una + 1;

	while (j < f->high && s->fl[f->off + j] & U_SACKED)
		j++;
	if (j < f->high) {
		set_flag(s, f, j, U_SACKED, true);
		f->highest_sack = j;
	}
}

static void mark_head_lost(struct sim *s, struct flow *f)
{
	if (f->una >= f->high)
		return;
	set_flag(s, f, f->una, U_SACKED, false);
	set_flag(s, f, f->una, U_RETX, false);
	set_flag(s, f, f->una, U_LOST, true);
	if (f->lost_from > f->una)
		f->lost_from = f->una;
}

/* DiscardUpTo: units below ack leave the scoreboard. */
static void discard_up_to(struct sim *s, struct flow *f, uint32_t ack)
{
	for (uint32_t j = f->una; j < ack && j < f->high; j++) {
		uint32_t i = f->off + j;
		uint64_t b = payload(s, s->u[i].src, i);

		f->sent -= b;
		f->sacked -= s->fl[i] & U_SACKED ? b : 0;
		f->lost -= s->fl[i] & U_LOST ? b : 0;
		f->retx -= s->fl[i] & U_RETX ? b : 0;
		s->fl[i] &= (uint8_t)~(U_SACKED | U_LOST | U_RETX);
	}
	f->una = ack;
	if (f->una < f->high && s->fl[f->off + f->una] & U_SACKED) {
		/* a guess of Reno SACK proved wrong: the head cannot have arrived */
		set_flag(s, f, f->una, U_SACKED, false);
		add_reno_sack(s, f);
		mark_head_lost(s, f);
	}
	if (f->highest_sack != NONE && f->highest_sack <= f->una)
		f->highest_sack = NONE;
	if (f->lost_from < f->una)
		f->lost_from = f->una;
}

/* IsLost: the first unit from j on that is lost or counted arrived is a lost one. */
static bool is_lost(const struct sim *s, const struct flow *f, uint32_t j)
{
	if (f->highest_sack == NONE || j >= f->highest_sack)
		return false;
	for (; j < f->high; j++) {
		uint8_t fl = s->fl[f->off + j];

		if (fl & U_LOST)
			return true;
		if (fl & U_SACKED)
			return false;
	}
	return false;
}

/* NextSeg: the first lost unit not yet resent, else the next new one; NONE: neither. */
static uint32_t next_seg(struct sim *s, struct flow *f)
{
	uint32_t j = f->lost_from;

	while (j < f->high && (s->fl[f->off + j] & (U_LOST | U_RETX | U_SACKED)) != U_LOST)
		j++;
	f->lost_from = j;
	if (j < f->high)
		return j;
	return f->high < f->k ? f->high : NONE;
}

/* ---- the sender (TcpSocketBase) ---- */

/* SendDataPacket */
static int send_data(struct sim *s, int src, uint32_t j, int64_t now)
{
	struct flow *f = &s->f[src];
	uint32_t i = f->off + j;
	int rc = 0;

	if (j < f->high) {
		set_flag(s, f, j, U_RETX, true);
		if (j >= f->hist_from)
			s->fl[i] |= U_HRETX;
		s->st->retransmits++;
	} else {
		f->high = j + 1;
		f->sent += payload(s, src, i);
		s->sent_at[i] = now;
	}
	if (!f->timer_on)
		rc = arm(s, src, now);
	return rc ? rc : link_send(s, src, i, now);
}

/* SendPendingData: whole units while the window has room for them (the message's last
 * unit when it fits). */
static int send_pending(struct sim *s, int src, int64_t now)
{
	struct tcp_conn *c = &s->conn[src];
	struct flow *f = &s->f[src];
	int rc = 0;

	while (!rc && !f->gave_up) {
		uint64_t fl = in_flight(f);
		uint64_t room = c->cwnd > fl ? c->cwnd - fl : 0;
		uint32_t j;

		if (!room || (j = next_seg(s, f)) == NONE)
			break;
		if (room < c->mss && f->total - upto(s, f, j) > room)
			break;
		rc = send_data(s, src, j, now);
	}
	return rc;
}

/* DoRetransmit: the first lost unit, else the head. */
static int do_retransmit(struct sim *s, int src, int64_t now)
{
	struct flow *f = &s->f[src];
	uint32_t j = next_seg(s, f);

	return send_data(s, src, j != NONE && j < f->high ? j : f->una, now);
}

static uint64_t ssthresh_of(const struct tcp_conn *c, uint64_t flight)
{
	return flight / 2 > 2ull * c->mss ? flight / 2 : 2ull * c->mss;
}

/* TcpNewReno::IncreaseWindow */
static void increase_window(struct tcp_conn *c, uint32_t segs)
{
	if (c->cwnd < c->ssthresh && segs >= 1) {
		c->cwnd += c->mss;
		segs--;
	}
	if (c->cwnd >= c->ssthresh && segs > 0) {
		double adder = (double)c->mss * c->mss / (double)c->cwnd;

		c->cwnd += adder > 1 ? (uint64_t)adder : 1;
	}
}

/* NewAck: the timer restarts from the estimate (when reset), none once all is acked. */
static int new_ack(struct sim *s, int src, bool reset, int64_t now)
{
	struct flow *f = &s->f[src];
	int rc = 0;

	f->timeouts = 0;
	if (reset) {
		rto_from_estimate(&s->conn[src]);
		rc = arm(s, src, now);
	}
	if (f->una >= f->k)
		disarm(f);
	return rc;
}

static int enter_recovery(struct sim *s, int src, int64_t now)
{
	struct tcp_conn *c = &s->conn[src];
	struct flow *f = &s->f[src];

	add_reno_sack(s, f);
	mark_head_lost(s, f);
	f->recover = f->high;
	f->recover_active = true;
	f->state = CA_RECOVERY;
	/* without SACK ns-3 counts the head as in flight */
	c->ssthresh = ssthresh_of(c, in_flight(f) + c->mss);
	c->cwnd = c->ssthresh;	/* TcpClassicRecovery: its inflation only traced */
	s->st->fast_retransmits++;
	return do_retransmit(s, src, now);
}

/* DupAck */
static int dup_ack(struct sim *s, int src, int64_t now)
{
	struct flow *f = &s->f[src];

	if (f->state == CA_LOSS)
		return 0;	/* a resend's or a loss's: ns-3 cannot tell, and ignores it */
	if (f->state != CA_RECOVERY)
		f->dupacks++;
	if (f->state == CA_OPEN)
		f->state = CA_DISORDER;
	if (f->state == CA_RECOVERY) {
		add_reno_sack(s, f);
	} else if (f->dupacks == DUPTHRESH &&
		   (f->high_rx_ack >= f->recover || !f->recover_active)) {
		return enter_recovery(s, src, now);
	} else if (is_lost(s, f, f->high_rx_ack + 1)) {
		return enter_recovery(s, src, now);
	} else {
		add_reno_sack(s, f);	/* limited transmit */
	}
	return 0;
}

/* Acknowledged bytes in whole segments, the rest carried to the next ACK. */
static uint32_t segs_of(struct tcp_conn *c, uint64_t bytes)
{
	uint32_t segs = (uint32_t)(bytes / c->mss);

	c->acked_rest += bytes % c->mss;
	if (c->acked_rest >= c->mss) {
		segs++;
		c->acked_rest -= c->mss;
	}
	return segs;
}

/* ProcessAck, for an ACK that is neither stale nor past what was sent; bytes: what it
 * acknowledges. */
static int process_ack(struct sim *s, int src, uint32_t ack, uint32_t old, uint64_t bytes,
		       int64_t now)
{
	struct tcp_conn *c = &s->conn[src];
	struct flow *f = &s->f[src];
	bool dup = ack == old && ack < f->high;
	int rc = dup ? dup_ack(s, src, now) : 0;

	if (rc || ack == old)
		return rc;
	uint32_t segs = segs_of(c, bytes);

	f->dupacks = 0;
	if (ack < f->recover && f->state == CA_RECOVERY) {
		/* partial ACK: the next hole is lost too (its resend flag just cleared,
		 * so ns-3's IsRetransmittedDataAcked never holds here) */
		mark_head_lost(s, f);
		rc = do_retransmit(s, src, now);
		if (!rc)
			rc = new_ack(s, src, f->first_partial, now);
		f->first_partial = false;
		return rc;
	}
	if (ack < f->recover && f->state == CA_LOSS) {
		increase_window(c, segs);
		return new_ack(s, src, true, now);
	}
	bool exited = false;

	if (f->state == CA_DISORDER) {
		f->state = CA_OPEN;
	} else if (f->state == CA_RECOVERY) {
		f->first_partial = true;
		segs = (uint32_t)(bytes / c->mss);
		f->state = CA_OPEN;
		exited = true;
		f->dupacks = 0;
	} else if (f->state == CA_LOSS) {
		f->first_partial = true;
		segs = (uint32_t)((upto(s, f, ack) - upto(s, f, f->recover)) / c->mss);
		f->state = CA_OPEN;
	}
	if (ack >= f->recover)
		f->recover_active = false;
	if (exited) {
		rc = new_ack(s, src, true, now);
		c->cwnd = c->ssthresh;
	}
	if (!rc) {
		increase_window(c, segs);
		rc = new_ack(s, src, true, now);
	}
	return rc;
}

static void dctcp_window(struct tcp_conn *c, struct flow *f, uint64_t acked, bool ece)
{
	f->wnd_acked += acked;
	f->wnd_marked += ece ? acked : 0;
	if (f->una < f->wnd_end)
		return;
	double frac = f->wnd_acked ? (double)f->wnd_marked / (double)f->wnd_acked : 0;

	c->alpha = (1 - 1.0 / 16) * c->alpha + frac / 16;
	if (f->wnd_marked) {
		c->cwnd = (uint64_t)((double)c->cwnd * (1 - c->alpha / 2));
		if (c->cwnd < c->mss)
			c->cwnd = c->mss;
		c->ssthresh = c->cwnd;
	}
	f->wnd_end = f->high;
	f->wnd_acked = f->wnd_marked = 0;
}

/* An ACK at the sender (DoForwardUp, ProcessEstablished, ReceivedAck). */
static int on_ack(struct sim *s, const struct ev *e)
{
	struct tcp_conn *c = &s->conn[e->src];
	struct flow *f = &s->f[e->src];
	uint32_t ack = e->a, old = f->una;

	if (f->gave_up)
		return 0;
	s->st->ecn_echoes += e->ce;
	estimate_rtt(s, e->src, ack, e->t);
	if (ack > f->high_rx_ack)
		f->high_rx_ack = ack;
	if (ack < f->una || ack > f->high)
		return 0;
	uint64_t acked = upto(s, f, ack) - upto(s, f, old);

	discard_up_to(s, f, ack);
	int rc = process_ack(s, e->src, ack, old, acked, e->t);

	if (!rc && c->cc == TCP_DCTCP && acked)
		dctcp_window(c, f, acked, e->ce);
	return rc ? rc : send_pending(s, e->src, e->t);
}

/* ReTxTimeout */
static int on_rto(struct sim *s, const struct ev *e)
{
	struct tcp_conn *c = &s->conn[e->src];
	struct flow *f = &s->f[e->src];

	if (e->a != f->gen || !f->timer_on || f->gave_up)
		return 0;
	f->timer_on = false;
	if (f->una >= f->k)
		return 0;
	if (++f->timeouts > (uint32_t)c->max_retries) {
		f->gave_up = true;	/* the rest is lost */
		return 0;
	}
	s->st->timeouts++;
	uint64_t flight = in_flight(f);

	f->dupacks = 0;
	for (uint32_t j = f->una; j < f->high; j++) {	/* SetSentListLost */
		set_flag(s, f, j, U_SACKED, false);
		set_flag(s, f, j, U_RETX, false);
		set_flag(s, f, j, U_LOST, true);
	}
	f->highest_sack = NONE;
	f->lost_from = f->una;
	f->recover = f->high;
	f->recover_active = true;
	c->rto = c->rto * 2 < c->rto_max ? c->rto * 2 : c->rto_max;
	f->hist_from = f->high;	/* the RTT samples pending are dropped */
	c->ssthresh = ssthresh_of(c, flight);
	f->state = CA_LOSS;
	c->cwnd = c->mss;
	return send_pending(s, e->src, e->t);
}

/* A unit at a port of its route: on to the next, or to the receiver, which acknowledges
 * it; or dropped. */
static int on_port(struct sim *s, const struct ev *e)
{
	struct tcp_conn *c = &s->conn[e->src];
	struct flow *f = &s->f[e->src];
	struct tcp_unit *x = &s->u[e->a];
	const struct tcp_route *r = s->route ? &s->route[e->src] : NULL;
	struct port *p = &s->ports[r ? r->path[e->hop] : 0];
	int64_t out;
	bool marked;
	int rc = port_pass(p, x->bytes, e->t, &out, &marked);

	if (rc < 0)
		return rc;
	if (rc && r && e->hop + 1 < r->npath) {
		struct ev next = *e;

		next.t = out;
		next.hop++;
		next.ce |= marked;
		return push(s, next);
	}
	if (!c->tcp) {	/* no window: the link's rule */
		if (rc) {
			x->out = out;
			return 0;
		}
		/* a reliable sender's timer brings it back to the port that dropped it */
		if (!c->reliable || (int)++s->tries[e->a] > c->max_retries)
			return 0;
		int64_t w = net_backoff(c->rto_init, c->rto_max, (int)s->tries[e->a] - 1);
		struct ev again = *e;

		p->st.resends++;
		again.t = p->last_t + w;
		return push(s, again);
	}
	if (!rc)
		return 0;	/* the sender finds out by duplicate ACKs or its timer */
	/* a link's mark rides on the unit's first transmission only */
	marked = marked || e->ce || (x->marked_on_link && e->first);
	if (!(s->fl[e->a] & U_GOT)) {
		s->fl[e->a] |= U_GOT;
		x->out = out;
	}
	while (f->rcv_nxt < f->k && s->fl[f->off + f->rcv_nxt] & U_GOT)
		f->rcv_nxt++;
	return push(s, (struct ev){ .t = out + c->ack_delay, .src = e->src, .type = EV_ACK,
				    .ce = marked, .a = f->rcv_nxt });
}

static int dispatch(struct sim *s, const struct ev *e)
{
	switch (e->type) {
	case EV_START:
		return send_pending(s, e->src, e->t);
	case EV_TC:
		return on_tc(s, e);
	case EV_PORT:
		return on_port(s, e);
	case EV_ACK:
		return on_ack(s, e);
	default:
		return on_rto(s, e);
	}
}

/* The flows of u[0..n): where each sender's units are, its message's start. */
static int start(struct sim *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct flow *f = &s->f[s->u[i].src];

		if (!f->k) {
			f->off = i;
			f->qhead = f->qtail = NONE;
			f->highest_sack = NONE;
			f->first_partial = true;	/* recover 0: no recovery under way */
		}
		s->before[i] = f->total;
		f->total += payload(s, s->u[i].src, i);
		f->k++;
		s->u[i].out = -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		int src = s->u[i].src;
		struct tcp_conn *c = &s->conn[src];
		struct flow *f = &s->f[src];
		int rc = 0;

		if (!c->tcp) {
			if (!s->u[i].lost_on_link)
				rc = push(s, (struct ev){ .t = s->u[i].t, .src = (uint32_t)src,
							  .type = EV_PORT, .first = true, .a = i });
		} else if (i == f->off) {
			/* the message leaves when its first unit's link model says */
			int64_t t0 = s->u[i].t - c->owd -
				     (c->rate ? port_tx_ns(c->rate, s->u[i].bytes) : 0);

			rc = push(s, (struct ev){ .t = t0 > 0 ? t0 : 0, .src = (uint32_t)src,
						  .type = EV_START });
		}
		if (rc)
			return rc;
	}
	return 0;
}

int tcp_resolve(struct port *ports, const struct tcp_route *route, struct tcp_conn *conn,
		struct tcp_unit *u, uint32_t n, struct tcp_stats *st)
{
	struct sim s = { .ports = ports, .route = route, .conn = conn, .u = u, .st = st };
	uint32_t nsrc = 1, m = n ? n : 1;
	int rc = -ENOMEM;

	for (uint32_t i = 0; i < n; i++)
		nsrc = u[i].src >= nsrc ? u[i].src + 1u : nsrc;
	s.f = calloc(nsrc, sizeof(*s.f));
	s.fl = calloc(m, 1);
	s.tries = calloc(m, sizeof(*s.tries));
	s.sent_at = calloc(m, sizeof(*s.sent_at));
	s.before = calloc(m, sizeof(*s.before));
	if (s.f && s.fl && s.tries && s.sent_at && s.before)
		rc = start(&s, n);
	while (!rc && s.h.n) {
		struct ev e = pop(&s);

		rc = dispatch(&s, &e);
	}
	free(s.f);
	free(s.fl);
	free(s.tries);
	free(s.sent_at);
	free(s.before);
	free(s.q);
	vheap_free(&s.h);
	return rc;
}
