/* emu/net/net.h — the network model of one directed link, mirroring Linux netem.
 *
 * References (current upstream): the kernel's net/sched/sch_netem.c (loss_4state,
 * loss_gilb_ell, tabledist, packet_time_ns, the rate branch of netem_enqueue, get_slot,
 * get_slot_next and the slot part of netem_dequeue) and iproute2's tc/q_netem.c
 * (defaults of omitted "loss state" / "loss gemodel" / "slot" parameters, its refusals,
 * its .dist tables).  Deviations are marked "netem:" in net.c.
 *
 * A message of len bytes is cut into loss units: the whole message (unit = message), or
 * ceil(len/mtu) packets (unit = packet); at least one unit, even for len 0.  Each unit is
 * transmitted once (more on a reliable transport), and each transmission passes what
 * netem_enqueue does to a packet, with its draws in netem's order:
 *   duplicate  with probability `duplicate` the unit is sent twice;
 *   loss     the link's loss chain advances once per transmitted unit, in sending order
 *            (the chain state lives here, kept by the sender); netem's --count: a
 *            duplicated unit that the draw takes still goes out once; with ecn (netem's
 *            ecn) a unit the draw takes is not lost but marked (ECN's CE: every emu
 *            transport is ECN-capable) and goes on through the steps below; a duplicate's
 *            second copy is a clone of the marked unit, so it carries the mark too;
 *   corrupt  with probability `corrupt` one bit of the unit's bytes flips (a uniform
 *            byte, a uniform bit); corrupt_detect = checksum makes the receiver drop it;
 *   limit    a first transmission that finds `limit` units held in its sender's rate
 *            queue (time to send still ahead) is tail-dropped (netem's limit counts the
 *            packets it holds; without a rate emu's queue holds none, netem's holds the
 *            delayed ones too);
 *   the copy a duplicate's second copy then passes loss, corrupt, limit, reorder and
 *            delay with draws of its own (netem re-enqueues it at the root qdisc);
 *   reorder  with gap g (0 = 1): after each reordered unit the next g - 1 are delayed;
 *            then each is sent at once with probability `reorder`: it skips latency,
 *            jitter and the rate (netem puts it at the head of its queue);
 *   delay    d = latency + jitter (uniform, or one of iproute2's tables, emu/net/dist.h),
 *            never below 0; the unit arrives at now + d, or with a bandwidth in netem's
 *            FIFO: max(the queue's last time to send, now + d) + its transmission time,
 *            so a rate absorbs jitter and does not reorder;
 *   slot     with a slot, the unit leaves only when the link's slot lets it, as netem's
 *            dequeue: its turn comes when it is handed over or when the unit before it
 *            left, whichever is later; there, and when its timer fires at max(its time to
 *            send, the slot's start), a slot that opened before its time to send is
 *            replaced by the next, a random delay from that moment (get_slot_next: uniform
 *            in [slot_min, slot_max], or slot_delay + slot_jitter from a table); the unit
 *            leaves (arrives) once both are past and takes one packet and its bytes of
 *            the slot's budget; a spent slot is replaced at once, from the moment the
 *            unit left.  The slot state is the link's, it advances per unit in sending
 *            order (netem's dequeue takes the units in order of time to send; they differ
 *            only where jitter without a rate reorders), and a reordered unit skips it
 *            (netem serves its head queue without the slot);
 *   correlation  each of delay, loss (bernoulli), duplicate, reorder and corrupt may be
 *            correlated with its previous draw as netem's get_crandom does (net.c);
 *   traces   a delivery trace in place of the bandwidth, and a time series of loss_p and
 *            latency by a transmission's start (emu/net/trace.h).
 * Each draw comes from the counter-based RNG keyed by (seed, link, step, phase, unit,
 * attempt, stream), so a result depends only on the order in which ONE sender sends on
 * ONE link.  The unit that counts is the earliest copy to arrive that the receiver keeps.
 *
 *   queue    first transmissions are handed to the sender's rate queue (struct net_txq,
 *            shared by all links of a sender or not, the caller decides) at the
 *            message's send time, all units at once, and leave it in FIFO order at
 *            `bandwidth` (the delay rule above: netem's rate branch of netem_enqueue).  A
 *            copy the loss draw takes is sent but takes no place in the queue (netem
 *            drops it at enqueue).  Per-packet overhead 0.
 *   reliable a unit of which no copy arrived usable is sent again when the sender's timer
 *            runs out, rto after it handed its last copy over, doubling per repeated loss
 *            up to rto_max; each attempt is a new transmission (attempt number in the key)
 *            that advances the chain.  A resend arrives at its timer + delay + its
 *            transmission time, outside the queue: it delays nothing queued before it
 *            fired (a real sender would queue it; rto is normally far longer than the
 *            queue is busy); with a slot it waits for one as a first transmission does,
 *            in a copy of the link's slot state that it leaves as it found it.  After
 *            max_retries resends all lost the unit is given up, as TCP gives up a
 *            connection: it is lost, counted like an unreliable loss, and the message is
 *            complete (for the receiver's clock) when the last timer runs out.
 *   unreliable  lost units are gone; the receiver's deadline is the caller's business
 *            (xchg_deadline.c).
 *
 * A link may have a schedule: windows (an [event] section each, emu/cfg/cfg_event.h) in
 * which it is down or takes other values of some keys.  Whether a window is in effect is
 * decided per transmission, by the step of the exchange or, for a window in virtual
 * time, by the transmission's start: a first transmission starts when its message is
 * sent, a resend when its timer fires.  What a message is (its units: unit, mtu), how
 * fast it serialises (bandwidth) and how its sender resends (transport, rto, rto_max,
 * max_retries) is decided once, at its departure; loss, duplicate, corrupt, reorder,
 * delay and the limit per transmission.  Down: the copy is sent and lost, with no draw;
 * a reliable sender resends it as any lost unit, up to max_retries.  The loss chain is
 * the link's one chain throughout: a window's model continues it in the
 * state the link's own model (or an earlier window) left it, and the link's model takes
 * it back after the window as the window left it; a chain of another model (gilbert
 * after state) restarts in netem's initial state.  A down window does not advance it.
 */
