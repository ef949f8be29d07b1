/* emu/net/xchg_impl.h — what the pieces of the exchange share, private to emu/net/xchg*.c:
 * a message in flight (struct xflow), one worker's exchange (struct xpriv) and the calls
 * one piece makes into another.  The collective's contract is xchg.h.
 *
 *   xchg.c           one step: scatter, reduce, broadcast, apply (xchg_run)
 *   xchg_ring.c      rounds of a ring: each worker to the next (xchg_ring)
 *   xchg_phase.c     what both share: phase numbers, peers down, messages read
 *   xchg_wire.c      one message on a ring: its header, bitmap, times and payload
 *   xchg_flows.c     a phase's messages moved together: passes, spin, sleep
 *   xchg_deadline.c  the receiver's virtual clock: timeouts, deadlines, giving up
 *   xchg_port.c      the switch port toward the receiver: what all its senders share
 *   xchg_setup.c     xchg_init and xchg_free: the links, schedules and buffers
 *   xchg_state.c     the counters and the checkpointed state that outlives a step
 */
#ifndef EMU_XCHG_IMPL_H
#define EMU_XCHG_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/net/net.h"
#include "emu/net/tcp.h"
#include "emu/net/xchg.h"
#include "emu/net/xhdr.h"

/* A step's exchanges number their phases 0, 1, ... in order (xchg_phases): the header
 * carries the number, the network model draws by it, and the inbox counts and boards
 * alternate by its parity, so every exchange runs an even number of phases. */
#define XCHG_MAX_PHASES 256
enum { ST_HDR, ST_BITS, ST_TIMES, ST_DATA, ST_DONE };

/* A bit the network flipped: at byte off of the message (corrupt). */
struct xflip {
	size_t off;
	uint8_t mask;
};

/* One message in flight, either direction.  Data moves in runs of consecutive arrived
 * units: [pos, run_end) of the message's bytes. */
struct xflow {
	struct ring *r;
	int peer;
	int stage;
	size_t off;		/* bytes of the header / bitmap moved */
	struct xhdr h;
	uint64_t *bits;
	size_t bitbytes;
	int64_t *times;		/* [nunits] arrival of each unit, -1 lost */
	bool tcp;		/* a tcp link: times travel for one unit too (xchg_tcp_units) */
	bool none;		/* receiver: no message from this peer in the phase (a ring
				 * round's other peers): no deadline, no wait, no counters */
	/* sender: the flipped bits of the arrived units, in message order */
	struct xflip *flips;
	int nflips, fi;
	int next_unit;		/* first unit after the current run */
	size_t pos, run_end;
	/* sender: the payload */
	const struct xchg_iov *iov;
	int ci;			/* current iov and the message offset where it starts */
	size_t cbase;
	/* receiver: where the payload goes */
	uint8_t *buf;
	/* or, zero-copy, where it is: in the ring (zc_len bytes given back after use), or
	 * in the sender's outbox (by reference: zc_len 0) */
	const uint8_t *zc;
	size_t zc_len;
};

