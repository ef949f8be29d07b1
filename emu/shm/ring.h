/* emu/shm/ring.h — single-producer/single-consumer byte ring in shared memory.
 *
 * head counts bytes ever written, tail bytes ever read (free-running uint64, never
 * reset); producer stores head with release, consumer loads it with acquire, and the
 * reverse for tail.  No locks.  The low 32 bits of head and tail double as futex words
 * (see notify.h): a consumer with nothing to read sleeps on head, a producer with no
 * space sleeps on tail, after announcing itself in the matching *_waiting word, so the
 * other side issues a wake only when somebody sleeps.  The waiting word says which
 * value of the word the sleeper saw (ring.c says why that, and not a bare flag, makes a
 * lost wake-up impossible).  A message is a byte stream: framing is the caller's, and
 * messages larger than the ring stream through in pieces.
 *
 * Rewinding: a producer that finds the ring empty starts its write at the ring's
 * beginning rather than where the last one ended, so that a link that carries one
 * message at a time reuses the same few cache lines and pages instead of walking its
 * whole ring (64 workers have 4032 rings of 1 MiB: walked, they are 4 GiB of cold
 * memory).  The bytes skipped are marked by skip_from, the head at which they begin
 * (ring.c says why the consumer can always tell).
 */
#ifndef EMU_RING_H
#define EMU_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct notify;

/* A *_waiting word: 0, or RING_ARMED | the low 32 bits of the word the sleeper saw. */
#define RING_ARMED (1ULL << 32)

struct ring {
	_Alignas(64) _Atomic uint64_t head;	/* producer's line */
	_Atomic uint64_t head_waiting;		/* consumer sleeps on head (see above) */
	_Atomic uint64_t skip_from;		/* producer's: the last rewind's head */
	uint64_t size;		/* data bytes, a power of two; never written after init,
				 * on the line both sides read anyway */
	_Alignas(64) _Atomic uint64_t tail;	/* consumer's line */
	_Atomic uint64_t tail_waiting;		/* producer sleeps on tail */
	/* on a line boundary: a write into an empty ring starts there (it rewinds), so a
	 * piece of up to 64 bytes written alone lies in one cache line */
	_Alignas(64) uint8_t data[];
};

/* Bytes of shared memory for a ring of `size` data bytes (a power of two, at most
 * 1 GiB: head moves by less than two sizes at once, a rewind and a write, so its low 32
 * bits never repeat while a sleeper looks at them). */
size_t ring_footprint(size_t size);
void ring_init(struct ring *r, size_t size);

/* Non-blocking: copy up to n bytes, return how many; wake a sleeping peer via nt. */
size_t ring_write(struct ring *r, const void *src, size_t n, struct notify *nt);
size_t ring_read(struct ring *r, void *dst, size_t n, struct notify *nt);
size_t ring_readable(struct ring *r);
/* Zero-copy reading: the next n bytes in place, when all are readable and do not wrap
 * around the ring's end (else NULL); they stay the consumer's, and the producer cannot
 * overwrite them, until ring_consume(r, n) gives them back (and wakes a producer that
 * sleeps for space, as ring_read does). */
const void *ring_peek(struct ring *r, size_t n);
/* Copy the next n bytes out without consuming them: n, or 0 (nothing copied) when fewer
 * are readable. */
size_t ring_peek_copy(struct ring *r, void *dst, size_t n);

/* Several pieces moved all or nothing, with one publication of head or tail (one fence,
 * one line handed to the peer) instead of one per piece: the total, or 0 when it does not
 * fit (writev) or is not all there (readv). */
struct ring_vec {
	void *base;
	size_t len;
};
size_t ring_writev(struct ring *r, const struct ring_vec *v, int n, struct notify *nt);
size_t ring_readv(struct ring *r, const struct ring_vec *v, int n, struct notify *nt);
void ring_consume(struct ring *r, size_t n, struct notify *nt);
size_t ring_writable(struct ring *r);

/* Futex words (low halves of head and tail, little-endian). */
_Atomic uint32_t *ring_head_word(struct ring *r);
_Atomic uint32_t *ring_tail_word(struct ring *r);

/* Blocking: spin for nt->spin_ns, then sleep through nt until all n bytes moved. */
void ring_write_all(struct ring *r, const void *src, size_t n, struct notify *nt);
void ring_read_all(struct ring *r, void *dst, size_t n, struct notify *nt);

/* For a consumer that sleeps on several rings in one notify_wait: announce the sleep
 * (head_waiting = armed with the head it saw, then a full fence), and get that head
 * word's value to pass as `expect`.  Check ring_readable() after arming and before
 * sleeping; disarm after waking.  The producer side is the same with tail:
 * ring_arm_write/ring_disarm_write.  Without arming, a peer never issues a wake; a wake
 * clears the flag, so arm again before every sleep. */
uint32_t ring_arm_read(struct ring *r);
void ring_disarm_read(struct ring *r);
uint32_t ring_arm_write(struct ring *r);
void ring_disarm_write(struct ring *r);

#endif
