/* emu/cfg/cfg_event.h — [event NAME] sections: what happens to the network or to the
 * workers for an interval of a run (docs/events.md).
 *
 *   [event split]                  [event burst]              [event slow]
 *   kind = partition               kind = net                 kind = slowdown
 *   at = 1 epoch                   at = 0.5s                  at = 200
 *   for = 1 epoch                  for = 50ms                 workers = 0-3, 7
 *   groups = 0-7 | 8-15            links = 0-*, 3-0           factor = 4
 *                                  set = loss_p=0.3, latency=2ms
 *
 * kind: partition (every link between two of the groups is down, both ways), link_down
 * (the links are down), net (the links take set's [net] keys over their own model),
 * slowdown (the workers' compute time is multiplied by factor), crash (the workers'
 * processes end, and with for come back: rejoin = own, mean or fresh).  at: a step (200), an
 * epoch (2.5 epoch) or a virtual time (0.5s); for: as long, in the same forms (steps and
 * epochs mix, virtual time goes with virtual time); no for: to the end of the run.
 * links: link groups as [link ...] sections name them (3-0, 0-*, 0-7 -> 8-15), comma
 * separated.  workers: ids, ranges A-B or *, comma separated.  groups: such lists
 * separated by |.  Which component decides what, and at which time, is the network
 * model's and the compute model's business (net.h, compute.h); this file says which
 * links and workers an event covers and when.
 */
#ifndef EMU_CFG_EVENT_H
#define EMU_CFG_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "emu/cfg/cfg.h"

/* The keys of an [event NAME] section: bit k of struct cfg_event.set. */
enum {
	CFG_EVK_kind, CFG_EVK_at, CFG_EVK_for, CFG_EVK_links, CFG_EVK_workers, CFG_EVK_groups,
	CFG_EVK_set, CFG_EVK_factor, CFG_EVK_rejoin, CFG_NEVK
};
extern const char *const cfg_event_keys[CFG_NEVK + 1];	/* by CFG_EVK_*, NULL-terminated */
extern const char *const cfg_event_kind_names[];	/* by enum cfg_event_kind */
extern const char *const cfg_rejoin_names[];		/* by enum cfg_rejoin */

/* When an event is in effect in a run of spe steps per epoch: steps [from, to) of the
 * exchange (by_time false: at and for in steps or epochs; an epoch e is step
 * round(e * spe), a length of e epochs round(e * spe) steps, and at and for both in
 * epochs end at step round((at + for) * spe)), or virtual ns [from, to) (by_time).
 * to == INT64_MAX: to the end. */
struct cfg_span {
	int64_t from, to;
	bool by_time;
};
void cfg_event_span(const struct cfg_event *e, int64_t spe, struct cfg_span *s);

/* Whether s holds for something of step `step` that happens at virtual time t. */
static inline bool cfg_span_on(const struct cfg_span *s, int64_t step, int64_t t)
{
	int64_t v = s->by_time ? t : step;

	return s->from <= v && v < s->to;
}

/* Whether event e takes the directed link src -> dst down (partition, link_down, and
 * crash: every link to or from a crashed worker). */
bool cfg_event_link_down(const struct cfg_event *e, int src, int dst);
/* Whether e's links cover src -> dst (link_down, net; never a link i -> i). */
bool cfg_event_covers_link(const struct cfg_event *e, int src, int dst);
/* Whether e's workers cover worker w (slowdown, crash); '*' covers every one. */
bool cfg_event_covers_worker(const struct cfg_event *e, int w);
/* The model of link src -> dst while net event e is in effect: the link's own model
 * (cfg_link_net) with the keys of set replaced, netem's derived defaults derived again,
 * and set's loss_p alone meaning Bernoulli loss on a link without a loss model (as for
 * a [link] section). */
void cfg_event_net(const struct cfg *c, const struct cfg_event *e, int src, int dst,
		   struct net_cfg *out);

/* The group of worker w in a partition, or -1. */
int cfg_event_group(const struct cfg_event *e, int w);

/* Texts as cfg_print writes them and cfg_load reads them back: a time ("200",
 * "2.5 epoch", "500ms"); the value of event key k ("0-7 | 8-15", "loss_p=0.3, latency=2ms",
 * ...); the targets for events.csv, without commas ("0-* 3-0", "0-3 7", "0-7 | 8-15"). */
void cfg_when_format(const struct cfg_when *w, char *buf, size_t n);
void cfg_event_format(const struct cfg_event *e, int k, char *buf, size_t n);
void cfg_event_targets(const struct cfg_event *e, char *buf, size_t n);

/* For emu help and messages, per key of cfg_event_keys: what its value is, and the kinds
 * of event that take it ("every", "link_down, net"). */
extern const char *const cfg_event_help[CFG_NEVK];
extern const char *const cfg_event_kinds_of[CFG_NEVK];

#endif
