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

void slots_take(struct run_slots *s, struct notify *nt)
{
	int64_t start = -1;

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

void slots_give(struct run_slots *s, struct notify *nt)
{
	atomic_fetch_add_explicit(&s->free, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&s->waiters, memory_order_seq_cst) == 0)
		return;
	atomic_fetch_add_explicit(&s->seq, 1, memory_order_seq_cst);
	notify_wake_one(nt, &s->seq);
}
