/* emu/shm/usage.h — what a process spent on waiting, for benchmarks: context switches,
 * CPU time and the notify layer's sleeps and wakes, between two marks.
 *
 * A worker marks at every logged step (usage_mark); the first and the last mark bound
 * the window that `emu bench train` measures, the same windows of train.csv that its
 * step time comes from, so start-up and the final evaluation stay out.  With
 * EMU_USAGE_FILE set in the environment, usage_report appends one line for the window
 * to that file (one write(2) with O_APPEND: lines of many workers never interleave):
 *   worker,steps,nvcsw,nivcsw,sleeps,wakes,cpu_ms,yields
 * nvcsw: voluntary context switches (a sleep that blocked); nivcsw: involuntary ones
 * (preempted, or a sched_yield that gave the core away); sleeps: notify_wait calls;
 * wakes: notify_wake calls (each a FUTEX_WAKE).  Without the variable nothing is
 * written and nothing else changes.
 */
#ifndef EMU_USAGE_H
#define EMU_USAGE_H

#include <stdint.h>

struct notify;

struct usage {
	uint64_t nvcsw, nivcsw, sleeps, wakes, yields;
	int64_t cpu_ns;		/* user + system */
};

struct usage_marks {
	struct usage first, last;
	int64_t first_step, last_step;	/* -1: no mark yet */
};

void usage_take(struct usage *u, const struct notify *nt);
void usage_marks_init(struct usage_marks *m);
/* A mark after `step` steps: the first one stays, the last one moves. */
void usage_mark(struct usage_marks *m, const struct notify *nt, int64_t step);
/* The window's line into $EMU_USAGE_FILE, if set and the window is not empty; 0 or
 * -errno. */
int usage_report(const struct usage_marks *m, int id);

#endif
