/* emu/main.c — the command line: the table of commands (dispatch, usage, help) and the
 * table of benchmarks.
 * Exit codes: 0 ok, 1 a failed run, 2 usage or configuration error. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/algo/algo.h"
#include "emu/cfg/cfg.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/preset_path.h"
#include "emu/bench/bench.h"
#include "emu/bench/bench_jointspar.h"
#include "emu/commands.h"
#include "emu/run/ckpt.h"
#include "emu/run/events.h"
#include "emu/run/label.h"
#include "emu/run/plan.h"
#include "nn/backend.h"

#ifndef EMU_VERSION
#define EMU_VERSION "unknown"
#endif

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

/* emu help resume: the text around the list of what a resume may change, which is
 * ckpt_resumable's (the list resume.c checks against). */
static const char help_resume_head[] =
	"usage: emu resume RUN [section.key=value ...]\n"
	"\n"
	"Continues the run in folder RUN from its latest complete checkpoint (RUN/ckpt/latest).\n"
	"A run takes them with run.checkpoint_every = N (steps) or run.checkpoint_wall (wall\n"
	"time), at a stop signal and at the end.  The resumed run's CSV logs are those of the\n"
	"same run done in one go, byte for byte but for wall_s.\n"
	"  emu run x.ini run.checkpoint_every=500      # ... Ctrl-C, a reboot, a kill -9\n"
	"  emu resume runs/x                           # from the latest checkpoint\n"
	"  emu resume runs/x train.epochs=200          # a finished run, made longer\n"
	"\n"
	"The configuration is RUN/config.ini with the overrides, which may change only what\n"
	"does not change the run's past: ";
static const char help_resume_tail[] =
	"; run.output cannot change (the folder is RUN).  A checkpoint that is missing, "
	"corrupt or of another configuration or worker count, an override that would change "
	"the past, or a run with nothing left to run is refused with exit 2 before anything is "
	"written: the folder stays as it was.  One host only: not across MPI ranks.  More in "
	"docs/checkpoints.md, and man emu.\n";

/* Writes text from column col on, in lines of at most 86 characters: the resume help's
 * paragraph holds a list kept elsewhere. */
static void wrap_from(FILE *f, const char *text, int col)
{
	while (*text) {
		int n = (int)strcspn(text, "\n"), room = 86 - col;

		if (n > room) {
			n = room;
			while (n > 0 && text[n] != ' ')
				n--;
		}
		fprintf(f, "%.*s\n", n, text);
		text += n;
		text += *text == ' ' || *text == '\n';
		col = 0;
	}
}

static void help_resume(FILE *f)
{
	char para[2048];
	const char *last = strrchr(help_resume_head, '\n') + 1;

	fprintf(f, "%.*s", (int)(last - help_resume_head), help_resume_head);
	snprintf(para, sizeof(para), "%s%s%s", last, ckpt_resumable, help_resume_tail);
	wrap_from(f, para, 0);
}

/* argv[file] is FILE.ini, or the name of a preset (emu/cfg/preset_path.h); the
 * overrides follow it. */
static int load(struct cfg *c, int argc, char **argv, int file)
{
	char err[8192], path[PATH_MAX];	/* up to 20 errors of a file */
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
			  sizeof(err)) || label_expand(c, err, sizeof(err)) < 0 ||
	    (c->train.algorithm == ALGO_PLUGIN && algo_plugin_open(c, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	fputs(c->warnings, stderr);
	return 0;
}

/* emu help keys --markdown|--names|--json: the key table for docs/configuration.md and
 * for programs (a failed write is found at exit); -EINVAL for another option. */
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

static int cmd_help(int argc, char **argv);

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

/* --- the benchmarks: one table drives emu bench, its help and its messages ------ */

static int bench_jointspar_cmd(int argc, char **argv)
{
	if (argc > 1)
		return bench_usage("jointspar", argv[1], "usage: emu bench jointspar\n  "
				   "JointSpar's backward time against its layer budget, as CSV "
				   "on stdout\n");
	return bench_jointspar(stdout) < 0;
}

static const struct bench {
	const char *name, *args, *what;
	int (*run)(int argc, char **argv);	/* argv[0] is the benchmark's name */
} benches[] = {
	{ "net", "[ARGS]", "rings, notification and exchange throughput", bench_net },
	{ "nn", "[ARGS]", "nn training step against PyTorch (on a GPU when one is usable)",
	  bench_nn },
	{ "train", "[ARGS]", "harness overhead against the ideal", bench_train },
	{ "jointspar", "", "JointSpar's backward time against its layer budget (CSV)",
	  bench_jointspar_cmd },
	{ "limit", "[ARGS]", "congestion loss of a queue limit against M/D/1/K (CSV)",
	  bench_limit },
};
#define NBENCHES (sizeof(benches) / sizeof(benches[0]))

/* The benchmarks' names joined by sep: "net|nn|train|jointspar|limit". */
static const char *bench_names(const char *sep, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NBENCHES && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? sep : "", benches[i].name);
	return buf;
}

