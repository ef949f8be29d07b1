/* emu/algo/algo_plugin.h — a distributed algorithm from outside emu's tree: a shared
 * object that emu loads with [train] algorithm = plugin, plugin = PATH.
 * Installed as <emu/algo_plugin.h> (make install; pkg-config emu-algo).  Self-contained:
 * a plugin needs this header and nothing else of emu's.
 *
 * The shared object exports one function, emu_algo_plugin(), returning its table.  emu
 * loads it once, in the supervisor before the workers fork, and each worker then calls:
 *   init             once, after the model is built: allocate the state, say the largest
 *                    message or reply it sends;
 *   before_backward  (optional) each step before backward: choose layers (need_wgrad);
 *   step             each step after backward: one exchange (host->exchange) and the
 *                    parameter update (host->optimizer_step, or its own);
 *   state_parts      what of the state outlives a step: a checkpoint saves those bytes,
 *                    a resume copies them back after init;
 *   free             at the end.
 * The rules emu's own algorithms follow hold for a plugin: a deterministic function of
 * what arrives (never of time, scheduling or arrival order), randomness only from
 * host->random (keyed by the run's seed, so a run is the same run every time), every
 * byte that outlives a step in a state part.
 *
 * The exchange (host->exchange) is emu's collective: each worker encodes one message per
 * server (server j serves block j of the parameters, block_off), every server reduces
 * the messages that reached it (in[w] is worker w's; lost units read as zero, their
 * arrival bits say which) into one reply, and every worker applies each server's reply
 * (possibly with holes, possibly lost).  The network model decides what arrives.
 * The other collective (host->ring) is NCCL's ring: rounds in which each worker sends
 * one message to the next worker and receives one from the previous.
 *
 * Keys: the plugin's own, in the INI section [plugin]; emu checks each against its spec
 * (type, range) with the file and line, refuses unknown ones, and prints them with the
 * configuration.  Read them with host->key.
 *
 * Versioning: api is EMU_ALGO_API of the header the plugin was built against; emu
 * refuses a plugin of another version.  Within a version, structures only grow at the
 * end.  Grown within version 1 (a plugin that uses them needs an emu whose header has
 * them): emu_host's optimizer_step_to, outbox and ring, emu_worker's layer_off and
 * layer_size.
 *
 * emu's own algorithms (rps, allreduce, signum, jointspar, dpsgd, ...) are written
 * against this header too and run through the same host.
 */
#ifndef EMU_ALGO_PLUGIN_H
#define EMU_ALGO_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define EMU_ALGO_API 1
#define EMU_ALGO_MAX_IOV 4	/* pieces of one message */
#define EMU_ALGO_MAX_PARTS 4	/* state parts */
#define EMU_ALGO_MAX_KEYS 16	/* keys of a plugin */

/* A message as its receiver sees it: the bytes of lost units read as zero. */
struct emu_msg {
	const uint8_t *data;
	size_t len;		/* as sent */
	size_t unit;		/* bytes per loss unit (the last may be shorter) */
	int nunits;		/* >= 1 */
	int narrived;		/* == nunits: complete; 0: lost entirely */
	const uint64_t *arrived;	/* bit u (word u / 64, bit u % 64): unit u arrived */
};

struct emu_iov {
	const void *base;
	size_t len;
};

/* One collective: what a worker sends each server, what a server replies, what a worker
 * does with a reply.  ctx is exchange's. */
struct emu_exchange_ops {
	int (*encode)(void *ctx, int server, struct emu_iov iov[EMU_ALGO_MAX_IOV]);
	size_t (*reduce)(void *ctx, int server, const struct emu_msg in[], uint8_t *reply,
			 size_t cap);
	void (*apply)(void *ctx, int server, const struct emu_msg *reply);
};

/* One round r of a ring (host->ring): the message to the next worker, and what to do
 * with the previous worker's (possibly with holes, possibly lost).  ctx is ring's. */
struct emu_ring_ops {
	int (*send)(void *ctx, int round, struct emu_iov iov[EMU_ALGO_MAX_IOV]);
	void (*take)(void *ctx, int round, const struct emu_msg *m);
};

struct emu_part {
	void *p;
	size_t len;
};

enum emu_key_type { EMU_KEY_DOUBLE, EMU_KEY_INT, EMU_KEY_BOOL };

/* A key of the plugin's [plugin] section: its value must parse as type and lie in
 * [min, max]; def is its value when the INI does not give it. */
