/* emu/cfg/cfg_scope.c — sections that name sets of workers: [worker A-B] and the link
 * groups [link 0-*], [link *-3], [link 0-7 -> 8-15].
 *
 * Which ids a section names, how specific it is, and, for one worker or one directed
 * link and one key, which section decides: the most specific section that gives the
 * key, the one that names the fewest workers (links).  '*' counts as one worker more
 * than CFG_MAX_WORKERS, so a '*' side is less specific than any range, whatever
 * run.workers is; [net] and the worker table's defaults are the least specific of all.
 * Two sections equally specific that give the same key for the same worker (link) are
 * refused by cfg_validate, so the order of sections never matters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/cfg/cfg_loader.h"

#define BIT(k) ((uint64_t)1 << (k))
#define ID_MAX 100000		/* beyond this an id is malformed, not just too large */

const char *cfg_ids_parse(const char *s, bool range, struct cfg_ids *ids)
{
	char *e;
	long a, b;

	if (*s == '*') {
		*ids = (struct cfg_ids){ .first = 0, .last = CFG_MAX_WORKERS - 1, .any = true };
		return s + 1;
	}
	if (*s < '0' || *s > '9')
		return NULL;
	a = strtol(s, &e, 10);
	b = a;
	if (range && *e == '-' && e[1] >= '0' && e[1] <= '9')
		b = strtol(e + 1, &e, 10);
	if (a > ID_MAX || b > ID_MAX)
		return NULL;
	*ids = (struct cfg_ids){ .first = (int)a, .last = (int)b };
	return e;
}

