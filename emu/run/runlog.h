/* emu/run/runlog.h — the one writer of a run's logs, in the supervisor.
 *
 * Joins the workers' records into rows (summing in worker-id order, so the numbers never
 * depend on which worker reported first) and writes, in the run folder (rundir.h):
 *   train.csv   step,epoch,loss,lr,vtime_s,wall_s,consensus,bytes_sent,units_dropped
 *   eval.csv    epoch,step,vtime_s,wall_s,test_loss,test_acc,bytes_sent
 *   net.csv     src,dst,messages,units,units_dropped,drop_rate,retransmits,bytes,mean_delay_ms
 *   config.ini  the resolved configuration (emu check output)
 *   status.json running, then done, failed or interrupted
 * Every write is checked.  CSV lines reach the file as they are written (a crash loses
 * nothing already logged); a write that fails cuts the file back to its last whole line
 * and fails the run.  net.csv and config.ini are replaced whole, never half-written.
 * Progress goes to stderr: one updating line on a terminal, a line per evaluation
 * otherwise; stderr may be closed or a broken pipe, the logs do not depend on it.
 */
#ifndef EMU_RUNLOG_H
#define EMU_RUNLOG_H

#include <stddef.h>
#include "emu/cfg/cfg.h"

struct runlog;

/* Locks and prepares the run folder (rundir_open) and creates the files.  Returns NULL
 * with *status 2 (refused) or 1 (an I/O error) and the message in err. */
struct runlog *runlog_open(const struct cfg *c, const char *dir, int argc, char *const argv[],
			   int *status, char *err, size_t errlen);
/* One record of worker.  0, or -1 once a write has failed (printed once): the run must
 * stop. */
int runlog_record(struct runlog *l, int worker, const void *rec, size_t len);
/* Final net.csv, every file synced, status.json with status (exit code) and why (NULL,
 * or what failed); prints the summary line; frees l.  Returns the run's exit code: status,
 * or 1 when the last writes failed. */
int runlog_close(struct runlog *l, int status, const char *why);

#endif
