/* emu/cfg/preset_path.h — which file `emu run NAME.ini` reads: the path as given, else a
 * preset of that name.
 *
 * The presets are looked for beside the binary, so that they are found for any PREFIX
 * without a path compiled in: BIN/../share/emu/ini (make install: PREFIX/bin/emu and
 * PREFIX/share/emu/ini), then BIN/../ini (a build in the source tree: build/emu and
 * ini/).  BIN is the folder of /proc/self/exe, links resolved.  Only folders that exist
 * are looked in.  The paths inside a preset (data.dir, run.output) stay relative to the
 * current folder, as those of any INI file. */
#ifndef EMU_CFG_PRESET_PATH_H
#define EMU_CFG_PRESET_PATH_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#define PRESET_NDIRS 2

/* The presets folders that exist, in search order, into dirs; returns how many (0 to
 * PRESET_NDIRS).  bin, when not NULL, gets the binary's folder ("" if unknown). */
int preset_dirs(char dirs[PRESET_NDIRS][PATH_MAX], char bin[PATH_MAX]);

/* The file that `emu run arg` reads, into path (PATH_MAX bytes).  arg itself when it
 * contains a '/' or names anything in the current folder (the loader then says what is
 * wrong with it, if anything); else the first presets folder's file of that name.
 * Returns 0 for arg itself, 1 for a preset, or -ENOENT with err saying every place
 * looked and, when some preset's name is a few edits from arg (".ini" aside), "; did
 * you mean NAME.ini?" with the nearest (at most three). */
int preset_path_find(const char *arg, char path[PATH_MAX], char *err, size_t errlen);

/* emu help presets: "NAME.ini PATH" for every preset that `emu run NAME.ini` finds
 * (the first folder's where two hold one name), sorted by name.  Returns 0 (with the
 * note "no presets folder beside the binary (...)" in err where none exists, else err
 * empty), -EIO, or the -errno of a folder that cannot be read with "listing the
 * presets: ..." in err. */
int preset_list(FILE *f, char *err, size_t errlen);

#endif
