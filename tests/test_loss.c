/* tests/test_loss.c — the loss models of net.c against their closed forms.
 *
 * Every statistical check draws >= 10^6 units from a fixed seed, so the test is
 * deterministic; the tolerances say how far a correct model may be from the closed form
 * with overwhelming probability, so a pass is not luck of the seed.
 *
 * Tolerances for Markov chains: consecutive units are correlated, so the binomial sigma
 * is wrong.  We use batch means: 100 batches of 10^4 units, each far longer than the
 * chains' correlation time (1/r or 1/(p31+p32), at most ~10 units here), so the batch
 * estimates are nearly independent and their spread estimates the sd of the overall
 * mean.  A check passes within 5 such sds (two-sided normal tail 6e-7).  The mean burst
 * length is a ratio losses/bursts: its sd follows from the delta method on the batch
 * residuals losses_b - R * bursts_b.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "emu/net/net.h"
#include "tests/net_base.h"

enum { NB = 100, BATCH = 10000, N = NB * BATCH };

struct loss_stats {
	double rate, rate_sd;		/* losses per unit */
	double burst, burst_sd;		/* mean length of runs of consecutive losses */
};

/* Draw N units of one link (step 0, consecutive unit numbers, as a sender would) */
static void measure(const struct net_cfg *c, uint64_t seed, struct loss_stats *s)
{
	struct net_link l;
	double lb[NB], bb[NB], L = 0, B = 0;
	bool prev = false;

	assert_int_equal(net_link_init(&l, c, seed, 2, 5), 0);
	for (int b = 0; b < NB; b++) {
		lb[b] = bb[b] = 0;
		for (int i = 0; i < BATCH; i++) {
			int64_t u = (int64_t)b * BATCH + i;
			/* units of a 10-unit message per step, like packets of messages */
			bool lost = net_unit_lost(&l, u / 10, 0, (uint32_t)(u % 10), 0);

			lb[b] += lost;
			bb[b] += lost && !prev;
			prev = lost;
		}
		L += lb[b];
		B += bb[b];
	}
	s->rate = L / N;
	s->burst = B > 0 ? L / B : 0;
	double vr = 0, vq = 0;

	for (int b = 0; b < NB; b++) {
		double r = lb[b] / BATCH - s->rate;
		double q = lb[b] - s->burst * bb[b];

		vr += r * r;
		vq += q * q;
	}
	s->rate_sd = sqrt(vr / (NB - 1) / NB);
	/* delta method: R = L/B, sd(R) ~ sd(sum of residuals) / B */
	s->burst_sd = B > 0 ? sqrt(vq / (NB - 1) * NB) / B : 0;
}

static void check(const char *what, double got, double sd, double want)
{
	print_message("%-28s got %.6f want %.6f (sd %.2g, %.1f sd)\n", what, got, want, sd,
		      sd > 0 ? fabs(got - want) / sd : 0.0);
	assert_true(sd > 0);
	assert_true(fabs(got - want) <= 5 * sd);
}

static void test_bernoulli(void **state)
{
	struct net_cfg c = cfg_base();
	struct loss_stats s;

	c.loss = LOSS_BERNOULLI;
	c.loss_p = 0.1;
	measure(&c, 1, &s);
	/* independent units: binomial sd sqrt(p(1-p)/N) = 3e-4; the rate within 3 sd */
	double sd = sqrt(0.1 * 0.9 / N);

	print_message("bernoulli rate %.6f (%.2f sd), burst %.4f want %.4f\n", s.rate,
		      (s.rate - 0.1) / sd, s.burst, 1 / 0.9);
	assert_true(fabs(s.rate - 0.1) <= 3 * sd);
	/* runs of a Bernoulli process: geometric, mean 1/(1-p) */
	check("bernoulli burst", s.burst, s.burst_sd, 1 / 0.9);

	c.loss_p = 0;
	measure(&c, 2, &s);
	assert_true(s.rate == 0.0);
	c.loss_p = 1;
	measure(&c, 3, &s);
	assert_true(s.rate == 1.0);
}

/* Gilbert-Elliott as netem runs it: the unit's loss probability is that of the state it
 * finds, X_n (l_G = 1-k, l_B = 1-h); then X moves by T = [[1-p, p], [r, 1-r]], with an
 * independent draw.  Stationary: pi_B = p / (p + r), pi_G = r / (p + r).
 *   P(L)  = pi_G l_G + pi_B l_B
 *   P(LL) = sum_{x,y} pi_x l_x T_xy l_y          (two consecutive losses)
 * A burst starts at each loss not preceded by a loss: P(start) = P(L) - P(LL), so the
 * mean burst length is P(L) / (P(L) - P(LL)).  Simple Gilbert (1-h = 1, 1-k = 0): loss
 * rate p/(p+r), bursts are the bad-state sojourns, mean 1/r. */
