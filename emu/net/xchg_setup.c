/* emu/net/xchg_setup.c — setting an exchange up and taking it down: the links' models
 * and schedules, the bounds every buffer is sized for (units, queue, rings), the modes
 * the rings allow (whole messages, inbox, by reference), one allocation for it all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "emu/net/xchg_impl.h"
#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/shm/ring.h"

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
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
		{ (void **)&p->marks, w * sizeof(uint64_t) },
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
	/* fresh pages, zero, and backed only where touched: with many workers most of the
	 * per-unit arrays are never used */
	p->mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->mem == MAP_FAILED) {
		p->mem = NULL;
		return -ENOMEM;
	}
	p->mem_bytes = total;
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

/* Hosts and switches (fabric.h): the ports, every link's resend rule, and room on the
 * boards for this worker's units of a phase.  0 or -errno, err said. */
static int fabric_setup(struct region *rg, struct xpriv *p, const struct xchg_links *l, int n,
			int id, char *err, size_t errlen)
{
	uint32_t need = (uint32_t)(n - 1) * (uint32_t)p->max_units;

	if (region_bridged(rg)) {
		snprintf(err, errlen, "topology.shape = hosts runs on one machine: its workers "
			 "share their units through this machine's memory, not under MPI");
		return -EINVAL;
	}
	if (!region_board(rg, id) || xchg_board_entries(region_board_bytes(rg)) < need) {
		snprintf(err, errlen, "worker %d: topology.shape = hosts: a phase's %u units do "
			 "not fit the region's board (%u)", id, need,
			 region_board(rg, id) ? xchg_board_entries(region_board_bytes(rg)) : 0);
		return -EINVAL;
	}
	p->resend = calloc((size_t)n * (size_t)n, sizeof(*p->resend));
	if (!p->resend)
		return -ENOMEM;
	for (int s = 0; s < n; s++)
		for (int d = 0; d < n; d++)
			p->resend[s * n + d] = l->resend[s * n + d];
	int rc = fabric_init(&p->fab, &l->fabric, id);

	if (rc == -EINVAL)
		snprintf(err, errlen, "topology.shape = hosts: an invalid topology");
	return rc;
}

static void xchg_free_priv(struct xpriv *p)
{
	if (p) {
		net_txq_free(&p->txq);
		if (p->mem)
			munmap(p->mem, p->mem_bytes);
		free(p->gone);
		free(p->giveup_in);
		free(p->absent);
		free(p->pu);
		port_free(&p->port);
		free(p->fu);
		free(p->resend);
		free(p->conn);
		free(p->route);
		free(p->tu);
		fabric_free(&p->fab);
	}
	free(p);
}

int xchg_init(struct xchg *x, const struct xchg_links *l, struct region *rg,
	      struct notify *nt, int id, size_t max_msg, char *err, size_t errlen)
{
	int n = region_nworkers(rg), rc;
	struct xpriv *p;

	memset(x, 0, sizeof(*x));
	if (errlen)
		err[0] = 0;
	if (n < 1 || n > NET_MAX_WORKERS || id < 0 || id >= n)
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
	p->phase_step = -1;
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
	port_init(&p->port, &l->port);
	if (l->fabric.n) {
		rc = fabric_setup(rg, p, l, n, id, err, errlen);
		if (rc)
			goto err;
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
			snprintf(err, errlen, "worker %d: invalid network model for link %d -> %d",
				 id, id, j);
			goto err;
		}
		p->timeout_in[j] = l->from[j].transport != TRANSPORT_UNRELIABLE ? -1 :
				   l->from[j].timeout;
		p->giveup_in[j] = xchg_giveup_ns(&l->from[j]);
		p->from[j] = l->from[j];
		p->in[j].stage = p->out[j].stage = ST_DONE;
	}
	rc = xchg_tcp_setup(p, l, n, id);
	if (rc)
		goto err;
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
	size_t wire = 128 + payload + payload / 4, r = 256;

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
