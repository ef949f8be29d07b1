/* emu/cfg/cfg_loader.h — the loader's state, shared by cfg_load.c (reading) and
 * cfg_validate.c (the checks across keys).  Private to emu/cfg. */
#ifndef EMU_CFG_LOADER_H
#define EMU_CFG_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "emu/cfg/cfg.h"
#include "emu/cfg/cfg_event.h"
#include "emu/cfg/cfg_keys.h"

#define SECT_NONE (-1)
#define SECT_LINK CFG_SECTION_LINK
#define SECT_WORKER CFG_SECTION_WORKER
#define SECT_EVENT (-2)		/* an [event NAME] section: L->ev */
#define SECT_SKIP (-3)		/* after a refused section header: its keys are skipped */
/* A file's errors are listed together, as a compiler lists them, up to this many. */
#define CFG_MAX_ERRORS 20
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
	int wsect;			/* current section when sect == SECT_WORKER */
	loc_t sect_loc[CFG_NSECTIONS];
	loc_t key_loc[CFG_NKEYS];
	loc_t link_loc[CFG_MAX_LINKS];
	loc_t link_key_loc[CFG_MAX_LINKS][CFG_NNET];
	loc_t wsect_loc[CFG_MAX_WORKER_SECTIONS];
	loc_t wsect_key_loc[CFG_MAX_WORKER_SECTIONS][CFG_NWORKERK];
	int ev;				/* current event when sect == SECT_EVENT */
	loc_t ev_loc[CFG_MAX_EVENTS];
	loc_t ev_key_loc[CFG_MAX_EVENTS][CFG_NEVK];
	char *const *args;
	int argbase;
	char *err;			/* the errors, one a line (cfg_fail) */
	size_t errlen;
	int failed;			/* an error was found */
	int stop;			/* reading cannot go on (or the list is full) */
	int nerr;			/* errors found */
	int nshown;			/* of them, those that fit in err */
	loc_t shown_loc[CFG_MAX_ERRORS];	/* where each of those is: the list's order */
	int truncated;			/* more than CFG_MAX_ERRORS: the list stops there */
};


/* Adds an error at loc ("FILE:LINE: " or "argument N (...): ") to the list in L->err,
 * one a line (the same line twice is listed once); -EINVAL.  After CFG_MAX_ERRORS the
 * list is full and L->stop is set. */
int cfg_fail(struct loader *L, loc_t loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An error after which nothing more is read (an unreadable file, out of memory). */
int cfg_fail_stop(struct loader *L, loc_t loc, const char *fmt, ...)
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
/* Of cfg_validate: the [link ...] and [worker ...] sections against run.workers and each
 * other; resolves c->worker[]. */
int cfg_validate_sections(struct loader *L);
/* Of cfg_validate: train.lr_max against train.lr and train.optimizer against the
 * algorithm (0 or -EINVAL, reported), and a warning for linear scaling past 16 workers
 * without a cap (cfg_lr.c). */
int cfg_check_lr(struct loader *L);

/* --- [model] (cfg_model.c) ----------------------------------------------------------- */

/* NAME = OP ... in [model]: a new line at the end, or from an override (loc < 0) the new
 * text of the line of that name. */
int cfg_model_key(struct loader *L, loc_t loc, const char *name, const char *value);
/* train.model = custom needs [model] lines that read (nn_desc_check without the data);
 * [model] without it has no effect (a warning). */
int cfg_check_model(struct loader *L);

/* --- [event NAME] sections (cfg_event_parse.c, cfg_validate_events.c) ----------------- */

/* [event NAME]: a new section, or from an override (loc < 0) the one of that name. */
int cfg_event_open(struct loader *L, const char *name, loc_t loc);
/* name = value in the current event. */
int cfg_event_key(struct loader *L, loc_t loc, const char *name, const char *value);
/* The checks of every event once everything is read (run.workers known). */
int cfg_validate_events(struct loader *L);
/* check_link_model of cfg_validate.c on the model n of link src -> dst under an event:
 * messages name label ("event burst") and, for the keys in set, the place loc. */
int cfg_check_event_model(struct loader *L, const char *label, int src, int dst,
			  const struct net_cfg *n, uint64_t set, loc_t loc);

/* --- sections that name sets of workers (cfg_scope.c) ------------------------------- */

/* Worker ids at s: '*', an id, or with range an id range A-B (A > B is left to the
 * caller).  The end of what was read, or NULL when s starts with neither. */
const char *cfg_ids_parse(const char *s, bool range, struct cfg_ids *ids);
/* 0 for ids a section may name, else -EINVAL with "names the empty range 5-3; expected
 * ..." or "names worker 70; expected worker ids below 64" in err. */
int cfg_ids_check(const struct cfg_ids *ids, char *err, size_t errlen);
/* The sides of a link group, the whole of s: "A-B" (each an id or '*') or "S -> D" (each
 * an id, a range A-B or '*'), blanks around the arrow optional.  0 or -EINVAL. */
int cfg_link_sides(const char *s, struct cfg_ids *src, struct cfg_ids *dst);
/* "0-1", "0-*", "0-7 -> 8-15": the sides as cfg_link_sides reads them back. */
void cfg_link_sides_name(const struct cfg_ids *s, const struct cfg_ids *d, char *buf, size_t n);
/* "*", "3" or "0-7" into buf. */
void cfg_ids_name(const struct cfg_ids *ids, char *buf, size_t n);
/* How many workers ids names; '*' counts as more than any range (least specific). */
int64_t cfg_ids_weight(const struct cfg_ids *ids);
static inline bool cfg_ids_covers(const struct cfg_ids *ids, int w)
{
	return ids->first <= w && w <= ids->last;
}
static inline bool cfg_ids_equal(const struct cfg_ids *a, const struct cfg_ids *b)
{
	return a->first == b->first && a->last == b->last && a->any == b->any;
}

/* The sides of a link section, and back. */
void cfg_link_ids(const struct cfg_link *lk, struct cfg_ids *src, struct cfg_ids *dst);
void cfg_link_set_ids(struct cfg_link *lk, const struct cfg_ids *src,
		      const struct cfg_ids *dst);
/* "link 0-1", "link 0-*", "link 0-7 -> 8-15": the section's name in messages and output. */
void cfg_link_name(const struct cfg_link *lk, char *buf, size_t n);
/* How many directed links the section covers ('*' counting as in cfg_ids_weight). */
int64_t cfg_link_weight(const struct cfg_link *lk);
bool cfg_link_covers(const struct cfg_link *lk, int src, int dst);
/* For link src -> dst and each key k of the net table: win[k] the index of the most
 * specific section that covers it and gives k (-1: none, [net]'s value), tie[k] another
 * section as specific that gives k too (-1: none). */
void cfg_link_winners(const struct cfg *c, int src, int dst, int win[CFG_NNET],
		      int tie[CFG_NNET]);
/* cfg_link_net from winners already found. */
void cfg_link_net_from(const struct cfg *c, const int win[CFG_NNET], struct net_cfg *out);

/* "worker 3", "worker 0-3", "worker *". */
void cfg_worker_name(const struct cfg_worker_section *ws, char *buf, size_t n);
/* As cfg_link_winners, for worker w and the keys of the worker table. */
void cfg_worker_winners(const struct cfg *c, int w, int win[CFG_NWORKERK],
			int tie[CFG_NWORKERK]);
/* The default compute model (the worker table's defaults). */
void cfg_worker_default(struct cfg_worker_model *m);
/* c->worker[w] for every w < run.workers from the sections (ties: the first found). */
void cfg_resolve_workers(struct cfg *c);

#endif
