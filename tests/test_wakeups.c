/* tests/test_wakeups.c — no lost wake-up in the rings' sleep protocol (emu/shm/ring.c),
 * under load and with the race window widened.
 *
 * Two processes ping-pong 8-byte messages through two rings without spinning, so that
 * every hand-off goes through arm, sleep and wake; the producer of each message waits
 * RACE_NS between its publication and its fence, and a sleeper as long between its last
 * check and its sleep (notify's race_ns): the windows in which a bare token that the
 * waker always clears (emu/shm/ring.c) spends the wake on data the sleeper has already
 * consumed, and the sleeper then sleeps through the next message (with these windows
 * such a token hangs about a third of the runs of 20000 hand-offs in futex mode).  Two
 * busy processes load both cores.  A lost wake-up
 * hangs the ping-pong (the rings sleep without timeouts); the hang guard turns it into a
 * failure.  No io_uring operation may fall back to the syscalls.
 * Usage: test_wakeups [io_uring] [HANDOFFS]   (default 50000; make stress runs 10^6)
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/shm/ring.h"
#include "tests/modes.h"

#define RACE_NS 20000
#define HANG_GUARD_S 600	/* only a lost wake-up takes this long */

static pid_t busy(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (volatile uint64_t x = 0;; x++)
			;
	}
	return pid;
}

/* One side: n round trips, reading from in and writing to out (first writes when
 * starts); every value checked.  Returns 0 or the first wrong value's round. */
static long side(struct ring *in, struct ring *out, long n, int starts, struct notify *nt)
{
	for (long i = 0; i < n; i++) {
		uint64_t v = (uint64_t)i;

		if (starts) {
			ring_write_all(out, &v, sizeof(v), nt);
			ring_read_all(in, &v, sizeof(v), nt);
			if (v != (uint64_t)i + 1)
				return i + 1;
		} else {
			ring_read_all(in, &v, sizeof(v), nt);
			if (v != (uint64_t)i)
				return i + 1;
			v++;
			ring_write_all(out, &v, sizeof(v), nt);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum notify_mode mode = NOTIFY_FUTEX;
	long handoffs = 50000;
	for (int i = 1; i < argc; i++) {
		char *uring[] = { argv[0], "io_uring" };
		if (!strcmp(argv[i], "io_uring"))
			mode = test_notify_mode(2, uring);	/* 77 where unavailable */
		else
			handoffs = atol(argv[i]);
	}
	long trips = handoffs / 2;
	struct region_params p = { .nworkers = 2, .ring_size = 4096, .log_ring_size = 4096 };
	struct region *rg;

	if (trips < 1 || region_create(&rg, &p) < 0) {
		fprintf(stderr, "usage: %s [io_uring] [HANDOFFS]\n", argv[0]);
		return 2;
	}
	struct ring *ab = region_ring(rg, 0, 1), *ba = region_ring(rg, 1, 0);
	pid_t load[2] = { busy(), busy() };
	int64_t t0 = notify_now_ns();
	fflush(NULL);
	pid_t peer = fork();

	if (peer == 0) {
		struct notify nt;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(HANG_GUARD_S);
		if (notify_init(&nt, mode) < 0)
			_exit(10);
		nt.spin_ns = 0;
		nt.race_ns = RACE_NS;
		long bad = side(ab, ba, trips, 0, &nt);
		_exit(bad ? 11 : nt.fallbacks ? 12 : 0);
	}
	struct notify nt;
	int rc = notify_init(&nt, mode), status = 0;

	nt.spin_ns = 0;
	nt.race_ns = RACE_NS;
	alarm(HANG_GUARD_S);	/* a hang ends here: SIGALRM kills this process, exit != 0 */
	long bad = rc < 0 ? -1 : side(ba, ab, trips, 1, &nt);
	alarm(0);
	waitpid(peer, &status, 0);
	for (int i = 0; i < 2; i++) {
		kill(load[i], SIGKILL);
		waitpid(load[i], NULL, 0);
	}
	double s = (double)(notify_now_ns() - t0) * 1e-9;
	printf("%s: %ld hand-offs in %.1f s under load (race window %d ns): %llu sleeps and "
	       "%llu wakes on this side, %llu fallbacks; peer exit %d\n", notify_mode_name(mode),
	       2 * trips, s, RACE_NS, (unsigned long long)nt.waits, (unsigned long long)nt.wakes,
	       (unsigned long long)nt.fallbacks, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	region_destroy(rg);
	notify_free(&nt);
	if (bad || nt.fallbacks || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("FAILED: %s\n", bad ? "a wrong value" : nt.fallbacks ? "io_uring fell back" :
		       "the peer failed");
		return 1;
	}
	return 0;
}
