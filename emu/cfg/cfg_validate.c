/* emu/cfg/cfg_validate.c — the checks across keys, once the file and the overrides are
 * read: what no single key can say.  Errors for what cannot work (a loss parameter under
 * loss = none, a timeout no unit can meet), each reported (cfg_fail lists them),
 * warnings for keys given a value that has no effect in the resolved configuration.
 * Following netem, a loss probability given without a loss model means Bernoulli loss.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "emu/cfg/cfg_loader.h"
#include "emu/cfg/units.h"
#include "emu/net/dist.h"
#include "emu/net/net.h"
#include "emu/net/trace.h"

#define BIT(k) ((uint64_t)1 << (k))

static const struct cfg_key *key_of(const char *section, const char *name, size_t *i)
{
	const struct cfg_key *k = cfg_key_find(section, name);

	*i = (size_t)(k - cfg_keys);
	return k;
}

/* Settings that are fine alone but contradict each other; the message points at the
 * one given last. */
static int check_rto(struct loader *L, const struct net_cfg *n, const char *label,
		     loc_t rto, loc_t rto_max)
{
	char a[32], b[32];

	if (n->rto <= n->rto_max)
		return 0;
	cfg_key_format(&cfg_keys[CFG_NETK_rto], n, a, sizeof(a));
	cfg_key_format(&cfg_keys[CFG_NETK_rto_max], n, b, sizeof(b));
	return cfg_fail(L, cfg_loc_later(rto, rto_max), "%s.rto = %s exceeds %s.rto_max = %s; expected "
		    "rto <= rto_max", label, a, label, b);
}

/* [net], or one [link ...] section on one link it covers, resolved, with the keys the
 * section gives itself. */
struct scope {
	char label[64];		/* "net", "link 0-1", "link 0-7 -> 8-15", as in messages */
	int link;		/* the section, or -1 for [net] */
	uint64_t given;
	const int *win;		/* per key, the section its value came from (-1: [net]); NULL
				 * for [net] itself */
	struct net_cfg n;
	uint64_t ev_set;	/* an event's model: the keys its set gives, at ev_loc */
	loc_t ev_loc;
};

/* Where the value of key k in scope s came from: the line of the section that decided
 * it, else [net]'s. */
static loc_t scope_loc(const struct loader *L, const struct scope *s, int k)
{
	if (s->ev_set & BIT(k))
		return s->ev_loc;
	if (s->win && s->win[k] >= 0)
		return L->link_key_loc[s->win[k]][k];
	return L->key_loc[k];
}

/* The 4-state loss model leaves state 1 for 3 or 4 (p13, p14) and state 3 for 1 or 2
 * (p31, p32): each pair may add up to at most 1. */
static int check_exits(struct loader *L, const struct scope *s)
{
	const struct net_cfg *n = &s->n;
	const struct { int a, b; double pa, pb; } pair[] = {
		{ CFG_NETK_p13, CFG_NETK_p14, n->p13, n->p14 },
		{ CFG_NETK_p31, CFG_NETK_p32, n->p31, n->p32 },
	};

	int r = 0;

	if (n->loss != LOSS_STATE)
		return 0;
	for (int i = 0; i < 2; i++) {
		const char *a = cfg_keys[pair[i].a].name, *b = cfg_keys[pair[i].b].name;

		if (pair[i].pa + pair[i].pb <= 1.0)
			continue;
		r = cfg_fail(L, cfg_loc_later(cfg_loc_later(scope_loc(L, s, pair[i].a),
							       L->key_loc[pair[i].a]),
						 cfg_loc_later(scope_loc(L, s, pair[i].b),
							       L->key_loc[pair[i].b])),
				"%s.%s + %s.%s = %g; expected at most 1 (the chances of leaving one "
				"state of the 4-state loss model)", s->label, a, s->label, b,
				pair[i].pa + pair[i].pb);
	}
	return r;
}

static bool is_loss_param(int k)
{
	return k >= CFG_NETK_loss_p && k <= CFG_NETK_p14;
}

