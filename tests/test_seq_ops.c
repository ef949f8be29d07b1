/* tests/test_seq_ops.c — embedding and LSTM ops: the fast path against the reference,
 * both against an independent double-precision forward in this file, and backward
 * against central finite differences of that forward. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "nn/data/data_rng.h"
#include "nn/ops_seq.h"
#include "tests/close.h"

static float *randv(struct data_rng *r, size_t n, double scale)
{
	float *v = malloc(n * sizeof(float));
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = (float)((2 * data_rng_uniform(r) - 1) * scale);
	return v;
}

static void test_embed(void **state)
{
	static const int shapes[][4] = { { 1, 1, 1, 3 }, { 3, 7, 5, 4 }, { 4, 13, 17, 9 } };
	struct data_rng r;
	data_rng_init(&r, 11, 0);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int B = shapes[s][0], T = shapes[s][1], D = shapes[s][2], V = shapes[s][3];
		size_t P = (size_t)B * T;
		int32_t *tok = malloc(P * sizeof(int32_t));
		float *table = randv(&r, (size_t)V * D, 1), *dout = randv(&r, P * D, 1);
		float *o1 = malloc(P * D * sizeof(float)), *o2 = malloc(P * D * sizeof(float));
		float *g1 = randv(&r, (size_t)V * D, 9), *g2 = randv(&r, (size_t)V * D, 9);
		double *want = calloc((size_t)V * D, sizeof(double));
		assert_true(tok && o1 && o2 && want);
		for (size_t p = 0; p < P; p++)	/* V < P: tokens repeat and must add up */
			tok[p] = (int32_t)data_rng_below(&r, (uint32_t)V);
		nn_embed_fwd_ref(o1, tok, table, B, T, D);
		nn_embed_fwd_cpu(o2, tok, table, B, T, D);
		for (size_t p = 0; p < P; p++)
			for (int d = 0; d < D; d++) {
				assert_true(o1[p * D + d] == table[(size_t)tok[p] * D + d]);
				assert_true(o2[p * D + d] == o1[p * D + d]);
			}
		/* L = sum dout * out is linear in the table: its finite difference in double
		 * is exact up to rounding, dL/dtable[v,d] = sum over positions of token v. */
		for (int v = 0; v < V; v++)
			for (int d = 0; d < D; d++) {
				double h = 1e-3, lp = 0, lm = 0;
				for (size_t p = 0; p < P; p++) {
					double t = table[(size_t)tok[p] * D + d];
					double e = tok[p] == v ? h : 0;
					lp += dout[p * D + d] * (t + e);
					lm += dout[p * D + d] * (t - e);
				}
				want[(size_t)v * D + d] = (lp - lm) / (2 * h);
			}
		nn_embed_bwd_ref(g1, dout, tok, B, T, D, V);	/* g1, g2 start as junk */
		nn_embed_bwd_cpu(g2, dout, tok, B, T, D, V);
		float *wantf = malloc((size_t)V * D * sizeof(float));
		assert_non_null(wantf);
		for (size_t i = 0; i < (size_t)V * D; i++)
			wantf[i] = (float)want[i];
		assert_true(floats_close("embed dtable ref", g1, wantf, (size_t)V * D, 1e-5, 1e-5));
		assert_true(floats_close("embed dtable cpu", g2, g1, (size_t)V * D, 1e-6, 1e-6));
		free(wantf);
		free(tok), free(table), free(dout), free(o1), free(o2), free(g1), free(g2);
		free(want);
	}
}

struct lstm_case {
	int B, T, D, Hd;
	float *in, *wx, *wh, *b, *dout;
};

static double dsig(double x)
{
	return 1 / (1 + exp(-x));
}

/* Independent forward in double, written from the PyTorch formulas:
 * i = s(Wii x + Whi h + b_i), f = s(..), g = tanh(..), o = s(..), c = f c + i g,
 * h = o tanh(c); returns L = sum dout * h_T.  p = NULL: use the float parameters;
 * otherwise p holds all parameters as doubles, in the order in, wx, wh, b. */
static double lstm_loss_double(const struct lstm_case *k, const double *p)
{
	int B = k->B, T = k->T, D = k->D, H = k->Hd, G = 4 * H;
	const double *in = p, *wx = in + B * T * D, *wh = wx + G * D, *b = wh + G * H;
	double *h = calloc((size_t)H, sizeof(double)), *c = calloc((size_t)H, sizeof(double));
	double *a = malloc((size_t)G * sizeof(double)), L = 0;
	assert_true(h && c && a);
	for (int n = 0; n < B; n++) {
		memset(h, 0, (size_t)H * sizeof(double));
		memset(c, 0, (size_t)H * sizeof(double));
		for (int t = 0; t < T; t++) {
			for (int j = 0; j < G; j++) {
				a[j] = b[j];
				for (int d = 0; d < D; d++)
					a[j] += wx[j * D + d] * in[(n * T + t) * D + d];
				for (int m = 0; m < H; m++)
					a[j] += wh[j * H + m] * h[m];
			}
			for (int m = 0; m < H; m++) {
				c[m] = dsig(a[H + m]) * c[m] + dsig(a[m]) * tanh(a[2 * H + m]);
				h[m] = dsig(a[3 * H + m]) * tanh(c[m]);
			}
		}
		for (int m = 0; m < H; m++)
			L += k->dout[n * H + m] * h[m];
	}
	free(h), free(c), free(a);
	return L;
}

