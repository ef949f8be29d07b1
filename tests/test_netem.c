/* tests/test_netem.c — the unreliable deadline, the byte counts, and netem's duplicate,
 * reorder, corrupt and limit (net.h) against their closed forms, and ecn against the
 * same link without it.
 *
 * Every statistical check sends 10^6 units or more from a fixed seed (deterministic) and
 * passes within 3 sds of the closed form.  Independent draws get the binomial sd; the
 * reorder counter and a queue make consecutive units dependent, so those use the
 * renewal-reward sd (reorder) or batch means (limit, see bench_limit.c).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/bench/bench.h"
#include "emu/net/dist.h"
#include "emu/net/net.h"
#include "tests/net_base.h"

enum { N = 1000000 };

/* |got - want| within k sds; prints both either way. */
static void near(const char *what, double got, double want, double sd, double k)
{
	print_message("%-40s %.6f  closed form %.6f  (%+.2f sd)\n", what, got, want,
		      sd > 0 ? (got - want) / sd : 0.0);
	assert_true(fabs(got - want) <= k * sd + 1e-12);
}

static double binomial_sd(double p, double n)
{
	return sqrt(p * (1 - p) / n);
}

/* P(latency + jitter z > timeout) for netem's distributions: uniform's integer draw
 * latency - jitter + r, r uniform in [0, 2 jitter); a table's values v each with
 * 1 / n, the delay latency + jitter v / 8192 rounded half away from zero. */
static double late_share(enum net_dist d, int64_t latency, int64_t jitter, int64_t timeout)
{
	const struct net_dist_table *t = net_dist_find(d, NULL);
	int64_t k = timeout - latency + jitter;	/* late when r > k */
	long late = 0;

	if (!t)
		return k < 0 ? 1 : k >= 2 * jitter - 1 ? 0 :
		       (double)(2 * jitter - 1 - k) / (double)(2 * jitter);
	for (int i = 0; i < t->n; i++)
		late += latency + llround((double)jitter * t->v[i] / NET_DIST_SCALE) > timeout;
	return (double)late / t->n;
}

/* Late units: sent at `now` on an idle link (no bandwidth), a unit misses the receiver's
 * deadline now + timeout when latency + jitter exceeds the timeout (late_share). */
static void late_fraction(enum net_dist d, int64_t latency, int64_t jitter, int64_t timeout)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[16];
	int64_t arr[1000];
	long late = 0, units = 0;
	char what[64], err[512];

	if (d != DIST_UNIFORM && net_dist_load(d, NULL, err, sizeof(err))) {
		print_message("SKIP: %s\n", err);
		skip();
	}
	c.unit = UNIT_PACKET;
	c.mtu = 1000;
	c.latency = latency;
	c.jitter = jitter;
	c.distribution = d;
	c.timeout = timeout;
	assert_int_equal(net_link_init(&l, &c, 11, 2, 5), 0);
	for (int s = 0; units < N; s++) {
		int64_t now = (int64_t)s * 1000000000;

		assert_int_equal(net_send(&l, &q, 1000 * 1000, s, 0, now, bits, arr, NULL, &m), 0);
		for (int u = 0; u < m.nunits; u++)
			late += arr[u] > now + timeout;
		units += m.nunits;
	}
	double want = late_share(d, latency, jitter, timeout);

	snprintf(what, sizeof(what), "late share, %s jitter",
		 d == DIST_PARETO ? "pareto" : d == DIST_NORMAL ? "normal" : "uniform");
	near(what, (double)late / (double)units, want, binomial_sd(want, (double)units), 3);
	assert_true(late > 0);
}

static void test_late_fraction(void **state)
{
	/* 50 us latency, 20 us jitter, timeout 100 us: 2.5 sigma (normal's table: 0.6%;
	 * pareto's heavier tail: 1.8%) */
	late_fraction(DIST_UNIFORM, 50000, 20000, 60000);
	late_fraction(DIST_NORMAL, 50000, 20000, 100000);
	late_fraction(DIST_PARETO, 50000, 20000, 100000);
}

