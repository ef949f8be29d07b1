/* emu/cfg/cfg_keys.h — every configuration key, in one X-macro table.
 *
 * The table generates the defaults (cfg_defaults), the parser (cfg_load), the printer
 * (cfg_print, `emu check`) and the reference (`emu help keys`, docs/configuration.md).
 * A key's name is its struct cfg field name; [net] keys are fields of struct net_cfg and are also
 * the keys of every [link A-B] section; [worker A-B] keys are fields of struct
 * cfg_worker_model (named in cfg_keys.c where the names differ).
 *
 * X(section, field, TYPE, extra, default, lo, hi, flags, help)
 *   TYPE     INT int, I64 int64_t, U64 uint64_t, DOUBLE, PROB (0.05 or 5%), DURATION
 *            (int64 ns), RATE (double bit/s), SIZE (int64 bytes), FLOPS (double),
 *            STR (char[]; lo/hi bound its length), CHOICE (char[], one of extra),
 *            ENUM (an enum; extra names its values in enum order), LIST (double[];
 *            extra is the int field that counts them)
 *   default  as written in an INI file; NULL = derived from other keys (see help)
 *   lo, hi   inclusive range in base units (ns, bytes, bit/s); flags may exclude ends
 *   help     one sentence; printed by `emu help keys` and as comments by `emu check`
 */
#ifndef EMU_CFG_KEYS_H
#define EMU_CFG_KEYS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/cfg/cfg.h"

#define CFG_GT_LO 1u		/* value must be > lo */
#define CFG_LT_HI 2u		/* value must be < hi */
#define CFG_POW2 4u		/* a power of two */
#define CFG_ASCENDING 8u	/* list: strictly increasing */
#define CFG_OR_ZERO 16u		/* 0 is allowed too (it means auto) */

/* Longest string value: a printed "key = value" line must stay below inih's line limit. */
#define CFG_STR_MAX 160

