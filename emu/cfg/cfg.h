/* emu/cfg/cfg.h — the resolved configuration of one run.
 *
 * Filled by cfg_load() from an INI file plus command-line overrides; every key has a
 * default (see cfg_keys.h, the one table that drives parsing, printing and help).
 * All times are int64 nanoseconds, rates are bits per second, sizes bytes,
 * probabilities in [0, 1].  The struct owns no heap memory: it can be copied and
 * is inherited by forked workers as is.
 */
#ifndef EMU_CFG_H
#define EMU_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "emu/cfg/wset.h"
#include "emu/net/net_cfg.h"
#include "emu/shm/notify.h"
#include "nn/model_desc.h"
#include "nn/optim.h"

#define CFG_MAX_WORKERS NET_MAX_WORKERS

#define CFG_MAX_LINKS 256	/* [link ...] sections */
#define CFG_MAX_WORKER_SECTIONS 128	/* [worker ...] sections */
#define CFG_MAX_DECAY 8
#define CFG_STR 256
#define CFG_PLUGIN_KEYS 16	/* keys of [plugin] */
#define CFG_KEY_SLOTS 160	/* room for the key table (cfg_keys.c checks) */
#define CFG_MAX_EVENTS 32	/* [event NAME] sections */
#define CFG_EVENT_NAME 32	/* bytes of an event's name, its NUL included */
#define CFG_EVENT_LINKS 16	/* link groups in one event's links */
#define CFG_EVENT_GROUPS 16	/* groups of one partition */

#define CFG_DEVICE 32	/* bytes of run.device, its NUL included */
enum cfg_compute { COMPUTE_FLOPS, COMPUTE_MEASURED };

/* Worker ids as a section names them: one id (first == last), a range first-last, or '*'
 * (any: every worker, first 0, last CFG_MAX_WORKERS - 1). */
struct cfg_ids {
	int first, last;
	bool any;
};

/* A [link ...] section: overrides of the directed links from each worker of one side to
 * each worker of the other, a worker's link to itself excepted.  [link A-B] is the link
 * A -> B; [link 0-*], [link *-3] and [link 0-7 -> 8-15] are groups (cfg_link_net says
 * which section decides a key).  Zeroed spans and flags make a plain [link src-dst]. */
#define CFG_LINK_ANY_SRC 1u	/* the source side is '*' */
#define CFG_LINK_ANY_DST 2u	/* the destination side is '*' */
struct cfg_link {
	int src, dst;		/* the first worker id of each side */
	int src_span, dst_span;	/* ids after the first: src..src + src_span; 0 = one id */
	unsigned any;		/* CFG_LINK_ANY_*: that side is every worker */
	int line;		/* where the section starts, for messages */
	uint64_t set;		/* bit k: key k of the net table was given */
	struct net_cfg net;	/* given keys; the rest is filled from [net] by cfg_link_net() */
};

enum cfg_algo { ALGO_RPS, ALGO_ALLREDUCE, ALGO_SIGNUM, ALGO_JOINTSPAR, ALGO_JOINTSPAR_LARS,
		 ALGO_DPSGD, ALGO_LOCALSGD, ALGO_TOPK, ALGO_QSGD,
		 ALGO_HADAMARD, ALGO_PLUGIN, ALGO_RING };
enum cfg_graph { GRAPH_RING, GRAPH_TORUS, GRAPH_EXPONENTIAL };	/* dpsgd's */
enum cfg_block_map { BLOCKS_FIXED, BLOCKS_RANDOM };
enum cfg_on_miss { MISS_OWN, MISS_ZERO };
enum cfg_adversary { ADV_INVERT, ADV_RANDOM };
enum cfg_draws { DRAWS_SHARED, DRAWS_INDEPENDENT };
enum cfg_shape { SHAPE_NONE, SHAPE_SWITCH, SHAPE_HOSTS };
enum cfg_dataset { DATA_FASHION_MNIST, DATA_CIFAR10, DATA_TEXT, DATA_GAUSSIAN, DATA_LINREG };
enum cfg_shard { SHARD_IID, SHARD_LABEL, SHARD_DIRICHLET };
enum cfg_lr_scaling { LR_SCALE_NONE, LR_SCALE_LINEAR, LR_SCALE_SQRT };
enum cfg_optimizer { OPTIM_SGD, OPTIM_ADAM, OPTIM_ADAMW, OPTIM_LAMB, OPTIM_LARS };

