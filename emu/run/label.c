/* emu/run/label.c — run.label's {section.key} template (see label.h). */
#include "emu/run/label.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/cfg/cfg_keys.h"

/* Appends len bytes of s to out[n] at *used; -ENAMETOOLONG when they do not fit. */
static int put(char *out, size_t n, size_t *used, const char *s, size_t len)
{
	if (*used + len >= n)
		return -ENAMETOOLONG;
	memcpy(out + *used, s, len);
	*used += len;
	out[*used] = 0;
	return 0;
}

/* The value of "section.key" (name, len bytes) in c, as emu check writes it but never
 * quoted, into val[n].  0, or -EINVAL with the reason. */
static int value_of(const struct cfg *c, const char *name, size_t len, char *val, size_t n,
		    char *err, size_t errlen)
{
	char sect[CFG_STR], *key;
	const struct cfg_key *k = NULL;
	int s;

	snprintf(sect, sizeof(sect), "%.*s", (int)len, name);
	key = strchr(sect, '.');
	if (key)
		*key++ = 0;
	s = key ? cfg_section_index(sect) : -1;
	if (s >= 0 && s != CFG_SECTION_LINK && s != CFG_SECTION_WORKER)
		k = cfg_key_find(sect, key);
	if (!k) {
		snprintf(err, errlen, "unknown key '%.*s' in {%.*s}; expected {section.key} of a "
			 "key of emu help keys (not of [link A-B] or [worker A-B]), or {{ and }} "
			 "for a brace", (int)len, name, (int)len, name);
		return -EINVAL;
	}
	if (!strcmp(sect, "run") && !strcmp(key, "label")) {
		snprintf(err, errlen, "{run.label} names the label itself; expected another key");
		return -EINVAL;
	}
	if (k->type == CFG_T_STR || k->type == CFG_T_CHOICE) {	/* the text, unquoted */
		snprintf(val, n, "%s", (const char *)c + k->off);
		return 0;
	}
	cfg_key_format(k, !strcmp(sect, "net") ? (const void *)&c->net : (const void *)c, val, n);
	return 0;
}

int label_format(const struct cfg *c, const char *tmpl, char *out, size_t n, char *err,
		 size_t errlen)
{
	char val[CFG_STR + 64];
	size_t used = 0;
	const char *p = tmpl;

	out[0] = 0;
	while (*p) {
		size_t lit = strcspn(p, "{}"), len;
		int rc;

		if (put(out, n, &used, p, lit) < 0)
			goto long_;
		p += lit;
		if (!*p)
			break;
		if (p[0] == p[1]) {	/* {{ or }}: the brace itself */
			if (put(out, n, &used, p, 1) < 0)
				goto long_;
			p += 2;
			continue;
		}
		len = strcspn(p + 1, "{}");
		if (p[0] == '}' || p[1 + len] != '}') {
			snprintf(err, errlen, "a '%c' without its pair at character %zu; expected "
				 "{section.key}, or {{ and }} for a brace", p[0], (size_t)(p - tmpl) + 1);
			return -EINVAL;
		}
		rc = value_of(c, p + 1, len, val, sizeof(val), err, errlen);
		if (rc < 0)
			return rc;
		if (put(out, n, &used, val, strlen(val)) < 0)
			goto long_;
		p += len + 2;
	}
	return 0;
long_:
	snprintf(err, errlen, "the label it makes is longer than %zu characters; expected a "
		 "shorter template", n - 1);
	return -ENAMETOOLONG;
}

int label_expand(struct cfg *c, char *err, size_t errlen)
{
	char text[CFG_STR], doubled[CFG_STR], why[512], where[CFG_STR + 32];
	static const char *const keys[] = { "run.label", NULL };
	size_t used = 0;
	int rc;

	if (!strpbrk(c->run.label, "{}"))
		return 0;	/* nothing to expand: the common case */
	rc = label_format(c, c->run.label, text, CFG_STR_MAX + 1, why, sizeof(why));
	for (const char *p = text; !rc && *p; p++) {
		int brace = *p == '{' || *p == '}';

		if ((brace && put(doubled, CFG_STR_MAX + 1, &used, p, 1) < 0) ||
		    put(doubled, CFG_STR_MAX + 1, &used, p, 1) < 0) {
			snprintf(why, sizeof(why), "the label it makes, its braces doubled, is "
				 "longer than %d characters; expected a shorter template",
				 CFG_STR_MAX);
			rc = -ENAMETOOLONG;
		}
	}
	if (rc < 0) {
		cfg_where(c, keys, where, sizeof(where));
		snprintf(err, errlen, "%s: run.label = '%s': %s", where, c->run.label, why);
		return -EINVAL;
	}
	snprintf(c->run.label, sizeof(c->run.label), "%s", used ? doubled : "");
	return 0;
}
