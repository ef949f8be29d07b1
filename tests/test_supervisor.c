/* tests/test_supervisor.c — the real supervise() with test workers, run in a child of
 * the test so that its messages, exit code, open fds and children can be inspected.
 * Nothing here depends on the machine's speed: the test waits for events (a worker
 * registered, records arrived, a process died), with one generous hang guard
 * (HANG_GUARD_S) and the supervisor child's alarm. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/shm/ring.h"
#include "tests/memfds.h"
#include "emu/run/supervisor.h"
#include "tests/modes.h"

#define MAXW 16
#define HANG_GUARD_S 60		/* only a hung run takes this long */

enum scenario { SEGV, EXIT3, ERRTEXT, STOP, STOP_IGNORED, ALL_OK, CPU_IDLE, STALL, STOP_FROZEN,
		CRASH_REJOIN, CRASH_UNPLANNED };

/* Shared between the test, the supervisor child and (read-only) nobody else. */
struct result {
	enum scenario sc;
	enum notify_mode mode;
	int nworkers;
	_Atomic int records[MAXW];
	int last_step[MAXW];
	int order_errors, content_errors;
	int stopped[MAXW];	/* the last record said "stopped" */
	int end_status, end_calls;
	char end_why[256];	/* what on_end was told */
	int64_t stall_ns, grace_ns;	/* run.stall_timeout, run.stop_grace */
	_Atomic pid_t pids[MAXW];	/* each worker writes its own first */
	int memfds_after, children_left;
	/* CRASH_REJOIN: worker 2's first process, the one forked back, and the lowest step
	 * the others had begun when it started */
	pid_t crashed_pid, rejoined_pid;
	int64_t others_at_rejoin;
};

/* The crash scenarios: worker 2 ends as if crashed before step CRASH_AT, and (planned)
 * comes back at REJOIN_AT. */
#define CRASH_AT 4
#define REJOIN_AT 8

struct rec {
	int32_t step, stopped;
	uint8_t pad[];		/* ALL_OK: bytes (step * 7 + i) */
};

static int worker(void *ctx, struct region *rg, int id)
{
	struct result *res = ctx;
	struct worker_slot *slot = region_slot(rg, id);
	struct notify nt;
	uint8_t buf[4096];
	struct rec *r = (struct rec *)buf;

	int first = 0;

	if (atomic_load(&slot->start) >= 0) {	/* forked back after its crash */
		res->crashed_pid = res->pids[id];
		res->rejoined_pid = getpid();
		res->others_at_rejoin = INT64_MAX;
		for (int w = 0; w < res->nworkers; w++)
			if (w != id && atomic_load(&region_slot(rg, w)->step) < res->others_at_rejoin)
				res->others_at_rejoin = atomic_load(&region_slot(rg, w)->step);
		first = REJOIN_AT;
	}
	res->pids[id] = getpid();	/* before anything can end this worker */
	/* Nobody fails before every worker is there: a worker killed before it could
	 * register would be missing from the test's checks. */
	for (int w = 0; w < res->nworkers; w++)
		while (!atomic_load(&res->pids[w]))
			usleep(100);
	if (notify_init(&nt, res->mode) < 0)
		return 9;
	if (res->sc == CPU_IDLE) {
		uint64_t v = 42;

		if (id == 0) {	/* the only writer, after a second of silence */
			usleep(1000000);
			for (int w = 1; w < region_nworkers(rg); w++)
				ring_write_all(region_ring(rg, 0, w), &v, sizeof(v), &nt);
		} else {
			v = 0;
			ring_read_all(region_ring(rg, 0, id), &v, sizeof(v), &nt);
		}
		notify_free(&nt);
		return v == 42 ? 0 : 5;
	}
	for (int step = first;; step++) {
		size_t len = sizeof(*r);

		atomic_store(&slot->step, step);
		atomic_fetch_add(&slot->beats, 1);
		if ((res->sc == CRASH_REJOIN || res->sc == CRASH_UNPLANNED) && id == 2 &&
		    step == CRASH_AT && !first) {
			atomic_store(&slot->state, WORKER_CRASHED);
			notify_free(&nt);
			return 0;
		}
		if (res->sc == CRASH_REJOIN && step == 60)
			break;
		/* Worker 2 freezes (as a debugger or ^Z would) at step 5; in STALL the others
		 * wait for its message, as training peers would. */
		if ((res->sc == STALL || res->sc == STOP_FROZEN) && step == 5 && id == 2)
			raise(SIGSTOP);
		if (res->sc == STALL && step == 5 && id != 2) {
			uint64_t v;

			ring_read_all(region_ring(rg, 2, id), &v, sizeof(v), &nt);
		}
		/* Step boundary: the stop word is looked at here only. */
		if ((res->sc == STOP || res->sc == STOP_FROZEN) && atomic_load(region_stop(rg))) {
			r->step = step;
			r->stopped = 1;
			worker_log(rg, id, r, sizeof(*r), &nt);
			break;
		}
		if (res->sc == SEGV && id == 1 && step == 7) {
			signal(SIGSEGV, SIG_DFL);	/* not the sanitizer's handler */
			raise(SIGSEGV);
		}
		if (res->sc == EXIT3 && id == 2 && step == 4)
			return 3;
		if (res->sc == ERRTEXT && id == 0 && step == 5) {
			snprintf(slot->error, sizeof(slot->error), "bad batch in shard %d", id);
			return 2;
		}
		if (res->sc == ALL_OK && step == 60)
			break;
		r->step = step;
		r->stopped = 0;
		if (res->sc == ALL_OK) {	/* sizes that wrap the tiny log ring */
			size_t extra = (size_t)(step * 37 + id * 101) % 1500;

			for (size_t i = 0; i < extra; i++)
				r->pad[i] = (uint8_t)(step * 7 + (int)i);
			len += extra;
		}
		worker_log(rg, id, r, len, &nt);
		if (res->sc != ALL_OK)
			usleep(1000);
	}
	notify_free(&nt);
	return 0;
}

