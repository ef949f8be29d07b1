/* emu/bench/bench_train.c — `emu bench train`: the harness's overhead on a real run.
 *
 * Ideal: the same N workers' compute (batch, forward, backward, SGD update) with every
 * core the run may use busy at once: one process per core, each running its share of
 * the workers one after another.  Beside it, that compute on one core, divided by the
 * cores (the "1-core" ratio): a bound only where cores do not slow each other, which
 * they do on a small VM (each of two computes a third slower while the other computes
 * too).  Both are measured just before and just after each run, and the run held to
 * their means.
 * Actual: the wall time per step of `emu run` of the same configuration (every
 * process, ring, notification, barrier and log line included), taken from train.csv
 * between its first logged step and the one before its last (run_step), so start-up
 * and the run's end are left out.  Both from one invocation, printed side by side with
 * their ratio and its goal (goal_of), for 16, 64 and 256 workers (or the run.workers
 * given).
 * Beside them, per step and summed over the workers, over the same logged window
 * (emu/shm/usage.h): voluntary and involuntary context switches, sleeps (notify_wait
 * calls, for a message, for the barrier, for a run slot), wakes (FUTEX_WAKEs issued),
 * CPU time, and of it the time of the step's compute parts (gathering the batch, forward
 * and backward) and the rest: what the run's compute costs in its processes beside the
 * ideal's, and what the harness adds.  And the exchange's memory work alone
 * (exchange_work): with many workers of a small model the bytes RPS must copy cost as
 * much as the compute, so emu / (ideal + that work) says what the protocol adds.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/preset_path.h"
#include "emu/bench/bench.h"
#include "emu/commands.h"
#include "emu/run/plan.h"
#include "emu/run/train.h"
#include "nn/backend.h"
#include "nn/model.h"
#include "nn/optim.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

enum { ROUNDS = 5 };	/* of each case (bench_with) */
enum { REPS = 5 };	/* repetitions of 10 steps in each measurement of an ideal */

/* The processes of the all-cores ideal meet at each repetition's start and end. */
struct ideal_sync {
	pthread_barrier_t at;
	double rep[REPS];	/* wall seconds of each repetition (10 steps) */
};

/* Seconds of compute for one step of the workers w with w % lanes == lane, run one after
 * another in this process: each worker with its own model replica (its own parameters,
 * activations and batch), as in the run, so the caches see the same working set, and its
 * batches drawn from its own shard of epoch 0 as the run draws them (a gather from
 * shuffled samples misses the caches more than one from consecutive ones).  With sy,
 * the lanes' processes start and end each repetition together, and sy->rep gets its
 * wall time; a process that failed still keeps the meetings, so none waits forever. */
