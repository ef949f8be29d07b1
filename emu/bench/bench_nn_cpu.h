/* emu/bench/bench_nn_cpu.h — what `emu bench nn` measures on the CPU beside the models,
 * at the level the CPU backend runs (nn/cpu/level.c: the fastest the CPU has, or EMU_ISA):
 * the core's FMA peak with a loop of that level's vectors, OpenBLAS sgemm, and the
 * PyTorch peer held to the same instruction set, so that a level forced lower is compared
 * with PyTorch at that level and not with PyTorch's AVX-512 kernels. */
#ifndef EMU_BENCH_NN_CPU_H
#define EMU_BENCH_NN_CPU_H

#include <stddef.h>

/* Seconds of CLOCK_MONOTONIC; the median of v[0..n) (sorts v) */
double bench_nn_now(void);
double bench_nn_median(double *v, int n);

/* The level one run is measured at.  Every string is static. */
struct bench_nn_level {
	const char *emu;	/* the level emu ran: the CPU table's variant ("avx512",
				 * "avx2", "generic"), else the backend's name ("ref") */
	const char *peak;	/* the FMA loop timed for the peak: "avx512", "avx2", or
				 * NULL where this CPU or build has none (peak n/a) */
	const char *torch;	/* what PyTorch's CPU dispatch is limited to: "avx2", or
				 * "default" (its own choice) */
	const char *torch_env;	/* the peer's environment for that, as shell words with a
				 * trailing blank ("" for default) */
};

/* The level of a CPU backend whose op table has the given variant and name.  avx512:
 * the AVX-512 loop, PyTorch at its default.  Every other level (avx2; generic and the
 * reference, plain C built for the harness's x86-64-v3): the AVX2+FMA loop and PyTorch
 * limited to AVX2 (ATen, oneDNN, OpenBLAS).  A loop this CPU cannot run is not chosen;
 * off x86-64 there is none and PyTorch keeps its default. */
void bench_nn_level_of(struct bench_nn_level *l, const char *variant, const char *name);

/* The single-precision FMA peak in GFLOP/s of the loop l->peak names, the median of
 * reps (at most 64) runs of ~10 ms; 0 when l->peak is NULL. */
double bench_nn_fma_peak(const struct bench_nn_level *l, int reps);

/* Single-thread OpenBLAS sgemm GFLOP/s of n x n x n, the median of reps (at most 64);
 * 0 without memory. */
double bench_nn_sgemm_gflops(int n, int reps);

/* What PyTorch runs under l->torch_env, asked of /usr/bin/python3 itself: its ATen
 * dispatch level, oneDNN's ISA and OpenBLAS's kernels, e.g. "ATen AVX2, oneDNN Intel
 * AVX2, OpenBLAS Haswell", into out.  Returns 0, or -EIO when the probe failed (out then
 * says so). */
int bench_nn_torch_probe(const struct bench_nn_level *l, char *out, size_t len);

#endif
