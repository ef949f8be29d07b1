/* emu/shm/notify.c — notify modes: io_uring (notify_uring.c) or the futex syscalls. */
#include "emu/shm/notify.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "emu/shm/notify_uring.h"
#include "emu/shm/slots.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449	/* the same number on every architecture */
#endif

int notify_init(struct notify *n, enum notify_mode mode)
{
	int ret = -ENOSYS;

	memset(n, 0, sizeof(*n));
	n->spin_ns = NOTIFY_SPIN_NS;
	n->member = -1;
	if (mode == NOTIFY_IO_URING || mode == NOTIFY_AUTO) {
		ret = notify_uring_init(&n->uring);
		if (ret == 0) {
			n->mode = NOTIFY_IO_URING;
			return 0;
		}
		if (mode == NOTIFY_IO_URING)
			return ret;
	}
	n->mode = NOTIFY_FUTEX;
	return 0;
}

static void send_held(struct notify *n);

void notify_free(struct notify *n)
{
	n->hold = 0;
	if (n->slots && n->holding)
		slots_give(n->slots, n->member, n);
	send_held(n);
	n->slots = NULL;
	n->holding = 0;
	if (n->uring)		/* (also after uring_failed) */
		notify_uring_free(n->uring);
	n->uring = NULL;
}

const char *notify_mode_name(enum notify_mode mode)
{
	switch (mode) {
	case NOTIFY_AUTO: return "auto";
	case NOTIFY_IO_URING: return "io_uring";
	case NOTIFY_FUTEX: return "futex";
	}
	return "?";
}

/* The ring failed (its wakes were done by the syscall already): the syscalls from now on,
 * said once (notice, through the owner's say).  A ring that failed is not used again: what failed (another thread's
 * submissions, which a single-issuer ring refuses; the kernel's resources) would fail
 * again, and its queue may hold a refused wait's entry, which points into a stack frame
 * long gone. */
static void uring_failed(struct notify *n, int err)
{
	n->fallbacks++;
	if (n->mode != NOTIFY_IO_URING)
		return;
	n->mode = NOTIFY_FUTEX;
	snprintf(n->notice, sizeof(n->notice), "pid %d: io_uring notifications failed (%s): "
		 "the futex syscalls from now on", (int)getpid(), err == -EEXIST ? "the ring "
		 "refuses this thread: it was created by another, a bug" : strerror(-err));
	if (n->say)
		n->say(n->notice);
}

/* A futex syscall that fails has been given a bad word address: a bug, and no way on.
 * Its last words are written here, to stderr, just before abort(): the wait and wake
 * calls return nothing to a caller that could print them. */
static void futex_wake_sys(_Atomic uint32_t *word, int nwake)
{
	if (syscall(SYS_futex, word, FUTEX_WAKE, nwake, NULL, NULL, 0) < 0) {
		fprintf(stderr, "emu: futex wake: %s\n", strerror(errno));
		abort();
	}
}

static int futex_waitv_sys(struct futex_waitv *v, int count, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ns >= 0) {
		/* futex_waitv takes an absolute deadline */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		int64_t ns = ts.tv_nsec + timeout_ns % 1000000000;
		ts.tv_sec += timeout_ns / 1000000000 + ns / 1000000000;
		ts.tv_nsec = ns % 1000000000;
		tsp = &ts;
	}
	if (syscall(SYS_futex_waitv, v, (unsigned)count, 0, tsp, CLOCK_MONOTONIC) >= 0)
		return 0;
	if (errno == EAGAIN)
		return 0;	/* a word already differed */
	return errno == ETIMEDOUT ? -ETIMEDOUT : -errno;
}

void notify_use_slots(struct notify *n, struct run_slots *s, int member)
{
	n->slots = s && s->k > 0 ? s : NULL;
	n->holding = 0;
	n->member = member;
	if (n->slots) {		/* from now on, awake means holding a slot (slots.h) */
		slots_take(n->slots, member, n);
		n->holding = 1;
	}
}

