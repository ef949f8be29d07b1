/* emu/net/xchg_ring.c — rounds of a ring (xchg.h xchg_ring): in each round every worker
 * sends one message to the next worker and receives one from the previous, as NCCL's
 * ring all-reduce does; nothing goes to or comes from the others.
 *
 * A round is a phase of the exchange (xchg_impl.h) with one flow out and one in: the
 * network model, deadlines and counters are those of the partitioned collective, the
 * other peers' flows are marked none and take no part.  No barrier: a worker waits for
 * its predecessor only, so one may run rounds ahead of its successor (its ring holds two
 * messages; a third waits for space), and its virtual clock is its own.  The flags
 * travel round the ring, each worker sending the OR of its own and all it received.
 */
#include "emu/net/xchg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/net/xchg_impl.h"
#include "emu/shm/inbox.h"
#include "emu/shm/region.h"

/* Only next (sending) and prev (receiving) take part in this round. */
static void others_none(struct xchg *x, int next, int prev)
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++) {
		if (j != next)
			p->out[j].stage = ST_DONE;
		if (j != prev) {
			memset(&p->in[j], 0, sizeof(p->in[j]));
			p->in[j].none = true;
			p->in[j].stage = ST_DONE;
		}
	}
}

static int round_run(struct xchg *x, int64_t step, int phase, int r,
		     const struct xchg_ring_ops *ops, void *ctx, uint32_t *or_flags)
{
	struct xpriv *p = x->priv;
	int next = (x->id + 1) % x->n, prev = (x->id + x->n - 1) % x->n;
	struct xchg_iov *iov = p->iov + (size_t)next * XCHG_MAX_IOV;
	int k = ops->send(ctx, r, iov);

	if (k < 0 || k > XCHG_MAX_IOV)
		return -EINVAL;
	size_t len = xchg_iov_total(iov, k);

	if (len > p->max_msg) {
		snprintf(x->err, sizeof(x->err), "worker %d: xchg step %lld: ring round %d's "
			 "message is %zu bytes, more than max_msg %zu", x->id, (long long)step, r,
			 len, p->max_msg);
		return -EMSGSIZE;
	}
	int rc = xchg_start_out(x, next, step, phase, *or_flags, iov, len);

	if (rc)
		return rc;
	xchg_start_in(x, prev);
	others_none(x, next, prev);
	if (p->gone[next])	/* through the model, lost on the down link, never written */
		p->out[next].stage = ST_DONE;
	if (p->gone[prev])
		xchg_gone_in(x, prev);
	else if (p->post)
		region_inbox(x->rg, x->id)->target[phase & 1]++;
	rc = xchg_run_flows(x, step, phase);
	if (rc)
		return rc;
	xchg_phase_timeouts(x, step, x->clock);
	xchg_apply_deadline(x, x->clock);
	x->clock = xchg_wait_clock(x, x->clock);

	struct xmsg m;

	xchg_fill_msg(&m, &p->in[prev]);
	m.next = NULL;
	m.next_len = 0;
	*or_flags |= p->in[prev].h.flags;
	ops->take(ctx, r, &m);
	xchg_release_in_place(x);
	return 0;
}

int xchg_ring(struct xchg *x, int64_t step, int nrounds, const struct xchg_ring_ops *ops,
	      void *ctx, uint32_t flags, uint32_t *flags_out)
{
	uint32_t or_flags = flags;

	x->err[0] = 0;
	if (nrounds < 0 || nrounds % 2 || nrounds < x->n - 1)
		return -EINVAL;
	if (x->n > 1 && nrounds > 0) {
		int phase = xchg_phases(x, step, nrounds);

		if (phase < 0)
			return phase;
		xchg_mark_gone(x, step);
		for (int r = 0; r < nrounds; r++) {
			int rc = round_run(x, step, phase + r, r, ops, ctx, &or_flags);

			if (rc)
				return rc;
		}
	}
	if (flags_out)
		*flags_out = or_flags;
	return 0;
}
