/* tests/test_fabric.c — hosts and switches (emu/net/fabric.h): each path's ports and
 * times against their sums, an incast into a host's port against the closed form of
 * tests/test_port.c, an oversubscribed leaf uplink's throughput, resends, and that a
 * worker following only its own ports gets its units' times as a view of every port. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/net/fabric.h"

#define GBIT 1000000000ull

static struct fabric_cfg cfg_of(int n, int gpus, int hosts_per_leaf)
{
	return (struct fabric_cfg){ .n = n, .gpus_per_host = gpus, .hosts_per_leaf = hosts_per_leaf,
		.port_rate = 10 * GBIT, .uplink_rate = 5 * GBIT, .fabric_rate = 100 * GBIT,
		.port_latency = 1000, .fabric_latency = 300, .buffer_units = 100 };
}

/* Port names and paths: 8 workers, 2 GPUs a host, 2 hosts a leaf. */
static void test_paths(void **state)
{
	struct fabric_cfg c = cfg_of(8, 2, 2);
	struct fabric f;
	char name[24];
	struct fabric_unit u[3] = {
		{ .t = 0, .bytes = 1500, .src = 0, .dst = 1 },	/* same host */
		{ .t = 0, .bytes = 1500, .src = 2, .dst = 1, .idx = 1 },	/* same leaf */
		{ .t = 0, .bytes = 1500, .src = 4, .dst = 1, .idx = 2 },	/* across the spine */
	};

	(void)state;
	assert_int_equal(fabric_init(&f, &c, 1), 0);
	assert_int_equal(f.hosts, 4);
	assert_int_equal(f.leaves, 2);
	fabric_port_name(&f, fabric_port(&f, FAB_LEAF_DOWN, 1), name, sizeof(name));
	assert_string_equal(name, "leaf1.down");
	fabric_port_name(&f, fabric_port(&f, FAB_GPU_IN, 7), name, sizeof(name));
	assert_string_equal(name, "gpu7.in");
	assert_int_equal(fabric_resolve(&f, u, 3, NULL, NULL), 0);
	/* a port's time: its transmission (1500 B: 1200 ns at 10G, 2400 at 5G, 120 at
	 * 100G) and its latency */
	assert_int_equal(u[0].npath, 1);
	assert_int_equal(u[0].out, 120 + 300);
	assert_int_equal(u[1].npath, 3);
	assert_int_equal(u[1].out, (1200 + 1000) * 2 + 120 + 300);
	assert_int_equal(u[2].npath, 5);
	/* host.up, leaf.up, leaf.down, host.down (behind u[1] from 4400), gpu.in */
	int64_t t = 2200 + 3400 + 3400;	/* at host1.down at 9000, free since 4400 */

	t += 2200;
	assert_int_equal(u[2].out, t + 420);
	fabric_free(&f);
}

/* n hosts of one GPU, each sending k packets back to back at t = 0 through its own NIC
 * (the host's port rate, as the links of tests/test_port.c) into host 0: the closed
 * form of a synchronized incast, the port before it only adding its time. */
static void test_incast(void **state)
{
	struct fabric_cfg c = cfg_of(16, 1, 0);
	struct fabric f;
	struct fabric_unit *u = calloc(15 * 11, sizeof(*u));
	int got = 0;

	(void)state;
	c.fabric_rate = 10 * GBIT;
	for (int s = 1; s < 16; s++)
		for (int i = 0; i < 11; i++)
			u[(s - 1) * 11 + i] = (struct fabric_unit){ .t = 0, .bytes = 1500,
				.src = (uint16_t)s, .dst = 0, .idx = (uint32_t)i };
	assert_int_equal(fabric_init(&f, &c, 0), 0);
	assert_int_equal(fabric_resolve(&f, u, 15 * 11, NULL, NULL), 0);
	for (int i = 0; i < 15 * 11; i++)
		got += u[i].out >= 0;
	assert_int_equal(got, 110);	/* tests/test_port.c: 110 of 165 */
	assert_int_equal(f.port[fabric_port(&f, FAB_HOST_DOWN, 0)].st.drops, 55);
	fabric_free(&f);
	free(u);
}

