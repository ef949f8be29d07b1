/* emu/shm/inbox.h — one futex word per worker that counts the messages written whole
 * into its rings, so that a worker waiting for n-1 messages sleeps once, until the last
 * one is in, not once per message.
 *
 * count[p] counts messages of phase parity p (the exchange alternates scatter and
 * broadcast: a peer cannot write the next message of the same parity before this worker
 * has read the current one, inbox_sleep in emu/net/xchg_flows.c says why), so a
 * receiver waits for an absolute target.  The sleep is ring.c's protocol with a target instead of a seen value: the
 * receiver arms waiting[p] = INBOX_ARMED | target, fences, looks at count again and
 * sleeps on it with the value it saw; a sender raises count (a full-fence RMW), loads
 * waiting and wakes only when its message reached the target, clearing the arm with a
 * compare-and-swap.  Either the receiver's second look sees the last message, or its
 * sender sees the arm: no wake is lost, and the n-2 senders before it wake nobody.
 * With run slots, a wake the receiver could not act on (its lane's slot is held) is
 * left to the slot's holder (slots_defer).
 */
#ifndef EMU_INBOX_H
#define EMU_INBOX_H

#include <stdatomic.h>
#include <stdint.h>

struct notify;

#define INBOX_ARMED (1ULL << 32)

struct run_slots;

struct inbox {
	_Alignas(64) _Atomic uint32_t count[2];
	_Atomic uint64_t waiting[2];
	/* the receiver's lane of run slots and its member number there (slots_defer), or
	 * NULL: set by region_join_lane on one host, where the region has the same address
	 * in every process (mapped before fork) */
	_Atomic(struct run_slots *) lane;	/* stored after member (release) */
	int member;
	/* the receiver's own (only its process writes them): the count that completes its
	 * current phase of each parity.  Here, not in the process, so that a process forked
	 * in place of a crashed worker goes on where its predecessor stood. */
	uint32_t target[2];
};

/* Sender: one more message of parity p is whole in the receiver's ring. */
void inbox_post(struct inbox *b, int p, struct notify *nt);
/* Receiver: whether count[p] has reached target (wrapping), and sleep until it has. */
int inbox_reached(struct inbox *b, int p, uint32_t target);
void inbox_wait(struct inbox *b, int p, uint32_t target, struct notify *nt);

#endif
