/* emu/bench/bench_jointspar.h — JointSpar's backward time against its layer budget s. */
#ifndef EMU_BENCH_JOINTSPAR_H
#define EMU_BENCH_JOINTSPAR_H

#include <stdio.h>

/* LeNet, batch 32, Fashion-MNIST-shaped random input, CPU backend.  For budgets s from
 * 0.5 to L: backward with the layers JointSpar samples (uniform p = s/L), timed against a
 * full backward measured in the same loop (the peer).  Writes a CSV header and one line
 * per budget to csv: model,layers,budget,sampled_mean,backward_ms,full_ms,time_ratio,
 * flops_ratio.  Returns 0 or -errno. */
int bench_jointspar(FILE *csv);

#endif
