/* emu/algo/algo.h — the algorithms as the run layer drives them.
 *
 * Every algorithm, emu's own and a plugin's, is written against the plugin interface
 * (algo_plugin.h: a table of hooks, an emu_worker, the host's functions); the host,
 * algo_plugin_host.c, runs each as a struct algo, the only implementation of it.
 * Per step the trainer does: batch -> forward -> algo->before_backward (may choose which
 * layers get weight gradients: w->need_wgrad) -> backward -> algo->step (one xchg_run
 * collective and the parameter update).  Algorithms are deterministic functions of what
 * arrives: no timing, no arrival order.
 */
#ifndef EMU_ALGO_H
#define EMU_ALGO_H

#include <stddef.h>
#include <stdint.h>
#include "emu/algo/algo_plugin.h"
#include "emu/algo/worker.h"

/* A piece of an algorithm's state that outlives a step (for checkpoints). */
struct algo_part {
	void *p;
	size_t len;
};
#define ALGO_MAX_PARTS 4

/* An algorithm as the run layer drives it: the host's adapter around its table. */
struct algo {
	/* Allocate state for worker w; *max_msg = the largest message or reply it sends. */
	int (*init)(struct worker *w, void **state, size_t *max_msg);
	/* Optional: before backward (e.g. sample layers into w->need_wgrad). */
	void (*before_backward)(struct worker *w, void *state);
	/* After backward (grads in w->m.grads): exchange and update w->m.params.  flags go
	 * into the collective and their OR over workers comes back in *flags_out. */
	int (*step)(struct worker *w, void *state, uint32_t flags, uint32_t *flags_out);
	void (*free)(void *state);
	/* What of the state outlives a step (momentum, a bandit's probabilities): up to
	 * ALGO_MAX_PARTS pieces into parts, their count returned.  A checkpoint saves them,
	 * a resume copies them back after init; scratch rebuilt every step is left out. */
	int (*state_parts)(void *state, struct algo_part parts[]);
};

extern const struct algo algo_rps, algo_allreduce, algo_signum, algo_jointspar, algo_plugin,
	algo_dpsgd, algo_localsgd, algo_topk, algo_qsgd, algo_hadamard, algo_ring;
/* emu's own algorithms, each a table of the plugin interface (algo_plugin_host.c runs
 * them as it runs a plugin) */
extern const struct emu_algo_plugin algo_table_rps, algo_table_allreduce, algo_table_signum,
	algo_table_jointspar, algo_table_dpsgd, algo_table_localsgd, algo_table_topk,
	algo_table_qsgd, algo_table_hadamard, algo_table_ring;
const struct algo *algo_find(enum cfg_algo a);

/* train.algorithm = plugin (algo_plugin.h, algo_plugin_host.c): load c->train.plugin and
 * check the [plugin] keys against its declaration, once per process before the workers
 * fork (again with the same path: the keys only).  0, or -errno with err naming the file
 * and line. */
int algo_plugin_open(const struct cfg *c, char *err, size_t errlen);
/* FNV-1a of the loaded plugin's file (what a resume must run again), 0 without one. */
uint64_t algo_plugin_digest(void);

/* Helpers the algorithms share (emu/algo/algo_common.c).  emu's own algorithms take
 * them beside the interface: they are emu's code, and the exchange behind the host
 * gives them its own view of a message (algo_xmsg). */

/* The run's seed, for the random streams of emu/net/rng.h an algorithm of emu's own
 * draws from (a plugin draws through host->random). */
uint64_t algo_seed(const struct emu_worker *w);
/* The exchange's message behind one the host handed an algorithm of w (in[k] of its
 * reduce, the reply of its apply): the same bytes and arrival with xchg.h's prefetch
 * hints, for the helpers below.  NULL for any other message. */
const struct xmsg *algo_xmsg(const struct emu_worker *w, const struct emu_msg *m);

/* Element-wise mean over the arrived parts of dense float messages: for every float,
 * the mean over workers whose unit holding it arrived (in[self] always did).  Floats
 * split across two units count as arrived only if both units did. */
void algo_mean_floats(float *out, const struct xmsg in[], int n, size_t nfloats);
/* Copy the arrived floats of a dense float reply into dst; where the reply did not
 * arrive, dst keeps its value (or, zero_missing, becomes 0).  Returns floats copied. */
size_t algo_take_arrived(float *dst, const struct xmsg *reply, size_t nfloats,
			 int zero_missing);
/* The same, where the reply did not arrive dst taking own's floats instead. */
void algo_take_arrived_else(float *dst, const struct xmsg *reply, size_t nfloats,
			    const float *own);
/* One zeroed allocation (release with free): a state struct of `size` bytes followed by
 * the optimiser's state, *nopt = host->opt_floats floats, on a cache line (*momentum =
 * NULL when there are none). */
void *algo_state_alloc(const struct emu_worker *w, size_t size, float **momentum,
		       size_t *nopt);
/* Floats of the optimiser's state for w's configuration: two moments (2 nparams) with
 * optimizer = adam, adamw or lamb, else a momentum buffer of nparams floats when
 * momentum > 0, else none (host->opt_floats). */
size_t algo_opt_floats(const struct worker *w);
/* The optimiser's state of nopt floats as a state part (none when NULL): the count. */
int algo_momentum_part(float *momentum, size_t nopt, struct emu_part parts[]);
/* Floats in the largest of w's n blocks. */
size_t algo_max_block(const struct emu_worker *w);
/* x -= lr (g + wd x), through a momentum buffer when it is not NULL (as torch.optim.SGD:
 * m = beta m + g + wd x; x -= lr m).  Overwrites w->m.grads with g + wd x on that path.
 * With optimizer = adam or adamw, the step of torch.optim.Adam / AdamW, its moments in
 * the buffer (nn/optim.h optim_adam_step).  (host->optimizer_step) */
void algo_sgd_step(struct worker *w, float *momentum);
/* The same with the new parameters written to dst (nparams floats) instead of in place:
 * the parameters stay as they were.  (host->optimizer_step_to) */
void algo_sgd_step_to(struct worker *w, float *momentum, float *dst);
/* Whether float i of a message arrived (both ends of it). */
int algo_float_arrived(const struct xmsg *m, size_t i);

#endif
