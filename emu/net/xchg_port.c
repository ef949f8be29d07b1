/* emu/net/xchg_port.c — the switch port toward the receiver ([topology] shape = switch):
 * every unit that its links delivered in a phase, from every sender, through one
 * drop-tail queue (port.h), resolved here once the phase's messages are all in.
 *
 * The links' model (the sender's NIC queue, latency, jitter, loss: net.h) brings a unit
 * to the switch; the port then decides when it reaches this worker, or drops it.  A unit
 * the port drops is lost as one the link lost: zeroed, its bit cleared; on a reliable
 * link it comes back when its sender's timer runs out (the link's rto, doubling, up to
 * max_retries resends at the port), and a reliable message is ready at its last unit's
 * arrival or when the last resend was given up.  The receiver's deadline then applies to
 * the port's arrival times (xchg_deadline.c).  The port's own schedule is not affected by
 * [event] windows; the links' is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/xchg_impl.h"

/* The wait before the k-th resend of a unit the port dropped, or -1: given up. */
static int64_t port_resend(void *ctx, uint32_t src, uint32_t k)
{
	const struct xpriv *p = ctx;
	const struct net_cfg *c = &p->from[src];

	if (c->transport != TRANSPORT_RELIABLE || (int)k >= c->max_retries)
		return -1;
	return net_rto(c, (int)k);
}

/* Every arrived unit of every peer's message of the phase into p->pu: their number, or
 * -ENOMEM. */
static int64_t gather(struct xchg *x)
{
	struct xpriv *p = x->priv;
	uint32_t n = 0;

	for (int j = 0; j < x->n; j++) {
		const struct xflow *f = &p->in[j];

		if (j == x->id || p->gone[j])
			continue;
		if (n + (uint32_t)f->h.narrived > p->pu_cap) {
			uint32_t cap = 2 * (n + (uint32_t)f->h.narrived);
			struct port_unit *u = realloc(p->pu, (size_t)cap * sizeof(*u));

			if (!u)
				return -ENOMEM;
			p->pu = u;
			p->pu_cap = cap;
		}
		for (int u = 0; u < f->h.nunits; u++) {
			if (!xchg_bit(f->bits, u))
				continue;
			size_t s = (size_t)u * f->h.unit;

			p->pu[n++] = (struct port_unit){ .t = f->times[u], .src = (uint32_t)j,
				.bytes = (uint32_t)(xhdr_unit_end(&f->h, u) - s), .idx = (uint32_t)u };
		}
	}
	return n;
}

/* What the port decided, back into the messages: arrival times, dropped units zeroed. */
static void scatter_back(struct xchg *x, uint32_t n)
{
	struct xpriv *p = x->priv;

	for (uint32_t i = 0; i < n; i++) {
		const struct port_unit *pu = &p->pu[i];
		struct xflow *f = &p->in[pu->src];
		struct xhdr *h = &f->h;
		int u = (int)pu->idx;

		if (pu->out >= 0) {
			f->times[u] = pu->out;
			if (pu->out > h->arrive)
				h->arrive = pu->out;
			continue;
		}
		if (f->zc) {	/* read in place: copy it out to zero the unit */
			memcpy(f->buf, f->zc, h->len);
			f->zc = NULL;
		}
		f->bits[u >> 6] &= ~(1ULL << (u & 63));
		f->times[u] = -1;
		h->narrived--;
		memset(f->buf + (size_t)u * h->unit, 0, pu->bytes);
		if (pu->t > h->arrive)	/* a reliable sender gave it up then */
			h->arrive = pu->t;
	}
}

int xchg_apply_port(struct xchg *x)
{
	struct xpriv *p = x->priv;

	if (!p->port.cfg.rate)
		return 0;
	int64_t n = gather(x);

	if (n < 0)
		return (int)n;
	int rc = port_resolve(&p->port, p->pu, (uint32_t)n, port_resend, p);

	if (rc)
		return rc;
	scatter_back(x, (uint32_t)n);
	return 0;
}

void xchg_port_stats(const struct xchg *x, struct port_stats *out)
{
	const struct xpriv *p = x->priv;

	memset(out, 0, sizeof(*out));
	if (p)
		*out = p->port.st;
}
