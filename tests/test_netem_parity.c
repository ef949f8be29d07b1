/* tests/test_netem_parity.c — emu's draws against netem's: the delay tables against
 * iproute2's files, uniform's support, and each correlation against a reimplementation
 * of sch_netem.c's get_crandom fed the same random values (exact), with its
 * autocorrelation against the AR(1) formula (statistical). */
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
#include "emu/net/dist.h"
#include "emu/net/net.h"
#include "emu/net/rng.h"
#include "tests/net_base.h"

/* --- netem, written again from sch_netem.c ------------------------------------------ */

struct crnd {
	uint32_t last, rho;
};

static uint32_t get_crandom(struct crnd *s, uint32_t value)
{
	uint64_t rho;
	uint32_t answer;

	if (s->rho == 0)
		return value;
	rho = (uint64_t)s->rho + 1;
	answer = (uint32_t)((value * ((1ull << 32) - rho) + s->last * rho) >> 32);
	s->last = answer;
	return answer;
}

/* iproute2's set_percent */
static uint32_t percent(double p)
{
	return (uint32_t)rint(p * UINT32_MAX);
}

/* the first word of the block of a link's draw, and the correlation's first last */
static uint32_t word(uint64_t seed, int src, int dst, int64_t step, uint32_t unit,
		     uint32_t stream)
{
	struct rng_key k = { .seed = seed, .link = net_link_id(src, dst), .step = step,
			     .unit = unit, .stream = stream };
	uint32_t w[4];

	rng_block(&k, w);
	return w[0];
}

static struct crnd crnd_start(uint64_t seed, int src, int dst, enum net_corr which, double c)
{
	return (struct crnd){ .last = word(seed, src, dst, 0, (uint32_t)which,
					   RNG_STREAM_CORR_INIT), .rho = percent(c) };
}

/* --- the tables ----------------------------------------------------------------------- */

/* The values of an iproute2 table file as tc's get_distribution reads them; 0 if absent. */
static int read_dist(const char *path, long *v, int max)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		if (*line == '#' || *line == '\n')
			continue;
		for (long x; (x = strtol(p, &end, 0)), end != p && n < max; p = end)
			v[n++] = x;
	}
	fclose(f);
	return n;
}

/* Each of iproute2's tables: emu reads the same values (count, least, greatest) and its
 * delays have the file's mean and sd (5-sigma bounds on 200000 draws). */
static void test_tables_against_files(void **state)
{
	static const struct { enum net_dist d; const char *name; } t[] = {
		{ DIST_NORMAL, "normal" }, { DIST_PARETO, "pareto" },
		{ DIST_PARETONORMAL, "paretonormal" }, { DIST_EXPERIMENTAL, "experimental" },
	};
	static long v[NET_DIST_MAX];
	int checked = 0;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char err[512];
		const struct net_dist_table *tab;
		int n;

		if (net_dist_load(t[i].d, NULL, err, sizeof(err))) {
			print_message("SKIP %s: %s\n", t[i].name, err);
			continue;
		}
		tab = net_dist_find(t[i].d, NULL);
		assert_non_null(tab);
		n = read_dist(tab->path, v, NET_DIST_MAX);
		assert_int_equal(n, tab->n);
		double s = 0, s2 = 0;
		long lo = v[0], hi = v[0];

		for (int j = 0; j < n; j++) {
			assert_int_equal(tab->v[j], v[j]);
			s += (double)v[j] / NET_DIST_SCALE;
			s2 += (double)v[j] * v[j] / ((double)NET_DIST_SCALE * NET_DIST_SCALE);
			lo = v[j] < lo ? v[j] : lo;
			hi = v[j] > hi ? v[j] : hi;
		}
		assert_int_equal(tab->lo, lo);
		assert_int_equal(tab->hi, hi);

		/* delays latency + jitter * table / 8192 (rounded) */
		double mean_z = s / n, var_z = s2 / n - mean_z * mean_z;
		struct net_cfg c = cfg_base();
		struct net_link l;
		const int draws = 200000;
		double ds = 0, ds2 = 0;

		c.latency = 50000000;
		c.jitter = 1000000;
		c.distribution = t[i].d;
		assert_int_equal(net_link_init(&l, &c, 11, 0, 1), 0);
		for (int j = 0; j < draws; j++) {
			int64_t d = net_delay(&l, j, 0, 0, 0);
			double z = (double)(d - c.latency) / (double)c.jitter;

			assert_true(z >= (double)lo / NET_DIST_SCALE - 1e-6 &&
				    z <= (double)hi / NET_DIST_SCALE + 1e-6);
			ds += z;
			ds2 += z * z;
		}
		double m = ds / draws, var = ds2 / draws - m * m;

		print_message("%s: %d values in [%ld, %ld]; z mean %.4f (file %.4f), sd %.4f "
			      "(file %.4f)\n", t[i].name, n, lo, hi, m, mean_z, sqrt(var),
			      sqrt(var_z));
		assert_true(fabs(m - mean_z) <= 5 * sqrt(var_z / draws));
		assert_true(fabs(sqrt(var) - sqrt(var_z)) <= 5 * sqrt(var_z / (2.0 * draws)) +
			    0.01 * sqrt(var_z));
		checked++;
	}
	if (!checked)
		skip();
}

