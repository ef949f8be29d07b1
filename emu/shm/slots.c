/* emu/shm/slots.c — at most k workers run at once (see slots.h). */
#include "emu/shm/slots.h"

#include <errno.h>

#include "emu/shm/notify.h"

void slots_init(struct run_slots *s, int k)
{
	atomic_init(&s->free, k);
	atomic_init(&s->waiters, 0);
	atomic_init(&s->seq, 0);
	s->k = k;
}

static int try_take(struct run_slots *s)
{
	int32_t f = atomic_load_explicit(&s->free, memory_order_relaxed);

	while (f > 0)
		if (atomic_compare_exchange_weak_explicit(&s->free, &f, f - 1,
							  memory_order_acquire, memory_order_relaxed))
			return 1;
	return 0;
}

void slots_awake(struct run_slots *s, int member)
{
	if (member >= 0 && member < SLOTS_MEMBERS)
		atomic_fetch_and_explicit(&s->pending[member >> 6], ~(1ULL << (member & 63)),
					  memory_order_seq_cst);
}

void slots_take(struct run_slots *s, int member, struct notify *nt)
{
	int64_t start = -1;

	slots_awake(s, member);

	while (!try_take(s)) {
		_Atomic uint32_t *w = &s->seq;

		atomic_fetch_add_explicit(&s->waiters, 1, memory_order_seq_cst);
		uint32_t seen = atomic_load_explicit(&s->seq, memory_order_seq_cst);

		if (atomic_load_explicit(&s->free, memory_order_seq_cst) > 0) {
			atomic_fetch_sub_explicit(&s->waiters, 1, memory_order_relaxed);
			continue;
		}
		if (start < 0)
			start = notify_now_ns();
		int64_t left = start + SLOTS_FORCE_NS - notify_now_ns();
		int rc = left > 0 ? notify_wait_raw(nt, 1, &w, &seen, left) : -ETIMEDOUT;

		atomic_fetch_sub_explicit(&s->waiters, 1, memory_order_relaxed);
		if (rc == -ETIMEDOUT) {		/* a leaked slot (slots.h): enter in debt */
			atomic_fetch_sub_explicit(&s->free, 1, memory_order_acquire);
			return;
		}
	}
}

void slots_give(struct run_slots *s, int member, struct notify *nt)
{
	/* The giver is awake: a deferral left for it (a stale bit) must not take the wake
	 * of a member that sleeps. */
	slots_awake(s, member);
	atomic_fetch_add_explicit(&s->free, 1, memory_order_seq_cst);
	/* the lowest member pending, one word after the other */
	for (int w = 0, woke = 0; w < SLOTS_WORDS && !woke; w++) {
		uint64_t p = atomic_load_explicit(&s->pending[w], memory_order_seq_cst);

		while (p) {
			uint64_t low = p & -p;

			if (atomic_compare_exchange_weak_explicit(&s->pending[w], &p, p & ~low,
								  memory_order_seq_cst,
								  memory_order_seq_cst)) {
				int m = 64 * w + __builtin_ctzll(low);

				notify_wake(nt, atomic_load_explicit(&s->pend_word[m],
								     memory_order_acquire));
				woke = 1;
				break;
			}
		}
	}
	/* Waiters for a slot are woken even after a member was: that member may have
	 * been deferred while it already slept here (its wait ended and it went for a
	 * slot before it disarmed), and then the wake above found nobody. */
	if (atomic_load_explicit(&s->waiters, memory_order_seq_cst) == 0)
		return;
	atomic_fetch_add_explicit(&s->seq, 1, memory_order_seq_cst);
	notify_wake_one(nt, &s->seq);
}

int slots_defer(struct run_slots *s, int member, _Atomic uint32_t *word)
{
	if (member < 0 || member >= SLOTS_MEMBERS ||
	    atomic_load_explicit(&s->free, memory_order_seq_cst) > 0)
		return 0;
	uint64_t bit = 1ULL << (member & 63);
	_Atomic uint64_t *pw = &s->pending[member >> 6];

	atomic_store_explicit(&s->pend_word[member], word, memory_order_release);
	atomic_fetch_or_explicit(pw, bit, memory_order_seq_cst);
	if (atomic_load_explicit(&s->free, memory_order_seq_cst) <= 0)
		return 1;
	/* a slot came back meanwhile: wake it now, unless that give took the bit (and
	 * wakes it itself) */
	return (atomic_fetch_and_explicit(pw, ~bit, memory_order_seq_cst) & bit) == 0;
}
