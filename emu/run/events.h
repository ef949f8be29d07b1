/* emu/run/events.h — a run's [event] sections as the run resolves them: events.csv in the
 * run folder, and emu check's account of them.
 *
 * events.csv is written once, before the workers start, from the configuration: a row
 * when each event starts and one when it ends (events with a for), in the order of the
 * file.  It is the schedule, not a log: nothing in it depends on how the run goes, so no
 * worker or supervisor has to report it.  Columns:
 *   step      an event counted in steps or epochs: the step of the exchange from which
 *             on it is in effect (start) or no longer (end), which is train.csv's step
 *             after that many steps; empty for an event in virtual time
 *   vtime_s   an event in virtual time: its start or end; empty for one in steps
 *   event, kind, state (start or end), targets (links, workers or groups, ';' where
 *   the INI has ','), epoch (step / steps per epoch; empty in virtual time), detail
 *   (net: its keys, "loss_p=0.3 latency=2ms"; slowdown: "factor=4")
 */
#ifndef EMU_EVENTS_H
#define EMU_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "emu/cfg/cfg.h"

/* events.csv of a run of spe steps per epoch and total steps into the run folder dir
 * (locked and cleared by runlog_open); nothing when the configuration has no event.
 * Says on stderr which events start after the run's last step.  0, or -1 with the
 * message in err. */
int events_write(const struct cfg *c, int64_t spe, int64_t total, const char *dir, char *err,
		 size_t errlen);

/* For emu check: the crash events' plan (crash.h) at the nominal size of the data set,
 * as emu run checks it at the real one.  0, or -1 with "FILE:LINE: ..." in err. */
int events_check(const struct cfg *c, char *err, size_t errlen);

/* For emu check: every event as resolved, as INI comments, its steps from the nominal
 * size of the data set (its files are not read). */
int events_print(const struct cfg *c, FILE *f);

#endif
