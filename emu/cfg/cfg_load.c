/* emu/cfg/cfg_load.c — INI file + command-line overrides -> struct cfg, with a message
 * naming file and line for each thing that is wrong, listed together as a compiler lists
 * them (up to CFG_MAX_ERRORS, then "N errors").  A line that is refused is skipped and
 * reading goes on; the keys of a refused section header are skipped; the checks across
 * keys (cfg_validate) run once every line was read without error.
 *
 * Debian's inih 55 hands the handler no line number, has a 200-byte line buffer that
 * silently splits longer lines, and treats an indented line as the continuation of
 * the previous value.  So inih reads through our reader (ld_read), which counts lines,
 * refuses long lines, strips indentation and comments, and handles section headers
 * itself (inih never reports empty or repeated sections); inih splits key = value. */
#include "emu/cfg/cfg.h"

#include <errno.h>
#include <math.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/cfg_sections.h"
#include "emu/net/net.h"
#include "emu/net/xchg.h"

#include "emu/cfg/cfg_loader.h"

/* The place of loc, "FILE:LINE: " or "argument N (TEXT): ", into buf. */
static size_t loc_prefix(const struct loader *L, loc_t loc, char *buf, size_t n)
{
	if (loc > 0)
		return (size_t)snprintf(buf, n, "%s:%d: ", L->path, loc);
	return (size_t)snprintf(buf, n, "argument %d (%s): ", -loc, L->args[-loc - L->argbase]);
}

/* Room kept at the end of L->err for the count line ("20 errors; ..."). */
#define SUMMARY_ROOM 96