#define CFG_NET_KEYS(X) \
	X(net, loss, ENUM, cfg_loss_names, "none", 0, 0, 0, \
	  "loss model: none, bernoulli (loss_p), gilbert (netem 'loss gemodel p r 1-h 1-k'), " \
	  "state (netem 'loss state p13 p31 p32 p23 p14')") \
	X(net, loss_p, PROB, 0, "0", 0, 1, 0, \
	  "bernoulli: drop probability of a unit; gilbert: p, good->bad transition probability") \
	X(net, ge_r, PROB, 0, NULL, 0, 1, 0, \
	  "gilbert: r, bad->good transition probability; netem default 1 - loss_p (older " \
	  "iproute2 used 1)") \
	X(net, ge_1h, PROB, 0, "1", 0, 1, 0, \
	  "gilbert: 1-h, loss probability in the bad state; netem default 1") \
	X(net, ge_1k, PROB, 0, "0", 0, 1, 0, \
	  "gilbert: 1-k, loss probability in the good state; netem default 0") \
	X(net, p13, PROB, 0, "0", 0, 1, 0, \
	  "state: p13, good (1) -> burst loss (3); netem requires it, emu defaults to 0") \
	X(net, p31, PROB, 0, NULL, 0, 1, 0, \
	  "state: p31, burst loss (3) -> good (1); netem default 1 - p13") \
	X(net, p32, PROB, 0, "0", 0, 1, 0, \
	  "state: p32, burst loss (3) -> burst good (2); netem default 0") \
	X(net, p23, PROB, 0, "1", 0, 1, 0, \
	  "state: p23, burst good (2) -> burst loss (3); netem default 1") \
	X(net, p14, PROB, 0, "0", 0, 1, 0, \
	  "state: p14, good (1) -> isolated loss (4); netem default 0") \
	X(net, unit, ENUM, cfg_unit_names, "message", 0, 0, 0, \
	  "what is lost: a whole message, or packets of mtu bytes (messages arrive with holes)") \
	X(net, mtu, SIZE, 0, "1500B", 64, 16777216, 0, "bytes per packet when unit = packet") \
	X(net, latency, DURATION, 0, "0s", 0, 60e9, 0, "one-way delay of every unit (netem delay)") \
	X(net, jitter, DURATION, 0, "0s", 0, 60e9, 0, \
	  "random delay variation, drawn from distribution (netem jitter)") \
	X(net, distribution, ENUM, cfg_dist_names, "uniform", 0, 0, 0, \
	  "jitter distribution: uniform (netem's default, no table), normal, pareto, " \
	  "paretonormal, experimental (iproute2's tables, read from tc's directory as tc " \
	  "does), table (the file distribution_table names); a table needs latency and " \
	  "jitter, as tc does") \
	X(net, distribution_table, STR, 0, "\"\"", 0, CFG_STR_MAX, 0, \
	  "distribution = table: a file in iproute2's .dist format (integers, 8192 = one " \
	  "sigma; '#' comment lines)") \
	X(net, delay_correlation, PROB, 0, "0", 0, 1, 0, \
	  "correlation of successive jitter draws, netem's (tc delay TIME JITTER CORR)") \
	X(net, loss_correlation, PROB, 0, "0", 0, 1, 0, \
	  "bernoulli: correlation of successive loss draws, netem's (tc loss random P CORR)") \
	X(net, duplicate, PROB, 0, "0", 0, 1, 0, \
	  "probability that a unit is sent twice (netem duplicate)") \
	X(net, duplicate_correlation, PROB, 0, "0", 0, 1, 0, \
	  "correlation of successive duplicate draws, netem's") \
	X(net, reorder, PROB, 0, "0", 0, 1, 0, \
	  "probability that a unit is sent at once, skipping latency and jitter (netem " \
	  "reorder); needs a latency, as tc does") \
	X(net, reorder_correlation, PROB, 0, "0", 0, 1, 0, \
	  "correlation of successive reorder draws, netem's") \
	X(net, reorder_gap, I64, 0, "0", 0, 4294967295.0, 0, \
	  "reorder: only every gap-th unit is a candidate (netem gap); 0 with reorder > 0 " \
	  "means 1, as in tc") \
	X(net, corrupt, PROB, 0, "0", 0, 1, 0, \
	  "probability that a unit arrives with one bit flipped (netem corrupt)") \
	X(net, corrupt_correlation, PROB, 0, "0", 0, 1, 0, \
	  "correlation of successive corrupt draws, netem's") \
	X(net, corrupt_detect, ENUM, cfg_corrupt_detect_names, "none", 0, 0, 0, \
	  "none: a corrupted unit is delivered as it is (no end-to-end checksum); checksum: " \
	  "it counts as lost") \
	X(net, ecn, ENUM, cfg_bool_names, "false", 0, 0, 0, \
	  "a unit the loss model would drop is delivered with an ECN mark instead (netem " \
	  "ecn; every emu transport is ECN-capable); needs a loss model, as tc does") \
	X(net, bandwidth, RATE, 0, "0bit", 1000, 1e15, CFG_OR_ZERO, \
	  "serialisation rate with a per-sender queue, like netem rate; 0bit = unlimited " \
	  "(below 1Kbit the virtual clock would overflow)") \
	X(net, trace, STR, 0, "\"\"", 0, CFG_STR_MAX, 0, \
	  "a delivery trace in Mahimahi's format (one line per 1500-byte opportunity, in ms; " \
	  "it repeats) that the sender's queue follows instead of bandwidth") \
	X(net, series, STR, 0, "\"\"", 0, CFG_STR_MAX, 0, \
	  "a CSV file time_s,loss_p,latency_s: from each row's time on, Bernoulli loss_p " \
	  "and latency take its values") \
	X(net, limit, I64, 0, "0", 0, 16777216, 0, \
	  "units the sender's rate queue holds (their time to send ahead); a unit that finds " \
	  "it full is dropped " \
	  "(tail drop); 0 = no limit (netem's default is 1000)") \
	X(net, slot_min, DURATION, 0, "0s", 0, 60e9, 0, \
	  "netem slot MIN: units leave the link only when a slot opens; the next opens a " \
	  "delay uniform in [slot_min, slot_max] after the last was spent, or after a unit " \
	  "found it opened before its time to send; 0s with slot_max 0s = no slots") \
	X(net, slot_max, DURATION, 0, NULL, 0, 60e9, 0, \
	  "netem slot MIN MAX: the longest delay to the next slot; default slot_min, as in " \
	  "tc; not below slot_min") \
	X(net, slot_packets, INT, 0, "0", 0, 2147483647, 0, \
	  "units a slot lets through before the next is drawn (netem slot ... packets N); 0 = " \
	  "no limit") \
	X(net, slot_bytes, SIZE, 0, "0B", 0, 2147483647, 0, \
	  "bytes a slot lets through (netem slot ... bytes B): the unit that spends the last " \
	  "of them still goes, then the next slot is drawn; 0B = no limit") \
	X(net, slot_distribution, ENUM, cfg_compute_dist_names, "uniform", 0, 0, 0, \
	  "delay to the next slot: uniform in [slot_min, slot_max] (netem slot MIN MAX), or " \
	  "slot_delay and slot_jitter drawn from normal, pareto, paretonormal or experimental " \
	  "(netem slot distribution NAME DELAY JITTER: iproute2's tables, as distribution; " \
	  "not table)") \
	X(net, slot_delay, DURATION, 0, "0s", 0, 60e9, 0, \
	  "slot_distribution other than uniform: the mean delay to the next slot") \
	X(net, slot_jitter, DURATION, 0, "0s", 0, 2147483647, 0, \
	  "slot_distribution other than uniform: the spread of the delay to the next slot " \
	  "(one sigma of the table); tc requires it > 0, the kernel caps it at 2^31 - 1 ns") \
	X(net, transport, ENUM, cfg_transport_names, "unreliable", 0, 0, 0, \
	  "unreliable: lost units are gone; reliable: lost units are resent after rto; tcp: " \
	  "a window that reacts to congestion, resends on duplicate ACKs and timeouts " \
	  "(needs a topology.shape: switch or hosts)") \
	X(net, timeout, DURATION, 0, "10ms", 1, 60e9, 0, \
	  "unreliable: how long a receiver waits before it gives up on a unit; no shorter " \
	  "than the earliest a unit can arrive (latency less what jitter can take off)") \
	X(net, rto, DURATION, 0, "1ms", 1, 60e9, 0, \
	  "reliable: first retransmission timeout, doubling up to rto_max; Linux's minimum " \
	  "is 200ms, emu models a datacenter") \
	X(net, rto_max, DURATION, 0, "100ms", 1, 60e9, 0, "reliable: cap of the doubling rto") \
	X(net, max_retries, INT, 0, "15", 0, 255, 0, \
	  "reliable: retransmissions of a unit before it is given up and counted lost, as " \
	  "TCP gives up after tcp_retries2 (15); tcp: timeouts in a row") \
	X(net, cc, ENUM, cfg_cc_names, "newreno", 0, 0, 0, \
	  "tcp: congestion control: newreno (AIMD, fast retransmit and recovery), dctcp (also " \
	  "cuts its window by the share of ECN-marked ACKs: set topology.ecn_threshold)") \
	X(net, rto_min, DURATION, 0, "1ms", 1, 60e9, 0, \
	  "tcp: floor of the timeout estimated from RTT samples; Linux's 200ms reproduces " \
	  "TCP incast collapse") \
	X(net, init_cwnd, INT, 0, "10", 1, 1000000, 0, "tcp: initial window, units")