static int ideal_step(const struct cfg *c, struct nn_backend *be, const struct nn_dataset *d,
		      int lane, int lanes, struct ideal_sync *sy, double *out)
{
	const struct nn_dataset train = *d;
	const struct nn_input model_in = plan_model_input(c, &d->in);
	int n = c->run.workers, B = c->train.batch, steps = 10, rc = 0, built = 0;
	struct nn_model *m = calloc((size_t)n, sizeof(*m));
	size_t feat = (size_t)train.in.C * train.in.H * train.in.W;
	float *x = train.x ? malloc((size_t)n * B * feat * sizeof(float)) : NULL;
	int32_t *tok = train.tokens ? malloc((size_t)n * B * train.in.T * sizeof(int32_t)) : NULL;
	int32_t *y = malloc((size_t)n * B * 4), *idx = malloc((size_t)B * sizeof(int32_t));
	int32_t *shard = malloc((size_t)n * train.n * sizeof(int32_t));
	int *shard_n = calloc((size_t)n, sizeof(int));
	if (!m || !y || !idx || !shard || !shard_n || (train.x && !x) || (train.tokens && !tok))
		rc = -ENOMEM;
	for (int w = lane; rc == 0 && w < n; w += lanes) {
		shard_n[w] = data_shard(&train, plan_shard_kind(c->data.shard), c->data.alpha,
					n, w, c->run.seed, 0, shard + (size_t)w * train.n, train.n);
		if (shard_n[w] <= 0)
			rc = shard_n[w] < 0 ? shard_n[w] : -ENODATA;
	}
	for (int w = 0; rc == 0 && w < n; w++, built++)
		if (w % lanes == lane)
			rc = nn_model_init(&m[w], c->train.model, &model_in, be, B, c->run.seed);
	double reps[REPS];
	int nrep = 0;
	for (; nrep < REPS && (rc == 0 || sy); nrep++) {
		if (sy)
			pthread_barrier_wait(&sy->at);
		double t0 = now_s();
		for (int s = 0; rc == 0 && s < steps; s++)
			for (int w = lane; w < n; w += lanes) {
				float *wx = x ? x + (size_t)w * B * feat : NULL;
				int32_t *wt = tok ? tok + (size_t)w * B * train.in.T : NULL;
				int32_t *wy = y + (size_t)w * B;
				for (int k = 0; k < B; k++)
					idx[k] = shard[(size_t)w * train.n +
						       ((size_t)s * B + k) % shard_n[w]];
				data_batch(&train, idx, B, wx, wt, wy);
				nn_forward(&m[w], wx, wt, wy, B, true, NULL);
				nn_backward(&m[w], NULL);
				optim_sgd(m[w].params, m[w].grads, m[w].nparams, 1e-3f, 0);
			}
		if (sy)
			pthread_barrier_wait(&sy->at);
		reps[nrep] = (now_s() - t0) / steps;
		if (sy && lane == 0)
			sy->rep[nrep] = reps[nrep];
	}
	*out = nrep ? median(reps, nrep) : 0;
	for (int w = 0; w < built; w++)
		if (w % lanes == lane)
			nn_model_free(&m[w]);
	free(m);
	free(x);
	free(tok);
	free(y);
	free(idx);
	free(shard);
	free(shard_n);
	return rc;
}

/* Seconds of one step of the same compute with every core busy at once: one process
 * per core (pinned), each running its share of the workers one after another, the
 * median repetition's wall time.  The machine's own limit for this compute: a core
 * runs slower while the others compute too (a lower all-core clock, shared cache and
 * memory, a VM's neighbours), which dividing one core's time by the cores leaves out. */
static int ideal_all_cores(const struct cfg *c, struct nn_backend *be,
			   const struct nn_dataset *d, const cpu_set_t *cpus, int cores,
			   double *out)
{
	struct ideal_sync *sy = mmap(NULL, sizeof(*sy), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sy == MAP_FAILED)
		return -errno;
	pthread_barrierattr_t attr;
	pthread_barrierattr_init(&attr);
	pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sy->at, &attr, (unsigned)cores);
	pthread_barrierattr_destroy(&attr);
	fflush(NULL);		/* nothing buffered twice */
	pid_t pid[CPU_SETSIZE];
	int started = 0, rc = 0, cpu = -1;
	for (; started < cores; started++) {
		while (++cpu < CPU_SETSIZE && !CPU_ISSET(cpu, cpus))
			;
		pid[started] = fork();
		if (pid[started] < 0) {
			rc = -errno;
			break;
		}
		if (pid[started] == 0) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
			double t;
			_exit(ideal_step(c, be, d, started, cores, sy, &t) < 0);
		}
	}
	/* one that ended early (a fork failed, a signal) would leave the others waiting at
	 * a meeting for ever: then they are ended */
	for (int left = started, killed = rc < 0; left > 0; left--) {
		int st;
		pid_t p;
		if (killed)
			for (int k = 0; k < started; k++)
				if (pid[k] > 0)
					kill(pid[k], SIGKILL);
		while ((p = wait(&st)) < 0 && errno == EINTR)
			;
		if (p < 0)
			break;
		for (int k = 0; k < started; k++)
			if (pid[k] == p)
				pid[k] = 0;	/* reaped: its number may be reused */
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			rc = rc < 0 ? rc : -ECHILD;
			killed = 1;
		}
	}
	if (rc == 0)
		*out = median(sy->rep, REPS);
	pthread_barrier_destroy(&sy->at);
	munmap(sy, sizeof(*sy));
	return rc;
}