/* The compute model of one worker, resolved from the [worker A-B] sections: its modelled
 * compute time per step is multiplied by slowdown, then jitter * z is added, z drawn from
 * jitter_dist by the counter-based RNG keyed by (seed, worker, step). */
struct cfg_worker_model {
	double slowdown;	/* >= 1 for a straggler; default 1 */
	int64_t jitter;		/* ns; 0 = none */
	enum net_dist jitter_dist;
};

/* A [worker A], [worker A-B] or [worker *] section: the keys it gives for those workers.
 * c->worker[] holds the result per worker: the most specific section wins per key. */
struct cfg_worker_section {
	struct cfg_ids ids;
	int line;		/* where the section starts, for messages */
	unsigned set;		/* bit k: key k of the worker table was given (cfg_keys.h) */
	struct cfg_worker_model m;	/* given keys */
};

/* [event NAME] sections (emu/cfg/cfg_event.h): something that happens to the network or
 * the workers for an interval of the run.  When it starts (at) and how long it lasts
 * (for) are counted in steps, epochs or virtual time. */
enum cfg_event_kind { EVENT_NONE, EVENT_PARTITION, EVENT_LINK_DOWN, EVENT_NET, EVENT_SLOWDOWN,
		      EVENT_CRASH };
/* What a crashed worker comes back with (docs/events.md, "Crashes"). */
enum cfg_rejoin { REJOIN_OWN, REJOIN_MEAN, REJOIN_FRESH };
enum cfg_when_unit { WHEN_NONE, WHEN_STEP, WHEN_EPOCH, WHEN_TIME };

struct cfg_when {
	enum cfg_when_unit unit;	/* WHEN_NONE: not given */
	int64_t n;		/* WHEN_STEP: steps; WHEN_TIME: virtual ns */
	double epochs;		/* WHEN_EPOCH */
};

struct cfg_event_link {
	struct cfg_ids src, dst;	/* as a [link ...] section names them */
};

struct cfg_event {
	char name[CFG_EVENT_NAME];
	int line;		/* where the section starts, for messages */
	unsigned set;		/* bit k: event key k given (CFG_EVK_*, cfg_event.h) */
	enum cfg_event_kind kind;
	struct cfg_when at, len;	/* len is the key "for"; unit WHEN_NONE: to the end */
	int nlinks;		/* links: link groups, any of which covers a link */
	struct cfg_event_link links[CFG_EVENT_LINKS];
	struct wset workers;	/* workers; workers_any: '*' (every worker) */
	bool workers_any;
	int ngroups;		/* groups: worker w in group g when groups[g] has it */
	struct wset groups[CFG_EVENT_GROUPS];
	uint64_t net_set;	/* set: bit k, key k of the net table given */
	struct net_cfg net;	/* set: the values of those keys */
	double factor;		/* slowdown: factor on the compute time */
	enum cfg_rejoin rejoin;	/* crash: the state the workers come back with */
};

