/* emu/cfg/cfg_event_parse.c — reading an [event NAME] section's keys (cfg_event.h says
 * what they mean).  Each value is checked alone here, with the file and line of its key;
 * what needs the whole configuration (run.workers, the kind against its targets, the
 * links' models) is cfg_validate_events.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/cfg/cfg_loader.h"
#include "emu/cfg/units.h"

#define BIT(k) ((uint64_t)1 << (k))
#define WHEN_FORMS "a step (200), an epoch (2.5 epoch) or a virtual time with its unit (0.5s)"

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* s without leading and trailing blanks, into buf (n bytes); false when it does not fit. */
static bool trimmed(const char *s, size_t len, char *buf, size_t n)
{
	while (len > 0 && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len >= n)
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	return true;
}

/* A plain word: letters, digits, _ and -, at most CFG_EVENT_NAME - 1 of them. */
static bool plain_word(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= CFG_EVENT_NAME)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '-' || (*s >= 'a' && *s <= 'z') ||
		      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

int cfg_event_open(struct loader *L, const char *name, loc_t loc)
{
	struct cfg *c = L->c;
	const char *word = skip_blanks(name + 5);
	char nm[CFG_EVENT_NAME];
	int i;

	if ((name[5] != ' ' && name[5] != '\t') || !plain_word(word))
		return cfg_fail(L, loc, "malformed section [%s]; expected [event NAME] with NAME a "
				"plain word of at most %d letters, digits, _ or -", name,
				CFG_EVENT_NAME - 1);
	snprintf(nm, sizeof(nm), "%s", word);
	for (i = 0; i < c->nevents; i++)
		if (!strcmp(c->events[i].name, nm))
			break;
	if (i < c->nevents && loc > 0)
		return cfg_fail(L, loc, "duplicate section [event %s]; first at line %d", nm,
				L->ev_loc[i]);
	if (i == c->nevents) {
		if (i == CFG_MAX_EVENTS)
			return cfg_fail(L, loc, "too many [event NAME] sections; expected at most %d",
					CFG_MAX_EVENTS);
		c->nevents++;
		memset(&c->events[i], 0, sizeof(c->events[i]));
		snprintf(c->events[i].name, sizeof(c->events[i].name), "%s", nm);
		c->events[i].line = loc > 0 ? loc : 0;
		c->events[i].factor = 1;
		L->ev_loc[i] = loc;
	}
	L->sect = SECT_EVENT;
	L->ev = i;
	return 0;
}

/* at, for: "200" or "200 steps", "2.5 epoch(s)", or a duration ("0.5s"). */
static int parse_when(const char *s, struct cfg_when *w, char *err, size_t errlen)
{
	size_t len = strlen(s), k = len;
	char num[64], unit[16];
	double d;

	while (k > 0 && isalpha((unsigned char)s[k - 1]))
		k--;
	if (!trimmed(s + k, len - k, unit, sizeof(unit)) || !trimmed(s, k, num, sizeof(num)))
		goto bad;
	if (!strcmp(unit, "epoch") || !strcmp(unit, "epochs")) {
		if (units_double(num, &d, err, errlen) || d < 0 || d > 1e6)
			goto bad;
		*w = (struct cfg_when){ .unit = WHEN_EPOCH, .epochs = d };
		return 0;
	}
	if (!*unit || !strcmp(unit, "step") || !strcmp(unit, "steps")) {
		if (units_int(num, &w->n, err, errlen) == 0 && w->n >= 0 &&
		    w->n <= 1000000000000LL) {
			w->unit = WHEN_STEP;
			return 0;
		}
		if (!*unit && units_double(num, &d, err, errlen) == 0) {
			snprintf(err, errlen, "'%s' is not a whole step; expected %s", s,
				 WHEN_FORMS);
			return -EINVAL;
		}
		goto bad;
	}
	if (units_duration(s, &w->n, err, errlen) == 0 && w->n >= 0) {
		w->unit = WHEN_TIME;
		return 0;
	}
bad:
	snprintf(err, errlen, "'%s' is not a step, an epoch or a virtual time; expected %s", s,
		 WHEN_FORMS);
	return -EINVAL;
}

static int parse_kind(const char *s, enum cfg_event_kind *kind, char *err, size_t errlen)
{
	const char *near;

	for (int k = EVENT_PARTITION; cfg_event_kind_names[k]; k++) {
		if (!strcmp(s, cfg_event_kind_names[k])) {
			*kind = (enum cfg_event_kind)k;
			return 0;
		}
	}
	near = cfg_suggest(s, cfg_event_kind_names + 1, EVENT_CRASH);
	snprintf(err, errlen, "unknown kind '%s'; %s%s%s", s, near ? "did you mean '" : "",
		 near ? near : "expected partition, link_down, net, slowdown or crash",
		 near ? "'?" : "");
	return -EINVAL;
}

static int parse_rejoin(const char *s, enum cfg_rejoin *r, char *err, size_t errlen)
{
	for (int k = REJOIN_OWN; cfg_rejoin_names[k]; k++) {
		if (!strcmp(s, cfg_rejoin_names[k])) {
			*r = (enum cfg_rejoin)k;
			return 0;
		}
	}
	snprintf(err, errlen, "unknown rejoin '%s'; expected %s", s,
		 cfg_event_help[CFG_EVK_rejoin]);
	return -EINVAL;
}

