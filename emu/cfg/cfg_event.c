/* emu/cfg/cfg_event.c — what an [event NAME] section covers and when (cfg_event.h), its
 * text as emu check prints it, and the windows it gives the links of a worker's exchange
 * (emu/net/net.h). */
#include "emu/cfg/cfg_event.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emu/cfg/cfg_loader.h"
#include "emu/cfg/units.h"
#include "emu/net/net.h"
#include "emu/net/xchg.h"

#define BIT(k) ((uint64_t)1 << (k))

const char *const cfg_event_keys[CFG_NEVK + 1] = { "kind", "at", "for", "links", "workers",
	"groups", "set", "factor", "rejoin", NULL };
const char *const cfg_event_kind_names[] = { [EVENT_NONE] = "none",
	[EVENT_PARTITION] = "partition", [EVENT_LINK_DOWN] = "link_down", [EVENT_NET] = "net",
	[EVENT_SLOWDOWN] = "slowdown", [EVENT_CRASH] = "crash", NULL };
const char *const cfg_rejoin_names[] = { [REJOIN_OWN] = "own", [REJOIN_MEAN] = "mean",
	[REJOIN_FRESH] = "fresh", NULL };
const char *const cfg_event_help[CFG_NEVK] = {
	"partition, link_down, net, slowdown or crash",
	"a step (200), an epoch (2.5 epoch) or a virtual time (0.5s), when it starts",
	"a length in the forms of at (steps and epochs mix; a virtual time goes with a virtual "
	"time); none: to the end of the run",
	"link groups as [link] sections name them (3-0, 0-*, 0-7 -> 8-15), comma separated",
	"worker ids, ranges A-B or *, comma separated",
	"groups of worker ids and ranges separated by | (0-7 | 8-15), every worker in one group",
	"[net] keys and their values, key=value comma separated (loss_p=0.3, latency=2ms); "
	"not transport",
	"a factor on the workers' compute time (4: four times slower)",
	"own (its state at the crash), mean (the mean of the other replicas when it comes "
	"back) or fresh (the initial model); default own",
};
const char *const cfg_event_kinds_of[CFG_NEVK] = { "every", "every", "every", "link_down, net",
	"slowdown, crash", "partition", "net", "slowdown", "crash" };

/* --- what an event covers and when -------------------------------------------------- */

static int64_t steps_of(const struct cfg_when *w, int64_t spe)
{
	return w->unit == WHEN_EPOCH ? (int64_t)llround(w->epochs * (double)spe) : w->n;
}

void cfg_event_span(const struct cfg_event *e, int64_t spe, struct cfg_span *s)
{
	int64_t len;

	s->by_time = e->at.unit == WHEN_TIME;
	s->from = s->by_time ? e->at.n : steps_of(&e->at, spe);
	if (e->len.unit == WHEN_NONE) {
		s->to = INT64_MAX;
		return;
	}
	if (e->at.unit == WHEN_EPOCH && e->len.unit == WHEN_EPOCH) {
		/* at 2.5 epoch for 0.5 epoch ends where epoch 3 starts, whatever the rounding */
		struct cfg_when end = { .unit = WHEN_EPOCH };

		end.epochs = e->at.epochs + e->len.epochs;
		s->to = steps_of(&end, spe);
		return;
	}
	len = s->by_time ? e->len.n : steps_of(&e->len, spe);
	s->to = len > INT64_MAX - s->from ? INT64_MAX : s->from + len;
}

int cfg_event_group(const struct cfg_event *e, int w)
{
	for (int g = 0; g < e->ngroups; g++)
		if (wset_has(&e->groups[g], w))
			return g;
	return -1;
}

bool cfg_event_covers_link(const struct cfg_event *e, int src, int dst)
{
	if (src == dst)
		return false;
	for (int i = 0; i < e->nlinks; i++)
		if (cfg_ids_covers(&e->links[i].src, src) && cfg_ids_covers(&e->links[i].dst, dst))
			return true;
	return false;
}

