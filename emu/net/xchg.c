/* emu/net/xchg.c — one step of the partitioned parameter-server collective (see
 * xchg.h): encode, scatter, reduce in worker-id order, broadcast, apply (xchg_run).
 * The pieces it runs are in the files xchg_impl.h lists.
 *
 * Network model: the sender runs net_send for each message when the phase starts, in a
 * fixed order (servers/workers id+1, id+2, ... mod N), through one transmit queue per
 * worker (its NIC: scatter messages and replies serialise one after the other), and the
 * resulting arrival times travel in the header.
 */
#include "emu/net/xchg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/net/xchg_impl.h"
#include "emu/shm/inbox.h"
#include "emu/shm/region.h"

/* One's own message or reply: complete, in the units of the [net] default link. */
static void fill_own(const struct xchg *x, struct xmsg *m, const uint8_t *data, size_t len)
{
	const struct xpriv *p = x->priv;

	m->data = data;
	m->len = len;
	m->unit = net_unit_bytes(&p->self_cfg, len);
	m->nunits = net_nunits(&p->self_cfg, len);
	m->narrived = m->nunits;
	m->arrived = p->bits_all;
}

/* Every message of the scatter, encoded (net_send needs the lengths first): 0 or -errno. */
static int encode_all(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
		      size_t len[])
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++) {
		struct xchg_iov *iov = p->iov + (size_t)j * XCHG_MAX_IOV;
		int k = ops->encode(ctx, j, iov);

		if (k < 0 || k > XCHG_MAX_IOV)
			return -EINVAL;
		p->niov[j] = k;
		len[j] = xchg_iov_total(iov, k);
		if (len[j] > p->max_msg) {
			snprintf(x->err, sizeof(x->err), "worker %d: xchg step %lld: message "
				 "for server %d is %zu bytes, more than max_msg %zu", x->id,
				 (long long)step, j, len[j], p->max_msg);
			return -EMSGSIZE;
		}
	}
	return 0;
}

/* One's own scatter message as one piece: gathered into its receive buffer unless it
 * is one piece already. */
static const uint8_t *own_message(struct xchg *x)
{
	struct xpriv *p = x->priv;
	const struct xchg_iov *own = p->iov + (size_t)x->id * XCHG_MAX_IOV;
	uint8_t *buf = p->buf + (size_t)x->id * p->buf_stride;
	size_t off = 0;

	if (p->niov[x->id] == 1)
		return own[0].base;
	for (int i = 0; i < p->niov[x->id]; i++) {
		if (own[i].len)
			memcpy(buf + off, own[i].base, own[i].len);
		off += own[i].len;
	}
	return buf;
}

/* Sends to every peer in the fixed order id+1, id+2, ... (iov(j): the message for j)
 * and receives from each, to completion. */
static int run_phase(struct xchg *x, int64_t step, int phase, uint32_t flags,
		     const struct xchg_iov *(*iov)(struct xchg *x, int j, void *arg), void *arg,
		     const size_t len[])
{
	struct xpriv *p = x->priv;

	for (int k = 1; k < x->n; k++) {
		int j = (x->id + k) % x->n;
		int rc = xchg_start_out(x, j, step, phase, flags, iov(x, j, arg), len[j]);

		if (rc)
			return rc;
		xchg_start_in(x, j);
		if (p->gone[j]) {	/* ours went through the model, is not written */
			p->out[j].stage = ST_DONE;
			xchg_gone_in(x, j);
		}
	}
	/* every peer's message counts once; a peer that is down sends none (its own count
	 * stays as the crash left it, for the process that comes back: inbox.h) */
	if (p->post)
		region_inbox(x->rg, x->id)->target[phase & 1] += (uint32_t)(x->n - 1 - p->ngone);
	xchg_publish(x, step, phase);	/* before any message of the phase is written */
	return xchg_run_flows(x, step, phase);
}

static const struct xchg_iov *scatter_iov(struct xchg *x, int j, void *arg)
{
	return ((struct xpriv *)x->priv)->iov + (size_t)j * XCHG_MAX_IOV;
}

static const struct xchg_iov *reply_iov(struct xchg *x, int j, void *arg)
{
	return arg;
}

/* What arrived in this phase, into p->msg (one's own is data, complete); the flags
 * the peers sent are OR-ed into *flags. */
static void collect(struct xchg *x, const uint8_t *own, size_t own_len, uint32_t *flags)
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++) {
		if (j == x->id) {
			fill_own(x, &p->msg[j], own, own_len);
		} else {
			xchg_fill_msg(&p->msg[j], &p->in[j]);
			*flags |= p->in[j].h.flags;
		}
		/* the payloads' first lines, asked for at once (flows_pass in xchg_flows.c
		 * says why); the core's prefetcher follows each stream from there */
		for (size_t o = 0; o < 256 && o < p->msg[j].len; o += 64)
			__builtin_prefetch(p->msg[j].data + o, 0);
	}
	for (int j = 0; j + 1 < x->n; j++) {
		bool some = p->msg[j + 1].narrived > 0;

		p->msg[j].next = some ? p->msg[j + 1].data : NULL;
		p->msg[j].next_len = some ? p->msg[j + 1].len : 0;
	}
	p->msg[x->n - 1].next = NULL;
	p->msg[x->n - 1].next_len = 0;
}

int xchg_run(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
	     uint32_t flags, uint32_t *flags_out)
{
	struct xpriv *p = x->priv;
	size_t len[NET_MAX_WORKERS], rlen[NET_MAX_WORKERS];
	uint32_t or_flags = flags;
	int rc;

	x->err[0] = 0;
	rc = encode_all(x, step, ops, ctx, len);

	if (rc)
		return rc;
	int scatter = xchg_phases(x, step, 2), bcast = scatter + 1;

	if (scatter < 0)
		return scatter;
	xchg_mark_gone(x, step);
	/* Scatter, then reduce in worker-id order. */
	rc = run_phase(x, step, scatter, flags, scatter_iov, NULL, len);
	if (!rc)
		rc = xchg_apply_port(x, step, scatter);
	if (rc)
		return rc;
	xchg_phase_timeouts(x, step, x->clock);
	xchg_apply_deadline(x, x->clock);
	int64_t t1 = xchg_wait_clock(x, x->clock);

	collect(x, own_message(x), len[x->id], &or_flags);
	size_t reply = ops->reduce(ctx, x->id, p->msg, p->reply, p->max_msg);

	xchg_release_in_place(x);
	if (reply > p->max_msg)
		return -EMSGSIZE;
	x->clock = t1;

	/* Broadcast the reply, carrying this server's OR of the flags it received. */
	struct xchg_iov riov = { p->reply, reply };

	for (int j = 0; j < x->n; j++)
		rlen[j] = reply;
	rc = run_phase(x, step, bcast, or_flags, reply_iov, &riov, rlen);
	if (!rc)
		rc = xchg_apply_port(x, step, bcast);
	if (rc)
		return rc;
	xchg_phase_timeouts(x, step, t1);
	xchg_apply_deadline(x, t1);
	x->clock = xchg_wait_clock(x, t1);

	/* Apply in server order; everybody ends with the OR of every worker's flags. */
	collect(x, p->reply, reply, &or_flags);
	for (int j = 0; j < x->n; j++)
		ops->apply(ctx, j, &p->msg[j]);
	xchg_release_in_place(x);
	if (flags_out)
		*flags_out = or_flags;
	return 0;
}

void xchg_compute(struct xchg *x, int64_t ns)
{
	if (ns > 0)
		x->clock += ns;
}