#ifndef EMU_NET_H
#define EMU_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "emu/net/net_cfg.h"

#define NET_MAX_ATTEMPTS 256	/* attempt numbers fit the RNG key's 8 bits: max_retries <= 255 */
#define NET_UNSET (-1.0)	/* an omitted parameter, see net_cfg_defaults */

/* Loss-chain states, numbered as in sch_netem.c. */
enum net_ge_state { NET_GE_GOOD = 1, NET_GE_BAD = 2 };
enum net_4_state {
	NET_TX_IN_GAP = 1, NET_TX_IN_BURST = 2, NET_LOST_IN_BURST = 3, NET_LOST_IN_GAP = 4
};

/* A sender's rate queue: free_at is the last time to send of a unit in it (virtual ns,
 * netem's "last"), cursor the next delivery opportunity of a link's trace (a sender's
 * links share one, so give them one trace); fin[] holds the times to send of the units
 * still in it, for `limit` (a ring of cap entries, in FIFO order).  Zero initialised it serves links without a
 * limit; net_txq_init sizes it for a limit. */
struct net_txq {
	int64_t free_at;
	int64_t cursor;		/* a trace's next delivery opportunity (trace.h) */
	int64_t *fin;
	uint32_t cap, head, count;
};

/* A window of a link's schedule: in effect for a transmission when from <= x < to, x
 * being the step of the exchange, or with by_time the virtual ns the transmission
 * starts.  While it is, the link is down (down), or the transmission takes the bytes of
 * model that mask marks (the keys the window sets, and what derives from them) over the
 * link's own model; windows in effect together apply in their order. */
struct net_window {
	int src, dst;		/* the directed link */
	int64_t from, to;	/* to == INT64_MAX: to the end */
	bool by_time, down;
	struct net_cfg model;
	uint8_t mask[sizeof(struct net_cfg)];
};

/* netem's correlated draws (get_crandom), one state each (the last value drawn) */
enum net_corr { NET_CORR_DELAY, NET_CORR_LOSS, NET_CORR_DUP, NET_CORR_REORDER,
		NET_CORR_CORRUPT, NET_NCORR };

/* A link's slot (netem's q->slot): when the current slot opens (virtual ns), what of its
 * budget is left, and when the unit released last left (the next unit's turn). */
struct net_slot {
	int64_t next;
	int64_t packets_left, bytes_left;
	int64_t last;
};

/* One directed link.  Plain data, no heap: init, use, forget.  With a schedule, cfg is
 * the model of the transmission under way (base under the windows in effect), and bw
 * the bandwidth of the message under way. */
struct net_link {
	struct net_cfg cfg;
	uint64_t seed;
	uint32_t id;		/* net_link_id(src, dst), part of every RNG key */
	int state;		/* loss chain state (enum net_ge_state / net_4_state) */
	enum net_loss chain;	/* the loss model whose chain state is in state */
	uint64_t bw;		/* bandwidth in bit/s, rounded; 0 = unlimited */
	int64_t reorder_count;	/* netem's q->counter: units delayed since the last reorder */
	uint32_t corr_last[NET_NCORR];	/* each correlation's last draw (net.c correlate) */
	struct net_slot slot;	/* opened at virtual time 0, as netem opens one at setup */
	struct net_cfg base;	/* the link's own model */
	const struct net_window *win;	/* its schedule, in order; not owned */
	int nwin;
};

/* The result of sending one message. */
struct net_msg {
	int nunits, narrived;
	size_t unit;		/* bytes per unit (the last may be shorter); >= 1 */
	int64_t depart;		/* when it was sent: now */
	int64_t last_arrival;	/* latest arrival of an arrived unit, or when a reliable sender
				 * gave one up (its last timer); depart if none */
	uint64_t attempts;	/* transmissions, retransmissions included */
	uint64_t retransmits;	/* attempts - transmitted units */
	uint64_t duplicated;	/* second copies made */
	uint64_t corrupted;	/* copies that reached the receiver with a flipped bit */
	uint64_t overflow;	/* copies tail-dropped by the full queue */
	uint64_t marked;	/* copies the loss model took that went on marked (ecn) */
	uint64_t wire_bytes;	/* unit bytes of every copy put on the wire */
	uint64_t delivered_bytes;	/* unit bytes of the arrived units */
	double delay_sum_ns;	/* over arrived units: arrival - depart */
};

