/* emu/net/xhdr.c — see xhdr.h. */
#include "emu/net/xhdr.h"

#include <string.h>

#include "emu/net/xchg.h"

const char *xhdr_check(const struct xhdr *h, const struct xhdr_expect *e)
{
	if (h->magic != XHDR_MAGIC || h->src != e->peer || h->phase != e->phase ||
	    h->step != e->step)
		return "out of sequence";
	if (h->len > e->max_msg)
		return "longer than max_msg";
	if (h->unit == 0 || h->nunits < 1 || h->nunits > e->max_units || h->narrived < 0 ||
	    h->narrived > h->nunits)
		return "bad unit counts";
	/* (len <= max_msg: len + unit - 1 cannot wrap unless unit is absurd, and then the
	 * count below is 0 or 1 and must still match) */
	uint64_t need = h->len == 0 ? 1 : h->len / h->unit + (h->len % h->unit != 0);

	if ((uint64_t)h->nunits != need)
		return "units do not cover the length";
	/* a payload by reference is whole, aligned and inside the outbox */
	if (h->ref && (!e->ref_cap || h->narrived != h->nunits ||
		       (h->ref - 1) % XHDR_PAYLOAD_ALIGN ||
		       h->ref - 1 > e->ref_cap || h->len > e->ref_cap - (h->ref - 1)))
		return "bad reference";
	return NULL;
}

size_t xhdr_bitmap_bytes(const struct xhdr *h)
{
	return (size_t)(h->nunits + 63) / 64 * sizeof(uint64_t);
}

size_t xhdr_unit_end(const struct xhdr *h, int u)
{
	/* u < nunits = ceil(len / unit): u * unit < len, and (u + 1) * unit cannot wrap
	 * unless unit itself is near 2^64, where u is 0 */
	uint64_t e = (uint64_t)u * h->unit + h->unit;

	return e < h->len && e >= h->unit ? (size_t)e : (size_t)h->len;
}

const char *xhdr_apply_bitmap(const struct xhdr *h, const uint64_t *bits, uint8_t *buf)
{
	int cnt = 0;

	for (int u = 0; u < h->nunits; u++) {
		if (xchg_bit(bits, u)) {
			cnt++;
		} else {
			size_t s = (size_t)u * h->unit, e = xhdr_unit_end(h, u);

			if (e > s)
				memset(buf + s, 0, e - s);
		}
	}
	return cnt == h->narrived ? NULL : "bitmap disagrees with narrived";
}

bool xhdr_next_run(const struct xhdr *h, const uint64_t *bits, int *next_unit, size_t *pos,
		   size_t *end)
{
	int u = *next_unit, n = h->nunits;

	while (u < n && !xchg_bit(bits, u))
		u++;
	if (u >= n)
		return false;
	*pos = (size_t)u * h->unit;
	while (u < n && xchg_bit(bits, u))
		u++;
	*next_unit = u;
	*end = xhdr_unit_end(h, u - 1);
	return true;
}
