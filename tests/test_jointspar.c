/* tests/test_jointspar.c — JointSpar's pure parts: the bandit keeps p in [p_min, 1] with
 * sum s; the projection is a KL projection (one common factor on unclipped layers); the
 * sampled, 1/p-rescaled gradient, sent through build -> reduce -> take over several
 * workers and blocks, is unbiased; lost headers and lost floats are left out of the
 * mean; bytes per step: up, sum of p_l |layer l| (about s/L of dense); down, the union. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/algo/jointspar_bandit.h"
#include "emu/algo/jointspar_msg.h"
#include "tests/rng.h"

static void check_simplex(const struct jointspar_bandit *b)
{
	double sum = 0;
	for (int l = 0; l < b->nlayers; l++) {
		assert_true(b->p[l] >= b->p_min - 1e-12);
		assert_true(b->p[l] <= 1.0 + 1e-12);
		sum += b->p[l];
	}
	assert_true(fabs(sum - b->budget) < 1e-9 * b->nlayers);
}

static void test_bandit_stays_feasible(void **unused)
{
	const struct { int L; double s, pmin, alpha; } cases[] = {
		{ 10, 3, 0.05, 0.1 }, { 62, 10, 0.01, 1.0 }, { 5, 0.25, 0.05, 5.0 },
		{ 8, 7.5, 0.1, 0.5 }, { 1, 0.5, 0.1, 0.1 }, { 20, 20, 0.1, 0.1 },
	};
	uint64_t s = 3;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct jointspar_bandit b;
		assert_int_equal(jointspar_bandit_init(&b, cases[c].L, cases[c].s, cases[c].pmin,
						       cases[c].alpha), 0);
		check_simplex(&b);
		uint8_t sampled[64];
		double norm2[64];
		for (int it = 0; it < 2000; it++) {
			jointspar_sample(&b, 11, it, 0, sampled);
			for (int l = 0; l < b.nlayers; l++)	/* norms over 12 decades */
				norm2[l] = pow(10.0, 12 * test_unif(&s) - 8) * (l + 1);
			jointspar_bandit_update(&b, sampled, norm2);
			check_simplex(&b);
		}
		jointspar_bandit_free(&b);
	}
	struct jointspar_bandit bad;
	assert_int_equal(jointspar_bandit_init(&bad, 4, 2, 0, 0.1), -EINVAL);
	assert_int_equal(jointspar_bandit_init(&bad, 0, 2, 0.1, 0.1), -EINVAL);
}

static void test_projection_is_kl(void **unused)
{
	uint64_t s = 5;
	double w[40], q[40];
	for (int rep = 0; rep < 200; rep++) {
		int n = 1 + (int)(test_rng(&s) % 40);
		double pmin = 0.2 * test_unif(&s) / n + 1e-3;
		double budget = n * pmin + (n - n * pmin) * test_unif(&s);
		for (int l = 0; l < n; l++)
			w[l] = exp(20 * test_unif(&s) - 10);
		jointspar_project(q, w, n, budget, pmin);
		double sum = 0, ratio = -1;
		for (int l = 0; l < n; l++) {
			sum += q[l];
			assert_true(q[l] >= pmin - 1e-12 && q[l] <= 1 + 1e-12);
			if (q[l] > pmin + 1e-9 && q[l] < 1 - 1e-9) {
				/* unclipped: one common factor c */
				if (ratio < 0)
					ratio = q[l] / w[l];
				assert_true(fabs(q[l] / w[l] - ratio) < 1e-6 * ratio);
			}
		}
		assert_true(fabs(sum - budget) < 1e-9 * n);
		/* clipped ones sit where c w says they should */
		if (ratio > 0)
			for (int l = 0; l < n; l++) {
				if (q[l] <= pmin + 1e-12)
					assert_true(ratio * w[l] <= pmin * (1 + 1e-6));
				if (q[l] >= 1 - 1e-12)
					assert_true(ratio * w[l] >= 1 - 1e-6);
			}
	}
}

