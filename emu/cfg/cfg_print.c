/* emu/cfg/cfg_print.c — the resolved configuration as INI (emu check) and the key
 * reference (emu help keys, docs/configuration.md), both generated from the key table. */
#include "emu/cfg/cfg.h"

#include <errno.h>
#include <string.h>

#include "emu/cfg/cfg_event.h"
#include "emu/cfg/cfg_help_data.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/cfg_loader.h"
#include "emu/cfg/units.h"
#include "emu/net/net.h"

/* Writes s as lines of at most width characters, each starting with prefix. */
static void wrap(FILE *f, const char *prefix, const char *s, int width)
{
	int room = width - (int)strlen(prefix);

	while (*s) {
		int n = (int)strlen(s);

		if (n > room) {
			n = room;
			while (n > 0 && s[n] != ' ')
				n--;
			if (n == 0)
				n = room;
		}
		fprintf(f, "%s%.*s\n", prefix, n, s);
		s += n;
		while (*s == ' ')
			s++;
	}
}

static const char *def_text(const struct cfg_key *k)
{
	if (k->def)
		return *k->def ? k->def : "(empty)";
	return !strcmp(k->name, "ge_r") ? "1 - loss_p" : !strcmp(k->name, "p31") ? "1 - p13" :
	       !strcmp(k->name, "slot_max") ? "slot_min" : "?";
}

/* The keys of section with their values in base, with help comments or not.  own: bit j
 * for the section's j-th key given; the others are printed as comments (others = 1), so
 * that what inherits or derives them does so again when the output is read back, or not
 * at all (others = 0). */
#define BIT(k) ((uint64_t)1 << (k))
#define ALL (~(uint64_t)0)

static void print_keys(FILE *f, const char *section, const void *base, int comments,
		       uint64_t own, int others)
{
	char val[CFG_STR + UNITS_BUF], range[512], line[1024];
	int j = 0;

	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		bool mine;

		if (strcmp(k->section, section))
			continue;
		mine = own & BIT(j++);
		if (!mine && !others)
			continue;
		cfg_key_format(k, base, val, sizeof(val));
		if (comments) {
			cfg_key_range_text(k, range, sizeof(range));
			snprintf(line, sizeof(line), "%s [%s%sdefault %s]", k->help, range,
				 *range ? "; " : "", def_text(k));
			wrap(f, "# ", line, 78);
		}
		fprintf(f, "%s%s = %s\n", mine ? "" : "# ", k->name, val);
	}
}

/* A section that covers one link prints its own keys and, in comments, the others as the
 * link resolves them; a group prints its own keys only (they are not the same on every
 * link it covers).  Printed whole, a link would not inherit [net] when read back, and a
 * [net] key it used would seem to have no effect. */
static void print_link(const struct cfg *c, const struct cfg_link *lk, FILE *f)
{
	struct cfg_ids s, d;
	struct net_cfg n;
	char name[64];

	cfg_link_ids(lk, &s, &d);
	cfg_link_name(lk, name, sizeof(name));
	if (!s.any && !d.any && s.first == s.last && d.first == d.last) {
		cfg_link_net(c, lk->src, lk->dst, &n);
		fprintf(f, "\n# the link %d -> %d: its own keys, and in comments the others as it "
			"resolves them\n[%s]\n", lk->src, lk->dst, name);
		print_keys(f, "net", &n, 0, lk->set, 1);
		return;
	}
	fprintf(f, "\n# a group of links: its own keys; more specific sections override them "
		"(emu check --links\n# prints every link as resolved)\n[%s]\n", name);
	print_keys(f, "net", &lk->net, 0, lk->set, 0);
}

/* As print_link, for a [worker ...] section. */
static void print_worker(const struct cfg *c, const struct cfg_worker_section *ws, FILE *f)
{
	char name[32];

	cfg_worker_name(ws, name, sizeof(name));
	if (!ws->ids.any && ws->ids.first == ws->ids.last && ws->ids.first < c->run.workers) {
		fprintf(f, "\n# worker %d: its own keys, and in comments the others as it resolves "
			"them\n[%s]\n", ws->ids.first, name);
		print_keys(f, "worker", &c->worker[ws->ids.first], 0, ws->set, 1);
		return;
	}
	fprintf(f, "\n# a group of workers: its own keys; more specific sections override "
		"them\n[%s]\n", name);
	print_keys(f, "worker", &ws->m, 0, ws->set, 0);
}

