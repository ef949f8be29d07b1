/* tests/fuzz/fuzz_xhdr.c — libFuzzer target: a receiver decoding one exchange message
 * (emu/net/xhdr.h) from bytes a peer wrote, as xchg_wire.c does: the header, checked against
 * what it expects; the bitmap, applied to a buffer of exactly the message's length; the
 * arrival times, skipped; the runs of arrived units, each copied into it.  Every write must stay inside the buffer
 * (ASan), runs must move forward and lie within the message, and a header that passes
 * the check must agree with itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/xhdr.h"

#define MAX_MSG (1 << 16)
#define MAX_UNITS 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct xhdr_expect e = { .peer = 3, .phase = 1, .step = 42,
					      .max_msg = MAX_MSG, .max_units = MAX_UNITS };
	struct xhdr h = { 0 };
	uint64_t bits[(MAX_UNITS + 63) / 64] = { 0 };
	size_t off = size < sizeof(h) ? size : sizeof(h), nb;

	memcpy(&h, data, off);
	if (xhdr_check(&h, &e))
		return 0;
	if (h.len > MAX_MSG || h.nunits < 1 || h.nunits > MAX_UNITS || h.narrived > h.nunits)
		abort();	/* the check let through what it promises to refuse */
	nb = xhdr_bitmap_bytes(&h);
	if (nb > sizeof(bits))
		abort();
	memcpy(bits, data + off, size - off < nb ? size - off : nb);
	off += size - off < nb ? size - off : nb;
	/* the units' arrival times: only compared by the receiver, never used as indices */
	size_t tb = xhdr_times_bytes(&h);

	if (tb != (size_t)h.nunits * 8)
		abort();
	off += size - off < tb ? size - off : tb;

	uint8_t *buf = malloc(h.len ? h.len : 1);	/* exactly the message: ASan sees past it */
	memset(buf, 0xAA, h.len);
	if (!xhdr_apply_bitmap(&h, bits, buf)) {
		int next = 0;
		size_t pos, end, last = 0, total = 0;

		while (xhdr_next_run(&h, bits, &next, &pos, &end)) {
			if (pos < last || end < pos || end > h.len || next > h.nunits)
				abort();
			size_t k = end - pos, have = size - off < k ? size - off : k;

			memcpy(buf + pos, data + off, have);
			off += have;
			total += k;
			last = end;
		}
		if (total > h.len)
			abort();
	}
	free(buf);
	return 0;
}
