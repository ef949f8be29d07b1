/* emu/net/xchg_state.c — what of an exchange outlives a step: the links' counters as
 * read for the logs, and the state a checkpoint saves and a resume loads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/xchg_impl.h"

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
 * rate queue (its last time to send, its trace cursor, and the times to send still in
 * its ring, oldest first); with a switch port (xchg_port.c), the port's clock, counters
 * and the units still waiting in it, oldest first; with tcp links into it, each sender's
 * connection and the transport's counters.
 * Messages are not part of it: between two steps none is in flight for this worker. */
struct xsave_head {
	int64_t clock;
	uint64_t bytes_sent, units_dropped, bytes_delivered, units_late;
	int64_t free_at, cursor;
	uint32_t count, n;
};

struct xsave_port {
	int64_t free_at, last_t;
	struct port_stats st;
	uint64_t count;
};

static size_t port_bytes(uint64_t count)
{
	return sizeof(struct xsave_port) + count * sizeof(struct port_slot);
}

/* The ports a state holds: the switch port toward this worker, or every port of the
 * fabric (each worker's copy, fabric.h), or none. */
static struct port *ports_of(const struct xpriv *p, int *n)
{
	*n = p->fab.nports ? p->fab.nports : p->port.cfg.rate ? 1 : 0;
	return p->fab.nports ? p->fab.port : (struct port *)&p->port;
}

static size_t conn_bytes(const struct xpriv *p)
{
	return p->conn ? (size_t)p->nconn * sizeof(*p->conn) + sizeof(p->tcp_st) : 0;
}

static size_t head_bytes(int n, uint32_t txq_count)
{
	return sizeof(struct xsave_head) + (size_t)n * (sizeof(struct net_link) +
	       2 * sizeof(struct xchg_link_stats)) + (size_t)txq_count * sizeof(int64_t);
}

size_t xchg_state_size(const struct xchg *x)
{
	const struct xpriv *p = x->priv;
	int np;
	const struct port *q = ports_of(p, &np);
	size_t t = head_bytes(x->n, p->txq.count);

	for (int i = 0; i < np; i++)
		t += port_bytes(q[i].count);
	return t + conn_bytes(p);
}

static uint8_t *port_save(const struct port *q, uint8_t *o)
{
	struct xsave_port s = { .free_at = q->free_at, .last_t = q->last_t, .st = q->st,
				.count = q->count };

	memcpy(o, &s, sizeof(s));
	o += sizeof(s);
	for (uint32_t k = 0; k < q->count; k++, o += sizeof(struct port_slot))
		memcpy(o, &q->q[(q->head + k) % q->cap], sizeof(struct port_slot));
	return o;
}

/* One port's part of a state at *in, of at most *left bytes: 0 (*in, *left past it) or
 * -EINVAL / -ENOMEM. */
static int port_load(struct port *q, const uint8_t **in, size_t *left)
{
	struct xsave_port s;

	if (*left < sizeof(s))
		return -EINVAL;
	memcpy(&s, *in, sizeof(s));
	if (s.count > UINT32_MAX || *left < port_bytes(s.count))
		return -EINVAL;
	struct port_slot *slots = s.count ? malloc(s.count * sizeof(*slots)) : NULL;

	if (s.count && !slots)
		return -ENOMEM;
	if (s.count)
		memcpy(slots, *in + sizeof(s), s.count * sizeof(*slots));
	free(q->q);
	q->q = slots;
	q->cap = q->count = (uint32_t)s.count;
	q->head = 0;
	q->waiting_bytes = 0;
	for (uint32_t k = 0; k < q->count; k++)
		q->waiting_bytes += slots[k].bytes;
	q->free_at = s.free_at;
	q->last_t = s.last_t;
	q->st = s.st;
	*in += port_bytes(s.count);
	*left -= port_bytes(s.count);
	return 0;
}

/* Every port's part, then the connections: all of len, or -EINVAL. */
static int ports_load(struct xpriv *p, int n, const uint8_t *in, size_t len)
{
	int np;
	struct port *q = ports_of(p, &np);

	for (int i = 0; i < np; i++) {
		int rc = port_load(&q[i], &in, &len);

		if (rc)
			return rc;
	}
	if (len != conn_bytes(p))
		return -EINVAL;
	if (p->conn) {
		memcpy(p->conn, in, (size_t)p->nconn * sizeof(*p->conn));
		memcpy(&p->tcp_st, in + (size_t)p->nconn * sizeof(*p->conn), sizeof(p->tcp_st));
	}
	return 0;
}

void xchg_state_save(const struct xchg *x, void *dst)
{
	const struct xpriv *p = x->priv;
	struct xsave_head h = {
		.clock = x->clock, .bytes_sent = x->bytes_sent, .units_dropped = x->units_dropped,
		.bytes_delivered = x->bytes_delivered, .units_late = x->units_late,
		.free_at = p->txq.free_at, .cursor = p->txq.cursor, .count = p->txq.count,
		.n = (uint32_t)x->n,
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
	int np;
	const struct port *q = ports_of(p, &np);

	for (int i = 0; i < np; i++)
		o = port_save(&q[i], o);
	if (p->conn) {
		memcpy(o, p->conn, (size_t)p->nconn * sizeof(*p->conn));
		memcpy(o + (size_t)p->nconn * sizeof(*p->conn), &p->tcp_st, sizeof(p->tcp_st));
	}
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
	if (h.n != (uint32_t)n || len < head_bytes(n, h.count))
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
	    len < head_bytes(x->n, h.count))
		return -EINVAL;
	int rc = ports_load(p, x->n, in + (head_bytes(x->n, h.count) - sizeof(h)),
			    len - head_bytes(x->n, h.count));

	if (rc)
		return rc;
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
	p->txq.cursor = h.cursor;
	p->txq.head = 0;
	p->txq.count = h.count;
	for (uint32_t k = 0; k < h.count; k++, in += sizeof(int64_t))
		memcpy(&p->txq.fin[k], in, sizeof(int64_t));
	return 0;
}