/* An [event NAME] section: the keys it gives (emu check prints it resolved, events.c). */
static void print_event(const struct cfg_event *e, FILE *f)
{
	char val[1024];

	fprintf(f, "\n# an event (docs/events.md)\n[event %s]\n", e->name);
	for (int k = 0; k < CFG_NEVK; k++) {
		if (!(e->set & 1u << k))
			continue;
		cfg_event_format(e, k, val, sizeof(val));
		fprintf(f, "%s = %s\n", cfg_event_keys[k], val);
	}
}

int cfg_print(const struct cfg *c, FILE *f)
{
	fprintf(f, "# emu configuration as resolved by 'emu check': every key, with defaults\n"
		   "# filled in; 'emu check' reads it back to the same configuration.\n");
	for (int s = 0; cfg_sections[s]; s++) {
		const char *sect = cfg_sections[s];

		if (!strcmp(sect, "link")) {
			for (int i = 0; i < c->nlinks; i++)
				print_link(c, &c->links[i], f);
			continue;
		}
		if (!strcmp(sect, "worker")) {
			for (int i = 0; i < c->nworker_sections; i++)
				print_worker(c, &c->worker_sections[i], f);
			continue;
		}
		fprintf(f, "\n[%s]\n", sect);
		if (!strcmp(sect, "plugin")) {	/* as given: the plugin has the defaults */
			for (int i = 0; i < c->plugin.n; i++)
				fprintf(f, "%s = %s\n", c->plugin.key[i].name, c->plugin.key[i].value);
			continue;
		}
		if (!strcmp(sect, "model")) {	/* as given, in order: the layers */
			for (int i = 0; i < c->model.n; i++)
				fprintf(f, "%s = %s\n", c->model.l[i].name, c->model.l[i].text);
			continue;
		}
		/* ge_r, p31 and slot_max derive from loss_p, p13 and slot_min unless given:
		 * printed as settings, they would stop deriving, in [net] and in every link */
		if (!strcmp(sect, "net"))
			print_keys(f, sect, &c->net, 1, ~(BIT(CFG_NETK_ge_r) | BIT(CFG_NETK_p31) |
							 BIT(CFG_NETK_slot_max)) | c->net_set, 1);
		else
			print_keys(f, sect, c, 1, ALL, 1);
	}
	for (int i = 0; i < c->nevents; i++)
		print_event(&c->events[i], f);
	return ferror(f) ? -EIO : 0;
}

/* --- emu check --links: every link and worker as resolved --------------------------- */

/* A probability as tc writes it: 1%, 0.5%. */
static void pct(double p, char *buf, size_t n)
{
	snprintf(buf, n, "%.6g%%", p * 100);
}

/* tc's CORRELATION argument of the draw before it, where one is set */
static void print_corr(FILE *f, double c)
{
	char a[32];

	if (c > 0) {
		pct(c, a, sizeof(a));
		fprintf(f, " correlation %s", a);
	}
}

static void print_loss(FILE *f, const struct net_cfg *n)
{
	char a[32], b[32], d[32], e[32], g[32];

	pct(n->loss_p, a, sizeof(a));
	switch (n->loss) {
	case LOSS_NONE:
		fprintf(f, " loss none");
		break;
	case LOSS_BERNOULLI:
		fprintf(f, " loss bernoulli %s", a);
		print_corr(f, n->loss_correlation);
		break;
	case LOSS_GILBERT:
		pct(n->ge_r, b, sizeof(b));
		pct(n->ge_1h, d, sizeof(d));
		pct(n->ge_1k, e, sizeof(e));
		fprintf(f, " loss gilbert p %s r %s 1-h %s 1-k %s", a, b, d, e);
		break;
	case LOSS_STATE:
		pct(n->p13, a, sizeof(a));
		pct(n->p31, b, sizeof(b));
		pct(n->p32, d, sizeof(d));
		pct(n->p23, e, sizeof(e));
		pct(n->p14, g, sizeof(g));
		fprintf(f, " loss state p13 %s p31 %s p32 %s p23 %s p14 %s", a, b, d, e, g);
		break;
	}
	if (n->ecn)
		fprintf(f, " ecn");
}

/* The value of net key k in n as the table writes it. */
static const char *val(const struct net_cfg *n, int k, char *buf, size_t size)
{
	cfg_key_format(&cfg_keys[k], n, buf, size);
	return buf;
}