static int on_record(void *ctx, int id, const void *data, size_t len)
{
	struct result *res = ctx;
	const struct rec *r = data;

	if (len < sizeof(*r)) {
		res->content_errors++;
		return 0;
	}
	bool back = res->sc == CRASH_REJOIN && res->last_step[id] == CRASH_AT - 1 &&
		    r->step == REJOIN_AT;	/* the steps it was down are missing */
	if (atomic_load(&res->records[id]) > 0 && r->step != res->last_step[id] + 1 && !back)
		res->order_errors++;
	if (atomic_load(&res->records[id]) == 0 && r->step != 0)
		res->order_errors++;
	for (size_t i = 0; i + sizeof(*r) < len; i++)
		if (r->pad[i] != (uint8_t)(r->step * 7 + (int)i))
			res->content_errors++;
	if (res->sc == ALL_OK && len != sizeof(*r) + (size_t)(r->step * 37 + id * 101) % 1500)
		res->content_errors++;
	res->last_step[id] = r->step;
	res->stopped[id] = r->stopped;
	atomic_fetch_add(&res->records[id], 1);
	return 0;
}

static int count_dir(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int on_end(void *ctx, int status, const char *why)
{
	struct result *res = ctx;

	res->end_status = status;
	res->end_calls++;
	snprintf(res->end_why, sizeof(res->end_why), "%s", why ? why : "");
	return status;
}

/* Only CRASH_REJOIN plans a crash: worker 2 before step CRASH_AT, back at REJOIN_AT. */
static int64_t rejoin_at(void *ctx, int id, int64_t step)
{
	struct result *res = ctx;

	return res->sc == CRASH_REJOIN && id == 2 && step == CRASH_AT ? REJOIN_AT : -2;
}

static const struct supervisor_ops ops = { .worker = worker, .on_record = on_record,
					   .on_end = on_end, .rejoin_at = rejoin_at };

struct run {
	pid_t pid;
	int status;		/* wait status of the supervisor child */
	char err[4096];		/* its stderr */
	struct rusage ru;
	int64_t ns;		/* wall time of the whole child */
	int64_t start;
	int errfd;
};

static struct result *new_result(enum scenario sc, enum notify_mode mode)
{
	struct result *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(res != MAP_FAILED);
	memset(res, 0, sizeof(*res));
	res->sc = sc;
	res->mode = mode;
	return res;
}

static int64_t elapsed_s(int64_t t0)
{
	return (notify_now_ns() - t0) / 1000000000;
}

static void start(struct run *rn, struct result *res, int nworkers, size_t log_ring)
{
	char tmpl[] = "/tmp/test_supervisor.XXXXXX";

	rn->errfd = mkstemp(tmpl);
	assert_true(rn->errfd >= 0);
	unlink(tmpl);
	rn->start = notify_now_ns();
	res->nworkers = nworkers;
	rn->pid = fork();
	assert_true(rn->pid >= 0);
	if (rn->pid == 0) {
		struct cfg c;
		struct region_params p = { .nworkers = nworkers, .ring_size = 4096,
					   .log_ring_size = log_ring };
		int before = count_memfds(), ret;

		alarm(HANG_GUARD_S);
		dup2(rn->errfd, 2);
		memset(&c, 0, sizeof(c));
		c.run.notify = res->mode;
		c.run.workers = nworkers;
		c.run.stall_timeout = res->stall_ns;
		c.run.stop_grace = res->grace_ns;
		ret = supervise(&c, &p, &ops, res);
		res->memfds_after = count_memfds() - before;
		res->children_left = !(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
		_exit(ret);
	}
}

/* Only the supervisor child itself is waited for; slot pids were copied by the test. */
static void finish(struct run *rn)
{
	ssize_t len;

	assert_int_equal(wait4(rn->pid, &rn->status, 0, &rn->ru), rn->pid);
	rn->ns = notify_now_ns() - rn->start;
	len = pread(rn->errfd, rn->err, sizeof(rn->err) - 1, 0);
	rn->err[len > 0 ? len : 0] = '\0';
	close(rn->errfd);
}

static void check_clean(const struct result *res, int nworkers)
{
	assert_int_equal(res->end_calls, 1);
	assert_int_equal(res->memfds_after, 0);
	assert_int_equal(res->children_left, 0);
	for (int w = 0; w < nworkers; w++) {
		if (res->pids[w] <= 0)
			continue;
		assert_int_equal(kill(res->pids[w], 0), -1);
		assert_int_equal(errno, ESRCH);
	}
}

/* The worker pids: each worker writes its own into the shared result as it starts, so
 * a worker that has already finished is counted too (reading the supervisor's children
 * from /proc raced with fast workers). */
static void collect_pids(struct run *rn, struct result *res, int nworkers)
{
	int64_t t0 = notify_now_ns();
	int n = 0;

	while (elapsed_s(t0) < HANG_GUARD_S) {
		n = 0;
		for (int w = 0; w < nworkers; w++)
			n += atomic_load(&res->pids[w]) > 0;
		if (n == nworkers)
			break;
		usleep(1000);
	}
	assert_int_equal(n, nworkers);
}

static void expect_lines(const char *err, const char *second, enum notify_mode mode, int n)
{
	char first[128], want[512];

	snprintf(first, sizeof(first), "emu: %d workers, notifications: %s\n", n,
		 notify_mode_name(mode));
	snprintf(want, sizeof(want), "%s%s", first, second);
	if (strcmp(err, want) != 0)
		print_error("stderr was:\n%s\nexpected:\n%s\n", err, want);
	assert_string_equal(err, want);
}

static void run_failure(enum notify_mode mode, enum scenario sc, const char *line, int bad)
{
	struct result *res = new_result(sc, mode);
	int shm_before = count_dir("/dev/shm");
	struct run rn;

	start(&rn, res, 3, 4096);
	collect_pids(&rn, res, 3);
	finish(&rn);
	assert_true(WIFEXITED(rn.status));
	assert_int_equal(WEXITSTATUS(rn.status), 1);
	assert_int_equal(res->end_status, 1);
	expect_lines(rn.err, line, mode, 3);
	/* (the others never stop by themselves: that the run ended says they were killed) */
	/* Everything the failing worker logged before it failed arrived, in order. */
	int steps = sc == SEGV ? 7 : sc == EXIT3 || sc == CRASH_UNPLANNED ? 4 : 5;
	assert_int_equal(res->records[bad], steps);
	assert_int_equal(res->last_step[bad], steps - 1);
	assert_int_equal(res->order_errors, 0);
	check_clean(res, 3);
	assert_int_equal(count_dir("/dev/shm"), shm_before);
	munmap(res, sizeof(*res));
}

static enum notify_mode modes[] = { NOTIFY_IO_URING, NOTIFY_FUTEX };

static void test_segv(void **state)
{
	run_failure(*(enum notify_mode *)*state, SEGV, "emu: worker 1 died at step 7: SIGSEGV\n", 1);
}

static void test_exit3(void **state)
{
	run_failure(*(enum notify_mode *)*state, EXIT3,
		    "emu: worker 2 died at step 4: exit status 3\n", 2);
}

/* A worker that claims a crash the plan does not have is a failure like any other. */
static void test_unplanned_crash_fails(void **state)
{
	run_failure(*(enum notify_mode *)*state, CRASH_UNPLANNED, "emu: worker 2 failed at "
		    "step 4: it ended as if crashed, but no crash of it is planned at this "
		    "step\n", 2);
}

/* A planned crash: the run goes on without worker 2, which is forked back once both
 * others have begun step REJOIN_AT, and the run ends well. */
static void test_planned_crash_rejoins(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct result *res = new_result(CRASH_REJOIN, mode);
	struct run rn;

	start(&rn, res, 3, 4096);
	collect_pids(&rn, res, 3);
	finish(&rn);
	assert_true(WIFEXITED(rn.status));
	assert_int_equal(WEXITSTATUS(rn.status), 0);
	assert_int_equal(res->end_status, 0);
	expect_lines(rn.err, "", mode, 3);
	assert_int_equal(res->records[2], CRASH_AT + 60 - REJOIN_AT);
	assert_int_equal(res->last_step[2], 59);
	assert_int_equal(res->order_errors, 0);
	assert_true(res->rejoined_pid > 0 && res->rejoined_pid != res->crashed_pid);
	assert_true(res->others_at_rejoin >= REJOIN_AT);
	check_clean(res, 3);
	munmap(res, sizeof(*res));
}

static void test_error_text(void **state)
{
	run_failure(*(enum notify_mode *)*state, ERRTEXT,
		    "emu: worker 0 failed at step 5: bad batch in shard 0\n", 0);
}

static void wait_records(struct result *res, int nworkers, int min)
{
	for (int64_t t0 = notify_now_ns(); elapsed_s(t0) < HANG_GUARD_S;) {
		int ok = 1;

		for (int w = 0; w < nworkers; w++)
			ok &= atomic_load(&res->records[w]) >= min;
		if (ok)
			return;
		usleep(1000);
	}
	fail_msg("workers did not log %d records each", min);
}

static void test_sigint_stops_at_step_boundary(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct result *res = new_result(STOP, mode);
	struct run rn;

	start(&rn, res, 4, 4096);
	collect_pids(&rn, res, 4);
	wait_records(res, 4, 5);
	kill(rn.pid, SIGINT);
	finish(&rn);
	assert_true(WIFEXITED(rn.status));
	assert_int_equal(WEXITSTATUS(rn.status), 130);
	assert_int_equal(res->end_status, 130);
	expect_lines(rn.err, "", mode, 4);
	for (int w = 0; w < 4; w++)
		assert_int_equal(res->stopped[w], 1);	/* each left through the stop path */
	assert_int_equal(res->order_errors, 0);
	check_clean(res, 4);
	munmap(res, sizeof(*res));
}

/* A second stop signal, of any kind, kills at once; the first decides the exit code. */
static void second_signal_kills(enum notify_mode mode, int first, int second, const char *line)
{
	struct result *res = new_result(STOP_IGNORED, mode);
	struct run rn;

	start(&rn, res, 3, 4096);
	collect_pids(&rn, res, 3);
	wait_records(res, 3, 3);
	kill(rn.pid, first);
	usleep(50000);
	assert_int_equal(waitpid(rn.pid, NULL, WNOHANG), 0);	/* still waiting for them */
	kill(rn.pid, second);
	finish(&rn);	/* the workers ignore the stop word: ending at all is the kill */
	assert_true(WIFEXITED(rn.status));
	assert_int_equal(WEXITSTATUS(rn.status), 128 + first);
	expect_lines(rn.err, line, mode, 3);
	check_clean(res, 3);
	munmap(res, sizeof(*res));
}

static void test_second_sigint_kills(void **state)
{
	second_signal_kills(*(enum notify_mode *)*state, SIGINT, SIGINT,
			    "emu: a second SIGINT: the workers are killed\n");
}

/* SIGHUP (a dropped ssh session) stops like SIGTERM, and a SIGTERM after it kills. */
static void test_sighup_then_sigterm_kills(void **state)
{
	second_signal_kills(*(enum notify_mode *)*state, SIGHUP, SIGTERM,
			    "emu: a second SIGTERM: the workers are killed\n");
}

/* Worker 2 is SIGSTOPped, the others wait for it: the watchdog names it, the run ends. */
static void test_stall_blames_the_stopped_worker(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct result *res = new_result(STALL, mode);
	const char *line = "worker 2 not responding at step 5 (stopped): no worker made "
			   "progress for 1 s (run.stall_timeout)";
	char want[512];
	struct run rn;

	res->stall_ns = 1000000000;
	start(&rn, res, 4, 4096);
	collect_pids(&rn, res, 4);
	finish(&rn);
	assert_true(WIFEXITED(rn.status));
	assert_int_equal(WEXITSTATUS(rn.status), 1);
	assert_true(rn.ns >= 1000000000);	/* not before the timeout */
	snprintf(want, sizeof(want), "emu: %s\n", line);
	expect_lines(rn.err, want, mode, 4);
	assert_string_equal(res->end_why, line);
	check_clean(res, 4);
	munmap(res, sizeof(*res));
}

/* SIGTERM with a stopped worker: the others stop, it cannot; run.stop_grace later it is
 * killed and the run ends as interrupted. */
static void test_sigterm_ends_within_the_grace(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct result *res = new_result(STOP_FROZEN, mode);
	struct run rn;

	res->grace_ns = 1000000000;
	start(&rn, res, 4, 4096);
	collect_pids(&rn, res, 4);
	wait_records(res, 4, 5);	/* worker 2 is stopped after its 5th */
	kill(rn.pid, SIGTERM);
	finish(&rn);
	assert_true(WIFEXITED(rn.status));
	assert_int_equal(WEXITSTATUS(rn.status), 143);
	expect_lines(rn.err, "emu: the workers did not stop within 1 s of SIGTERM "
		     "(run.stop_grace): killed\n", mode, 4);
	assert_string_equal(res->end_why, "stopped by SIGTERM");
	for (int w = 0; w < 4; w++)
		assert_int_equal(res->stopped[w], w != 2);
	check_clean(res, 4);
	munmap(res, sizeof(*res));
}

static int dead(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t len;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	p = strrchr(buf, ')');
	return p && (p[2] == 'Z' || p[2] == 'X');	/* a zombie waiting for init */
}

/* SIGKILL to the supervisor: no worker outlives it (PR_SET_PDEATHSIG). */
static void test_killed_supervisor_takes_workers(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct result *res = new_result(STOP_IGNORED, mode);
	struct run rn;
	int64_t t0;
	int alive = 3;

	start(&rn, res, 3, 4096);
	collect_pids(&rn, res, 3);
	wait_records(res, 3, 2);
	kill(rn.pid, SIGKILL);
	finish(&rn);
	assert_true(WIFSIGNALED(rn.status));
	t0 = notify_now_ns();
	while (alive > 0 && elapsed_s(t0) < HANG_GUARD_S) {
		alive = 0;
		for (int w = 0; w < 3; w++)
			alive += !dead(res->pids[w]);
		usleep(1000);
	}
	assert_int_equal(alive, 0);
	assert_int_equal(res->end_calls, 0);	/* nobody was left to call it */
	munmap(res, sizeof(*res));
}

static void test_all_ok_with_backpressure(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct result *res = new_result(ALL_OK, mode);
	struct run rn;

	start(&rn, res, 4, 256);	/* records up to 1.5 KiB through 256-byte rings */
	collect_pids(&rn, res, 4);
	finish(&rn);
	assert_true(WIFEXITED(rn.status));
	assert_int_equal(WEXITSTATUS(rn.status), 0);
	assert_int_equal(res->end_status, 0);
	expect_lines(rn.err, "", mode, 4);
	for (int w = 0; w < 4; w++) {
		assert_int_equal(res->records[w], 60);
		assert_int_equal(res->last_step[w], 59);
	}
	assert_int_equal(res->order_errors, 0);
	assert_int_equal(res->content_errors, 0);
	check_clean(res, 4);
	munmap(res, sizeof(*res));
}

/* 16 workers on 2 cores wait a second in ring_read_all: they must sleep, not spin. */
static void test_waiting_workers_sleep(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	struct result *res = new_result(CPU_IDLE, mode);
	struct run rn;
	double cpu;

	start(&rn, res, 16, 4096);
	collect_pids(&rn, res, 16);
	finish(&rn);
	assert_true(WIFEXITED(rn.status));
	assert_int_equal(WEXITSTATUS(rn.status), 0);
	assert_true(rn.ns >= 1000000000);
	cpu = (double)rn.ru.ru_utime.tv_sec + rn.ru.ru_utime.tv_usec * 1e-6 +
	      (double)rn.ru.ru_stime.tv_sec + rn.ru.ru_stime.tv_usec * 1e-6;
	print_message("16 workers waiting %.2f s: %.3f s CPU in all (supervisor included)\n",
		      (double)rn.ns * 1e-9, cpu);
	assert_true(cpu < 16 * 0.05 * (double)rn.ns * 1e-9);
	check_clean(res, 16);
	munmap(res, sizeof(*res));
}

#define MODE_TESTS(m)                                                              \
	cmocka_unit_test_prestate(test_segv, &modes[m]),                            \
	cmocka_unit_test_prestate(test_exit3, &modes[m]),                           \
	cmocka_unit_test_prestate(test_error_text, &modes[m]),                      \
	cmocka_unit_test_prestate(test_unplanned_crash_fails, &modes[m]),           \
	cmocka_unit_test_prestate(test_planned_crash_rejoins, &modes[m]),           \
	cmocka_unit_test_prestate(test_sigint_stops_at_step_boundary, &modes[m]),   \
	cmocka_unit_test_prestate(test_second_sigint_kills, &modes[m]),             \
	cmocka_unit_test_prestate(test_sighup_then_sigterm_kills, &modes[m]),       \
	cmocka_unit_test_prestate(test_stall_blames_the_stopped_worker, &modes[m]), \
	cmocka_unit_test_prestate(test_sigterm_ends_within_the_grace, &modes[m]),   \
	cmocka_unit_test_prestate(test_killed_supervisor_takes_workers, &modes[m]), \
	cmocka_unit_test_prestate(test_all_ok_with_backpressure, &modes[m]),        \
	cmocka_unit_test_prestate(test_waiting_workers_sleep, &modes[m])

int main(int argc, char **argv)
{
	const struct CMUnitTest uring_tests[] = { MODE_TESTS(0) };
	const struct CMUnitTest futex_tests[] = { MODE_TESTS(1) };

	if (test_notify_mode(argc, argv) == NOTIFY_IO_URING)
		return cmocka_run_group_tests_name("supervisor io_uring", uring_tests, NULL, NULL) ? 1 : 0;
	return cmocka_run_group_tests_name("supervisor futex", futex_tests, NULL, NULL) ? 1 : 0;
}