/* Both ideals, one right after the other: one core's time for all workers (*one) and
 * every core's at once (*all).  0, or -errno. */
static int ideals(const struct cfg *c, struct nn_backend *be, const struct nn_dataset *d,
		  const cpu_set_t *cpus, int cores, double *one, double *all)
{
	int rc = ideal_step(c, be, d, 0, 1, NULL, one);
	return rc < 0 ? rc : ideal_all_cores(c, be, d, cpus, cores, all);
}

/* Wall seconds per step of the run: from its first row of train.csv (one row every
 * log_every steps) to the row before its last, so start-up and the run's end (the last
 * window is slower: 16 workers, 20 ms a step against 14.5) are left out.  The mean, not
 * the median of the windows between rows: a row is stamped when the step's last record
 * comes, and with many workers per core the first of them are well into the next step
 * by then, so windows alternate (256 LeNet workers: 10-step windows of 1.9 and 3.8 s in
 * turn), and their median is one mode or the other. */
static int run_step(const char *dir, double *out, long *steps)
{
	char path[CFG_STR + 32], line[512];
	snprintf(path, sizeof(path), "%s/train.csv", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	long s, prev_s = -1, last_s = -1, first_s = -1;
	double w, d, first_w = 0, prev_w = 0, last_w = 0;
	if (!fgets(line, sizeof(line), f)) {	/* header */
		fclose(f);
		return -EINVAL;
	}
	while (fgets(line, sizeof(line), f)) {
		/* step,epoch,loss,lr,vtime_s,wall_s,... */
		if (sscanf(line, "%ld,%lf,%lf,%lf,%lf,%lf", &s, &d, &d, &d, &d, &w) != 6)
			continue;
		if (first_s < 0) {
			first_s = s;
			first_w = w;
		}
		prev_s = last_s;
		prev_w = last_w;
		last_s = s;
		last_w = w;
	}
	fclose(f);
	if (prev_s <= first_s)
		return -EINVAL;
	*out = (prev_w - first_w) / (double)(prev_s - first_s);
	*steps = prev_s - first_s;
	return 0;
}

/* What the workers spent on waiting over the run's logged window, summed over workers
 * and divided by the window's steps (emu/shm/usage.h: the workers append one line each
 * to the file named by EMU_USAGE_FILE). */
struct per_step {
	double nvcsw, nivcsw, sleeps, wakes, cpu_ms, yields, batch_ms, nn_ms;
};

static int read_usage(const char *path, struct per_step *u)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int id, lines = 0;
	long long steps;
	unsigned long long a, b, c, d, y;
	double cpu, batch, nn;
	*u = (struct per_step){ 0 };
	while (fscanf(f, "%d,%lld,%llu,%llu,%llu,%llu,%lf,%llu,%lf,%lf", &id, &steps, &a, &b,
		      &c, &d, &cpu, &y, &batch, &nn) == 10 && steps > 0) {
		u->nvcsw += (double)a / (double)steps;
		u->nivcsw += (double)b / (double)steps;
		u->sleeps += (double)c / (double)steps;
		u->wakes += (double)d / (double)steps;
		u->cpu_ms += cpu / (double)steps;
		u->yields += (double)y / (double)steps;
		u->batch_ms += batch / (double)steps;
		u->nn_ms += nn / (double)steps;
		lines++;
	}
	fclose(f);
	return lines > 0 ? 0 : -EINVAL;
}

