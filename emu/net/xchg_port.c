/* emu/net/xchg_port.c — what the links delivered, through the switches
 * ([topology] shape = switch: port.h; shape = hosts: fabric.h), resolved once a phase's
 * messages are all in.
 *
 * The links' model (the sender's queue, latency, jitter, loss: net.h) brings a unit to
 * the first port; the ports then decide when it reaches its worker, or drop it.  A unit
 * a port drops is lost as one the link lost: zeroed, its bit cleared; on a reliable
 * link it comes back when its sender's timer runs out (the link's rto, doubling, up to
 * max_retries resends), and a reliable message is ready at its last unit's arrival or
 * when the last resend was given up.  The receiver's deadline then applies to the
 * ports' arrival times (xchg_deadline.c).  [event] windows change the links, not the
 * ports.
 *
 * With a switch, the port toward this worker carries only units sent to it: this worker
 * has them all.  With hosts, ports carry units between others too, so every worker puts
 * the units its links delivered on its board (the region's, one half per phase parity)
 * before it writes any message of the phase, and every worker reads every board: a
 * message from a peer is in only after the peer published, so the boards of the phase
 * are complete when its messages are.  A board half is not written again before every
 * peer is through the phase (the next phase of its parity comes after their replies).
 *
 * With transport = tcp (tcp.h), the receiver simulates its senders' connections through
 * its port.  A tcp link sends every unit's bytes (the transport repairs what the link
 * loses); a unit the link lost carries the time it would have reached the port as
 * -2 - t, so that the simulation sends it, loses it and sends it again.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/xchg_impl.h"
#include "emu/shm/region.h"

struct board_entry {
	int64_t t;
	uint32_t bytes, idx;
	uint16_t dst, pad[3];
};

struct board_half {
	_Alignas(64) _Atomic uint64_t seq;	/* step * XCHG_MAX_PHASES + phase + 1 once published */
	uint64_t count;
	struct board_entry e[];
};

static uint64_t board_seq(int64_t step, int phase)
{
	return (uint64_t)step * XCHG_MAX_PHASES + (uint64_t)phase + 1;
}

/* A half of a board of board_bytes: 64-byte aligned, the second right after the first. */
static size_t half_bytes(size_t board_bytes)
{
	return board_bytes / 2 & ~(size_t)63;
}

static struct board_half *board(struct xchg *x, int worker, int phase)
{
	uint8_t *b = region_board(x->rg, worker);

	return (struct board_half *)(b + (size_t)(phase & 1) * half_bytes(region_board_bytes(x->rg)));
}

/* Entries a board half holds, for xchg_setup.c's check. */
uint32_t xchg_board_entries(size_t board_bytes)
{
	size_t half = half_bytes(board_bytes);

	return half > sizeof(struct board_half) ?
	       (uint32_t)((half - sizeof(struct board_half)) / sizeof(struct board_entry)) : 0;
}

void xchg_publish(struct xchg *x, int64_t step, int phase)
{
	struct xpriv *p = x->priv;

	if (!p->fab.nports)
		return;
	struct board_half *b = board(x, x->id, phase);
	uint64_t k = 0;

	for (int j = 0; j < x->n; j++) {
		const struct xflow *f = &p->out[j];

		if (j == x->id || p->gone[j])
			continue;
		for (int u = 0; u < f->h.nunits; u++)
			if (xchg_bit(f->bits, u))
				b->e[k++] = (struct board_entry){ .t = f->times[u], .idx = (uint32_t)u,
					.bytes = (uint32_t)(xhdr_unit_end(&f->h, u) - (size_t)u * f->h.unit),
					.dst = (uint16_t)j };
	}
	b->count = k;
	atomic_store_explicit(&b->seq, board_seq(step, phase), memory_order_release);
}

/* The wait before the k-th resend of a unit on link src -> dst, or -1: given up. */
static int64_t resend_wait(const struct xchg_resend *r, uint32_t k)
{
	if (!r->reliable || (int)k >= r->max_retries)
		return -1;
	return net_backoff(r->rto, r->rto_max, (int)k);
}

static int64_t port_resend(void *ctx, uint32_t src, uint32_t k)
{
	const struct xpriv *p = ((const struct xchg *)ctx)->priv;
	struct xchg_resend r = xchg_resend_of(&p->from[src]);

	return resend_wait(&r, k);
}