/* Reliable transport at message loss p: each message goes out 1/(1-p) times on average
 * (geometric attempts), and arrives exactly once. */
static void test_bytes_reliable(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[1];
	const double p = 0.2;
	const size_t len = 4000;
	uint64_t wire = 0, delivered = 0;

	c.loss = LOSS_BERNOULLI;
	c.loss_p = p;
	c.transport = TRANSPORT_RELIABLE;
	c.bandwidth = 1e9;
	assert_int_equal(net_link_init(&l, &c, 3, 0, 1), 0);
	for (int s = 0; s < N; s++) {
		assert_int_equal(net_send(&l, &q, len, s, 0, (int64_t)s * 1000000000, bits, NULL,
					  NULL, &m), 0);
		wire += m.wire_bytes;
		delivered += m.delivered_bytes;
		assert_int_equal(m.narrived, 1);
	}
	assert_int_equal(delivered, (uint64_t)N * len);
	/* attempts: geometric, mean 1/(1-p), variance p/(1-p)^2 */
	near("reliable: bytes on the wire / delivered", (double)wire / (double)delivered,
	     1 / (1 - p), sqrt(p) / (1 - p) / sqrt(N), 3);
}

/* duplicate d with Bernoulli loss p: netem's --count makes a duplicated unit that the
 * loss draw takes go out once, so a unit is lost with probability (1-d) p, and a second
 * copy goes out with probability d (1-p); the copies on the wire are 1 + d (1-p). */
static void test_duplicate(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[16];
	const double d = 0.2, p = 0.1;
	long units = 0, lost = 0, dups = 0, copies = 0;

	c.loss = LOSS_BERNOULLI;
	c.loss_p = p;
	c.duplicate = d;
	c.unit = UNIT_PACKET;
	c.mtu = 100;
	assert_int_equal(net_link_init(&l, &c, 5, 1, 0), 0);
	for (int s = 0; units < N; s++) {
		assert_int_equal(net_send(&l, &q, 100 * 1000, s, 0, 0, bits, NULL, NULL, &m), 0);
		units += m.nunits;
		lost += m.nunits - m.narrived;
		dups += (long)m.duplicated;
		copies += (long)(m.wire_bytes / 100);
	}
	near("duplicate: lost share", (double)lost / units, (1 - d) * p,
	     binomial_sd((1 - d) * p, units), 3);
	near("duplicate: second copies per unit", (double)dups / units, d * (1 - p),
	     binomial_sd(d * (1 - p), units), 3);
	assert_int_equal(copies, units + dups);
}

/* reorder r with gap g: after each reordered unit the next g - 1 are delayed, then each
 * is reordered with probability r.  Cycles are (g - 1) + Geometric(r) units long, one
 * reorder each: share r / (1 + (g - 1) r), sd from the renewal-reward CLT,
 * sqrt(Var C / (E C^3 n)).  A reordered unit skips the latency: it arrives when sent. */
static void reorder_share(double r, int64_t gap)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[16];
	int64_t arr[1000];
	long units = 0, early = 0;
	char what[64];

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.latency = 1000000;
	c.reorder = r;
	c.reorder_gap = gap;
	assert_int_equal(net_link_init(&l, &c, 9, 0, 3), 0);
	for (int s = 0; units < N; s++) {
		int64_t now = (int64_t)s * 10000000;

		assert_int_equal(net_send(&l, &q, 100 * 1000, s, 0, now, bits, arr, NULL, &m), 0);
		for (int u = 0; u < m.nunits; u++) {
			assert_true(arr[u] == now || arr[u] == now + 1000000);
			early += arr[u] == now;
		}
		units += m.nunits;
	}
	double g = gap > 0 ? (double)gap : 1, ec = (g - 1) + 1 / r, vc = (1 - r) / (r * r);

	snprintf(what, sizeof(what), "reorder %.2f gap %lld: share sent at once", r,
		 (long long)gap);
	near(what, (double)early / units, 1 / ec, sqrt(vc / (ec * ec * ec * units)), 3);
}

