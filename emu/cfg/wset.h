/* emu/cfg/wset.h — a set of worker ids, 0 to CFG_MAX_WORKERS - 1, as a bitmap: the
 * workers an event covers, a partition's groups, the workers up at a step. */
#ifndef EMU_WSET_H
#define EMU_WSET_H

#include <stdbool.h>
#include <stdint.h>
#include "emu/net/net_cfg.h"

#define WSET_WORDS ((NET_MAX_WORKERS + 63) / 64)

struct wset {
	uint64_t w[WSET_WORDS];
};

static inline bool wset_has(const struct wset *s, int k)
{
	return k >= 0 && k < 64 * WSET_WORDS && (s->w[k >> 6] >> (k & 63) & 1);
}

static inline void wset_add(struct wset *s, int k)
{
	s->w[k >> 6] |= 1ULL << (k & 63);
}

/* Workers 0 .. n-1. */
static inline struct wset wset_all(int n)
{
	struct wset s = { { 0 } };

	for (int i = 0; i < WSET_WORDS && n > 64 * i; i++)
		s.w[i] = n - 64 * i >= 64 ? ~0ULL : (1ULL << (n - 64 * i)) - 1;
	return s;
}

static inline int wset_count(const struct wset *s)
{
	int c = 0;

	for (int i = 0; i < WSET_WORDS; i++)
		c += __builtin_popcountll(s->w[i]);
	return c;
}

/* Members below k. */
static inline int wset_rank(const struct wset *s, int k)
{
	int c = 0;

	for (int i = 0; i < WSET_WORDS && 64 * i < k; i++)
		c += __builtin_popcountll(k - 64 * i >= 64 ? s->w[i] :
					  s->w[i] & ((1ULL << (k - 64 * i)) - 1));
	return c;
}

/* The lowest and the highest member, -1 for none. */
static inline int wset_first(const struct wset *s)
{
	for (int i = 0; i < WSET_WORDS; i++)
		if (s->w[i])
			return 64 * i + __builtin_ctzll(s->w[i]);
	return -1;
}

static inline int wset_top(const struct wset *s)
{
	for (int i = WSET_WORDS - 1; i >= 0; i--)
		if (s->w[i])
			return 64 * i + 63 - __builtin_clzll(s->w[i]);
	return -1;
}

static inline bool wset_empty(const struct wset *s)
{
	return wset_first(s) < 0;
}

/* a | b, a & b, a & ~b */
static inline struct wset wset_or(struct wset a, const struct wset *b)
{
	for (int i = 0; i < WSET_WORDS; i++)
		a.w[i] |= b->w[i];
	return a;
}

static inline struct wset wset_and(struct wset a, const struct wset *b)
{
	for (int i = 0; i < WSET_WORDS; i++)
		a.w[i] &= b->w[i];
	return a;
}

static inline struct wset wset_minus(struct wset a, const struct wset *b)
{
	for (int i = 0; i < WSET_WORDS; i++)
		a.w[i] &= ~b->w[i];
	return a;
}

#endif
