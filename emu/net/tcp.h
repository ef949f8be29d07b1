/* emu/net/tcp.h — a transport that reacts to congestion, as TCP does, through one switch
 * port (port.h): the flows into a worker ([net] transport = tcp, [topology] shape =
 * switch), simulated by that worker for each phase of the exchange.
 *
 * Each sender's flow to the worker is a connection that lives for the run: its window
 * and timer outlive a message.  A message's units (packets) go out as the window lets
 * them: at most cwnd units unacknowledged, the first ones at the times the link's model
 * gives them (net.h: the sender's queue, latency, jitter, loss), later ones when
 * acknowledgements open the window, serialised at the link's rate.  The receiver
 * acknowledges every unit at once, cumulatively (no delayed ACKs, no SACK); an ACK
 * reaches the sender ack_delay after it left.  The sender:
 *   newreno  slow start from init_cwnd to ssthresh, then one unit per window; three
 *            duplicate ACKs: fast retransmit, ssthresh = cwnd = half the flight (at
 *            least 2, the window inflated by 3 and by one per further duplicate), NewReno
 *            partial ACKs retransmit the next hole; a timeout: cwnd = 1, ssthresh = half
 *            the flight, go back to the first unacknowledged unit, the timer doubled
 *            (up to rto_max);
 *   dctcp    the same, and once per window of data: alpha = (1 - 1/16) alpha + 1/16 x
 *            the share of ACKs that echoed an ECN mark, cwnd = cwnd (1 - alpha / 2) when
 *            there was one (the port marks above its ecn threshold).
 * The timer: rto before the first RTT sample, then max(rto_min, srtt + 4 rttvar) (RFC
 * 6298, Karn: no sample from a retransmitted unit), at most rto_max.  After max_retries
 * timeouts in a row the connection gives up: the units not yet received are lost.
 * Retransmissions cross the link without the link's loss draws (those are the sender's,
 * drawn once per unit by net.h), and units the link lost are sent again as the port's
 * drops are.  Units of flows that are not tcp pass as in port_resolve (a reliable
 * link's units come back after its rto).
 */
#ifndef EMU_TCP_H
#define EMU_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include "emu/net/port.h"

enum tcp_cc { TCP_NEWRENO, TCP_DCTCP };

/* One sender's connection: its model, and the state that outlives a message. */
struct tcp_conn {
	/* model */
	bool tcp;		/* false: units pass without a window (resend below) */
	enum tcp_cc cc;
	uint32_t init_cwnd;
	int64_t rto_init, rto_min, rto_max;
	int max_retries;	/* tcp: timeouts in a row; else resends of a unit */
	bool reliable;		/* not tcp: a dropped unit comes back after rto */
	uint64_t rate;		/* the link's bit/s, for the window's units (0: at once) */
	int64_t owd;		/* sender to port, past its queue: the link's latency */
	int64_t ack_delay;	/* receiver to sender */
	/* state */
	double cwnd, ssthresh, alpha;
	int64_t srtt, rttvar, rto;	/* srtt < 0: no sample yet */
};

void tcp_conn_start(struct tcp_conn *c);	/* the state of a new connection */

/* A unit of a message from sender src: t is when its first transmission reaches the port
 * (for a unit its link lost: when it would have), lost_on_link whether it did not,
 * marked_on_link whether it came with its link's ECN mark (netem's ecn), which the ACK of
 * that first transmission echoes as it echoes the port's.
 * out: when it reaches the worker, -1 when it never does. */
struct tcp_unit {
	int64_t t;
	uint32_t bytes, idx;
	uint16_t src;
	bool lost_on_link, marked_on_link;
	int64_t out;
};

/* Counters since the start, per worker (all its connections). */
struct tcp_stats {
	uint64_t retransmits, timeouts, fast_retransmits, ecn_echoes;
};

/* Every message of u[0..n) (each sender's units contiguous, in unit order) through port
 * p, conn[src] each sender's connection.  0 or -ENOMEM. */
int tcp_resolve(struct port *p, struct tcp_conn *conn, struct tcp_unit *u, uint32_t n,
		struct tcp_stats *st);

#endif
