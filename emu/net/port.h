/* emu/net/port.h — a switch's egress port: a drop-tail FIFO that drains at a line rate.
 *
 * Units (packets) reach the port at times the links before it decide (the sender's NIC
 * queue, the cable's latency, jitter and loss: net.h), and the port serves them one at a
 * time, in the order they reach it, each for its transmission time at the port's rate;
 * a unit is at its host `latency` after its last bit left.  A unit that finds the port
 * busy waits; one that finds `buffer` units (or bytes) waiting is dropped at the tail.
 * The unit being sent does not wait: the buffer holds the units behind it, as in ns-3's
 * PointToPointNetDevice queue and a switch's egress buffer.  Units that reach the port
 * at the same instant come in (sender, unit) order, and before the unit whose
 * transmission ends at that instant frees its place (so with equal line rates, 15
 * senders of 11 packets into a buffer of 100 deliver 110 of 165, as ns-3 does).
 *
 * ECN: a unit that finds more than `ecn` bytes waiting is marked (the instantaneous
 * queue against a threshold, as DCTCP's switches mark); marks are counted.
 *
 * A reliable sender resends a unit the port dropped when its timer runs out: resend(k)
 * of the unit's sender gives the wait after the k-th drop (k = 0 first), or -1 when it
 * gives up; the resend reaches the port that long after the drop, in the same order as
 * any unit.  The port's owner decides: resolving every unit of a phase together, in
 * virtual-time order, makes the result independent of which sender's process ran first.
 * A unit reaching the port earlier than units already resolved (of an earlier call) is
 * taken as reaching it at the last of them: it waits behind them.
 */
#ifndef EMU_PORT_H
#define EMU_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include "emu/net/vheap.h"

struct port_cfg {
	uint64_t rate;		/* bit/s; 0: no port (every unit passes untouched) */
	int64_t latency;	/* ns from the port to the host */
	uint64_t buffer_units;	/* units that may wait; 0: no limit in units */
	uint64_t buffer_bytes;	/* bytes that may wait; 0: no limit in bytes */
	uint64_t ecn_bytes;	/* mark above this many bytes waiting; 0: no marking */
};

/* One unit through the port.  In: t, bytes, src, idx.  Out: out, attempts, marked. */
struct port_unit {
	int64_t t;		/* reaches the port (its last bit in), virtual ns */
	uint32_t bytes;
	uint32_t src;		/* sender; ties at one instant go in (src, idx) order */
	uint32_t idx;		/* the unit's place in its sender's traffic */
	uint32_t attempts;	/* out: times it reached the port (1 + resends) */
	int64_t out;		/* out: at the host, or -1 when dropped (and not resent) */
	bool marked;		/* out: ECN-marked on its last pass */
};

/* Counters since the port began.  Occupancy integrals (waiting units or bytes times ns)
 * give the mean occupancy over an interval by Little's law: their growth over it divided
 * by its length. */
struct port_stats {
	uint64_t units, bytes;	/* sent on to the host */
	uint64_t drops, marks, resends;
	uint64_t peak_units, peak_bytes;	/* waiting, at most */
	double wait_units_ns, wait_bytes_ns;	/* sum over units of waiting time (x bytes) */
};

/* What a queued unit leaves behind it: when its transmission starts and its size. */
struct port_slot {
	int64_t start;
	uint32_t bytes;
	bool at_once;		/* it found the port idle: it never waited */
};

struct port {
	struct port_cfg cfg;
	int64_t free_at;	/* the end of the last transmission */
	int64_t last_t;		/* the latest time a unit reached it */
	struct port_stats st;
	/* the units that may still wait, in FIFO order: a ring of cap */
	struct port_slot *q;
	uint32_t cap, head, count;
	uint64_t waiting_bytes;
	struct vheap heap;	/* scratch for port_resolve */
};

/* The port starts idle and empty (0; its memory comes with use). */
int port_init(struct port *p, const struct port_cfg *cfg);
void port_free(struct port *p);

/* Time to send `bytes` at rate bit/s, ns (ceil: a port is never faster than its rate). */
int64_t port_tx_ns(uint64_t rate, uint64_t bytes);

/* One unit of `bytes` reaching the port at t (the caller brings them in time order; one
 * earlier than the last is taken at the last): 1 and *out (at the host) when it goes
 * on, 0 when dropped, -ENOMEM; *marked: ECN-marked. */
int port_pass(struct port *p, uint32_t bytes, int64_t t, int64_t *out, bool *marked);

/* Every unit of u[0..n) through the port, in the order above; resend as in the header
 * (NULL: nothing is resent).  0 or -ENOMEM. */
typedef int64_t (*port_resend_fn)(void *ctx, uint32_t src, uint32_t k);
int port_resolve(struct port *p, struct port_unit *u, uint32_t n, port_resend_fn resend,
		 void *ctx);

#endif