/* Whether key k of the net table acts on a link set up as n; else what it needs. */
static const char *net_key_needs(const struct net_cfg *n, int k)
{
	switch (k) {
	case CFG_NETK_loss_p:
		return n->loss == LOSS_BERNOULLI || n->loss == LOSS_GILBERT ? NULL :
		       "loss = bernoulli or gilbert";
	case CFG_NETK_ge_r:
	case CFG_NETK_ge_1h:
	case CFG_NETK_ge_1k:
		return n->loss == LOSS_GILBERT ? NULL : "loss = gilbert";
	case CFG_NETK_p13:
	case CFG_NETK_p31:
	case CFG_NETK_p32:
	case CFG_NETK_p23:
	case CFG_NETK_p14:
		return n->loss == LOSS_STATE ? NULL : "loss = state";
	case CFG_NETK_mtu:
		return n->unit == UNIT_PACKET ? NULL : "unit = packet";
	case CFG_NETK_distribution:
	case CFG_NETK_delay_correlation:
		return n->jitter > 0 ? NULL : "jitter > 0";
	case CFG_NETK_distribution_table:
		return n->distribution == DIST_TABLE ? NULL : "distribution = table";
	case CFG_NETK_loss_correlation:
		return n->loss == LOSS_BERNOULLI ? NULL : "loss = bernoulli";
	case CFG_NETK_duplicate_correlation:
		return n->duplicate > 0 ? NULL : "duplicate > 0";
	case CFG_NETK_reorder_correlation:
		return n->reorder > 0 ? NULL : "reorder > 0";
	case CFG_NETK_corrupt_correlation:
		return n->corrupt > 0 ? NULL : "corrupt > 0";
	case CFG_NETK_corrupt_detect:
		return n->corrupt > 0 ? NULL : "corrupt > 0";
	case CFG_NETK_ecn:
		return n->loss != LOSS_NONE || n->series[0] ? NULL : "a loss model (loss != none)";
	case CFG_NETK_timeout:
		return n->transport == TRANSPORT_UNRELIABLE ? NULL : "transport = unreliable";
	case CFG_NETK_rto:
	case CFG_NETK_rto_max:
	case CFG_NETK_max_retries:
		return n->transport != TRANSPORT_UNRELIABLE ? NULL : "transport = reliable or tcp";
	case CFG_NETK_cc:
	case CFG_NETK_rto_min:
	case CFG_NETK_init_cwnd:
		return n->transport == TRANSPORT_TCP ? NULL : "transport = tcp";
	case CFG_NETK_slot_min:
	case CFG_NETK_slot_max:
		return n->slot_distribution == DIST_UNIFORM ? NULL : "slot_distribution = uniform";
	case CFG_NETK_slot_delay:
	case CFG_NETK_slot_jitter:
		return n->slot_distribution != DIST_UNIFORM ? NULL :
		       "a slot_distribution other than uniform";
	case CFG_NETK_slot_packets:
	case CFG_NETK_slot_bytes:
	case CFG_NETK_slot_distribution:
		return net_slot_on(n) ? NULL : "a slot (slot_min, slot_max or slot_jitter > 0)";
	default:
		return NULL;
	}
}

/* Whether key k of n differs from what it would be by default in n's configuration
 * (derived defaults included): a key left at that value has no effect to report. */
static bool net_key_changed(const struct net_cfg *n, int k)
{
	const struct cfg_key *key = &cfg_keys[k];
	struct net_cfg d = *n;
	char why[128];

	if (key->def) {
		cfg_key_parse(key, &d, key->def, why, sizeof(why));
	} else {
		if (key->type == CFG_T_DURATION)
			*(int64_t *)((char *)&d + key->off) = -1;
		else
			*(double *)((char *)&d + key->off) = NET_UNSET;
		net_cfg_defaults(&d);
	}
	return memcmp((const char *)n + key->off, (const char *)&d + key->off, key->size) != 0;
}

/* The directed links that some [link ...] section covers, resolved once for the checks
 * (links no section covers are [net] itself). */
struct resolved {
	int src, dst;
	int owner;		/* the most specific section covering it: its label in messages */
	int win[CFG_NNET];	/* per key, the section that decided it, -1 for [net] */
	struct net_cfg n;
};

struct linktab {
	int n;
	struct resolved *r;
};

/* Who decides what on every link a section covers; the models come later (resolve_all),
 * once imply_bernoulli has given its sections their model. */
static int build_linktab(const struct cfg *c, struct linktab *t)
{
	int nw = c->run.workers, tie[CFG_NNET];

	t->n = 0;
	t->r = NULL;
	if (!c->nlinks)
		return 0;
	t->r = malloc(sizeof(*t->r) * (size_t)nw * (size_t)nw);
	if (!t->r)
		return -ENOMEM;
	for (int src = 0; src < nw; src++) {
		for (int dst = 0; dst < nw; dst++) {
			struct resolved *r = &t->r[t->n];
			int64_t best = INT64_MAX;

			r->owner = -1;
			for (int i = 0; i < c->nlinks; i++) {
				int64_t w = cfg_link_weight(&c->links[i]);

				if (w < best && cfg_link_covers(&c->links[i], src, dst)) {
					best = w;
					r->owner = i;
				}
			}
			if (r->owner < 0)
				continue;
			r->src = src;
			r->dst = dst;
			cfg_link_winners(c, src, dst, r->win, tie);
			t->n++;
		}
	}
	return 0;
}

static void resolve_all(const struct cfg *c, struct linktab *t)
{
	for (int i = 0; i < t->n; i++)
		cfg_link_net_from(c, t->r[i].win, &t->r[i].n);
}

/* netem: "loss 5%" alone is random (Bernoulli) loss.  A link section that gives loss_p
 * but no model gets loss = bernoulli when, on every link where its loss_p decides, the
 * model comes from [net] or less specific sections and is none.  Not where a section as
 * specific gives another loss on a link it covers: the implied model would contradict
 * it (cfg_validate_sections). */