int cfg_ids_check(const struct cfg_ids *ids, char *err, size_t errlen)
{
	if (ids->any)
		return 0;
	if (ids->first > ids->last) {
		snprintf(err, errlen, "names the empty range %d-%d; expected A-B with A <= B",
			 ids->first, ids->last);
		return -EINVAL;
	}
	if (ids->last >= CFG_MAX_WORKERS) {
		snprintf(err, errlen, "names worker %d; expected worker ids below %d", ids->last,
			 CFG_MAX_WORKERS);
		return -EINVAL;
	}
	return 0;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int cfg_link_sides(const char *s, struct cfg_ids *src, struct cfg_ids *dst)
{
	const char *arrow = strstr(s, "->"), *e;
	char left[64];

	if (!arrow) {
		e = cfg_ids_parse(s, false, src);
		if (!e || *e != '-')
			return -EINVAL;
		e = cfg_ids_parse(e + 1, false, dst);
		return e && !*skip_blanks(e) ? 0 : -EINVAL;
	}
	if ((size_t)(arrow - s) >= sizeof(left))
		return -EINVAL;
	snprintf(left, sizeof(left), "%.*s", (int)(arrow - s), s);
	e = cfg_ids_parse(left, true, src);
	if (!e || *skip_blanks(e))
		return -EINVAL;
	e = cfg_ids_parse(skip_blanks(arrow + 2), true, dst);
	return e && !*skip_blanks(e) ? 0 : -EINVAL;
}

void cfg_link_sides_name(const struct cfg_ids *s, const struct cfg_ids *d, char *buf, size_t n)
{
	char a[16], b[16];

	cfg_ids_name(s, a, sizeof(a));
	cfg_ids_name(d, b, sizeof(b));
	/* a range needs the arrow: 0-7-8 would not say which '-' splits */
	if ((s->any || s->first == s->last) && (d->any || d->first == d->last))
		snprintf(buf, n, "%s-%s", a, b);
	else
		snprintf(buf, n, "%s -> %s", a, b);
}

void cfg_ids_name(const struct cfg_ids *ids, char *buf, size_t n)
{
	if (ids->any)
		snprintf(buf, n, "*");
	else if (ids->first == ids->last)
		snprintf(buf, n, "%d", ids->first);
	else
		snprintf(buf, n, "%d-%d", ids->first, ids->last);
}

int64_t cfg_ids_weight(const struct cfg_ids *ids)
{
	return ids->any ? CFG_MAX_WORKERS + 1 : ids->last - ids->first + 1;
}

/* How many ids a and b share, '*' weighed as in cfg_ids_weight. */
static int64_t ids_shared(const struct cfg_ids *a, const struct cfg_ids *b)
{
	int lo = a->first > b->first ? a->first : b->first;
	int hi = a->last < b->last ? a->last : b->last;

	if (a->any && b->any)
		return cfg_ids_weight(a);
	if (a->any || b->any)
		return cfg_ids_weight(a->any ? b : a);
	return hi >= lo ? hi - lo + 1 : 0;
}

/* --- links ------------------------------------------------------------------------- */

static struct cfg_ids side(int first, int span, bool any)
{
	if (any)
		return (struct cfg_ids){ .first = 0, .last = CFG_MAX_WORKERS - 1, .any = true };
	return (struct cfg_ids){ .first = first, .last = first + span };
}

void cfg_link_ids(const struct cfg_link *lk, struct cfg_ids *src, struct cfg_ids *dst)
{
	*src = side(lk->src, lk->src_span, lk->any & CFG_LINK_ANY_SRC);
	*dst = side(lk->dst, lk->dst_span, lk->any & CFG_LINK_ANY_DST);
}

void cfg_link_set_ids(struct cfg_link *lk, const struct cfg_ids *src,
		      const struct cfg_ids *dst)
{
	lk->src = src->first;
	lk->src_span = src->last - src->first;
	lk->dst = dst->first;
	lk->dst_span = dst->last - dst->first;
	lk->any = (src->any ? CFG_LINK_ANY_SRC : 0) | (dst->any ? CFG_LINK_ANY_DST : 0);
}

void cfg_link_name(const struct cfg_link *lk, char *buf, size_t n)
{
	struct cfg_ids s, d;
	char sides[48];

	cfg_link_ids(lk, &s, &d);
	cfg_link_sides_name(&s, &d, sides, sizeof(sides));
	snprintf(buf, n, "link %s", sides);
}

int64_t cfg_link_weight(const struct cfg_link *lk)
{
	struct cfg_ids s, d;

	cfg_link_ids(lk, &s, &d);
	return cfg_ids_weight(&s) * cfg_ids_weight(&d) - ids_shared(&s, &d);
}

bool cfg_link_covers(const struct cfg_link *lk, int src, int dst)
{
	struct cfg_ids s, d;

	cfg_link_ids(lk, &s, &d);
	return src != dst && cfg_ids_covers(&s, src) && cfg_ids_covers(&d, dst);
}

/* Per key of a table of nkeys: the most specific of the sections that give it.  Called
 * once per covering section, with its weight and its given keys. */
static void take(int i, int64_t weight, uint64_t set, int nkeys, int *win, int *tie,
		 int64_t *best)
{
	for (int k = 0; k < nkeys; k++) {
		if (!(set & BIT(k)))
			continue;
		if (win[k] < 0 || weight < best[k]) {
			win[k] = i;
			tie[k] = -1;
			best[k] = weight;
		} else if (weight == best[k]) {
			tie[k] = i;
		}
	}
}

void cfg_link_winners(const struct cfg *c, int src, int dst, int win[CFG_NNET],
		      int tie[CFG_NNET])
{
	int64_t best[CFG_NNET];

	for (int k = 0; k < CFG_NNET; k++)
		win[k] = tie[k] = -1;
	for (int i = 0; i < c->nlinks; i++) {
		const struct cfg_link *lk = &c->links[i];

		if (lk->set && cfg_link_covers(lk, src, dst))
			take(i, cfg_link_weight(lk), lk->set, CFG_NNET, win, tie, best);
	}
}

void cfg_link_net_from(const struct cfg *c, const int win[CFG_NNET], struct net_cfg *out)
{
	uint64_t given = c->net_set;

	*out = c->net;
	for (int k = 0; k < CFG_NNET; k++) {
		if (win[k] < 0)
			continue;
		memcpy((char *)out + cfg_keys[k].off,
		       (const char *)&c->links[win[k]].net + cfg_keys[k].off, cfg_keys[k].size);
		given |= BIT(k);
	}
	cfg_resolve_net(out, given);
}

void cfg_link_net(const struct cfg *c, int src, int dst, struct net_cfg *out)
{
	int win[CFG_NNET], tie[CFG_NNET];

	cfg_link_winners(c, src, dst, win, tie);
	cfg_link_net_from(c, win, out);
}

/* --- workers ----------------------------------------------------------------------- */

void cfg_worker_name(const struct cfg_worker_section *ws, char *buf, size_t n)
{
	char ids[16];

	cfg_ids_name(&ws->ids, ids, sizeof(ids));
	snprintf(buf, n, "worker %s", ids);
}

void cfg_worker_winners(const struct cfg *c, int w, int win[CFG_NWORKERK],
			int tie[CFG_NWORKERK])
{
	int64_t best[CFG_NWORKERK];

	for (int k = 0; k < CFG_NWORKERK; k++)
		win[k] = tie[k] = -1;
	for (int i = 0; i < c->nworker_sections; i++) {
		const struct cfg_worker_section *ws = &c->worker_sections[i];

		if (cfg_ids_covers(&ws->ids, w))
			take(i, cfg_ids_weight(&ws->ids), ws->set, CFG_NWORKERK, win, tie, best);
	}
}

void cfg_worker_default(struct cfg_worker_model *m)
{
	char why[128];

	memset(m, 0, sizeof(*m));
	for (int k = 0; k < CFG_NWORKERK; k++)
		cfg_key_parse(&cfg_keys[CFG_WK0 + k], m, cfg_keys[CFG_WK0 + k].def, why,
			      sizeof(why));
}

void cfg_resolve_workers(struct cfg *c)
{
	int win[CFG_NWORKERK], tie[CFG_NWORKERK];

	for (int w = 0; w < c->run.workers && w < CFG_MAX_WORKERS; w++) {
		struct cfg_worker_model *m = &c->worker[w];

		cfg_worker_default(m);
		cfg_worker_winners(c, w, win, tie);
		for (int k = 0; k < CFG_NWORKERK; k++) {
			const struct cfg_key *key = &cfg_keys[CFG_WK0 + k];

			if (win[k] >= 0)
				memcpy((char *)m + key->off,
				       (const char *)&c->worker_sections[win[k]].m + key->off,
				       key->size);
		}
	}
}
