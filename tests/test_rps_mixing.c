/* RPS's mixing matrix and the paper's claim that the effect of the drop rate shrinks as
 * the number of servers grows (Yu et al., ICML 2019, section 4).
 *
 * One RPS exchange of one block is x_new = W v.  W is measured, not derived: worker i
 * holds the i-th unit vector, the messages of the scatter and of the broadcast are lost
 * or not by the network model (net_unit_lost, bernoulli p, one unit per message), and the
 * server's reduction and each worker's take-what-arrived are the algorithms' own helpers
 * (algo_mean_floats, algo_take_arrived).  Row k of W is then worker k's new vector.
 *
 * What drops do to RPS is that the workers' weights in the next average are no longer
 * equal: the new mean is (1/n) 1^T W v instead of (1/n) 1^T v.  Its second moment,
 *   a2(n) = E || (1/n) 1^T (W - J) ||^2,  J = 1 1^T / n,
 * is what the paper's bound charges to the drop rate; it must fall as n grows at fixed p
 * (and be exactly 0 at p = 0).  E||W - J||_F^2 / n, the replicas' spread, stays near p:
 * the paper's point is that spread is harmless, the mean is what converges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "emu/net/net.h"

#define NMAX 32

/* One W for block server j at `step` under drop probability p: W is n x n, row-major. */
static void mixing_matrix(int n, double p, int j, int64_t step, float *W)
{
	struct net_cfg c;
	memset(&c, 0, sizeof(c));
	c.loss = p > 0 ? LOSS_BERNOULLI : LOSS_NONE;
	c.loss_p = p;
	c.unit = UNIT_MESSAGE;
	c.ge_r = c.ge_1h = c.ge_1k = NET_UNSET;
	c.p13 = c.p31 = c.p32 = c.p23 = c.p14 = NET_UNSET;

	static float e[NMAX][NMAX], reply[NMAX];
	uint64_t arrived[NMAX], all = 1;
	struct xmsg in[NMAX] = { 0 };
	for (int i = 0; i < n; i++) {
		memset(e[i], 0, sizeof(e[i]));
		e[i][i] = 1;
		struct net_link l;
		assert_int_equal(net_link_init(&l, &c, 42, i, j), 0);
		/* the server's own block never crosses the network */
		arrived[i] = i == j || !net_unit_lost(&l, step, 0, 0, 0);
		in[i] = (struct xmsg){ .data = (const uint8_t *)e[i], .len = n * sizeof(float),
				       .unit = n * sizeof(float), .nunits = 1,
				       .narrived = (int)arrived[i], .arrived = &arrived[i] };
	}
	algo_mean_floats(reply, in, n, (size_t)n);
	for (int k = 0; k < n; k++) {
		struct net_link l;
		assert_int_equal(net_link_init(&l, &c, 42, j, k), 0);
		uint64_t got = k == j || !net_unit_lost(&l, step, 1, 0, 0);
		struct xmsg r = { .data = (const uint8_t *)reply, .len = n * sizeof(float),
				  .unit = n * sizeof(float), .nunits = 1, .narrived = (int)got,
				  .arrived = got ? &all : &got };
		float *row = W + (size_t)k * n;
		memcpy(row, e[k], n * sizeof(float));	/* a worker keeps its own v ... */
		algo_take_arrived(row, &r, (size_t)n, 0);	/* ... where the mean did not arrive */
	}
}

struct moments {
	double a2;		/* E || (1/n) 1^T (W - J) ||^2 */
	double spread;		/* E ||W - J||_F^2 / n */
};

static struct moments measure(int n, double p, int trials)
{
	static float W[NMAX * NMAX];
	struct moments m = { 0, 0 };
	for (int t = 0; t < trials; t++) {
		mixing_matrix(n, p, t % n, t, W);
		double a2 = 0, fro = 0;
		for (int col = 0; col < n; col++) {
			double mean = 0;
			for (int k = 0; k < n; k++) {
				double d = W[k * n + col] - 1.0 / n;
				fro += d * d;
				mean += W[k * n + col];
			}
			mean = mean / n - 1.0 / n;
			a2 += mean * mean;
		}
		m.a2 += a2;
		m.spread += fro / n;
	}
	m.a2 /= trials;
	m.spread /= trials;
	return m;
}

static void rows_are_stochastic(void **state)
{
	static float W[16 * 16];
	for (int t = 0; t < 50; t++) {
		mixing_matrix(16, 0.3, t % 16, t, W);
		for (int k = 0; k < 16; k++) {
			double s = 0;
			for (int c = 0; c < 16; c++) {
				assert_true(W[k * 16 + c] >= 0);
				s += W[k * 16 + c];
			}
			assert_float_equal(s, 1.0, 1e-5);
		}
	}
}

static void no_drops_is_exact_averaging(void **state)
{
	for (int n = 2; n <= NMAX; n *= 2) {
		struct moments m = measure(n, 0.0, 20);
		assert_float_equal(m.a2, 0.0, 1e-12);
		assert_float_equal(m.spread, 0.0, 1e-10);
	}
}

static void drop_effect_shrinks_with_servers(void **state)
{
	const double p = 0.1;
	double prev = 1e9;
	for (int n = 4; n <= NMAX; n *= 2) {
		struct moments m = measure(n, p, 4000);
		printf("n = %2d  p = %.2f  E|1^T(W-J)/n|^2 = %.6f  E|W-J|_F^2/n = %.4f\n", n, p,
		       m.a2, m.spread);
		assert_true(m.a2 > 0);
		/* at least a quarter less per doubling: far outside the Monte Carlo error */
		assert_true(m.a2 < 0.75 * prev);
		prev = m.a2;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_are_stochastic),
		cmocka_unit_test(no_drops_is_exact_averaging),
		cmocka_unit_test(drop_effect_shrinks_with_servers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
