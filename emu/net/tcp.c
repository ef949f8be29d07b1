/* emu/net/tcp.c — connections through a switch port (tcp.h): one event loop over the
 * port's arrivals, the receiver's ACKs and the senders' timers, in virtual-time order. */
#include "emu/net/tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/net.h"

enum ev_type { EV_PORT, EV_ACK, EV_RTO };

struct ev {
	int64_t t;
	uint16_t src;
	uint8_t type, flag;	/* flag: an ACK's ECN echo, a unit's mark */
	uint32_t a, gen;	/* a unit (port), an ack number (ACK); a timer's generation */
};

/* A message under way: its units are u[off, off + k). */
struct flow {
	uint32_t off, k;
	uint32_t snd_una, snd_nxt, recover, rcv_nxt, dupacks;
	bool in_recovery, gave_up;
	uint32_t gen, timeouts;		/* timer generation; timeouts in a row */
	int64_t nic_free;		/* when the sender's link is free for the next unit */
	uint32_t wnd_end, wnd_acked, wnd_marked;	/* dctcp's window of data */
};

struct sim {
	struct port *p;
	struct tcp_conn *conn;
	struct tcp_unit *u;
	struct tcp_stats *st;
	struct flow *f;			/* [by src] */
	uint8_t *got, *retx;		/* [n] per unit */
	uint32_t *tries;		/* [n] attempts, for units without a window */
	int64_t *sent_at;		/* [n] */
	struct vheap h;
};

/* An event in the heap (vheap.h): its ties at one instant in (src, type, a, flag) order,
 * its timer generation the entry's value. */
static int push(struct sim *s, struct ev e)
{
	return vheap_push(&s->h, e.t, (uint64_t)e.src << 35 | (uint64_t)e.type << 33 |
			  (uint64_t)e.a << 1 | e.flag, e.gen);
}

static struct ev pop(struct sim *s)
{
	struct vheap_ent x = vheap_pop(&s->h);

	return (struct ev){ .t = x.t, .src = (uint16_t)(x.key >> 35),
			    .type = (uint8_t)(x.key >> 33 & 3), .a = (uint32_t)(x.key >> 1),
			    .flag = (uint8_t)(x.key & 1), .gen = (uint32_t)x.val };
}

void tcp_conn_start(struct tcp_conn *c)
{
	c->cwnd = c->init_cwnd ? c->init_cwnd : 1;
	c->ssthresh = 1e18;
	c->alpha = 1;		/* DCTCP starts cautious (RFC 8257) */
	c->srtt = -1;
	c->rttvar = 0;
	c->rto = c->rto_init;
}

static int64_t tx_ns(uint64_t rate, uint32_t bytes)
{
	return rate ? port_tx_ns(rate, bytes) : 0;
}

/* Unit i (index into u) of flow src leaves its sender at `at`; a first transmission
 * no earlier than its link's own time. */
static int send_unit(struct sim *s, int src, uint32_t i, int64_t at)
{
	struct tcp_conn *c = &s->conn[src];
	struct flow *f = &s->f[src];
	struct tcp_unit *x = &s->u[i];
	int64_t tx = tx_ns(c->rate, x->bytes);
	int64_t depart = at > f->nic_free ? at : f->nic_free;
	int64_t arrive = depart + tx + c->owd;
	bool first = !s->retx[i] && s->sent_at[i] < 0;

	if (first && x->t > arrive)	/* its link's own time: the window did not hold it */
		arrive = x->t;
	if (!first) {
		s->retx[i] = 1;
		s->st->retransmits++;
	}
	f->nic_free = arrive - c->owd;
	s->sent_at[i] = arrive - c->owd - tx;
	if (first && x->lost_on_link)
		return 0;	/* the link took it: the receiver never sees it */
	return push(s, (struct ev){ .t = arrive, .src = (uint16_t)src, .type = EV_PORT, .a = i });
}

static int arm(struct sim *s, int src, int64_t now)
{
	struct flow *f = &s->f[src];

	f->gen++;
	return push(s, (struct ev){ .t = now + s->conn[src].rto, .src = (uint16_t)src,
				    .type = EV_RTO, .gen = f->gen });
}

/* New units while the window has room. */
static int fill(struct sim *s, int src, int64_t now)
{
	struct flow *f = &s->f[src];
	double cwnd = s->conn[src].cwnd;
	int rc = 0;

	while (!rc && f->snd_nxt < f->k && (double)(f->snd_nxt - f->snd_una) < cwnd)
		rc = send_unit(s, src, f->off + f->snd_nxt++, now);
	return rc;
}