#define CFG_OTHER_KEYS(X) \
	X(run, name, STR, 0, "run", 1, CFG_STR_MAX, 0, "name of the run; output goes to runs/NAME") \
	X(run, workers, INT, 0, "16", 1, CFG_MAX_WORKERS, 0, "emulated GPUs, one process each") \
	X(run, seed, U64, 0, "1", 0, 0, 0, "seed of every random decision (same seed, same numbers)") \
	X(run, output, STR, 0, "\"\"", 0, CFG_STR_MAX, 0, "run directory; empty = runs/NAME") \
	X(run, device, CHOICE, cfg_device_names, "cpu", 0, 0, 0, \
	  "where workers compute: cpu (emu's kernels, the same bits on every x86-64 CPU with " \
	  "AVX2), ref (plain loops, the test oracle: slow), " \
	  "cuda (worker i on GPU i mod GPUs), auto = cuda when a usable GPU is present, else cpu") \
	X(run, notify, ENUM, cfg_notify_names, "auto", 0, 0, 0, \
	  "how idle receivers sleep; auto = io_uring futex ops, else futex syscalls") \
	X(run, ring_size, SIZE, 0, "0B", 4096, 268435456, CFG_POW2 | CFG_OR_ZERO, \
	  "bytes per directed ring, a power of two; 0B = auto: room for two of the largest " \
	  "messages the run can send (a sender then never waits for space), at least 256B") \
	X(run, overwrite, ENUM, cfg_bool_names, "false", 0, 0, 0, \
	  "true: replace an earlier run's logs in the run folder; false: refuse to") \
	X(run, stall_timeout, DURATION, 0, "60s", 0, 86400e9, 0, \
	  "end the run when no worker makes progress for this long; 0s = never") \
	X(run, stop_grace, DURATION, 0, "10s", 0, 86400e9, 0, \
	  "after a stop signal, kill workers that have not stopped within this; 0s = wait") \
	X(run, label, STR, 0, "\"\"", 0, CFG_STR_MAX, 0, \
	  "the run's name in figures' legends (plots/*.gp read it from config.ini); empty = " \
	  "run.name; {section.key} is replaced by the run's value of that key, as emu check " \
	  "writes it (in a sweep, each run's own: {train.algorithm} p={net.loss_p}), and {{ " \
	  "and }} write a brace") \
	X(run, worker_log, ENUM, cfg_bool_names, "false", 0, 0, 0, \
	  "true: also write workers.csv, a row per worker per logged step (its clock, loss, " \
	  "compute time, bytes and drops: stragglers and faults)") \
	X(run, progress_every, DURATION, 0, "10s", 0, 86400e9, 0, \
	  "when stderr is not a terminal, a progress line every this much wall time; 0s = " \
	  "only at evaluations") \
	X(run, checkpoint_every, I64, 0, "0", 0, 1e12, 0, \
	  "a checkpoint every this many steps into RUN/ckpt (emu resume continues from the " \
	  "latest), and one when a stop signal ends the run; 0 = never") \
	X(run, checkpoint_wall, DURATION, 0, "0s", 0, 86400e9 * 365, 0, \
	  "a checkpoint whenever this much wall time passed since the last one (at the step " \
	  "the workers agree on), and one at a stop signal; 0s = never") \
	X(train, algorithm, ENUM, cfg_algo_names, "rps", 0, 0, 0, "distributed training algorithm") \
	X(train, plugin, STR, 0, "\"\"", 0, CFG_STR_MAX, 0, \
	  "algorithm = plugin: the shared object that holds the algorithm (its keys: [plugin])") \
	X(train, model, CHOICE, cfg_model_names, "lenet", 0, 0, 0, \
	  "model every worker trains; custom: the layers of [model] (docs/models.md)") \
	X(train, epochs, INT, 0, "5", 1, 1000000, 0, "passes over the training set") \
	X(train, max_steps, I64, 0, "0", 0, 1e12, 0, "stop after this many steps; 0 = epochs decide") \
	X(train, min_steps, I64, 0, "0", 0, 1e12, 0, \
	  "the run lasts at least this many steps (the longer of it and epochs; max_steps still " \
	  "stops it): with many workers an epoch has few steps") \
	X(train, batch, INT, 0, "32", 1, 65536, 0, "samples per step per worker") \
	X(train, lr, DOUBLE, 0, "0.01", 0, 1000, CFG_GT_LO, "base learning rate of one worker") \
	X(train, lr_scaling, ENUM, cfg_lr_scaling_names, "linear", 0, 0, 0, \
	  "linear: lr times workers (Goyal et al.); sqrt: lr times the square root of " \
	  "workers; none: lr as given") \
	X(train, lr_max, DOUBLE, 0, "0", 0, 1000, 0, \
	  "cap of the scaled rate (the warm-up ends at it); 0 = no cap") \
	X(train, warmup_epochs, DOUBLE, 0, "0", 0, 1e6, 0, "epochs of linear warm-up from lr (one worker's rate) to the scaled rate") \
	X(train, warmup_steps, INT, 0, "0", 0, 1000000000, 0, \
	  "the warm-up lasts at least this many steps (the longer of it and warmup_epochs): " \
	  "with many workers an epoch has few steps") \
	X(train, lr_schedule, ENUM, cfg_lr_schedule_names, "step", 0, 0, 0, \
	  "after the warm-up, as PyTorch's schedulers stepped once a step: step (decay_epochs), " \
	  "cosine (to lr_end), linear (to lr_end), poly (lr_power), onecycle (OneCycleLR's " \
	  "defaults, no warm-up of its own)") \
	X(train, lr_end, DOUBLE, 0, "0", 0, 1000, 0, "cosine, linear: the rate at the last step") \
	X(train, lr_power, DOUBLE, 0, "1", 0, 100, CFG_GT_LO, "poly: the power of (1 - t)") \
	X(train, decay_epochs, LIST, ndecay, "", 0, 1e6, CFG_ASCENDING, \
	  "epochs at which lr is multiplied by decay_factor, comma separated, increasing") \
	X(train, decay_factor, DOUBLE, 0, "0.1", 0, 1, CFG_GT_LO, "lr factor at each decay epoch") \
	X(train, optimizer, ENUM, cfg_optimizer_names, "sgd", 0, 0, 0, \
	  "sgd (momentum, nesterov), adam or adamw, each as torch.optim's, lamb (You et al. " \
	  "2020: adam's step scaled layer by layer by |w| / |step|) or lars (You et al. 2017: " \
	  "sgd's with each layer's gradient scaled by lars_trust |w| / (|g| + wd |w|)); all " \
	  "but signum and jointspar take them") \
	X(train, adam_beta1, DOUBLE, 0, "0.9", 0, 1, CFG_LT_HI, "adam, adamw, lamb: beta1") \
	X(train, adam_beta2, DOUBLE, 0, "0.999", 0, 1, CFG_LT_HI, "adam, adamw, lamb: beta2") \
	X(train, adam_eps, DOUBLE, 0, "1e-8", 0, 1, CFG_GT_LO, "adam, adamw, lamb: eps") \
	X(train, lars_trust, DOUBLE, 0, "0.001", 0, 1, CFG_GT_LO, "lars: the trust coefficient") \
	X(train, lars_eps, DOUBLE, 0, "1e-8", 0, 1, CFG_GT_LO, "lars: the ratio's denominator guard") \
	X(train, momentum, DOUBLE, 0, "0", 0, 1, CFG_LT_HI, "heavy-ball momentum") \
	X(train, nesterov, ENUM, cfg_bool_names, "false", 0, 0, 0, \
	  "Nesterov's momentum, as PyTorch's SGD nesterov=True: the step is g + momentum v") \
	X(train, weight_decay, DOUBLE, 0, "0", 0, 1, 0, "L2 penalty") \
	X(train, log_every, INT, 0, "10", 1, 1000000000, 0, "steps between train.csv lines") \
	X(train, eval_every, INT, 0, "0", 0, 1000000000, 0, \
	  "steps between evaluations; 0 = once per epoch") \
	X(train, eval_at_start, ENUM, cfg_bool_names, "false", 0, 0, 0, \
	  "true: evaluate the initial model too, before the first step (eval.csv's row of " \
	  "step 0; not on resume)") \
	X(train, compute, ENUM, cfg_compute_names, "flops", 0, 0, 0, \
	  "virtual compute time: flops / device_flops, or measured CPU time * compute_scale") \
	X(train, device_flops, FLOPS, 0, "10T", 0, 1e18, CFG_GT_LO, \
	  "FLOP/s of the modelled device (compute = flops)") \
	X(train, compute_scale, DOUBLE, 0, "1", 0, 1e6, CFG_GT_LO, \
	  "factor on measured time (compute = measured)") \
	X(train, op_overhead, DURATION, 0, "5us", 0, 1e9, 0, \
	  "modelled time per op (kernel launch) of a step's forward/backward graph, added to " \
	  "the FLOP time when compute = flops") \
	X(data, dataset, ENUM, cfg_dataset_names, "fashion-mnist", 0, 0, 0, "training data") \
	X(data, dir, STR, 0, "/usr/share/datasets/fashion-mnist", 0, CFG_STR_MAX, 0, \
	  "directory of the dataset files") \
	X(data, shard, ENUM, cfg_shard_names, "iid", 0, 0, 0, \
	  "how samples are split among workers: iid, by label, or dirichlet(alpha) label mix") \
	X(data, alpha, DOUBLE, 0, "0.5", 0, 1e6, CFG_GT_LO, \
	  "dirichlet concentration; small = skewed shards") \
	X(data, train_limit, I64, 0, "0", 0, INT_MAX, 0, "use only this many training samples; 0 = all") \
	X(data, test_limit, I64, 0, "0", 0, INT_MAX, 0, "use only this many test samples; 0 = all") \
	X(data, synthetic_size, I64, 0, "4096", 1, 1e9, 0, \
	  "samples in a synthetic training set (gaussian, linreg)") \
	X(data, dim, INT, 0, "32", 1, 65536, 0, "features of a synthetic sample (gaussian, linreg)") \
	X(data, classes, INT, 0, "10", 2, 1000, 0, "classes of the gaussian set") \
	X(data, noise, DOUBLE, 0, "0.1", 0, 1000, 0, "std of the target noise of the linreg set") \
	X(data, seq_len, INT, 0, "64", 1, 4096, 0, "tokens per text sample (dataset = text)") \
	X(rps, block_map, ENUM, cfg_block_map_names, "fixed", 0, 0, 0, \
	  "fixed: worker j serves block j; random: a new assignment every step") \
	X(allreduce, on_miss, ENUM, cfg_on_miss_names, "own", 0, 0, 0, \
	  "a block whose result was lost: keep own gradient, or use zero") \
	X(signum, beta, DOUBLE, 0, "0.9", 0, 1, CFG_LT_HI, "momentum of the worker") \
	X(signum, weight_decay, DOUBLE, 0, "0", 0, 1, 0, "decoupled weight decay") \
	X(signum, adversaries, INT, 0, "0", 0, CFG_MAX_WORKERS - 1, 0, \
	  "workers that send wrong signs; fewer than workers") \
	X(signum, adversary, ENUM, cfg_adversary_names, "invert", 0, 0, 0, \
	  "what adversaries send: inverted or random signs") \
	X(jointspar, budget, DOUBLE, 0, "2", 0, 1e6, CFG_GT_LO, \
	  "expected number of layers computed and sent per step") \
	X(jointspar, p_min, PROB, 0, "0.05", 0, 1, CFG_GT_LO, "lowest sampling probability of a layer") \
	X(jointspar, alpha, DOUBLE, 0, "0.01", 0, 1000, 0, \
	  "bandit step size; 0 keeps every p at budget / layers") \
	X(jointspar, trust, DOUBLE, 0, "0.001", 0, 1000, CFG_GT_LO, \
	  "LARS trust coefficient (algorithm = jointspar-lars)") \
	X(jointspar, lars_eps, DOUBLE, 0, "1e-9", 0, 1, CFG_GT_LO, "LARS denominator guard") \
	X(jointspar, draws, ENUM, cfg_draws_names, "shared", 0, 0, 0, \
	  "sample the same layers on every worker (sparse replies) or each its own") \
	X(dpsgd, graph, ENUM, cfg_graph_names, "ring", 0, 0, 0, \
	  "who gossips with whom: ring (the two next workers), torus (a 2-D grid's four), " \
	  "exponential (i +- 1, 2, 4, ...)") \
	X(localsgd, period, INT, 0, "4", 1, 1000000, 0, \
	  "local steps between two averagings of the models (H)") \
	X(topk, fraction, DOUBLE, 0, "0.01", 0, 1, CFG_GT_LO, \
	  "share of each block a worker sends a step: its largest entries") \
	X(topk, error_feedback, ENUM, cfg_bool_names, "true", 0, 0, 0, \
	  "keep what was not sent for the next steps (false: drop it)") \
	X(qsgd, levels, INT, 0, "16", 1, 127, 0, \
	  "s: the levels each side of zero an entry is rounded to at random (one byte each)") \
	X(hadamard, chunk, INT, 0, "1024", 1, 1048576, CFG_POW2, \
	  "floats rotated together (a block's last chunk padded to a power of two)") \
	X(ring, on_miss, ENUM, cfg_on_miss_names, "own", 0, 0, 0, \
	  "a float of the all-gather that was lost: own gradient, or zero (and passed on so)") \
	X(topology, shape, ENUM, cfg_shape_names, "none", 0, 0, 0, \
	  "none: every directed link is its own pipe; switch: every worker hangs off one " \
	  "switch, whose port toward a worker queues what all senders send it (incast); " \
	  "hosts: workers are GPUs in hosts that share a NIC, on one switch or leaf-spine") \
	X(topology, gpus_per_host, INT, 0, "8", 1, CFG_MAX_WORKERS, 0, \
	  "hosts: GPUs (workers) per host; worker w is on host w / gpus_per_host") \
	X(topology, hosts_per_leaf, INT, 0, "0", 0, CFG_MAX_WORKERS, 0, \
	  "hosts: hosts per leaf switch, the leaves joined by a spine; 0 = all on one switch") \
	X(topology, oversubscription, DOUBLE, 0, "1", 1, 1000, 0, \
	  "hosts: a leaf's hosts' port rate over its uplink's (4 = 4:1)") \
	X(topology, fabric_rate, RATE, 0, "3600Gbit", 0, 1e15, CFG_GT_LO, \
	  "hosts: rate into a GPU inside its host (NVLink-like fabric)") \
	X(topology, fabric_latency, DURATION, 0, "1us", 0, 1e9, 0, \
	  "hosts: latency inside a host, and from a host's NIC to its GPU") \
	X(topology, port_rate, RATE, 0, "10Gbit", 0, 1e15, CFG_GT_LO, \
	  "line rate of a switch port toward its worker (switch) or host, and of a host's " \
	  "NIC (hosts)") \
	X(topology, port_buffer, SIZE, 0, "0B", 0, 1e12, 0, \
	  "bytes that may wait at a port (drop-tail); 0B = no limit in bytes") \
	X(topology, port_packets, I64, 0, "100", 0, 1e9, 0, \
	  "units (packets) that may wait at a port (drop-tail), besides the one being sent; " \
	  "0 = no limit in units") \
	X(topology, port_latency, DURATION, 0, "1us", 0, 1e9, 0, \
	  "from a port to its worker (the links' latency is from the sender to the switch)") \
	X(topology, ecn_threshold, SIZE, 0, "0B", 0, 1e12, 0, \
	  "a unit that finds more than this many bytes waiting is ECN-marked (counted); 0B = " \
	  "no marking")