bool cfg_event_link_down(const struct cfg_event *e, int src, int dst)
{
	if (e->kind == EVENT_LINK_DOWN)
		return cfg_event_covers_link(e, src, dst);
	if (e->kind == EVENT_PARTITION)
		return src != dst && cfg_event_group(e, src) != cfg_event_group(e, dst);
	if (e->kind == EVENT_CRASH)
		return src != dst && (cfg_event_covers_worker(e, src) ||
				      cfg_event_covers_worker(e, dst));
	return false;
}

bool cfg_event_covers_worker(const struct cfg_event *e, int w)
{
	return e->workers_any || wset_has(&e->workers, w);
}

void cfg_event_net(const struct cfg *c, const struct cfg_event *e, int src, int dst,
		   struct net_cfg *out)
{
	int win[CFG_NNET], tie[CFG_NNET];
	uint64_t given = c->net_set;

	cfg_link_winners(c, src, dst, win, tie);
	*out = c->net;
	for (int k = 0; k < CFG_NNET; k++) {
		const char *from;

		if (e->net_set & BIT(k))
			from = (const char *)&e->net;
		else if (win[k] >= 0)
			from = (const char *)&c->links[win[k]].net;
		else
			continue;
		memcpy((char *)out + cfg_keys[k].off, from + cfg_keys[k].off, cfg_keys[k].size);
		given |= BIT(k);
	}
	/* netem: "loss 30%" alone is random loss, here as in a [link] section */
	if ((e->net_set & BIT(CFG_NETK_loss_p)) && !(e->net_set & BIT(CFG_NETK_loss)) &&
	    out->loss == LOSS_NONE && out->loss_p > 0)
		out->loss = LOSS_BERNOULLI;
	cfg_resolve_net(out, given);
}

/* --- text ------------------------------------------------------------------------- */

void cfg_when_format(const struct cfg_when *w, char *buf, size_t n)
{
	char v[UNITS_BUF];

	switch (w->unit) {
	case WHEN_STEP:
		snprintf(buf, n, "%lld", (long long)w->n);
		break;
	case WHEN_EPOCH:
		units_fmt_double(w->epochs, v, sizeof(v));
		snprintf(buf, n, "%s epoch", v);
		break;
	case WHEN_TIME:
		units_fmt_duration(w->n, buf, n);
		break;
	default:
		snprintf(buf, n, "(none)");
	}
}

/* The ids of mask as ranges joined by sep: "0-3, 7". */
static void mask_format(const struct wset *mask, const char *sep, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < CFG_MAX_WORKERS && len < n; i++) {
		int j = i;

		if (!wset_has(mask, i))
			continue;
		while (j + 1 < CFG_MAX_WORKERS && wset_has(mask, j + 1))
			j++;
		if (j > i)
			len += (size_t)snprintf(buf + len, n - len, "%s%d-%d", len ? sep : "", i, j);
		else
			len += (size_t)snprintf(buf + len, n - len, "%s%d", len ? sep : "", i);
		i = j;
	}
}

/* Without blanks: the printed form of a value is never longer than what was read. */
static void squeeze(char *s)
{
	char *d = s;

	for (; *s; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = 0;
}

/* Each target of an event, items joined by sep (groups by " | "); compact: without
 * blanks, as config.ini prints them (it must read back within inih's line limit whatever
 * the input's spacing). */
static void targets(const struct cfg_event *e, int k, const char *sep, bool compact, char *buf,
		    size_t n)
{
	size_t len = 0;
	char item[CFG_STR];

	buf[0] = 0;
	if (k == CFG_EVK_links) {
		for (int i = 0; i < e->nlinks && len < n; i++) {
			cfg_link_sides_name(&e->links[i].src, &e->links[i].dst, item, sizeof(item));
			if (compact)
				squeeze(item);
			len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? sep : "", item);
		}
	} else if (k == CFG_EVK_workers) {
		if (e->workers_any)
			snprintf(buf, n, "*");
		else
			mask_format(&e->workers, sep, buf, n);
	} else {
		for (int g = 0; g < e->ngroups && len < n; g++) {
			mask_format(&e->groups[g], sep, item, sizeof(item));
			len += (size_t)snprintf(buf + len, n - len, "%s%s",
						g ? (compact ? "|" : " | ") : "", item);
		}
	}
}

