/* emu/cfg/cfg_sections.c — the sections of an INI file, listed from the section table
 * (cfg_sections.h).  [event NAME] is read apart from the key table (cfg_event_parse.c),
 * so it is the one name added here. */
#include "emu/cfg/cfg_sections.h"

#include <stdio.h>
#include <string.h>

#include "emu/cfg/cfg_keys.h"

void cfg_sections_expected(char *buf, size_t n)
{
	size_t used;

	if (!n)
		return;
	cfg_section_list(", ", buf, n);
	used = strlen(buf);
	if (used + 1 < n)
		snprintf(buf + used, n - used, "%sevent NAME", used ? ", " : "");
}
