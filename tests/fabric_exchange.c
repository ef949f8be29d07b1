/* tests/fabric_exchange.c — the two-rack exchange of tests/ns3/leafspine.cc through
 * emu's hosts and switches (emu/net/fabric.h): two leaves of H hosts of one GPU each,
 * joined by a spine; every host sends K packets of S bytes back to back at t = 0 to its
 * partner in the other rack, through its NIC (RATE), its leaf's uplink and the spine's
 * port to the other leaf (UPLINK), and that leaf's port to the host (RATE), each hop
 * DELAY long; switch ports hold BUFFER packets.  Prints what the ns-3 program prints,
 * for tests/ns3_leafspine.test.sh: a line `drops PORT N` per port that dropped, then
 *   delivered D dropped X last_ns T first_ns F
 * Usage: fabric_exchange H K S RATE UPLINK DELAY_NS BUFFER */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu/net/fabric.h"

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: %s H K S RATE UPLINK DELAY_NS BUFFER\n", argv[0]);
		return 2;
	}
	int h = atoi(argv[1]), k = atoi(argv[2]), n = 2 * h;
	struct fabric_cfg c = { .n = n, .gpus_per_host = 1, .hosts_per_leaf = h,
		.port_rate = strtoull(argv[4], NULL, 10), .uplink_rate = strtoull(argv[5], NULL, 10),
		.port_latency = atoll(argv[6]), .buffer_units = strtoull(argv[7], NULL, 10) };
	struct fabric f;
	struct fabric_unit *u = calloc((size_t)n * (size_t)k, sizeof(*u));

	if (h < 1 || k < 1 || !u || fabric_init(&f, &c, 0))
		return 2;
	for (int i = 0; i < f.nports; i++)	/* every port, not one worker's */
		f.follow[i] = true;
	for (int s = 0; s < n; s++)
		for (int j = 0; j < k; j++)	/* handed to the NIC at once, as ns-3's socket */
			u[s * k + j] = (struct fabric_unit){ .bytes = (uint32_t)atoi(argv[3]),
				.src = (uint16_t)s, .dst = (uint16_t)((s + h) % n), .idx = (uint32_t)j };
	if (fabric_resolve(&f, u, (uint32_t)(n * k), NULL, NULL))
		return 2;
	long got = 0;
	int64_t first = -1, last = -1;
	char name[24];

	for (int i = 0; i < n * k; i++) {
		if (u[i].out < 0)
			continue;
		got++;
		first = first < 0 || u[i].out < first ? u[i].out : first;
		last = u[i].out > last ? u[i].out : last;
	}
	for (int i = 0; i < f.nports; i++)
		if (f.port[i].st.drops) {
			fabric_port_name(&f, i, name, sizeof(name));
			printf("drops %s %llu\n", name, (unsigned long long)f.port[i].st.drops);
		}
	printf("delivered %ld dropped %ld last_ns %lld first_ns %lld\n", got, (long)n * k - got,
	       (long long)last, (long long)first);
	fabric_free(&f);
	free(u);
	return 0;
}