/* The next item of a list separated by sep, trimmed, into item; *s past it.  false at the
 * end of the list; an empty or overlong item is an error (*bad). */
static bool next_item(const char **s, char sep, char *item, size_t n, bool *bad)
{
	const char *e;

	if (!*s)
		return false;
	e = strchr(*s, sep);
	if (!trimmed(*s, e ? (size_t)(e - *s) : strlen(*s), item, n) || !*item) {
		*bad = true;
		return false;
	}
	*s = e ? e + 1 : NULL;
	return true;
}

#define LINK_FORMS "A-B with worker ids or *, or S -> D with each side an id, a range A-B " \
	"or * (as [link] sections name links), comma separated"

static int parse_links(const char *s, struct cfg_event *e, char *err, size_t errlen)
{
	char item[64], w[128];
	bool bad = false;

	e->nlinks = 0;
	while (next_item(&s, ',', item, sizeof(item), &bad)) {
		struct cfg_ids a, b;

		if (cfg_link_sides(item, &a, &b)) {
			snprintf(err, errlen, "'%s' is not a link group; expected %s", item,
				 LINK_FORMS);
			return -EINVAL;
		}
		if (cfg_ids_check(&a, w, sizeof(w)) || cfg_ids_check(&b, w, sizeof(w))) {
			snprintf(err, errlen, "%s %s", item, w);
			return -EINVAL;
		}
		if (!a.any && !b.any && a.first == a.last && b.first == b.last &&
		    a.first == b.first) {
			snprintf(err, errlen, "%s links worker %d to itself; expected two "
				 "different workers", item, a.first);
			return -EINVAL;
		}
		if (e->nlinks == CFG_EVENT_LINKS) {
			snprintf(err, errlen, "more than %d link groups; expected at most %d",
				 CFG_EVENT_LINKS, CFG_EVENT_LINKS);
			return -EINVAL;
		}
		e->links[e->nlinks++] = (struct cfg_event_link){ .src = a, .dst = b };
	}
	if (bad || !e->nlinks) {
		snprintf(err, errlen, "an empty or overlong link group; expected %s", LINK_FORMS);
		return -EINVAL;
	}
	return 0;
}

/* Worker ids, ranges A-B and (any) '*', comma separated, into *mask. */
static int parse_ids(const char *s, struct wset *mask, bool *any, char *err, size_t errlen)
{
	const char *forms = any ? "ids, ranges A-B or *, comma separated" :
			    "ids and ranges A-B, comma separated";
	char item[32];
	bool bad = false;

	*mask = (struct wset){ { 0 } };
	if (any)
		*any = false;
	while (next_item(&s, ',', item, sizeof(item), &bad)) {
		struct cfg_ids ids;
		const char *end = cfg_ids_parse(item, true, &ids);

		if (!end || *end || (ids.any && !any)) {
			snprintf(err, errlen, "'%s' is not a worker id or range; expected worker "
				 "%s", item, forms);
			return -EINVAL;
		}
		if (!ids.any && ids.first > ids.last) {
			snprintf(err, errlen, "the range %s is empty; expected A-B with A <= B",
				 item);
			return -EINVAL;
		}
		if (!ids.any && ids.last >= CFG_MAX_WORKERS) {
			snprintf(err, errlen, "worker %d is beyond any run; expected worker ids "
				 "below %d", ids.last, CFG_MAX_WORKERS);
			return -EINVAL;
		}
		if (ids.any)
			*any = true;
		else
			for (int i = ids.first; i <= ids.last; i++)
				wset_add(mask, i);
	}
	if (bad || !(!wset_empty(mask) || (any && *any))) {
		snprintf(err, errlen, "an empty or overlong item; expected worker %s", forms);
		return -EINVAL;
	}
	return 0;
}

static int parse_groups(const char *s, struct cfg_event *e, char *err, size_t errlen)
{
	char group[CFG_STR];
	bool bad = false;

	e->ngroups = 0;
	while (next_item(&s, '|', group, sizeof(group), &bad)) {
		if (e->ngroups == CFG_EVENT_GROUPS) {
			snprintf(err, errlen, "more than %d groups; expected at most %d",
				 CFG_EVENT_GROUPS, CFG_EVENT_GROUPS);
			return -EINVAL;
		}
		if (parse_ids(group, &e->groups[e->ngroups++], NULL, err, errlen))
			return -EINVAL;
	}
	if (bad || !e->ngroups) {
		snprintf(err, errlen, "an empty or overlong group; expected groups of worker ids "
			 "and ranges separated by |, such as 0-7 | 8-15");
		return -EINVAL;
	}
	return 0;
}

