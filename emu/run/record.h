/* emu/run/record.h — what workers tell the supervisor (through their log rings), and the
 * supervisor turns into train.csv, eval.csv and net.csv.  Plain structs: both ends are
 * the same binary. */
#ifndef EMU_RECORD_H
#define EMU_RECORD_H

#include <stdint.h>

enum rec_type { REC_TRAIN = 1, REC_EVAL, REC_LINK };

struct rec_train {		/* one per worker per logged step */
	int32_t type;
	int32_t worker;
	int64_t step;		/* steps done */
	int64_t steps_total;
	double epoch;		/* fractional */
	double loss;		/* mean batch loss since the last logged step */
	double lr;
	double vclock_s;	/* the worker's virtual clock */
	double consensus;	/* |x_i - mean x|^2 */
	uint64_t bytes_sent;	/* cumulative */
	uint64_t units_dropped;	/* cumulative, units this worker sent that were lost */
};

struct rec_eval {		/* one per worker per evaluation: its share of the test set */
	int32_t type;
	int32_t worker;
	int64_t step;
	double epoch;
	double vclock_s;
	uint64_t bytes_sent;	/* cumulative, as in rec_train */
	double loss_sum;
	int64_t correct;
	int64_t count;
};

struct rec_link {		/* per directed link, from its sender, at each evaluation */
	int32_t type;
	int32_t src, dst;
	uint64_t messages, units, units_dropped, retransmits, bytes;
	double delay_sum_ns;
};

#endif
