/* tests/test_port.c — a switch's egress port (emu/net/port.h) against closed forms: a
 * synchronized incast into a drop-tail buffer (delivered units and the last arrival,
 * exact for equal line rates), the mean wait of an M/D/1 queue, an oversubscribed port's
 * throughput; ECN marks, resends, and a result that does not depend on the units'
 * order in the call. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/net/port.h"

#define GBIT 1000000000ull

/* n senders, each sending k units of s bytes back to back at t = 0 through its own
 * link of rate (no other traffic on it) and delay d: unit i of a sender reaches the
 * port at (i + 1) * T + d, T its transmission time. */
static struct port_unit *incast(int n, int k, uint32_t s, uint64_t rate, int64_t d)
{
	struct port_unit *u = calloc((size_t)n * k, sizeof(*u));
	int64_t T = port_tx_ns(rate, s);

	for (int src = 0; src < n; src++)
		for (int i = 0; i < k; i++)
			u[src * k + i] = (struct port_unit){ .t = (i + 1) * T + d, .bytes = s,
							      .src = (uint32_t)src, .idx = (uint32_t)i };
	return u;
}

/* Units delivered by the incast above into a buffer of b units, port rate = link rate:
 * rounds of n arrivals T apart; the first finds the port idle, every later arrival
 * finds the units waiting that start at or after its time (port.h: arrivals come
 * before the unit starting at that instant). */
static int incast_delivered(int n, int k, int b)
{
	int waiting_total = n - 1 < b ? n - 1 : b;	/* round 1: one goes at once */

	for (int r = 2; r <= k; r++) {
		int before = waiting_total - (r - 2);	/* those started at 2T .. (r-1)T left */
		int take = b - before < n ? b - before : n;

		waiting_total += take;
	}
	return waiting_total + 1;
}

static void check_incast(int n, int k, int b)
{
	const uint64_t rate = 10 * GBIT;
	const int64_t d = 1000, lat = 1000;
	struct port_cfg cfg = { .rate = rate, .latency = lat, .buffer_units = (uint64_t)b };
	struct port p;
	struct port_unit *u = incast(n, k, 1500, rate, d);
	int64_t T = port_tx_ns(rate, 1500), last = -1;
	int got = 0;

	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_resolve(&p, u, (uint32_t)(n * k), NULL, NULL), 0);
	for (int i = 0; i < n * k; i++)
		if (u[i].out >= 0) {
			got++;
			last = u[i].out > last ? u[i].out : last;
		}
	int want = incast_delivered(n, k, b);

	assert_int_equal(got, want);
	assert_int_equal(p.st.units, (uint64_t)want);
	assert_int_equal(p.st.drops, (uint64_t)(n * k - want));
	/* busy from the first arrival until the last delivered unit has gone */
	assert_int_equal(last, T + d + (int64_t)want * T + lat);
	port_free(&p);
	free(u);
}

static void test_incast(void **state)
{
	(void)state;
	/* ns-3 (tests/ns3/incast.cc) for 15 senders of 11 packets, 100 packets of buffer */
	assert_int_equal(incast_delivered(15, 11, 100), 110);
	int ns[] = { 1, 2, 4, 8, 15, 16, 32 }, bs[] = { 16, 100 };

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		for (size_t j = 0; j < 2; j++)
			check_incast(ns[i], 11, bs[j]);
}

/* A buffer in bytes holds as many whole units as fit; a port without rate is no port. */
static void test_bytes_and_no_port(void **state)
{
	struct port_cfg cfg = { .rate = 10 * GBIT, .buffer_bytes = 100 * 1500 + 1499 };
	struct port p;
	struct port_unit *u = incast(15, 11, 1500, 10 * GBIT, 0);
	uint32_t got = 0;

	(void)state;
	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_resolve(&p, u, 165, NULL, NULL), 0);
	for (int i = 0; i < 165; i++)
		got += u[i].out >= 0;
	assert_int_equal(got, 110);
	port_free(&p);

	cfg = (struct port_cfg){ .rate = 0, .latency = 7 };
	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_resolve(&p, u, 165, NULL, NULL), 0);
	for (int i = 0; i < 165; i++)
		assert_int_equal(u[i].out, u[i].t + 7);
	port_free(&p);
	free(u);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Poisson arrivals of fixed-size units at load rho into an unbounded buffer: the mean
 * wait is rho * D / (2 (1 - rho)) (M/D/1, Pollaczek-Khinchine), D the service time. */