static void ge_closed_form(double p, double r, double lb_, double lg, double *rate,
			   double *burst)
{
	double pb = p / (p + r), pg = r / (p + r);
	double pl = pg * lg + pb * lb_;
	double pll = pg * lg * ((1 - p) * lg + p * lb_) + pb * lb_ * (r * lg + (1 - r) * lb_);

	*rate = pl;
	*burst = pl / (pl - pll);
}

static void run_ge(double p, double r, double h1, double k1, uint64_t seed)
{
	struct net_cfg c = cfg_base();
	struct loss_stats s;
	double rate, burst;
	char what[128];

	c.loss = LOSS_GILBERT;
	c.loss_p = p;
	c.ge_r = r;
	c.ge_1h = h1;
	c.ge_1k = k1;
	ge_closed_form(p, r, h1, k1, &rate, &burst);
	measure(&c, seed, &s);
	snprintf(what, sizeof what, "ge %g %g %g %g rate", p, r, h1, k1);
	check(what, s.rate, s.rate_sd, rate);
	snprintf(what, sizeof what, "ge %g %g %g %g burst", p, r, h1, k1);
	check(what, s.burst, s.burst_sd, burst);
}

static void test_gilbert(void **state)
{
	run_ge(0.01, 0.3, 1.0, 0.0, 11);	/* simple Gilbert: rate 1/31, burst 1/0.3 */
	run_ge(0.05, 0.4, 0.7, 0.02, 12);	/* full Gilbert-Elliott */
	run_ge(0.2, 0.1, 0.5, 0.0, 13);		/* long bad periods */
}

/* netem's 4-state chain (loss_4state): states 1 TX_IN_GAP, 2 TX_IN_BURST, 3 LOST_IN_BURST,
 * 4 LOST_IN_GAP; transitions 1->4 p14, 1->3 p13, 2->3 p23, 3->2 p32, 3->1 p31, 4->1 1,
 * otherwise stay; a unit is lost when the chain ENTERS (or stays in) 3 or 4.
 * Balance equations of the stationary distribution:
 *   pi4 = p14 pi1;  p23 pi2 = p32 pi3;  (p31 + p32) pi3 = p13 pi1 + p23 pi2
 *   => pi3 = (p13 / p31) pi1,  pi2 = (p32 / p23) pi3,  sum = 1.
 * Loss rate = pi3 + pi4.  Bursts: 4 always returns to 1 (a burst of one), 3 and 4 never
 * follow each other, so bursts start on entries into 4 (rate pi4) and into 3 from 1 or 2
 * (rate p13 pi1 + p23 pi2 = (p31 + p32) pi3).  Mean burst = (pi3 + pi4) / (pi4 +
 * (p31 + p32) pi3); a run in 3 alone is geometric with mean 1 / (p31 + p32). */
static void four_closed_form(double p13, double p31, double p32, double p23, double p14,
			     double *rate, double *burst)
{
	double r3 = p13 / p31, r2 = p23 > 0 ? p32 / p23 * r3 : 0, r4 = p14;
	double pi1 = 1 / (1 + r2 + r3 + r4), pi3 = r3 * pi1, pi4 = r4 * pi1;

	*rate = pi3 + pi4;
	*burst = (pi3 + pi4) / (pi4 + (p31 + p32) * pi3);
}

static void run_4(double p13, double p31, double p32, double p23, double p14, uint64_t seed)
{
	struct net_cfg c = cfg_base();
	struct loss_stats s;
	double rate, burst;
	char what[128];

	c.loss = LOSS_STATE;
	c.p13 = p13;
	c.p31 = p31;
	c.p32 = p32;
	c.p23 = p23;
	c.p14 = p14;
	four_closed_form(p13, p31, p32, p23, p14, &rate, &burst);
	measure(&c, seed, &s);
	snprintf(what, sizeof what, "4state %g %g %g %g %g rate", p13, p31, p32, p23, p14);
	check(what, s.rate, s.rate_sd, rate);
	snprintf(what, sizeof what, "4state %g %g %g %g %g burst", p13, p31, p32, p23, p14);
	check(what, s.burst, s.burst_sd, burst);
}

static void test_4state(void **state)
{
	run_4(0.02, 0.3, 0.1, 0.2, 0.01, 21);
	run_4(0.05, 0.5, 0.3, 0.4, 0.03, 22);
	run_4(0.01, 0.2, 0.0, 1.0, 0.0, 23);	/* Gilbert-like: bursts 1/p31 */
}

/* Defaults as iproute2 resolves them: "gemodel p" alone is r = 1-p, 1-h = 1, 1-k = 0,
 * which is a Bernoulli process of rate p in disguise (pi_B = p); "state p13" alone is
 * p31 = 1-p13, p32 = 0, p23 = 1, p14 = 0, also loss rate p13. */