int notify_wait(struct notify *n, int count, _Atomic uint32_t *const words[],
		const uint32_t expect[], int64_t timeout_ns)
{
	if (!n->slots || count < 1 || count > NOTIFY_MAX_WORDS)
		return notify_wait_raw(n, count, words, expect, timeout_ns);
	/* A word that moved already: no sleep, so the slot is kept (giving it away would
	 * queue this process behind the others for nothing). */
	for (int i = 0; i < count; i++)
		if (atomic_load_explicit(words[i], memory_order_acquire) != expect[i]) {
			slots_awake(n->slots, n->member);	/* no deferred wake for us */
			return 0;
		}
	if (n->holding) {
		/* the hand-off's wake goes out with the sleep below (notify_hold); the
		 * depth is put back by hand, since notify_release would send it now */
		notify_hold(n);
		slots_give(n->slots, n->member, n);
		n->hold--;
	}
	int ret = notify_wait_raw(n, count, words, expect, timeout_ns);

	slots_take(n->slots, n->member, n);
	n->holding = 1;
	return ret;
}

int notify_wait_raw(struct notify *n, int count, _Atomic uint32_t *const words[],
		    const uint32_t expect[], int64_t timeout_ns)
{
	if (count < 1 || count > NOTIFY_MAX_WORDS)
		return -EINVAL;
	struct futex_waitv v[NOTIFY_MAX_WORDS];

	for (int i = 0; i < count; i++)		/* shared futexes: no FUTEX_PRIVATE_FLAG */
		v[i] = (struct futex_waitv){ .val = expect[i], .uaddr = (uintptr_t)words[i],
					     .flags = NOTIFY_FUTEX2_SIZE_U32 };
	n->waits++;
	int ret = -ENOSYS;
	if (n->mode == NOTIFY_IO_URING) {
		int nheld = n->nheld;

		n->nheld = 0;	/* sent with the wait, whatever becomes of it */
		ret = notify_uring_wait(n->uring, n->held, nheld, v, count, timeout_ns);
		if (ret == 0 || ret == -ETIMEDOUT || ret == -EINTR)
			return ret;
		uring_failed(n, ret);	/* the syscall does the job */
	}
	ret = futex_waitv_sys(v, count, timeout_ns);
	if (ret == 0 || ret == -ETIMEDOUT || ret == -EINTR)
		return ret;
	/* the last words before abort() (futex_wake_sys says why they are written here) */
	fprintf(stderr, "emu: futex_waitv on %d words: %s\n", count, strerror(-ret));
	abort();
}

/* The held wakes, submitted together (each one that failed done by the syscall), or by
 * the syscall once the ring has failed. */
static void send_held(struct notify *n)
{
	if (n->nheld && n->mode == NOTIFY_IO_URING) {
		int ret = notify_uring_wake(n->uring, n->held, n->nheld);

		if (ret < 0)
			uring_failed(n, ret);
	} else {
		for (int i = 0; i < n->nheld; i++)
			futex_wake_sys(n->held[i].word, n->held[i].nwake > INT_MAX ? INT_MAX :
				       (int)n->held[i].nwake);
	}
	n->nheld = 0;
}

void notify_hold(struct notify *n)
{
	n->hold++;
}

void notify_release(struct notify *n)
{
	if (--n->hold == 0)
		send_held(n);
}

static void wake(struct notify *n, _Atomic uint32_t *word, int nwake)
{
	n->wakes++;
	if (n->mode == NOTIFY_IO_URING) {
		if (n->hold) {
			if (n->nheld == NOTIFY_MAX_HELD)
				send_held(n);
			n->held[n->nheld++] = (struct notify_held){ word, (uint32_t)nwake };
			return;
		}
		struct notify_held one = { word, (uint32_t)nwake };
		int ret = notify_uring_wake(n->uring, &one, 1);

		if (ret < 0)
			uring_failed(n, ret);	/* done by the syscall already */
		return;
	}
	futex_wake_sys(word, nwake);
}

void notify_wake(struct notify *n, _Atomic uint32_t *word)
{
	wake(n, word, INT_MAX);
}

void notify_wake_one(struct notify *n, _Atomic uint32_t *word)
{
	wake(n, word, 1);
}