static void test_bandit_prefers_large_gradients(void **unused)
{
	/* The loss's range L^2/p_min^2 dwarfs the differences between layers unless p_min
	 * is near s/L, so the signal is clear only there; p is averaged over the last
	 * 1000 steps because the importance-weighted updates make it a noisy walk. */
	struct jointspar_bandit b;
	assert_int_equal(jointspar_bandit_init(&b, 6, 2, 0.2, 0.01), 0);
	uint8_t sampled[6];
	double norm2[6], avg[6] = { 0 };
	for (int it = 0; it < 3000; it++) {
		jointspar_sample(&b, 1, it, 0, sampled);
		for (int l = 0; l < 6; l++)
			norm2[l] = l == 2 ? 100.0 : 1.0;
		jointspar_bandit_update(&b, sampled, norm2);
		for (int l = 0; it >= 2000 && l < 6; l++)
			avg[l] += b.p[l] / 1000;
	}
	for (int l = 0; l < 6; l++)
		if (l != 2)
			assert_true(avg[2] > 2 * avg[l]);
	jointspar_bandit_free(&b);
}

/* A fake model: L layers tiling NP floats, cut into NB blocks, NW workers. */
#define L 7
#define NP 160
#define NB 3
#define NW 4
static const size_t sizes[L] = { 5, 17, 40, 3, 64, 1, 30 };

static void make_layers(struct nn_layer *layers)
{
	size_t off = 0;
	for (int l = 0; l < L; l++) {
		memset(&layers[l], 0, sizeof(layers[l]));
		layers[l].off = off;
		layers[l].size = sizes[l];
		off += sizes[l];
	}
	assert_int_equal(off, NP);
}

static void make_blocks(struct jointspar_block *blk, const struct nn_layer *layers)
{
	size_t cut[NB + 1] = { 0, 50, 51, NP };	/* one block of a single float */
	for (int j = 0; j < NB; j++)
		assert_int_equal(jointspar_block_init(&blk[j], layers, L, NP, cut[j], cut[j + 1]), 0);
}

struct fake_msg {
	uint64_t arrived[4];
	struct xmsg m;
};

/* A message of len bytes in units of `unit` bytes; drop: bit u = unit u lost. */
static void fake_msg(struct fake_msg *f, const uint8_t *data, size_t len, size_t unit,
		     uint64_t drop)
{
	int nunits = len ? (int)((len + unit - 1) / unit) : 1;
	assert_true(nunits <= 64);
	memset(f, 0, sizeof(*f));
	f->m.data = data;
	f->m.len = len;
	f->m.unit = unit;
	f->m.nunits = nunits;
	for (int u = 0; u < nunits; u++)
		if (!((drop >> u) & 1)) {
			f->arrived[0] |= 1ull << u;
			f->m.narrived++;
		}
	f->m.arrived = f->arrived;
}

/* Workers with their own p (independent draws), or one p and one set of draws for all
 * (shared draws): either way the aggregate is unbiased; the replies carry the union of
 * the sampled layers, which shared draws keep as small as the uploads. */