struct xpriv {
	void *mem;			/* one mapping for the arrays below */
	size_t mem_bytes;
	size_t max_msg;
	bool fits;		/* every message fits its ring whole: no sender ever waits for space */
	bool post;		/* one host: a sender posts every whole message to its receiver's inbox */
	bool inbox;		/* and two messages fit every ring into this worker: it sleeps
				 * on its inbox for the last message of a phase (see
				 * flows_sleep, xchg_flows.c) */
	uint8_t *outbox;	/* this worker's, when messages go by reference; else NULL */
	size_t outbox_bytes;	/* each worker's */
	size_t stage_off;	/* where the algorithm's staging area begins (xchg_outbox) */
	int ngone;			/* peers down in this step (gone) */
	int64_t phase_step;		/* the step of phase_next (-1: none yet) */
	int phase_next;			/* the next exchange's first phase in that step */
	int max_units, words;	/* bitmap words per message */
	struct net_txq txq;
	int32_t *flip;			/* [max_units] scratch for net_send */
	uint64_t *marks;		/* [words] scratch for net_send: the ECN-marked units */
	struct net_link *link;		/* [n]: id -> j */
	int64_t *timeout_in;		/* [n]: j -> id, unreliable timeout; -1 reliable */
	/* the schedules (net.h): the windows of id -> j, then of j -> id, for each j */
	struct net_window *win;		/* own copy, nwin of them */
	int nwin;
	int *win_out, *win_in, *nwin_out, *nwin_in;	/* [n]: first index, count */
	struct net_cfg *from;		/* [n]: the model of j -> id (its timeout) */
	struct xchg_link_stats *stats;	/* [n]: sender side of id -> j */
	struct xchg_link_stats *stats_in;	/* [n]: receiver side of j -> id */
	struct xflow *out, *in;		/* [n] */
	struct xchg_iov *iov;		/* [n][XCHG_MAX_IOV] */
	int *niov;			/* [n] */
	struct xmsg *msg;		/* [n] */
	uint8_t *buf;			/* [n][max_msg] receive buffers; [id]: own message */
	uint8_t *reply;			/* [max_msg]: in the outbox when it fits there */
	uint64_t *bits_out, *bits_in;	/* [n][words] */
	int64_t *times_out, *times_in;	/* [n][max_units] */
	struct xflip *flips;		/* [n][max_units] */
	uint64_t *bits_all;		/* [words], all ones */
	size_t buf_stride;
	struct net_cfg self_cfg;	/* units of one's own message */
	struct xchg_absence *absent;	/* the peers' crashes (own allocation) */
	int nabsent;
	bool *gone;			/* [n]: peer j is down in this step (absent) */
	int64_t *giveup_in;		/* [n]: j -> id, how long a reliable transport tries */
	struct port port;		/* the switch port toward this worker (port.h) */
	struct port_unit *pu;		/* [pu_cap] a phase's units through it */
	uint32_t pu_cap;
	/* hosts and switches (fabric.h; fab.nports 0: none): the units of a phase from
	 * every worker's board, and how each link's sender resends */
	struct fabric fab;
	struct fabric_unit *fu;
	uint32_t fu_cap;
	struct xchg_resend *resend;	/* [n][n] */
	uint32_t board_cap;		/* entries a board half holds */
	/* transport = tcp (tcp.h): with a switch each sender's connection into this worker
	 * ([n]), with hosts every link's ([n][n], their routes through the fabric); NULL
	 * when no link that matters is tcp; the phase's units */
	struct tcp_conn *conn;		/* [nconn] */
	struct tcp_route *route;	/* [nconn] with hosts, else NULL */
	uint32_t nconn;
	struct tcp_unit *tu;
	uint32_t tu_cap;
	struct tcp_stats tcp_st;
};

/* xchg_phase.c: what the collectives share.  The first of count phases of step's next
 * exchange (0 for a step's first), or -E2BIG past XCHG_MAX_PHASES; mark the peers down
 * in step; a received message as the algorithm reads it. */
int xchg_phases(struct xchg *x, int64_t step, int count);
void xchg_mark_gone(struct xchg *x, int64_t step);
/* Peer j is down: its message to us is lost entirely and never read. */
void xchg_gone_in(struct xchg *x, int j);
void xchg_fill_msg(struct xmsg *m, const struct xflow *f);
size_t xchg_iov_total(const struct xchg_iov *iov, int n);

/* xchg_wire.c: a message on a ring (see there) */
int xchg_start_out(struct xchg *x, int j, int64_t step, int phase, uint32_t flags,
		   const struct xchg_iov *iov, size_t len);
void xchg_start_in(struct xchg *x, int j);
bool xchg_out_progress(struct xflow *f, struct notify *nt);
int xchg_in_progress(struct xchg *x, struct xflow *f, int64_t step, int phase);
void xchg_release_in_place(struct xchg *x);

/* xchg_flows.c: every flow of a phase to completion (0 or -errno) */
int xchg_run_flows(struct xchg *x, int64_t step, int phase);

/* xchg_port.c: this worker's units of the phase on its board for every worker's fabric
 * (before any message of the phase is written), and every unit of the phase through
 * the ports (0 or -errno, x->err said) */
void xchg_publish(struct xchg *x, int64_t step, int phase);
uint32_t xchg_board_entries(size_t board_bytes);
/* A tcp link's message as the receiver's simulation wants it (xchg_port.c): every unit
 * whole, a unit the link lost marked by its time (-2 - when it would have come), a unit
 * that arrived with the link's ECN mark (marks, net_send_marked) by its time plus
 * XCHG_TCP_MARKED. */
#define XCHG_TCP_MARKED ((int64_t)1 << 62)	/* virtual ns never reach it (146 years) */
void xchg_tcp_units(const struct net_link *l, struct xflow *f, const uint64_t *marks);
int xchg_tcp_setup(struct xpriv *p, const struct xchg_links *l, int n, int id);
int xchg_apply_port(struct xchg *x, int64_t step, int phase);

/* xchg_deadline.c: the receiver's virtual clock (see there) */
void xchg_phase_timeouts(struct xchg *x, int64_t step, int64_t t0);
void xchg_apply_deadline(struct xchg *x, int64_t t0);
int64_t xchg_wait_clock(const struct xchg *x, int64_t t0);
int64_t xchg_giveup_ns(const struct net_cfg *c);

#endif
