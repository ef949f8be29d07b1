/* emu/study/sweep.c — emu sweep: the runs of the grid, at most --jobs at a time, each an
 * ordinary `emu run` of emu itself; a restart skips what is done (see sweep.h). */
#include "emu/study/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/commands.h"
#include "emu/run/label.h"
#include "emu/run/rundir.h"
#include "emu/run/supervisor.h"
#include "nn/infile.h"

const char help_sweep[] =
	"usage: emu sweep FILE.ini section.key=v1,v2,... [section.key=v1,v2,... ...]\n"
	"                 [--target ACC] [--jobs N] [section.key=value ...]\n"
	"\n"
	"Runs every combination of the values given (a grid), each as an ordinary\n"
	"'emu run FILE.ini OVERRIDES' into ROOT/KEY=VALUE,KEY=VALUE,.../ (the swept keys in\n"
	"the order given, values as written; characters other than letters, digits and\n"
	"._-+=,%:@ are written %XX, '/' as %2F).  ROOT is the folder emu run would use:\n"
	"run.output, else runs/NAME.  A key with one value applies to every run, as does a\n"
	"list-valued key (train.decay_epochs=2,4: its commas are the list's).\n"
	"run.seed=1,2,3 repeats each configuration with three seeds.  Each run's output goes\n"
	"to emu.log in its folder; a line per finished run says how it ended.  Then\n"
	"  ROOT/summary.csv   one row per configuration (the swept keys but run.seed):\n"
	"                     n (seeds done), mean, std (n-1), min and max over the seeds of\n"
	"                     the final test accuracy, final training loss, virtual time to\n"
	"                     the target accuracy (runs that never reach it: never), bytes\n"
	"                     sent and final consensus distance\n"
	"  ROOT/curves/CONFIG.csv  per evaluation: the mean, std, min and max over the seeds\n"
	"                     of the test accuracy; the names in ROOT/curves/configs.txt\n"
	"                     (gnuplot -e \"sweep='ROOT'\" plots/sweep.gp draws them)\n"
	"\n"
	"  --target ACC  test accuracy for the time to accuracy (default 0.8): the first\n"
	"                crossing, linear between the two evaluations around it\n"
	"  --jobs N      runs at a time (default 1)\n"
	"\n"
	"Interrupted (SIGINT, SIGTERM, ...), it starts no more runs, passes the signal on to\n"
	"the running ones, waits for them and exits 128+signal; run the same command again\n"
	"and it skips the runs whose status.json says done and reruns the others\n"
	"(run.overwrite=true).  A finished run whose config.ini differs from what the sweep\n"
	"would run is refused (exit 2).  A run that fails does not stop the sweep; it is\n"
	"named at the end, and the sweep exits 1.  Exit 2: bad arguments or configuration.\n"
	"With every run done, the same command only rewrites the summary (another --target).\n";

struct job {
	pid_t pid;		/* 0: a free slot */
	long r;
	double t0;
};

struct sweeper {
	struct sweep s;
	char *todo;		/* [nruns]: 1 for a run still to run */
	long ntodo, nfinished, nfailed;
	long ndied;		/* runs whose status.json says running, their pid gone */
	struct job *jobs;	/* [s.jobs] */
	int running;
	int stop;		/* the first stop signal, or 0 */
	sigset_t old;		/* the mask the runs get back */
	struct cfg *cfg;	/* scratch for the configuration check */
	char **argv;		/* scratch: a run's command line, nplain + SWEEP_MAX_AXES + 6 */
	char store[4096];	/* its text */
	char *failed;		/* [nruns]: 1 for a run that failed */
};

