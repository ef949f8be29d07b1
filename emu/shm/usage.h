/* emu/shm/usage.h — what a process spent on waiting, for benchmarks: context switches,
 * CPU time and the notify layer's sleeps and wakes, between two marks.
 *
 * A worker marks at every logged step (usage_mark); the first and the last mark bound
 * the window that `emu bench train` measures, the same windows of train.csv that its
 * step time comes from, so start-up and the final evaluation stay out.  With
 * EMU_USAGE_FILE set in the environment, usage_report appends one line for the window
 * to that file (one write(2) with O_APPEND: lines of many workers never interleave):
 *   worker,steps,nvcsw,nivcsw,sleeps,wakes,cpu_ms,yields,batch_ms,nn_ms
 * nvcsw: voluntary context switches (a sleep that blocked); nivcsw: involuntary ones
 * (preempted, or a sched_yield that gave the core away); sleeps: notify_wait calls;
 * wakes: notify_wake calls (each a FUTEX_WAKE).  batch and nn: the time of the compute
 * parts of a training step (usage_part), so that what the harness adds (cpu_ms less
 * both) can be told from the compute itself.  They are wall time from the vDSO's clock:
 * the thread's CPU clock is a system call (0.46 us on a small VM), and calling it
 * twice a step adds 20 involuntary context switches a step to 16 workers.  With run
 * slots a worker computes without being preempted, so the two agree.  Without the
 * variable nothing is written, and the parts are not timed (no clock read).
 */
#ifndef EMU_USAGE_H
#define EMU_USAGE_H

#include <stdint.h>

struct notify;

/* The parts of a step timed: the batch's gathering, forward and backward. */
enum usage_part { USAGE_BATCH, USAGE_NN, USAGE_PARTS };

struct usage {
	uint64_t nvcsw, nivcsw, sleeps, wakes, yields;
	int64_t cpu_ns;		/* user + system */
	int64_t part_ns[USAGE_PARTS];
};

struct usage_marks {
	struct usage first, last;
	int64_t first_step, last_step;	/* -1: no mark yet */
	int on;				/* EMU_USAGE_FILE is set: time the parts */
	int64_t part_ns[USAGE_PARTS];	/* running sums */
};

void usage_marks_init(struct usage_marks *m);
/* The clock for usage_add (monotonic ns): 0 when the marks are off. */
int64_t usage_clock(const struct usage_marks *m);
/* The time since `since` (usage_clock) to part p; returns the clock now. */
int64_t usage_add(struct usage_marks *m, enum usage_part p, int64_t since);
/* A mark after `step` steps: the first one stays, the last one moves. */
void usage_mark(struct usage_marks *m, const struct notify *nt, int64_t step);
/* The window's line into $EMU_USAGE_FILE, if set and the window is not empty; 0 or
 * -errno. */
int usage_report(const struct usage_marks *m, int id);

#endif
