/* emu/run/runlog.h — the one writer of a run's logs, in the supervisor.
 *
 * Joins the workers' records into rows (summing in worker-id order, so the numbers never
 * depend on which worker reported first) and writes, in the run directory:
 *   train.csv  step,epoch,loss,lr,vtime_s,wall_s,consensus,bytes_sent,units_dropped
 *   eval.csv   epoch,step,vtime_s,wall_s,test_loss,test_acc,bytes_sent
 *   net.csv    src,dst,messages,units,units_dropped,drop_rate,retransmits,bytes,mean_delay_ms
 *   config.ini the resolved configuration (emu check output)
 * Lines are flushed as they are written: a crash or Ctrl-C loses nothing already logged.
 * Progress goes to stderr: one updating line on a terminal, a line per evaluation
 * otherwise.
 */
#ifndef EMU_RUNLOG_H
#define EMU_RUNLOG_H

#include <stddef.h>
#include <stdio.h>
#include "emu/cfg/cfg.h"

struct runlog;

/* Creates the run directory and the files.  Returns NULL with a message in err. */
struct runlog *runlog_open(const struct cfg *c, const char *dir, char *err, size_t errlen);
void runlog_record(struct runlog *l, int worker, const void *rec, size_t len);
/* Final net.csv, summary line; frees l. */
void runlog_close(struct runlog *l, int status);

#endif
