/* emu/net/xchg_deadline.c — the receiver's virtual clock: when it gives up on a peer,
 * which units came too late, and where its clock stands after a phase.
 *
 * Virtual clock, per phase: a receiver began waiting at its clock T when the phase
 * started.  On an unreliable link, units arriving after T + timeout of that link are
 * discarded (zeroed, counted late: xchg_apply_deadline, from the arrival times the message
 * carries).  For each peer it is then ready at the last arrival it kept when the message
 * is complete, else at T + timeout (unreliable) or at the last arrival or give-up time
 * (reliable).  Its clock becomes the max over peers (and T).
 *
 * Schedules ([event] sections, net.h): the sender's net_send decides per transmission
 * whether a window is in effect; the receiver takes each phase's timeout of a link from
 * the windows in effect for the step and the time it began to wait (xchg_phase_timeouts).
 */
#include <string.h>

#include "emu/net/xchg_impl.h"

/* The unreliable receiver's deadline: it began waiting at t0 and gives up on a peer at
 * t0 + timeout of that link, so a unit arriving later is as good as lost: zeroed, its
 * bit cleared, counted late.  The message's arrival becomes that of the units kept. */
void xchg_apply_deadline(struct xchg *x, int64_t t0)
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++) {
		struct xflow *f = &p->in[j];
		struct xhdr *h = &f->h;
		struct xchg_link_stats *st = &p->stats_in[j];
		uint64_t kept = 0;

		if (j == x->id || p->gone[j] || f->none)
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
int64_t xchg_giveup_ns(const struct net_cfg *c)
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
void xchg_phase_timeouts(struct xchg *x, int64_t step, int64_t t0)
{
	struct xpriv *p = x->priv;
	struct net_cfg m;

	for (int j = 0; j < x->n; j++) {
		if (!p->nwin_in[j])
			continue;
		net_model_at(&p->from[j], p->win + p->win_in[j], p->nwin_in[j], step, t0, &m);
		p->timeout_in[j] = m.transport != TRANSPORT_UNRELIABLE ? -1 : m.timeout;
		p->giveup_in[j] = xchg_giveup_ns(&m);
	}
	for (int j = 0; j < x->n; j++)
		if (p->gone[j] && !p->in[j].none)
			p->in[j].h.arrive = t0 + (p->timeout_in[j] >= 0 ? 0 : p->giveup_in[j]);
}

/* The receiver's clock after waiting from t0 for every peer's message. */
int64_t xchg_wait_clock(const struct xchg *x, int64_t t0)
{
	const struct xpriv *p = x->priv;
	int64_t t = t0;

	for (int j = 0; j < x->n; j++) {
		const struct xhdr *h = &p->in[j].h;
		int64_t ready = h->arrive;

		if (j == x->id || p->in[j].none)
			continue;
		if (h->narrived < h->nunits && p->timeout_in[j] >= 0 && t0 + p->timeout_in[j] > ready)
			ready = t0 + p->timeout_in[j];
		if (ready > t)
			t = ready;
	}
	return t;
}