/* The timer from the estimator: max(rto_min, srtt + 4 rttvar), at most rto_max. */
static void rto_from_estimate(struct tcp_conn *c)
{
	c->rto = c->srtt < 0 ? c->rto_init : c->srtt + 4 * c->rttvar;
	if (c->rto < c->rto_min)
		c->rto = c->rto_min;
	if (c->rto > c->rto_max)
		c->rto = c->rto_max;
}

static void rtt_sample(struct tcp_conn *c, int64_t r)
{
	if (c->srtt < 0) {
		c->srtt = r;
		c->rttvar = r / 2;
	} else {
		int64_t d = c->srtt > r ? c->srtt - r : r - c->srtt;

		c->rttvar = (3 * c->rttvar + d) / 4;
		c->srtt = (7 * c->srtt + r) / 8;
	}
	rto_from_estimate(c);
}

static double half_flight(const struct flow *f)
{
	double h = (double)(f->snd_nxt - f->snd_una) / 2;

	return h > 2 ? h : 2;
}

static void dctcp_window(struct tcp_conn *c, struct flow *f, uint32_t acked, bool ece)
{
	f->wnd_acked += acked;
	f->wnd_marked += ece ? acked : 0;
	if (f->snd_una < f->wnd_end)
		return;
	double frac = f->wnd_acked ? (double)f->wnd_marked / f->wnd_acked : 0;

	c->alpha = (1 - 1.0 / 16) * c->alpha + frac / 16;
	if (f->wnd_marked) {
		c->cwnd *= 1 - c->alpha / 2;
		if (c->cwnd < 1)
			c->cwnd = 1;
		c->ssthresh = c->cwnd;
	}
	f->wnd_end = f->snd_nxt;
	f->wnd_acked = f->wnd_marked = 0;
}

static int on_ack(struct sim *s, const struct ev *e)
{
	struct tcp_conn *c = &s->conn[e->src];
	struct flow *f = &s->f[e->src];
	uint32_t ack = e->a;

	if (f->gave_up)
		return 0;
	s->st->ecn_echoes += e->flag;
	if (ack > f->snd_una) {
		uint32_t acked = ack - f->snd_una, last = f->off + ack - 1;

		if (!s->retx[last])
			rtt_sample(c, e->t - s->sent_at[last]);
		else	/* new data acknowledged: the backoff ends (RFC 6298 5.7, Linux) */
			rto_from_estimate(c);
		f->snd_una = ack;
		f->dupacks = 0;
		f->timeouts = 0;
		if (f->in_recovery && ack < f->recover) {	/* partial: the next hole */
			c->cwnd = c->cwnd > acked ? c->cwnd - acked + 1 : 1;
			int rc = send_unit(s, e->src, f->off + ack, e->t);

			if (rc)
				return rc;
		} else if (f->in_recovery) {
			f->in_recovery = false;
			c->cwnd = c->ssthresh;
		} else if (c->cwnd < c->ssthresh) {
			c->cwnd += acked;
		} else {
			c->cwnd += (double)acked / c->cwnd;
		}
		if (c->cc == TCP_DCTCP)
			dctcp_window(c, f, acked, e->flag);
		if (f->snd_nxt < f->snd_una)
			f->snd_nxt = f->snd_una;
		if (f->snd_una < f->k) {
			int rc = arm(s, e->src, e->t);

			if (rc)
				return rc;
		} else {
			f->gen++;	/* all acknowledged: no timer */
		}
	} else if (ack == f->snd_una && f->snd_una < f->snd_nxt) {
		if (++f->dupacks == 3 && !f->in_recovery) {
			c->ssthresh = half_flight(f);
			c->cwnd = c->ssthresh + 3;
			f->recover = f->snd_nxt;
			f->in_recovery = true;
			s->st->fast_retransmits++;
			int rc = send_unit(s, e->src, f->off + f->snd_una, e->t);

			if (rc)
				return rc;
		} else if (f->in_recovery) {
			c->cwnd += 1;
		} else if (f->dupacks < 3 && f->snd_nxt < f->k &&
			   (double)(f->snd_nxt - f->snd_una) < c->cwnd + f->dupacks) {
			/* limited transmit (RFC 3042): a new unit on each of the first two
			 * duplicates, so that a small window can still make three */
			return send_unit(s, e->src, f->off + f->snd_nxt++, e->t);
		}
	}
	return fill(s, e->src, e->t);
}

