/* emu/cfg/cfg_validate_events.c — the checks of [event NAME] sections once everything is
 * read: a kind and a start, a length in the start's kind of time, the targets the kind
 * takes and no others, worker ids below run.workers, a partition that puts every worker
 * in one group, on every link a net event covers, a model that can work (the checks
 * of a [link] section's), and a crash that the others can learn of by the step.
 * Overlapping events are allowed (docs/events.md says what decides where they meet).
 */
#include <errno.h>
#include <string.h>

#include "emu/cfg/cfg_loader.h"

#define EVK(k) (1u << CFG_EVK_##k)
#define TARGETS (EVK(links) | EVK(workers) | EVK(groups) | EVK(set) | EVK(factor) | \
		 EVK(rejoin))

/* The event keys each kind needs, and those it may have: the only targets it takes. */
static const unsigned needs[] = {
	[EVENT_PARTITION] = EVK(groups),
	[EVENT_LINK_DOWN] = EVK(links),
	[EVENT_NET] = EVK(links) | EVK(set),
	[EVENT_SLOWDOWN] = EVK(workers) | EVK(factor),
	[EVENT_CRASH] = EVK(workers),
};
static const unsigned optional[] = { [EVENT_CRASH] = EVK(rejoin) };

/* "groups and set" of the keys in mask, into buf. */
static void key_list(unsigned mask, char *buf, size_t n)
{
	size_t len = 0;
	int left = __builtin_popcount(mask);

	buf[0] = 0;
	for (int k = 0; k < CFG_NEVK && len < n; k++) {
		if (!(mask & 1u << k))
			continue;
		left--;
		len += (size_t)snprintf(buf + len, n - len, "%s%s", cfg_event_keys[k],
					left > 1 ? ", " : left == 1 ? " and " : "");
	}
}

static int check_when(struct loader *L, int i)
{
	const struct cfg_event *e = &L->c->events[i];
	const loc_t *kl = L->ev_key_loc[i];
	char a[64], b[64];

	if (!(e->set & EVK(at)) && (e->set & EVK(for)))
		return cfg_fail(L, kl[CFG_EVK_for], "[event %s] has for but no at; expected at = "
				"%s", e->name, cfg_event_help[CFG_EVK_at]);
	if (!(e->set & EVK(at)))
		return cfg_fail(L, L->ev_loc[i], "[event %s] has no at; expected at = %s",
				e->name, cfg_event_help[CFG_EVK_at]);
	if (e->len.unit == WHEN_NONE || (e->len.unit == WHEN_TIME) == (e->at.unit == WHEN_TIME))
		return 0;
	cfg_when_format(&e->at, a, sizeof(a));
	cfg_when_format(&e->len, b, sizeof(b));
	return cfg_fail(L, cfg_loc_later(kl[CFG_EVK_at], kl[CFG_EVK_for]), "event %s.at = %s "
			"and for = %s count time differently; expected both in steps or epochs "
			"(at = 200, for = 1 epoch) or both in virtual time (at = 0.5s, for = "
			"50ms)", e->name, a, b);
}

static int check_kind(struct loader *L, int i)
{
	const struct cfg_event *e = &L->c->events[i];
	const char *kind = cfg_event_kind_names[e->kind];
	char takes[64];

	if (!(e->set & EVK(kind)))
		return cfg_fail(L, L->ev_loc[i], "[event %s] has no kind; expected kind = %s",
				e->name, cfg_event_help[CFG_EVK_kind]);
	key_list(needs[e->kind] | optional[e->kind], takes, sizeof(takes));
	for (int k = 0; k < CFG_NEVK; k++) {
		unsigned bit = 1u << k;

		if ((TARGETS & bit) && (e->set & bit) && !((needs[e->kind] | optional[e->kind]) & bit))
			return cfg_fail(L, L->ev_key_loc[i][k], "event %s.%s: kind = %s takes %s; "
					"expected no %s", e->name, cfg_event_keys[k], kind, takes,
					cfg_event_keys[k]);
	}
	key_list(needs[e->kind], takes, sizeof(takes));
	for (int k = 0; k < CFG_NEVK; k++)
		if ((needs[e->kind] & 1u << k) && !(e->set & 1u << k))
			return cfg_fail(L, L->ev_loc[i], "[event %s] has no %s; expected %s = %s "
					"(kind = %s needs %s)", e->name, cfg_event_keys[k],
					cfg_event_keys[k], cfg_event_help[k], kind, takes);
	return 0;
}

/* A crash: decided by the step (every other worker must know, without a message, that
 * none will come), never of every worker (someone must run the steps it misses), with
 * a for when it says how to rejoin. */
