/* tests/test_net_trace.c — delivery traces and time series of links (emu/net/trace.h):
 * arrivals against the opportunities written down, the series' values by time, and the
 * files' errors naming file and line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "emu/net/net.h"
#include "emu/net/trace.h"
#include "tests/net_base.h"

/* A file holding text, its path in path (removed by the caller) */
static void write_file(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

#define MS 1000000

/* One opportunity a millisecond from 1 to 4 ms, repeating every 4 ms: packets sent at 0
 * leave at 1, 2, 3, 4, then 5 (4 + 1) and 6 ms; a 3000-byte unit takes two; a latency
 * of 2.5 ms waits for the first opportunity after it; the queue's cursor carries over
 * to the next message. */
static void test_trace_arrivals(void **state)
{
	char path[] = "/tmp/emu-test-trace-XXXXXX", err[512];
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[1];
	int64_t arr[8];

	write_file(path, "1\n2\n3\n4\n");
	assert_int_equal(net_trace_load(path, err, sizeof(err)), 0);
	c.unit = UNIT_PACKET;
	c.mtu = 1500;
	snprintf(c.trace, sizeof(c.trace), "%s", path);
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(net_send(&l, &q, 6 * 1500, 0, 0, 0, bits, arr, NULL, &m), 0);
	for (int u = 0; u < 6; u++)
		assert_int_equal(arr[u], (int64_t)(u + 1) * MS);
	assert_int_equal(q.cursor, 6);
	/* the next message, at 6.5 ms: opportunities 7 ms (4 + 3) and 8 ms on */
	assert_int_equal(net_send(&l, &q, 2 * 1500, 1, 0, 6500000, bits, arr, NULL, &m), 0);
	assert_int_equal(arr[0], 7 * MS);
	assert_int_equal(arr[1], 8 * MS);

	/* 3000-byte packets need two opportunities each; the latency comes first */
	c.mtu = 3000;
	c.latency = 2500000;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	q = (struct net_txq){ 0 };
	assert_int_equal(net_send(&l, &q, 2 * 3000, 0, 0, 0, bits, arr, NULL, &m), 0);
	assert_int_equal(arr[0], 4 * MS);	/* 3 and 4 ms */
	assert_int_equal(arr[1], 6 * MS);	/* 5 (4 + 1) and 6 ms */

	/* a trace with a bandwidth too is no link: refused */
	c.bandwidth = 1e9;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), -EINVAL);
	unlink(path);
}

/* Several opportunities in one millisecond, and one at 0: 0, 0, 5 ms repeating every 5 */
static void test_trace_bursts(void **state)
{
	char path[] = "/tmp/emu-test-trace-XXXXXX", err[512];
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[1];
	int64_t arr[6];
	static const int64_t want[6] = { 0, 0, 5 * MS, 5 * MS, 5 * MS, 10 * MS };

	write_file(path, "0\n0\n5\n");
	assert_int_equal(net_trace_load(path, err, sizeof(err)), 0);
	c.unit = UNIT_PACKET;
	c.mtu = 1000;
	snprintf(c.trace, sizeof(c.trace), "%s", path);
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(net_send(&l, &q, 6 * 1000, 0, 0, 0, bits, arr, NULL, &m), 0);
	for (int u = 0; u < 6; u++)
		assert_int_equal(arr[u], want[u]);
	unlink(path);
}

/* A series: lossless at 1 ms until 1 ms, everything lost until 2 ms, then 5 ms */
static void test_series(void **state)
{
	char path[] = "/tmp/emu-test-series-XXXXXX", err[512];
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[1];
	int64_t arr[1];

	write_file(path, "time_s,loss_p,latency_s\n0,0,0.001\n0.001,1,0.001\n0.002,0,0.005\n");
	assert_int_equal(net_series_load(path, err, sizeof(err)), 0);
	snprintf(c.series, sizeof(c.series), "%s", path);
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(net_send(&l, &q, 100, 0, 0, 500000, bits, arr, NULL, &m), 0);
	assert_int_equal(arr[0], 1500000);
	assert_int_equal(net_send(&l, &q, 100, 1, 0, 1500000, bits, arr, NULL, &m), 0);
	assert_int_equal(m.narrived, 0);
	assert_int_equal(net_send(&l, &q, 100, 2, 0, 2500000, bits, arr, NULL, &m), 0);
	assert_int_equal(arr[0], 7500000);
	/* with a loss model of its own the series cannot give Bernoulli loss: refused */
	c.loss = LOSS_GILBERT;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), -EINVAL);
	unlink(path);
}

/* Bad files: the message names the file and the line, nothing is loaded */
static void test_bad_files(void **state)
{
	static const struct { const char *text, *want; int series; } bad[] = {
		{ "1\n3\n2\n", ":3: 2 ms is before the line above", 0 },
		{ "1\nx\n", ":2: \"x\" is not a time in whole ms", 0 },
		{ "0\n0\n", ": no opportunity after 0 ms", 0 },
		{ "time,loss\n0,0\n", ":1: expected the header time_s,loss_p,latency_s", 1 },
		{ "time_s,loss_p,latency_s\n0,2,0\n", ":2: expected time_s >= 0, loss_p in [0, 1]", 1 },
		{ "time_s,loss_p,latency_s\n1,0,0\n", ": the first row must be at time 0", 1 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char path[] = "/tmp/emu-test-bad-XXXXXX", err[512], want[256];

		write_file(path, bad[i].text);
		assert_int_equal(bad[i].series ? net_series_load(path, err, sizeof(err)) :
				 net_trace_load(path, err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "%s%s", path, bad[i].want);
		if (strncmp(err, want, strlen(want)))
			fail_msg("case %zu: \"%s\" does not start with \"%s\"", i, err, want);
		assert_null(bad[i].series ? (const void *)net_series_find(path) :
			    (const void *)net_trace_find(path));
		unlink(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_arrivals),
		cmocka_unit_test(test_trace_bursts),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
