/* tests/test_tcp.c — connections through a switch port (emu/net/tcp.h): a window that
 * holds units back until ACKs come, a loss repaired by three duplicate ACKs and one at
 * the tail by the timer, a synchronized incast whose goodput collapses with a 200 ms
 * minimum timeout and holds with 1 ms, DCTCP keeping the queue below the buffer
 * where NewReno overflows it, DCTCP cutting its window on its link's ECN marks, and
 * routes of more than one port. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/net/tcp.h"

#define GBIT 1000000000ull
#define T1500 12000	/* 1500 bytes at 1 Gbit/s, ns */

static struct tcp_conn conn_of(int64_t rto_min, enum tcp_cc cc)
{
	struct tcp_conn c = { .tcp = true, .cc = cc, .init_cwnd = 10, .mss = 1500,
			      .rto_init = rto_min, .rto_min = rto_min, .rto_max = 60000000000,
			      .granularity = TCP_GRANULARITY, .max_retries = 100,
			      .rate = GBIT, .owd = 25000, .ack_delay = 50000 };

	tcp_conn_start(&c);
	return c;
}

/* n senders, k units each, back to back on their links from t0 */
static void fill(struct tcp_unit *u, int n, int k, int64_t t0)
{
	for (int s = 0; s < n; s++)
		for (int j = 0; j < k; j++)
			u[s * k + j] = (struct tcp_unit){ .t = t0 + (j + 1) * T1500 + 25000,
				.bytes = 1500, .idx = (uint32_t)j, .src = (uint16_t)s };
}

/* One flow, no loss: the first 10 units go at their links' times, the 11th waits for
 * the first ACK (its unit at the receiver, 50 us back, then 12 us on the link and 25 us
 * to the port). */
static void test_window(void **state)
{
	struct port_cfg pc = { .rate = GBIT, .latency = 25000, .buffer_units = 1000 };
	struct port p;
	struct tcp_conn c = conn_of(1000000, TCP_NEWRENO);
	struct tcp_unit u[30];
	struct tcp_stats st = { 0 };

	(void)state;
	port_init(&p, &pc);
	fill(u, 1, 30, 0);
	assert_int_equal(tcp_resolve(&p, NULL, &c, u, 30, &st), 0);
	for (int j = 0; j < 10; j++)	/* port: 12 us each, from its own time */
		assert_int_equal(u[j].out, u[j].t + T1500 + 25000);
	int64_t ack0 = u[0].out + 50000;

	assert_int_equal(u[10].out, ack0 + T1500 + 25000 + T1500 + 25000);
	assert_true(u[29].out > 0);
	assert_int_equal(st.retransmits, 0);
	assert_int_equal(st.timeouts, 0);
	assert_true(c.cwnd > 10 * 1500);	/* slow start grew it */
	port_free(&p);
}

/* A unit the link lost in the middle: three duplicate ACKs resend it; at the tail:
 * no duplicates come, the timer resends it. */
static void test_repair(void **state)
{
	struct port_cfg pc = { .rate = GBIT, .latency = 25000, .buffer_units = 1000 };
	struct port p;
	struct tcp_conn c = conn_of(1000000, TCP_NEWRENO);
	struct tcp_unit u[20];
	struct tcp_stats st = { 0 };

	(void)state;
	port_init(&p, &pc);
	fill(u, 1, 20, 0);
	u[4].lost_on_link = true;
	assert_int_equal(tcp_resolve(&p, NULL, &c, u, 20, &st), 0);
	for (int j = 0; j < 20; j++)
		assert_true(u[j].out > 0);
	assert_int_equal(st.fast_retransmits, 1);
	assert_int_equal(st.timeouts, 0);
	assert_true(u[4].out > u[7].out);	/* after the duplicates of 5, 6, 7 */

	memset(&st, 0, sizeof(st));
	c = conn_of(1000000, TCP_NEWRENO);
	fill(u, 1, 20, 10000000);
	u[19].lost_on_link = true;
	assert_int_equal(tcp_resolve(&p, NULL, &c, u, 20, &st), 0);
	assert_int_equal(st.fast_retransmits, 0);
	assert_int_equal(st.timeouts, 1);
	assert_true(u[19].out > u[18].out + 1000000 - 100000);	/* about an rto later */
	port_free(&p);
}

/* Goodput of rounds of a synchronized incast: n senders of 45 units into a port of 32;
 * drops: after the first round. */
static double goodput(int n, int64_t rto_min, enum tcp_cc cc, uint64_t ecn, uint64_t *drops)
{
	struct port_cfg pc = { .rate = GBIT, .latency = 25000, .buffer_units = 32,
			       .ecn_bytes = ecn };
	struct port p;
	struct tcp_conn *c = malloc((size_t)n * sizeof(*c));
	struct tcp_unit *u = malloc((size_t)n * 45 * sizeof(*u));
	struct tcp_stats st = { 0 };
	int64_t t0 = 0;
	uint64_t drops0 = 0;

	port_init(&p, &pc);
	for (int s = 0; s < n; s++)
		c[s] = conn_of(rto_min, cc);
	for (int r = 0; r < 6; r++) {
		if (r == 1)
			drops0 = p.st.drops;	/* the first round's initial windows */
		fill(u, n, 45, t0);
		assert_int_equal(tcp_resolve(&p, NULL, c, u, (uint32_t)n * 45, &st), 0);
		for (int i = 0; i < n * 45; i++) {
			assert_true(u[i].out > 0);
			t0 = u[i].out > t0 ? u[i].out : t0;
		}
	}
	*drops = p.st.drops - drops0;
	port_free(&p);
	free(c);
	free(u);
	return (double)n * 45 * 1500 * 8 * 6 / ((double)t0 * 1e-9);
}