static void test_reorder(void **state)
{
	reorder_share(0.25, 0);		/* tc: gap 1 */
	reorder_share(0.25, 5);
	/* a message of packets is complete at its last unit: reordering its last packet
	 * makes the whole message earlier only when every other packet is earlier too */
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[1];

	c.latency = 1000000;
	c.reorder = 1;
	assert_int_equal(net_link_init(&l, &c, 9, 0, 3), 0);
	assert_int_equal(net_send(&l, &q, 100, 0, 0, 5, bits, NULL, NULL, &m), 0);
	assert_int_equal(m.last_arrival, 5);

	/* a duplicate's pass comes before the original's reorder and delay (netem's
	 * order), and a unit sent at once skips the rate: every unit twice, reorder 1,
	 * gap 3, 100-byte packets at 8 Mbit/s (100 us each) after 1 ms: the counter goes
	 * copy 0 delayed, original 0 delayed, copy 1 at once, original 1 delayed, copy 2
	 * delayed, original 2 at once.  Unit 0 arrives with its first copy (1.1 ms), units
	 * 1 and 2 at once; the four delayed copies leave the queue at 1.1 to 1.4 ms. */
	int64_t arr[3];

	c.duplicate = 1;
	c.reorder_gap = 3;
	c.bandwidth = 8e6;
	c.unit = UNIT_PACKET;
	c.mtu = 100;
	assert_int_equal(net_link_init(&l, &c, 9, 0, 3), 0);
	q.free_at = 0;
	assert_int_equal(net_send(&l, &q, 300, 0, 0, 0, bits, arr, NULL, &m), 0);
	assert_int_equal(arr[0], 1000000 + 100000);
	assert_int_equal(arr[1], 0);
	assert_int_equal(arr[2], 0);
	assert_int_equal(q.free_at, 1000000 + 4 * 100000);
}

/* corrupt c: a share c of the arrived units has one flipped bit, of a uniform byte and a
 * uniform bit; with checksum those units are lost instead. */
static void corrupt_check(enum net_corrupt_detect detect)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[16];
	int32_t flip[1000];
	const double pc = 0.05;
	const int b = 1000;
	long units = 0, flipped = 0, lost = 0, bitcount[8] = { 0 };
	double bytesum = 0;

	c.unit = UNIT_PACKET;
	c.mtu = b;
	c.corrupt = pc;
	c.corrupt_detect = detect;
	assert_int_equal(net_link_init(&l, &c, 13, 4, 1), 0);
	for (int s = 0; units < N; s++) {
		assert_int_equal(net_send(&l, &q, (size_t)b * 1000, s, 1, 0, bits, NULL, flip, &m),
				 0);
		long in_msg = 0;

		for (int u = 0; u < m.nunits; u++) {
			if (flip[u] < 0)
				continue;
			in_msg++;
			flipped++;
			bytesum += flip[u] >> 3;
			bitcount[flip[u] & 7]++;
		}
		units += m.nunits;
		lost += m.nunits - m.narrived;
		/* every corrupted copy is counted: delivered flipped, or detected and lost */
		assert_int_equal(m.corrupted, detect ? (uint64_t)(m.nunits - m.narrived) :
				 (uint64_t)in_msg);
	}
	if (detect == CORRUPT_DETECT_CHECKSUM) {
		assert_int_equal(flipped, 0);
		near("corrupt, checksum: lost share", (double)lost / units, pc,
		     binomial_sd(pc, units), 3);
		return;
	}
	assert_int_equal(lost, 0);
	near("corrupt: share with a flipped bit", (double)flipped / units, pc,
	     binomial_sd(pc, units), 3);
	/* the byte: uniform on 0..b-1, mean (b-1)/2, sd sqrt((b^2-1)/12) */
	near("corrupt: mean flipped byte", bytesum / flipped, (b - 1) / 2.0,
	     sqrt((b * (double)b - 1) / 12 / flipped), 3);
	/* the bit: chi-square over 8 cells, 7 degrees of freedom: below 24.3 (p = 0.001) */
	double chi = 0;

	for (int i = 0; i < 8; i++)
		chi += (bitcount[i] - flipped / 8.0) * (bitcount[i] - flipped / 8.0) / (flipped / 8.0);
	print_message("corrupt: bit chi-square %.2f (7 dof)\n", chi);
	assert_true(chi < 24.3);
}