static int64_t fabric_resend(void *ctx, int src, int dst, uint32_t k)
{
	const struct xchg *x = ctx;
	const struct xpriv *p = x->priv;

	return resend_wait(&p->resend[(size_t)src * (size_t)x->n + (size_t)dst], k);
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t each)
{
	if (need <= *cap)
		return 0;
	void *a = realloc(*arr, (size_t)need * 2 * each);

	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = need * 2;
	return 0;
}

/* Unit u of peer src's message: at this worker at out, or (out < 0) dropped, its last
 * pass at last (a reliable sender gave it up then). */
static void apply_unit(struct xchg *x, int src, int u, uint32_t bytes, int64_t out, int64_t last)
{
	struct xflow *f = &((struct xpriv *)x->priv)->in[src];
	struct xhdr *h = &f->h;

	if (out >= 0) {
		f->times[u] = out;
		if (out > h->arrive)
			h->arrive = out;
		return;
	}
	if (f->zc) {	/* read in place: copy it out to zero the unit */
		memcpy(f->buf, f->zc, h->len);
		f->zc = NULL;
	}
	f->bits[u >> 6] &= ~(1ULL << (u & 63));
	f->times[u] = -1;
	h->narrived--;
	memset(f->buf + (size_t)u * h->unit, 0, bytes);
	if (last > h->arrive)
		h->arrive = last;
}

void xchg_tcp_units(const struct net_link *l, struct xflow *f, const uint64_t *marks)
{
	struct xhdr *h = &f->h;
	int64_t prev = h->depart + l->cfg.latency, tx;

	for (int u = 0; u < h->nunits; u++) {
		tx = net_serialise_ns(l, xhdr_unit_end(h, u) - (size_t)u * h->unit);
		if (xchg_bit(f->bits, u)) {
			prev = f->times[u];
			if (xchg_bit(marks, u))
				f->times[u] |= XCHG_TCP_MARKED;
			continue;
		}
		prev += tx;	/* one unit after the one before it */
		f->times[u] = -2 - prev;
		f->bits[u >> 6] |= 1ULL << (u & 63);
		h->narrived++;
	}
	if (h->nunits > 1 || h->narrived)
		h->arrive = prev > h->arrive ? prev : h->arrive;
}

/* A new connection on a link of rule r, its ACKs ack_delay on their way back. */
static struct tcp_conn conn_of(const struct xchg_resend *r, int64_t ack_delay)
{
	struct tcp_conn c = {
		.tcp = r->tcp, .cc = r->cc == CC_DCTCP ? TCP_DCTCP : TCP_NEWRENO,
		.init_cwnd = (uint32_t)r->init_cwnd, .mss = (uint32_t)r->mtu,
		.rto_init = r->rto, .rto_min = r->rto_min, .rto_max = r->rto_max,
		.granularity = TCP_GRANULARITY, .max_retries = r->max_retries,
		.reliable = r->reliable, .rate = (uint64_t)(r->bandwidth + 0.5),
		.owd = r->latency, .ack_delay = ack_delay };

	tcp_conn_start(&c);
	return c;
}

/* Hosts: every link's connection, every worker simulating all of them alike (the fabric
 * is set up).  Its ACKs take the way back without queueing: the reverse link's latency
 * and the ports' latencies. */
static int tcp_fabric_setup(struct xpriv *p, const struct xchg_links *l, int n)
{
	bool any = false;

	for (int s = 0; s < n; s++)
		for (int d = 0; d < n; d++)
			any |= s != d && l->resend[s * n + d].tcp;
	if (!any)
		return 0;
	p->nconn = (uint32_t)n * (uint32_t)n;
	p->conn = calloc(p->nconn, sizeof(*p->conn));
	p->route = calloc(p->nconn, sizeof(*p->route));
	if (!p->conn || !p->route)
		return -ENOMEM;
	for (int s = 0; s < n; s++)
		for (int d = 0; d < n; d++) {
			struct tcp_route *rt = &p->route[s * n + d];

			if (s == d)
				continue;
			p->conn[s * n + d] = conn_of(&l->resend[s * n + d], l->resend[d * n + s].latency +
						     fabric_path_latency(&p->fab, s, d));
			rt->npath = (uint8_t)fabric_path(&p->fab, s, d, rt->path);
		}
	return 0;
}

