/* tests/test_notify.c — notify_wait/notify_wake in both modes, across processes. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "emu/shm/notify.h"
#include "emu/shm/notify_uring.h"
#include "tests/modes.h"

#define NWORDS 100

static enum notify_mode modes[] = { NOTIFY_IO_URING, NOTIFY_FUTEX };

static void test_init_mode(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct notify n;

	assert_int_equal(notify_init(&n, mode), 0);
	assert_int_equal(n.mode, mode);
	assert_string_equal(notify_mode_name(n.mode), mode == NOTIFY_FUTEX ? "futex" : "io_uring");
	notify_free(&n);
}

static void test_differs_returns_at_once(void **state)
{
	struct notify n;
	_Atomic uint32_t w = 5;
	_Atomic uint32_t *words[1] = { &w };
	uint32_t expect = 4;

	assert_int_equal(notify_init(&n, *(enum notify_mode *)*state), 0);
	/* returns without sleeping: were it to sleep, it would never return (no timeout,
	 * nobody wakes it) and the runner's timeout would fail the test */
	assert_int_equal(notify_wait(&n, 1, words, &expect, -1), 0);
	notify_free(&n);
}

static void test_timeout(void **state)
{
	struct notify n;
	_Atomic uint32_t w[3] = { 1, 2, 3 };
	_Atomic uint32_t *words[3] = { &w[0], &w[1], &w[2] };
	uint32_t expect[3] = { 1, 2, 3 };
	int64_t t0, dt;

	assert_int_equal(notify_init(&n, *(enum notify_mode *)*state), 0);
	for (int rep = 0; rep < 3; rep++) {
		t0 = notify_now_ns();
		assert_int_equal(notify_wait(&n, 3, words, expect, 30000000), -ETIMEDOUT);
		dt = notify_now_ns() - t0;
		assert_true(dt >= 29000000);
		assert_true(dt < 30000000000);	/* a hang guard, not a speed test */
	}
	/* After timeouts, a differing word still returns at once: no stale completion
	 * is mistaken for this wait's, and none is missing either. */
	w[1] = 9;
	assert_int_equal(notify_wait(&n, 3, words, expect, 2000000000), 0);
	w[1] = 2;
	/* And after that early return, the next wait really waits its full timeout. */
	t0 = notify_now_ns();
	assert_int_equal(notify_wait(&n, 3, words, expect, 20000000), -ETIMEDOUT);
	assert_true(notify_now_ns() - t0 >= 19000000);
	notify_free(&n);
}

static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* A child sleeps on NWORDS shared words; the parent changes and wakes one of them. */
static void wake_one_of_many(enum notify_mode mode, int which, int64_t child_timeout)
{
	_Atomic uint32_t *w = mmap(NULL, NWORDS * sizeof(*w), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct notify n;
	int status;
	pid_t pid;

	assert_true(w != MAP_FAILED);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		_Atomic uint32_t *words[NWORDS];
		uint32_t expect[NWORDS];
		int ret;

		if (notify_init(&n, mode) < 0)
			_exit(10);
		for (int i = 0; i < NWORDS; i++) {
			words[i] = &w[i];
			expect[i] = 0;
		}
		ret = notify_wait(&n, NWORDS, words, expect, child_timeout);
		if (ret == -ETIMEDOUT)
			_exit(11);
		if (ret != 0)
			_exit(12);
		_exit(atomic_load(&w[which]) == 1 ? 0 : 13);
	}
	assert_int_equal(notify_init(&n, mode), 0);
	/* Wake only once the child sleeps, so that the wake path is what is tested. */
	for (int i = 0; i < 2000 && proc_state(pid) != 'S'; i++)
		usleep(1000);
	usleep(20000);
	assert_int_equal(proc_state(pid), 'S');
	atomic_store(&w[which], 1);
	notify_wake(&n, &w[which]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(n.wakes, 1);
	notify_free(&n);
	munmap(w, NWORDS * sizeof(*w));
}

static void test_wake_any_of_many(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;

	wake_one_of_many(mode, 57, -1);
	wake_one_of_many(mode, 0, 5000000000);
	wake_one_of_many(mode, NWORDS - 1, 5000000000);
}

/* A wake with nobody waiting is harmless and does not disturb the next wait. */
static void test_wake_without_sleeper(void **state)
{
	struct notify n;
	_Atomic uint32_t w = 0;
	_Atomic uint32_t *words[1] = { &w };
	uint32_t expect = 0;

	assert_int_equal(notify_init(&n, *(enum notify_mode *)*state), 0);
	for (int i = 0; i < 20; i++)
		notify_wake(&n, &w);
	assert_int_equal(notify_wait(&n, 1, words, &expect, 10000000), -ETIMEDOUT);
	assert_int_equal(notify_wait(&n, 0, words, &expect, 0), -EINVAL);
	notify_free(&n);
}

/* A child sleeps on w[0] (timeout: exit 11), then sets w[1] and wakes it. */
static pid_t pinger(enum notify_mode mode, _Atomic uint32_t *w)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct notify n;
		_Atomic uint32_t *word = &w[0];
		uint32_t zero = 0;

		if (notify_init(&n, mode) < 0)
			_exit(10);
		while (atomic_load(&w[0]) == 0)
			if (notify_wait(&n, 1, &word, &zero, 5000000000) == -ETIMEDOUT)
				_exit(11);
		atomic_store(&w[1], 1);
		notify_wake(&n, &w[1]);
		_exit(0);
	}
	for (int i = 0; i < 2000 && pid > 0 && proc_state(pid) != 'S'; i++)
		usleep(1000);
	return pid;
}

