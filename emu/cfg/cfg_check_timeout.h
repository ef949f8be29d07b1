/* emu/cfg/cfg_check_timeout.h — a warning for an unreliable link whose timeout no whole
 * message can meet.  It needs the size of the messages, that is the model's parameter
 * count, so it runs where the model is known (emu/run/plan.c), not in the loader. */
#ifndef EMU_CFG_CHECK_TIMEOUT_H
#define EMU_CFG_CHECK_TIMEOUT_H

#include <stddef.h>
#include <stdio.h>

#include "emu/cfg/cfg.h"

/* The largest message train.algorithm sends for a model of nparams parameters among
 * run.workers: a block of ceil(nparams / workers) floats (rps, allreduce, jointspar with
 * every layer sampled), or its signs, a bit each in 32-bit words (signum). */
size_t cfg_message_bytes(const struct cfg *c, size_t nparams);

/* On f, "FILE:LINE: warning: ..." for each section ([net], or the [link ...] section
 * that is the most specific on some link) with an unreliable link on which the largest
 * message cannot arrive whole before the timeout: its serialisation at the link's
 * bandwidth (every unit of it, unit = packet: mtu bytes each) plus the earliest delay
 * exceeds net.timeout, so its last units always arrive late and count as lost.  One
 * warning per section.  Returns how many were written. */
int cfg_warn_timeouts(const struct cfg *c, size_t nparams, FILE *f);

#endif