/* Whether line is in the list already (a check that meets the same fault twice). */
static bool listed(const struct loader *L, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = L->err; (p = strstr(p, line)); p++)
		if ((p == L->err || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/* One error line into the list: what fits in L->err, less the room of the count. */
static int add_error(struct loader *L, loc_t loc, const char *fmt, va_list ap)
{
	char line[2048];
	size_t len, used;

	if (L->stop || !L->errlen)
		return L->failed = 1, -EINVAL;
	L->failed = 1;
	len = loc_prefix(L, loc, line, sizeof(line));
	if (len < sizeof(line))
		vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	if (listed(L, line))
		return -EINVAL;
	if (L->nerr == CFG_MAX_ERRORS) {
		L->truncated = 1;
		L->stop = 1;
		return -EINVAL;
	}
	L->nerr++;
	used = strlen(L->err);
	if (!used) {		/* the first error is always shown, cut if it must be */
		snprintf(L->err, L->errlen > SUMMARY_ROOM * 2 ? L->errlen - SUMMARY_ROOM :
			 L->errlen, "%s", line);
		L->shown_loc[L->nshown++] = loc;
	} else if (used + 1 + strlen(line) + SUMMARY_ROOM < L->errlen) {
		snprintf(L->err + used, L->errlen - used, "\n%s", line);
		L->shown_loc[L->nshown++] = loc;
	}
	return -EINVAL;
}

int cfg_fail(struct loader *L, loc_t loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_error(L, loc, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int cfg_fail_stop(struct loader *L, loc_t loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_error(L, loc, fmt, ap);
	va_end(ap);
	L->stop = 1;
	return -EINVAL;
}

static long loc_order(loc_t loc);

/* The errors in the order of the input (file lines, then arguments), as a compiler
 * lists them; the checks find them in another order. */
static void sort_errors(struct loader *L)
{
	char *copy = strdup(L->err), *line[CFG_MAX_ERRORS], *save = NULL;
	int order[CFG_MAX_ERRORS], n = 0;
	size_t used = 0;

	if (!copy)
		return;		/* the list stays in the order found */
	for (char *p = strtok_r(copy, "\n", &save); p && n < L->nshown;
	     p = strtok_r(NULL, "\n", &save))
		line[n++] = p;
	for (int i = 0; i < n; i++) {	/* insertion: stable, and n <= 20 */
		int j = i;

		for (; j > 0 && loc_order(L->shown_loc[order[j - 1]]) >
				loc_order(L->shown_loc[i]); j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (int i = 0; i < n && used < L->errlen; i++)
		used += (size_t)snprintf(L->err + used, L->errlen - used, "%s%s", i ? "\n" : "",
					 line[order[i]]);
	free(copy);
}

/* The count after a list of several errors, as a compiler ends one. */
static void end_errors(struct loader *L)
{
	size_t used;

	if (L->nerr < 2)
		return;
	sort_errors(L);
	used = strlen(L->err);
	if (used + 2 >= L->errlen)
		return;
	used += (size_t)snprintf(L->err + used, L->errlen - used, "\n%d errors", L->nerr);
	if (L->nshown < L->nerr && used < L->errlen)
		used += (size_t)snprintf(L->err + used, L->errlen - used, " (%d not shown)",
					 L->nerr - L->nshown);
	if (L->truncated && used < L->errlen)
		snprintf(L->err + used, L->errlen - used, "; stopped at %d: fix these and check "
			 "again", CFG_MAX_ERRORS);
}

void cfg_warn(struct loader *L, loc_t loc, const char *fmt, ...)
{
	char *w = L->c->warnings;
	size_t len = strlen(w), n = sizeof(L->c->warnings);
	va_list ap;

	if (len + 2 >= n)
		return;		/* the first warnings are the ones to read */
	len += loc_prefix(L, loc, w + len, n - len);
	if (len + 2 >= n)
		return;
	len += (size_t)snprintf(w + len, n - len, "warning: ");
	if (len + 2 >= n)
		return;
	va_start(ap, fmt);
	len += (size_t)vsnprintf(w + len, n - len - 1, fmt, ap);
	va_end(ap);
	if (len + 1 >= n)
		len = n - 2;
	w[len] = '\n';
	w[len + 1] = 0;
}

/* Later in the input wins: file lines, then arguments in order; defaults first. */
static long loc_order(loc_t loc)
{
	return loc > 0 ? loc : loc < 0 ? 1000000000L - loc : 0;
}

loc_t cfg_loc_later(loc_t a, loc_t b)
{
	return loc_order(a) >= loc_order(b) ? a : b;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

/* A section of the file by name: [link ...] and [worker ...] are handled apart, bare
 * [link] and [worker] are malformed. */
static int sect_index(const char *name)
{
	int s = cfg_section_index(name);

	return s == SECT_LINK || s == SECT_WORKER ? SECT_NONE : s;
}

/* name is word, alone or followed by blanks and more. */
static bool named(const char *name, const char *word)
{
	size_t n = strlen(word);

	return !strncmp(name, word, n) && (!name[n] || name[n] == ' ' || name[n] == '\t');
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* The ids of "link A-B" or "link S -> D" (cfg_link_sides). */
static int parse_link_name(const char *name, struct cfg_ids *src, struct cfg_ids *dst)
{
	const char *s = name + 4;

	if (*s != ' ' && *s != '\t')
		return -EINVAL;
	return cfg_link_sides(skip_blanks(s), src, dst);
}

/* "worker A", "worker A-B" or "worker *". */
static int parse_worker_name(const char *name, struct cfg_ids *ids)
{
	const char *s = name + 6, *e;

	if (*s != ' ' && *s != '\t')
		return -EINVAL;
	e = cfg_ids_parse(skip_blanks(s), true, ids);
	return e && !*skip_blanks(e) ? 0 : -EINVAL;
}

/* What no section may name: an empty range, or an id no run can have. */
static int check_ids(struct loader *L, loc_t loc, const char *name, const struct cfg_ids *ids)
{
	char why[128];

	if (cfg_ids_check(ids, why, sizeof(why)))
		return cfg_fail(L, loc, "[%s] %s", name, why);
	return 0;
}

static int find_link(const struct cfg *c, const struct cfg_ids *src, const struct cfg_ids *dst)
{
	for (int i = 0; i < c->nlinks; i++) {
		struct cfg_ids s, d;

		cfg_link_ids(&c->links[i], &s, &d);
		if (cfg_ids_equal(&s, src) && cfg_ids_equal(&d, dst))
			return i;
	}
	return -1;
}

/* [link ...]: a new section, or from an override the one that names the same links. */
static int open_link(struct loader *L, const char *name, loc_t loc)
{
	struct cfg *c = L->c;
	struct cfg_ids src, dst;
	char label[64];
	int i;

	if (parse_link_name(name, &src, &dst)) {
		if (!strchr(name, '*') && !strstr(name, "->"))
			return cfg_fail(L, loc, "malformed section [%s]; expected [link A-B] with "
					"worker ids A and B", name);
		return cfg_fail(L, loc, "malformed section [%s]; expected [link A-B] with worker "
				"ids or *, or [link S -> D] with each side an id, a range A-B or *",
				name);
	}
	if (!src.any && !dst.any && src.first == src.last && dst.first == dst.last &&
	    src.first == dst.first)
		return cfg_fail(L, loc, "[%s] links worker %d to itself; expected two different "
				"workers", name, src.first);
	if (check_ids(L, loc, name, &src) || check_ids(L, loc, name, &dst))
		return -EINVAL;
	i = find_link(c, &src, &dst);
	if (i >= 0 && loc > 0) {
		cfg_link_name(&c->links[i], label, sizeof(label));
		return cfg_fail(L, loc, "duplicate section [%s]; first at line %d", label,
				L->link_loc[i]);
	}
	if (i < 0) {
		if (c->nlinks == CFG_MAX_LINKS)
			return cfg_fail(L, loc, "too many [link A-B] sections; expected at most %d",
				    CFG_MAX_LINKS);
		i = c->nlinks++;
		memset(&c->links[i], 0, sizeof(c->links[i]));
		cfg_link_set_ids(&c->links[i], &src, &dst);
		c->links[i].line = loc > 0 ? loc : 0;
		L->link_loc[i] = loc;
	}
	L->sect = SECT_LINK;
	L->link = i;
	return 0;
}

/* [worker ...]: as open_link. */
static int open_worker(struct loader *L, const char *name, loc_t loc)
{
	struct cfg *c = L->c;
	struct cfg_ids ids;
	char label[32];
	int i;

	if (parse_worker_name(name, &ids))
		return cfg_fail(L, loc, "malformed section [%s]; expected [worker A], [worker A-B] "
				"or [worker *] with worker ids", name);
	if (check_ids(L, loc, name, &ids))
		return -EINVAL;
	for (i = 0; i < c->nworker_sections; i++)
		if (cfg_ids_equal(&c->worker_sections[i].ids, &ids))
			break;
	if (i < c->nworker_sections && loc > 0) {
		cfg_worker_name(&c->worker_sections[i], label, sizeof(label));
		return cfg_fail(L, loc, "duplicate section [%s]; first at line %d", label,
				L->wsect_loc[i]);
	}
	if (i == c->nworker_sections) {
		if (i == CFG_MAX_WORKER_SECTIONS)
			return cfg_fail(L, loc, "too many [worker A-B] sections; expected at most %d",
					CFG_MAX_WORKER_SECTIONS);
		c->nworker_sections++;
		c->worker_sections[i] = (struct cfg_worker_section){ .ids = ids,
								     .line = loc > 0 ? loc : 0 };
		L->wsect_loc[i] = loc;
	}
	L->sect = SECT_WORKER;
	L->wsect = i;
	return 0;
}

/* Makes name the current section; from the file, a repeated section is an error. */
static int open_section(struct loader *L, const char *name, loc_t loc)
{
	int s = sect_index(name);
	char all[256];

	if (s != SECT_NONE) {
		if (loc > 0 && L->sect_loc[s] > 0)
			return cfg_fail(L, loc, "duplicate section [%s]; first at line %d", name,
				    L->sect_loc[s]);
		if (!L->sect_loc[s])
			L->sect_loc[s] = loc;
		L->sect = s;
		return 0;
	}
	if (named(name, "link"))
		return open_link(L, name, loc);
	if (named(name, "worker"))
		return open_worker(L, name, loc);
	if (named(name, "event"))
		return cfg_event_open(L, name, loc);
	const char *near = cfg_suggest(name, cfg_sections, CFG_NSECTIONS);

	if (near && strcmp(near, "link") && strcmp(near, "worker"))
		return cfg_fail(L, loc, "unknown section [%s]; did you mean [%s]?", name, near);
	cfg_sections_expected(all, sizeof(all));
	return cfg_fail(L, loc, "unknown section [%s]; expected one of %s", name, all);
}

/* Keys that no longer do anything: accepted with a warning that says why, so that the
 * INI files and stored runs (resume, compare, sweep) that name them still load */
static const struct {
	const char *section, *name, *why;
} retired_keys[] = {
	{ "run", "threads", "the CPU backend computes each worker on one thread, with its own "
			    "kernels" },
};

static int unknown_key(struct loader *L, loc_t loc, const char *sect, const char *name)
{
	for (size_t i = 0; i < sizeof(retired_keys) / sizeof(retired_keys[0]); i++)
		if (!strcmp(sect, retired_keys[i].section) && !strcmp(name, retired_keys[i].name)) {
			cfg_warn(L, loc, "%s.%s has no effect: %s", sect, name, retired_keys[i].why);
			return 0;
		}

	const char *names[CFG_NKEYS], *ksect = strcmp(sect, "link") ? sect : "net";
	char all[1024];
	size_t n = 0;

	for (size_t i = 0; i < cfg_nkeys; i++)
		if (!strcmp(cfg_keys[i].section, ksect))
			names[n++] = cfg_keys[i].name;
	const char *near = cfg_suggest(name, names, n);

	if (near)
		return cfg_fail(L, loc, "unknown key '%s' in [%s]; did you mean '%s'?", name, sect, near);
	for (size_t i = 0; i < cfg_nkeys; i++)
		if (!strcmp(cfg_keys[i].name, name))
			return cfg_fail(L, loc, "unknown key '%s' in [%s]; expected it in [%s]", name,
				    sect, cfg_keys[i].section);
	cfg_join_names(names, n, ", ", all, sizeof(all));
	return cfg_fail(L, loc, "unknown key '%s' in [%s]; expected one of %s", name, sect, all);
}

/* A key of [plugin]: kept as given, for the plugin's own declaration to check
 * (emu/algo/algo_plugin.c); an override replaces the file's value. */
static int plugin_key(struct loader *L, loc_t loc, const char *name, const char *value)
{
	struct cfg *c = L->c;
	struct cfg_plugin_key *k = NULL;

	for (int i = 0; i < c->plugin.n; i++)
		if (!strcmp(c->plugin.key[i].name, name))
			k = &c->plugin.key[i];
	if (k && loc > 0 && k->line > 0)
		return cfg_fail(L, loc, "duplicate key '%s' in [plugin]; first at line %d", name,
				k->line);
	if (strlen(name) >= sizeof(k->name) || strlen(value) >= sizeof(k->value))
		return cfg_fail(L, loc, "plugin.%s: expected a name of at most %zu characters and "
				"a value of at most %zu", name, sizeof(k->name) - 1,
				sizeof(k->value) - 1);
	if (!k && c->plugin.n == CFG_PLUGIN_KEYS)
		return cfg_fail(L, loc, "plugin.%s: more than %d keys in [plugin]", name,
				CFG_PLUGIN_KEYS);
	if (!k)
		k = &c->plugin.key[c->plugin.n++];
	snprintf(k->name, sizeof(k->name), "%s", name);
	snprintf(k->value, sizeof(k->value), "%s", value);
	k->line = loc;
	return 0;
}

/* Sets name = value in the current section. */
static int set_key(struct loader *L, loc_t loc, const char *name, const char *value)
{
	struct cfg *c = L->c;
	const char *sname = L->sect == SECT_EVENT ? "event" : cfg_sections[L->sect];
	const struct cfg_key *k = cfg_key_find(sname, name);
	struct cfg_link *lk = L->sect == SECT_LINK ? &c->links[L->link] : NULL;
	struct cfg_worker_section *ws = L->sect == SECT_WORKER ? &c->worker_sections[L->wsect] :
				       NULL;
	char label[64], why[768];
	size_t ki;
	loc_t *kl;
	void *base;

	if (L->sect == SECT_EVENT)
		return cfg_event_key(L, loc, name, value);
	if (L->sect == CFG_SECTION_PLUGIN)
		return plugin_key(L, loc, name, value);
	if (L->sect == CFG_SECTION_MODEL)
		return cfg_model_key(L, loc, name, value);
	if (!k)
		return unknown_key(L, loc, sname, name);
	ki = (size_t)(k - cfg_keys);
	if (lk) {
		cfg_link_name(lk, label, sizeof(label));
		kl = &L->link_key_loc[L->link][ki];
		base = &lk->net;
	} else if (ws) {
		cfg_worker_name(ws, label, sizeof(label));
		kl = &L->wsect_key_loc[L->wsect][ki - CFG_WK0];
		base = &ws->m;
	} else {
		snprintf(label, sizeof(label), "%s", sname);
		kl = &L->key_loc[ki];
		base = !strcmp(k->section, "net") ? (void *)&c->net : (void *)c;
	}
	if (loc > 0 && *kl > 0)
		return cfg_fail(L, loc, "duplicate key '%s' in [%s]; first at line %d", name, label,
			    *kl);
	if (cfg_key_parse(k, base, value, why, sizeof(why))) {
		if (loc > 0)
			return cfg_fail(L, loc, "%s.%s: %s", label, name, why);
		return cfg_fail(L, loc, "%s", why);
	}
	*kl = loc;
	if (lk)
		lk->set |= (uint64_t)1 << ki;
	else if (ws)
		ws->set |= 1u << (ki - CFG_WK0);
	else if (base == &c->net)
		c->net_set |= (uint64_t)1 << ki;
	return 0;
}

/* Drops a comment that starts at " #" or " ;" outside double quotes. */
static void strip_comment(char *s)
{
	int quoted = 0;

	for (char *p = s; *p; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (!quoted && (*p == '#' || *p == ';') && p > s &&
			 (p[-1] == ' ' || p[-1] == '\t')) {
			*p = 0;
			return;
		}
	}
}

static int key_chars_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

/* The next line into L->buf (without its newline), at most LINE_CAP bytes: its length,
 * or -1 at the end of the file, or -2 after reporting what is wrong (a read error, a NUL
 * byte, a line or a file too long: nothing after it is read). */
static ssize_t next_line(struct loader *L)
{
	size_t len = 0;
	int ch;

	errno = 0;
	while ((ch = getc(L->f)) != EOF && ch != '\n') {
		if (++L->total > FILE_CAP)
			return cfg_fail_stop(L, L->lineno + 1, "the file goes on past %d KiB; expected an emu "
				    "configuration (a few KiB)", FILE_CAP >> 10), -2;
		if (ch == 0)
			return cfg_fail_stop(L, L->lineno + 1, "NUL byte in line; expected text"), -2;
		if (len == LINE_CAP)
			return cfg_fail_stop(L, L->lineno + 1, "line is over %d characters long; expected at "
				    "most 197 (inih's line limit)", LINE_CAP), -2;
		L->buf[len++] = (char)ch;
	}
	if (ch == EOF && ferror(L->f))
		return cfg_fail_stop(L, L->lineno + 1, "cannot read: %s", strerror(errno ? errno : EIO)), -2;
	if (ch == EOF && len == 0)
		return -1;
	L->total++;
	L->buf[len] = 0;
	return (ssize_t)len;
}

/* A line refused after its error: inih gets an empty line and reading goes on, so that
 * the errors of later lines are listed too. */
static char *skip_line(char *str, int num)
{
	snprintf(str, (size_t)num, "\n");
	return str;
}

/* A section header at p (trimmed, starting with '['): the line inih gets.  A refused
 * header skips the keys of its section (their errors would only repeat it). */
static char *header_line(struct loader *L, char *p, char *str, int num)
{
	char *end = strchr(p, ']');

	L->sect = SECT_SKIP;
	if (!end) {
		cfg_fail(L, L->lineno, "unterminated section header '%s'; expected [name]", p);
		return skip_line(str, num);
	}
	*end = 0;
	strip_comment(end + 1);
	if (*trim(end + 1)) {
		cfg_fail(L, L->lineno, "text after section header [%s]; expected nothing or a "
			 "comment", trim(p + 1));
		return skip_line(str, num);
	}
	p = trim(p + 1);
	if (open_section(L, p, L->lineno)) {
		L->sect = SECT_SKIP;
		return skip_line(str, num);
	}
	snprintf(str, (size_t)num, "[%s]\n",
		 L->sect == SECT_EVENT ? "event" : cfg_sections[L->sect]);
	return str;
}

/* A key = value line at p (trimmed, no comment): the line inih gets. */
static char *key_line(struct loader *L, char *p, char *str, int num)
{
	char *eq = strchr(p, '=');

	if (!eq) {
		cfg_fail(L, L->lineno, "'%s' is not a setting; expected key = value, [section] or a "
			 "comment", trim(p));
		return skip_line(str, num);
	}
	*eq = 0;
	if (strpbrk(eq + 1, "#;")) {
		/* inih would cut the value at " ;" even inside quotes: refuse, never truncate */
		cfg_fail(L, L->lineno, "'%c' inside the value of '%s'; expected no '#' or ';' in "
			 "values (they start comments)", *strpbrk(eq + 1, "#;"), trim(p));
		return skip_line(str, num);
	}
	if (!key_chars_ok(trim(p))) {
		cfg_fail(L, L->lineno, "malformed key '%s'; expected a name of letters, digits and _",
			 trim(p));
		return skip_line(str, num);
	}
	if (L->sect == SECT_NONE) {
		/* once: the keys that follow are outside any section too */
		cfg_fail(L, L->lineno, "key '%s' outside any section; expected a [section] line "
			 "before it", trim(p));
		L->sect = SECT_SKIP;
		return skip_line(str, num);
	}
	snprintf(str, (size_t)num, "%s = %s\n", trim(p), trim(eq + 1));
	return str;
}

/* inih's fgets: one cleaned line into str (at most num bytes), NULL to stop. */
static char *ld_read(char *str, int num, void *user)
{
	struct loader *L = user;
	ssize_t len;
	char *p;

	if (L->stop)
		return NULL;
	len = next_line(L);
	if (len < 0)
		return NULL;
	L->lineno++;
	while (len > 0 && (L->buf[len - 1] == '\n' || L->buf[len - 1] == '\r'))
		L->buf[--len] = 0;
	if (len + 3 > num) {
		cfg_fail(L, L->lineno, "line is %zd characters long; expected at most %d (inih's line "
			 "limit)", len, num - 3);
		return skip_line(str, num);
	}
	p = L->buf;
	if (L->lineno == 1 && !strncmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	p = trim(p);
	if (!*p || *p == '#' || *p == ';')
		return skip_line(str, num);
	if (*p == '[')
		return header_line(L, p, str, num);
	strip_comment(p);
	return key_line(L, p, str, num);
}

/* Every key line inih splits; errors are listed by set_key, so inih is never told of one
 * (it would report the line again). */
static int ld_key(void *user, const char *section, const char *name, const char *value)
{
	struct loader *L = user;

	if (!L->stop && L->sect != SECT_SKIP && L->sect != SECT_NONE)
		set_key(L, L->lineno, name, value);
	return 1;
}

static int apply_override(struct loader *L, int i)
{
	loc_t loc = -(L->argbase + i);
	char text[512], *eq, *dot;

	if (strlen(L->args[i]) >= sizeof(text))
		return cfg_fail(L, loc, "argument is too long; expected at most %zu characters",
			    sizeof(text) - 1);
	snprintf(text, sizeof(text), "%s", L->args[i]);
	eq = strchr(text, '=');
	*(eq ? eq : text) = 0;
	dot = strrchr(text, '.');
	if (!eq || !dot)
		return cfg_fail(L, loc, "not a setting; expected section.key=value");
	*dot = 0;
	if (open_section(L, trim(text), loc))
		return -EINVAL;
	if (!key_chars_ok(trim(dot + 1)))
		return cfg_fail(L, loc, "malformed key '%s'; expected a name of letters, digits and _",
			    trim(dot + 1));
	return set_key(L, loc, trim(dot + 1), trim(eq + 1));
}

/* Derived defaults: netem's r = 1 - p, p31 = 1 - p13 and slot_max = slot_min when not
 * given (net.c has the rule; every other [net] key has a plain default in the key
 * table). */
void cfg_resolve_net(struct net_cfg *n, uint64_t given)
{
	if (!(given & (uint64_t)1 << CFG_NETK_ge_r))
		n->ge_r = NET_UNSET;
	if (!(given & (uint64_t)1 << CFG_NETK_p31))
		n->p31 = NET_UNSET;
	if (!(given & (uint64_t)1 << CFG_NETK_slot_max))
		n->slot_max = -1;
	net_cfg_defaults(n);
}

void cfg_defaults(struct cfg *c)
{
	char why[256];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < CFG_WK0; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		void *base = !strcmp(k->section, "net") ? (void *)&c->net : (void *)c;

		/* a default that does not parse is caught by test_cfg */
		if (k->def)
			cfg_key_parse(k, base, k->def, why, sizeof(why));
	}
	cfg_resolve_net(&c->net, 0);
	for (int w = 0; w < CFG_MAX_WORKERS; w++)
		cfg_worker_default(&c->worker[w]);
}

/* [topology] shape = hosts: the fabric, and how every link's sender resends (or its
 * connection, tcp). */
static void cfg_fabric(const struct cfg *c, struct xchg_links *out)
{
	const int hpl = c->topology.hosts_per_leaf;

	out->fabric = (struct fabric_cfg){
		.n = c->run.workers,
		.gpus_per_host = c->topology.gpus_per_host,
		.hosts_per_leaf = hpl,
		.port_rate = (uint64_t)llround(c->topology.port_rate),
		.uplink_rate = (uint64_t)llround(c->topology.port_rate * (hpl ? hpl : 1) /
						 c->topology.oversubscription),
		.fabric_rate = (uint64_t)llround(c->topology.fabric_rate),
		.port_latency = c->topology.port_latency,
		.fabric_latency = c->topology.fabric_latency,
		.buffer_units = (uint64_t)c->topology.port_packets,
		.buffer_bytes = (uint64_t)c->topology.port_buffer,
		.ecn_bytes = (uint64_t)c->topology.ecn_threshold,
	};
	for (int s = 0; s < c->run.workers; s++)
		for (int d = 0; d < c->run.workers; d++) {
			struct net_cfg m;

			cfg_link_net(c, s, d, &m);
			out->resend[(size_t)s * (size_t)c->run.workers + (size_t)d] =
				xchg_resend_of(&m);
		}
}

int cfg_xchg_links(const struct cfg *c, int id, struct xchg_links *out)
{
	size_t n = (size_t)c->run.workers;

	*out = (struct xchg_links){ 0 };
	out->to = calloc(n, sizeof(*out->to));
	out->from = calloc(n, sizeof(*out->from));
	if (c->topology.shape == SHAPE_HOSTS)
		out->resend = calloc(n * n, sizeof(*out->resend));
	if (!out->to || !out->from || (c->topology.shape == SHAPE_HOSTS && !out->resend)) {
		cfg_xchg_links_free(out);
		return -ENOMEM;
	}
	out->seed = c->run.seed;
	out->win = NULL;	/* the schedules: cfg_xchg_windows */
	out->nwin = 0;
	out->absent = NULL;	/* the crashes: emu/run/crash.h */
	out->nabsent = 0;
	out->port = (struct port_cfg){ 0 };
	out->fabric = (struct fabric_cfg){ 0 };
	if (c->topology.shape == SHAPE_SWITCH)
		out->port = (struct port_cfg){
			.rate = (uint64_t)llround(c->topology.port_rate),
			.latency = c->topology.port_latency,
			.buffer_units = (uint64_t)c->topology.port_packets,
			.buffer_bytes = (uint64_t)c->topology.port_buffer,
			.ecn_bytes = (uint64_t)c->topology.ecn_threshold,
		};
	for (int j = 0; j < c->run.workers; j++) {
		cfg_link_net(c, id, j, &out->to[j]);
		cfg_link_net(c, j, id, &out->from[j]);
	}
	if (c->topology.shape == SHAPE_HOSTS)
		cfg_fabric(c, out);
	return 0;
}

void cfg_xchg_links_free(struct xchg_links *l)
{
	free(l->to);
	free(l->from);
	free(l->resend);
	free((void *)l->win);
	free((void *)l->absent);
	*l = (struct xchg_links){ 0 };
}

int cfg_load_args(struct cfg *c, const char *path, int noverrides, char *const overrides[],
		  int argbase, char *err, size_t errlen)
{
	struct loader *L = calloc(1, sizeof(*L));
	struct stat st;
	int r = 0;

	if (!L) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	cfg_defaults(c);
	snprintf(c->path, sizeof(c->path), "%.*s", (int)sizeof(c->path) - 1, path);
	*L = (struct loader){ .c = c, .path = path, .sect = SECT_NONE, .args = overrides,
			      .argbase = argbase, .err = err, .errlen = errlen };
	if (errlen)
		err[0] = 0;	/* the list of errors grows from here */
	/* never block: a FIFO would wait for a writer, so it is refused before the open */
	if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		snprintf(err, errlen, "%s: cannot read: a %s, not a file", path,
			 S_ISFIFO(st.st_mode) ? "FIFO" : "socket");
		r = -EINVAL;
		goto out;
	}
	L->f = fopen(path, "r");
	if (!L->f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		r = -EINVAL;
		goto out;
	}
	if (fstat(fileno(L->f), &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(EISDIR));
		r = -EINVAL;
		goto out;
	}
	r = ini_parse_stream(ld_read, L, ld_key, L);
	if (r == -2) {
		snprintf(err, errlen, "%s: out of memory", path);
		r = -ENOMEM;
		goto out;
	}
	if (r > 0)	/* inih refused a line the reader passed: a bug of ours, still report it */
		cfg_fail(L, r, "cannot parse this line; expected key = value or [section]");
	for (int i = 0; i < noverrides && !L->stop; i++)
		apply_override(L, i);
	cfg_resolve_net(&c->net, c->net_set);
	/* the checks across keys only once every value was read: a value refused above
	 * stands at its default, and a check of it would report what was never written */
	if (!L->failed)
		cfg_validate(L);
	end_errors(L);
	memcpy(c->key_loc, L->key_loc, sizeof(L->key_loc));
	r = L->failed ? -EINVAL : 0;
out:
	if (L->f)
		fclose(L->f);
	free(L);
	return r;
}

void cfg_where(const struct cfg *c, const char *const keys[], char *buf, size_t n)
{
	loc_t loc = 0;

	for (int i = 0; keys[i]; i++) {
		char sect[16];
		const char *dot = strchr(keys[i], '.');
		const struct cfg_key *k;

		snprintf(sect, sizeof(sect), "%.*s", dot ? (int)(dot - keys[i]) : 0, keys[i]);
		k = dot ? cfg_key_find(sect, dot + 1) : NULL;
		if (k)
			loc = cfg_loc_later(loc, c->key_loc[k - cfg_keys]);
	}
	if (loc > 0)
		snprintf(buf, n, "%s:%d", c->path, loc);
	else if (loc < 0)
		snprintf(buf, n, "argument %d", -loc);
	else
		snprintf(buf, n, "%s", c->path);
}

int cfg_load(struct cfg *c, const char *path, int noverrides, char *const overrides[],
	     char *err, size_t errlen)
{
	return cfg_load_args(c, path, noverrides, overrides, 1, err, errlen);
}