static void test_defaults(void **state)
{
	struct net_cfg c = cfg_base();
	struct loss_stats s;

	c.loss = LOSS_GILBERT;
	c.loss_p = 0.2;
	net_cfg_defaults(&c);
	assert_true(c.ge_r == 0.8 && c.ge_1h == 1.0 && c.ge_1k == 0.0);
	assert_true(c.p31 == 1.0 && c.p32 == 0.0 && c.p23 == 1.0 && c.p14 == 0.0);

	c = cfg_base();
	c.loss = LOSS_GILBERT;
	c.loss_p = 0.2;		/* net_link_init resolves the defaults itself */
	measure(&c, 31, &s);
	check("gemodel 20% defaults rate", s.rate, s.rate_sd, 0.2);
	check("gemodel 20% defaults burst", s.burst, s.burst_sd, 1 / 0.8);

	c = cfg_base();
	c.loss = LOSS_STATE;
	c.p13 = 0.15;
	net_cfg_defaults(&c);
	assert_true(c.p31 == 0.85 && c.p32 == 0.0 && c.p23 == 1.0 && c.p14 == 0.0);
	measure(&c, 32, &s);
	check("state 15% defaults rate", s.rate, s.rate_sd, 0.15);

	/* given values are kept */
	c = cfg_base();
	c.loss = LOSS_GILBERT;
	c.loss_p = 0.1;
	c.ge_r = 0.5;
	c.ge_1h = 0.25;
	c.ge_1k = 0.125;
	net_cfg_defaults(&c);
	assert_true(c.ge_r == 0.5 && c.ge_1h == 0.25 && c.ge_1k == 0.125);
}

/* The order of draws inside one unit, checked on deterministic chains.  Gilbert with
 * p = r = 1 alternates G, B, G, ...; netem takes the loss probability of the state the
 * unit FOUND, so from GOOD the pattern is kept, lost, kept, lost (the other order would
 * give lost, kept, ...).  4-state with p13 = p31 = 1: 1 -> 3 (lost) -> 1 (kept) -> ...;
 * with p14 = 1: 1 -> 4 (lost) -> 1 (kept). */
static void test_chain_order(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;

	c.loss = LOSS_GILBERT;
	c.loss_p = 1;
	c.ge_r = 1;
	c.ge_1h = 1;
	c.ge_1k = 0;
	assert_int_equal(net_link_init(&l, &c, 9, 0, 1), 0);
	for (uint32_t u = 0; u < 64; u++)
		assert_int_equal(net_unit_lost(&l, 0, 0, u, 0), (int)(u & 1));

	c = cfg_base();
	c.loss = LOSS_STATE;
	c.p13 = 1;
	c.p31 = 1;
	c.p32 = 0;
	c.p23 = 0;
	c.p14 = 0;
	assert_int_equal(net_link_init(&l, &c, 9, 0, 1), 0);
	for (uint32_t u = 0; u < 64; u++) {
		assert_int_equal(net_unit_lost(&l, 0, 0, u, 0), (int)!(u & 1));
		assert_int_equal(l.state, (u & 1) ? NET_TX_IN_GAP : NET_LOST_IN_BURST);
	}

	c.p13 = 0;
	c.p14 = 1;
	assert_int_equal(net_link_init(&l, &c, 9, 0, 1), 0);
	for (uint32_t u = 0; u < 64; u++) {
		assert_int_equal(net_unit_lost(&l, 0, 0, u, 0), (int)!(u & 1));
		assert_int_equal(l.state, (u & 1) ? NET_TX_IN_GAP : NET_LOST_IN_GAP);
	}
}

static void test_invalid(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;

	c.loss = LOSS_BERNOULLI;
	c.loss_p = 1.5;
	assert_int_equal(net_link_init(&l, &c, 0, 0, 1), -EINVAL);
	c = cfg_base();
	c.loss = LOSS_STATE;
	c.p13 = 0.7;
	c.p14 = 0.5;		/* leaves state 1 with probability 1.2 */
	assert_int_equal(net_link_init(&l, &c, 0, 0, 1), -EINVAL);
	c = cfg_base();
	c.unit = UNIT_PACKET;
	c.mtu = 0;
	assert_int_equal(net_link_init(&l, &c, 0, 0, 1), -EINVAL);
	c = cfg_base();
	c.transport = TRANSPORT_RELIABLE;
	c.rto = 0;
	assert_int_equal(net_link_init(&l, &c, 0, 0, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bernoulli),
		cmocka_unit_test(test_gilbert),
		cmocka_unit_test(test_4state),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_chain_order),
		cmocka_unit_test(test_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
