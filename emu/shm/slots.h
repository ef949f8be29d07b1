/* emu/shm/slots.h — run slots: at most k workers of a host run at once.
 *
 * With more workers than cores (16 or 64 emulated GPUs on a 2-core box) the kernel
 * time-slices every runnable worker: a step's compute is preempted halfway, its caches
 * are refilled by the next worker's, and a worker woken by a message waits behind
 * others' slices.  A slot is the right to run.  A worker that holds one gives it back
 * whenever it goes to sleep (notify_wait: for a message, for ring space, at the
 * barrier) and takes one again when it wakes, so at most k workers are runnable and a
 * worker, once running, computes until it has to wait.  Slots change only when a worker
 * runs, never what it computes: every result is already independent of scheduling.
 *
 * A counting semaphore in the shared region: free (may go negative, see below),
 * waiters, and seq, the futex word that a giver bumps before it wakes one waiter.  A
 * taker announces itself in waiters, then looks at free again before it sleeps, and a
 * giver looks at waiters after it raised free (both with full fences: a Dekker pair),
 * so no wake is lost.  A process that dies holding a slot would keep it; so that such
 * a leak can cost time and never a hang, a taker that waited SLOTS_FORCE_NS enters
 * anyway, taking free below zero: the next givers then repay the debt before anybody
 * else enters.
 */
#ifndef EMU_SLOTS_H
#define EMU_SLOTS_H

#include <stdatomic.h>
#include <stdint.h>

#define SLOTS_FORCE_NS 1000000000LL	/* far above a step's wait for a slot (64 LeNet
					 * workers on 2 cores: ~50 ms) */

#define SLOTS_MEMBERS 1024		/* members of a lane whose wake-ups can be deferred */
#define SLOTS_WORDS (SLOTS_MEMBERS / 64)

struct run_slots {
	_Alignas(64) _Atomic int32_t free;
	_Atomic uint32_t waiters;
	_Atomic uint32_t seq;		/* futex word */
	int32_t k;			/* slots in all; 0: unlimited (never used) */
	/* members whose wait is over, woken by the next give: bit m % 64 of word m / 64 */
	_Atomic uint64_t pending[SLOTS_WORDS];
	_Atomic(_Atomic uint32_t *) pend_word[SLOTS_MEMBERS];	/* the word each sleeps on */
};

struct notify;

void slots_init(struct run_slots *s, int k);
/* Take a slot, sleeping through nt (its raw wait: notify_wait_raw) while none is free;
 * member: the caller's member number in the lane (-1: none). */
void slots_take(struct run_slots *s, int member, struct notify *nt);
/* Give one back and wake one waiter, if any: a deferred member first (below).  member:
 * the giver's (-1: none). */
void slots_give(struct run_slots *s, int member, struct notify *nt);
/* A waker whose sleeper (member `member` of this lane, sleeping on word) would, once
 * woken, only wait here for a slot that is held: the wake is left to the holder's next
 * give, so the sleeper wakes once, with the slot free, and never preempts the holder
 * just to fall asleep again.  Returns 1 when deferred, 0 when the caller must wake it
 * now (a slot is free, or member is out of range).  Either the waker's second look sees
 * a slot given back (and takes its deferral back) or the giver sees the member pending
 * (full fences on both sides),  and a member that woke by itself clears its own bit in
 * slots_take, and so does a giver in slots_give: a member that holds the slot or goes for it never
 * keeps a bit that would spend a give on a wake nobody waits for while another member
 * sleeps.  (So a member must hold its slot from the start: notify_use_slots takes it.) */
int slots_defer(struct run_slots *s, int member, _Atomic uint32_t *word);
/* Member is awake (its wait is over): no deferred wake is left for it. */
void slots_awake(struct run_slots *s, int member);

#endif
