/* emu/main.c — the command line: run, check, bench, compare, help.
 * Exit codes: 0 ok, 1 a failed run, 2 usage or configuration error. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/cfg/cfg.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/preset_path.h"
#include "emu/bench/bench.h"
#include "emu/bench/bench_jointspar.h"
#include "emu/commands.h"
#include "emu/run/events.h"
#include "emu/run/plan.h"

#ifndef EMU_VERSION
#define EMU_VERSION "unknown"
#endif

static const char usage[] =
	"usage: emu COMMAND [ARGS]\n"
	"\n"
	"  emu run FILE.ini [section.key=value ...]    run the experiment FILE.ini describes\n"
	"  emu check FILE.ini [section.key=value ...]  print the resolved configuration\n"
	"  emu sweep FILE.ini section.key=v1,v2 ...    a grid of runs, seeds (emu help sweep)\n"
	"  emu bench net|nn|train|jointspar|limit [ARGS]  benchmarks (emu help bench)\n"
	"  emu compare [--tol REL] A B                 two runs' CSVs, cell by cell\n"
	"  emu help [run|check|sweep|bench|compare|keys|SECTION]  this text, or more about one topic\n"
	"  emu help keys --names|--json                every key, for programs\n"
	"  emu help presets                            the presets emu run NAME.ini finds\n"
	"  emu --version\n"
	"\n"
	"Exit codes: 0 ok, 1 the run failed (compare: the runs differ), 2 usage or\n"
	"configuration error.\n";

static const char help_run[] =
	"usage: emu run FILE.ini [section.key=value ...]\n"
	"\n"
	"Forks one worker process per emulated GPU (run.workers), connects them through\n"
	"shared-memory rings whose messages pass through the [net] loss/delay model, trains\n"
	"the [train] model in every worker and writes CSV logs to run.output (default\n"
	"runs/NAME).  Arguments after the file override its keys, in order, e.g.\n"
	"  emu run x.ini net.loss=bernoulli net.loss_p=1% 'link 0-1.latency=5ms'\n"
	"A configuration error prints FILE:LINE: what is wrong, and exits 2 before anything\n"
	"runs.  Same file, same overrides, same seed: same numbers.\n"
	"\n"
	"A FILE.ini without a '/' that the current folder does not hold is a preset: emu\n"
	"looks for it in PREFIX/share/emu/ini beside the binary (emu help presets lists them)\n"
	"and says which file it uses.  emu check finds files the same way.\n";

static const char help_check[] =
	"usage: emu check [--links] FILE.ini [section.key=value ...]\n"
	"\n"
	"Loads FILE.ini and the overrides exactly as 'emu run' would, and prints the fully\n"
	"resolved configuration as INI: every key, defaults filled in, each with its unit.\n"
	"The output is itself a valid input that resolves to the same configuration, so\n"
	"  emu check x.ini > resolved.ini\n"
	"records what a run used.  Exit 0 if the configuration is valid, else 2.\n"
	"\n"
	"  --links  then print, as comments, the model of every directed link as the [net]\n"
	"           and [link ...] sections resolve it, one line each in netem's words\n"
	"           (0->1 loss bernoulli 1% latency 50us ...), and the compute model of every\n"
	"           worker that [worker ...] sections change\n";

static const char help_bench[] =
	"usage: emu bench net [ARGS]   rings, notification and exchange throughput\n"
	"       emu bench nn [ARGS]    nn training step against PyTorch (on a GPU when one is usable)\n"
	"       emu bench train [ARGS] harness overhead against the ideal\n"
	"       emu bench jointspar    JointSpar's backward time against its layer budget (CSV)\n"
	"       emu bench limit [ARGS] congestion loss of a queue limit against M/D/1/K (CSV)\n"
	"\n"
	"ARGS go to the benchmark (its argv[0] is the benchmark's name); each prints its own help\n"
	"for --help.\n";

/* argv[file] is FILE.ini, or the name of a preset (emu/cfg/preset_path.h); the
 * overrides follow it. */
