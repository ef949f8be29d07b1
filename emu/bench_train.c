/* emu/bench_train.c — `emu bench train`: the harness's overhead on a real run.
 *
 * Ideal: the same N workers' compute (batch, forward, backward, SGD update), measured
 * alone, one worker after another in this one process, divided by the cores the run may
 * use.  Actual: the wall time per step of `emu run` of the same configuration (every
 * process, ring, notification, barrier and log line included), taken from train.csv
 * between the first and the last logged step, so start-up and the final evaluation are
 * left out.  Both from one invocation, printed side by side with their ratio.
 */
#include <errno.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cblas.h>
#include "emu/commands.h"
#include "emu/train.h"
#include "nn/model.h"
#include "nn/optim.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds of compute for one step of all N workers, run one after another. */
static int ideal_step(const struct cfg *c, double *out)
{
	struct nn_dataset train, test;
	char err[512];
	if (train_load_data(c, &train, &test, err, sizeof(err)) < 0) {
		fprintf(stderr, "emu: %s\n", err);
		return -EINVAL;
	}
	int n = c->run.workers, B = c->train.batch, steps = 10;
	struct nn_model m;
	int rc = nn_model_init(&m, c->train.model, &train.in, &nn_ops_cpu, B, c->run.seed);
	size_t feat = (size_t)train.in.C * train.in.H * train.in.W;
	float *x = train.x ? malloc((size_t)B * feat * sizeof(float)) : NULL;
	int32_t *tok = train.tokens ? malloc((size_t)B * train.in.T * sizeof(int32_t)) : NULL;
	int32_t *y = malloc((size_t)B * 4), *idx = malloc((size_t)B * sizeof(int32_t));
	if (rc == 0 && (!y || !idx))
		rc = -ENOMEM;
	double best = 1e30;
	for (int rep = 0; rc == 0 && rep < 3; rep++) {
		double t0 = now_s();
		for (int s = 0; s < steps; s++)
			for (int w = 0; w < n; w++) {
				for (int k = 0; k < B; k++)
					idx[k] = (int32_t)(((int64_t)(s * n + w) * B + k) % train.n);
				data_batch(&train, idx, B, x, tok, y);
				nn_forward(&m, x, tok, y, B, true, NULL);
				nn_backward(&m, NULL);
				optim_sgd(m.params, m.grads, m.nparams, 1e-3f, 0);
			}
		double t = (now_s() - t0) / steps;
		if (t < best)
			best = t;
	}
	*out = best;
	if (rc == 0)
		nn_model_free(&m);
	free(x);
	free(tok);
	free(y);
	free(idx);
	data_free(&train);
	data_free(&test);
	return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* Wall seconds per step between the first and last rows of train.csv. */
static int run_step(const char *dir, double *out, long *steps)
{
	char path[CFG_STR + 32], line[512];
	snprintf(path, sizeof(path), "%s/train.csv", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	long s0 = -1, s1 = -1, s;
	double w0 = 0, w1 = 0, w, d;
	if (!fgets(line, sizeof(line), f)) {	/* header */
		fclose(f);
		return -EINVAL;
	}
	while (fgets(line, sizeof(line), f)) {
		/* step,epoch,loss,lr,vtime_s,wall_s,... */
		if (sscanf(line, "%ld,%lf,%lf,%lf,%lf,%lf", &s, &d, &d, &d, &d, &w) != 6)
			continue;
		if (s0 < 0) {
			s0 = s;
			w0 = w;
		}
		s1 = s;
		w1 = w;
	}
	fclose(f);
	if (s1 <= s0)
		return -EINVAL;
	*out = (w1 - w0) / (double)(s1 - s0);
	*steps = s1 - s0;
	return 0;
}

/* emu bench train [FILE.ini] [section.key=value ...]; argv[0] is "train". */
int bench_train(int argc, char **argv)
{
	int first = 1;
	const char *ini = "ini/quickstart.ini";
	if (argc > 1 && strchr(argv[1], '=') == NULL)
		ini = argv[first++];
	char tmpl[] = "/tmp/emu-bench-train-XXXXXX";
	if (!mkdtemp(tmpl)) {
		perror("emu: mkdtemp");
		return 1;
	}
	char out_arg[64], *over[64];
	snprintf(out_arg, sizeof(out_arg), "run.output=%s", tmpl);
	int no = 0;
	over[no++] = "train.max_steps=80";
	over[no++] = "train.log_every=10";
	over[no++] = "train.eval_every=100000";
	for (int i = first; i < argc && no < 62; i++)
		over[no++] = argv[i];
	over[no++] = out_arg;
	static struct cfg c;
	char err[1024];
	if (cfg_load(&c, ini, no, over, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	cpu_set_t set;
	int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
	openblas_set_num_threads(c.run.threads);
	double ideal_all = 0, actual = 0;
	long steps = 0;
	if (ideal_step(&c, &ideal_all) < 0)
		return 1;
	int rc = cmd_run(&c);
	if (rc != 0 || run_step(tmpl, &actual, &steps) < 0) {
		fprintf(stderr, "emu: bench train: the run failed (exit %d)\n", rc);
		return 1;
	}
	double ideal = ideal_all / cores;
	printf("harness overhead: %d workers, model %s, batch %d, %d cores\n", c.run.workers,
	       c.train.model, c.train.batch, cores);
	printf("  compute of all workers, one after another: %8.2f ms/step\n", ideal_all * 1e3);
	printf("  ideal (that / %d cores):                   %8.2f ms/step\n", cores, ideal * 1e3);
	printf("  emu run (over %ld steps):                  %8.2f ms/step\n", steps, actual * 1e3);
	printf("  ratio emu / ideal:                         %8.3f   (target <= 1.25)\n",
	       actual / ideal);
	FILE *csv = fopen("bench-train.csv", "w");
	if (csv) {
		fprintf(csv, "workers,model,batch,cores,compute_ms,ideal_ms,emu_ms,ratio\n");
		fprintf(csv, "%d,%s,%d,%d,%.4f,%.4f,%.4f,%.4f\n", c.run.workers, c.train.model,
			c.train.batch, cores, ideal_all * 1e3, ideal * 1e3, actual * 1e3,
			actual / ideal);
		fclose(csv);
	}
	if (nftw(tmpl, remove_entry, 8, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "emu: could not remove %s\n", tmpl);
	return 0;
}