int xchg_tcp_setup(struct xpriv *p, const struct xchg_links *l, int n, int id)
{
	bool any = false;

	if (p->fab.nports)
		return tcp_fabric_setup(p, l, n);
	for (int j = 0; j < n; j++)
		any |= j != id && l->from[j].transport == TRANSPORT_TCP;
	if (!any)
		return 0;
	p->nconn = (uint32_t)n;
	p->conn = calloc((size_t)n, sizeof(*p->conn));
	if (!p->conn)
		return -ENOMEM;
	for (int j = 0; j < n; j++) {
		struct xchg_resend r = xchg_resend_of(&l->from[j]);

		/* back: this worker's link to the switch, the switch's port to j */
		p->conn[j] = conn_of(&r, l->to[j].latency + l->port.latency);
	}
	return 0;
}

/* A unit of a message as the tcp simulation takes it: t as xchg_tcp_units wrote it. */
static struct tcp_unit tcp_unit_of(int64_t t, uint32_t bytes, uint32_t idx, uint32_t conn)
{
	return (struct tcp_unit){ .t = t <= -2 ? -2 - t : t & ~XCHG_TCP_MARKED, .idx = idx,
				  .bytes = bytes, .src = conn, .lost_on_link = t <= -2,
				  .marked_on_link = t >= 0 && (t & XCHG_TCP_MARKED) };
}

/* A switch with tcp links into this worker: every sender's message through the port,
 * the tcp ones in their connections. */
static int through_tcp(struct xchg *x)
{
	struct xpriv *p = x->priv;
	uint32_t n = 0;

	for (int j = 0; j < x->n; j++) {
		const struct xflow *f = &p->in[j];

		if (j == x->id || p->gone[j])
			continue;
		if (grow((void **)&p->tu, &p->tu_cap, n + (uint32_t)f->h.nunits, sizeof(*p->tu)))
			return -ENOMEM;
		for (int u = 0; u < f->h.nunits; u++)
			if (xchg_bit(f->bits, u))	/* else not tcp: lost on its link */
				p->tu[n++] = tcp_unit_of(f->times[u],
					(uint32_t)(xhdr_unit_end(&f->h, u) - (size_t)u * f->h.unit),
					(uint32_t)u, (uint32_t)j);
	}
	int rc = tcp_resolve(&p->port, NULL, p->conn, p->tu, n, &p->tcp_st);

	for (uint32_t i = 0; !rc && i < n; i++)
		apply_unit(x, (int)p->tu[i].src, (int)p->tu[i].idx, p->tu[i].bytes, p->tu[i].out,
			   p->tu[i].t);
	return rc;
}

/* A switch: the units sent to this worker, through the port toward it. */
static int through_port(struct xchg *x)
{
	struct xpriv *p = x->priv;
	uint32_t n = 0;

	for (int j = 0; j < x->n; j++) {
		const struct xflow *f = &p->in[j];

		if (j == x->id || p->gone[j])
			continue;
		if (grow((void **)&p->pu, &p->pu_cap, n + (uint32_t)f->h.narrived, sizeof(*p->pu)))
			return -ENOMEM;
		for (int u = 0; u < f->h.nunits; u++)
			if (xchg_bit(f->bits, u))
				p->pu[n++] = (struct port_unit){ .t = f->times[u], .src = (uint32_t)j,
					.bytes = (uint32_t)(xhdr_unit_end(&f->h, u) - (size_t)u * f->h.unit),
					.idx = (uint32_t)u };
	}
	int rc = port_resolve(&p->port, p->pu, n, port_resend, x);

	for (uint32_t i = 0; !rc && i < n; i++)
		apply_unit(x, (int)p->pu[i].src, (int)p->pu[i].idx, p->pu[i].bytes, p->pu[i].out,
			   p->pu[i].t);
	return rc;
}

/* Hosts: every worker's board of the phase, checked. */
static const struct board_half *phase_board(struct xchg *x, int s, int64_t step, int phase)
{
	const struct board_half *b = board(x, s, phase);

	if (atomic_load_explicit(&b->seq, memory_order_acquire) == board_seq(step, phase))
		return b;
	snprintf(x->err, sizeof(x->err), "worker %d: xchg step %lld: worker %d's units of the "
		 "phase are not on its board", x->id, (long long)step, s);
	return NULL;
}

