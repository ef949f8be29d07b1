/* emu/cfg/cfg_help_data.h — the data sets data.dataset names, for `emu help data`: what
 * each is, which files it reads from data.dir, and where they come from. */
#ifndef EMU_CFG_HELP_DATA_H
#define EMU_CFG_HELP_DATA_H

#include <stdio.h>

/* The data sets' reference, after the [data] keys of `emu help data`.  0 or -EIO. */
int cfg_help_datasets(FILE *f);

#endif