static void test_md1(void **state)
{
	const uint32_t n = 400000;
	const uint64_t rate = 10 * GBIT;
	const double D = (double)port_tx_ns(rate, 1250);	/* 1000 ns */
	double rhos[] = { 0.3, 0.6, 0.85 };

	(void)state;
	for (int r = 0; r < 3; r++) {
		struct port_cfg cfg = { .rate = rate };
		struct port p;
		struct port_unit *u = calloc(n, sizeof(*u));
		uint64_t s = 0x9E3779B97F4A7C15ull;
		double t = 0, mean_gap = D / rhos[r];

		for (uint32_t i = 0; i < n; i++) {
			double x = (double)(rng_next(&s) >> 11) / 9007199254740992.0;

			t += -log1p(-x) * mean_gap;
			u[i] = (struct port_unit){ .t = (int64_t)t, .bytes = 1250, .idx = i };
		}
		assert_int_equal(port_init(&p, &cfg), 0);
		assert_int_equal(port_resolve(&p, u, n, NULL, NULL), 0);
		double got = p.st.wait_units_ns / (double)n;
		double want = rhos[r] * D / (2 * (1 - rhos[r]));

		assert_true(fabs(got - want) < 0.03 * want);
		port_free(&p);
		free(u);
	}
}

/* Four senders at 10 Gbit/s into one 10 Gbit/s port (4:1), deep buffer: the port sends
 * at its rate, back to back, from the first unit to the last. */
static void test_oversubscribed(void **state)
{
	struct port_cfg cfg = { .rate = 10 * GBIT };
	struct port p;
	struct port_unit *u = incast(4, 1000, 1500, 10 * GBIT, 0);
	int64_t first = INT64_MAX, last = 0;

	(void)state;
	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_resolve(&p, u, 4000, NULL, NULL), 0);
	for (int i = 0; i < 4000; i++) {
		assert_true(u[i].out >= 0);
		first = u[i].t < first ? u[i].t : first;
		last = u[i].out > last ? u[i].out : last;
	}
	/* 4000 x 1500 bytes at 10 Gbit/s = 4.8 ms, exactly */
	assert_int_equal(last - first, 4800000);
	/* after round r, 3 + 4 (r - 1) have waited and r - 2 of them started: 3r + 1 */
	assert_int_equal(p.st.peak_units, 3 * 1000 + 1);
	port_free(&p);
	free(u);
}

/* A unit is marked when more than ecn bytes wait as it comes: in round 1 of a 4-sender
 * incast with a threshold of one unit, the fourth (2 waiting before it) and later. */
static void test_ecn(void **state)
{
	struct port_cfg cfg = { .rate = 10 * GBIT, .ecn_bytes = 1500 };
	struct port p;
	struct port_unit *u = incast(4, 1, 1500, 10 * GBIT, 0);

	(void)state;
	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_resolve(&p, u, 4, NULL, NULL), 0);
	assert_false(u[0].marked);
	assert_false(u[1].marked);	/* 0 waiting */
	assert_false(u[2].marked);	/* 1 waiting: 1500, not more */
	assert_true(u[3].marked);	/* 2 waiting */
	assert_int_equal(p.st.marks, 1);
	port_free(&p);
	free(u);
}

/* Resends: a dropped unit comes back `wait` later, until its sender gives up. */
static int64_t resend_twice(void *ctx, uint32_t src, uint32_t k)
{
	(void)ctx;
	(void)src;
	return k < 2 ? 200000 : -1;
}

static int64_t resend_always(void *ctx, uint32_t src, uint32_t k)
{
	(void)ctx;
	(void)src;
	(void)k;
	return 1000000;
}