/* The keys of [worker A-B] sections: fields of struct cfg_worker_model (cfg_keys.c maps
 * each name to its field), resolved per worker into cfg.worker[]. */
#define CFG_WORKER_KEYS(X) \
	X(worker, slowdown, DOUBLE, 0, "1", 0, 1e6, CFG_GT_LO, \
	  "factor on the worker's modelled compute time per step: 4 makes a straggler four " \
	  "times slower") \
	X(worker, compute_jitter, DURATION, 0, "0s", 0, 60e9, 0, \
	  "per-step compute jitter: this times a draw from compute_jitter_distribution is " \
	  "added to the step's compute time (counter-based RNG keyed by seed, worker, step)") \
	X(worker, compute_jitter_distribution, ENUM, cfg_compute_dist_names, "uniform", 0, 0, 0, \
	  "distribution of the compute jitter: uniform, or one of iproute2's tables (as " \
	  "net.distribution; not table)")

/* The [net] keys first, the [worker] keys last (CFG_NETK, CFG_WK order). */
#define CFG_KEYS(X) CFG_NET_KEYS(X) CFG_OTHER_KEYS(X) CFG_WORKER_KEYS(X)

enum cfg_type {
	CFG_T_INT, CFG_T_I64, CFG_T_U64, CFG_T_DOUBLE, CFG_T_PROB, CFG_T_DURATION,
	CFG_T_RATE, CFG_T_SIZE, CFG_T_FLOPS, CFG_T_STR, CFG_T_CHOICE, CFG_T_ENUM, CFG_T_LIST,
};