static int check_crash(struct loader *L, int i)
{
	const struct cfg *c = L->c;
	const struct cfg_event *e = &c->events[i];
	const loc_t *kl = L->ev_key_loc[i];
	struct wset all = wset_all(c->run.workers);

	if (e->kind != EVENT_CRASH)
		return 0;
	if (c->topology.shape == SHAPE_HOSTS)	/* each worker's copy of the shared ports */
		return cfg_fail(L, kl[CFG_EVK_kind], "event %s: a crash with topology.shape = "
				"hosts: a worker that comes back would not know what the ports "
				"its peers share did while it was down; expected shape = switch or "
				"none", e->name);
	if (c->train.algorithm == ALGO_RING)	/* the flags go round the ring */
		return cfg_fail(L, kl[CFG_EVK_kind], "event %s: a crash with train.algorithm = "
				"ring: a worker that is down cuts the ring, and the flags that stop "
				"the run together would not come round; expected another algorithm",
				e->name);
	if (e->at.unit == WHEN_TIME)
		return cfg_fail(L, kl[CFG_EVK_at], "event %s.at: a crash is counted in steps or "
				"epochs (the other workers must know without a message that none "
				"will come); expected at = 200 or at = 1.5 epoch", e->name);
	struct wset crashed = wset_and(e->workers, &all);

	if (e->workers_any || wset_count(&crashed) == c->run.workers)
		return cfg_fail(L, kl[CFG_EVK_workers], "event %s.workers crashes every worker "
				"(run.workers = %d); expected some worker left to run", e->name,
				c->run.workers);
	if ((e->set & EVK(rejoin)) && e->len.unit == WHEN_NONE)
		return cfg_fail(L, kl[CFG_EVK_rejoin], "event %s.rejoin: a crash without for "
				"never ends, so nobody rejoins; expected for = a length, or no "
				"rejoin", e->name);
	return 0;
}

static int beyond(struct loader *L, int i, int k, int w)
{
	const struct cfg *c = L->c;

	return cfg_fail(L, L->ev_key_loc[i][k], "event %s.%s names worker %d, but run.workers = "
			"%d; expected worker ids 0 to %d", c->events[i].name, cfg_event_keys[k], w,
			c->run.workers, c->run.workers - 1);
}

static int check_ids(struct loader *L, int i)
{
	const struct cfg_event *e = &L->c->events[i];
	int nw = L->c->run.workers;
	struct wset seen = { { 0 } };

	for (int j = 0; j < e->nlinks; j++) {
		const struct cfg_ids *s = &e->links[j].src, *d = &e->links[j].dst;
		if (!s->any && s->last >= nw)
			return beyond(L, i, CFG_EVK_links, s->last);
		if (!d->any && d->last >= nw)
			return beyond(L, i, CFG_EVK_links, d->last);
	}
	if (wset_top(&e->workers) >= nw)
		return beyond(L, i, CFG_EVK_workers, wset_top(&e->workers));
	for (int g = 0; g < e->ngroups; g++) {
		struct wset twice = wset_and(seen, &e->groups[g]);

		if (wset_top(&e->groups[g]) >= nw)
			return beyond(L, i, CFG_EVK_groups, wset_top(&e->groups[g]));
		if (!wset_empty(&twice))
			return cfg_fail(L, L->ev_key_loc[i][CFG_EVK_groups], "event %s.groups puts "
					"worker %d in two groups; expected each worker in one group",
					e->name, wset_first(&twice));
		seen = wset_or(seen, &e->groups[g]);
	}
	if (e->kind != EVENT_PARTITION)
		return 0;
	if (e->ngroups < 2)
		return cfg_fail(L, L->ev_key_loc[i][CFG_EVK_groups], "event %s.groups names one "
				"group; expected two or more separated by |, such as 0-7 | 8-15",
				e->name);
	for (int w = 0; w < nw; w++)
		if (!wset_has(&seen, w))
			return cfg_fail(L, L->ev_key_loc[i][CFG_EVK_groups], "event %s.groups puts "
					"worker %d in no group (run.workers = %d); expected every "
					"worker in one group (a worker alone is a group: 0-6 | 7)",
					e->name, w, nw);
	return 0;
}

/* A net event: the model of every link it covers can work. */
static int check_models(struct loader *L, int i)
{
	const struct cfg *c = L->c;
	const struct cfg_event *e = &c->events[i];
	char label[CFG_EVENT_NAME + 8];
	struct net_cfg n;

	if (e->kind != EVENT_NET)
		return 0;
	snprintf(label, sizeof(label), "event %s", e->name);
	for (int src = 0; src < c->run.workers; src++) {
		for (int dst = 0; dst < c->run.workers; dst++) {
			if (!cfg_event_covers_link(e, src, dst))
				continue;
			cfg_event_net(c, e, src, dst, &n);
			if (cfg_check_event_model(L, label, src, dst, &n, e->net_set,
						  L->ev_key_loc[i][CFG_EVK_set]))
				return -EINVAL;
		}
	}
	return 0;
}

/* Each event's first fault (what follows it in the same event could only repeat it). */
int cfg_validate_events(struct loader *L)
{
	int r = 0;

	for (int i = 0; i < L->c->nevents; i++)
		if (check_kind(L, i) || check_when(L, i) || check_ids(L, i) || check_models(L, i) ||
		    check_crash(L, i))
			r = -EINVAL;
	return r;
}