static void help_bench(FILE *f)
{
	char line[64];

	for (size_t i = 0; i < NBENCHES; i++) {
		snprintf(line, sizeof(line), "%s %s", benches[i].name, benches[i].args);
		fprintf(f, "%s emu bench %-16s %s\n", i ? "      " : "usage:", line, benches[i].what);
	}
	fputs("\nARGS go to the benchmark (its argv[0] is the benchmark's name); each prints its "
	      "own help\nfor --help.\n", f);
}

static int cmd_bench(int argc, char **argv)
{
	char names[128];

	for (size_t i = 0; argc >= 3 && i < NBENCHES; i++)
		if (!strcmp(argv[2], benches[i].name))
			return benches[i].run(argc - 2, argv + 2);
	if (argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		help_bench(stdout);
		return 0;
	}
	fprintf(stderr, "emu bench: %s%s%s; expected emu bench %s [ARGS]\n",
		argc >= 3 ? "unknown benchmark '" : "missing benchmark",
		argc >= 3 ? argv[2] : "", argc >= 3 ? "'" : "", bench_names("|", names,
									 sizeof(names)));
	return 2;
}

/* --- the commands: one table drives dispatch, usage, help and their messages -------- */

static int cmd_run_file(int argc, char **argv)
{
	return cmd_with_config(argc, argv, 1);
}

static int cmd_check(int argc, char **argv)
{
	return cmd_with_config(argc, argv, 0);
}

static int cmd_compare_args(int argc, char **argv)
{
	return cmd_compare(argc - 1, argv + 1);
}

static void help_text_run(FILE *f) { fputs(help_run, f); }
static void help_text_check(FILE *f) { fputs(help_check, f); }
static void help_text_sweep(FILE *f) { fputs(help_sweep, f); }
static void help_text_compare(FILE *f) { cmd_compare(2, (char *[]){ "compare", "--help", NULL }); }
static void usage(FILE *f);

static const struct command {
	const char *name;
	const char *args;		/* the usage line after "emu NAME"; NULL: the benchmarks */
	const char *what;		/* what it does, in the usage */
	int (*run)(int argc, char **argv);	/* emu's argc and argv */
	void (*help)(FILE *f);		/* emu help NAME, emu NAME --help */
} commands[] = {
	{ "run", "FILE.ini [section.key=value ...]", "run the experiment FILE.ini describes",
	  cmd_run_file, help_text_run },
	{ "resume", "RUN [section.key=value ...]", "continue a run from its latest checkpoint",
	  cmd_resume, help_resume },
	{ "check", "FILE.ini [section.key=value ...]", "print the resolved configuration",
	  cmd_check, help_text_check },
	{ "sweep", "FILE.ini section.key=v1,v2 ...", "a grid of runs, seeds (emu help sweep)",
	  cmd_sweep, help_text_sweep },
	{ "bench", NULL, "benchmarks (emu help bench)", cmd_bench, help_bench },
	{ "compare", "[--tol REL] A B", "two runs' CSVs, cell by cell", cmd_compare_args,
	  help_text_compare },
	{ "help", "[COMMAND|keys|presets|SECTION]", "this text, or more about one topic",
	  cmd_help, usage },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* The commands' names, ", " between them and " or " before the last. */
static const char *command_names(char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NCOMMANDS && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", !i ? "" :
					i == NCOMMANDS - 1 ? " or " : ", ", commands[i].name);
	return buf;
}

static void usage(FILE *f)
{
	char args[160], names[128];

	fputs("usage: emu COMMAND [ARGS]\n\n", f);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];

		if (c->args)
			snprintf(args, sizeof(args), "%s %s", c->name, c->args);
		else
			snprintf(args, sizeof(args), "%s %s [ARGS]", c->name,
				 bench_names("|", names, sizeof(names)));
		fprintf(f, "  emu %-38s  %s\n", args, c->what);
	}
	fputs("  emu help keys --names|--json                every key, for programs\n"
	      "  emu help presets                            the presets emu run NAME.ini finds\n"
	      "  emu help --names                            every command, one a line\n"
	      "  emu --version\n"
	      "\n"
	      "Exit codes: 0 ok, 1 the run failed (compare: the runs differ), 2 usage or\n"
	      "configuration error.\n", f);
}