/* netem's default without a table: mu - sigma + rnd % (2 sigma), every integer of
 * [mu - sigma, mu + sigma) and no other, exactly as the reimplementation draws it. */
static void test_uniform_as_netem(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	c.latency = 1000;
	c.jitter = 7;
	assert_int_equal(c.distribution, DIST_UNIFORM);
	assert_int_equal(net_link_init(&l, &c, 3, 2, 5), 0);
	for (int j = 0; j < 5000; j++) {
		int64_t d = net_delay(&l, j, 0, 0, 0);
		uint32_t rnd = word(3, 2, 5, j, 0, RNG_STREAM_DELAY);

		assert_int_equal(d, 1000 - 7 + (int64_t)(rnd % 14));
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	assert_int_equal(lo, 993);
	assert_int_equal(hi, 1006);
}

/* --- the correlations ----------------------------------------------------------------- */

/* Sample autocorrelation of x at lag k. */
static double autocorr(const double *x, int n, int k)
{
	double m = 0, v = 0, c = 0;

	for (int i = 0; i < n; i++)
		m += x[i];
	m /= n;
	for (int i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	for (int i = k; i < n; i++)
		c += (x[i] - m) * (x[i - k] - m);
	return c / v;
}

/* Delay correlation: each delay exactly netem's tabledist over get_crandom.  netem then
 * takes the correlated value modulo 2 sigma (or the table's size), which keeps its low
 * bits only: the delays come out uncorrelated, lag-1 autocorrelation within 5/sqrt(n) of
 * 0 at correlation 0.9, and so they do here. */
static void test_delay_correlation(void **state)
{
	const double rho = 0.9;
	const int n = 100000;
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct crnd cr = crnd_start(9, 4, 1, NET_CORR_DELAY, rho);
	double *z = malloc((size_t)n * sizeof(double));

	assert_non_null(z);
	c.latency = 10000000;
	c.jitter = 1000000;
	c.delay_correlation = rho;
	assert_int_equal(net_link_init(&l, &c, 9, 4, 1), 0);
	for (int j = 0; j < n; j++) {
		int64_t d = net_delay(&l, j, 0, 0, 0);
		uint32_t a = get_crandom(&cr, word(9, 4, 1, j, 0, RNG_STREAM_DELAY));

		assert_int_equal(d, c.latency - c.jitter + (int64_t)(a % (2 * 1000000)));
		z[j] = (double)(d - c.latency) / (double)c.jitter;
	}
	print_message("delay correlation %.2f: lag-1 autocorrelation %.4f (netem's modulo: "
		      "0)\n", rho, autocorr(z, n, 1));
	assert_true(fabs(autocorr(z, n, 1)) < 5 / sqrt(n));
	free(z);
}

/* xorshift64*: an RNG of the test's own, to estimate netem's formula apart from emu */
static uint32_t xs32(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (uint32_t)((*s * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Loss correlation (random loss): each decision netem's "loss >= get_crandom" (exact),
 * and the loss rate and the lag-1 autocorrelation of the losses those of netem's formula
 * run on the test's own generator (1e6 draws), within 5 standard errors. */
static void test_loss_correlation(void **state)
{
	const double p = 0.3, rho = 0.8;
	const int n = 100000, nref = 1000000;
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct crnd cr = crnd_start(21, 0, 3, NET_CORR_LOSS, rho);
	double *x = malloc((size_t)nref * sizeof(double)), lost = 0, ref_lost = 0;
	uint64_t xs = 88172645463325252ull;

	assert_non_null(x);
	c.loss = LOSS_BERNOULLI;
	c.loss_p = p;
	c.loss_correlation = rho;
	assert_int_equal(net_link_init(&l, &c, 21, 0, 3), 0);
	for (int j = 0; j < n; j++) {
		bool got = net_unit_lost(&l, j, 0, 0, 0);
		bool want = percent(p) >= get_crandom(&cr, word(21, 0, 3, j, 0, RNG_STREAM_LOSS));

		assert_int_equal(got, want);
		x[j] = got;
		lost += got;
	}
	double r1 = autocorr(x, n, 1);
	struct crnd ref = { .last = xs32(&xs), .rho = percent(rho) };

	for (int j = 0; j < nref; j++) {
		x[j] = percent(p) >= get_crandom(&ref, xs32(&xs));
		ref_lost += x[j];
	}
	double ref_r1 = autocorr(x, nref, 1), rate = lost / n, ref_rate = ref_lost / nref;

	/* correlated draws: the standard errors grow by about (1 + r) / (1 - r) */
	double inflate = sqrt((1 + ref_r1) / (1 - ref_r1));

	print_message("loss %.2f correlation %.2f: %.4f lost (formula %.4f), lag-1 "
		      "autocorrelation %.4f (formula %.4f)\n", p, rho, rate, ref_rate, r1, ref_r1);
	assert_true(fabs(rate - ref_rate) < 5 * inflate * sqrt(ref_rate * (1 - ref_rate) / n));
	assert_true(fabs(r1 - ref_r1) < 5 * inflate / sqrt(n));
	assert_true(ref_r1 > 0.3);
	free(x);
}

/* Duplicate, reorder and corrupt correlations through net_send: one message of n
 * packets, each unit's draw netem's comparison over get_crandom in sending order. */
static void test_send_correlations(void **state)
{
	enum { N = 4000 };
	static uint64_t arrived[(N + 63) / 64];
	static int64_t arrival[N];
	static int32_t flip[N];
	const double p = 0.2, rho = 0.7;
	struct net_cfg c = cfg_base();
	struct net_txq q = { 0 };
	struct net_link l;
	struct net_msg out;

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.latency = 1000;
	/* duplicate alone: the count of second copies */
	c.duplicate = p;
	c.duplicate_correlation = rho;
	assert_int_equal(net_link_init(&l, &c, 5, 1, 0), 0);
	assert_int_equal(net_send(&l, &q, (size_t)N * 100, 7, 0, 0, arrived, arrival, flip,
				  &out), 0);
	struct crnd cr = crnd_start(5, 1, 0, NET_CORR_DUP, rho);
	uint64_t want = 0;

	for (uint32_t u = 0; u < N; u++)
		want += percent(p) >= get_crandom(&cr, word(5, 1, 0, 7, u, RNG_STREAM_DUP));
	print_message("duplicate %.2f correlation %.2f: %llu copies (netem %llu)\n", p, rho,
		      (unsigned long long)out.duplicated, (unsigned long long)want);
	assert_int_equal(out.duplicated, want);

	/* reorder alone: a reordered unit skips the latency */
	c.duplicate = c.duplicate_correlation = 0;
	c.reorder = p;
	c.reorder_correlation = rho;
	assert_int_equal(net_link_init(&l, &c, 5, 1, 0), 0);
	q = (struct net_txq){ 0 };
	assert_int_equal(net_send(&l, &q, (size_t)N * 100, 7, 0, 0, arrived, arrival, flip,
				  &out), 0);
	cr = crnd_start(5, 1, 0, NET_CORR_REORDER, rho);
	for (uint32_t u = 0; u < N; u++) {
		bool now = percent(p) >= get_crandom(&cr, word(5, 1, 0, 7, u, RNG_STREAM_REORDER));

		assert_int_equal(arrival[u], now ? 0 : 1000);
	}

	/* corrupt alone: the units with a flipped bit */
	c.reorder = c.reorder_correlation = 0;
	c.corrupt = p;
	c.corrupt_correlation = rho;
	assert_int_equal(net_link_init(&l, &c, 5, 1, 0), 0);
	q = (struct net_txq){ 0 };
	assert_int_equal(net_send(&l, &q, (size_t)N * 100, 7, 0, 0, arrived, arrival, flip,
				  &out), 0);
	cr = crnd_start(5, 1, 0, NET_CORR_CORRUPT, rho);
	for (uint32_t u = 0; u < N; u++) {
		bool hit = percent(p) >= get_crandom(&cr, word(5, 1, 0, 7, u, RNG_STREAM_CORRUPT));

		assert_int_equal(flip[u] >= 0, hit);
	}
}

/* Rate with jitter, netem's FIFO: each unit leaves at max(the last one's time to send,
 * now + its delay) + its transmission time, so none overtakes another; without the rate
 * the same delays reorder them. */
static void test_rate_fifo(void **state)
{
	enum { N = 200 };
	uint64_t bits[(N + 63) / 64];
	int64_t arr[N], last = 0;
	struct net_cfg c = cfg_base();
	struct net_link l, replay;
	struct net_txq q = { 0 };
	struct net_msg m;
	int overtaken = 0;

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.latency = 1000000;
	c.jitter = 500000;
	c.bandwidth = 8e6;	/* 100 us a packet: the queue absorbs part of the jitter */
	assert_int_equal(net_link_init(&l, &c, 8, 0, 1), 0);
	assert_int_equal(net_link_init(&replay, &c, 8, 0, 1), 0);
	assert_int_equal(net_send(&l, &q, (size_t)N * 100, 3, 0, 1000, bits, arr, NULL, &m), 0);
	for (uint32_t u = 0; u < N; u++) {
		int64_t d = net_delay(&replay, 3, 0, u, 0), want;

		want = (last > 1000 + d ? last : 1000 + d) + 100000;
		assert_int_equal(arr[u], want);
		last = want;
	}
	assert_int_equal(q.free_at, last);
	/* the same delays with no rate: units overtake each other */
	c.bandwidth = 0;
	assert_int_equal(net_link_init(&l, &c, 8, 0, 1), 0);
	q = (struct net_txq){ 0 };
	assert_int_equal(net_send(&l, &q, (size_t)N * 100, 3, 0, 1000, bits, arr, NULL, &m), 0);
	for (int u = 1; u < N; u++)
		overtaken += arr[u] < arr[u - 1];
	print_message("rate 8 Mbit/s, jitter 0.5 ms: no unit overtaken; without the rate %d of "
		      "%d\n", overtaken, N - 1);
	assert_true(overtaken > N / 4);
}

/* A table that is not loaded is an error at the link, never a silent uniform. */
static void test_table_must_be_loaded(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;

	c.latency = 1000;
	c.jitter = 100;
	c.distribution = DIST_TABLE;
	snprintf(c.distribution_table, sizeof(c.distribution_table), "/nonexistent/x.dist");
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_against_files),
		cmocka_unit_test(test_uniform_as_netem),
		cmocka_unit_test(test_delay_correlation),
		cmocka_unit_test(test_loss_correlation),
		cmocka_unit_test(test_send_correlations),
		cmocka_unit_test(test_rate_fifo),
		cmocka_unit_test(test_table_must_be_loaded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