static void test_corrupt(void **state)
{
	corrupt_check(CORRUPT_DETECT_NONE);
	corrupt_check(CORRUPT_DETECT_CHECKSUM);
}

/* limit: a burst into an idle queue keeps exactly `limit` units (the others are
 * tail-dropped, and take no time); Poisson traffic loses M/D/1/K's blocking share. */
static void test_limit(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q;
	struct net_msg m;
	uint64_t bits[1];

	c.unit = UNIT_PACKET;
	c.mtu = 1000;
	c.bandwidth = 8e6;	/* 1 ms per packet */
	c.limit = 4;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(net_txq_init(&q, 2), 0);	/* too small for the link */
	assert_int_equal(net_send(&l, &q, 10000, 0, 0, 0, bits, NULL, NULL, &m), -EINVAL);
	net_txq_free(&q);
	assert_int_equal(net_txq_init(&q, 4), 0);
	assert_int_equal(net_send(&l, &q, 10000, 0, 0, 0, bits, NULL, NULL, &m), 0);
	assert_int_equal(m.overflow, 6);
	assert_int_equal(bits[0], 0xf);
	assert_int_equal(q.free_at, 4000000);
	/* at 2.5 ms two packets are still queued: room for 2 more, behind them */
	assert_int_equal(net_send(&l, &q, 10000, 1, 0, 2500000, bits, NULL, NULL, &m), 0);
	assert_int_equal(m.overflow, 8);
	assert_int_equal(m.depart, 2500000);
	assert_int_equal(m.last_arrival, 6000000);
	net_txq_free(&q);

	/* a link without a limit shares the queue: its 10 units (finishing at 1..10 ms) fill
	 * the ring past its capacity, and the limited link still counts them right */
	struct net_link free_link;
	struct net_cfg fc = c;

	fc.limit = 0;
	assert_int_equal(net_link_init(&free_link, &fc, 1, 0, 2), 0);
	assert_int_equal(net_txq_init(&q, 4), 0);
	assert_int_equal(net_send(&free_link, &q, 10000, 0, 0, 0, bits, NULL, NULL, &m), 0);
	assert_int_equal(m.overflow, 0);
	assert_int_equal(net_send(&l, &q, 10000, 0, 0, 0, bits, NULL, NULL, &m), 0);
	assert_int_equal(m.overflow, 10);
	/* at 7.5 ms three are left (8, 9, 10 ms): room for one */
	assert_int_equal(net_send(&l, &q, 10000, 1, 0, 7500000, bits, NULL, NULL, &m), 0);
	assert_int_equal(m.overflow, 9);
	assert_int_equal(m.last_arrival, 11000000);
	net_txq_free(&q);

	static const double loads[] = { 0.7, 1.0, 1.5 };

	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		double loss, sd, want = bench_md1k_blocking(loads[i], 8);
		char what[64];

		assert_int_equal(bench_limit_run(8, loads[i], N, 100 + i, &loss, &sd), 0);
		snprintf(what, sizeof(what), "limit 8, load %.1f: M/D/1/K blocking", loads[i]);
		near(what, loss, want, sd, 3);
	}
	/* the closed form itself: K = 1 is Erlang's loss formula rho / (1 + rho) */
	assert_true(fabs(bench_md1k_blocking(0.5, 1) - 0.5 / 1.5) < 1e-12);
}