struct cfg {
	char path[CFG_STR];	/* the INI file, for messages */
	/* "FILE:LINE: warning: ..." lines for keys given a value that has no effect (emu
	 * check and emu run print them; the configuration is valid) */
	char warnings[1024];
	/* where each key of the table got its value: > 0 a line of path, < 0 minus an argv
	 * index, 0 its default (for the messages of later checks, cfg_where) */
	int key_loc[CFG_KEY_SLOTS];
	struct {
		char name[CFG_STR];
		int workers;		/* 1..64, default 16 */
		uint64_t seed;
		char output[CFG_STR];	/* run directory; default runs/NAME */
		char device[CFG_DEVICE];	/* a backend's name (nn/backend.h) or "auto" */
		enum notify_mode notify;
		int64_t ring_size;	/* bytes per directed ring */
		int overwrite;		/* 1: an earlier run in the folder may be replaced */
		int64_t stall_timeout;	/* ns without progress that end a run; 0 = never */
		int64_t stop_grace;	/* ns from a stop signal to SIGKILL; 0 = never */
		char label[CFG_STR];	/* legends' name of the run; empty = name */
		int worker_log;		/* 1: workers.csv too */
		int64_t progress_every;	/* ns between lines off a terminal; 0 = evals */
		int64_t checkpoint_every;	/* steps between checkpoints; 0 = never */
		int64_t checkpoint_wall;	/* ns of wall time between checkpoints; 0 = never */
	} run;
	struct net_cfg net;
	uint64_t net_set;	/* bit k: key k of the net table was given in [net] (cfg_keys.h) */
	int nlinks;
	struct cfg_link links[CFG_MAX_LINKS];
	struct {
		enum cfg_algo algorithm;
		char plugin[CFG_STR];	/* algorithm = plugin: its shared object */
		char model[32];		/* mlp lenet resnet20..110 lstm linreg custom */
		int epochs;
		int64_t max_steps;	/* 0 = epochs decide */
		int64_t min_steps;	/* the least length, past the epochs' */
		int batch;		/* per worker */
		double lr;		/* base learning rate for one worker */
		enum cfg_lr_scaling lr_scaling;
		double lr_max;		/* cap of the scaled rate; 0 = none */
		double warmup_epochs;
		int warmup_steps;	/* the warm-up's least length in steps */
		enum lr_kind lr_schedule;	/* nn/optim.h */
		double lr_end, lr_power;
		int ndecay;
		double decay_epochs[CFG_MAX_DECAY];
		double decay_factor;
		enum cfg_optimizer optimizer;
		double adam_beta1, adam_beta2, adam_eps;
		double lars_trust, lars_eps;
		double momentum;
		int nesterov;		/* 1: Nesterov's momentum */
		double weight_decay;
		int log_every;		/* steps between train.csv lines */
		int eval_every;		/* steps between evaluations; 0 = each epoch */
		int eval_at_start;	/* 1: the initial model evaluated too (step 0) */
		enum cfg_compute compute;
		double device_flops;	/* FLOP/s of the modelled device (compute = flops) */
		double compute_scale;	/* factor on measured time (compute = measured) */
		int64_t op_overhead;	/* ns per op of a step's graph (compute = flops) */
	} train;
	struct cfg_worker_model worker[CFG_MAX_WORKERS];	/* resolved, one per worker id */
	int nworker_sections;
	struct cfg_worker_section worker_sections[CFG_MAX_WORKER_SECTIONS];
	struct {
		enum cfg_dataset dataset;
		char dir[CFG_STR];
		enum cfg_shard shard;
		double alpha;		/* dirichlet concentration */
		int64_t train_limit;	/* 0 = whole set */
		int64_t test_limit;
		int64_t synthetic_size;	/* samples in a synthetic training set */
		int dim;		/* features of a synthetic set */
		int classes;		/* classes of the gaussian set */
		double noise;		/* label noise (std) of the linreg set */
		int seq_len;		/* tokens per text sample */
	} data;
	struct {
		enum cfg_block_map block_map;
	} rps;
	struct {
		enum cfg_on_miss on_miss;
	} allreduce;
	struct {
		double beta;
		double weight_decay;
		int adversaries;
		enum cfg_adversary adversary;
	} signum;
	struct {
		double budget;		/* s: expected number of layers per step */
		double p_min;
		double alpha;		/* bandit step size */
		double trust;		/* LARS trust coefficient */
		double lars_eps;
		enum cfg_draws draws;	/* the same layers on every worker, or each its own */
	} jointspar;
	struct {
		enum cfg_graph graph;
	} dpsgd;
	struct {
		int period;	/* local steps between two averagings */
	} localsgd;
	struct {
		double fraction;	/* of each block sent a step */
		int error_feedback;
	} topk;
	struct {
		int levels;	/* s: levels each side of zero */
	} qsgd;
	struct {
		int chunk;	/* floats rotated together, a power of two */
	} hadamard;
	struct {
		enum cfg_on_miss on_miss;
	} ring;
	/* [model]: the layers of train.model = custom as given, in order (nn/model_desc.h;
	 * emu/cfg/cfg_model.c); each line's line: where (cfg_loc's sign convention) */
	struct nn_desc model;
	/* [plugin]: a plugin algorithm's keys as given (emu/algo/algo_plugin.h: the plugin
	 * declares and checks them); line: where (cfg_loc's sign convention) */
	struct {
		int n;
		struct cfg_plugin_key {
			char name[32];
			char value[64];
			int line;
		} key[CFG_PLUGIN_KEYS];
	} plugin;
	struct {
		enum cfg_shape shape;	/* none: every link its own pipe */
		int gpus_per_host, hosts_per_leaf;
		double oversubscription;	/* a leaf's hosts' rate over its uplink's */
		double fabric_rate;	/* bit/s into a GPU inside its host */
		int64_t fabric_latency;
		double port_rate;	/* bit/s of a switch port toward its worker or host */
		int64_t port_buffer;	/* bytes that may wait at a port; 0 = no limit */
		int64_t port_packets;	/* units that may wait at a port; 0 = no limit */
		int64_t port_latency;	/* ns from the port to its worker */
		int64_t ecn_threshold;	/* mark above this many bytes waiting; 0 = never */
	} topology;
	int nevents;
	struct cfg_event events[CFG_MAX_EVENTS];	/* in the order of the file */
};

