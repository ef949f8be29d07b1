/* emu/cfg/cfg_sections.c — the sections of an INI file, listed from the section table
 * (cfg_sections.h).  [event NAME] is read apart from the key table (cfg_event_parse.c),
 * so it is the one name added here. */
#include "emu/cfg/cfg_sections.h"

#include <stdio.h>

#include "emu/cfg/cfg_keys.h"

/* Section s as a file writes it: the sections that name workers take ids. */
static const char *title(int s)
{
	return s == CFG_SECTION_LINK ? "link A-B" : s == CFG_SECTION_WORKER ? "worker A-B" :
	       cfg_sections[s];
}

void cfg_sections_expected(char *buf, size_t n)
{
	size_t used = 0;

	if (!n)
		return;
	buf[0] = 0;
	for (int s = 0; cfg_sections[s] && used < n; s++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", s ? ", " : "", title(s));
	if (used < n)
		snprintf(buf + used, n - used, "%sevent NAME", used ? ", " : "");
}
