/* emu/shm/ring.c — SPSC byte ring (see ring.h).
 *
 * Sleeping without a lost wake-up, for the consumer (the producer's sleep on tail is
 * the mirror image).  The consumer arms: S = head; head_waiting = ARMED | S; full fence;
 * then looks at head again and sleeps on the head word with expect S only if head is
 * still S.  The producer publishes: head = H; full fence; w = head_waiting; and wakes
 * (clearing the flag with a compare-and-swap on w) only if w is armed with S != H.
 *  - The two fences are a Dekker pair: either the consumer's second look sees H (it does
 *    not sleep), or the producer's load sees the arm; then S != H (the consumer never
 *    saw H), the producer wakes, and a consumer not yet queued in the kernel finds the
 *    word != S in the futex compare and does not sleep either.
 *  - S == H means the consumer armed after it had already seen this very data: a wake
 *    would be spent on nothing.  The producer then leaves the flag alone, so that its
 *    next publication (H' != S) wakes the sleeper.  A bare token that the waker always
 *    cleared would lose exactly this wake: a producer delayed between its publication
 *    and its load would clear the flag of a sleep that had consumed its data, and the
 *    next message would find no flag and wake nobody.
 *  - The compare-and-swap clears only the arm it saw: one wake per sleep, and a stale
 *    value cannot clear a newer arm (a newer arm of the same S would have seen H too:
 *    the producer's load read an older arm, so by the fences the newer arm's second
 *    look of head sees H and that sleep does not happen).
 * The sleeper disarms itself after waking.  notify's race_ns, when set (tests only),
 * delays the producer between its publication and its fence and the sleeper between
 * its check and its sleep: the two windows the race needs (tests/test_wakeups.c).
 *
 * Rewinding (ring.h) without the producer ever writing tail, which stays the consumer's
 * alone: a producer that sees tail == head, and head not at the ring's beginning, writes
 * at the next multiple of size instead, and with that write stores skip_from = the old
 * head, before the release of the new head.  A consumer at tail T that
 * sees a head beyond T (acquire) sees skip_from == T exactly when the producer rewound
 * at T: a rewind needs an empty ring, so none can happen while the consumer stands at T
 * with bytes unread, and skip_from only grows, past every tail already left behind.
 * Both sides then count from the effective tail, T rounded up (effective_tail): the
 * consumer's next store of tail jumps the skipped bytes, and the producer never waits
 * for space the skip freed.
 */
#include "emu/shm/ring.h"

#include <errno.h>
#include <string.h>
#include <sched.h>

#include "emu/shm/notify.h"
#include "emu/shm/stream_copy.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "futex words are the low halves");

/* After publishing `now` (the new head or tail): the fence, then a wake if the peer
 * sleeps on a value it saw before this publication. */
static inline void wake_if_armed(_Atomic uint64_t *waiting, _Atomic uint32_t *word, uint64_t now,
				 struct notify *nt)
{
	if (nt && nt->race_ns > 0)	/* (nt may be NULL where nobody can sleep) */
		notify_delay_ns(nt->race_ns);
	atomic_thread_fence(memory_order_seq_cst);
	uint64_t w = atomic_load_explicit(waiting, memory_order_relaxed);

	if ((w & RING_ARMED) && (uint32_t)w != (uint32_t)now &&
	    atomic_compare_exchange_strong_explicit(waiting, &w, 0, memory_order_relaxed,
						    memory_order_relaxed))
		notify_wake(nt, word);
}

/* Arm: announce the value seen, then the fence; returns that value (the futex expect). */
static inline uint32_t arm_waiting(_Atomic uint64_t *waiting, _Atomic uint64_t *counter)
{
	uint32_t seen = (uint32_t)atomic_load_explicit(counter, memory_order_acquire);

	atomic_store_explicit(waiting, RING_ARMED | seen, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	return seen;
}

static inline uint64_t round_up(uint64_t pos, uint64_t size)
{
	return (pos | (size - 1)) + 1;
}

/* Where reading really stands: tail, or past the skipped bytes when the producer
 * rewound at tail.  Call only after an acquire load of head that saw head != tail (the
 * consumer) or from the producer (whose own store skip_from is). */
static inline uint64_t effective_tail(struct ring *r, uint64_t tail)
{
	return atomic_load_explicit(&r->skip_from, memory_order_relaxed) == tail
		? round_up(tail, r->size) : tail;
}

/* Consumer: head (acquire) and the effective tail; head == tail when empty. */
static inline uint64_t consumer_tail(struct ring *r, uint64_t *head)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	*head = atomic_load_explicit(&r->head, memory_order_acquire);
	return *head == tail ? tail : effective_tail(r, tail);
}

