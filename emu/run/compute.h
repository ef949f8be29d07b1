/* emu/run/compute.h — the modelled compute time of one training step of one worker: what
 * advances its virtual clock between exchanges.
 *
 * compute = flops: flops / device_flops + ops * op_overhead, ops being the kernels a GPU
 * launches for the step (nn_step_ops): a small model's step is bound by its launches,
 * not its FLOPs.  compute = measured: the measured time (launches included) times
 * compute_scale.  Either base time t then becomes the worker's own (its [worker] section):
 *
 *	t * slowdown * events + jitter * z,  never below 0,
 *
 * events being the product of the factors of the slowdown events ([event] kind =
 * slowdown) in effect for the worker's step: an event counted in steps or epochs is in
 * effect for the steps of its interval, one in virtual time when the worker's clock at
 * the start of the step's compute is in its interval.
 * z drawn from jitter_dist (uniform or one of iproute2's tables, net_dist_z in
 * emu/net/dist.h) by the counter-based RNG keyed by (run.seed, RNG_LINK_COMPUTE | worker,
 * step, RNG_STREAM_COMPUTE): the same for a (seed, worker, step) whatever the scheduling,
 * independent of every network draw.
 * Evaluation is not charged (it is the experimenter's, not the training's, time).
 */
#ifndef EMU_COMPUTE_H
#define EMU_COMPUTE_H

#include <stdint.h>
#include "emu/cfg/cfg.h"

/* compute = flops: the base time in ns of a step of `flops` FLOPs and `ops` ops. */
double compute_flops_ns(const struct cfg *c, double flops, int ops);

/* The product of the factors of the slowdown events in effect for worker id's step
 * `step` of a run of spe steps per epoch, its compute starting at virtual ns now; 1 when
 * none is. */
double compute_events_factor(const struct cfg *c, int64_t spe, int id, int64_t step,
			     int64_t now);

/* Worker id's time in ns for step `step` of base time base_ns: slowdown, the events'
 * factor (compute_events_factor) and jitter applied, clamped to [0, about 290 years]; 0
 * for a base that is not a number. */
int64_t compute_step_ns(const struct cfg *c, int id, int64_t step, double base_ns,
			double events);

#endif
