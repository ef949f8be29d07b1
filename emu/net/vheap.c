/* emu/net/vheap.c — a min-heap of events in virtual time (vheap.h). */
#include "emu/net/vheap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

static bool before(const struct vheap_ent *a, const struct vheap_ent *b)
{
	return a->t != b->t ? a->t < b->t : a->key < b->key;
}

int vheap_reserve(struct vheap *h, uint32_t n)
{
	if (n <= h->cap)
		return 0;
	uint32_t cap = h->cap ? h->cap : 256;

	while (cap < n)
		cap *= 2;
	struct vheap_ent *e = realloc(h->e, (size_t)cap * sizeof(*e));

	if (!e)
		return -ENOMEM;
	h->e = e;
	h->cap = cap;
	return 0;
}

int vheap_push(struct vheap *h, int64_t t, uint64_t key, uint64_t val)
{
	struct vheap_ent x = { t, key, val };

	if (h->n == h->cap && vheap_reserve(h, h->n + 1))
		return -ENOMEM;
	uint32_t k = h->n++;

	while (k && before(&x, &h->e[(k - 1) / 2])) {
		h->e[k] = h->e[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	h->e[k] = x;
	return 0;
}

struct vheap_ent vheap_pop(struct vheap *h)
{
	struct vheap_ent top = h->e[0], last = h->e[--h->n];
	uint32_t k = 0;

	for (;;) {
		uint32_t c = 2 * k + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->e[c + 1], &h->e[c]))
			c++;
		if (!before(&h->e[c], &last))
			break;
		h->e[k] = h->e[c];
		k = c;
	}
	if (h->n)
		h->e[k] = last;
	return top;
}

void vheap_free(struct vheap *h)
{
	free(h->e);
	h->e = NULL;
	h->n = h->cap = 0;
}