static bool inherits_no_loss(const struct cfg *c, const struct linktab *t, int i)
{
	int64_t w = cfg_link_weight(&c->links[i]);
	bool decides = false;

	for (int j = 0; j < t->n; j++) {
		const struct resolved *r = &t->r[j];
		int l = r->win[CFG_NETK_loss];
		int64_t lw = l >= 0 ? cfg_link_weight(&c->links[l]) : INT64_MAX;

		if (!cfg_link_covers(&c->links[i], r->src, r->dst))
			continue;
		if (lw == w && c->links[l].net.loss != LOSS_BERNOULLI)
			return false;
		if (lw <= w || r->win[CFG_NETK_loss_p] != i)
			continue;
		if ((l >= 0 ? c->links[l].net.loss : c->net.loss) != LOSS_NONE)
			return false;
		decides = true;
	}
	return decides;
}

/* Section i now gives loss: it decides loss where nothing more specific does. */
static void takes_loss(const struct cfg *c, struct linktab *t, int i)
{
	int64_t w = cfg_link_weight(&c->links[i]);

	for (int j = 0; j < t->n; j++) {
		struct resolved *r = &t->r[j];
		int l = r->win[CFG_NETK_loss];

		if (cfg_link_covers(&c->links[i], r->src, r->dst) &&
		    (l < 0 || w < cfg_link_weight(&c->links[l])))
			r->win[CFG_NETK_loss] = i;
	}
}