void cfg_event_format(const struct cfg_event *e, int k, char *buf, size_t n)
{
	struct cfg_worker_model m;
	size_t len = 0;
	char v[CFG_STR];

	switch (k) {
	case CFG_EVK_at:
	case CFG_EVK_for:
		cfg_when_format(k == CFG_EVK_at ? &e->at : &e->len, buf, n);
		break;
	case CFG_EVK_kind:
		snprintf(buf, n, "%s", cfg_event_kind_names[e->kind]);
		break;
	case CFG_EVK_set:
		buf[0] = 0;
		for (int i = 0; i < CFG_NNET && len < n; i++) {
			if (!(e->net_set & BIT(i)))
				continue;
			cfg_key_format(&cfg_keys[i], &e->net, v, sizeof(v));
			len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", len ? "," : "",
						cfg_keys[i].name, v);
		}
		break;
	case CFG_EVK_factor:
		m.slowdown = e->factor;
		cfg_key_format(&cfg_keys[CFG_WK0 + CFG_WK_slowdown], &m, buf, n);
		break;
	case CFG_EVK_rejoin:
		snprintf(buf, n, "%s", cfg_rejoin_names[e->rejoin]);
		break;
	default:
		targets(e, k, ",", true, buf, n);
	}
}

void cfg_event_targets(const struct cfg_event *e, char *buf, size_t n)
{
	int k = e->kind == EVENT_PARTITION ? CFG_EVK_groups :
		e->kind == EVENT_SLOWDOWN || e->kind == EVENT_CRASH ? CFG_EVK_workers :
		CFG_EVK_links;

	targets(e, k, "; ", false, buf, n);
}

/* --- the windows of a worker's links ------------------------------------------------ */

/* The window of event e on link src -> dst over span s. */
static void window(const struct cfg *c, const struct cfg_event *e, const struct cfg_span *s,
		   int src, int dst, struct net_window *w)
{
	struct net_cfg base;

	memset(w, 0, sizeof(*w));
	*w = (struct net_window){ .src = src, .dst = dst, .from = s->from, .to = s->to,
				  .by_time = s->by_time, .down = e->kind != EVENT_NET };
	if (w->down)
		return;
	cfg_event_net(c, e, src, dst, &w->model);
	cfg_link_net(c, src, dst, &base);
	/* the keys set gives, and what derives from them (ge_r from loss_p, loss from a
	 * lone loss_p): every byte of a key that is given or differs */
	for (int k = 0; k < CFG_NNET; k++) {
		const struct cfg_key *key = &cfg_keys[k];

		if ((e->net_set & BIT(k)) || memcmp((const char *)&w->model + key->off,
						    (const char *)&base + key->off, key->size))
			memset(w->mask + key->off, 1, key->size);
	}
}

/* Whether event e makes a window on link src -> dst. */
static bool on_link(const struct cfg_event *e, int src, int dst)
{
	return e->kind == EVENT_NET ? cfg_event_covers_link(e, src, dst) :
	       cfg_event_link_down(e, src, dst);
}

int cfg_xchg_windows(const struct cfg *c, int64_t spe, int id, struct xchg_links *out)
{
	int nw = c->run.workers, n = 0;
	struct net_window *w;

	out->win = NULL;
	out->nwin = 0;
	for (int i = 0; i < c->nevents; i++)
		for (int j = 0; j < nw; j++)
			n += on_link(&c->events[i], id, j) + on_link(&c->events[i], j, id);
	if (!n)
		return 0;
	w = calloc((size_t)n, sizeof(*w));
	if (!w)
		return -ENOMEM;
	n = 0;
	for (int i = 0; i < c->nevents; i++) {
		const struct cfg_event *e = &c->events[i];
		struct cfg_span s;

		cfg_event_span(e, spe, &s);
		for (int j = 0; j < nw; j++) {
			if (on_link(e, id, j))
				window(c, e, &s, id, j, &w[n++]);
			if (on_link(e, j, id))
				window(c, e, &s, j, id, &w[n++]);
		}
	}
	out->win = w;
	out->nwin = n;
	return 0;
}