/* Seconds of the exchange's memory work for a step of c's workers, every core busy:
 * bench_xchg_ideal (the scatter, the means and the replies of RPS and all-reduce in
 * buffers of the run's sizes, without rings, notifications or sleeps).  What any
 * harness that moves the model through memory spends beside the compute: with many
 * workers of a small model as large a share as the compute (256 of an MLP).  0 where
 * it cannot be measured. */
static double exchange_work(const struct cfg *c, struct nn_backend *be,
			    const struct nn_dataset *d, int cores)
{
	const struct nn_input in = plan_model_input(c, &d->in);
	struct nn_model m;

	if (nn_model_init(&m, c->train.model, &in, be, c->train.batch, c->run.seed) < 0)
		return 0;
	size_t floats = m.nparams;

	nn_model_free(&m);
	return 1e-9 * bench_xchg_ideal(c->run.workers, floats, cores, 5);
}

/* The rounds of `emu bench train` for configuration c, whose runs write into tmpl and
 * whose workers count into usage (a file). */
static int bench_with(const struct cfg *c, const char *tmpl, const char *usage, double goal,
		      FILE *csv, int argc, char **argv, double *verdict)
{
	const struct nn_ops *ops = nn_backend_find(c->run.device);

	if (!ops || !ops->host) {
		fprintf(stderr, "emu: bench train measures the harness on the CPU: run.device = cpu "
			"or ref\n");
		return 2;
	}
	char err[1024];
	struct nn_backend be;
	/* the ideal's data, loaded once (each emu run loads its own, as it always does) */
	struct nn_dataset train, test;
	if (train_load_data(c, &train, &test, err, sizeof(err)) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		return 2;
	}
	if (nn_backend_open(&be, c->run.device, 0) < 0) {
		fprintf(stderr, "emu: %s\n", be.msg);
		data_free(&train);
		data_free(&test);
		return 2;
	}
	cpu_set_t set;
	int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
	/* Rounds alternate the two measurements, so that the machine's slow and fast
	 * moments (a shared VM here: its speed drifts by a third from minute to minute)
	 * fall on both: each run is held to the mean of the ideals measured just before
	 * and just after it (the one after a run is the one before the next), and the
	 * verdict is the median ratio of the rounds. */
	double ratio[ROUNDS], floor_ratio[ROUNDS], one_before = 0, all_before = 0;
	double xchg = exchange_work(c, &be, &train, cores);
	struct per_step ps[ROUNDS];
	int failed = ideals(c, &be, &train, &set, cores, &one_before, &all_before) < 0;
	for (int r = 0; r < ROUNDS && !failed; r++) {
		double one_after = 0, all_after = 0, actual = 0;
		long steps = 0;
		if (truncate(usage, 0) < 0)
			perror("emu: bench train: truncate");
		int rc = cmd_run(c, argc, argv);
		if (rc != 0 || run_step(tmpl, &actual, &steps) < 0) {
			fprintf(stderr, "emu: bench train: the run failed (exit %d)\n", rc);
			failed = 1;
			break;
		}
		if (ideals(c, &be, &train, &set, cores, &one_after, &all_after) < 0) {
			failed = 1;
			break;
		}
		/* compute: one core's time for all workers; ideal: every core at once */
		double all = (one_before + one_after) / 2, ideal = (all_before + all_after) / 2;
		one_before = one_after;
		all_before = all_after;
		if (read_usage(usage, &ps[r]) < 0)
			ps[r] = (struct per_step){ 0 };
		double by_one = actual / (all / cores);
		ratio[r] = actual / ideal;
		floor_ratio[r] = actual / (ideal + xchg);
		printf("%7d %5d %11.2f %9.2f %8.2f %6.3f %5.2f %7.3f %7.2f %6.3f %6.1f %6.1f %6.1f "
		       "%6.1f %7.2f %7.2f %7.2f %7.2f\n", c->run.workers, r + 1, all * 1e3,
		       ideal * 1e3, actual * 1e3, ratio[r], goal, by_one, xchg * 1e3,
		       floor_ratio[r], ps[r].nvcsw, ps[r].nivcsw,
		       ps[r].sleeps, ps[r].wakes, ps[r].cpu_ms, ps[r].batch_ms, ps[r].nn_ms,
		       ps[r].cpu_ms - ps[r].batch_ms - ps[r].nn_ms);
		if (csv)
			fprintf(csv, "%d,%d,%s,%d,%d,%.4f,%.4f,%.4f,%.4f,%.2f,%.4f,%.4f,%.4f,%.2f,"
				"%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%.3f\n", r + 1, c->run.workers,
				c->train.model, c->train.batch, cores, all * 1e3, ideal * 1e3,
				actual * 1e3, ratio[r], goal, by_one, xchg * 1e3, floor_ratio[r],
				ps[r].nvcsw, ps[r].nivcsw,
				ps[r].sleeps, ps[r].wakes, ps[r].yields, ps[r].cpu_ms,
				ps[r].batch_ms, ps[r].nn_ms);
	}
	nn_backend_close(&be);
	data_free(&train);
	data_free(&test);
	if (failed)
		return 1;
	*verdict = median(ratio, ROUNDS);
	verdict[1] = median(floor_ratio, ROUNDS);
	return 0;
}