struct emu_key_spec {
	const char *name;
	enum emu_key_type type;
	const char *def;
	double min, max;
	const char *help;
};

struct emu_worker;

/* What emu offers an algorithm. */
struct emu_host {
	/* The collective of this step; flags are OR-ed over all workers into *flags_out
	 * (emu's stop agreement: pass the flags step got).  0 or -errno. */
	int (*exchange)(struct emu_worker *w, const struct emu_exchange_ops *ops, void *ctx,
			uint32_t flags, uint32_t *flags_out);
	/* The run's optimiser ([train] optimizer, momentum, weight_decay, the schedule's
	 * lr) on params with grads; its state is opt_floats floats the plugin keeps (in a
	 * state part).  May overwrite grads. */
	void (*optimizer_step)(struct emu_worker *w, float *opt_state);
	size_t (*opt_floats)(const struct emu_worker *w);
	/* For every float, the mean over the messages whose units holding it arrived. */
	void (*mean_floats)(float *out, const struct emu_msg in[], int n, size_t nfloats);
	/* Whether float i of a message arrived (both ends of it). */
	int (*float_arrived)(const struct emu_msg *m, size_t i);
	/* A key of [plugin], as a double (EMU_KEY_INT and EMU_KEY_BOOL too).  (emu's own
	 * algorithms: a key of their section of emu's key table, or SECTION.NAME of
	 * another, a choice as its index.) */
	double (*key)(const struct emu_worker *w, const char *name);
	/* 64 random bits, a function of the run's seed, stream and the counters a and b
	 * only (the same in every worker for the same arguments). */
	uint64_t (*random)(const struct emu_worker *w, uint32_t stream, uint64_t a, uint64_t b);
	/* Grown within version 1, at the end: */
	/* optimizer_step with the new parameters written to dst (nparams floats) and params
	 * left as they are: a model to send rather than to keep. */
	void (*optimizer_step_to)(struct emu_worker *w, float *opt_state, float *dst);
	/* Where step may build what it sends so that it goes by reference (on one host, a
	 * message that arrives whole is read where it lies instead of copied): *cap bytes,
	 * 8-byte aligned, unchanged until exchange returns.  NULL (*cap 0): none. */
	void *(*outbox)(struct emu_worker *w, size_t *cap);
	/* The ring collective: nrounds rounds (even, at least n - 1) of worker id sending to
	 * id + 1 mod n and receiving from id - 1, each waiting for its predecessor only;
	 * flags travel round the ring and their OR over all workers comes back in
	 * *flags_out.  Its messages never lie in the outbox (a sender may be rounds ahead of
	 * its receiver).  0 or -errno. */
	int (*ring)(struct emu_worker *w, int nrounds, const struct emu_ring_ops *ops,
		    void *ctx, uint32_t flags, uint32_t *flags_out);
};

/* A worker, as an algorithm sees it.  Fields change only between steps. */
struct emu_worker {
	const struct emu_host *host;
	int id, n;		/* this worker, of n */
	int64_t step;		/* from 0 */
	int epoch;
	double lr;		/* this step's learning rate (schedule applied) */
	size_t nparams;
	float *params;		/* the model's parameters (host memory) */
	float *grads;		/* this step's gradient, after backward */
	const size_t *block_off;	/* [n + 1]: block j is params[block_off[j], block_off[j + 1]) */
	int nlayers;
	uint8_t *need_wgrad;	/* [nlayers], 1: the layer gets weight gradients */
	void *emu;		/* emu's own: not for plugins */
	/* Grown within version 1, at the end: layer l's parameters (and gradients) are
	 * params[layer_off[l], layer_off[l] + layer_size[l]), the layers in order. */
	const size_t *layer_off, *layer_size;	/* [nlayers] each */
};

struct emu_algo_plugin {
	uint32_t api;		/* EMU_ALGO_API */
	const char *name;	/* for messages and config.ini */
	const struct emu_key_spec *keys;	/* nkeys of them */
	int nkeys;
	int (*init)(struct emu_worker *w, void **state, size_t *max_msg);
	void (*before_backward)(struct emu_worker *w, void *state);	/* may be NULL */
	int (*step)(struct emu_worker *w, void *state, uint32_t flags, uint32_t *flags_out);
	int (*state_parts)(void *state, struct emu_part parts[EMU_ALGO_MAX_PARTS]);
	void (*free)(void *state);
};

/* The one symbol a plugin exports. */
const struct emu_algo_plugin *emu_algo_plugin(void);

#endif