static void unbiased_and_bytes(int shared)
{
	struct nn_layer layers[L];
	struct jointspar_block blk[NB];
	make_layers(layers);
	make_blocks(blk, layers);
	assert_int_equal(blk[1].l0, 2);
	assert_int_equal(blk[1].l1, 3);

	uint64_t s = 9;
	static float g[NW][NP], agg[NW][NP], mean[NP], sum[NP], sumsq[NP];
	static uint8_t arrived[NW][NP];
	static uint8_t buf[NW][NB][NP * 4 + 64], reply[NB][NP * 4 + 64];
	float ssum[NP];
	uint32_t cnt[NP];
	double p[NW][L];
	for (int w = 0; w < NW; w++) {
		double raw[L];
		for (int l = 0; l < L; l++)
			raw[l] = 0.1 + test_unif(&s);
		jointspar_project(p[w], raw, L, 2.5, 0.05);
		if (shared && w > 0)
			memcpy(p[w], p[0], sizeof(p[w]));
		for (int i = 0; i < NP; i++)
			g[w][i] = (float)(2 * test_unif(&s) - 1);
	}
	for (int i = 0; i < NP; i++) {
		mean[i] = 0;
		for (int w = 0; w < NW; w++)
			mean[i] += g[w][i] / NW;
	}
	memset(sum, 0, sizeof(sum));
	memset(sumsq, 0, sizeof(sumsq));
	const int K = 20000;
	double up_bytes = 0, down_bytes = 0;
	for (int step = 0; step < K; step++) {
		uint8_t sampled[NW][L];
		for (int w = 0; w < NW; w++) {
			struct jointspar_bandit b = { .nlayers = L, .p = p[w] };
			jointspar_sample(&b, 77, step, shared ? 0 : w, sampled[w]);
		}
		for (int j = 0; j < NB; j++) {
			struct fake_msg in[NW];
			for (int w = 0; w < NW; w++) {
				size_t len = jointspar_msg_build(buf[w][j], &blk[j], layers,
								 sampled[w], p[w], g[w]);
				size_t want = blk[j].hdr_bytes;
				for (int l = blk[j].l0; l < blk[j].l1; l++)
					if (sampled[w][l]) {
						size_t a = layers[l].off, e = a + sizes[l];
						a = a > blk[j].b0 ? a : blk[j].b0;
						e = e < blk[j].b1 ? e : blk[j].b1;
						want += (e - a) * 4;
					}
				assert_int_equal(len, want);
				up_bytes += (double)len;
				fake_msg(&in[w], buf[w][j], len, 1500, 0);
			}
			struct xmsg m[NW];
			for (int w = 0; w < NW; w++)
				m[w] = in[w].m;
			size_t rlen = jointspar_msg_reduce(&blk[j], layers, m, NW, ssum, cnt,
							   reply[j], sizeof(reply[j]));
			down_bytes += (double)rlen * NW;
			struct fake_msg r;
			fake_msg(&r, reply[j], rlen, 1500, 0);
			for (int w = 0; w < NW; w++)
				assert_int_equal(jointspar_msg_take(&blk[j], layers, &r.m, agg[w],
								    arrived[w]),
						 blk[j].b1 - blk[j].b0);
		}
		for (int i = 0; i < NP; i++) {
			for (int w = 1; w < NW; w++)	/* everyone took the same reply */
				assert_true(agg[w][i] == agg[0][i]);
			sum[i] += agg[0][i];
			sumsq[i] += agg[0][i] * agg[0][i];
		}
	}
	for (int i = 0; i < NP; i++) {
		double mu = sum[i] / K, var = sumsq[i] / K - mu * mu;
		double se = sqrt(var / K);
		assert_true(fabs(mu - mean[i]) < 5 * se + 1e-5);
	}
	/* expected bytes: up, sum over layers of p_l * size (s/L of dense for equal p);
	 * down, the union of the workers' layers */
	double dense = (double)NP * 4 * NW * K, expect = 0;
	for (int w = 0; w < NW; w++)
		for (int l = 0; l < L; l++)
			expect += p[w][l] * sizes[l] * 4.0 * K;
	double hdr = 0;
	for (int j = 0; j < NB; j++)
		hdr += (double)blk[j].hdr_bytes * NW * K;
	assert_true(fabs(up_bytes - hdr - expect) < 0.02 * expect);
	double union_bytes = 0;	/* a layer is in the reply if any worker sampled it */
	for (int l = 0; l < L; l++) {
		double none = 1;	/* shared: one draw, with p[0] = every p */
		for (int w = 0; w < (shared ? 1 : NW); w++)
			none *= 1 - p[w][l];
		union_bytes += (1 - none) * sizes[l] * 4.0 * K * NW;
	}
	assert_true(fabs(down_bytes - hdr - union_bytes) < 0.02 * union_bytes);
	/* up: s/L = 2.5/7 of dense, within what unequal p allow; down: the union, larger
	 * unless every worker drew the same layers */
	assert_true(up_bytes / dense < 0.6);
	if (shared)
		assert_true(down_bytes == up_bytes);
	else
		assert_true(down_bytes > 1.5 * up_bytes);
}

static void test_unbiased_and_bytes_independent(void **unused)
{
	unbiased_and_bytes(0);
}

static void test_unbiased_and_bytes_shared(void **unused)
{
	unbiased_and_bytes(1);
}