static void reaped(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Held wakes (notify_hold) go out with the next sleep, or at the release, and never
 * later: held past the queue's room, they go early.  In futex mode they go at once. */
static void test_held_wakes(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	enum { MANY = NOTIFY_MAX_HELD + 6 };
	_Atomic uint32_t *w = mmap(NULL, (2 + MANY) * sizeof(*w), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	_Atomic uint32_t *back = &w[1];
	uint32_t zero = 0;
	struct notify n;

	assert_true(w != MAP_FAILED);
	assert_int_equal(notify_init(&n, mode), 0);
	/* with a sleep: the child is woken by it, and its wake ends the sleep */
	pid_t pid = pinger(mode, w);

	assert_true(pid > 0);
	notify_hold(&n);
	atomic_store(&w[0], 1);
	notify_wake(&n, &w[0]);
	usleep(20000);
	if (mode == NOTIFY_IO_URING)	/* held: not sent yet */
		assert_int_equal(proc_state(pid), 'S');
	while (atomic_load(back) == 0)
		assert_int_equal(notify_wait(&n, 1, &back, &zero, 5000000000), 0);
	notify_release(&n);
	reaped(pid);
	/* at the release, after more wakes than the queue holds */
	atomic_store(&w[0], 0);
	atomic_store(&w[1], 0);
	pid = pinger(mode, w);
	assert_true(pid > 0);
	notify_hold(&n);
	for (int i = 0; i < MANY; i++)
		notify_wake(&n, &w[2 + i]);	/* nobody sleeps there */
	atomic_store(&w[0], 1);
	notify_wake(&n, &w[0]);
	usleep(20000);
	if (mode == NOTIFY_IO_URING)
		assert_int_equal(proc_state(pid), 'S');
	notify_release(&n);
	reaped(pid);
	assert_int_equal(n.wakes, 2 + MANY);
	assert_int_equal(n.fallbacks, 0);
	notify_free(&n);
	munmap(w, (2 + MANY) * sizeof(*w));
}

/* Waits from another thread than the notify's creator, whose io_uring ring (single
 * issuer) refuses them with -EEXIST.  Each refused wait leaves its SQE queued; the wait
 * that takes the queue's last entry with its deadline already past (timeout 0) has no
 * entry left for the cancel it means to submit, and must not spin for ever waiting for
 * one: notify_uring_wait is driven here to exactly that state (1 ms waits until one
 * entry is free).  Through
 * notify_wait, the first refusal turns the notify to the futex syscalls for good, said
 * once, and its waits still end at their timeouts. */
struct foreign {
	struct notify *n;
	int free_before;	/* the queue's free entries before the timeout-0 wait */
	int uring_rc;
	int timeouts, others;	/* of notify_wait */
};

static void *foreign_waits(void *arg)
{
	struct foreign *f = arg;
	_Atomic uint32_t w = 7;
	_Atomic uint32_t *words[1] = { &w };
	uint32_t expect = 7;
	struct io_uring *ring = f->n->uring;

	if (ring) {
		struct futex_waitv v = { .val = 7, .uaddr = (uintptr_t)&w,
					 .flags = NOTIFY_FUTEX2_SIZE_U32 };

		for (int i = 0; i < 1000 && io_uring_sq_space_left(ring) > 1; i++)
			notify_uring_wait(ring, NULL, 0, &v, 1, 1000000);
		f->free_before = (int)io_uring_sq_space_left(ring);
		f->uring_rc = notify_uring_wait(ring, NULL, 0, &v, 1, 0);
	}
	for (int i = 0; i < 3; i++) {
		int rc = notify_wait(f->n, 1, words, &expect, i ? 1000000 : 0);

		f->timeouts += rc == -ETIMEDOUT;
		f->others += rc != -ETIMEDOUT;
	}
	return NULL;
}

/* The notices said through a notify's say (notify.h), instead of printed by notify. */
static char said[256];
static int nsaid;

static void say(const char *line)
{
	snprintf(said, sizeof(said), "%s", line);
	nsaid++;
}

static void test_foreign_thread_waits_end(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct notify n;
	struct foreign f = { .n = &n };
	struct timespec until;
	pthread_t th;

	assert_int_equal(notify_init(&n, mode), 0);
	n.say = say;
	nsaid = 0;
	assert_int_equal(pthread_create(&th, NULL, foreign_waits, &f), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	if (pthread_timedjoin_np(th, NULL, &until) != 0)
		fail_msg("a wait from another thread than the notify's did not end in 20 s");
	assert_int_equal(f.timeouts, 3);
	assert_int_equal(f.others, 0);
	if (mode == NOTIFY_IO_URING) {
		/* the state the spin needed was reached (a ring that accepts another thread,
		 * without IORING_SETUP_SINGLE_ISSUER, never fills its queue) */
		if (f.free_before != 1) {
			printf("the ring accepted another thread's submissions (%d entries free):"
			       " no refused wait to check\n", f.free_before);
			notify_free(&n);
			skip();
		}
		assert_true(f.uring_rc < 0);
		assert_int_equal(n.mode, NOTIFY_FUTEX);
		assert_int_equal(n.fallbacks, 1);
		/* the fallback notice, said once through the owner's say, and kept */
		assert_int_equal(nsaid, 1);
		assert_string_equal(said, n.notice);
		assert_non_null(strstr(said, ": io_uring notifications failed ("));
		assert_non_null(strstr(said, "): the futex syscalls from now on"));
		assert_true(strncmp(said, "pid ", 4) == 0);
	} else {
		assert_int_equal(n.fallbacks, 0);
		assert_int_equal(nsaid, 0);
		assert_string_equal(n.notice, "");
	}
	notify_free(&n);
}

static void test_auto_picks_a_mode(void **state)
{
	struct notify n;

	assert_int_equal(notify_init(&n, NOTIFY_AUTO), 0);
	assert_true(n.mode == NOTIFY_IO_URING || n.mode == NOTIFY_FUTEX);
	assert_int_equal(n.spin_ns, NOTIFY_SPIN_NS);
	notify_free(&n);
}

#define MODE_TESTS(m)                                                        \
	cmocka_unit_test_prestate(test_init_mode, &modes[m]),                 \
	cmocka_unit_test_prestate(test_differs_returns_at_once, &modes[m]),   \
	cmocka_unit_test_prestate(test_timeout, &modes[m]),                   \
	cmocka_unit_test_prestate(test_wake_any_of_many, &modes[m]),          \
	cmocka_unit_test_prestate(test_wake_without_sleeper, &modes[m]),      \
	cmocka_unit_test_prestate(test_held_wakes, &modes[m]),                \
	cmocka_unit_test_prestate(test_foreign_thread_waits_end, &modes[m])

int main(int argc, char **argv)
{
	const struct CMUnitTest uring_tests[] = { MODE_TESTS(0) };
	const struct CMUnitTest futex_tests[] = {
		MODE_TESTS(1),
		cmocka_unit_test(test_auto_picks_a_mode),
	};

	if (test_notify_mode(argc, argv) == NOTIFY_IO_URING)
		return cmocka_run_group_tests_name("notify io_uring", uring_tests, NULL, NULL) ? 1 : 0;
	return cmocka_run_group_tests_name("notify futex", futex_tests, NULL, NULL) ? 1 : 0;
}
