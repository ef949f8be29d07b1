/* emu/cfg/cfg_validate_sections.c — the checks of the sections that name sets of
 * workers, [link ...] and [worker ...], once run.workers is known: every id they name
 * exists, no two sections equally specific give the same key different values for the
 * same link or worker (the order of sections never decides), and worker keys that
 * cannot act are named.  Then c->worker[] is resolved.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "emu/cfg/cfg_loader.h"
#include "emu/net/dist.h"

/* "line 5" or "argument 4": where the other of two sections said it. */
static void loc_name(loc_t loc, char *buf, size_t n)
{
	if (loc > 0)
		snprintf(buf, n, "line %d", loc);
	else
		snprintf(buf, n, "argument %d", -loc);
}

/* The largest id ids names, -1 for '*'. */
static int ids_max(const struct cfg_ids *ids)
{
	return ids->any ? -1 : ids->last;
}

static int check_workers_named(struct loader *L, loc_t loc, const char *name, int w)
{
	const struct cfg *c = L->c;

	if (w < c->run.workers)
		return 0;
	return cfg_fail(L, loc, "[%s] names worker %d, but run.workers = %d; expected worker ids "
			"0 to %d", name, w, c->run.workers, c->run.workers - 1);
}

/* Every section that names a worker beyond run.workers, each reported. */
static int check_ids_exist(struct loader *L)
{
	const struct cfg *c = L->c;
	char name[64];
	int r = 0;

	for (int i = 0; i < c->nlinks; i++) {
		struct cfg_ids s, d;
		int w;

		cfg_link_ids(&c->links[i], &s, &d);
		w = ids_max(&s) > ids_max(&d) ? ids_max(&s) : ids_max(&d);
		cfg_link_name(&c->links[i], name, sizeof(name));
		if (check_workers_named(L, L->link_loc[i], name, w))
			r = -EINVAL;
	}
	for (int i = 0; i < c->nworker_sections; i++) {
		cfg_worker_name(&c->worker_sections[i], name, sizeof(name));
		if (check_workers_named(L, L->wsect_loc[i], name,
					ids_max(&c->worker_sections[i].ids)))
			r = -EINVAL;
	}
	return r;
}

/* Sections a and b, equally specific, give key different values for what (a link, a
 * worker): the message names the one given later first, at its line. */
static int tie(struct loader *L, const char *a, loc_t la, const char *b, loc_t lb,
	       const char *key, const char *what, const char *fewer, const char *decide)
{
	char other[32];

	if (cfg_loc_later(la, lb) != la)
		return tie(L, b, lb, a, la, key, what, fewer, decide);
	loc_name(lb, other, sizeof(other));
	return cfg_fail(L, la, "[%s] and [%s] (%s) set %s differently for %s and neither covers "
			"fewer %s; expected a more specific section to decide, such as [%s]", a, b,
			other, key, what, fewer, decide);
}

/* Of the link sections as specific as win that cover src -> dst and give key k, one with
 * another value than win's, or -1 (sections that agree decide together). */
static int link_disagrees(const struct cfg *c, int src, int dst, int k, int win)
{
	const struct cfg_key *key = &cfg_keys[k];
	const char *v = (const char *)&c->links[win].net + key->off;
	int64_t w = cfg_link_weight(&c->links[win]);

	for (int i = 0; i < c->nlinks; i++) {
		const struct cfg_link *lk = &c->links[i];

		if ((lk->set & (uint64_t)1 << k) && cfg_link_weight(lk) == w &&
		    cfg_link_covers(lk, src, dst) &&
		    memcmp((const char *)&lk->net + key->off, v, key->size))
			return i;
	}
	return -1;
}

static int check_link_ties(struct loader *L)
{
	const struct cfg *c = L->c;
	int win[CFG_NNET], ties[CFG_NNET];

	if (!c->nlinks)
		return 0;
	for (int src = 0; src < c->run.workers; src++) {
		for (int dst = 0; dst < c->run.workers; dst++) {
			char a[64], b[64], what[48], decide[32];
			int o;

			if (src == dst)
				continue;
			cfg_link_winners(c, src, dst, win, ties);
			for (int k = 0; k < CFG_NNET; k++) {
				int w = win[k];

				if (ties[k] < 0 || (o = link_disagrees(c, src, dst, k, w)) < 0)
					continue;
				cfg_link_name(&c->links[w], a, sizeof(a));
				cfg_link_name(&c->links[o], b, sizeof(b));
				snprintf(what, sizeof(what), "the link %d -> %d", src, dst);
				snprintf(decide, sizeof(decide), "link %d-%d", src, dst);
				return tie(L, a, L->link_key_loc[w][k], b, L->link_key_loc[o][k],
					   cfg_keys[k].name, what, "links", decide);
			}
		}
	}
	return 0;
}

