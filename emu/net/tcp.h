/* emu/net/tcp.h — a transport that reacts to congestion, as TCP does, through switch
 * ports (port.h): the flows into a worker through its port ([net] transport = tcp,
 * [topology] shape = switch), simulated by that worker for each phase of the exchange;
 * or every flow through the hosts' fabric along its route (shape = hosts: fabric.h),
 * simulated alike by every worker.
 *
 * Each sender's flow to the worker is a connection that lives for the run: its window,
 * RTT estimate and timer outlive a message.  The sender follows ns-3's TcpSocketBase
 * (3.37) with SACK off, classic fast recovery and limited transmit, which
 * tests/ns3_tcp_incast.test.sh checks packet for packet:
 *   window   in bytes of payload (a unit's bytes less hdr); a unit goes out while cwnd
 *            exceeds the bytes in flight (sent, less those duplicate ACKs showed to
 *            have left and those marked lost, plus those resent), a whole unit at a
 *            time unless it is the message's last;
 *   newreno  slow start from init_cwnd units by one mss per ACK that acknowledges new
 *            data, then by max(1, mss^2 / cwnd) bytes per such ACK; the third duplicate
 *            ACK (or, before it, one that shows a later unit lost): fast retransmit of
 *            the first unacknowledged unit, ssthresh = cwnd = max(2 mss, (flight + mss)
 *            / 2), each duplicate counting one unit as arrived; partial ACKs resend the
 *            next hole; recovery ends at an ACK past the highest unit sent when it began;
 *            on each of the first two duplicates, one new unit (limited transmit);
 *   timeout  every unit in flight counts as lost, ssthresh = max(2 mss, flight / 2),
 *            cwnd = mss, the timer doubled (up to rto_max); units go out again from the
 *            first unacknowledged one as ACKs open the window, duplicates ignored
 *            until an ACK passes the highest unit sent before the timeout;
 *   dctcp    newreno, and once per window of data: alpha = (1 - 1/16) alpha + 1/16 x
 *            the share of acknowledged bytes whose ACK echoed an ECN mark, cwnd = cwnd
 *            (1 - alpha / 2) when there was one (RFC 8257; the port marks above its ecn
 *            threshold, a link with netem's ecn instead of a loss).
 * The timer (RFC 6298): rto_init before the first RTT sample, then max(rto_min, srtt +
 * max(granularity, 4 rttvar)), at most rto_max; a sample per ACK from the oldest unit it
 * acknowledges, never from a resent unit nor from one sent before the last timeout;
 * re-armed by every ACK of new data (in recovery only by the first partial one).  After
 * max_retries timeouts in a row the connection gives up: the units not yet received are
 * lost.  The receiver acknowledges every unit at once, cumulatively; an ACK reaches the
 * sender ack_delay after it left.  A sender's link sends one unit at a time at its rate,
 * the others wait their turn; a message's first units leave at the times the link's
 * model gives them (net.h: the sender's queue, latency, jitter, loss), and resends cross
 * the link without its loss draws (drawn once per unit by net.h).  Events at one instant
 * run in the order they were scheduled, as in a discrete-event simulator.  Units of flows
 * that are not tcp pass as in port_resolve (a reliable link's units come back after its
 * rto).
 */
#ifndef EMU_TCP_H
#define EMU_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include "emu/net/port.h"

enum tcp_cc { TCP_NEWRENO, TCP_DCTCP };

#define TCP_GRANULARITY 1000000	/* ns: the timer's clock (ns-3's default, Linux at HZ 1000) */

/* One sender's connection: its model, and the state that outlives a message. */
struct tcp_conn {
	/* model */
	bool tcp;		/* false: units pass without a window (resend below) */
	enum tcp_cc cc;
	uint32_t init_cwnd;	/* units */
	uint32_t mss;		/* payload bytes of a full unit */
	uint32_t hdr;		/* bytes of a unit that are not payload (headers) */
	int64_t rto_init, rto_min, rto_max, granularity;
	int max_retries;	/* tcp: timeouts in a row; else resends of a unit */
	bool reliable;		/* not tcp: a dropped unit comes back after rto */
	uint64_t rate;		/* the link's bit/s, for the window's units (0: at once) */
	int64_t owd;		/* sender to port, past its queue: the link's latency */
	int64_t ack_delay;	/* receiver to sender */
	/* state */
	uint64_t cwnd, ssthresh;	/* bytes */
	uint64_t acked_rest;	/* acknowledged bytes short of a whole mss, carried on */
	double alpha;
	int64_t srtt, rttvar, rto;	/* srtt < 0: no sample yet */
};

void tcp_conn_start(struct tcp_conn *c);	/* the state of a new connection */

/* A unit of a message on connection src (the sender, or with routes any index into
 * conn): t is when its first transmission reaches the first port
 * (for a unit its link lost: when it would have), lost_on_link whether it did not,
 * marked_on_link whether it came with its link's ECN mark (netem's ecn), which the ACK of
 * that first transmission echoes as it echoes the port's.
 * out: when it reaches the worker, -1 when it never does. */
struct tcp_unit {
	int64_t t;
	uint32_t bytes, idx;
	uint32_t src;
	bool lost_on_link, marked_on_link;
	int64_t out;
};

/* Counters since the start, per worker (all its connections). */
struct tcp_stats {
	uint64_t retransmits, timeouts, fast_retransmits, ecn_echoes;
};

/* A connection's ports, in order (indices into tcp_resolve's ports).  The ACKs do not
 * queue: the connection's ack_delay holds the latencies of their way back. */
#define TCP_MAX_HOPS 5
struct tcp_route {
	uint8_t npath;
	uint16_t path[TCP_MAX_HOPS];
};

/* Every message of u[0..n) (each connection's units contiguous, in unit order) through
 * ports[route[src]] (route NULL: every connection through ports[0] alone), conn[src]
 * each one's connection; src below 2^24.  0 or -ENOMEM. */
int tcp_resolve(struct port *ports, const struct tcp_route *route, struct tcp_conn *conn,
		struct tcp_unit *u, uint32_t n, struct tcp_stats *st);

#endif
