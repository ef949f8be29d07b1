/* emu/run/supervisor.c — fork the workers, watch pidfds, signals and log rings (supervisor.h).
 *
 * Resources of the supervisor (notify, io_uring, signalfd, pidfds) are created after the
 * fork, so no worker inherits them.  The stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGUSR1, SIGUSR2) are blocked before the fork and read through a signalfd; workers
 * ignore them (a terminal's Ctrl-C or hang-up reaches the whole process group) and stop
 * when the supervisor sets the region's stop word.
 */
#include "emu/run/supervisor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/mpi/world.h"
#include "emu/shm/notify.h"
#include "emu/shm/notify_uring.h"
#include "emu/shm/ring.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define LOG_MAX 4096
#define REJOIN_TICK_NS 2000000	/* 2 ms */
#define SUP_MAX_LOG_WORDS NOTIFY_MAX_WORDS

/* io_uring user_data: TAG_PID + worker for a pidfd */
enum { TAG_SIGNAL = 16, TAG_LOGS = 17, TAG_BRIDGE = 18, TAG_PID = 1 << 20 };

struct logbuf {			/* one record being reassembled: u32 length, then bytes */
	uint32_t got;		/* bytes of header + payload received */
	uint8_t data[4 + LOG_MAX];
};

struct sup {
	const struct supervisor_ops *ops;
	void *ctx;
	struct region *rg;
	int n, nalive, status, signo;
	int lo, hi;		/* the workers this supervisor forks: all of them on one host */
	struct world *world;	/* NULL on one host */
	struct bridge *br;	/* across hosts: the links to the other ranks (world.h) */
	bool reads_logs;	/* it reads the log rings: on one host, or as rank 0 */
	char where[96];		/* across hosts, " on host H (rank R)" for reports */
	bool killing;		/* we sent SIGKILL: deaths from now on are ours */
	bool stopping;
	char why[256];		/* what ended the run, when it did not end well */
	bool failed;		/* why is a failure (not a stop): no later reason replaces it */
	int64_t stall_ns, grace_ns;	/* run.stall_timeout, run.stop_grace; 0 = none */
	int64_t tick_ns;	/* the longest wait: 1 s, or run.progress_every when shorter */
	int64_t stop_at;	/* when the stop was asked for */
	int64_t doomed_at;	/* across hosts: when the launcher's SIGTERM came (launcher_wait) */
	int64_t ckpt_ns, ckpt_at;	/* run.checkpoint_wall, when one was last asked for */
	uint64_t beats;		/* the workers' beats at last_beat */
	int64_t last_beat;	/* when a worker last made progress */
	pid_t *pid;
	int *pidfd;
	int64_t *rejoin;	/* a worker that crashed as planned: the step it rejoins at, or -1 */
	sigset_t oldmask;	/* the mask forked workers restore */
	struct logbuf *logs;
	struct pollfd *pf;	/* ppoll mode: signalfd + pidfds */
	int *pf_worker;
	struct notify nt;
	bool uring_ok;
	bool watching;		/* setup_watchers ran: a worker forked now must drop them */
	struct io_uring ring;
	int sfd;
	bool sig_armed, logs_armed, bridge_armed;
	struct futex_waitv waitv[SUP_MAX_LOG_WORDS];
};

static void kill_all(struct sup *s)
{
	s->killing = true;
	for (int i = 0; i < s->n; i++)
		if (s->pid[i] > 0)
			kill(s->pid[i], SIGKILL);
}

/* A failure: printed as "emu: ...", and the run's reason (for status.json) unless an
 * earlier failure is; a failure replaces the reason of a stop. */