static void imply_bernoulli(struct loader *L, struct linktab *t)
{
	struct cfg *c = L->c;
	int order[CFG_MAX_LINKS];

	if (!(c->net_set & BIT(CFG_NETK_loss)) && c->net.loss_p > 0) {
		c->net.loss = LOSS_BERNOULLI;
		c->net_set |= BIT(CFG_NETK_loss);
		L->key_loc[CFG_NETK_loss] = L->key_loc[CFG_NETK_loss_p];
	}
	/* least specific first: what a section inherits is settled before it is asked */
	for (int i = 0; i < c->nlinks; i++) {
		int j = i;

		for (; j > 0 && cfg_link_weight(&c->links[order[j - 1]]) <
				cfg_link_weight(&c->links[i]); j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (int o = 0; o < c->nlinks; o++) {
		int i = order[o];
		struct cfg_link *lk = &c->links[i];

		if ((lk->set & BIT(CFG_NETK_loss)) || !(lk->set & BIT(CFG_NETK_loss_p)) ||
		    !(lk->net.loss_p > 0) || !inherits_no_loss(c, t, i))
			continue;
		lk->net.loss = LOSS_BERNOULLI;
		lk->set |= BIT(CFG_NETK_loss);
		L->link_key_loc[i][CFG_NETK_loss] = L->link_key_loc[i][CFG_NETK_loss_p];
		takes_loss(c, t, i);
	}
}

/* Whether a key given in [net] acts anywhere: on [net] itself (the links no section
 * names) or on a link that takes it from [net]. */
static const char *net_default_needs(const struct linktab *t, const struct scope *s, int k)
{
	const char *needs = net_key_needs(&s->n, k);

	for (int i = 0; i < t->n && needs; i++)
		if (t->r[i].win[k] < 0 && !net_key_needs(&t->r[i].n, k))
			needs = NULL;
	return needs;
}

/* A loss parameter where the model is none: an error (the user believes there is loss). */
static int loss_under_none(struct loader *L, const struct scope *s, int k)
{
	char val[64], model[64];

	cfg_key_format(&cfg_keys[k], &s->n, val, sizeof(val));
	snprintf(model, sizeof(model), "%s", net_key_needs(&s->n, k) + strlen("loss = "));
	*strchrnul(model, ' ') = 0;
	return cfg_fail(L, cfg_loc_later(scope_loc(L, s, k), scope_loc(L, s, CFG_NETK_loss)),
			"%s.%s = %s has no effect with %s.loss = none; expected %s.loss = %s (or "
			"no %s)", s->label, cfg_keys[k].name, val, s->label, s->label, model,
			cfg_keys[k].name);
}

/* The keys [net] gives that cannot act: errors and warnings as loss_under_none says. */
static int check_net_effects(struct loader *L, const struct linktab *t, const struct scope *s)
{
	int r = 0;

	for (int k = 0; k < CFG_NNET; k++) {
		const char *needs;
		char val[64];

		if (!(s->given & BIT(k)) || !net_key_changed(&s->n, k))
			continue;
		needs = net_default_needs(t, s, k);
		if (!needs)
			continue;
		if (is_loss_param(k) && s->n.loss == LOSS_NONE) {
			r = loss_under_none(L, s, k);
			continue;
		}
		cfg_key_format(&cfg_keys[k], &s->n, val, sizeof(val));
		cfg_warn(L, scope_loc(L, s, k), "%s.%s = %s has no effect: it acts only with %s",
			 s->label, cfg_keys[k].name, val, needs);
	}
	return r;
}

/* A key that link section s->link gives but that decides no link. */
static void warn_overridden(struct loader *L, const struct scope *s, int k)
{
	const struct cfg_link *lk = &L->c->links[s->link];
	char val[64];
	bool any = false;

	if (!net_key_changed(&lk->net, k))
		return;
	for (int src = 0; src < L->c->run.workers && !any; src++)
		for (int dst = 0; dst < L->c->run.workers && !any; dst++)
			any = cfg_link_covers(lk, src, dst);
	cfg_key_format(&cfg_keys[k], &lk->net, val, sizeof(val));
	if (!any)
		cfg_warn(L, L->link_key_loc[s->link][k], "%s.%s = %s has no effect: [%s] covers "
			 "no link of run.workers = %d", s->label, cfg_keys[k].name, val, s->label,
			 L->c->run.workers);
	else
		cfg_warn(L, L->link_key_loc[s->link][k], "%s.%s = %s has no effect: a more "
			 "specific section gives %s on every link [%s] covers", s->label,
			 cfg_keys[k].name, val, cfg_keys[k].name, s->label);
}

/* The keys link section s->link gives that cannot act on any link where they decide:
 * a loss parameter under loss = none on any of them is an error, the rest warnings. */
static int check_link_effects(struct loader *L, const struct linktab *t, struct scope *s)
{
	int err = 0;

	for (int k = 0; k < CFG_NNET; k++) {
		const struct resolved *rep = NULL, *none = NULL;
		bool decides = false, acts = false;
		const char *needs;
		char val[64];

		if (!(s->given & BIT(k)))
			continue;
		for (int i = 0; i < t->n; i++) {
			const struct resolved *r = &t->r[i];

			if (r->win[k] != s->link)
				continue;
			decides = true;
			if (!net_key_changed(&r->n, k))
				continue;
			needs = net_key_needs(&r->n, k);
			if (!needs)
				acts = true;
			else if (!rep)
				rep = r;
			if (needs && is_loss_param(k) && r->n.loss == LOSS_NONE && !none)
				none = r;
		}
		if (!decides) {
			warn_overridden(L, s, k);
			continue;
		}
		if (none || (rep && !acts)) {
			s->n = (none ? none : rep)->n;
			s->win = (none ? none : rep)->win;
		}
		if (none) {
			err = loss_under_none(L, s, k);
			continue;
		}
		if (acts || !rep)
			continue;
		cfg_key_format(&cfg_keys[k], &s->n, val, sizeof(val));
		cfg_warn(L, scope_loc(L, s, k), "%s.%s = %s has no effect: it acts only with %s",
			 s->label, cfg_keys[k].name, val, net_key_needs(&s->n, k));
	}
	return err;
}

/* tc's rules for reorder (iproute2 q_netem.c, netem_parse_opt): reordering needs a
 * latency to reorder against (tc looks at the latency alone, not the jitter), and a gap
 * needs a reorder probability. */
static int check_reorder(struct loader *L, const struct scope *s)
{
	const struct net_cfg *n = &s->n;
	char a[32];

	if (n->reorder > 0 && n->latency == 0) {
		cfg_key_format(&cfg_keys[CFG_NETK_reorder], n, a, sizeof(a));
		return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_reorder),
						 scope_loc(L, s, CFG_NETK_latency)),
				"%s.reorder = %s needs a latency to reorder against, but "
				"%s.latency is 0 (tc: \"reordering not possible without "
				"specifying some delay\"); expected latency > 0, or no reorder",
				s->label, a, s->label);
	}
	if (n->reorder_gap > 0 && n->reorder == 0) {
		cfg_key_format(&cfg_keys[CFG_NETK_reorder_gap], n, a, sizeof(a));
		return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_reorder_gap),
						 scope_loc(L, s, CFG_NETK_reorder)),
				"%s.reorder_gap = %s without %s.reorder (tc: \"gap specified "
				"without reorder probability\"); expected reorder > 0, or no "
				"reorder_gap", s->label, a, s->label);
	}
	return 0;
}

/* tc's rule for ecn (iproute2 q_netem.c, netem_parse_opt): "ecn requested without loss
 * model" when no loss is given or "loss random" is 0% (opt.loss <= 0 and no gemodel or
 * state).  A series is a Bernoulli loss over time: it is one. */
static int check_ecn(struct loader *L, const struct scope *s)
{
	const struct net_cfg *n = &s->n;

	if (!n->ecn || n->series[0] || n->loss == LOSS_GILBERT || n->loss == LOSS_STATE ||
	    (n->loss == LOSS_BERNOULLI && n->loss_p > 0))
		return 0;
	return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_ecn),
					 cfg_loc_later(scope_loc(L, s, CFG_NETK_loss),
						       scope_loc(L, s, CFG_NETK_loss_p))),
			"%s.ecn = true without a loss model to mark in place of (%s.loss = %s%s; "
			"tc: \"ecn requested without loss model\"); expected loss = bernoulli "
			"with loss_p > 0, gilbert or state, or no ecn", s->label, s->label,
			cfg_loss_names[n->loss], n->loss == LOSS_BERNOULLI ? ", loss_p = 0" : "");
}