static void lstm_case_init(struct lstm_case *k, struct data_rng *r, int B, int T, int D,
			   int Hd)
{
	*k = (struct lstm_case){ B, T, D, Hd, NULL, NULL, NULL, NULL, NULL };
	double sc = 1 / sqrt(Hd);	/* PyTorch's init range */
	k->in = randv(r, (size_t)B * T * D, 1);
	k->wx = randv(r, (size_t)4 * Hd * D, sc * 2);
	k->wh = randv(r, (size_t)4 * Hd * Hd, sc * 2);
	k->b = randv(r, (size_t)4 * Hd, sc);
	k->dout = randv(r, (size_t)B * Hd, 1);
}

static void lstm_case_free(struct lstm_case *k)
{
	free(k->in), free(k->wx), free(k->wh), free(k->b), free(k->dout);
}

struct lstm_run {
	float *out, *cache, *din, *dwx, *dwh, *db;
};

static void lstm_run(struct lstm_run *o, const struct lstm_case *k, int fast)
{
	int B = k->B, T = k->T, D = k->D, H = k->Hd;
	o->out = malloc((size_t)B * H * sizeof(float));
	o->cache = malloc(nn_lstm_cache_floats(B, T, H) * sizeof(float));
	o->din = malloc((size_t)B * T * D * sizeof(float));
	o->dwx = malloc((size_t)4 * H * D * sizeof(float));
	o->dwh = malloc((size_t)4 * H * H * sizeof(float));
	o->db = malloc((size_t)4 * H * sizeof(float));
	assert_true(o->out && o->cache && o->din && o->dwx && o->dwh && o->db);
	/* Junk in every output: the ops must overwrite, not accumulate. */
	memset(o->cache, 0x7f, nn_lstm_cache_floats(B, T, H) * sizeof(float));
	memset(o->dwx, 0x7f, (size_t)4 * H * D * sizeof(float));
	memset(o->dwh, 0x7f, (size_t)4 * H * H * sizeof(float));
	memset(o->db, 0x7f, (size_t)4 * H * sizeof(float));
	memset(o->din, 0x7f, (size_t)B * T * D * sizeof(float));
	(fast ? nn_lstm_fwd_cpu : nn_lstm_fwd_ref)(o->out, o->cache, k->in, k->wx, k->wh, k->b,
						   B, T, D, H);
	(fast ? nn_lstm_bwd_cpu : nn_lstm_bwd_ref)(o->din, o->dwx, o->dwh, o->db, k->dout,
						   o->cache, k->in, k->wx, k->wh, B, T, D, H);
}

static void lstm_run_free(struct lstm_run *o)
{
	free(o->out), free(o->cache), free(o->din), free(o->dwx), free(o->dwh), free(o->db);
}

/* Fast vs reference on shapes with odd sizes, T = 1 and B = 1 included. */
static void test_lstm_fast_vs_ref(void **state)
{
	static const int shapes[][4] = { { 1, 1, 1, 1 }, { 2, 1, 3, 5 }, { 1, 6, 4, 3 },
					 { 5, 7, 9, 11 }, { 8, 20, 16, 32 } };
	struct data_rng r;
	data_rng_init(&r, 12, 0);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct lstm_case k;
		struct lstm_run a, f;
		lstm_case_init(&k, &r, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
		int B = k.B, T = k.T, D = k.D, H = k.Hd;
		lstm_run(&a, &k, 0);
		lstm_run(&f, &k, 1);
		fprintf(stderr, "shape B=%d T=%d D=%d Hd=%d\n", B, T, D, H);
		assert_true(floats_close("out", f.out, a.out, (size_t)B * H, 1e-5, 1e-4));
		/* forward part of the cache: gates, c, h */
		assert_true(floats_close("cache", f.cache, a.cache, (size_t)B * T * 6 * H, 1e-5,
					 1e-4));
		assert_true(floats_close("din", f.din, a.din, (size_t)B * T * D, 1e-5, 1e-3));
		assert_true(floats_close("dwx", f.dwx, a.dwx, (size_t)4 * H * D, 1e-5, 1e-3));
		assert_true(floats_close("dwh", f.dwh, a.dwh, (size_t)4 * H * H, 1e-5, 1e-3));
		assert_true(floats_close("db", f.db, a.db, (size_t)4 * H, 1e-5, 1e-3));
		lstm_run_free(&a);
		lstm_run_free(&f);
		lstm_case_free(&k);
	}
}