/* Load FILE, apply overrides ("section.key=value", in order; for a link or worker section
 * "link A-B.key=value", "link 0-7->8-15.key=value", "worker 0-3.key=value").  On error
 * writes the errors to err, one "FILE:LINE: ..." (or "argument N: ...") line each in the
 * order of the input (at most 20), then "N errors" when there are several, and returns
 * -EINVAL; returns 0 on success. */
int cfg_load(struct cfg *c, const char *path, int noverrides, char *const overrides[],
	     char *err, size_t errlen);
/* cfg_load, numbering the overrides in messages from argbase ("argument N"): main
 * passes the argv index of the first override. */
int cfg_load_args(struct cfg *c, const char *path, int noverrides, char *const overrides[],
		  int argbase, char *err, size_t errlen);
/* Defaults only (used by tests and by cfg_load before parsing). */
void cfg_defaults(struct cfg *c);
/* The network model of directed link src -> dst: per key, the value of the most specific
 * [link ...] section that covers the link and gives the key (the one covering the fewest
 * links; a '*' side counts as more workers than any range), else [net]'s. */
void cfg_link_net(const struct cfg *c, int src, int dst, struct net_cfg *out);
/* The earliest a unit sent on a link set up as n can arrive, in ns after it is sent
 * (serialisation aside): latency less the most its jitter's distribution can take off
 * (emu/net/net.c), never below 0; 0 where units may be reordered (sent at once).  An
 * unreliable timeout shorter than this is refused: no unit could meet it. */
int64_t cfg_earliest_delay(const struct net_cfg *n);

/* The factor train.lr_scaling puts on train.lr for run.workers: 1, workers or
 * sqrt(workers) (emu/cfg/cfg_lr.c; train.lr_max caps the product). */
double cfg_lr_scale(const struct cfg *c);
/* The links of worker id as its exchange sees them (emu/net/xchg.h). */
struct xchg_links;
/* 0 or -ENOMEM; cfg_xchg_links_free releases what it and cfg_xchg_windows allocated
 * (and absent, which emu/run/train_worker.c adds). */
int cfg_xchg_links(const struct cfg *c, int id, struct xchg_links *out);
void cfg_xchg_links_free(struct xchg_links *l);
/* The schedules of worker id's links in a run of spe steps per epoch ([event] sections):
 * out->win gets a window (emu/net/net.h) for each event and link in or out of id that it
 * takes down or changes, in the events' order; allocated (free(out->win)).  0 or
 * -ENOMEM. */
int cfg_xchg_windows(const struct cfg *c, int64_t spe, int id, struct xchg_links *out);
/* "FILE:LINE" or "argument N" of the key given last among keys ("section.name", NULL
 * terminated), or FILE when none was given: the place a message about them names. */
void cfg_where(const struct cfg *c, const char *const keys[], char *buf, size_t n);
/* Write the fully resolved configuration as an INI file that cfg_load accepts again. */
int cfg_print(const struct cfg *c, FILE *f);
/* One line per directed link src -> dst (src != dst < run.workers) with its resolved
 * model in netem's words, then one per worker whose compute model is not the default;
 * as INI comments (emu check --links). */
int cfg_print_links(const struct cfg *c, FILE *f);
/* The key reference (emu help keys; emu help SECTION for one section, "link" or
 * "link A-B" for links, "worker" or "worker A-B" for workers); -EINVAL for an unknown
 * section. */
int cfg_help(FILE *f, const char *section);
/* The same reference as one Markdown table (docs/configuration.md, between the keys markers). */
void cfg_help_markdown(FILE *f);
/* For programs (emu/cfg/cfg_help_tools.c): every override's name, one a line
 * (section.key; link A-B.key and worker A-B.key for the sections of a link or worker);
 * the whole key table as a JSON array of objects.  Both return 0 or -EIO. */
int cfg_help_names(FILE *f);
int cfg_help_json(FILE *f);

#endif