static void test_resend(void **state)
{
	struct port_cfg cfg = { .rate = 10 * GBIT, .buffer_units = 4 };
	struct port p;
	struct port_unit *u = incast(16, 8, 1500, 10 * GBIT, 0);
	uint64_t attempts = 0;

	(void)state;
	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_resolve(&p, u, 128, resend_always, NULL), 0);
	for (int i = 0; i < 128; i++) {
		assert_true(u[i].out >= 0);
		attempts += u[i].attempts;
	}
	assert_int_equal(p.st.resends, p.st.drops);
	assert_int_equal(attempts, 128 + p.st.resends);
	assert_true(p.st.drops > 0);
	port_free(&p);

	/* giving up after two resends: a unit dropped three times is lost */
	free(u);
	u = incast(16, 8, 1500, 10 * GBIT, 0);
	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_resolve(&p, u, 128, resend_twice, NULL), 0);
	uint64_t lost = 0;

	for (int i = 0; i < 128; i++) {
		assert_true(u[i].attempts >= 1 && u[i].attempts <= 3);
		if (u[i].out < 0) {
			assert_int_equal(u[i].attempts, 3);
			lost++;
		}
	}
	assert_true(lost > 0);
	assert_int_equal(p.st.drops, p.st.resends + lost);
	port_free(&p);
	free(u);
}

/* The order of the units in the call changes nothing: the port takes them by time. */
static void test_order(void **state)
{
	struct port_cfg cfg = { .rate = 10 * GBIT, .buffer_units = 20, .ecn_bytes = 6000 };
	struct port p, q;
	struct port_unit *a = incast(12, 9, 1500, 10 * GBIT, 0);
	struct port_unit *b = malloc(108 * sizeof(*b));
	uint64_t s = 12345;

	(void)state;
	memcpy(b, a, 108 * sizeof(*b));
	for (int i = 107; i > 0; i--) {	/* shuffled */
		int j = (int)(rng_next(&s) % (uint64_t)(i + 1));
		struct port_unit t = b[i];

		b[i] = b[j];
		b[j] = t;
	}
	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_init(&q, &cfg), 0);
	assert_int_equal(port_resolve(&p, a, 108, resend_twice, NULL), 0);
	assert_int_equal(port_resolve(&q, b, 108, resend_twice, NULL), 0);
	for (int i = 0; i < 108; i++) {
		const struct port_unit *x = &b[i], *y = &a[x->src * 9 + x->idx];

		assert_int_equal(x->out, y->out);
		assert_int_equal(x->attempts, y->attempts);
		assert_int_equal(x->marked, y->marked);
	}
	assert_memory_equal(&p.st, &q.st, sizeof(p.st));
	port_free(&p);
	port_free(&q);
	free(a);
	free(b);
}

/* A later call's unit that reaches the port before the last one resolved waits behind
 * what is queued (port.h). */
static void test_carry_over(void **state)
{
	struct port_cfg cfg = { .rate = 10 * GBIT };
	struct port p;
	struct port_unit a[3] = { { .t = 0, .bytes = 1500 }, { .t = 0, .bytes = 1500, .idx = 1 },
				  { .t = 5000, .bytes = 1500, .idx = 2 } };
	struct port_unit b[1] = { { .t = 100, .bytes = 1500, .src = 1 } };

	(void)state;
	assert_int_equal(port_init(&p, &cfg), 0);
	assert_int_equal(port_resolve(&p, a, 3, NULL, NULL), 0);
	assert_int_equal(a[1].out, 2400);
	assert_int_equal(a[2].out, 6200);
	assert_int_equal(port_resolve(&p, b, 1, NULL, NULL), 0);
	assert_int_equal(b[0].out, 7400);	/* taken as reaching it at 5000 */
	port_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incast),
		cmocka_unit_test(test_bytes_and_no_port),
		cmocka_unit_test(test_md1),
		cmocka_unit_test(test_oversubscribed),
		cmocka_unit_test(test_ecn),
		cmocka_unit_test(test_resend),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_carry_over),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
