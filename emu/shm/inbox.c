/* emu/shm/inbox.c — sleep once for the last of n-1 messages (see inbox.h). */
#include "emu/shm/inbox.h"

#include "emu/shm/notify.h"
#include "emu/shm/slots.h"

static int reached(uint32_t count, uint32_t target)
{
	return (int32_t)(count - target) >= 0;
}

void inbox_post(struct inbox *b, int p, struct notify *nt)
{
	uint32_t c = atomic_fetch_add_explicit(&b->count[p], 1, memory_order_seq_cst) + 1;
	uint64_t w = atomic_load_explicit(&b->waiting[p], memory_order_seq_cst);
	struct run_slots *lane = atomic_load_explicit(&b->lane, memory_order_acquire);

	if ((w & INBOX_ARMED) && reached(c, (uint32_t)w) &&
	    atomic_compare_exchange_strong_explicit(&b->waiting[p], &w, 0, memory_order_relaxed,
						    memory_order_relaxed) &&
	    !(lane && slots_defer(lane, b->member, &b->count[p])))
		notify_wake(nt, &b->count[p]);
}

int inbox_reached(struct inbox *b, int p, uint32_t target)
{
	return reached(atomic_load_explicit(&b->count[p], memory_order_acquire), target);
}

void inbox_wait(struct inbox *b, int p, uint32_t target, struct notify *nt)
{
	_Atomic uint32_t *word = &b->count[p];

	while (!inbox_reached(b, p, target)) {
		atomic_store_explicit(&b->waiting[p], INBOX_ARMED | target, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		uint32_t seen = atomic_load_explicit(word, memory_order_acquire);

		if (!reached(seen, target)) {
			if (nt->race_ns > 0)	/* tests: widen the window before the sleep */
				notify_delay_ns(nt->race_ns);
			notify_wait(nt, 1, &word, &seen, -1);
		}
		atomic_store_explicit(&b->waiting[p], 0, memory_order_relaxed);
	}
}