/* One key, generated from the table.  off is into struct net_cfg for section "net", into
 * struct cfg_worker_model for "worker", into struct cfg otherwise. */
struct cfg_key {
	const char *section;
	const char *name;
	enum cfg_type type;
	size_t off, size;
	const char *const *names;	/* ENUM, CHOICE: NULL-terminated */
	size_t count_off;		/* LIST: the int count, in struct cfg */
	const char *def;
	double lo, hi;
	unsigned flags;
	const char *help;
};

/* Index of each [net] key: bit k of struct cfg_link.set and cfg.net_set. */
#define CFG_NETK_ENUM(s, f, ...) CFG_NETK_##f,
enum { CFG_NET_KEYS(CFG_NETK_ENUM) CFG_NNET };
#undef CFG_NETK_ENUM
/* Index of each [worker] key: bit k of struct cfg_worker_section.set; the key is
 * cfg_keys[CFG_WK0 + k]. */
#define CFG_WK_ENUM(s, f, ...) CFG_WK_##f,
enum { CFG_WORKER_KEYS(CFG_WK_ENUM) CFG_NWORKERK };
#undef CFG_WK_ENUM
#define CFG_KEY_ONE(...) +1
enum { CFG_NKEYS = 0 CFG_KEYS(CFG_KEY_ONE) };
#undef CFG_KEY_ONE
#define CFG_WK0 (CFG_NKEYS - CFG_NWORKERK)