/* tc's slot MIN MAX or slot distribution NAME DELAY JITTER, then the budget. */
static void print_slot(FILE *f, const struct net_cfg *n)
{
	char a[32], b[32];

	if (n->slot_distribution != DIST_UNIFORM)
		fprintf(f, " slot distribution %s %s %s", cfg_dist_names[n->slot_distribution],
			val(n, CFG_NETK_slot_delay, a, sizeof(a)),
			val(n, CFG_NETK_slot_jitter, b, sizeof(b)));
	else
		fprintf(f, " slot %s %s", val(n, CFG_NETK_slot_min, a, sizeof(a)),
			val(n, CFG_NETK_slot_max, b, sizeof(b)));
	if (n->slot_packets > 0)
		fprintf(f, " packets %d", n->slot_packets);
	if (n->slot_bytes > 0)
		fprintf(f, " bytes %s", val(n, CFG_NETK_slot_bytes, a, sizeof(a)));
}

/* netem's extras, only where they are set. */
static void print_extras(FILE *f, const struct net_cfg *n)
{
	char a[32];

	if (n->duplicate > 0) {
		pct(n->duplicate, a, sizeof(a));
		fprintf(f, " duplicate %s", a);
		print_corr(f, n->duplicate_correlation);
	}
	if (n->reorder > 0) {
		pct(n->reorder, a, sizeof(a));
		/* tc's gap 0 with a reorder probability is 1 */
		fprintf(f, " reorder %s", a);
		print_corr(f, n->reorder_correlation);
		fprintf(f, " gap %lld", (long long)(n->reorder_gap ? n->reorder_gap : 1));
	}
	if (n->corrupt > 0) {
		pct(n->corrupt, a, sizeof(a));
		fprintf(f, " corrupt %s", a);
		print_corr(f, n->corrupt_correlation);
		if (n->corrupt_detect == CORRUPT_DETECT_CHECKSUM)
			fprintf(f, " checksum");
	}
	if (n->limit > 0)
		fprintf(f, " limit %lld", (long long)n->limit);
	if (net_slot_on(n))
		print_slot(f, n);
}

static void print_link_line(FILE *f, int src, int dst, const struct net_cfg *n)
{
	char a[32], b[32], d[32];

	fprintf(f, "# %d->%d", src, dst);
	print_loss(f, n);
	if (n->unit == UNIT_PACKET)
		fprintf(f, " unit packet mtu %s", val(n, CFG_NETK_mtu, a, sizeof(a)));
	fprintf(f, " latency %s jitter %s", val(n, CFG_NETK_latency, a, sizeof(a)),
		val(n, CFG_NETK_jitter, b, sizeof(b)));
	if (n->jitter > 0) {
		print_corr(f, n->delay_correlation);
		fprintf(f, " %s", n->distribution == DIST_TABLE ? n->distribution_table :
			cfg_dist_names[n->distribution]);
	}
	if (n->trace[0])
		fprintf(f, " trace %s", n->trace);
	else
		fprintf(f, " bandwidth %s", n->bandwidth > 0 ?
			val(n, CFG_NETK_bandwidth, a, sizeof(a)) : "unlimited");
	if (n->series[0])
		fprintf(f, " series %s", n->series);
	if (n->transport != TRANSPORT_UNRELIABLE)
		fprintf(f, " %s rto %s rto_max %s max_retries %d",
			n->transport == TRANSPORT_TCP ? "tcp" : "reliable",
			val(n, CFG_NETK_rto, a, sizeof(a)), val(n, CFG_NETK_rto_max, b, sizeof(b)),
			n->max_retries);
	else
		fprintf(f, " unreliable timeout %s", val(n, CFG_NETK_timeout, d, sizeof(d)));
	print_extras(f, n);
	fputc('\n', f);
}