/* "SIGINT" */
static const char *sig_name(int sig, char *buf, size_t n)
{
	snprintf(buf, n, "SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	return buf;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The whole of path (a file of a run folder: regular, not a link, at most max bytes,
 * nn/infile.h), NUL-terminated, in memory to free; NULL when it cannot be read. */
static char *slurp(const char *path, size_t max)
{
	char *buf, why[512];
	size_t len;

	return infile_read(AT_FDCWD, path, O_NOFOLLOW, max, &buf, &len, why, sizeof(why)) < 0 ?
	       NULL : buf;
}

/* What DIR/status.json says (rundir_read_status); RUNDIR_NONE when the folder or its
 * status cannot be read. */
static void run_status(const char *dir, struct rundir_info *info)
{
	char err[512];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*info = (struct rundir_info){ .state = RUNDIR_NONE };
	if (fd < 0)
		return;
	rundir_read_status(fd, dir, info, err, sizeof(err));
	close(fd);
}

int sweep_run_done(const char *dir)
{
	struct rundir_info info;

	run_status(dir, &info);
	return info.state == RUNDIR_DONE;
}

/* A finished run is skipped only if it ran what the sweep would run now: its config.ini
 * is the configuration run r resolves to (the INI file or emu may have changed since).
 * 0 when it is, 1 when it cannot be resolved now (it is rerun, and fails as it would),
 * 2 with the message when it is another configuration. */
static int same_config(struct sweeper *w, long r, const char *dir, char *err, size_t errlen)
{
	char path[CFG_STR + 16], *want = NULL, *have, msg[2048];
	int nargs = sweep_run_args(&w->s, r, w->argv, w->store, sizeof(w->store)), rc = 1;
	size_t len = 0;
	FILE *f;

	if (nargs < 0 || cfg_load(w->cfg, w->s.file, nargs, w->argv, msg, sizeof(msg)) ||
	    label_expand(w->cfg, msg, sizeof(msg)) < 0)	/* as the run writes it */
		return 1;
	f = open_memstream(&want, &len);
	if (!f)
		return 1;
	cfg_print(w->cfg, f);
	if (fclose(f))
		return 1;
	snprintf(path, sizeof(path), "%s/config.ini", dir);
	have = slurp(path, 1 << 20);	/* a configuration is a few KB */
	if (have && strcmp(have, want)) {
		const char *a = have, *b = want;
		int line = 1;

		while (*a == *b) {	/* the first line that differs */
			if (*a == '\n')
				line++;
			a++;
			b++;
		}
		while (a > have && a[-1] != '\n')
			a--;
		while (b > want && b[-1] != '\n')
			b--;
		snprintf(err, errlen, "emu sweep: %s holds a finished run of another "
			 "configuration (config.ini:%d: '%.*s' where this sweep has '%.*s'); "
			 "expected the same FILE.ini and overrides: remove the folder, or "
			 "sweep into another run.name or run.output", dir, line,
			 (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
		rc = 2;
	} else if (have) {
		rc = 0;
	}
	free(have);
	free(want);
	return rc;
}

/* The last non-empty line of a run's emu.log (of its last 64 KiB: the log of a long run
 * is read no further), for the line that reports its failure. */
static void last_line(const char *dir, char *out, size_t n)
{
	char path[CFG_STR + 16], text[64 << 10], why[512], *end, *p;
	struct stat st;
	ssize_t k = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/emu.log", dir);
	out[0] = 0;
	fd = infile_open(AT_FDCWD, path, O_NOFOLLOW, why, sizeof(why));
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0)
		k = pread(fd, text, sizeof(text) - 1,
			  st.st_size > (off_t)sizeof(text) - 1 ? st.st_size - (off_t)sizeof(text) + 1 : 0);
	close(fd);
	if (k <= 0)
		return;
	text[k] = 0;
	end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = 0;
	p = strrchr(text, '\n');
	p = p ? p + 1 : text;
	p += strspn(p, "\r");	/* a progress line redrawn in place */
	snprintf(out, n, "%s", p);
}

/* The child: a process group of its own (a terminal's ^C reaches the sweep only, which
 * passes it on once: a second signal would make the run kill its workers), stdout and
 * stderr to emu.log, the signal mask back, a SIGTERM if the sweep dies. */
static void child(struct sweeper *w, char **argv, int log, pid_t parent)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);	/* dup2's copy is not */

	setpgid(0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(127);
	if (null < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
		_exit(127);
	sigprocmask(SIG_SETMASK, &w->old, NULL);
	execv("/proc/self/exe", argv);
	dprintf(2, "emu sweep: cannot start /proc/self/exe: %s\n", strerror(errno));
	_exit(127);
}

/* Starts run r in a free slot.  0, or -1 with the message in err (the run is failed). */
static int start(struct sweeper *w, long r, char *err, size_t errlen)
{
	char dir[CFG_STR], path[CFG_STR + 16], **argv = w->argv;
	int nargs = sweep_run_args(&w->s, r, argv + 3, w->store, sizeof(w->store));
	pid_t parent = getpid(), pid;
	int log, rc, slot = 0;

	while (w->jobs[slot].pid)
		slot++;
	sweep_run_dir(&w->s, r, dir, sizeof(dir));
	rc = nargs < 0 ? nargs : rundir_make_dirs(dir);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/emu.log", dir);
	log = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (log < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	argv[0] = (char *)w->s.argv0;
	argv[1] = "run";
	argv[2] = (char *)w->s.file;
	pid = fork();
	if (pid == 0)
		child(w, argv, log, parent);
	close(log);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	w->jobs[slot] = (struct job){ .pid = pid, .r = r, .t0 = now() };
	w->running++;
	return 0;
}

/* One line for a finished run: how it ended and its wall time. */
static void finished(struct sweeper *w, struct job *j, int status)
{
	char name[CFG_STR], dir[CFG_STR], how[64], why[256], sig[32];
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	int interrupted = w->stop && code > 128;

	sweep_run_name(&w->s, j->r, name, sizeof(name));
	sweep_run_dir(&w->s, j->r, dir, sizeof(dir));
	w->nfinished++;
	if (code == 0) {
		snprintf(how, sizeof(how), "done");
	} else {
		const char *what = interrupted ? "interrupted" : "failed";

		if (WIFSIGNALED(status))
			snprintf(how, sizeof(how), "%s (%s)", what,
				 sig_name(WTERMSIG(status), sig, sizeof(sig)));
		else
			snprintf(how, sizeof(how), "%s (exit %d)", what, code);
		w->nfailed += !interrupted;
		w->failed[j->r] = !interrupted;
	}
	last_line(dir, why, sizeof(why));
	fprintf(stderr, "emu sweep: [%ld/%ld] %s: %s, %.1f s%s%s%s%s\n", w->nfinished, w->ntodo,
		name, how, now() - j->t0, code && !interrupted ? ": " : "",
		code && !interrupted ? why : "", code && !interrupted ? "; see " : "",
		code && !interrupted ? dir : "");
	j->pid = 0;
	w->running--;
}

static void reap(struct sweeper *w)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (int i = 0; i < w->s.jobs; i++)
			if (w->jobs[i].pid == pid)
				finished(w, &w->jobs[i], status);
}

static void stop(struct sweeper *w, int sig)
{
	char name[32];

	if (!w->stop)
		fprintf(stderr, "emu sweep: %s: starting no more runs; stopping the %d "
			"running\n", sig_name(sig, name, sizeof(name)), w->running);
	w->stop = w->stop ? w->stop : sig;
	for (int i = 0; i < w->s.jobs; i++)	/* a second signal too: they decide */
		if (w->jobs[i].pid)
			kill(w->jobs[i].pid, sig);
}

/* Runs every run still to run, jobs at a time, until all ended or a stop signal. */
static int run_all(struct sweeper *w)
{
	sigset_t set;
	long next = 0;
	int rc = 0;

	/* the signals that stop a sweep are those that stop a run (docs/outputs.md, "Signals") */
	supervisor_stop_signals(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &w->old);
	for (;;) {
		siginfo_t si;
		char err[512], name[CFG_STR];

		while (!w->stop && w->running < w->s.jobs && next < w->s.nruns) {
			long r = next++;

			if (!w->todo[r])
				continue;
			if (start(w, r, err, sizeof(err)) < 0) {
				sweep_run_name(&w->s, r, name, sizeof(name));
				fprintf(stderr, "emu sweep: [%ld/%ld] %s: failed to start: "
					"%s\n", ++w->nfinished, w->ntodo, name, err);
				w->nfailed++;
				w->failed[r] = 1;
			}
		}
		if (!w->running)
			break;
		if (sigwaitinfo(&set, &si) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (si.si_signo == SIGCHLD)
			reap(w);
		else
			stop(w, si.si_signo);
	}
	sigprocmask(SIG_SETMASK, &w->old, NULL);
	return rc;
}

/* Every run's configuration loads and its run.label template expands (emu/run/label.h:
 * each run gets its own values): an axis value its key refuses (train.lr=-1) or a
 * template that names no key stops the sweep before anything runs or is made, with the
 * run and the reason.  0 or 2. */
static int check_runs(struct sweeper *w, char *err, size_t errlen)
{
	for (long r = 0; r < w->s.nruns; r++) {
		char dir[CFG_STR], msg[2048];
		int nargs = sweep_run_args(&w->s, r, w->argv, w->store, sizeof(w->store));

		if (nargs >= 0 && !cfg_load(w->cfg, w->s.file, nargs, w->argv, msg, sizeof(msg)) &&
		    !label_expand(w->cfg, msg, sizeof(msg)))
			continue;
		sweep_run_dir(&w->s, r, dir, sizeof(dir));
		snprintf(err, errlen, "emu sweep: %s: %s", dir, nargs < 0 ?
			 "its arguments do not fit" : msg);
		return 2;
	}
	return 0;
}

/* Marks the runs still to run; refuses (2) a finished run of another configuration. */
static int plan(struct sweeper *w, char *err, size_t errlen)
{
	for (long r = 0; r < w->s.nruns; r++) {
		char dir[CFG_STR];
		int rc = 1;

		struct rundir_info info;

		sweep_run_dir(&w->s, r, dir, sizeof(dir));
		run_status(dir, &info);
		if (info.state == RUNDIR_DONE)
			rc = same_config(w, r, dir, err, errlen);
		if (rc == 2)
			return 2;
		if (info.state == RUNDIR_DIED) {
			fprintf(stderr, "emu sweep: %s: its run died after step %lld (status.json "
				"says running, and pid %d is gone): it is run again\n", dir,
				(long long)info.steps, info.pid);
			w->ndied++;
		}
		w->todo[r] = rc != 0;
		w->ntodo += rc != 0;
	}
	return 0;
}

/* The sweep's folder, created and locked for the sweep's life (a second sweep into it
 * would run the same runs): an fd, or -1 with the message. */
static int lock_root(const char *root, char *err, size_t errlen)
{
	int rc = rundir_make_dirs(root), fd;

	if (rc < 0) {
		snprintf(err, errlen, "emu sweep: %s: %s", root, strerror(-rc));
		return -1;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "emu sweep: %s: %s", root, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int busy = errno == EWOULDBLOCK;

		snprintf(err, errlen, "emu sweep: %s %s%s", root,
			 busy ? "is in use by another emu sweep or run" : "cannot be locked: ",
			 busy ? "" : strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int sweep_main(struct sweeper *w, int argc, char **argv)
{
	char err[4096];
	double t0 = now();
	int rc, sr, lock = -1;

	rc = sweep_parse(&w->s, argc, argv, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s\n", rc < 0 ? "emu sweep: out of memory" : err);
		return rc < 0 ? 1 : rc;
	}
	w->todo = calloc((size_t)w->s.nruns, 1);
	w->jobs = calloc((size_t)w->s.jobs, sizeof(*w->jobs));
	w->failed = calloc((size_t)w->s.nruns, 1);
	w->cfg = malloc(sizeof(*w->cfg));
	w->argv = calloc((size_t)w->s.nplain + SWEEP_MAX_AXES + 6, sizeof(char *));
	if (!w->todo || !w->jobs || !w->failed || !w->cfg || !w->argv) {
		fprintf(stderr, "emu sweep: out of memory\n");
		rc = 1;
		goto out;
	}
	rc = check_runs(w, err, sizeof(err));
	if (!rc) {
		lock = lock_root(w->s.root, err, sizeof(err));
		rc = lock < 0 ? 2 : 0;
	}
	if (!rc)
		rc = sweep_summary_check(&w->s, err, sizeof(err)) < 0 ? 2 : 0;
	if (!rc)
		rc = plan(w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	fprintf(stderr, "emu sweep: %ld runs (%ld configuration%s x %d seed%s) in %s, %d at "
		"a time; %ld done earlier\n", w->s.nruns, w->s.nconfigs,
		w->s.nconfigs > 1 ? "s" : "", sweep_nseeds(&w->s),
		sweep_nseeds(&w->s) > 1 ? "s" : "", w->s.root, w->s.jobs,
		w->s.nruns - w->ntodo);
	if (w->ndied)
		fprintf(stderr, "emu sweep: %ld died earlier (run again)\n", w->ndied);
	rc = run_all(w);
	if (rc < 0) {
		fprintf(stderr, "emu sweep: waiting for the runs: %s\n", strerror(-rc));
		rc = 1;
		goto out;
	}
	fprintf(stderr, "emu sweep: %ld run%s in %.1f s: %ld failed%s\n", w->nfinished,
		w->nfinished == 1 ? "" : "s", now() - t0, w->nfailed,
		w->stop ? ", the rest stopped" : "");
	if (w->stop) {
		fprintf(stderr, "emu sweep: interrupted; the same command again runs what is "
			"left\n");
		rc = 128 + w->stop;
		goto out;
	}
	if ((sr = sweep_summary(&w->s, err, sizeof(err))) < 0) {
		fprintf(stderr, "emu sweep: %s\n", err);
		rc = sr == -EINVAL ? 2 : 1;	/* a run's file refused is bad input */
		goto out;
	}
	fprintf(stderr, "emu sweep: %s/summary.csv, %s/curves/\n", w->s.root, w->s.root);
	for (long r = 0; r < w->s.nruns; r++) {
		char dir[CFG_STR];

		if (!w->failed[r])
			continue;
		sweep_run_dir(&w->s, r, dir, sizeof(dir));
		fprintf(stderr, "emu sweep: failed: %s (its emu.log says why)\n", dir);
	}
	rc = w->nfailed ? 1 : 0;
out:
	if (lock >= 0)
		close(lock);
	return rc;
}

int cmd_sweep(int argc, char **argv)
{
	struct sweeper w = { 0 };
	int rc;

	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(help_sweep, stdout);
			return 0;
		}
	rc = sweep_main(&w, argc, argv);
	free(w.todo);
	free(w.jobs);
	free(w.failed);
	free(w.cfg);
	free(w.argv);
	sweep_free(&w.s);
	return rc;
}