/* Two leaves of two hosts, the uplink at half a host's rate (4:1): every unit from
 * leaf 0 to leaf 1 through the uplink, back to back at its rate once it is busy. */
static void test_uplink(void **state)
{
	struct fabric_cfg c = cfg_of(4, 1, 2);
	struct fabric f;
	struct fabric_unit u[2000];
	int64_t first = INT64_MAX, last = 0;

	(void)state;
	c.buffer_units = 0;	/* deep buffers: the rate alone */
	for (int i = 0; i < 2000; i++)
		u[i] = (struct fabric_unit){ .t = (i / 2) * 1200, .bytes = 1500,
			.src = (uint16_t)(i % 2), .dst = (uint16_t)(2 + i % 2), .idx = (uint32_t)i };
	assert_int_equal(fabric_init(&f, &c, 2), 0);
	assert_int_equal(fabric_resolve(&f, u, 2000, NULL, NULL), 0);
	const struct port *up = &f.port[fabric_port(&f, FAB_LEAF_UP, 0)];

	assert_int_equal(up->st.units, 2000);
	for (int i = 0; i < 2000; i += 2) {	/* worker 2's units: it follows their path */
		assert_true(u[i].out >= 0);
		last = u[i].out > last ? u[i].out : last;
		first = u[i].out < first ? u[i].out : first;
	}
	/* the uplink sends one unit every 2400 ns: 2000 of them, worker 2 has every other */
	assert_int_equal(up->free_at - (1200 + 1000), 2000 * 2400);
	assert_true(last - first >= 1998 * 2400 - 2400);
	fabric_free(&f);
}

static int64_t resend_twice(void *ctx, int src, int dst, uint32_t k)
{
	(void)ctx;
	(void)src;
	(void)dst;
	return k < 2 ? 100000 : -1;
}

/* A worker's view: its units' times with only its own ports followed equal a view of
 * every port; units to others are not followed past the ports they share. */
static void test_view(void **state)
{
	struct fabric_cfg c = cfg_of(16, 2, 2);
	struct fabric mine, all;
	struct fabric_unit *a = calloc(16 * 15 * 6, sizeof(*a)), *b;
	uint32_t n = 0;

	(void)state;
	c.buffer_units = 6;
	for (int s = 0; s < 16; s++)
		for (int d = 0; d < 16; d++)
			for (int i = 0; s != d && i < 6; i++)
				a[n++] = (struct fabric_unit){ .t = (s * 7 + i) * 300, .bytes = 1500,
					.src = (uint16_t)s, .dst = (uint16_t)d, .idx = (uint32_t)i };
	b = malloc(n * sizeof(*b));
	memcpy(b, a, n * sizeof(*b));
	assert_int_equal(fabric_init(&mine, &c, 5), 0);
	assert_int_equal(fabric_init(&all, &c, 5), 0);
	for (int i = 0; i < all.nports; i++)
		all.follow[i] = true;
	assert_int_equal(fabric_resolve(&mine, a, n, resend_twice, NULL), 0);
	assert_int_equal(fabric_resolve(&all, b, n, resend_twice, NULL), 0);
	uint64_t drops = 0;
	int others = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (a[i].dst == 5) {
			assert_int_equal(a[i].out, b[i].out);
			assert_int_equal(a[i].attempts, b[i].attempts);
		} else if (a[i].out < 0 && b[i].out >= 0) {
			others++;	/* not followed to its end */
		}
	}
	for (int i = 0; i < all.nports; i++)
		drops += all.port[i].st.drops;
	assert_true(drops > 0);
	assert_true(others > 0);
	fabric_free(&mine);
	fabric_free(&all);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_incast),
		cmocka_unit_test(test_uplink),
		cmocka_unit_test(test_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
