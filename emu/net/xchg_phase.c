/* emu/net/xchg_phase.c — what the two collectives (xchg.c's partitioned exchange,
 * xchg_ring.c's ring) share: a step's phase numbers, the peers down, a received message
 * as the algorithm reads it (xchg_impl.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/net/xchg_impl.h"

void xchg_fill_msg(struct xmsg *m, const struct xflow *f)
{
	m->data = f->zc ? f->zc : f->buf;
	m->len = f->h.len;
	m->unit = f->h.unit;
	m->nunits = f->h.nunits;
	m->narrived = f->h.narrived;
	m->arrived = f->bits;
}

size_t xchg_iov_total(const struct xchg_iov *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].len;
	return t;
}

int xchg_phases(struct xchg *x, int64_t step, int count)
{
	struct xpriv *p = x->priv;

	if (p->phase_step != step) {
		p->phase_step = step;
		p->phase_next = 0;
	}
	if (p->phase_next + count > XCHG_MAX_PHASES) {
		snprintf(x->err, sizeof(x->err), "worker %d: xchg step %lld: more than %d phases "
			 "in one step", x->id, (long long)step, XCHG_MAX_PHASES);
		return -E2BIG;
	}
	p->phase_next += count;
	return p->phase_next - count;
}

void xchg_gone_in(struct xchg *x, int j)
{
	struct xpriv *p = x->priv;

	p->in[j].h = (struct xhdr){ .src = (uint16_t)j, .unit = 1, .nunits = 1, .narrived = 0 };
	p->in[j].bits[0] = 0;
	p->in[j].stage = ST_DONE;
}

/* Which peers are down for this step's exchange (struct xchg_absence). */
void xchg_mark_gone(struct xchg *x, int64_t step)
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
