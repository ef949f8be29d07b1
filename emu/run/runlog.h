/* emu/run/runlog.h — the one writer of a run's logs, in the supervisor.
 *
 * Joins the workers' records into rows (summing in worker-id order, so the numbers never
 * depend on which worker reported first) and writes, in the run folder (rundir.h):
 *   train.csv   a row per logged step: totals over the workers (docs/outputs.md)
 *   workers.csv with run.worker_log, a row per worker per logged step, in id order
 *   eval.csv    a row per evaluation
 *   net.csv     a block of rows per evaluation: step, vtime_s, then every directed link
 *   config.ini  the resolved configuration (emu check output)
 *   status.json running, then done, failed or interrupted
 * Every write is checked.  CSV lines reach the file as they are written (a crash loses
 * nothing already logged); a block of lines (a step of workers.csv, an evaluation of
 * net.csv) goes in with one write; a write that fails cuts the file back to where it
 * ended, its last whole line and block, and fails the run.  config.ini is replaced whole.
 * Progress goes to stderr: one updating line on a terminal; otherwise a line per
 * evaluation and one every run.progress_every of wall time (runlog_tick); stderr may be
 * closed or a broken pipe, the logs do not depend on it.
 */
#ifndef EMU_RUNLOG_H
#define EMU_RUNLOG_H

#include <stddef.h>
#include <stdint.h>
#include "emu/cfg/cfg.h"

struct runlog;

/* Locks and prepares the run folder (rundir_open) and creates the files; with resume
 * (emu resume), keeps them, cut back to the sizes the checkpoint's manifest gives.  Returns NULL
 * with *status 2 (refused) or 1 (an I/O error) and the message in err. */
struct ckpt_manifest;
struct runlog *runlog_open(const struct cfg *c, const char *dir, int argc, char *const argv[],
			   const struct ckpt_manifest *resume, int *status, char *err,
			   size_t errlen);
/* The workers take checkpoints (emu/run/ckpt.h) with this configuration hash: when every
 * worker's REC_CKPT of a step is in, the logs are synced and the manifest written (with
 * the data's hash, which a resume checks). */
void runlog_checkpoints(struct runlog *l, uint64_t hash, uint64_t data_hash,
			uint64_t plugin_hash);
/* The run's crash events (emu/run/crash.h; p outlives l): a row of train.csv or eval.csv
 * then joins the records of the workers that are up, and keeps the counters a down
 * worker left in its totals. */
struct crash_plan;
void runlog_crashes(struct runlog *l, const struct crash_plan *p);
/* The run's length, as the workers compute it (train_length): for the progress line
 * before the first row and the epochs it will run. */
void runlog_length(struct runlog *l, int64_t steps_total, int64_t steps_per_epoch);
/* The time has come (or not) for a progress line off a terminal: call it now and then
 * (the supervisor's wake-ups); it prints when run.progress_every has passed. */
void runlog_tick(struct runlog *l);
/* One record of worker.  0, or -1 once a write has failed (printed once): the run must
 * stop. */
int runlog_record(struct runlog *l, int worker, const void *rec, size_t len);
/* Final net.csv, every file synced, status.json with status (exit code) and why (NULL,
 * or what failed); prints the summary line; frees l.  Returns the run's exit code: status,
 * or 1 when the last writes failed. */
int runlog_close(struct runlog *l, int status, const char *why);

#endif