static void failure(struct sup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failure(struct sup *s, const char *fmt, ...)
{
	char msg[sizeof(s->why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "emu: %s\n", msg);
	if (!s->failed)
		memcpy(s->why, msg, sizeof(msg));
	s->failed = true;
	s->status = 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Signals that stop a run: the first finishes the step, the second kills. */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define NSTOP_SIGS (sizeof(stop_sigs) / sizeof(stop_sigs[0]))

void supervisor_stop_signals(sigset_t *set)
{
	struct sigaction sa;

	sigemptyset(set);
	for (size_t i = 0; i < NSTOP_SIGS; i++) {
		/* SIGHUP ignored by whoever started emu (nohup) stays ignored: blocked and read
		 * through a signalfd or sigwaitinfo, it would still arrive.  Only SIGHUP: a
		 * shell starts its background jobs with SIGINT and SIGQUIT ignored, and
		 * `kill -INT` must still stop those */
		if (stop_sigs[i] == SIGHUP && sigaction(SIGHUP, NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			continue;
		sigaddset(set, stop_sigs[i]);
	}
}

static void drain_one(struct sup *s, int w)
{
	struct ring *r = region_log_ring(s->rg, w);
	struct logbuf *b = &s->logs[w];

	for (;;) {
		uint32_t len;
		size_t k;

		if (b->got < 4) {
			b->got += (uint32_t)ring_read(r, b->data + b->got, 4 - b->got, &s->nt);
			if (b->got < 4)
				return;
		}
		memcpy(&len, b->data, 4);
		if (len > LOG_MAX) {	/* cannot happen through worker_log */
			fprintf(stderr, "emu: worker %d: corrupt log record (length %u)\n", w, len);
			b->got = 0;
			return;
		}
		k = ring_read(r, b->data + b->got, 4 + len - b->got, &s->nt);
		b->got += (uint32_t)k;
		if (b->got < 4 + len)
			return;
		b->got = 0;
		if (s->ops->on_record && s->ops->on_record(s->ctx, w, b->data + 4, len) < 0 &&
		    !s->killing) {	/* the logs cannot be written: nothing to run for */
			s->status = 1;
			s->failed = true;	/* on_record said why, and keeps it */
			kill_all(s);
		}
	}
}

static void drain_logs(struct sup *s)
{
	if (!s->reads_logs)
		return;		/* a rank > 0: its bridge sends them to rank 0 */
	for (int w = 0; w < s->n; w++)
		drain_one(s, w);
}

static void report(struct sup *s, int w, const siginfo_t *si)
{
	struct worker_slot *slot = region_slot(s->rg, w);
	long long step = (long long)atomic_load(&slot->step);
	char err[sizeof(slot->error) + 1];

	memcpy(err, slot->error, sizeof(slot->error));
	err[sizeof(slot->error)] = '\0';
	if (si->si_code == CLD_EXITED && err[0]) {
		failure(s, "worker %d%s failed at step %lld: %s", w, s->where, step, err);
	} else if (si->si_code == CLD_EXITED) {
		failure(s, "worker %d%s died at step %lld: exit status %d", w, s->where, step,
			si->si_status);
	} else {
		const char *name = sigabbrev_np(si->si_status);

		if (name)
			failure(s, "worker %d%s died at step %lld: SIG%s", w, s->where, step, name);
		else
			failure(s, "worker %d%s died at step %lld: signal %d", w, s->where, step,
				si->si_status);
	}
}

/* After a worker's exit 0: false, unless it claims a crash the plan does not have
 * (then its death is reported as a failure). */
static bool planned_crash(struct sup *s, int w)
{
	struct worker_slot *slot = region_slot(s->rg, w);
	int64_t step = atomic_load(&slot->step), at;

	if (atomic_load(&slot->state) != WORKER_CRASHED)
		return false;
	at = s->ops->rejoin_at ? s->ops->rejoin_at(s->ctx, w, step) : -2;
	if (at < -1) {
		snprintf(slot->error, sizeof(slot->error), "it ended as if crashed, but no crash "
			 "of it is planned at this step");
		return true;
	}
	s->rejoin[w] = at;
	return false;
}

static void reap(struct sup *s, int w)
{
	siginfo_t si;

	int rc;

	memset(&si, 0, sizeof(si));
	while ((rc = waitid(P_PIDFD, (id_t)s->pidfd[w], &si, WEXITED)) < 0 && errno == EINTR)
		;
	int err = errno;

	close(s->pidfd[w]);
	s->pidfd[w] = -1;
	s->pid[w] = 0;
	s->nalive--;
	if (rc < 0) {	/* how it ended is unknown: not a success, and not "signal 0" */
		atomic_store(&region_slot(s->rg, w)->state, WORKER_FAILED);
		if (!s->killing)
			failure(s, "worker %d%s: cannot learn how it ended: %s", w, s->where,
				strerror(err));
		kill_all(s);
		return;
	}
	if (si.si_code == CLD_EXITED && si.si_status == 0 && !planned_crash(s, w))
		return;
	atomic_store(&region_slot(s->rg, w)->state, WORKER_FAILED);
	if (s->killing)
		return;		/* killed by us, after the failure already reported */
	if (s->reads_logs)
		drain_one(s, w);	/* its last records before the report */
	report(s, w, &si);
	kill_all(s);
}

static void on_signal(struct sup *s)
{
	struct signalfd_siginfo fi;

	while (read(s->sfd, &fi, sizeof(fi)) == (ssize_t)sizeof(fi)) {
		const char *name = sigabbrev_np((int)fi.ssi_signo);

		if (s->world && fi.ssi_signo == SIGTERM && (pid_t)fi.ssi_pid == s->world->launcher &&
		    !s->doomed_at)
			s->doomed_at = now_ns();	/* SIGKILL follows (launcher_wait) */
		if (!s->stopping) {
			/* Workers finish their step and agree on stopping through the exchange. */
			s->stopping = true;
			s->stop_at = now_ns();
			s->signo = (int)fi.ssi_signo;
			if (s->status == 0)
				s->status = 128 + s->signo;
			if (!s->why[0])
				snprintf(s->why, sizeof(s->why), "stopped by SIG%s", name ? name : "?");
			atomic_fetch_or(region_stop(s->rg), 1);	/* read once per step */
		} else if (!s->killing) {
			fprintf(stderr, "emu: a second SIG%s: the workers are killed\n",
				name ? name : "?");
			kill_all(s);
		}
	}
}

/* The worker to blame for a stalled run: the one at the lowest step, preferring a
 * stopped or stuck process (state T, t or D in /proc), then a running one (the others
 * sleep waiting for it), then the lowest id.  Its state's name goes into state. */
static int stalled_worker(struct sup *s, const char **state)
{
	static const char order[] = "TtDR";	/* most to least suspicious; others after */
	int best = -1, best_rank = 0;
	int64_t best_step = 0;

	*state = "";
	for (int w = 0; w < s->n; w++) {
		char path[64], buf[512], st = '?';
		const char *rp, *in;
		int64_t step = atomic_load(&region_slot(s->rg, w)->step);
		FILE *f;

		if (s->pid[w] <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->pid[w]);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) && rp[1] == ' ')
			st = rp[2];	/* pid (comm) STATE ...: comm may hold spaces */
		if (f)
			fclose(f);
		in = strchr(order, st);
		int rank = in && st ? (int)(in - order) : (int)sizeof(order);
		if (best < 0 || step < best_step || (step == best_step && rank < best_rank)) {
			best = w;
			best_step = step;
			best_rank = rank;
			*state = st == 'T' ? "stopped" : st == 't' ? "stopped by a debugger" :
				 st == 'D' ? "stuck in the kernel" : st == 'R' ? "running" :
				 "waiting";
		}
	}
	return best;
}

/* Across hosts, the launcher (mpirun, or its daemon on this host) ends a job with SIGTERM
 * and SIGKILL odls_base_sigkill_timeout later (1 s unless set; mpirun passes its --mca
 * settings to the ranks as OMPI_MCA_*): on Ctrl-C, and when a rank died.  The workers have
 * half of it to finish their step; if they cannot (a rank they wait for is gone), the run
 * fails at once, so that the logs and status.json say so before the SIGKILL. */
static int64_t launcher_wait(const struct sup *s)
{
	const char *v = getenv("OMPI_MCA_odls_base_sigkill_timeout");
	int64_t wait = (v && atoi(v) > 0 ? atoi(v) : 1) * 500000000LL;

	return s->grace_ns > 0 && s->grace_ns < wait ? s->grace_ns : wait;
}

/* Across hosts: "; nothing came from rank 1 on node2 for 3.2 s" (the rank heard from
 * longest ago, when that is longer than min_ns), or "". */
static void silent_rank(const struct sup *s, int64_t min_ns, char *out, size_t len)
{
	double secs;
	int r = s->br ? bridge_silent(s->br, &secs) : -1;

	out[0] = '\0';
	if (r >= 0 && secs * 1e9 >= (double)min_ns)
		snprintf(out, len, "; nothing came from rank %d on %s for %.3g s", r,
			 world_host(s->world, r), secs);
}

/* A launcher's SIGTERM the workers could not stop for within launcher_wait. */
static void check_doomed(struct sup *s, int64_t now)
{
	char silent[160];
	int64_t wait = launcher_wait(s);

	if (!s->doomed_at || s->killing || now - s->doomed_at < wait)
		return;
	silent_rank(s, 0, silent, sizeof(silent));
	failure(s, "the launcher (pid %d) is ending the job (SIGTERM), and the workers%s could "
		"not finish their step within %.3g s: a rank has died or cannot be reached%s",
		(int)s->world->launcher, s->where, (double)wait * 1e-9, silent);
	kill_all(s);
}

/* The watchdog, at every wake-up: a run in which no worker made progress for
 * run.stall_timeout is ended, blaming one worker; a stop that takes longer than
 * run.stop_grace kills the workers. */
static void check_progress(struct sup *s)
{
	int64_t now = now_ns();
	uint64_t beats = 0;

	if (s->killing)
		return;
	check_doomed(s, now);
	if (s->killing)
		return;
	for (int w = 0; w < s->n; w++)
		beats += atomic_load_explicit(&region_slot(s->rg, w)->beats, memory_order_relaxed);
	if (beats != s->beats || s->last_beat == 0) {
		s->beats = beats;
		s->last_beat = now;
	}
	if (s->ckpt_ns > 0 && !s->stopping && now - s->ckpt_at >= s->ckpt_ns) {
		/* the workers agree on the step through the exchange (train_worker.c) */
		if (s->ckpt_at)
			atomic_fetch_or(region_stop(s->rg), 2);
		s->ckpt_at = now;
	}
	if (s->stopping && s->grace_ns > 0 && now - s->stop_at > s->grace_ns) {
		fprintf(stderr, "emu: the workers did not stop within %.3g s of SIG%s "
			"(run.stop_grace): killed\n", (double)s->grace_ns * 1e-9,
			sigabbrev_np(s->signo) ? sigabbrev_np(s->signo) : "?");
		kill_all(s);
	} else if (s->stall_ns > 0 && now - s->last_beat > s->stall_ns) {
		const char *state;
		int w = stalled_worker(s, &state);
		char silent[160];

		if (w < 0)
			return;
		/* across hosts, the rank it may wait for (one that died, the network to it) */
		silent_rank(s, s->stall_ns / 2, silent, sizeof(silent));
		failure(s, "worker %d%s not responding at step %lld (%s): no worker made "
			"progress for %.3g s (run.stall_timeout)%s", w, s->where,
			(long long)atomic_load(&region_slot(s->rg, w)->step), state,
			(double)s->stall_ns * 1e-9, silent);
		kill_all(s);
	}
}

static void child(struct sup *s, int id, pid_t parent, const sigset_t *oldmask)
{
	struct worker_slot *slot = region_slot(s->rg, id);
	int ret;

	for (size_t i = 0; i < NSTOP_SIGS; i++)
		signal(stop_sigs[i], SIG_IGN);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	/* No worker outlives a supervisor that was killed. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	if (s->watching) {	/* forked back after a crash: nothing of the supervisor's */
		close(s->sfd);
		for (int w = 0; w < s->n; w++)
			if (s->pidfd[w] >= 0)
				close(s->pidfd[w]);
		if (s->uring_ok)
			io_uring_queue_exit(&s->ring);
		notify_free(&s->nt);
	}
	atomic_store(&slot->pid, (int32_t)getpid());
	atomic_store(&slot->state, WORKER_RUNNING);
	ret = s->ops->worker(s->ctx, s->rg, id);
	/* a worker that crashed as planned said so (WORKER_CRASHED): kept */
	int32_t running = WORKER_RUNNING;
	atomic_compare_exchange_strong(&slot->state, &running, ret == 0 ? WORKER_DONE :
				       WORKER_FAILED);
	fflush(NULL);
	_exit(ret == 0 ? 0 : ret > 0 && ret < 256 ? ret : 1);
}

/* io_uring: a wake-up when worker w's process ends (ppoll mode polls every pidfd). */
static void watch_pid(struct sup *s, int w)
{
	struct io_uring_sqe *sqe;

	if (!s->uring_ok)
		return;
	sqe = io_uring_get_sqe(&s->ring);
	if (!sqe) {
		io_uring_submit(&s->ring);
		sqe = io_uring_get_sqe(&s->ring);
	}
	io_uring_prep_poll_add(sqe, s->pidfd[w], POLLIN);
	sqe->user_data = TAG_PID + (uint64_t)w;
}

/* Forks worker w (with the stop signals blocked: the supervisor reads them from a
 * signalfd, the worker restores oldmask); 0, or -1 after a failed fork (reported, the
 * others killed). */
static int fork_worker(struct sup *s, int w, int64_t start)
{
	pid_t self = getpid(), pid;

	fflush(NULL);
	atomic_store(&region_slot(s->rg, w)->start, start);
	atomic_store(&region_slot(s->rg, w)->state, WORKER_STARTING);	/* not CRASHED now */
	pid = fork();
	if (pid < 0) {
		failure(s, "cannot fork worker %d: %s", w, strerror(errno));
		kill_all(s);
		return -1;
	}
	if (pid == 0)
		child(s, w, self, &s->oldmask);
	s->pid[w] = pid;
	atomic_store(&region_slot(s->rg, w)->pid, (int32_t)pid);
	s->nalive++;
	return 0;
}

/* Every worker of this host but those down at the start of the run (a run resumed
 * inside their crash: they come back as after a crash, rejoin_workers). */
static void fork_workers(struct sup *s)
{
	for (int w = s->lo; w < s->hi; w++) {
		int64_t at = s->ops->rejoin_at ? s->ops->rejoin_at(s->ctx, w, -1) : -2;

		if (at != -2) {	/* down: as if it had crashed (rejoin_due) */
			atomic_store(&region_slot(s->rg, w)->state, WORKER_CRASHED);
			s->rejoin[w] = at;
			continue;
		}
		if (fork_worker(s, w, -1) < 0)
			return;
	}
}

/* Whether worker w, pending, is due back: every other worker that has not crashed has
 * begun its step (they cannot finish it without the newcomer; it reads their clocks
 * as they began it).  Those that crashed are out of it (one that crashed at that very
 * step may have been the last running); one that stopped or finished before it keeps
 * it from coming back (a stopped run does not fork). */
static bool rejoin_due(const struct sup *s, int w)
{
	for (int k = s->lo; k < s->hi; k++) {
		struct worker_slot *slot = region_slot(s->rg, k);

		if (k == w || atomic_load(&slot->state) == WORKER_CRASHED)
			continue;
		if (atomic_load(&slot->step) < s->rejoin[w])
			return false;
	}
	return true;
}

/* A worker that crashed as planned comes back at its step (rejoin_due).  Even while
 * stopping: the others may be waiting for it. */
static void rejoin_workers(struct sup *s)
{
	for (int w = s->lo; w < s->hi && !s->killing; w++) {
		if (s->rejoin[w] < 0 || !rejoin_due(s, w))
			continue;
		int64_t at = s->rejoin[w];

		s->rejoin[w] = -1;
		if (fork_worker(s, w, at) < 0)
			return;
		s->pidfd[w] = (int)syscall(SYS_pidfd_open, s->pid[w], 0);
		if (s->pidfd[w] < 0) {
			failure(s, "cannot watch worker %d: %s", w, strerror(errno));
			kill_all(s);
			return;
		}
		watch_pid(s, w);
	}
}

/* Whether a crashed worker is still to come back: the supervisor then looks often. */
static bool rejoin_pending(const struct sup *s)
{
	for (int w = s->lo; w < s->hi; w++)
		if (s->rejoin[w] >= 0)
			return true;
	return false;
}

/* io_uring: one wait covers pidfds, the signalfd and every log ring's head word. */
static int wait_uring(struct sup *s)
{
	/* a crashed worker due back is forked when the others reach its step: look often */
	int64_t tick = rejoin_pending(s) || s->doomed_at ? REJOIN_TICK_NS : s->tick_ns;
	struct __kernel_timespec ts = { .tv_sec = tick / 1000000000, .tv_nsec = tick % 1000000000 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret, nlog = !s->reads_logs ? 0 : s->n < SUP_MAX_LOG_WORDS ? s->n : SUP_MAX_LOG_WORDS;

	if (!s->sig_armed && (sqe = io_uring_get_sqe(&s->ring))) {
		io_uring_prep_poll_add(sqe, s->sfd, POLLIN);
		sqe->user_data = TAG_SIGNAL;
		s->sig_armed = true;
	}
	if (s->br && !s->bridge_armed && (sqe = io_uring_get_sqe(&s->ring))) {
		io_uring_prep_poll_add(sqe, bridge_fd(s->br), POLLIN);
		sqe->user_data = TAG_BRIDGE;
		s->bridge_armed = true;
	}
	if (nlog > 0 && !s->logs_armed && (sqe = io_uring_get_sqe(&s->ring))) {
		/* Expect the tails: anything written since the drain ends the wait at once. */
		for (int w = 0; w < nlog; w++) {
			struct ring *r = region_log_ring(s->rg, w);

			ring_arm_read(r);	/* a wake clears it: arm before each wait */
			s->waitv[w] = (struct futex_waitv){
				.val = (uint32_t)atomic_load(&r->tail),
				.uaddr = (uintptr_t)ring_head_word(r),
				.flags = NOTIFY_FUTEX2_SIZE_U32 };
		}
		notify_uring_prep_waitv(sqe, s->waitv, (unsigned)nlog);
		sqe->user_data = TAG_LOGS;
		s->logs_armed = true;
	}
	/* The timeout is the watchdog's and the progress line's tick (and bounds a wait for
	 * more than 128 log rings); nothing polls. */
	ret = io_uring_submit_and_wait_timeout(&s->ring, &cqe, 1, &ts, NULL);
	if (ret < 0 && ret != -ETIME && ret != -EINTR)
		return ret;
	while (io_uring_peek_cqe(&s->ring, &cqe) == 0) {
		uint64_t tag = cqe->user_data;

		if (tag == TAG_SIGNAL) {
			s->sig_armed = false;
			on_signal(s);
		} else if (tag == TAG_LOGS) {
			s->logs_armed = false;
		} else if (tag == TAG_BRIDGE) {
			s->bridge_armed = false;
		} else if (tag >= TAG_PID && tag < TAG_PID + (uint64_t)s->n) {
			reap(s, (int)(tag - TAG_PID));
		}
		io_uring_cqe_seen(&s->ring, cqe);
	}
	return 0;
}

/* Without io_uring: ppoll on pidfds and the signalfd; logs are drained every 10 ms. */
static int wait_ppoll(struct sup *s)
{
	struct pollfd *pf = s->pf;
	int *idx = s->pf_worker, np = 0;
	struct timespec ts = { .tv_nsec = 10000000 };

	pf[np] = (struct pollfd){ .fd = s->sfd, .events = POLLIN };
	idx[np++] = -1;
	if (s->br) {	/* its end only wakes the loop (watch) */
		pf[np] = (struct pollfd){ .fd = bridge_fd(s->br), .events = POLLIN };
		idx[np++] = -2;
	}
	for (int w = 0; w < s->n; w++)
		if (s->pidfd[w] >= 0) {
			pf[np] = (struct pollfd){ .fd = s->pidfd[w], .events = POLLIN };
			idx[np++] = w;
		}
	if (ppoll(pf, (nfds_t)np, &ts, NULL) < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < np; i++) {
		if (!pf[i].revents)
			continue;
		if (idx[i] == -1)
			on_signal(s);
		else if (idx[i] >= 0)
			reap(s, idx[i]);
	}
	return 0;
}

/* Rank 0: another rank's run failed (it printed why and sent it here): the reason goes
 * into status.json, the workers here are killed, and world_abort follows on_end. */
static void check_remote_failure(struct sup *s)
{
	char why[BRIDGE_WHY];

	if (!s->br || s->failed || !bridge_failed(s->br, why, sizeof(why)))
		return;
	snprintf(s->why, sizeof(s->why), "%s", why);
	s->failed = true;
	s->status = 1;
	kill_all(s);
}

static int watch(struct sup *s)
{
	int ret;

	for (int w = s->lo; w < s->hi; w++)
		if (s->pidfd[w] >= 0)
			watch_pid(s, w);
	for (;;) {
		drain_logs(s);
		check_remote_failure(s);
		rejoin_workers(s);	/* (the last running may just have crashed) */
		if (s->nalive == 0 && (!s->br || s->failed || s->killing))
			return 0;	/* (a failure across hosts ends in world_abort) */
		if (s->nalive == 0) {
			/* The workers here are done; rank 0 waits for the others' logs. */
			bridge_finish(s->br);
			if (bridge_ended(s->br)) {
				drain_logs(s);
				return 0;
			}
		}
		check_progress(s);
		if (s->ops->on_tick)
			s->ops->on_tick(s->ctx);
		ret = s->uring_ok ? wait_uring(s) : wait_ppoll(s);
		if (ret < 0)
			return ret;
	}
}

/* A notify's notice (notify.h: say), printed when it happens. */
static void notify_say(const char *line)
{
	fprintf(stderr, "emu: %s\n", line);
}

static int setup_watchers(struct sup *s, enum notify_mode mode)
{
	sigset_t set;
	int ret;

	ret = notify_init(&s->nt, mode);
	if (ret < 0)
		return ret;
	s->nt.say = notify_say;
	supervisor_stop_signals(&set);
	s->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->sfd < 0)
		return -errno;
	for (int w = s->lo; w < s->hi; w++) {
		if (s->pid[w] <= 0)
			continue;	/* down at the start (fork_workers) */
		s->pidfd[w] = (int)syscall(SYS_pidfd_open, s->pid[w], 0);
		if (s->pidfd[w] < 0)
			return -errno;
	}
	s->uring_ok = s->nt.mode == NOTIFY_IO_URING &&
		      io_uring_queue_init(2 * s->n + 8, &s->ring, 0) == 0;
	s->watching = true;
	return 0;
}

/* The region and the per-worker arrays; 0 or -errno. */
static int sup_alloc(struct sup *s, const struct region_params *p)
{
	size_t n = (size_t)(s->n > 0 ? s->n : 1);
	int rc = region_create(&s->rg, p);

	s->pid = calloc(n, sizeof(*s->pid));
	s->pidfd = calloc(n, sizeof(*s->pidfd));
	s->rejoin = calloc(n, sizeof(*s->rejoin));
	s->logs = calloc(n, sizeof(*s->logs));
	s->pf = calloc(n + 2, sizeof(*s->pf));	/* signalfd, bridge, pidfds */
	s->pf_worker = calloc(n + 2, sizeof(*s->pf_worker));
	if (rc < 0)
		return rc;
	if (!s->pid || !s->pidfd || !s->rejoin || !s->logs || !s->pf || !s->pf_worker)
		return -ENOMEM;
	for (int w = 0; w < s->n; w++) {
		s->pidfd[w] = -1;
		s->rejoin[w] = -1;
	}
	return 0;
}

static void sup_free(struct sup *s)
{
	region_destroy(s->rg);
	free(s->pid);
	free(s->pidfd);
	free(s->rejoin);
	free(s->logs);
	free(s->pf);
	free(s->pf_worker);
}

/* Watches the workers until the run ends; sets s->status. */
static void watch_workers(struct sup *s, enum notify_mode mode)
{
	int ret = setup_watchers(s, mode);

	if (ret < 0) {
		failure(s, "cannot watch the workers: %s", strerror(-ret));
		kill_all(s);
		return;
	}
	if (s->world)
		fprintf(stderr, "emu: rank %d of %d on %s: workers %d-%d of %d, notifications: %s\n",
			s->world->rank, s->world->size, s->world->host, s->lo, s->hi - 1, s->n,
			notify_mode_name(s->nt.mode));
	else
		fprintf(stderr, "emu: %d workers, notifications: %s\n", s->n,
			notify_mode_name(s->nt.mode));
	ret = watch(s);
	if (ret < 0) {
		failure(s, "watching the workers failed: %s", strerror(-ret));
		kill_all(s);
	}
}

/* Whatever happened: no child is left behind, every record is read, every fd closed. */
static void end_all(struct sup *s)
{
	for (int w = 0; w < s->n; w++) {
		if (s->pid[w] > 0) {
			kill(s->pid[w], SIGKILL);
			while (waitpid(s->pid[w], NULL, 0) < 0 && errno == EINTR)
				;
		}
		if (s->pidfd[w] >= 0)
			close(s->pidfd[w]);
	}
	drain_logs(s);
	if (s->uring_ok)
		io_uring_queue_exit(&s->ring);
	if (s->sfd >= 0) {
		struct signalfd_siginfo fi;

		while (read(s->sfd, &fi, sizeof(fi)) > 0)	/* consumed: not re-raised */
			;
		close(s->sfd);
	}
	notify_free(&s->nt);
}

int supervise(const struct cfg *c, const struct region_params *p,
	      const struct supervisor_ops *ops, void *ctx)
{
	return supervise_world(c, p, ops, ctx, NULL);
}

/* Across hosts: the bridge, once the workers are forked (no worker inherits its thread
 * or fds).  A failure is reported and ends the run. */
static void start_bridge(struct sup *s, enum notify_mode mode)
{
	int rc = bridge_start(&s->br, s->rg, s->world, mode, notify_say);

	if (rc < 0) {
		failure(s, "cannot start the bridge to the other MPI ranks%s: %s", s->where,
			strerror(-rc));
		kill_all(s);
	}
}

int supervise_world(const struct cfg *c, const struct region_params *p,
		    const struct supervisor_ops *ops, void *ctx, struct world *w)
{
	struct sup s = { .ops = ops, .ctx = ctx, .n = p->nworkers, .sfd = -1,
			 .stall_ns = c->run.stall_timeout, .grace_ns = c->run.stop_grace,
			 .ckpt_ns = c->run.checkpoint_wall,
			 .tick_ns = 1000000000, .lo = 0, .hi = p->nworkers, .reads_logs = true };
	struct region_params rp = *p;
	sigset_t block, oldmask;
	int rc;

	if (w && w->size > 1) {
		s.world = w;
		s.lo = w->lo;
		s.hi = w->hi;
		s.reads_logs = w->rank == 0;
		snprintf(s.where, sizeof(s.where), " on %s (rank %d)", w->host, w->rank);
		rp.barrier_parties = w->hi - w->lo + 1;	/* and the bridge */
		rp.local_lo = w->lo;
		rp.local_hi = w->hi;
	}
	rc = sup_alloc(&s, &rp);
	if (c->run.progress_every > 0 && c->run.progress_every < s.tick_ns)
		s.tick_ns = c->run.progress_every;
	if (c->run.checkpoint_wall > 0 && c->run.checkpoint_wall < s.tick_ns)
		s.tick_ns = c->run.checkpoint_wall;
	if (rc < 0) {
		failure(&s, "cannot create the shared region for %d workers%s: %s", p->nworkers,
			s.where, strerror(-rc));
	} else {
		supervisor_stop_signals(&block);
		sigprocmask(SIG_BLOCK, &block, &oldmask);
		s.oldmask = oldmask;
		fork_workers(&s);
		if (!s.status && s.world)
			start_bridge(&s, c->run.notify);
		if (!s.status)	/* else a fork failed: already reported */
			watch_workers(&s, c->run.notify);
		end_all(&s);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
	}
	if (s.world && !s.failed && !s.killing && rc == 0) {
		/* Every link is closed and the bridge ended (watch): joined, it leaves MPI to
		 * this thread.  A stop signal that reached this rank only stopped the others
		 * through the exchange, and they saw none: every rank ends with the worst
		 * status, rank 0's status.json with its reason (mpirun returns the same). */
		bridge_free(s.br);
		s.br = NULL;
		s.status = world_agree_end(s.world, s.status, s.why, sizeof(s.why));
	}
	if (ops->on_end)
		s.status = ops->on_end(ctx, s.status, s.why[0] ? s.why : NULL);
	/* Workers that did not end by themselves here leave the others' waiting for them:
	 * the whole job ends (the bridge still runs: nothing is freed before). */
	if (s.world && (s.failed || s.killing || rc < 0)) {
		world_leaving(s.world, s.grace_ns > 0 ? s.grace_ns : WORLD_LEAVE_GRACE_NS);
		bridge_fail(s.br, s.why[0] ? s.why : "the run failed");	/* a rank > 0 */
		world_abort(s.world, s.status ? s.status : 1);
	}
	bridge_free(s.br);
	sup_free(&s);
	return s.status;
}

void worker_log(struct region *rg, int id, const void *rec, size_t len, struct notify *nt)
{
	uint8_t buf[4 + LOG_MAX];
	uint32_t l = (uint32_t)len;

	if (len > LOG_MAX) {
		fprintf(stderr, "emu: worker %d: a log record of %zu bytes, the limit is %d\n",
			id, len, LOG_MAX);
		abort();
	}
	/* One write, one wake of the supervisor. */
	memcpy(buf, &l, 4);
	memcpy(buf + 4, rec, len);
	ring_write_all(region_log_ring(rg, id), buf, 4 + len, nt);
}