/* Hosts: every worker's units of the phase, from the boards, through the fabric; with
 * tcp links, every link's connection along its route (each worker simulates them all,
 * as the ports they share make every connection's fate depend on the others'). */
static int through_fabric(struct xchg *x, int64_t step, int phase)
{
	struct xpriv *p = x->priv;
	uint32_t n = 0;

	for (int s = 0; s < x->n; s++) {
		if (s != x->id && p->gone[s])
			continue;
		const struct board_half *b = phase_board(x, s, step, phase);

		if (!b)
			return -EPROTO;
		if (p->conn ? grow((void **)&p->tu, &p->tu_cap, n + (uint32_t)b->count,
				   sizeof(*p->tu)) :
			      grow((void **)&p->fu, &p->fu_cap, n + (uint32_t)b->count,
				   sizeof(*p->fu)))
			return -ENOMEM;
		for (uint64_t k = 0; k < b->count; k++) {
			const struct board_entry *e = &b->e[k];

			if (p->gone[e->dst] && e->dst != x->id)
				continue;	/* never written: it is lost on its down link */
			if (p->conn)
				p->tu[n++] = tcp_unit_of(e->t, e->bytes, e->idx,
							 (uint32_t)s * (uint32_t)x->n + e->dst);
			else
				p->fu[n++] = (struct fabric_unit){ .t = e->t, .bytes = e->bytes,
					.src = (uint16_t)s, .dst = e->dst, .idx = e->idx };
		}
	}
	if (p->conn) {
		int rc = tcp_resolve(p->fab.port, p->route, p->conn, p->tu, n, &p->tcp_st);

		for (uint32_t i = 0; !rc && i < n; i++)
			if (p->tu[i].src % (uint32_t)x->n == (uint32_t)x->id)
				apply_unit(x, (int)(p->tu[i].src / (uint32_t)x->n), (int)p->tu[i].idx,
					   p->tu[i].bytes, p->tu[i].out, p->tu[i].t);
		return rc;
	}
	int rc = fabric_resolve(&p->fab, p->fu, n, fabric_resend, x);

	for (uint32_t i = 0; !rc && i < n; i++)
		if (p->fu[i].dst == x->id)
			apply_unit(x, p->fu[i].src, (int)p->fu[i].idx, p->fu[i].bytes, p->fu[i].out,
				   p->fu[i].t);
	return rc;
}

int xchg_apply_port(struct xchg *x, int64_t step, int phase)
{
	struct xpriv *p = x->priv;

	if (p->fab.nports)
		return through_fabric(x, step, phase);
	if (p->conn)
		return through_tcp(x);
	return p->port.cfg.rate ? through_port(x) : 0;
}

bool xchg_port_stats(const struct xchg *x, int k, char *name, int len, struct port_stats *out)
{
	const struct xpriv *p = x->priv;

	memset(out, 0, sizeof(*out));
	if (!p)
		return false;
	if (!p->fab.nports) {	/* a switch: as hosts of one GPU each, the port toward it */
		if (k || !p->port.cfg.rate)
			return false;
		snprintf(name, (size_t)len, "host%d.down", x->id);
		*out = p->port.st;
		return true;
	}
	const struct fabric *f = &p->fab;
	int host = fabric_host(f, x->id), leaf = fabric_leaf(f, x->id);
	bool host_first = x->id == host * f->cfg.gpus_per_host;
	bool leaf_first = f->leaves > 1 && x->id == leaf * f->cfg.hosts_per_leaf *
			  f->cfg.gpus_per_host;
	int ports[5], np = 0;

	ports[np++] = fabric_port(f, FAB_GPU_IN, x->id);
	if (host_first) {
		ports[np++] = fabric_port(f, FAB_HOST_UP, host);
		ports[np++] = fabric_port(f, FAB_HOST_DOWN, host);
	}
	if (leaf_first) {
		ports[np++] = fabric_port(f, FAB_LEAF_UP, leaf);
		ports[np++] = fabric_port(f, FAB_LEAF_DOWN, leaf);
	}
	if (k >= np)
		return false;
	fabric_port_name(f, ports[k], name, len);
	*out = f->port[ports[k]].st;
	return true;
}