/* One case: the configuration with `workers` (0: as configured), its rounds. */
static int bench_case(const char *ini, int no, char **over, int workers, double goal,
		      const char *tmpl, const char *usage, FILE *csv, int argc, char **argv,
		      double *verdict)
{
	char warg[48];
	if (workers > 0) {
		snprintf(warg, sizeof(warg), "run.workers=%d", workers);
		over[no++] = warg;
	}
	struct cfg *cp = malloc(sizeof(*cp));	/* large: not on the stack */
	char err[1024];
	if (!cp || cfg_load(cp, ini, no, over, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", cp ? err : "emu: out of memory");
		free(cp);
		return 2;
	}
	int status = bench_with(cp, tmpl, usage, goal, csv, argc, argv, verdict);
	free(cp);
	return status;
}

/* The goals: 16 workers on a small box within 10% of the ideal, 64 within 20%, 256
 * within 30% (more workers per core: more hand-offs per step of compute); a count given
 * with run.workers gets the goal of the nearer case */
static double goal_of(int workers)
{
	return workers > 64 ? 1.30 : workers > 16 ? 1.20 : 1.10;
}

/* emu bench train [FILE.ini] [section.key=value ...]; argv[0] is "train". */
int bench_train(int argc, char **argv)
{
	int first = 1, own_workers = 0;
	const char *ini = "quickstart.ini";
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' || i > 60)
			return bench_usage("train", argv[i], "usage: emu bench train [FILE.ini] "
					   "[section.key=value ...]\n  the harness overhead: a real "
					   "run's step time against the ideal (default: the\n  preset "
					   "quickstart.ini, with 16, 64 and 256 workers unless run.workers "
					   "is given)\n");
		if (strncmp(argv[i], "run.workers=", 12) == 0) {	/* the last one counts */
			own_workers = atoi(argv[i] + 12);
			own_workers = own_workers > 0 ? own_workers : 1;
		}
	}
	if (argc > 1 && strchr(argv[1], '=') == NULL)
		ini = argv[first++];
	/* found as `emu run` finds it: from any folder, the preset beside the binary */
	char path[PATH_MAX], err[2048];
	int found = preset_path_find(ini, path, err, sizeof(err));
	if (found < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	ini = path;
	char tmpl[] = "/tmp/emu-bench-train-XXXXXX", usage[] = "/tmp/emu-bench-usage-XXXXXX";
	if (!mkdtemp(tmpl)) {
		perror("emu: mkdtemp");
		return 1;
	}
	int ufd = mkstemp(usage);
	if (ufd < 0) {
		perror("emu: mkstemp");
		rmdir(tmpl);
		return 1;
	}
	close(ufd);
	setenv("EMU_USAGE_FILE", usage, 1);	/* the workers inherit it (usage.h) */
	char out_arg[64], *over[64];
	snprintf(out_arg, sizeof(out_arg), "run.output=%s", tmpl);
	int no = 0;
	over[no++] = "train.max_steps=80";
	over[no++] = "train.log_every=10";
	over[no++] = "train.eval_every=100000";
	for (int i = first; i < argc && no < 61; i++)
		over[no++] = argv[i];
	over[no++] = out_arg;
	over[no++] = "run.overwrite=true";	/* every round writes the same folder */
	static const int cases[] = { 16, 64, 256 };
	int ncases = own_workers ? 1 : 3, status = 0;
	double verdict[3][2] = { { 0 } };	/* per case: emu / ideal, emu / (ideal + xchg) */
	FILE *csv = fopen("bench-train.csv", "w");
	if (csv)
		fprintf(csv, "round,workers,model,batch,cores,compute_ms,ideal_ms,emu_ms,ratio,goal,"
			"ratio_one_core,xchg_ms,ratio_ideal_xchg,nvcsw_step,nivcsw_step,sleeps_step,"
			"wakes_step,yields_step,cpu_ms_step,"
			"batch_ms_step,nn_ms_step\n");
	printf("harness overhead: model and batch of %s.  Per step, summed over workers:\n"
	       "voluntary and involuntary context switches, sleeps (notify waits), wakes, CPU ms,"
	       "\nof which gathering the batch and forward and backward (nn, as the ideal), and "
	       "the rest:\nthe update, the exchange, logging and waiting (harness)\n", ini);
	printf("%7s %5s %11s %9s %8s %6s %5s %7s %7s %6s %6s %6s %6s %6s %7s %7s %7s %7s\n",
	       "workers", "round", "compute ms", "ideal ms", "emu ms", "ratio", "goal", "1-core",
	       "xchg ms", "+xchg", "vcsw", "ivcsw", "sleeps", "wakes", "cpu ms", "batch", "nn",
	       "harness");
	int workers[3] = { own_workers ? own_workers : cases[0], cases[1], cases[2] };
	for (int k = 0; k < ncases && status == 0; k++)
		status = bench_case(ini, no, over, own_workers ? 0 : cases[k],
				    goal_of(workers[k]), tmpl, usage, csv, argc, argv, verdict[k]);
	if (csv)
		fclose(csv);
	unsetenv("EMU_USAGE_FILE");
	unlink(usage);
	if (status == 0) {
		printf("compute: all workers one after another on one core, each with its own "
		       "replica; ideal: the same\nwith every core busy at once, one process per "
		       "core running its share; each the median\nof 5 x 10 steps, the mean of its "
		       "measurements just before and just after the run;\nemu ms: a real run's "
		       "steps from its first logged one to the one before its last; ratio: "
		       "emu / ideal; 1-core: emu /\n"
		       "(compute / cores); xchg ms: the exchange's memory work alone (RPS's "
		       "copies and means\nin buffers of the run's sizes, every core busy; no "
		       "rings, notifications or sleeps);\n+xchg: emu / (ideal + xchg); the "
		       "verdict: the median round of %d\n", ROUNDS);
		for (int k = 0; k < ncases; k++) {
			char of[32] = "";

			if (!own_workers)
				snprintf(of, sizeof(of), ", %d workers", workers[k]);
			printf("median ratio emu / ideal%s: %.3f   (goal <= %.2f); emu / (ideal "
			       "+ xchg): %.3f\n", of, verdict[k][0], goal_of(workers[k]),
			       verdict[k][1]);
		}
	}
	if (nftw(tmpl, remove_entry, 8, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "emu: could not remove %s\n", tmpl);
	return status;
}
