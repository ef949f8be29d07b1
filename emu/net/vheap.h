/* emu/net/vheap.h — a min-heap of events in virtual time, for the simulations of the
 * switch ports (port.c), the hosts' fabric (fabric.c) and the tcp transport (tcp.c).
 *
 * Entries carry their order, (t, key), so that a sift compares within the heap's own
 * lines instead of reaching into what they stand for (a cache miss each).  key is the
 * caller's tie order at one instant, val what the entry stands for.  Entries of equal
 * (t, key) come out in an order fixed by the pushes alone, so a caller whose ties can
 * matter gives them distinct keys.
 */
#ifndef EMU_VHEAP_H
#define EMU_VHEAP_H

#include <stdint.h>

struct vheap_ent {
	int64_t t;
	uint64_t key;
	uint64_t val;
};

struct vheap {
	struct vheap_ent *e;
	uint32_t n, cap;
};

/* Room for at least n entries: 0 or -ENOMEM. */
int vheap_reserve(struct vheap *h, uint32_t n);
/* 0 or -ENOMEM (it grows as needed). */
int vheap_push(struct vheap *h, int64_t t, uint64_t key, uint64_t val);
/* The earliest entry (h->n > 0). */
struct vheap_ent vheap_pop(struct vheap *h);
void vheap_free(struct vheap *h);

#endif