/* Both backends against central differences of the double forward (step 1e-5: the
 * truncation error ~1e-10 is far below the float rounding of the ops). */
static void test_lstm_finite_differences(void **state)
{
	static const int shapes[][4] = { { 2, 3, 3, 4 }, { 1, 5, 2, 3 }, { 3, 1, 2, 2 } };
	struct data_rng r;
	data_rng_init(&r, 13, 0);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct lstm_case k;
		lstm_case_init(&k, &r, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
		int B = k.B, T = k.T, D = k.D, H = k.Hd, G = 4 * H;
		size_t n_in = (size_t)B * T * D, n_wx = (size_t)G * D, n_wh = (size_t)G * H;
		size_t np = n_in + n_wx + n_wh + G;
		double *p = malloc(np * sizeof(double));
		float *num = malloc(np * sizeof(float));
		assert_true(p && num);
		const float *src[4] = { k.in, k.wx, k.wh, k.b };
		size_t len[4] = { n_in, n_wx, n_wh, (size_t)G }, off = 0;
		for (int q = 0; q < 4; q++)
			for (size_t i = 0; i < len[q]; i++)
				p[off++] = src[q][i];
		for (size_t i = 0; i < np; i++) {
			double keep = p[i], h = 1e-5;
			p[i] = keep + h;
			double lp = lstm_loss_double(&k, p);
			p[i] = keep - h;
			double lm = lstm_loss_double(&k, p);
			p[i] = keep;
			num[i] = (float)((lp - lm) / (2 * h));
		}
		for (int fast = 0; fast < 2; fast++) {
			struct lstm_run o;
			lstm_run(&o, &k, fast);
			/* The forward too: L from the op's output against the double forward. */
			double L = 0;
			for (int i = 0; i < B * H; i++)
				L += (double)k.dout[i] * o.out[i];
			assert_true(fabs(L - lstm_loss_double(&k, p)) < 1e-5);
			const char *be = fast ? "cpu" : "ref";
			fprintf(stderr, "%s shape B=%d T=%d D=%d Hd=%d\n", be, B, T, D, H);
			assert_true(floats_close("din vs fd", o.din, num, n_in, 2e-5, 1e-3));
			assert_true(floats_close("dwx vs fd", o.dwx, num + n_in, n_wx, 2e-5, 1e-3));
			assert_true(floats_close("dwh vs fd", o.dwh, num + n_in + n_wx, n_wh, 2e-5,
						 1e-3));
			assert_true(floats_close("db vs fd", o.db, num + n_in + n_wx + n_wh,
						 (size_t)G, 2e-5, 1e-3));
			lstm_run_free(&o);
		}
		free(p), free(num);
		lstm_case_free(&k);
	}
}

/* lstm_bwd keeps its scratch in the cache: a second backward must see an intact forward
 * part and give identical gradients; NULL outputs are skipped. */
static void test_lstm_bwd_twice_and_null(void **state)
{
	struct data_rng r;
	struct lstm_case k;
	data_rng_init(&r, 14, 0);
	lstm_case_init(&k, &r, 3, 4, 5, 6);
	int B = k.B, T = k.T, D = k.D, H = k.Hd;
	for (int fast = 0; fast < 2; fast++) {
		struct lstm_run o;
		lstm_run(&o, &k, fast);
		size_t nf = (size_t)B * T * 6 * H, ng = (size_t)4 * H * D;
		float *fwd = malloc(nf * sizeof(float)), *dwx = malloc(ng * sizeof(float));
		assert_true(fwd && dwx);
		memcpy(fwd, o.cache, nf * sizeof(float));
		memcpy(dwx, o.dwx, ng * sizeof(float));
		memset(o.dwx, 0, ng * sizeof(float));
		(fast ? nn_lstm_bwd_cpu : nn_lstm_bwd_ref)(NULL, o.dwx, NULL, NULL, k.dout, o.cache,
							   k.in, k.wx, k.wh, B, T, D, H);
		assert_memory_equal(fwd, o.cache, nf * sizeof(float));
		assert_memory_equal(dwx, o.dwx, ng * sizeof(float));
		free(fwd), free(dwx);
		lstm_run_free(&o);
	}
	lstm_case_free(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embed),
		cmocka_unit_test(test_lstm_fast_vs_ref),
		cmocka_unit_test(test_lstm_finite_differences),
		cmocka_unit_test(test_lstm_bwd_twice_and_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
