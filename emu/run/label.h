/* emu/run/label.h — run.label as a template: each {section.key} in it is replaced by the
 * run's resolved value of that key, as emu check writes it ({train.algorithm} p={net.loss_p}
 * -> "allreduce p=0.1"), so that every run of a sweep gets a legend of its own.  {{ and }}
 * are a literal { and }.  The keys are those of the plain sections ([run], [net], [train],
 * [data] and the algorithms'); a [link A-B] or [worker A-B] key has a value per link or
 * worker, and run.label cannot name itself.
 *
 * emu run and emu check expand the label once the configuration is loaded (emu/main.c),
 * emu sweep for each run's configuration (emu/study/sweep.c).  The expansion is stored
 * back with its literal braces doubled again, so that config.ini, read back, expands to
 * the same text. */
#ifndef EMU_RUN_LABEL_H
#define EMU_RUN_LABEL_H

#include <stddef.h>

#include "emu/cfg/cfg.h"

/* The text tmpl expands to with c's values, its braces as they are read (not doubled),
 * into out[n].  0; -EINVAL for an unknown key, a key that has no single value or a brace
 * without its pair; -ENAMETOOLONG when the text does not fit; err says which. */
int label_format(const struct cfg *c, const char *tmpl, char *out, size_t n, char *err,
		 size_t errlen);
/* Replaces c->run.label by its expansion, literal braces doubled.  0, or -EINVAL with
 * "WHERE: run.label = 'TEMPLATE': what is wrong; expected ..." in err (WHERE is the file
 * and line, or the argument, that gave the label). */
int label_expand(struct cfg *c, char *err, size_t errlen);

#endif
