/* emu/cfg/cfg_loader.h — the loader's state, shared by cfg_load.c (reading) and
 * cfg_validate.c (the checks across keys).  Private to emu/cfg. */
#ifndef EMU_CFG_LOADER_H
#define EMU_CFG_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "emu/cfg/cfg.h"
#include "emu/cfg/cfg_keys.h"

#define SECT_NONE (-1)
#define SECT_LINK CFG_SECTION_LINK
/* Input that never ends (/dev/zero, a 1 GB line) is refused within these: a line is
 * read into LINE_CAP bytes at most (longer ones are errors anyway), a file into
 * FILE_CAP (an emu configuration is a few KiB). */
#define LINE_CAP 4096
#define FILE_CAP (1 << 20)

/* A place in the input: > 0 a line of the file, < 0 minus an argv index, 0 = default. */
typedef int loc_t;

struct loader {
	struct cfg *c;
	const char *path;
	FILE *f;
	char buf[LINE_CAP + 1];
	size_t total;			/* bytes read so far */
	int lineno;
	int sect;			/* index into cfg_sections, or SECT_NONE */
	int link;			/* current link when sect == SECT_LINK */
	loc_t sect_loc[CFG_NSECTIONS];
	loc_t key_loc[CFG_NKEYS];
	loc_t link_loc[CFG_MAX_LINKS];
	loc_t link_key_loc[CFG_MAX_LINKS][CFG_NNET];
	char *const *args;
	int argbase;
	char *err;
	size_t errlen;
	int failed;
};


/* Reports the first error, at loc ("FILE:LINE: " or "argument N (...): "); -EINVAL. */
int cfg_fail(struct loader *L, loc_t loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds a warning line at loc to c->warnings (the run goes on). */
void cfg_warn(struct loader *L, loc_t loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Of two places, the later in the input (the one whose value won). */
loc_t cfg_loc_later(loc_t a, loc_t b);
/* netem's derived loss defaults for the keys not in given (bits of the net table). */
void cfg_resolve_net(struct net_cfg *n, uint64_t given);
/* The checks across keys, after everything is read: 0 or -EINVAL (reported). */
int cfg_validate(struct loader *L);

#endif
