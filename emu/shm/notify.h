/* emu/shm/notify.h — sleeping on and waking shared futex words.
 *
 * Mode io_uring: IORING_OP_FUTEX_WAITV / IORING_OP_FUTEX_WAKE submissions (kernel 6.7+),
 * SQE fields filled by hand in one wrapper because Debian's liburing 2.3 has no helpers.
 * Mode futex: the futex_waitv(2) and futex(2) syscalls.  NOTIFY_AUTO tries io_uring and
 * falls back when it is unavailable (seccomp, old kernel).  Futexes are shared (the words
 * live in MAP_SHARED memory), never FUTEX2_PRIVATE.  A notify is its creator's alone:
 * one per thread that sleeps or wakes, created by that thread, after fork (an io_uring
 * ring is single-issuer: the kernel refuses other threads' submissions).
 */
#ifndef EMU_NOTIFY_H
#define EMU_NOTIFY_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define NOTIFY_MAX_WORDS 128	/* FUTEX_WAITV_MAX */
#define NOTIFY_MAX_HELD 64	/* wakes held at once (notify_hold); more are sent early */

/* A wake not sent yet (notify_hold). */
struct notify_held {
	_Atomic uint32_t *word;
	uint32_t nwake;
};

enum notify_mode { NOTIFY_AUTO, NOTIFY_IO_URING, NOTIFY_FUTEX };

struct notify {
	enum notify_mode mode;		/* NOTIFY_IO_URING or NOTIFY_FUTEX once initialised */
	void *uring;			/* struct io_uring *, io_uring mode only */
	uint64_t waits, wakes;		/* counters, for tests and benchmarks */
	uint64_t yields;		/* sched_yield calls of a spin (usage.h) */
	int64_t spin_ns;		/* ring_*_all spin this long before sleeping;
					 * notify_init sets NOTIFY_SPIN_NS, 0 = sleep at once */
	uint64_t fallbacks;		/* io_uring operations that failed and were done by
					 * the syscalls instead */
	int64_t race_ns;		/* tests only: a ring's producer waits this long
					 * between its publication and its fence, a sleeper
					 * between its last check and its sleep (ring.c) */
	struct run_slots *slots;	/* NULL, or the host's run slots (slots.h): every
					 * sleep gives this process's slot back, every
					 * wake-up takes one again */
	int holding;			/* this process holds a slot */
	int member;			/* its member number in the lane of slots, or -1 */
	int hold;			/* notify_hold depth */
	int nheld;
	struct notify_held held[NOTIFY_MAX_HELD];	/* wakes to send with the next sleep */
	/* The notice, once, that the io_uring ring failed and the futex syscalls take over
	 * (without "emu: " and newline; "" before), and who says it to the user when it is
	 * written: set by the notify's owner after notify_init, in the layer that prints
	 * (NULL: it stays in notice only). */
	char notice[192];
	void (*say)(const char *line);
};

#define NOTIFY_SPIN_NS 5000

/* For spinning before a sleep: CLOCK_MONOTONIC in ns, and the CPU's spin-wait hint. */
static inline int64_t notify_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void notify_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* A busy wait of ns (race_ns above: no sleep, which would hide the window). */
static inline void notify_delay_ns(int64_t ns)
{
	int64_t until = notify_now_ns() + ns;

	while (notify_now_ns() < until)
		notify_cpu_relax();
}

/* Returns 0 or -errno (forcing io_uring where it is unavailable gives -ENOSYS). */
int notify_init(struct notify *n, enum notify_mode mode);
void notify_free(struct notify *n);
const char *notify_mode_name(enum notify_mode mode);

/* Sleep until some words[i] differs from expect[i], a wake, or timeout_ns (< 0: none).
 * Returns 0 (woken or a word differed), -ETIMEDOUT, or -EINTR; an io_uring failure is
 * retried with the futex_waitv(2) syscall (counted in fallbacks), and a failure of that
 * (a bad word address: a bug) ends the process with a message, never a busy loop.
 * With n->slots, the process's run slot is given back before the sleep and taken again
 * after it (a word that differs already returns at once, keeping the slot). */
int notify_wait(struct notify *n, int count, _Atomic uint32_t *const words[],
		const uint32_t expect[], int64_t timeout_ns);
/* The same without the run slots (slots.c sleeps for a slot through it). */
int notify_wait_raw(struct notify *n, int count, _Atomic uint32_t *const words[],
		    const uint32_t expect[], int64_t timeout_ns);
/* Wake every sleeper on word, or one of them.  (notify_wait and the wakes count into
 * waits/wakes.) */
void notify_wake(struct notify *n, _Atomic uint32_t *word);
void notify_wake_one(struct notify *n, _Atomic uint32_t *word);
/* From notify_hold to notify_release, wakes (io_uring mode) are held and sent with this
 * process's next sleep, in the same io_uring_enter as its wait, or at the release, all
 * at once.  Sent alone, a wake returns to user space with the woken process due to run
 * (no preemption inside this kernel): the waker, a few instructions short of its own
 * sleep, is preempted, sits in the run queue, and later preempts somebody's compute
 * only to fall asleep.  Sent with the sleep, the switch happens in the sleep.  Only for
 * wakes shortly followed by a sleep or the release: a held wake waits for them. */
void notify_hold(struct notify *n);
void notify_release(struct notify *n);
/* Join the run slots s (NULL: none) as member (slots_defer; -1: none): takes a slot,
 * sleeping until one is free; notify_free gives it back. */
void notify_use_slots(struct notify *n, struct run_slots *s, int member);

#endif