static void test_losses(void **unused)
{
	struct nn_layer layers[L];
	struct jointspar_block blk[NB];
	make_layers(layers);
	make_blocks(blk, layers);
	/* block 2: layers 2..6, floats 51..160; header 4 bytes */
	const struct jointspar_block *b = &blk[2];
	assert_int_equal(b->l0, 2);
	assert_int_equal(b->l1, L);
	float g[3][NP];
	double p[L];
	uint8_t all[L], none[L];
	for (int l = 0; l < L; l++) {
		p[l] = 0.5;
		all[l] = 1;
		none[l] = 0;
	}
	for (int w = 0; w < 3; w++)
		for (int i = 0; i < NP; i++)
			g[w][i] = (float)(w + 1);
	static uint8_t buf[3][NP * 4 + 64], reply[NP * 4 + 64];
	size_t len0 = jointspar_msg_build(buf[0], b, layers, all, p, g[0]);
	size_t len1 = jointspar_msg_build(buf[1], b, layers, all, p, g[1]);
	size_t len2 = jointspar_msg_build(buf[2], b, layers, none, p, g[2]);
	assert_int_equal(len0, 4 + (NP - 51) * 4);
	assert_int_equal(len2, 4);
	struct fake_msg in[3];
	fake_msg(&in[0], buf[0], len0, 16, 0);
	fake_msg(&in[1], buf[1], len1, 16, 1ull << 2);	/* floats 7..10 of the body lost */
	fake_msg(&in[2], buf[2], len2, 16, 0);		/* skipped everything: zeros */
	struct xmsg m[3] = { in[0].m, in[1].m, in[2].m };
	float ssum[NP];
	uint32_t cnt[NP];
	size_t rlen = jointspar_msg_reduce(b, layers, m, 3, ssum, cnt, reply, sizeof(reply));
	assert_int_equal(rlen, len0);
	const float *out = (const float *)(reply + 4);
	for (size_t i = 0; i < NP - 51; i++) {
		/* scaled by 1/p = 2: worker 0 sends 2, worker 1 sends 4, worker 2 zero */
		float want = i >= 7 && i < 11 ? (2.0f + 0.0f) / 2 : (2.0f + 4.0f + 0.0f) / 3;
		assert_float_equal(out[i], want, 1e-6);
	}
	/* worker 1's header lost: it does not count at all */
	fake_msg(&in[1], buf[1], len1, 16, 1ull);
	m[1] = in[1].m;
	jointspar_msg_reduce(b, layers, m, 3, ssum, cnt, reply, sizeof(reply));
	for (size_t i = 0; i < NP - 51; i++)
		assert_float_equal(out[i], 1.0f, 1e-6);
	/* the reply: header lost -> nothing arrived; a hole -> those floats did not */
	float agg[NP];
	uint8_t arrived[NP];
	struct fake_msg r;
	fake_msg(&r, reply, rlen, 16, 1ull);
	assert_int_equal(jointspar_msg_take(b, layers, &r.m, agg, arrived), 0);
	for (size_t i = 51; i < NP; i++)
		assert_int_equal(arrived[i], 0);
	fake_msg(&r, reply, rlen, 16, 1ull << 3);	/* bytes 48..63: floats 11..14 */
	assert_int_equal(jointspar_msg_take(b, layers, &r.m, agg, arrived), NP - 51 - 4);
	for (size_t i = 0; i < NP - 51; i++)
		assert_int_equal(arrived[51 + i], !(i >= 11 && i < 15));
	/* a reply with no layer present: every float arrives, as zero */
	jointspar_msg_reduce(b, layers, &m[2], 1, ssum, cnt, reply, sizeof(reply));
	fake_msg(&r, reply, 4, 16, 0);
	assert_int_equal(jointspar_msg_take(b, layers, &r.m, agg, arrived), NP - 51);
	for (size_t i = 51; i < NP; i++)
		assert_true(agg[i] == 0.0f && arrived[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bandit_stays_feasible),
		cmocka_unit_test(test_projection_is_kl),
		cmocka_unit_test(test_bandit_prefers_large_gradients),
		cmocka_unit_test(test_unbiased_and_bytes_independent),
		cmocka_unit_test(test_unbiased_and_bytes_shared),
		cmocka_unit_test(test_losses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