/* tc's rule for a table: "distribution specified but no latency and jitter values";
 * then the table itself, read once (emu/net/dist.h), its errors naming the file. */
static int check_distribution(struct loader *L, const struct scope *s)
{
	const struct net_cfg *n = &s->n;
	char err[512];
	loc_t at = scope_loc(L, s, n->distribution == DIST_TABLE ?
				   CFG_NETK_distribution_table : CFG_NETK_distribution);

	if (n->distribution == DIST_UNIFORM)
		return 0;
	if (n->latency == 0 || n->jitter == 0)
		return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_distribution),
						 cfg_loc_later(scope_loc(L, s, CFG_NETK_latency),
							       scope_loc(L, s, CFG_NETK_jitter))),
				"%s.distribution = %s needs both a latency and a jitter, but "
				"%s.%s is 0 (tc: \"distribution specified but no latency and "
				"jitter values\"); expected latency and jitter > 0, or "
				"distribution = uniform", s->label, cfg_dist_names[n->distribution],
				s->label, n->latency == 0 ? "latency" : "jitter");
	if (net_dist_load(n->distribution, n->distribution_table, err, sizeof(err)))
		return cfg_fail(L, at, "%s.distribution = %s: %s", s->label,
				cfg_dist_names[n->distribution], err);
	return 0;
}

/* tc's rules for a slot (iproute2 q_netem.c, netem_parse_opt): "slot MIN MAX" with MAX
 * below MIN is illegal, and "slot distribution" needs a positive jitter; then the table,
 * read once as the jitter's. */
static int check_slot(struct loader *L, const struct scope *s)
{
	const struct net_cfg *n = &s->n;
	char a[32], b[32], err[512];

	if (n->slot_max < n->slot_min) {
		cfg_key_format(&cfg_keys[CFG_NETK_slot_max], n, a, sizeof(a));
		cfg_key_format(&cfg_keys[CFG_NETK_slot_min], n, b, sizeof(b));
		return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_slot_max),
						 scope_loc(L, s, CFG_NETK_slot_min)),
				"%s.slot_max = %s is below %s.slot_min = %s (tc: Illegal \"slot "
				"max_delay\"); expected slot_max >= slot_min", s->label, a, s->label,
				b);
	}
	if (n->slot_distribution == DIST_UNIFORM)
		return 0;
	if (n->slot_jitter == 0)
		return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_slot_distribution),
						 scope_loc(L, s, CFG_NETK_slot_jitter)),
				"%s.slot_distribution = %s needs a slot_jitter, but %s.slot_jitter "
				"is 0 (tc: \"Non-positive jitter\"); expected slot_jitter > 0, or "
				"slot_distribution = uniform", s->label,
				cfg_dist_names[n->slot_distribution], s->label);
	if (net_dist_load(n->slot_distribution, NULL, err, sizeof(err)))
		return cfg_fail(L, scope_loc(L, s, CFG_NETK_slot_distribution),
				"%s.slot_distribution = %s: %s", s->label,
				cfg_dist_names[n->slot_distribution], err);
	return 0;
}

/* A delivery trace replaces the bandwidth, a time series the Bernoulli loss and the
 * latency (emu/net/trace.h): read each once, their errors naming file and line. */
static int check_traces(struct loader *L, const struct scope *s)
{
	const struct net_cfg *n = &s->n;
	char err[512];

	if (n->trace[0] && n->bandwidth > 0) {
		char a[32];

		cfg_key_format(&cfg_keys[CFG_NETK_bandwidth], n, a, sizeof(a));
		return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_trace),
						 scope_loc(L, s, CFG_NETK_bandwidth)),
				"%s.trace and %s.bandwidth = %s: a trace is the link's capacity; "
				"expected bandwidth = 0bit with a trace", s->label, s->label, a);
	}
	if (n->series[0] && (n->loss == LOSS_GILBERT || n->loss == LOSS_STATE))
		return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_series),
						 scope_loc(L, s, CFG_NETK_loss)),
				"%s.series gives Bernoulli loss over time, but %s.loss = %s; "
				"expected loss = none or bernoulli with a series", s->label,
				s->label, cfg_loss_names[n->loss]);
	if (n->trace[0] && net_trace_load(n->trace, err, sizeof(err)))
		return cfg_fail(L, scope_loc(L, s, CFG_NETK_trace), "%s.trace: %s", s->label, err);
	if (n->series[0] && net_series_load(n->series, err, sizeof(err)))
		return cfg_fail(L, scope_loc(L, s, CFG_NETK_series), "%s.series: %s", s->label,
				err);
	return 0;
}

/* Most a unit's jitter can take off the latency: a draw is at least -1 sigma (uniform)
 * or the table's least value over 8192 (net_dist_floor; the table is loaded by
 * check_distribution first). */