static void test_incast(void **state)
{
	uint64_t d;
	double slow16 = goodput(16, 200000000, TCP_NEWRENO, 0, &d);
	double fast16 = goodput(16, 1000000, TCP_NEWRENO, 0, &d);
	double one = goodput(1, 200000000, TCP_NEWRENO, 0, &d);

	(void)state;
	assert_true(one > 0.8e9);		/* one sender: near the line */
	assert_true(fast16 > 0.6e9);		/* 1 ms: holds */
	assert_true(slow16 < fast16 / 10);	/* 200 ms: collapses */
}

/* DCTCP, marking above 20 units' bytes of a 32-unit buffer: fewer drops than NewReno
 * once the first round's initial windows have gone through. */
static void test_dctcp(void **state)
{
	uint64_t reno, dctcp;

	(void)state;
	goodput(8, 1000000, TCP_NEWRENO, 20 * 1500, &reno);
	goodput(8, 1000000, TCP_DCTCP, 20 * 1500, &dctcp);
	print_message("drops: newreno %llu, dctcp %llu\n", (unsigned long long)reno,
		      (unsigned long long)dctcp);
	assert_true(reno > 0);
	assert_true(dctcp < reno / 2);
}

/* netem's ecn on the link: units it marked (marked_on_link) are echoed by their ACKs as
 * the port's marks are, and DCTCP cuts its window by them where the port marks nothing;
 * NewReno ignores them.  One flow of 200 units, every 4th marked on its link. */
static void test_link_marks(void **state)
{
	struct port_cfg pc = { .rate = GBIT, .latency = 25000, .buffer_units = 1000 };
	struct port p;
	struct tcp_unit u[200];
	double cwnd[2][2];

	(void)state;
	for (int cc = 0; cc < 2; cc++)
		for (int marked = 0; marked < 2; marked++) {
			struct tcp_conn c = conn_of(1000000, cc ? TCP_DCTCP : TCP_NEWRENO);
			struct tcp_stats st = { 0 };

			port_init(&p, &pc);
			fill(u, 1, 200, 0);
			for (int j = 0; j < 200; j++)
				u[j].marked_on_link = marked && j % 4 == 0;
			assert_int_equal(tcp_resolve(&p, NULL, &c, u, 200, &st), 0);
			for (int j = 0; j < 200; j++)
				assert_true(u[j].out > 0);	/* marked, not lost */
			assert_int_equal(st.retransmits, 0);
			assert_int_equal(st.ecn_echoes, marked ? 50 : 0);
			cwnd[cc][marked] = c.cwnd;
			print_message("%s, %s: cwnd %.2f units\n", cc ? "dctcp" : "newreno",
				      marked ? "a quarter marked on the link" : "no marks",
				      (double)c.cwnd / c.mss);
			port_free(&p);
		}
	assert_true(cwnd[0][1] == cwnd[0][0]);	/* NewReno does not read the echo */
	assert_true(cwnd[1][1] < cwnd[1][0] / 2);
}

/* Routes (the hosts' fabric): a route of the one port is that port; a first port with no
 * rate and no latency changes nothing; a second port that is the slow one drops as the
 * lone port did, and the units it drops are repaired. */
static void test_routes(void **state)
{
	struct port_cfg fast = { 0 };
	struct port_cfg slow = { .rate = GBIT, .latency = 25000, .buffer_units = 32 };
	struct port ports[2];
	struct tcp_conn c[8];
	struct tcp_unit lone[8 * 45], one[8 * 45], two[8 * 45];
	struct tcp_route r1[8], r2[8];
	struct tcp_stats st = { 0 };
	uint64_t drops[3];

	(void)state;
	for (int v = 0; v < 3; v++) {
		struct tcp_unit *u = v == 0 ? lone : v == 1 ? one : two;

		port_init(&ports[0], v == 2 ? &fast : &slow);
		port_init(&ports[1], &slow);
		for (int s = 0; s < 8; s++) {
			c[s] = conn_of(1000000, TCP_NEWRENO);
			r1[s] = (struct tcp_route){ .npath = 1, .path = { 0 } };
			r2[s] = (struct tcp_route){ .npath = 2, .path = { 0, 1 } };
		}
		fill(u, 8, 45, 0);
		assert_int_equal(tcp_resolve(ports, v == 0 ? NULL : v == 1 ? r1 : r2, c, u, 8 * 45,
					     &st), 0);
		drops[v] = ports[v == 2].st.drops;
		port_free(&ports[0]);
		port_free(&ports[1]);
	}
	assert_true(drops[0] > 0);
	assert_int_equal(drops[1], drops[0]);
	assert_int_equal(drops[2], drops[0]);
	for (int i = 0; i < 8 * 45; i++) {
		assert_true(lone[i].out > 0);
		assert_int_equal(one[i].out, lone[i].out);
		assert_int_equal(two[i].out, lone[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_repair),
		cmocka_unit_test(test_incast),
		cmocka_unit_test(test_dctcp),
		cmocka_unit_test(test_link_marks),
		cmocka_unit_test(test_routes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