static int load(struct cfg *c, int argc, char **argv, int file)
{
	char err[2048], path[PATH_MAX];
	int found;

	if (argc <= file) {
		fprintf(stderr, "emu %s: missing FILE.ini; expected emu %s FILE.ini "
			"[section.key=value ...]\n", argv[1], argv[1]);
		return 2;
	}
	found = preset_path_find(argv[file], path, err, sizeof(err));
	if (found < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (found)	/* on stderr: emu check's stdout stays the configuration */
		fprintf(stderr, "emu: using preset %s\n", path);
	if (cfg_load_args(c, path, argc - file - 1, argv + file + 1, file + 1, err,
			  sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	fputs(c->warnings, stderr);
	return 0;
}

/* emu help keys --markdown|--names|--json: the key table for the README and for programs
 * (a failed write is found at exit); -EINVAL for another option. */
static int help_keys_as(const char *opt)
{
	if (!strcmp(opt, "--markdown"))
		cfg_help_markdown(stdout);
	else if (!strcmp(opt, "--names"))
		cfg_help_names(stdout);
	else if (!strcmp(opt, "--json"))
		cfg_help_json(stdout);
	else
		return -EINVAL;
	return 0;
}

static int cmd_help(int argc, char **argv)
{
	const char *topic = argc > 2 ? argv[2] : NULL;

	if (!topic) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc == 4 && !strcmp(topic, "keys") && help_keys_as(argv[3]) == 0)
		return 0;
	if (argc > 3) {
		fprintf(stderr, "emu help: unexpected argument '%s'; expected emu help TOPIC "
			"(or emu help keys --markdown|--names|--json)\n", argv[argc - 1]);
		return 2;
	}
	if (!strcmp(topic, "run"))
		fputs(help_run, stdout);
	else if (!strcmp(topic, "check"))
		fputs(help_check, stdout);
	else if (!strcmp(topic, "bench"))
		fputs(help_bench, stdout);
	else if (!strcmp(topic, "sweep"))
		fputs(help_sweep, stdout);
	else if (!strcmp(topic, "compare"))
		return cmd_compare(2, (char *[]){ "compare", "--help", NULL });
	else if (!strcmp(topic, "presets"))
		return preset_list(stdout) < 0;
	else if (!strcmp(topic, "keys"))
		cfg_help(stdout, NULL);
	else if (cfg_help(stdout, topic)) {
		fprintf(stderr, "emu help: unknown topic '%s'; expected run, check, sweep, bench, "
			"compare, keys, presets or a section: run, net, link, train, worker, data, rps, "
			"allreduce, signum, jointspar, event\n", topic);
		return 2;
	}
	return 0;
}

/* emu check / emu run: load the configuration, then print it or run it. */
static int cmd_with_config(int argc, char **argv, int run)
{
	int links = !run && argc >= 3 && !strcmp(argv[2], "--links"), file = 2 + links;
	struct cfg *c;
	char err[512];
	int r;

	if (argc > file && argv[file][0] == '-' && argv[file][1]) {	/* "-" may name a file */
		if (!strcmp(argv[file], "--help") || !strcmp(argv[file], "-h"))
			return cmd_help(3, (char *[]){ argv[0], "help", argv[1], NULL });
		fprintf(stderr, "emu %s: unknown option '%s'; expected emu %s FILE.ini "
			"[section.key=value ...]\n", argv[1], argv[file], argv[1]);
		return 2;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		fprintf(stderr, "emu: out of memory\n");
		return 1;
	}
	r = load(c, argc, argv, file);
	if (!r && run) {
		r = cmd_run(c, argc, argv);
	} else if (!r && (plan_check_config(c, NULL, err, sizeof(err)) < 0 ||
			   events_check(c, err, sizeof(err)) < 0)) {
		fprintf(stderr, "emu: %s\n", err);
		r = 2;
	} else if (!r) {
		cfg_print(c, stdout);	/* a failed write is found at exit (stdout_written) */
		events_print(c, stdout);
		if (links)
			cfg_print_links(c, stdout);
	}
	free(c);
	return r;
}

static int cmd_bench(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[2], "net"))
		return bench_net(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[2], "nn"))
		return bench_nn(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[2], "train"))
		return bench_train(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[2], "limit"))
		return bench_limit(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[2], "jointspar")) {
		if (argc > 3)
			return bench_usage("jointspar", argv[3], "usage: emu bench jointspar\n  "
					   "JointSpar's backward time against its layer budget, as CSV "
					   "on stdout\n");
		return bench_jointspar(stdout) < 0;
	}
	if (argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		fputs(help_bench, stdout);
		return 0;
	}
	fprintf(stderr, "emu bench: %s%s%s; expected emu bench net|nn|train|jointspar [ARGS]\n",
		argc >= 3 ? "unknown benchmark '" : "missing benchmark",
		argc >= 3 ? argv[2] : "", argc >= 3 ? "'" : "");
	return 2;
}

