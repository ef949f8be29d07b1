/* tests/port_incast.c — the incast of tests/ns3/incast.cc through emu's own network
 * model: N links (emu/net/net.h: unit = packet, each its own rate queue, latency D) into
 * one switch port (emu/net/port.h: rate, buffer of B packets, then latency D to the
 * receiver), every sender handing K packets of S bytes to its link at t = 0.  Prints what
 * the ns-3 program prints, for tests/ns3_incast.test.sh to compare:
 *   delivered D dropped X last_ns T first_ns F
 * Usage: port_incast N K S RATE_BIT_S PORT_RATE_BIT_S B DELAY_NS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu/net/net.h"
#include "emu/net/port.h"
#include "tests/net_base.h"

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: %s N K S RATE PORT_RATE B DELAY_NS\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]), k = atoi(argv[2]);
	long s = atol(argv[3]);
	double rate = atof(argv[4]), port_rate = atof(argv[5]);
	struct port_cfg pc = { .rate = (uint64_t)port_rate, .latency = atoll(argv[7]),
			       .buffer_units = (uint64_t)atoll(argv[6]) };
	struct net_cfg c = cfg_base();

	c.unit = UNIT_PACKET;
	c.mtu = s;
	c.bandwidth = rate;
	c.latency = atoll(argv[7]);
	struct port_unit *u = calloc((size_t)n * k, sizeof(*u));
	uint64_t *arrived = calloc(((size_t)k + 63) / 64, sizeof(*arrived));
	int64_t *at = calloc((size_t)k, sizeof(*at));
	uint32_t m = 0;

	if (n < 1 || k < 1 || s < 1 || !u || !arrived || !at)
		return 2;
	for (int src = 0; src < n; src++) {
		struct net_link l;
		struct net_txq q = { 0 };
		struct net_msg msg;

		if (net_link_init(&l, &c, 1, src, n) ||
		    net_send(&l, &q, (size_t)k * (size_t)s, 0, 0, 0, arrived, at, NULL, &msg))
			return 2;
		for (int i = 0; i < k; i++)
			if (at[i] >= 0)
				u[m++] = (struct port_unit){ .t = at[i], .bytes = (uint32_t)s,
							     .src = (uint32_t)src, .idx = (uint32_t)i };
	}
	struct port p;
	int64_t first = -1, last = -1;
	long got = 0;

	port_init(&p, &pc);
	if (port_resolve(&p, u, m, NULL, NULL))
		return 2;
	for (uint32_t i = 0; i < m; i++) {
		if (u[i].out < 0)
			continue;
		got++;
		first = first < 0 || u[i].out < first ? u[i].out : first;
		last = u[i].out > last ? u[i].out : last;
	}
	printf("delivered %ld dropped %ld last_ns %lld first_ns %lld\n", got,
	       (long)n * k - got, (long long)last, (long long)first);
	port_free(&p);
	free(u);
	free(arrived);
	free(at);
	return 0;
}