static inline uint32_t net_link_id(int src, int dst)
{
	return (uint32_t)src << 16 | (uint32_t)dst;
}

/* Replace omitted (negative, e.g. NET_UNSET) parameters by iproute2's defaults:
 * gemodel p [r [1-h [1-k]]]: r = 1 - p, 1-h = 1, 1-k = 0;
 * state p13 [p31 [p32 [p23 [p14]]]]: p31 = 1 - p13, p32 = 0, p23 = 1, p14 = 0;
 * slot MIN [MAX]: MAX = MIN. */
void net_cfg_defaults(struct net_cfg *c);

/* 0, or -EINVAL for probabilities outside [0, 1], ecn neither 0 nor 1, p13 + p14 > 1,
 * p31 + p32 > 1, a packet unit without mtu > 0, negative times, sizes or bandwidth,
 * slot_max below slot_min, reliable without rto > 0, jitter or a slot from a table this
 * process has not loaded (net_dist_load, emu/net/dist.h), a slot_distribution = table
 * (it has no file). */
int net_cfg_check(const struct net_cfg *c);

/* Whether c delivers in slots (netem's slot): slot_min, slot_max or slot_jitter > 0. */
bool net_slot_on(const struct net_cfg *c);

/* Copies c, resolves omitted parameters (net_cfg_defaults), checks (net_cfg_check):
 * returns 0 or -EINVAL.  The chain starts where netem starts it (good /
 * TX_IN_GAP), a slot opens at 0 with its full budget, the queue is the caller's. */
int net_link_init(struct net_link *l, const struct net_cfg *c, uint64_t seed, int src, int dst);

/* Gives l the windows w[0..n) as its schedule (the caller keeps them for l's lifetime):
 * 0, or -EINVAL when a window's model fails net_cfg_check. */
int net_link_schedule(struct net_link *l, const struct net_window *w, int n);

/* The model in effect for a transmission of step's exchange starting at virtual time t,
 * on a link of model base with windows w[0..n): base under every window in effect, in
 * order, into out.  Returns whether one of them is down. */
bool net_model_at(const struct net_cfg *base, const struct net_window *w, int n, int64_t step,
		  int64_t t, struct net_cfg *out);

/* Loss units of a message of len bytes, and bytes per unit (>= 1). */
int net_nunits(const struct net_cfg *c, size_t len);
size_t net_unit_bytes(const struct net_cfg *c, size_t len);

/* One transmission of one unit through the loss chain: advances the chain, returns
 * true when lost. */
bool net_unit_lost(struct net_link *l, int64_t step, int phase, uint32_t unit, uint32_t attempt);


/* latency + jitter for one transmission, in ns, never negative (advances the delay
 * correlation's state). */
int64_t net_delay(struct net_link *l, int64_t step, int phase, uint32_t unit,
		  uint32_t attempt);

/* Time to serialise `bytes` at the link's bandwidth (floor, as netem's packet_time_ns). */
int64_t net_serialise_ns(const struct net_link *l, uint64_t bytes);

/* The k-th retransmission timeout (k = 0: the first): min(rto * 2^k, rto_max);
 * net_backoff the same of any rto and cap. */
int64_t net_rto(const struct net_cfg *c, int k);
int64_t net_backoff(int64_t rto, int64_t rto_max, int k);

/* A queue for links with a limit of at most cap units (0: no limit); 0 or -ENOMEM. */
int net_txq_init(struct net_txq *q, uint32_t cap);
void net_txq_free(struct net_txq *q);

/* Send a message of len bytes at virtual time now through link l and queue q.
 * arrived: (nunits + 63) / 64 words, bit u set when unit u arrived (the rest cleared).
 * arrival: NULL or nunits entries, the arrival time of each unit, -1 for lost ones.
 * flip: NULL or nunits entries, byte * 8 + bit of the bit flipped in an arrived unit
 * (corrupt, undetected), else -1.
 * Advances the chain and the queue; now never goes back between calls on one queue.
 * Returns 0, or -EINVAL if len needs more than INT32_MAX units or the link's limit
 * exceeds the queue's capacity. */
int net_send(struct net_link *l, struct net_txq *q, size_t len, int64_t step, int phase,
	     int64_t now, uint64_t *arrived, int64_t *arrival, int32_t *flip,
	     struct net_msg *out);

/* net_send, and marked: NULL or (nunits + 63) / 64 words, bit u set when the copy of
 * arrived unit u that counts carries an ECN mark (ecn; the rest cleared). */
int net_send_marked(struct net_link *l, struct net_txq *q, size_t len, int64_t step,
		    int phase, int64_t now, uint64_t *arrived, int64_t *arrival, int32_t *flip,
		    uint64_t *marked, struct net_msg *out);

#endif