/* OpenBLAS sizes its thread pool from OPENBLAS_NUM_THREADS when the library loads,
 * before main, and every forked worker starts a pool of its own; idle pool threads spin
 * in sched_yield, so on a 2-core box 16 workers' spare threads would take a sixth of the
 * CPU from the training they are meant to serve.  Workers compute on one thread each
 * ([run] threads raises it), so emu sets the variable and starts itself again, once.
 * A value the user set is left alone. */
static void single_threaded_blas(char **argv)
{
	if (getenv("OPENBLAS_NUM_THREADS"))
		return;
	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	execv("/proc/self/exe", argv);
	/* exec failed (no /proc): run on, with the pool as it is */
}

/* Started with fd 0, 1 or 2 closed (`emu run x.ini 2>&-`), the first file emu opens
 * would take its number, and progress meant for stderr would land in a CSV: each closed
 * one is held by /dev/null instead.  A reader that goes away (`| head -1`) or a file
 * size limit must not kill a run with its logs half-written: SIGPIPE and SIGXFSZ are
 * ignored, and the writes that fail say so. */
static void safe_stdio(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
			_exit(1);	/* nothing can be said: there is no stderr */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	/* an ignored SIGCHLD survives exec and makes the kernel reap children itself: the
	 * supervisor's waitid and the sweep's waitpid would never see theirs */
	signal(SIGCHLD, SIG_DFL);
}

static int dispatch(int argc, char **argv)
{
	static const char *const cmds[] = { "run", "resume", "check", "sweep", "bench", "compare",
					    "help" };
	const char *near;

	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(2, argv);
	if (!strcmp(argv[1], "--version")) {
		printf("emu %s\n", EMU_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_with_config(argc, argv, 1);
	if (!strcmp(argv[1], "check"))
		return cmd_with_config(argc, argv, 0);
	if (!strcmp(argv[1], "resume"))
		return cmd_resume(argc, argv);
	if (!strcmp(argv[1], "sweep"))
		return cmd_sweep(argc, argv);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc, argv);
	if (!strcmp(argv[1], "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help"))
		return cmd_help(argc, argv);
	near = cfg_suggest(argv[1], cmds, sizeof(cmds) / sizeof(cmds[0]));
	if (near)
		fprintf(stderr, "emu: unknown command '%s'; did you mean '%s'?\n", argv[1], near);
	else
		fprintf(stderr, "emu: unknown command '%s'; expected run, check, sweep, bench, "
			"compare or help (emu --help)\n", argv[1]);
	return 2;
}

/* What went to stdout reached it, or the command fails (`emu check x.ini >/dev/full`). */
static int stdout_written(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	fprintf(stderr, "emu: stdout: %s\n", strerror(errno ? errno : EIO));
	return -1;
}

int main(int argc, char **argv)
{
	int r;

	safe_stdio();
	single_threaded_blas(argv);
	errno = 0;
	r = dispatch(argc, argv);
	if (stdout_written() < 0 && r == 0)
		r = 1;
	return r;
}