size_t ring_footprint(size_t size)
{
	return (sizeof(struct ring) + size + 63) & ~(size_t)63;
}

void ring_init(struct ring *r, size_t size)
{
	atomic_init(&r->head, 0);
	atomic_init(&r->head_waiting, 0);
	atomic_init(&r->tail, 0);
	atomic_init(&r->tail_waiting, 0);
	atomic_init(&r->skip_from, UINT64_MAX);	/* no tail's value */
	r->size = size;
}

_Atomic uint32_t *ring_head_word(struct ring *r)
{
	return (_Atomic uint32_t *)(void *)&r->head;
}

_Atomic uint32_t *ring_tail_word(struct ring *r)
{
	return (_Atomic uint32_t *)(void *)&r->tail;
}

size_t ring_readable(struct ring *r)
{
	uint64_t head, tail = consumer_tail(r, &head);

	return head - tail;
}

size_t ring_writable(struct ring *r)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);

	return r->size - (atomic_load_explicit(&r->head, memory_order_relaxed) -
			  effective_tail(r, tail));
}

/* memcpy, inlined for the pieces of 8 to 64 bytes that most copies here are (an
 * exchange's header, bitmap and times: 64 workers move 8064 messages a step, each in
 * six pieces each way, and a call into libc per piece cost more than its bytes). */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	uint64_t w;

	if (n < 8 || n > 64) {
		memcpy(d, s, n);
		return;
	}
	for (size_t i = 0; i + 8 < n; i += 8) {
		memcpy(&w, s + i, 8);
		memcpy(d + i, &w, 8);
	}
	memcpy(&w, s + n - 8, 8);	/* the last word, overlapping the one before */
	memcpy(d + n - 8, &w, 8);
}

/* Copy n bytes in at stream position pos, or out from it, wrapping at the ring's end;
 * large pieces in past the caches (stream_copy.h says why). */
static void copy_in(struct ring *r, uint64_t pos, const void *src, size_t n)
{
	size_t off = pos & (r->size - 1), first = r->size - off < n ? r->size - off : n;

	if (first > 64)
		stream_copy(r->data + off, src, first);
	else
		copy_bytes(r->data + off, src, first);
	if (n > first)
		stream_copy(r->data, (const uint8_t *)src + first, n - first);
}

static void copy_out(struct ring *r, uint64_t pos, void *dst, size_t n)
{
	size_t off = pos & (r->size - 1), first = r->size - off < n ? r->size - off : n;

	copy_bytes(dst, r->data + off, first);
	if (n > first)
		memcpy((uint8_t *)dst + first, r->data, n - first);
}

/* Producer: where the next write starts (rewinding an empty ring, see above: *from is
 * then the head the rewind skips from, else UINT64_MAX), and the space there. */
static uint64_t write_start(struct ring *r, size_t *space, uint64_t *from)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = effective_tail(r, atomic_load_explicit(&r->tail, memory_order_acquire));

	*from = UINT64_MAX;
	if (tail == head && (head & (r->size - 1))) {
		*from = head;
		head = tail = round_up(head, r->size);
	}
	*space = r->size - (head - tail);
	return head;
}

/* Producer: the bytes up to head are written.  A rewind is recorded only now, with the
 * write it makes room for (a write that does not fit leaves the ring as it was). */
static void publish_head(struct ring *r, uint64_t head, uint64_t from, struct notify *nt)
{
	if (from != UINT64_MAX)
		atomic_store_explicit(&r->skip_from, from, memory_order_relaxed);
	atomic_store_explicit(&r->head, head, memory_order_release);
	wake_if_armed(&r->head_waiting, ring_head_word(r), head, nt);
}

static void publish_tail(struct ring *r, uint64_t tail, struct notify *nt)
{
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	wake_if_armed(&r->tail_waiting, ring_tail_word(r), tail, nt);
}

size_t ring_write(struct ring *r, const void *src, size_t n, struct notify *nt)
{
	size_t space;
	uint64_t from;

	if (n == 0)
		return 0;
	uint64_t head = write_start(r, &space, &from);

	if (n > space)
		n = space;
	if (n == 0)
		return 0;
	copy_in(r, head, src, n);
	publish_head(r, head + n, from, nt);
	return n;
}

size_t ring_writev(struct ring *r, const struct ring_vec *v, int n, struct notify *nt)
{
	size_t total = 0, space;
	uint64_t from;

	for (int i = 0; i < n; i++)
		total += v[i].len;
	if (total == 0)
		return 0;
	uint64_t head = write_start(r, &space, &from), at = head;

	if (total > space)
		return 0;
	for (int i = 0; i < n; i++) {
		copy_in(r, at, v[i].base, v[i].len);
		at += v[i].len;
	}
	publish_head(r, at, from, nt);
	return total;
}

