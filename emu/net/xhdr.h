/* emu/net/xhdr.h — the exchange's wire format, and its decoding by a receiver.
 *
 * One message on a ring: struct xhdr (64 bytes) | the arrived bitmap, ceil(nunits/64)
 * uint64 words | the arrival time of each unit, nunits int64 (virtual ns, -1 lost: the
 * receiver's deadline needs them) | the bytes of the ARRIVED units only, in unit order,
 * in runs of consecutive arrived units; none when the payload goes by reference (ref:
 * every unit arrived, none flipped, and the bytes lie in the sender's outbox, xchg.h).
 * A receiver trusts nothing of it before xhdr_check: the decoding below is what
 * tests/fuzz/fuzz_xhdr.c feeds arbitrary bytes.
 */
#ifndef EMU_XHDR_H
#define EMU_XHDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XHDR_MAGIC 0xE7u

struct xhdr {
	uint16_t src;
	uint8_t phase;
	uint8_t magic;
	uint32_t flags;
	int64_t step;
	uint64_t len;
	uint64_t unit;
	int32_t nunits;
	int32_t narrived;
	int64_t depart;		/* virtual ns: left the sender (after its queue) */
	int64_t arrive;		/* virtual ns: last arrived unit; depart if none */
	uint64_t ref;		/* 0: the payload follows; else it is at byte ref - 1 of the
				 * sender's outbox */
};
_Static_assert(sizeof(struct xhdr) == 64, "the header is part of the wire format");

/* The header's bytes as the network model counts them (bytes_sent, bytes_delivered):
 * what a message's header costs on the emulated wire, fixed when the header in the
 * rings was 56 bytes, so that ref (a detail of the rings, not of the wire) changes no
 * count. */
#define XHDR_WIRE_BYTES 56

/* The alignment of a payload read where it lies (by reference in the sender's outbox, or
 * in place in a ring): the algorithms read floats and 32-bit words from payloads, and an
 * RPS block may start at any float of a model (64 LeNet blocks of 964 and 965 floats:
 * at 8 bytes, a quarter of the messages went through the rings, copied in and out). */
#define XHDR_PAYLOAD_ALIGN 4

/* What a receiver expects of the next header on a ring. */
struct xhdr_expect {
	int peer, phase;
	int64_t step;
	size_t max_msg;		/* bytes */
	int max_units;
	size_t ref_cap;		/* bytes of the sender's outbox a ref may point into
				 * (0: no ref is valid) */
};

/* NULL when h is the message e expects (in sequence, lengths and unit counts that agree
 * and fit the receiver's buffers), else what is wrong with it. */
const char *xhdr_check(const struct xhdr *h, const struct xhdr_expect *e);

/* Bytes of the bitmap that follows a checked header. */
size_t xhdr_bitmap_bytes(const struct xhdr *h);

/* Bytes of the arrival times that follow the bitmap. */
static inline size_t xhdr_times_bytes(const struct xhdr *h)
{
	return (size_t)h->nunits * sizeof(int64_t);
}

/* With the bitmap of a checked header: zero-fills the bytes of the lost units in buf
 * (h->len bytes) and returns NULL, or what is wrong (a count that disagrees with
 * h->narrived). */
const char *xhdr_apply_bitmap(const struct xhdr *h, const uint64_t *bits, uint8_t *buf);

/* The next run of arrived units at or after *next_unit: their bytes [*pos, *end) of the
 * message (possibly empty), *next_unit past it.  false when no unit is left. */
bool xhdr_next_run(const struct xhdr *h, const uint64_t *bits, int *next_unit, size_t *pos,
		   size_t *end);

/* The end (exclusive) of unit u's bytes: the last unit may be shorter. */
size_t xhdr_unit_end(const struct xhdr *h, int u);

#endif