int64_t cfg_earliest_delay(const struct net_cfg *n)
{
	int64_t d;

	/* a reordered unit is sent at once, skipping latency and jitter */
	if (n->reorder > 0)
		return 0;
	int64_t lat = n->latency;
	const struct net_series *s = n->series[0] ? net_series_find(n->series) : NULL;

	for (int i = 0; s && i < s->n; i++)	/* a series: its least latency */
		lat = i == 0 || s->row[i].latency < lat ? s->row[i].latency : lat;
	if (n->jitter == 0)
		return lat;
	/* net.c's delay_of: latency + jitter * z rounded, never below 0 */
	d = lat - (int64_t)llround((double)n->jitter *
				   net_dist_floor(n->distribution, n->distribution_table));
	return d > 0 ? d : 0;
}

/* What cannot work on a link set up as s->n. */
static int check_link_model(struct loader *L, const struct scope *s)
{
	const struct net_cfg *n = &s->n;
	char a[32], b[32];
	int r = 0;

	/* independent faults, each reported */
	if (check_rto(L, n, s->label, scope_loc(L, s, CFG_NETK_rto),
		      scope_loc(L, s, CFG_NETK_rto_max)))
		r = -EINVAL;
	if (check_exits(L, s))
		r = -EINVAL;
	if (check_reorder(L, s))
		r = -EINVAL;
	if (check_ecn(L, s))
		r = -EINVAL;
	if (check_distribution(L, s) || check_slot(L, s) || check_traces(L, s))
		return -EINVAL;
	/* the window is simulated through the switches' ports (emu/net/tcp.h) */
	if (n->transport == TRANSPORT_TCP && L->c->topology.shape == SHAPE_NONE)
		return cfg_fail(L, scope_loc(L, s, CFG_NETK_transport), "%s.transport = tcp "
				"with topology.shape = none; expected topology.shape = switch or "
				"hosts (the ports carry its connections)", s->label);
	if (n->transport == TRANSPORT_UNRELIABLE && n->timeout < cfg_earliest_delay(n)) {
		char e[32], how[160];

		cfg_key_format(&cfg_keys[CFG_NETK_timeout], n, a, sizeof(a));
		cfg_key_format(&cfg_keys[CFG_NETK_latency], n, b, sizeof(b));
		units_fmt_duration(cfg_earliest_delay(n), e, sizeof(e));
		how[0] = 0;
		if (n->jitter > 0) {
			char j[32];

			cfg_key_format(&cfg_keys[CFG_NETK_jitter], n, j, sizeof(j));
			snprintf(how, sizeof(how), " with %s.jitter = %s (%s)", s->label, j,
				 cfg_dist_names[n->distribution]);
		}
		return cfg_fail(L, cfg_loc_later(scope_loc(L, s, CFG_NETK_timeout),
						 cfg_loc_later(scope_loc(L, s, CFG_NETK_latency),
							       scope_loc(L, s, CFG_NETK_jitter))),
				"%s.timeout = %s is shorter than the earliest a unit can arrive, "
				"%s, from %s.latency = %s%s: a receiver would give up before any "
				"unit could arrive; expected timeout >= %s", s->label, a, e,
				s->label, b, how, e);
	}
	return r;
}

int cfg_check_event_model(struct loader *L, const char *label, int src, int dst,
			  const struct net_cfg *n, uint64_t set, loc_t loc)
{
	int win[CFG_NNET], tie[CFG_NNET];
	struct scope s = { .link = -1, .win = win, .n = *n, .ev_set = set, .ev_loc = loc };

	snprintf(s.label, sizeof(s.label), "%s", label);
	cfg_link_winners(L->c, src, dst, win, tie);
	return check_link_model(L, &s);
}

/* [net], then each [link ...] section in order: the model of every link it is the most
 * specific section for, then its keys' effects. */
static int check_links(struct loader *L, const struct linktab *t)
{
	const struct cfg *c = L->c;
	struct scope s = { .label = "net", .link = -1, .given = c->net_set, .n = c->net };
	bool net_ok;
	int r = 0;

	cfg_resolve_net(&s.n, c->net_set);
	net_ok = check_link_model(L, &s) == 0;
	if (!net_ok || check_net_effects(L, t, &s))
		r = -EINVAL;
	for (int i = 0; i < c->nlinks; i++) {
		s.link = i;
		s.given = c->links[i].set;
		s.win = NULL;
		cfg_link_name(&c->links[i], s.label, sizeof(s.label));
		/* a section's links share their faults: the first link's are its own; and where
		 * [net]'s model failed, a section would only repeat what it inherits */
		for (int j = 0; j < t->n && net_ok; j++) {
			if (t->r[j].owner != i)
				continue;
			s.win = t->r[j].win;
			s.n = t->r[j].n;
			if (check_link_model(L, &s)) {
				r = -EINVAL;
				break;
			}
		}
		if (check_link_effects(L, t, &s))
			r = -EINVAL;
	}
	return r;
}