size_t ring_read(struct ring *r, void *dst, size_t n, struct notify *nt)
{
	uint64_t head, tail = consumer_tail(r, &head);

	if (n > head - tail)
		n = head - tail;
	if (n == 0)
		return 0;
	copy_out(r, tail, dst, n);
	publish_tail(r, tail + n, nt);
	return n;
}

size_t ring_readv(struct ring *r, const struct ring_vec *v, int n, struct notify *nt)
{
	uint64_t head, tail = consumer_tail(r, &head), at = tail;
	size_t total = 0;

	for (int i = 0; i < n; i++)
		total += v[i].len;
	if (total == 0 || total > head - tail)
		return 0;
	for (int i = 0; i < n; i++) {
		copy_out(r, at, v[i].base, v[i].len);
		at += v[i].len;
	}
	publish_tail(r, at, nt);
	return total;
}

size_t ring_peek_copy(struct ring *r, void *dst, size_t n)
{
	uint64_t head, tail = consumer_tail(r, &head);

	if (n == 0 || n > head - tail)
		return 0;
	copy_out(r, tail, dst, n);
	return n;
}

const void *ring_peek(struct ring *r, size_t n)
{
	uint64_t head, tail = consumer_tail(r, &head);
	size_t off = tail & (r->size - 1);

	return head - tail >= n && off + n <= r->size ? r->data + off : NULL;
}

void ring_consume(struct ring *r, size_t n, struct notify *nt)
{
	uint64_t head, tail = consumer_tail(r, &head);	/* n bytes peeked: not empty */

	publish_tail(r, tail + n, nt);
}

uint32_t ring_arm_read(struct ring *r)
{
	return arm_waiting(&r->head_waiting, &r->head);
}

void ring_disarm_read(struct ring *r)
{
	atomic_store_explicit(&r->head_waiting, 0, memory_order_relaxed);
}

uint32_t ring_arm_write(struct ring *r)
{
	return arm_waiting(&r->tail_waiting, &r->tail);
}

void ring_disarm_write(struct ring *r)
{
	atomic_store_explicit(&r->tail_waiting, 0, memory_order_relaxed);
}

/* Spin (yielding) for at most nt->spin_ns until ready(r); then sleep on the peer's word. */
static void wait_until(struct ring *r, struct notify *nt, size_t (*ready)(struct ring *),
		       uint32_t (*arm)(struct ring *), void (*disarm)(struct ring *),
		       _Atomic uint32_t *word)
{
	if (nt->spin_ns > 0) {
		int64_t deadline = notify_now_ns() + nt->spin_ns;

		for (unsigned i = 1;; i++) {
			if (ready(r))
				return;
			notify_cpu_relax();
			if (i % 64 == 0) {
				if (notify_now_ns() > deadline)
					break;
				/* The peer may be waiting for this very core (16 workers
				 * on 2 cores): measured under load, a spin that yields
				 * cut the median round trip from 17 to 6 us. */
				nt->yields++;
				sched_yield();
			}
		}
	}
	for (;;) {
		uint32_t seen = arm(r);

		if (ready(r))
			break;
		if (nt->race_ns > 0)	/* tests: widen the window between check and sleep */
			notify_delay_ns(nt->race_ns);
		notify_wait(nt, 1, &word, &seen, -1);
	}
	disarm(r);
}

/* Chunks of a quarter ring let producer and consumer copy at the same time. */
static size_t chunk(const struct ring *r, size_t n)
{
	size_t c = r->size / 4 > 4096 ? r->size / 4 : r->size;

	return n < c ? n : c;
}

void ring_write_all(struct ring *r, const void *src, size_t n, struct notify *nt)
{
	const uint8_t *p = src;

	while (n > 0) {
		size_t k = ring_write(r, p, chunk(r, n), nt);

		if (k == 0) {
			wait_until(r, nt, ring_writable, ring_arm_write, ring_disarm_write,
				   ring_tail_word(r));
			continue;
		}
		p += k;
		n -= k;
	}
}

void ring_read_all(struct ring *r, void *dst, size_t n, struct notify *nt)
{
	uint8_t *p = dst;

	while (n > 0) {
		size_t k = ring_read(r, p, n, nt);

		if (k == 0) {
			wait_until(r, nt, ring_readable, ring_arm_read, ring_disarm_read,
				   ring_head_word(r));
			continue;
		}
		p += k;
		n -= k;
	}
}
