/* emu/net/port.c — a switch's egress port (port.h): units taken in virtual-time order
 * from a heap, a FIFO of the units that wait, drop-tail at the buffer. */
#include "emu/net/port.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int port_init(struct port *p, const struct port_cfg *cfg)
{
	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	p->free_at = -1;
	p->last_t = 0;
	return 0;
}

void port_free(struct port *p)
{
	free(p->q);
	vheap_free(&p->heap);
	memset(p, 0, sizeof(*p));
}

int64_t port_tx_ns(uint64_t rate, uint64_t bytes)
{
	if (!rate)
		return 0;
	unsigned __int128 bits = (unsigned __int128)bytes * 8 * 1000000000u;

	return (int64_t)((bits + rate - 1) / rate);
}

/* A unit's place in the heap at one instant: (src, idx) */
static uint64_t tie_key(const struct port_unit *u)
{
	return (uint64_t)u->src << 32 | u->idx;
}

/* --- the FIFO of waiting units ------------------------------------------------------- */

static int fifo_push(struct port *p, int64_t start, uint32_t bytes)
{
	if (p->count == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 64;
		struct port_slot *q = malloc((size_t)cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (uint32_t i = 0; i < p->count; i++)
			q[i] = p->q[(p->head + i) % p->cap];
		free(p->q);
		p->q = q;
		p->cap = cap;
		p->head = 0;
	}
	p->q[(p->head + p->count++) % p->cap] = (struct port_slot){ start, bytes, false };
	p->waiting_bytes += bytes;
	return 0;
}

/* A waiting unit stops waiting when its transmission starts; one that starts at t itself
 * still waits for units arriving at t (they come first, port.h). */
static void fifo_advance(struct port *p, int64_t t)
{
	while (p->count && p->q[p->head].start < t) {
		p->waiting_bytes -= p->q[p->head].bytes;
		p->head = (p->head + 1) % p->cap;
		p->count--;
	}
}

static bool full(const struct port *p, uint32_t bytes)
{
	return (p->cfg.buffer_units && p->count + 1 > p->cfg.buffer_units) ||
	       (p->cfg.buffer_bytes && p->waiting_bytes + bytes > p->cfg.buffer_bytes);
}

int port_pass(struct port *p, uint32_t bytes, int64_t t, int64_t *out, bool *marked)
{
	struct port_stats *st = &p->st;

	if (t < p->last_t)	/* reaching it before units already resolved: behind them */
		t = p->last_t;
	p->last_t = t;
	if (!p->cfg.rate) {	/* no port: it passes */
		*out = t + p->cfg.latency;
		*marked = false;
		return 1;
	}
	int64_t start = t;

	fifo_advance(p, t);
	*marked = p->cfg.ecn_bytes && p->waiting_bytes > p->cfg.ecn_bytes;
	if (p->free_at >= t) {	/* busy (one ending at t: still, for arrivals at t) */
		if (full(p, bytes)) {
			st->drops++;
			return 0;
		}
		start = p->free_at;
		if (fifo_push(p, start, bytes))
			return -ENOMEM;
		if (p->count > st->peak_units)
			st->peak_units = p->count;
		if (p->waiting_bytes > st->peak_bytes)
			st->peak_bytes = p->waiting_bytes;
	}
	st->marks += *marked;
	st->units++;
	st->bytes += bytes;
	st->wait_units_ns += (double)(start - t);
	st->wait_bytes_ns += (double)(start - t) * bytes;
	p->free_at = start + port_tx_ns(p->cfg.rate, bytes);
	*out = p->free_at + p->cfg.latency;
	return 1;
}

int port_resolve(struct port *p, struct port_unit *u, uint32_t n, port_resend_fn resend,
		 void *ctx)
{
	struct vheap *h = &p->heap;

	h->n = 0;
	if (vheap_reserve(h, n))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		u[i].attempts = 0;
		u[i].out = -1;
		u[i].marked = false;
		vheap_push(h, u[i].t, tie_key(&u[i]), i);	/* reserved: cannot fail */
	}
	while (h->n) {
		uint32_t i = (uint32_t)vheap_pop(h).val;
		int rc = port_pass(p, u[i].bytes, u[i].t, &u[i].out, &u[i].marked);

		u[i].attempts++;
		if (rc < 0)
			return rc;
		if (rc)
			continue;
		u[i].out = -1;
		int64_t wait = resend ? resend(ctx, u[i].src, u[i].attempts - 1) : -1;

		if (wait >= 0) {
			u[i].t = (u[i].t > p->last_t ? u[i].t : p->last_t) + wait;
			p->st.resends++;
			vheap_push(h, u[i].t, tie_key(&u[i]), i);	/* its own entry: popped */
		}
	}
	return 0;
}