/* "key=value, key=value" of [net] keys, each checked by the key table. */
static int parse_set(const char *s, struct cfg_event *e, char *err, size_t errlen)
{
	const char *names[CFG_NNET], *near;
	char item[CFG_STR], name[64], k_why[512];
	bool bad = false;

	for (int k = 0; k < CFG_NNET; k++)
		names[k] = cfg_keys[k].name;
	e->net_set = 0;
	memset(&e->net, 0, sizeof(e->net));
	while (next_item(&s, ',', item, sizeof(item), &bad)) {
		const char *eq = strchr(item, '=');
		const struct cfg_key *k;
		int ki;

		if (!eq || !trimmed(item, (size_t)(eq - item), name, sizeof(name)) || !*name) {
			snprintf(err, errlen, "'%s' is not a setting; expected key=value of [net] "
				 "keys, comma separated, such as loss_p=0.3, latency=2ms", item);
			return -EINVAL;
		}
		k = cfg_key_find("net", name);
		if (!k) {
			near = cfg_suggest(name, names, CFG_NNET);
			snprintf(err, errlen, "unknown [net] key '%s'%s%s%s", name,
				 near ? "; did you mean '" : "; expected a key of emu help net",
				 near ? near : "", near ? "'?" : "");
			return -EINVAL;
		}
		ki = (int)(k - cfg_keys);
		if (ki == CFG_NETK_transport) {
			snprintf(err, errlen, "an event cannot change transport: the ends "
				 "of a link would disagree about the messages in flight; expected "
				 "a [link] section for a link's transport");
			return -EINVAL;
		}
		if (e->net_set & BIT(ki)) {
			snprintf(err, errlen, "%s is set twice; expected each key once", name);
			return -EINVAL;
		}
		if (cfg_key_parse(k, &e->net, skip_blanks(eq + 1), k_why, sizeof(k_why))) {
			snprintf(err, errlen, "%s: %s", name, k_why);
			return -EINVAL;
		}
		e->net_set |= BIT(ki);
	}
	if (bad || !e->net_set) {
		snprintf(err, errlen, "an empty or overlong setting; expected key=value of [net] "
			 "keys, comma separated, such as loss_p=0.3, latency=2ms");
		return -EINVAL;
	}
	return 0;
}

static int parse_factor(const char *s, double *factor, char *err, size_t errlen)
{
	struct cfg_worker_model m;

	if (cfg_key_parse(&cfg_keys[CFG_WK0 + CFG_WK_slowdown], &m, s, err, errlen))
		return -EINVAL;
	*factor = m.slowdown;
	return 0;
}

static int parse_key(struct cfg_event *e, int k, const char *value, char *err, size_t errlen)
{
	switch (k) {
	case CFG_EVK_at:
		return parse_when(value, &e->at, err, errlen);
	case CFG_EVK_for:
		if (parse_when(value, &e->len, err, errlen))
			return -EINVAL;
		if ((e->len.unit == WHEN_EPOCH && e->len.epochs > 0) || e->len.n > 0)
			return 0;
		snprintf(err, errlen, "%s is no interval; expected a length above 0, or no for (to "
			 "the end of the run)", value);
		return -EINVAL;
	case CFG_EVK_kind:
		return parse_kind(value, &e->kind, err, errlen);
	case CFG_EVK_links:
		return parse_links(value, e, err, errlen);
	case CFG_EVK_workers:
		return parse_ids(value, &e->workers, &e->workers_any, err, errlen);
	case CFG_EVK_groups:
		return parse_groups(value, e, err, errlen);
	case CFG_EVK_set:
		return parse_set(value, e, err, errlen);
	case CFG_EVK_rejoin:
		return parse_rejoin(value, &e->rejoin, err, errlen);
	default:
		return parse_factor(value, &e->factor, err, errlen);
	}
}

int cfg_event_key(struct loader *L, loc_t loc, const char *name, const char *value)
{
	struct cfg_event *e = &L->c->events[L->ev];
	char why[768], all[128];
	const char *near;
	int k;

	for (k = 0; k < CFG_NEVK; k++)
		if (!strcmp(name, cfg_event_keys[k]))
			break;
	if (k == CFG_NEVK) {
		near = cfg_suggest(name, cfg_event_keys, CFG_NEVK);
		if (near)
			return cfg_fail(L, loc, "unknown key '%s' in [event %s]; did you mean '%s'?",
					name, e->name, near);
		cfg_join_names(cfg_event_keys, CFG_NEVK, ", ", all, sizeof(all));
		return cfg_fail(L, loc, "unknown key '%s' in [event %s]; expected one of %s", name,
				e->name, all);
	}
	if (loc > 0 && L->ev_key_loc[L->ev][k] > 0)
		return cfg_fail(L, loc, "duplicate key '%s' in [event %s]; first at line %d", name,
				e->name, L->ev_key_loc[L->ev][k]);
	if (!*value)
		return cfg_fail(L, loc, "event %s.%s: empty value; expected %s", e->name, name,
				cfg_event_help[k]);
	if (parse_key(e, k, value, why, sizeof(why))) {
		if (loc > 0)
			return cfg_fail(L, loc, "event %s.%s: %s", e->name, name, why);
		return cfg_fail(L, loc, "%s", why);
	}
	L->ev_key_loc[L->ev][k] = loc;
	e->set |= 1u << k;
	return 0;
}
