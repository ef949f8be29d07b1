/* emu/cfg/cfg_help_tools.c — the key table for programs: every override's name (emu help
 * keys --names, for the bash completion) and the whole table as JSON (emu help keys
 * --json, for tools that write INI files).  Both come from the table, so neither can
 * fall behind it. */
#include "emu/cfg/cfg.h"

#include <errno.h>
#include <string.h>

#include "emu/cfg/cfg_keys.h"

/* What a section is called in an override: [net] keys also make every [link A-B], and
 * [worker] keys only exist as [worker A-B]. */
static const char *override_section(const char *sect)
{
	return !strcmp(sect, "worker") ? "worker A-B" : sect;
}

int cfg_help_names(FILE *f)
{
	for (int s = 0; cfg_sections[s]; s++) {
		const char *sect = !strcmp(cfg_sections[s], "link") ? "net" : cfg_sections[s];

		for (size_t i = 0; i < cfg_nkeys; i++)
			if (!strcmp(cfg_keys[i].section, sect))
				fprintf(f, "%s.%s\n", !strcmp(cfg_sections[s], "link") ? "link A-B" :
					override_section(sect), cfg_keys[i].name);
	}
	return ferror(f) ? -EIO : 0;
}

/* s as a JSON string: quotes, backslashes and control characters escaped; bytes from
 * 0x80 up (UTF-8 in the help texts) pass as they are, which JSON allows. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* The unit a bound is counted in: what cfg_key_parse stores. */
static const char *base_unit(enum cfg_type t)
{
	switch (t) {
	case CFG_T_DURATION: return "ns";
	case CFG_T_SIZE: return "B";
	case CFG_T_RATE: return "bit/s";
	case CFG_T_FLOPS: return "FLOP/s";
	default: return "";
	}
}

static void json_key(FILE *f, const struct cfg_key *k)
{
	bool net = !strcmp(k->section, "net");

	fputs("  {\"section\": ", f);
	json_str(f, k->section);
	fputs(", \"sections\": [", f);
	json_str(f, override_section(k->section));
	if (net)
		fputs(", \"link A-B\"", f);
	fputs("], \"name\": ", f);
	json_str(f, k->name);
	fputs(", \"type\": ", f);
	json_str(f, cfg_type_name(k->type));
	fputs(", \"unit\": ", f);
	json_str(f, cfg_type_unit(k->type));
	fputs(", \"default\": ", f);
	if (k->def) {
		json_str(f, k->def);
	} else {	/* derived from other keys; the help says how */
		fputs("null, \"derived\": ", f);
		json_str(f, !strcmp(k->name, "ge_r") ? "1 - loss_p" :
			 !strcmp(k->name, "p31") ? "1 - p13" :
			 !strcmp(k->name, "slot_max") ? "slot_min" : "see help");
	}
	/* a range exists where lo < hi (the seed has none); %.17g reads back exactly and
	 * is a JSON number (the bounds are finite) */
	if (k->lo < k->hi && k->type == CFG_T_STR) {
		fprintf(f, ", \"min_length\": %.0f, \"max_length\": %.0f", k->lo, k->hi);
	} else if (k->lo < k->hi && !k->names) {
		fprintf(f, ", \"min\": %.17g, \"max\": %.17g, \"min_exclusive\": %s, "
			"\"max_exclusive\": %s", k->lo, k->hi,
			(k->flags & CFG_GT_LO) ? "true" : "false",
			(k->flags & CFG_LT_HI) ? "true" : "false");
		if (*base_unit(k->type)) {
			fputs(", \"base_unit\": ", f);
			json_str(f, base_unit(k->type));
		}
	}
	if (k->flags & CFG_POW2)
		fputs(", \"power_of_2\": true", f);
	if (k->flags & CFG_OR_ZERO)
		fputs(", \"or_zero\": true", f);
	if (k->flags & CFG_ASCENDING)
		fputs(", \"ascending\": true", f);
	if (k->names) {
		fputs(", \"values\": [", f);
		for (int j = 0; k->names[j]; j++) {
			fputs(j ? ", " : "", f);
			json_str(f, k->names[j]);
		}
		fputc(']', f);
	}
	fputs(", \"help\": ", f);
	json_str(f, k->help);
	fputc('}', f);
}

int cfg_help_json(FILE *f)
{
	bool first = true;

	fputs("[\n", f);
	/* in print order, section by section, as emu help keys lists them */
	for (int s = 0; cfg_sections[s]; s++) {
		for (size_t i = 0; i < cfg_nkeys; i++) {
			if (strcmp(cfg_keys[i].section, cfg_sections[s]))
				continue;
			fputs(first ? "" : ",\n", f);
			json_key(f, &cfg_keys[i]);
			first = false;
		}
	}
	fputs("\n]\n", f);
	return ferror(f) ? -EIO : 0;
}
