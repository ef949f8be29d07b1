/* tests/fuzz/fuzz_sweep.c — libFuzzer target: emu sweep's command line and grid
 * (emu/study/sweep_grid.c, sweep_parse).
 *
 * Input: emu sweep's arguments, one a line (argv[2], ...); a line "@" is replaced by the
 * path of a small INI file.  Accepted, the grid must be consistent: 1 to SWEEP_MAX_AXES
 * axes of two or more values each, nruns their product (at most SWEEP_MAX_RUNS), nconfigs
 * that over the axes other than run.seed; each run's value index within its axis, its
 * configuration and seed giving the run back, its folder name unique among the runs
 * (checked on the first 256), its arguments nplain + naxes + 2, NULL-terminated.
 * Refused, the message must say why.  Seeds: scripts/fuzz writes a
 * few command lines; tests/fuzz/regress/sweep_*.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu/study/sweep.h"

#define MAX_ARGS 64
#define CHECK_RUNS 256

static char ini[64];

static void make_ini(void)
{
	static const char text[] = "[run]\nname = fz\nworkers = 4\n[net]\nlatency = 1ms\n";
	int fd = memfd_create("fuzz_sweep.ini", 0);

	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)sizeof(text) - 1)
		abort();
	snprintf(ini, sizeof(ini), "/proc/self/fd/%d", fd);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_grid(const struct sweep *s, size_t store_len)
{
	long runs = 1, configs = 1;
	int nseeds = sweep_nseeds(s);
	char *names[CHECK_RUNS], *args[MAX_ARGS + SWEEP_MAX_AXES + 3];
	char *store = malloc(store_len);	/* room for every argument and folder */
	long n = s->nruns < CHECK_RUNS ? s->nruns : CHECK_RUNS;

	if (s->naxes < 1 || s->naxes > SWEEP_MAX_AXES || !s->file)
		abort();
	for (int a = 0; a < s->naxes; a++) {
		if (s->axis[a].nvals < 2)
			abort();
		runs *= s->axis[a].nvals;
		if (a != s->seed_axis)
			configs *= s->axis[a].nvals;
	}
	if (runs != s->nruns || configs != s->nconfigs || runs > SWEEP_MAX_RUNS ||
	    configs * nseeds != runs)
		abort();
	for (long r = 0; r < n; r++) {
		long k = sweep_config_of(s, r);
		int j = s->seed_axis >= 0 ? sweep_value(s, r, s->seed_axis) : 0;
		char name[CFG_STR];

		for (int a = 0; a < s->naxes; a++)
			if (sweep_value(s, r, a) < 0 || sweep_value(s, r, a) >= s->axis[a].nvals)
				abort();
		if (k < 0 || k >= s->nconfigs || sweep_run_of(s, k, j) != r)
			abort();
		if (sweep_run_name(s, r, name, sizeof(name)))
			abort();	/* sweep_parse said every folder fits */
		names[r] = strdup(name);
		int na = sweep_run_args(s, r, args, store, store_len);

		if (na != s->nplain + s->naxes + 2 || args[na])
			abort();
	}
	qsort(names, (size_t)n, sizeof(names[0]), cmp);
	for (long r = 1; r < n; r++)
		if (!strcmp(names[r - 1], names[r])) {
			fprintf(stderr, "two runs in one folder: %s\n", names[r]);
			abort();
		}
	for (long r = 0; r < n; r++)
		free(names[r]);
	free(store);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *argv[MAX_ARGS + 3], err[4096] = "";
	int argc = 2;
	struct sweep s;

	if (!ini[0])
		make_ini();
	memcpy(text, data, size);
	text[size] = 0;
	if (memchr(text, 0, size)) {	/* an argument is a C string */
		free(text);
		return 0;
	}
	argv[0] = "emu";
	argv[1] = "sweep";
	for (char *p = text; *p && argc < MAX_ARGS + 2; ) {
		char *nl = strchrnul(p, '\n'), *next = *nl ? nl + 1 : nl;

		*nl = 0;
		argv[argc++] = strcmp(p, "@") ? p : ini;
		p = next;
	}
	argv[argc] = NULL;
	int rc = sweep_parse(&s, argc, argv, err, sizeof(err));

	if (rc == 0)
		check_grid(&s, 2 * size + 8 * CFG_STR);
	else if (rc != 2 || !err[0] || !memchr(err, 0, sizeof(err)))
		abort();	/* refused without saying why (-ENOMEM aside: none here) */
	sweep_free(&s);
	free(text);
	return 0;
}