extern const struct cfg_key cfg_keys[];	/* [net] first, [worker] last: CFG_NETK, CFG_WK */
extern const size_t cfg_nkeys;

/* Every section but [event NAME] (emu/cfg/cfg_event.h), in print order: the one list
 * that the loader, emu check, emu help, the reference in docs/configuration.md and every
 * message that names the sections read.  A new section is one line here (and its keys above).
 *
 * X(ID, name, shown, intro)
 *   ID     CFG_SECTION_ID is its index
 *   name   the section of its keys in the key table and in overrides ("link" stands for
 *          [link A-B], "worker" for [worker A-B])
 *   shown  as help and messages write it
 *   intro  what the section is for, one paragraph: emu help keys, docs/configuration.md */
#define CFG_SECTIONS(X) \
	X(RUN, "run", "run", "the run: how many workers, the seed, where the output goes") \
	X(NET, "net", "net", "the network model of every directed link, in netem's vocabulary") \
	X(LINK, "link", "link A-B", \
	  "[link A-B] overrides the model of the directed link A -> B (worker ids); it takes " \
	  "the keys of [net]. A section may cover many links: [link 0-*] all links out of " \
	  "worker 0, [link *-3] all links into 3, [link 0-7 -> 8-15] each link from a worker " \
	  "of 0-7 to one of 8-15 (a side is an id, a range A-B or *; never a link i -> i). " \
	  "Per link and key, the section covering the fewest links that gives the key decides " \
	  "(* counts as more workers than any range), else [net]; two sections as specific " \
	  "that give one link different values of a key are refused") \
	X(TRAIN, "train", "train", \
	  "training: algorithm, model, schedule, and how compute time is modelled") \
	X(MODEL, "model", "model", \
	  "the layers of train.model = custom, one a line in order: NAME = OP [ARG...] " \
	  "[from INPUT...], each reading the line above unless it names its inputs " \
	  "(docs/models.md); an override replaces a line's text or adds a line at the end") \
	X(WORKER, "worker", "worker A-B", \
	  "[worker A], [worker A-B] or [worker *] sets the compute model of those workers " \
	  "(stragglers). Per worker and key, the section naming the fewest workers that " \
	  "gives the key decides (* is the least specific), else the default; two sections " \
	  "as specific that give one worker different values of a key are refused") \
	X(DATA, "data", "data", "the data set and how it is split among workers") \
	X(RPS, "rps", "rps", \
	  "RPS (Yu et al. 2019): workers average model blocks through a partitioned server") \
	X(ALLREDUCE, "allreduce", "allreduce", "allreduce: the same exchange with gradients") \
	X(SIGNUM, "signum", "signum", "signum (Bernstein et al. 2019): 1-bit signs, majority vote") \
	X(JOINTSPAR, "jointspar", "jointspar", \
	  "jointspar (Liu & Mozafari 2022): sampled layers, bandit-learned probabilities") \
	X(DPSGD, "dpsgd", "dpsgd", \
	  "dpsgd (Lian et al. 2017): each worker averages its model with its neighbours' in a " \
	  "graph, then steps") \
	X(LOCALSGD, "localsgd", "localsgd", \
	  "localsgd (Stich 2019): local steps, the models averaged every period steps") \
	X(TOPK, "topk", "topk", \
	  "topk (Stich et al. 2018): each worker's largest entries, with error feedback") \
	X(QSGD, "qsgd", "qsgd", \
	  "qsgd (Alistarh et al. 2017): gradients rounded at random to a few levels") \
	X(HADAMARD, "hadamard", "hadamard", \
	  "hadamard (OptiReduce, Warraich et al. 2025): all-reduce of randomly rotated " \
	  "gradients, a loss spread as noise") \
	X(RING, "ring", "ring", \
	  "ring: gradient all-reduce over NCCL's ring, 2(n-1) rounds from worker to next " \
	  "worker") \
	X(PLUGIN, "plugin", "plugin", \
	  "the keys of a plugin algorithm (train.algorithm = plugin): the plugin declares " \
	  "them, emu checks them against its declaration") \
	X(TOPOLOGY, "topology", "topology", \
	  "where the workers hang: by default every directed link is its own pipe; with a " \
	  "switch, the units all senders send one worker share that worker's port, a " \
	  "drop-tail queue, after their links' own model (docs/network.md, Topology)") \
	CFG_SECTIONS_EXTRA(X)

