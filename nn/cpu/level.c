/* nn/cpu/level.c — which level of the fast CPU backend a process runs.
 *
 * The other files of nn/cpu/ are compiled once per level (the Makefile's CPU_LEVELS):
 * on x86-64 avx512 (x86-64-v4: AVX-512 F, BW, DQ, VL) and avx2 (x86-64-v3: AVX2, FMA),
 * everywhere generic (plain C).  Every level computes the same bits (nn/cpu/vec16.h), so
 * the choice is one of speed only: the fastest this CPU runs, read once from cpuid, or
 * the one the environment variable EMU_ISA names (to test a lower level on a machine
 * that has a higher one).  This file is compiled once; the registry's "cpu" is the table
 * below, whose level() returns the chosen level's table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/backend_impl.h"

#define LEVEL_TABLE(isa) extern const struct nn_ops nn_ops_cpu_##isa;
#if defined(__x86_64__)
#define CPU_LEVELS(X) X(avx512) X(avx2) X(generic)
#else
#define CPU_LEVELS(X) X(generic)
#endif
CPU_LEVELS(LEVEL_TABLE)

static int runs(const char *isa)
{
#if defined(__x86_64__)
	if (strcmp(isa, "avx512") == 0)
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
	if (strcmp(isa, "avx2") == 0)
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
	return strcmp(isa, "generic") == 0;
}

#define LEVEL_ENTRY(isa) &nn_ops_cpu_##isa,
static const struct nn_ops *const levels[] = { CPU_LEVELS(LEVEL_ENTRY) };
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* The level EMU_ISA names, or the fastest this CPU runs; NULL when EMU_ISA names one it
 * cannot run, err then says why */
static const struct nn_ops *cpu_pick(char *err, size_t errlen)
{
	const char *want = getenv("EMU_ISA"), *why = "no such level";
	char can[64] = "";

	for (size_t i = 0; i < NLEVELS; i++) {
		const char *isa = levels[i]->variant;

		if (!want || !*want ? runs(isa) : strcmp(want, isa) == 0) {
			if (runs(isa))
				return levels[i];
			why = "this CPU cannot run that level";
		}
		if (runs(isa))
			snprintf(can + strlen(can), sizeof(can) - strlen(can), " %s", isa);
	}
	snprintf(err, errlen, "EMU_ISA=%s: %s (this CPU runs:%s)", want ? want : "", why, can);
	return NULL;
}

const struct nn_ops nn_ops_cpu;

static const struct nn_ops *cpu_level(void)
{
	char err[160] = "";
	const struct nn_ops *ops = cpu_pick(err, sizeof(err));

	return ops ? ops : &nn_ops_cpu;	/* whose init says why */
}

/* This table is opened or asked only when EMU_ISA names a level this CPU cannot run */
static int cpu_level_refused(struct nn_backend *be)
{
	char err[160] = "";

	cpu_pick(err, sizeof(err));
	return nn_backend_fail(be, -EINVAL, "cpu: %s", err);
}

/* Asked before any worker starts (nn_backend_devices): the run stops there and says why */
static int cpu_level_devices(int procs, char *err, size_t errlen)
{
	cpu_pick(err, errlen);
	return -EINVAL;
}

const struct nn_ops nn_ops_cpu = {
	.name = "cpu",
	.host = true,
	.init = cpu_level_refused,
	.sync = nn_host_sync,
	.shutdown = nn_host_shutdown,
	.devices = cpu_level_devices,
	.level = cpu_level,
};