static int check_net(struct loader *L)
{
	struct linktab t;
	int r;

	if (build_linktab(L->c, &t)) {
		/* the one message that matters then: it replaces the list */
		L->failed = L->stop = 1;
		L->nerr = L->nshown = 1;
		snprintf(L->err, L->errlen, "%s: out of memory", L->path);
		return -ENOMEM;
	}
	imply_bernoulli(L, &t);
	resolve_all(L->c, &t);
	r = check_links(L, &t);
	free(t.r);
	return r;
}

/* --- the other sections: keys that act only with some setting ------------------------ */

/* The algorithm whose own section this is (named as it), or -1. */
static int algo_of_section(const char *section)
{
	for (int i = 0; cfg_algo_names[i]; i++)
		if (!strcmp(cfg_algo_names[i], section))
			return i;
	return -1;
}

/* Whether key section.name acts in c; else the setting it needs. */
static const char *key_needs(const struct cfg *c, const char *section, const char *name)
{
	enum cfg_algo a = c->train.algorithm;
	enum cfg_dataset d = c->data.dataset;
	bool synthetic = d == DATA_GAUSSIAN || d == DATA_LINREG;

	if (!strcmp(section, "train")) {
		if (!strcmp(name, "compute_scale") && c->train.compute != COMPUTE_MEASURED)
			return "train.compute = measured";
		if ((!strcmp(name, "device_flops") || !strcmp(name, "op_overhead")) &&
		    c->train.compute != COMPUTE_FLOPS)
			return "train.compute = flops";
		enum lr_kind k = c->train.lr_schedule;

		if (!strcmp(name, "lr_end") && k != LR_COSINE && k != LR_LINEAR)
			return "train.lr_schedule = cosine or linear";
		if (!strcmp(name, "lr_power") && k != LR_POLY)
			return "train.lr_schedule = poly";
		if ((!strcmp(name, "decay_epochs") || !strcmp(name, "decay_factor")) &&
		    k != LR_STEP)
			return "train.lr_schedule = step";
		if (!strncmp(name, "warmup_", 7) && k == LR_ONECYCLE)
			return "a train.lr_schedule other than onecycle (its first phase is its "
			       "warm-up)";
		if (!strncmp(name, "adam_", 5) &&
		    (c->train.optimizer == OPTIM_SGD || c->train.optimizer == OPTIM_LARS))
			return "train.optimizer = adam, adamw or lamb";
		if (!strncmp(name, "lars_", 5) && c->train.optimizer != OPTIM_LARS)
			return "train.optimizer = lars";
		if ((!strcmp(name, "momentum") || !strcmp(name, "nesterov")) &&
		    c->train.optimizer != OPTIM_SGD && c->train.optimizer != OPTIM_LARS)
			return "train.optimizer = sgd or lars (adam's momentum is adam_beta1)";
		if (!strcmp(name, "nesterov") && c->train.momentum == 0)
			return "train.momentum > 0";
		if ((!strcmp(name, "momentum") || !strcmp(name, "weight_decay") ||
		     !strcmp(name, "nesterov")) && a == ALGO_SIGNUM)
			return "an algorithm other than signum (signum has signum.beta and "
			       "signum.weight_decay)";
	} else if (!strcmp(section, "data")) {
		if (!strcmp(name, "alpha") && c->data.shard != SHARD_DIRICHLET)
			return "data.shard = dirichlet";
		if ((!strcmp(name, "synthetic_size") || !strcmp(name, "dim")) && !synthetic)
			return "data.dataset = gaussian or linreg";
		if (!strcmp(name, "classes") && d != DATA_GAUSSIAN)
			return "data.dataset = gaussian";
		if (!strcmp(name, "noise") && d != DATA_LINREG)
			return "data.dataset = linreg";
		if (!strcmp(name, "seq_len") && d != DATA_TEXT)
			return "data.dataset = text";
		if (!strcmp(name, "dir") && synthetic)
			return "a data set read from files (fashion-mnist, cifar10, text)";
		if (!strcmp(name, "plugin") && a != ALGO_PLUGIN)
			return "train.algorithm = plugin";
	} else if (strcmp(section, "jointspar") && algo_of_section(section) >= 0 &&
		   algo_of_section(section) != (int)a) {
		static char need[48];	/* used at once by the caller */

		snprintf(need, sizeof(need), "train.algorithm = %s", section);
		return need;
	} else if (!strcmp(section, "topology") && strcmp(name, "shape") &&
		   c->topology.shape == SHAPE_NONE) {
		return "topology.shape = switch or hosts";
	} else if (!strcmp(section, "topology") && c->topology.shape == SHAPE_SWITCH &&
		   (!strcmp(name, "gpus_per_host") || !strcmp(name, "hosts_per_leaf") ||
		    !strcmp(name, "oversubscription") || !strncmp(name, "fabric_", 7))) {
		return "topology.shape = hosts";
	} else if (!strcmp(section, "topology") && !strcmp(name, "oversubscription") &&
		   c->topology.hosts_per_leaf == 0) {
		return "topology.hosts_per_leaf > 0 (leaves joined by a spine)";
	} else if (!strcmp(section, "jointspar")) {
		if ((!strcmp(name, "trust") || !strcmp(name, "lars_eps")) && a != ALGO_JOINTSPAR_LARS)
			return "train.algorithm = jointspar-lars";
		if (a != ALGO_JOINTSPAR && a != ALGO_JOINTSPAR_LARS)
			return "train.algorithm = jointspar or jointspar-lars";
	}
	return NULL;
}