/* A build may add sections with -D'CFG_SECTIONS_EXTRA(X)=X(...)': the test of the lists
 * (tests/lists_extra.test.sh) adds one and finds it in every list. */
#ifndef CFG_SECTIONS_EXTRA
#define CFG_SECTIONS_EXTRA(X)
#endif

#define CFG_SECTION_ENUM(id, ...) CFG_SECTION_##id,
enum { CFG_SECTIONS(CFG_SECTION_ENUM) CFG_NSECTIONS };
#undef CFG_SECTION_ENUM
/* The names (cfg_sections), as shown and their intros, indexed by CFG_SECTION_*;
 * cfg_sections is NULL-terminated. */
extern const char *const cfg_sections[CFG_NSECTIONS + 1];
extern const char *const cfg_section_shown[CFG_NSECTIONS];
extern const char *const cfg_section_intro[CFG_NSECTIONS];
/* The index of section name in cfg_sections, or -1. */
int cfg_section_index(const char *name);
/* Every section as shown, ", " between them and last before the last one: "run, net,
 * link A-B, ..., jointspar" (last ", ") or "..., signum or jointspar" (last " or "). */
void cfg_section_list(const char *last, char *buf, size_t n);

/* Value names of each enum, indexed by the enum, NULL-terminated. */
extern const char *const cfg_bool_names[], *const cfg_notify_names[],
	*const cfg_compute_names[], *const cfg_loss_names[], *const cfg_unit_names[],
	*const cfg_dist_names[], *const cfg_compute_dist_names[], *const cfg_transport_names[], *const cfg_algo_names[],
	*const cfg_block_map_names[], *const cfg_on_miss_names[], *const cfg_adversary_names[],
	*const cfg_draws_names[], *const cfg_shape_names[], *const cfg_cc_names[], *const cfg_dataset_names[], *const cfg_shard_names[],
	*const cfg_lr_scaling_names[], *const cfg_lr_schedule_names[], *const cfg_model_names[],
	*const cfg_optimizer_names[], *const cfg_graph_names[],
	*const cfg_corrupt_detect_names[];
