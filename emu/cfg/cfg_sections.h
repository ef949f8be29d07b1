/* emu/cfg/cfg_sections.h — the sections an INI file may have, as messages list them,
 * from the section table (cfg_sections in cfg_keys.h): no message lists them by hand. */
#ifndef EMU_CFG_SECTIONS_H
#define EMU_CFG_SECTIONS_H

#include <stddef.h>

/* Every section of the table as a file writes it ("link A-B", "worker A-B" for the
 * sections that name workers), then "event NAME", ", " between them, into buf:
 * "run, net, link A-B, train, ..., event NAME".  Cut to fit n. */
void cfg_sections_expected(char *buf, size_t n);

#endif