static void check_other_effects(struct loader *L)
{
	const struct cfg *c = L->c;
	struct cfg *d = malloc(sizeof(*d));	/* the defaults, to see what was changed */

	if (!d)
		return;		/* warnings only: nothing is lost without them */
	cfg_defaults(d);
	for (size_t i = CFG_NNET; i < CFG_WK0; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		const char *needs;
		char val[CFG_STR + 8];

		if (!L->key_loc[i] || !memcmp((const char *)c + k->off, (const char *)d + k->off,
					      k->size))
			continue;
		needs = key_needs(c, k->section, k->name);
		if (!needs)
			continue;
		cfg_key_format(k, c, val, sizeof(val));
		cfg_warn(L, L->key_loc[i], "%s.%s = %s has no effect: it acts only with %s",
			 k->section, k->name, val, needs);
	}
	free(d);
}

/* train.algorithm = plugin names a file, kept as an absolute path (config.ini resumes
 * from anywhere); [plugin] keys act only with it.  Its keys' own checks are the
 * plugin's declaration's (emu/algo/algo_plugin_host.c). */
static int check_plugin(struct loader *L)
{
	struct cfg *c = L->c;
	size_t ia, ip;
	char abs[PATH_MAX];

	key_of("train", "algorithm", &ia);
	key_of("train", "plugin", &ip);
	if (c->train.algorithm != ALGO_PLUGIN) {
		if (c->plugin.n)
			cfg_warn(L, c->plugin.key[0].line, "[plugin] keys have no effect: they act "
				 "only with train.algorithm = plugin");
		return 0;
	}
	if (!c->train.plugin[0])
		return cfg_fail(L, L->key_loc[ia], "train.algorithm = plugin without "
				"train.plugin; expected the path of the plugin's shared object");
	if (!realpath(c->train.plugin, abs))
		return cfg_fail(L, L->key_loc[ip], "train.plugin = %s: %s", c->train.plugin,
				strerror(errno));
	if (strlen(abs) >= sizeof(c->train.plugin))
		return cfg_fail(L, L->key_loc[ip], "train.plugin = %s: its absolute path is "
				"longer than %zu characters", c->train.plugin,
				sizeof(c->train.plugin) - 1);
	snprintf(c->train.plugin, sizeof(c->train.plugin), "%s", abs);
	return 0;
}

/* The switch and the hosts resolve each phase's units of every worker at once (boards,
 * xchg_port.c); a ring's workers run their rounds apart. */
static int check_ring(struct loader *L)
{
	const struct cfg *c = L->c;
	size_t is;

	key_of("topology", "shape", &is);
	if (c->train.algorithm != ALGO_RING || c->topology.shape == SHAPE_NONE)
		return 0;
	return cfg_fail(L, L->key_loc[is], "topology.shape = %s with train.algorithm = ring: "
			"a switch or hosts resolve every worker's units of a phase together, "
			"and a ring's workers run their rounds apart; expected shape = none",
			cfg_shape_names[c->topology.shape]);
}

int cfg_validate(struct loader *L)
{
	const struct cfg *c = L->c;
	size_t iw, ia, in;
	int r = 0;

	key_of("run", "workers", &iw);
	key_of("signum", "adversaries", &ia);
	key_of("run", "name", &in);
	/* independent checks: each reports its faults, so that one run lists them all */
	if (strchr(c->run.name, '/') || !strcmp(c->run.name, ".") || !strcmp(c->run.name, ".."))
		r = cfg_fail(L, L->key_loc[in], "run.name = %s is not a plain name; expected a "
			     "name without '/', not . or .. (run.output chooses the folder)",
			     c->run.name);
	if (cfg_validate_sections(L))
		r = -EINVAL;
	if (c->signum.adversaries >= c->run.workers)
		r = cfg_fail(L, cfg_loc_later(L->key_loc[iw], L->key_loc[ia]),
			     "signum.adversaries = %d with run.workers = %d; expected fewer "
			     "adversaries than workers", c->signum.adversaries, c->run.workers);
	if (check_net(L))
		r = -EINVAL;
	if (check_plugin(L))
		r = -EINVAL;
	if (check_ring(L))
		r = -EINVAL;
	if (cfg_check_model(L))
		r = -EINVAL;
	if (cfg_check_lr(L))
		r = -EINVAL;
	if (L->stop)
		return -EINVAL;
	if (cfg_validate_events(L))
		r = -EINVAL;
	if (!r)
		check_other_effects(L);
	return r;
}