static int cmd_help(int argc, char **argv)
{
	const char *topic = argc > 2 ? argv[2] : NULL;
	const struct command *cmd = topic ? command_find(topic) : NULL;
	char names[128], sections[512];

	if (!topic) {
		usage(stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(topic, "--names")) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			printf("%s\n", commands[i].name);
		return 0;
	}
	if (argc == 4 && !strcmp(topic, "keys") && help_keys_as(argv[3]) == 0)
		return 0;
	if (argc > 3) {
		fprintf(stderr, "emu help: unexpected argument '%s'; expected emu help TOPIC "
			"(or emu help keys --markdown|--names|--json)\n", argv[argc - 1]);
		return 2;
	}
	if (cmd) {	/* "run" is a command first; emu help keys shows the section */
		cmd->help(stdout);
		return 0;
	}
	if (!strcmp(topic, "presets")) {
		char err[PATH_MAX * 2 + 128];
		int rc = preset_list(stdout, err, sizeof(err));

		if (err[0])	/* a note when rc is 0, else the error */
			fprintf(stderr, "emu: %s\n", err);
		return rc < 0;
	}
	if (!strcmp(topic, "keys"))
		cfg_help(stdout, NULL);
	else if (cfg_help(stdout, topic)) {
		cfg_section_list(", ", sections, sizeof(sections));
		fprintf(stderr, "emu help: unknown topic '%s'; expected a command (%s), keys, "
			"presets or a section (%s, event NAME)\n", topic,
			command_names(names, sizeof(names)), sections);
		return 2;
	}
	return 0;
}

/* OpenBLAS (linked for `emu bench nn`'s sgemm reference; no worker computes with it)
 * sizes its thread pool from OPENBLAS_NUM_THREADS when the library loads, before main,
 * and every forked worker starts a pool of its own; idle pool threads spin in
 * sched_yield, so on a 2-core box 16 workers' spare threads would take a sixth of the
 * CPU from the training they are meant to serve.  So emu sets the variable and starts
 * itself again, once.  A value the user set is left alone. */
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
 * ignored, and the writes that fail say so (stdout's reader gone excepted: see
 * stdout_written). */
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
	const char *cmds[NCOMMANDS], *near;
	const struct command *cmd;
	char names[128];

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(2, argv);
	if (!strcmp(argv[1], "--version")) {
		struct nn_backend be;

		printf("emu %s\n", EMU_VERSION);
		/* which level of the CPU backend a run here would use (EMU_ISA chooses
		 * another); the results are the same at every level (docs/cpu.md) */
		if (nn_backend_open(&be, "cpu", 0) == 0)
			printf("cpu level: %s\n", be.ops->variant);
		else
			printf("cpu level: none: %s\n", be.msg);
		nn_backend_close(&be);
		return 0;
	}
	cmd = command_find(argv[1]);
	if (cmd && argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		cmd->help(stdout);
		return 0;
	}
	if (cmd)
		return cmd->run(argc, argv);
	for (size_t i = 0; i < NCOMMANDS; i++)
		cmds[i] = commands[i].name;
	near = cfg_suggest(argv[1], cmds, NCOMMANDS);
	if (near)
		fprintf(stderr, "emu: unknown command '%s'; did you mean '%s'?\n", argv[1], near);
	else
		fprintf(stderr, "emu: unknown command '%s'; expected %s (emu --help)\n", argv[1],
			command_names(names, sizeof(names)));
	return 2;
}

/* Whether stdout is a pipe or socket whose reader has gone (POLLERR): by the time the
 * failed write is found, errno may say something else. */
static bool reader_gone(void)
{
	struct pollfd p = { .fd = 1, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/* What went to stdout reached it, or the command fails (`emu check x.ini >/dev/full`).  A
 * reader that stopped reading (`emu check x.ini | head -1`) is no error of emu's: as
 * coreutils do, emu says nothing and ends by SIGPIPE (which it ignores while it works,
 * safe_stdio), unless it failed anyway. */
static int stdout_written(int r)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return r;
	if (errno == EPIPE || reader_gone()) {
		if (r == 0) {
			sigset_t pipe;

			sigemptyset(&pipe);
			sigaddset(&pipe, SIGPIPE);
			signal(SIGPIPE, SIG_DFL);
			sigprocmask(SIG_UNBLOCK, &pipe, NULL);
			raise(SIGPIPE);
		}
		return r;
	}
	fprintf(stderr, "emu: stdout: %s\n", strerror(errno ? errno : EIO));
	return r ? r : 1;
}

int main(int argc, char **argv)
{
	int r;

	safe_stdio();
	single_threaded_blas(argv);
	errno = 0;
	r = dispatch(argc, argv);
	return stdout_written(r);
}
