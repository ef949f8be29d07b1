/* tests/tcp_incast.c — the TCP incast of tests/ns3/tcp_incast.cc through emu's own
 * transport (emu/net/tcp.h): N senders, each on its own link (RATE, DELAY) to one switch
 * port (RATE, BUFFER packets, DELAY to the receiver), each sending one block of SRU bytes
 * in packets of 1500 bytes on the wire (1458 of payload) over a connection that lives
 * for all rounds; a round ends when the receiver has every block and every sender the ACK
 * of its last unit, and the next one starts 1 ms later; WARMUP unmeasured rounds come
 * first.  The connections start as ns-3's do after their handshake (the RTT sample of a
 * SYN and SYN-ACK of 46 bytes).  Prints what the ns-3 program prints, for
 * tests/ns3_tcp_incast.test.sh:
 *   senders N goodput_mbps G round_ms T timeouts K retransmits X drops D
 * Usage: tcp_incast N RTO_MIN_NS [ROUNDS [WARMUP [SRU [RATE [DELAY_NS [BUFFER]]]]]] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu/net/port.h"
#include "emu/net/tcp.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s N RTO_MIN_NS [ROUNDS [WARMUP [SRU [RATE [DELAY_NS "
			"[BUFFER]]]]]]\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]), rounds = argc > 3 ? atoi(argv[3]) : 5;
	int warmup = argc > 4 ? atoi(argv[4]) : 1;
	long sru = argc > 5 ? atol(argv[5]) : 65536;
	uint64_t rate = argc > 6 ? strtoull(argv[6], NULL, 10) : 1000000000ull;
	int64_t delay = argc > 7 ? atoll(argv[7]) : 25000, rto_min = atoll(argv[2]);
	uint64_t buffer = argc > 8 ? strtoull(argv[8], NULL, 10) : 32;
	const uint32_t mss = 1458, hdr = 42;
	uint32_t k = (uint32_t)((sru + mss - 1) / mss);

	if (n < 1 || n > 4096 || rounds < 1 || warmup < 0 || sru < 1 || !rate)
		return 2;
	struct port_cfg pc = { .rate = rate, .latency = delay, .buffer_units = buffer };
	struct port p;
	struct tcp_conn *conn = calloc((size_t)n, sizeof(*conn));
	struct tcp_unit *u = calloc((size_t)n * k, sizeof(*u));
	struct tcp_stats st = { 0 };

	if (!conn || !u)
		return 2;
	port_init(&p, &pc);
	/* ns-3's handshake: SYN and SYN-ACK of 46 bytes over four hops give the first RTT
	 * sample, the timer from it */
	int64_t hs = 4 * (delay + port_tx_ns(rate, 46));

	for (int s = 0; s < n; s++) {
		conn[s] = (struct tcp_conn){ .tcp = true, .cc = TCP_NEWRENO, .init_cwnd = 10,
			.mss = mss, .hdr = hdr, .rto_init = rto_min, .rto_min = rto_min,
			.rto_max = 60000000000, .granularity = TCP_GRANULARITY,
			.max_retries = 1000, .rate = rate, .owd = delay,
			.ack_delay = 2 * (delay + port_tx_ns(rate, hdr)) };
		tcp_conn_start(&conn[s]);
		conn[s].srtt = hs;
		conn[s].rttvar = hs / 2;
		conn[s].rto = hs + (hs * 2 > TCP_GRANULARITY ? hs * 2 : TCP_GRANULARITY);
		if (conn[s].rto < rto_min)
			conn[s].rto = rto_min;
	}
	int64_t start = 0, measured = 0;
	uint64_t drops0 = 0;
	struct tcp_stats st0 = { 0 };

	for (int r = 0; r < warmup + rounds; r++) {
		if (r == warmup) {
			drops0 = p.st.drops;
			st0 = st;
		}
		for (int s = 0; s < n; s++) {
			int64_t t = start;

			for (uint32_t j = 0; j < k; j++) {
				uint32_t bytes = (j + 1 < k ? mss : (uint32_t)(sru - (long)mss * (k - 1))) + hdr;

				/* back to back on its link from the round's start, if the window let it */
				t += port_tx_ns(rate, bytes);
				u[(size_t)s * k + j] = (struct tcp_unit){ .idx = j, .src = (uint16_t)s,
					.bytes = bytes, .t = t + delay };
			}
		}
		if (tcp_resolve(&p, NULL, conn, u, (uint32_t)n * k, &st))
			return 2;
		int64_t end = start;

		for (size_t i = 0; i < (size_t)n * k; i++) {
			if (u[i].out < 0) {
				fprintf(stderr, "a unit was never delivered\n");
				return 1;
			}
			end = u[i].out > end ? u[i].out : end;
		}
		end += conn[0].ack_delay;	/* the last ACK back at its sender */
		if (r >= warmup)
			measured += end - start;
		start = end + 1000000;	/* the next round 1 ms later, as the ns-3 program's */
	}
	double secs = (double)measured * 1e-9;

	printf("senders %d goodput_mbps %.1f round_ms %.3f timeouts %llu retransmits %llu drops "
	       "%llu\n", n, (double)n * (double)sru * 8 * rounds / secs / 1e6, secs * 1e3 / rounds,
	       (unsigned long long)(st.timeouts - st0.timeouts),
	       (unsigned long long)(st.retransmits - st0.retransmits),
	       (unsigned long long)(p.st.drops - drops0));
	port_free(&p);
	free(conn);
	free(u);
	return 0;
}