static int on_rto(struct sim *s, const struct ev *e)
{
	struct tcp_conn *c = &s->conn[e->src];
	struct flow *f = &s->f[e->src];

	if (e->gen != f->gen || f->gave_up || f->snd_una >= f->k)
		return 0;
	s->st->timeouts++;
	if (++f->timeouts > (uint32_t)c->max_retries) {
		f->gave_up = true;	/* the rest is lost */
		return 0;
	}
	c->ssthresh = half_flight(f);
	c->cwnd = 1;
	c->rto = c->rto * 2 < c->rto_max ? c->rto * 2 : c->rto_max;
	f->in_recovery = false;
	f->dupacks = 0;
	f->snd_nxt = f->snd_una;	/* go back: resend from the first hole */
	for (uint32_t k = f->snd_una; k < f->k; k++)
		if (s->sent_at[f->off + k] >= 0)
			s->retx[f->off + k] = 1;
	int rc = fill(s, e->src, e->t);

	return rc ? rc : arm(s, e->src, e->t);
}

/* A unit at the port: on to the receiver, which acknowledges it; or dropped. */
static int on_port(struct sim *s, const struct ev *e)
{
	struct tcp_conn *c = &s->conn[e->src];
	struct flow *f = &s->f[e->src];
	struct tcp_unit *x = &s->u[e->a];
	int64_t out;
	bool marked;
	int rc = port_pass(s->p, x->bytes, e->t, &out, &marked);

	if (rc < 0)
		return rc;
	if (!c->tcp) {	/* no window: the link's rule */
		s->tries[e->a]++;
		if (rc) {
			x->out = out;
			return 0;
		}
		if (!c->reliable || (int)s->tries[e->a] > c->max_retries)
			return 0;
		int64_t w = net_backoff(c->rto_init, c->rto_max, (int)s->tries[e->a] - 1);

		s->p->st.resends++;
		return push(s, (struct ev){ .t = s->p->last_t + w, .src = e->src, .type = EV_PORT,
					    .a = e->a });
	}
	if (!rc)
		return 0;	/* the sender finds out by duplicate ACKs or its timer */
	if (!s->got[e->a]) {
		s->got[e->a] = 1;
		x->out = out;
	}
	while (f->rcv_nxt < f->k && s->got[f->off + f->rcv_nxt])
		f->rcv_nxt++;
	return push(s, (struct ev){ .t = out + c->ack_delay, .src = e->src, .type = EV_ACK,
				    .flag = marked || (x->marked_on_link && !s->retx[e->a]),
				    .a = f->rcv_nxt });
}

int tcp_resolve(struct port *p, struct tcp_conn *conn, struct tcp_unit *u, uint32_t n,
		struct tcp_stats *st)
{
	struct sim s = { .p = p, .conn = conn, .u = u, .st = st };
	int rc = -ENOMEM;

	uint32_t nsrc = 1;

	for (uint32_t i = 0; i < n; i++)
		nsrc = u[i].src >= nsrc ? u[i].src + 1u : nsrc;
	s.f = calloc(nsrc, sizeof(*s.f));
	s.got = calloc(n ? n : 1, 1);
	s.retx = calloc(n ? n : 1, 1);
	s.tries = calloc(n ? n : 1, sizeof(*s.tries));
	s.sent_at = malloc((n ? n : 1) * sizeof(*s.sent_at));
	if (!s.f || !s.got || !s.retx || !s.tries || !s.sent_at)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		struct flow *f = &s.f[u[i].src];

		if (!f->k)
			f->off = i;
		f->k++;
		u[i].out = -1;
		s.sent_at[i] = -1;
	}
	rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		int src = u[i].src;
		struct flow *f = &s.f[src];

		if (!conn[src].tcp) {
			if (!u[i].lost_on_link)
				rc = push(&s, (struct ev){ .t = u[i].t, .src = (uint16_t)src,
							   .type = EV_PORT, .a = i });
			continue;
		}
		if (i != f->off)
			continue;
		rc = fill(&s, src, 0);	/* the window's first units, at their own times */
		if (!rc)
			rc = arm(&s, src, s.sent_at[i]);
	}
	while (!rc && s.h.n) {
		struct ev e = pop(&s);

		rc = e.type == EV_PORT ? on_port(&s, &e) : e.type == EV_ACK ? on_ack(&s, &e) :
		     on_rto(&s, &e);
	}
out:
	free(s.f);
	free(s.got);
	free(s.retx);
	free(s.tries);
	free(s.sent_at);
	vheap_free(&s.h);
	return rc;
}
