/* emu/bench/bench.h — what the benchmarks share, and pieces of `emu bench net` written in
 * other files.
 *
 * CSV lines of every piece have the columns of bench_net's header:
 *   test,variant,bytes,value,unit,reference,reference_value,ratio
 * (ratio = value / reference_value, so >1 means faster for throughput and slower for
 * latency).  csv is owned by the caller; quick: a short run for tests and CI.
 */
#ifndef EMU_BENCH_H
#define EMU_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include "emu/shm/notify.h"

/* emu/bench/bench_common.c: the answer to an argument the benchmark NAME does not take:
 * its usage text on stdout and 0 for --help or -h, else what is wrong and the text on
 * stderr, and 2 (the exit code). */
int bench_usage(const char *name, const char *arg, const char *text);
/* notify_init, with the notify's notice (notify.h: say) printed when it happens, as
 * "emu: ..." on stderr; bench_notify_say is that printer (for bridge_start). */
void bench_notify_say(const char *line);
int bench_notify_init(struct notify *nt, enum notify_mode mode);
/* xchg_run, with what the exchange says of a failure (xchg.h: err) printed. */
struct xchg;
struct xchg_ops;
int bench_xchg_run(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
		   uint32_t flags, uint32_t *flags_out);
/* One CSV line with those columns (nothing if csv is NULL), and the qsort comparator of
 * int64_t timings. */
void bench_csv_line(FILE *csv, const char *test, const char *variant, size_t bytes,
		    double value, const char *unit, const char *ref, double ref_value);
int bench_cmp_i64(const void *a, const void *b);

/* emu/bench/bench_xchg.c: the exchange the benchmarks time (bench_hosts.c too): each of
 * n workers sends block j (blk floats) of its vector v to server j, which averages the
 * n blocks; the means come back into v.  The context of bench_mean_ops. */
struct bench_mean {
	float *v;
	int n;
	size_t blk;		/* floats per block */
};
struct xchg_ops;
extern const struct xchg_ops bench_mean_ops;
/* Worker id's context for n workers and `floats` floats (blocks of floats / n), its
 * vector filled with the same values on every run: 0, or -ENOMEM (free w->v after). */
int bench_mean_init(struct bench_mean *w, int n, size_t floats, int id);

/* emu/bench/bench_xchg.c: a 16-worker exchange.  Prints its table to stdout, appends its lines
 * to csv.  Returns 0 or -errno. */
int bench_xchg(FILE *csv, int quick);

/* emu/bench/bench_xchg_ideal.c: the memory work of an exchange of n workers' vectors of
 * `floats` floats with bench_mean_ops, without its protocol, by `procs` processes (one
 * per core): ns, the median of `iters` (at most 64), or 0 when it could not run. */
double bench_xchg_ideal(int n, size_t floats, int procs, int iters);

/* emu/bench/bench_hosts.c: under mpirun -n 2 (w: the MPI world), the exchange across two
 * ranks against the same exchange over shared memory, and MPI's ping-pong bandwidth;
 * rank 0 prints and writes csv.  Every rank calls it; 0 or -errno. */
struct world;
int bench_hosts(FILE *csv, struct world *w, int quick);

/* emu/bench/bench_limit.c: M/D/1/K's blocking probability at load rho, k = 1..64 (NAN
 * outside), and one measurement: the share of n Poisson-arriving single-unit messages
 * that a link with net.limit = limit tail-drops at load rho, and its sd (batch means).
 * 0 or -errno. */
double bench_md1k_blocking(double rho, int k);
int bench_limit_run(int limit, double rho, long n, uint64_t seed, double *loss, double *sd);

#endif