/* As link_disagrees, for worker w and worker key k. */
static int worker_disagrees(const struct cfg *c, int w, int k, int win)
{
	const struct cfg_key *key = &cfg_keys[CFG_WK0 + k];
	const char *v = (const char *)&c->worker_sections[win].m + key->off;
	int64_t weight = cfg_ids_weight(&c->worker_sections[win].ids);

	for (int i = 0; i < c->nworker_sections; i++) {
		const struct cfg_worker_section *ws = &c->worker_sections[i];

		if ((ws->set & 1u << k) && cfg_ids_weight(&ws->ids) == weight &&
		    cfg_ids_covers(&ws->ids, w) &&
		    memcmp((const char *)&ws->m + key->off, v, key->size))
			return i;
	}
	return -1;
}

static int check_worker_ties(struct loader *L)
{
	const struct cfg *c = L->c;
	int win[CFG_NWORKERK], ties[CFG_NWORKERK];

	for (int w = 0; w < c->run.workers && c->nworker_sections; w++) {
		char a[32], b[32], what[32];
		int o;

		cfg_worker_winners(c, w, win, ties);
		for (int k = 0; k < CFG_NWORKERK; k++) {
			if (ties[k] < 0 || (o = worker_disagrees(c, w, k, win[k])) < 0)
				continue;
			cfg_worker_name(&c->worker_sections[win[k]], a, sizeof(a));
			cfg_worker_name(&c->worker_sections[o], b, sizeof(b));
			snprintf(what, sizeof(what), "worker %d", w);
			return tie(L, a, L->wsect_key_loc[win[k]][k], b, L->wsect_key_loc[o][k],
				   cfg_keys[CFG_WK0 + k].name, what, "workers", what);
		}
	}
	return 0;
}

/* Whether worker key k of section i differs from the key's default. */
static bool worker_key_changed(const struct cfg_worker_section *ws, int k)
{
	const struct cfg_key *key = &cfg_keys[CFG_WK0 + k];
	struct cfg_worker_model d;

	cfg_worker_default(&d);
	return memcmp((const char *)&ws->m + key->off, (const char *)&d + key->off, key->size);
}

/* Worker key k of section i: a warning when it decides for no worker, or (the jitter's
 * distribution) acts on none of those it decides for. */
static void check_worker_key(struct loader *L, int i, int k)
{
	const struct cfg *c = L->c;
	const struct cfg_worker_section *ws = &c->worker_sections[i];
	const char *key = cfg_keys[CFG_WK0 + k].name;
	int win[CFG_NWORKERK], ties[CFG_NWORKERK];
	bool decides = false, acts = false;
	char name[32], val[64];

	if (!(ws->set & 1u << k) || !worker_key_changed(ws, k))
		return;
	for (int w = 0; w < c->run.workers; w++) {
		cfg_worker_winners(c, w, win, ties);
		if (win[k] != i)
			continue;
		decides = true;
		acts |= k != CFG_WK_compute_jitter_distribution || c->worker[w].jitter > 0;
	}
	cfg_worker_name(ws, name, sizeof(name));
	cfg_key_format(&cfg_keys[CFG_WK0 + k], &ws->m, val, sizeof(val));
	if (!decides)
		cfg_warn(L, L->wsect_key_loc[i][k], "%s.%s = %s has no effect: a more specific "
			 "section gives %s for every worker [%s] covers", name, key, val, key, name);
	else if (!acts)
		cfg_warn(L, L->wsect_key_loc[i][k], "%s.%s = %s has no effect: it acts only with "
			 "compute_jitter > 0", name, key, val);
}

/* A worker's compute jitter drawn from one of iproute2's tables: read it (emu/net/dist.h;
 * a table file has no key here, so the parser offers no `table`). */
static int check_compute_dists(struct loader *L)
{
	const struct cfg *c = L->c;
	const int k = CFG_WK_compute_jitter_distribution;

	for (int w = 0; w < c->run.workers; w++) {
		const struct cfg_worker_model *m = &c->worker[w];
		int win[CFG_NWORKERK], ties[CFG_NWORKERK];
		char err[512];
		loc_t at;

		if (m->jitter == 0 || m->jitter_dist == DIST_UNIFORM)
			continue;
		cfg_worker_winners(c, w, win, ties);
		at = win[k] >= 0 ? L->wsect_key_loc[win[k]][k] : L->key_loc[CFG_WK0 + k];
		if (net_dist_load(m->jitter_dist, NULL, err, sizeof(err)))
			return cfg_fail(L, at, "worker %d: compute_jitter_%s", w, err);
	}
	return 0;
}

int cfg_validate_sections(struct loader *L)
{
	/* each check reports its first fault (a tie shows on many links at once) */
	int r = check_ids_exist(L);

	r |= check_worker_ties(L);
	r |= check_link_ties(L);
	if (r)
		return -EINVAL;
	cfg_resolve_workers(L->c);
	for (int i = 0; i < L->c->nworker_sections; i++)
		for (int k = 0; k < CFG_NWORKERK; k++)
			check_worker_key(L, i, k);
	return check_compute_dists(L);
}