int cfg_print_links(const struct cfg *c, FILE *f)
{
	struct cfg_worker_model def;
	struct net_cfg n;
	char a[32], b[32];

	fprintf(f, "\n# every directed link as resolved (emu check --links)\n");
	for (int src = 0; src < c->run.workers; src++) {
		for (int dst = 0; dst < c->run.workers; dst++) {
			if (src == dst)
				continue;
			cfg_link_net(c, src, dst, &n);
			print_link_line(f, src, dst, &n);
		}
	}
	cfg_worker_default(&def);
	fprintf(f, "# the workers whose compute model is not the default (slowdown 1, "
		"compute_jitter 0s)\n");
	for (int w = 0; w < c->run.workers; w++) {
		const struct cfg_worker_model *m = &c->worker[w];

		/* (a distribution without jitter changes nothing) */
		if (m->slowdown == def.slowdown && m->jitter == 0)
			continue;
		cfg_key_format(&cfg_keys[CFG_WK0 + CFG_WK_slowdown], m, a, sizeof(a));
		units_fmt_duration(m->jitter, b, sizeof(b));
		fprintf(f, "# worker %d slowdown %s compute_jitter %s", w, a, b);
		if (m->jitter > 0)
			fprintf(f, " %s", cfg_dist_names[m->jitter_dist]);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* A section by its name or as shown: "link" or "link A-B". */
static int section_index(const char *section)
{
	for (int s = 0; s < CFG_NSECTIONS; s++)
		if (!strcmp(cfg_section_shown[s], section))
			return s;
	return cfg_section_index(section);
}

static const char event_intro[] =
	"[event NAME] (any number, NAME a plain word) is something that happens to the network "
	"or the workers for an interval of the run, in virtual time or steps: a partition "
	"(the links between groups of workers are down, both ways), links down, other [net] "
	"values on some links (a loss burst, a slower link), workers that compute slower, or "
	"workers whose processes crash (in steps or epochs) and, with for, come back. "
	"A link that is down loses every unit sent on it; a reliable sender resends until "
	"max_retries gives up. docs/events.md says which time decides";

/* The keys of [event NAME]: what each takes, and the kinds that take it. */
static void help_event(FILE *f)
{
	char line[1024];

	fprintf(f, "\n[event NAME]\n");
	wrap(f, "  ", event_intro, 100);
	for (int k = 0; k < CFG_NEVK; k++) {
		fprintf(f, "  %-15s %s\n", cfg_event_keys[k], !strcmp(cfg_event_kinds_of[k],
			"every") ? "every kind" : cfg_event_kinds_of[k]);
		snprintf(line, sizeof(line), "%s%s", cfg_event_help[k],
			 k == CFG_EVK_for || k == CFG_EVK_rejoin ? "" : "; required");
		wrap(f, "      ", line, 100);
	}
}

int cfg_help(FILE *f, const char *section)
{
	int only = section ? section_index(section) : -1;
	char range[512], line[1024];

	if (section && (!strcmp(section, "event") || !strcmp(section, "event NAME"))) {
		help_event(f);
		return 0;
	}
	if (section && only < 0)
		return -EINVAL;
	if (!section)
		fprintf(f, "Configuration keys, by INI section.  Overrides on the command line: "
			   "section.key=value\n(link A-B.key=value, link 0-7->8-15.key=value, worker "
			   "0-3.key=value for a group).  Durations\nneed a unit; probabilities take "
			   "0.05 or 5%%.\n");
	for (int s = 0; cfg_sections[s]; s++) {
		const char *sect = cfg_sections[s];

		if (section && s != only)
			continue;
		fprintf(f, "\n[%s]\n", cfg_section_shown[s]);
		wrap(f, "  ", cfg_section_intro[s], 100);
		if (!strcmp(sect, "link"))
			continue;
		for (size_t i = 0; i < cfg_nkeys; i++) {
			const struct cfg_key *k = &cfg_keys[i];

			if (strcmp(k->section, sect))
				continue;
			cfg_key_range_text(k, range, sizeof(range));
			fprintf(f, "  %-15s %-12s default %s\n", k->name, cfg_type_name(k->type),
				def_text(k));
			snprintf(line, sizeof(line), "%s.%s%s%s%s%s", k->help,
				 *cfg_type_unit(k->type) ? " Units: " : "", cfg_type_unit(k->type),
				 *cfg_type_unit(k->type) ? "." : "", *range ? " Values: " : "", range);
			wrap(f, "      ", line, 100);
		}
		if (section && !strcmp(sect, "data"))	/* emu help data: the sets themselves */
			cfg_help_datasets(f);
	}
	if (!section)
		help_event(f);
	return 0;
}

void cfg_help_markdown(FILE *f)
{
	char range[512];

	fprintf(f, "| section | key | type | unit | default | values | meaning |\n"
		   "|---|---|---|---|---|---|---|\n");
	for (int s = 0; cfg_sections[s]; s++) {
		const char *sect = cfg_sections[s];

		if (!strcmp(sect, "link")) {
			fprintf(f, "| %s | (keys of net) | | | from [net] | | %s |\n",
				cfg_section_shown[s], cfg_section_intro[s]);
			continue;
		}
		for (size_t i = 0; i < cfg_nkeys; i++) {
			const struct cfg_key *k = &cfg_keys[i];

			if (strcmp(k->section, sect))
				continue;
			cfg_key_range_text(k, range, sizeof(range));
			fprintf(f, "| %s | `%s` | %s | %s | `%s` | %s | %s |\n",
				cfg_section_shown[s], k->name,
				cfg_type_name(k->type), cfg_type_unit(k->type), def_text(k), range,
				k->help);
		}
	}
	fprintf(f, "| event NAME | (see docs/events.md) | | | | | %s |\n", event_intro);
}
