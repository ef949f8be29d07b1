/* emu/commands.h — the subcommands behind emu/main.c.  Each returns the process exit
 * code: 0 success, 1 a run that failed, 2 usage or configuration error, 128+sig when
 * interrupted. */
#ifndef EMU_COMMANDS_H
#define EMU_COMMANDS_H

#include "emu/cfg/cfg.h"

/* emu/run/train.c: the distributed run; argv is emu's, for the run's status record */
int cmd_run(const struct cfg *c, int argc, char *const argv[]);
/* emu/run/resume.c: the rest of a run from its latest checkpoint */
int cmd_resume(int argc, char **argv);
int bench_net(int argc, char **argv);		/* emu/bench/bench_net.c: rings, notify, exchange */
int bench_nn(int argc, char **argv);		/* emu/bench/bench_nn.c: nn step against PyTorch */
int bench_limit(int argc, char **argv);		/* emu/bench/bench_limit.c: congestion loss */
int bench_train(int argc, char **argv);		/* emu/bench/bench_train.c: harness overhead */
int cmd_compare(int argc, char **argv);		/* emu/study/compare.c: two runs' CSVs */
int cmd_sweep(int argc, char **argv);		/* emu/study/sweep.c: a grid of runs over seeds */
extern const char help_sweep[];			/* emu help sweep */

#endif
