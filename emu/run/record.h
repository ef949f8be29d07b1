/* emu/run/record.h — what workers tell the supervisor (through their log rings), and the
 * supervisor turns into train.csv, workers.csv, eval.csv and net.csv.  Plain structs: both
 * ends are the same binary.  A worker sends, per evaluation, its REC_LINK and REC_LINK_IN
 * records, then its REC_EVAL: the supervisor writes the evaluation's block of net.csv when
 * the REC_EVAL of every worker is in, from the link records of that step. */
#ifndef EMU_RECORD_H
#define EMU_RECORD_H

#include <stdint.h>
#include "emu/net/xchg.h"

enum rec_type { REC_TRAIN = 1, REC_EVAL, REC_LINK, REC_LINK_IN, REC_CKPT, REC_DOWN, REC_PORT };

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
	uint64_t bytes_sent;	/* cumulative, put on the wire (resends, lost units) */
	uint64_t units_dropped;	/* cumulative, units this worker sent that were lost */
	uint64_t bytes_delivered;	/* cumulative, reached this worker in time */
	uint64_t units_late;	/* cumulative, reached this worker after its deadline */
	double compute_s;	/* modelled compute time of the steps since the last record */
	int32_t after_ckpt;	/* logged after the checkpoint of its step (a stop's or the
				 * end's own row): written after that checkpoint's manifest */
	int32_t pad;
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
	uint64_t bytes_delivered;	/* cumulative, as in rec_train */
	int32_t after_ckpt;	/* as in rec_train */
	int32_t pad;
};

/* Per directed link src -> dst at each evaluation, twice: REC_LINK from src with what it
 * put on the wire, REC_LINK_IN from dst with what reached it (the other side's fields
 * zero; struct xchg_link_stats says which are whose).  The supervisor joins the two
 * into one row of net.csv. */
struct rec_link {
	int32_t type;
	int32_t src, dst;
	int64_t step;		/* of the evaluation */
	/* sender */
	uint64_t messages, units, units_dropped, retransmits;
	uint64_t units_duplicated, units_corrupted, units_overflow;
	uint64_t bytes_sent;
	uint64_t units_marked;
	double delay_sum_ns;
	/* receiver */
	uint64_t units_late, bytes_delivered;
};

/* A worker wrote its part of the checkpoint after `step` steps (emu/run/ckpt.h), after
 * every other record of the steps up to it: when the supervisor has this record from
 * every worker, its logs hold exactly the rows of those steps, and it writes the
 * manifest. */
struct rec_ckpt {
	int32_t type;
	int32_t worker;
	int64_t step;
	uint64_t size;		/* of the file */
	uint32_t crc, pad;	/* of its payload */
};

/* A worker's process ends as a crash event planned (emu/run/crash.h), before running
 * `step`: its cumulative counters, which the totals of train.csv and eval.csv keep while
 * it is down (it sends and receives nothing then).  Sent after its link records of the
 * moment, which net.csv keeps likewise. */
struct rec_down {
	int32_t type;
	int32_t worker;
	int64_t step;
	uint64_t bytes_sent, units_dropped, bytes_delivered, units_late;
};

/* The records of link src -> dst at step: its sender's side (REC_LINK, from the sender's
 * counters) and its receiver's (REC_LINK_IN, from the receiver's). */
static inline struct rec_link rec_link_out(int src, int dst, int64_t step,
					   const struct xchg_link_stats *st)
{
	return (struct rec_link){
		.type = REC_LINK, .src = src, .dst = dst, .step = step,
		.messages = st->messages, .units = st->units, .units_dropped = st->units_dropped,
		.retransmits = st->retransmits, .units_duplicated = st->units_duplicated,
		.units_corrupted = st->units_corrupted, .units_overflow = st->units_overflow,
		.bytes_sent = st->bytes, .delay_sum_ns = st->delay_sum_ns,
		.units_marked = st->units_marked,
	};
}

static inline struct rec_link rec_link_in(int src, int dst, int64_t step,
					  const struct xchg_link_stats *st)
{
	return (struct rec_link){
		.type = REC_LINK_IN, .src = src, .dst = dst, .step = step,
		.units_late = st->units_late, .bytes_delivered = st->bytes_delivered,
	};
}

/* A switch port ([topology] shape = switch or hosts) at each evaluation, from the worker
 * that logs it (xchg_port_stats): its counters since the start, k-th of that worker's
 * (at most REC_PORTS).  Sent with its link records; ports.csv keeps it likewise. */
#define REC_PORTS 5
struct rec_port {
	int32_t type;
	int32_t worker;
	int64_t step;
	int32_t k, pad;
	char name[24];
	struct port_stats st;
};

/* Worker w goes down before step, its exchange's totals as x has them. */
static inline struct rec_down rec_down_of(int w, int64_t step, const struct xchg *x)
{
	return (struct rec_down){
		.type = REC_DOWN, .worker = w, .step = step, .bytes_sent = x->bytes_sent,
		.units_dropped = x->units_dropped, .bytes_delivered = x->bytes_delivered,
		.units_late = x->units_late,
	};
}

#endif
