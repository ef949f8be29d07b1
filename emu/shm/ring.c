/* emu/shm/ring.c — SPSC byte ring (see ring.h).
 *
 * Lost wake-ups are excluded by a Dekker pair of full fences: the producer stores head,
 * fences, then loads head_waiting; the consumer stores head_waiting, fences, then loads
 * head.  At least one of them sees the other's store: either the producer wakes, or the
 * consumer finds the data and does not sleep.  The kernel's futex compare closes the
 * window between the consumer's check and its sleep.  The same holds for tail.
 * The waker clears the flag it acts on, so a sleeper costs one wake, not one per write
 * while it is being scheduled back in; a sleeper re-arms before every sleep, with a new
 * token, so that a waker delayed between its load and its CAS fails the CAS instead of
 * clearing the newer sleep's flag (its store of head is visible to that newer sleep's
 * check anyway: the newer arm comes after the waker's load in the flag's order).
 */
#include "emu/shm/ring.h"

#include <errno.h>
#include <string.h>
#include <sched.h>

#include "emu/shm/notify.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "futex words are the low halves");

/* Called after the full fence that follows the store of head (tail). */
static inline void wake_if_armed(_Atomic uint32_t *waiting, _Atomic uint32_t *word,
				 struct notify *nt)
{
	uint32_t token = atomic_load_explicit(waiting, memory_order_relaxed);

	if (token && atomic_compare_exchange_strong_explicit(waiting, &token, 0,
							     memory_order_relaxed,
							     memory_order_relaxed))
		notify_wake(nt, word);
}

static inline uint32_t next_token(uint32_t *arms)
{
	if (++*arms == 0)
		*arms = 1;
	return *arms;
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
	r->head_arms = 0;
	r->tail_arms = 0;
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
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);

	return head - atomic_load_explicit(&r->tail, memory_order_relaxed);
}

size_t ring_writable(struct ring *r)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);

	return r->size - (atomic_load_explicit(&r->head, memory_order_relaxed) - tail);
}

size_t ring_write(struct ring *r, const void *src, size_t n, struct notify *nt)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	size_t space = r->size - (head - tail), off = head & (r->size - 1), first;

	if (n > space)
		n = space;
	if (n == 0)
		return 0;
	first = r->size - off < n ? r->size - off : n;
	memcpy(r->data + off, src, first);
	memcpy(r->data, (const uint8_t *)src + first, n - first);
	atomic_store_explicit(&r->head, head + n, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	wake_if_armed(&r->head_waiting, ring_head_word(r), nt);
	return n;
}

size_t ring_read(struct ring *r, void *dst, size_t n, struct notify *nt)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	size_t avail = head - tail, off = tail & (r->size - 1), first;

	if (n > avail)
		n = avail;
	if (n == 0)
		return 0;
	first = r->size - off < n ? r->size - off : n;
	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, n - first);
	atomic_store_explicit(&r->tail, tail + n, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	wake_if_armed(&r->tail_waiting, ring_tail_word(r), nt);
	return n;
}

uint32_t ring_arm_read(struct ring *r)
{
	atomic_store_explicit(&r->head_waiting, next_token(&r->head_arms), memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	return (uint32_t)atomic_load_explicit(&r->head, memory_order_acquire);
}

void ring_disarm_read(struct ring *r)
{
	atomic_store_explicit(&r->head_waiting, 0, memory_order_relaxed);
}

uint32_t ring_arm_write(struct ring *r)
{
	atomic_store_explicit(&r->tail_waiting, next_token(&r->tail_arms), memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	return (uint32_t)atomic_load_explicit(&r->tail, memory_order_acquire);
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
				sched_yield();
			}
		}
	}
	for (;;) {
		uint32_t seen = arm(r);

		if (ready(r))
			break;
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