/* run.device's values: the backends a configuration may name (nn_backend_known, in the
 * registry's order), then "auto"; filled before main. */
extern const char *cfg_device_names[];

/* The key named name in section ("link" for [link A-B], "worker" for [worker A-B]), or
 * NULL. */
const struct cfg_key *cfg_key_find(const char *section, const char *name);
/* Parse text into the key's field of base (struct cfg, struct net_cfg for "net", struct
 * cfg_worker_model for "worker"; for LIST keys base must be a struct cfg).  Checks type,
 * unit and range.  On error returns -EINVAL and writes "PROBLEM; expected WHAT" into err. */
int cfg_key_parse(const struct cfg_key *k, void *base, const char *text, char *err, size_t errlen);
/* The canonical text of the key's value in base, which cfg_key_parse reads back. */
void cfg_key_format(const struct cfg_key *k, const void *base, char *buf, size_t n);
/* A bound (lo or hi) of the key as its type is written: "1ms", "64KiB", "0.05". */
void cfg_key_fmt_bound(const struct cfg_key *k, double v, char *buf, size_t n);
/* The values the key takes, as `emu help keys` prints them: "[1ns, 60s]", "(0, 1]",
 * "[4KiB, 256MiB], power of 2, or 0B", "1 to 160 characters", the names of a choice,
 * or "" (any value of its type).  cfg_key_parse accepts exactly these. */
void cfg_key_range_text(const struct cfg_key *k, char *buf, size_t n);
/* names[0] sep names[1] ... into buf: the first count names, or up to a NULL. */
void cfg_join_names(const char *const *names, size_t count, const char *sep, char *buf,
		    size_t n);
/* "duration", "probability", ... and the units it takes, for the reference. */
const char *cfg_type_name(enum cfg_type t);
const char *cfg_type_unit(enum cfg_type t);
/* The closest of names (within a few edits) to s, or NULL. */
const char *cfg_suggest(const char *s, const char *const *names, size_t nnames);

#endif