/* ecn (netem's ecn): a unit the loss model takes is delivered marked instead.  With the
 * same seed, the units marked are exactly the units lost without ecn (the loss draws and
 * the chain do not depend on what became of a unit), for each loss model, correlated or
 * not; none is lost; the share marked is the loss probability. */
static void ecn_same_units(const char *what, struct net_cfg c, double p)
{
	struct net_link off, on;
	struct net_txq q = { 0 };
	struct net_msg m0, m1;
	uint64_t bits0[16], bits1[16], marks[16];
	long units = 0, marked = 0, counted = 0;

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	assert_int_equal(net_link_init(&off, &c, 21, 3, 1), 0);
	c.ecn = 1;
	assert_int_equal(net_link_init(&on, &c, 21, 3, 1), 0);
	for (int s = 0; units < N; s++) {
		assert_int_equal(net_send(&off, &q, 100 * 1000, s, 0, 0, bits0, NULL, NULL, &m0), 0);
		assert_int_equal(net_send_marked(&on, &q, 100 * 1000, s, 0, 0, bits1, NULL, NULL,
						 marks, &m1), 0);
		assert_int_equal(m0.marked, 0);
		assert_int_equal(m1.narrived, m1.nunits);	/* nothing lost */
		for (int w = 0; w < 16; w++) {
			uint64_t valid = w < 15 ? ~0ULL : (1ULL << (1000 - 15 * 64)) - 1;

			assert_true(marks[w] == (~bits0[w] & valid));
			marked += __builtin_popcountll(marks[w]);
		}
		counted += (long)m1.marked;
		units += m1.nunits;
	}
	assert_int_equal(counted, marked);
	if (p > 0)
		near(what, (double)marked / units, p, binomial_sd(p, units), 3);
}

static void test_ecn(void **state)
{
	struct net_cfg c = cfg_base();

	c.loss = LOSS_BERNOULLI;
	c.loss_p = 0.1;
	ecn_same_units("ecn, bernoulli 0.1: share marked", c, 0.1);
	c.loss_correlation = 0.5;	/* netem's correlated draws: the same units too */
	ecn_same_units("ecn, bernoulli 0.1 corr 0.5", c, 0);
	c = cfg_base();
	c.loss = LOSS_GILBERT;
	c.loss_p = 0.05;
	c.ge_r = 0.4;
	ecn_same_units("ecn, gilbert", c, 0);
	c = cfg_base();
	c.loss = LOSS_STATE;
	c.p13 = 0.02;
	c.p31 = 0.5;
	c.p32 = 0.2;
	c.p14 = 0.01;
	ecn_same_units("ecn, state", c, 0);
}

/* ecn turns the loss model's drops into marks, not the limit's: a burst of 10 into a
 * queue of 4 still loses 6, every unit's draw marking it (loss_p 1). */
static void test_ecn_limit(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q;
	struct net_msg m;
	uint64_t bits[1], marks[1];

	c.unit = UNIT_PACKET;
	c.mtu = 1000;
	c.bandwidth = 8e6;	/* 1 ms per packet */
	c.limit = 4;
	c.loss = LOSS_BERNOULLI;
	c.loss_p = 1;
	c.ecn = 1;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(net_txq_init(&q, 4), 0);
	assert_int_equal(net_send_marked(&l, &q, 10000, 0, 0, 0, bits, NULL, NULL, marks, &m), 0);
	assert_int_equal(m.overflow, 6);
	assert_int_equal(m.marked, 10);
	assert_int_equal(m.narrived, 4);
	assert_int_equal(bits[0], 0xf);
	assert_int_equal(marks[0], 0xf);	/* the units that arrived, each marked */
	net_txq_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_late_fraction),
		cmocka_unit_test(test_bytes_reliable),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_reorder),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_ecn),
		cmocka_unit_test(test_ecn_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
