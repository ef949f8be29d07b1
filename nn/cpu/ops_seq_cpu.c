/* nn/cpu/ops_seq_cpu.c — embedding and LSTM on OpenBLAS: the input projection of all time
 * steps is one sgemm, the recurrence one sgemm per step, and the weight gradients are
 * sgemms over all steps at once.  Same cache layout as the reference (ops_seq.h). */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "nn/cpu/cpu.h"
#include "nn/vmath.h"
#include "nn/ops_seq.h"

void nn_embed_fwd_cpu(struct nn_backend *be, float *out, const int32_t *tokens,
		      const float *table, int B, int T, int D)
{
	size_t row = (size_t)D * sizeof(float);
	for (size_t p = 0; p < (size_t)B * T; p++)
		memcpy(out + p * D, table + (size_t)tokens[p] * D, row);
}

void nn_embed_bwd_cpu(struct nn_backend *be, float *dtable, const float *dout,
		      const int32_t *tokens, int B, int T, int D, int V)
{
	if (!dtable)
		return;
	memset(dtable, 0, (size_t)V * D * sizeof(float));
	for (size_t p = 0; p < (size_t)B * T; p++) {
		if (tokens[p] < 0 || tokens[p] >= V)
			continue;
		float *restrict dst = dtable + (size_t)tokens[p] * D;
		const float *restrict src = dout + p * D;
		for (int d = 0; d < D; d++)
			dst[d] += src[d];
	}
}

/* One sample's LSTM cell at one step, k in [k0, Hd): g (4Hd) the gate pre-activations
 * in, their nonlinearities out; c, h (Hd) the new state; cp the previous c or NULL. */
static void cell_fwd_tail(float *g, float *c, float *h, const float *cp, int k0, int Hd)
{
	for (int k = k0; k < Hd; k++) {
		float gi = nn_vsigmf(g[k]), gf = nn_vsigmf(g[Hd + k]);
		float gg = nn_vtanhf(g[2 * Hd + k]), go = nn_vsigmf(g[3 * Hd + k]);

		g[k] = gi;
		g[Hd + k] = gf;
		g[2 * Hd + k] = gg;
		g[3 * Hd + k] = go;
		c[k] = (cp ? gf * cp[k] : 0.0f) + gi * gg;
		h[k] = go * nn_vtanhf(c[k]);
	}
}

/* The gate gradients dA (4Hd) of one sample at one step, k in [k0, Hd), and the
 * running dc (Hd) <- dc_{t-1}; g, c, cp as cell_fwd_tail left them, dh the step's
 * hidden-state gradient. */
static void cell_bwd_tail(float *dA, float *dc, const float *g, const float *c,
			  const float *cp, const float *dh, int k0, int Hd)
{
	for (int k = k0; k < Hd; k++) {
		float gi = g[k], gf = g[Hd + k], gg = g[2 * Hd + k], go = g[3 * Hd + k];
		float tc = nn_vtanhf(c[k]);
		float dck = dc[k] + dh[k] * go * (1.0f - tc * tc);

		dA[k] = dck * gg * gi * (1.0f - gi);
		dA[Hd + k] = (cp ? dck * cp[k] : 0.0f) * gf * (1.0f - gf);
		dA[2 * Hd + k] = dck * gi * (1.0f - gg * gg);
		dA[3 * Hd + k] = dh[k] * tc * go * (1.0f - go);
		dc[k] = dck * gf;
	}
}

#ifdef __AVX512F__
/* The same as the tails, 16 k at a time (the same operations in the same order) */
static void cell_fwd(float *g, float *c, float *h, const float *cp, int Hd)
{
	int k = 0;

	for (; k + 16 <= Hd; k += 16) {
		__m512 gi = nn_vsigm16(_mm512_loadu_ps(g + k));
		__m512 gf = nn_vsigm16(_mm512_loadu_ps(g + Hd + k));
		__m512 gg = nn_vtanh16(_mm512_loadu_ps(g + 2 * Hd + k));
		__m512 go = nn_vsigm16(_mm512_loadu_ps(g + 3 * Hd + k));
		__m512 f = cp ? _mm512_mul_ps(gf, _mm512_loadu_ps(cp + k)) : _mm512_setzero_ps();
		__m512 ck = _mm512_add_ps(f, _mm512_mul_ps(gi, gg));

		_mm512_storeu_ps(g + k, gi);
		_mm512_storeu_ps(g + Hd + k, gf);
		_mm512_storeu_ps(g + 2 * Hd + k, gg);
		_mm512_storeu_ps(g + 3 * Hd + k, go);
		_mm512_storeu_ps(c + k, ck);
		_mm512_storeu_ps(h + k, _mm512_mul_ps(go, nn_vtanh16(ck)));
	}
	cell_fwd_tail(g, c, h, cp, k, Hd);
}

static void cell_bwd(float *dA, float *dc, const float *g, const float *c, const float *cp,
		     const float *dh, int Hd)
{
	const __m512 one = _mm512_set1_ps(1.0f);
	int k = 0;

	for (; k + 16 <= Hd; k += 16) {
		__m512 gi = _mm512_loadu_ps(g + k), gf = _mm512_loadu_ps(g + Hd + k);
		__m512 gg = _mm512_loadu_ps(g + 2 * Hd + k), go = _mm512_loadu_ps(g + 3 * Hd + k);
		__m512 tc = nn_vtanh16(_mm512_loadu_ps(c + k)), d = _mm512_loadu_ps(dh + k);
		__m512 dck = _mm512_add_ps(_mm512_loadu_ps(dc + k), _mm512_mul_ps(
			_mm512_mul_ps(d, go), _mm512_sub_ps(one, _mm512_mul_ps(tc, tc))));
		__m512 df = cp ? _mm512_mul_ps(dck, _mm512_loadu_ps(cp + k)) : _mm512_setzero_ps();

		_mm512_storeu_ps(dA + k, _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(dck, gg), gi),
						       _mm512_sub_ps(one, gi)));
		_mm512_storeu_ps(dA + Hd + k, _mm512_mul_ps(_mm512_mul_ps(df, gf),
							    _mm512_sub_ps(one, gf)));
		_mm512_storeu_ps(dA + 2 * Hd + k, _mm512_mul_ps(_mm512_mul_ps(dck, gi),
				 _mm512_sub_ps(one, _mm512_mul_ps(gg, gg))));
		_mm512_storeu_ps(dA + 3 * Hd + k, _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(d, tc),
				 go), _mm512_sub_ps(one, go)));
		_mm512_storeu_ps(dc + k, _mm512_mul_ps(dck, gf));
	}
	cell_bwd_tail(dA, dc, g, c, cp, dh, k, Hd);
}
#else
static void cell_fwd(float *g, float *c, float *h, const float *cp, int Hd)
{
	cell_fwd_tail(g, c, h, cp, 0, Hd);
}

static void cell_bwd(float *dA, float *dc, const float *g, const float *c, const float *cp,
		     const float *dh, int Hd)
{
	cell_bwd_tail(dA, dc, g, c, cp, dh, 0, Hd);
}
#endif

/* in (B,T,D), wx (4Hd,D), wh (4Hd,Hd), b (4Hd) -> out (B,Hd) */
void nn_lstm_fwd_cpu(struct nn_backend *be, float *out, float *cache, const float *in,
		     const float *wx, const float *wh, const float *b, int B, int T, int D,
		     int Hd)
{
	struct nn_lstm_cache s = nn_lstm_cache_split(cache, B, T, Hd);
	int G = 4 * Hd, BT = B * T;

	/* gates (B*T, 4Hd) = in (B*T, D) wx^T (+ b) */
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, BT, G, D, 1.0f, in, D, wx, D,
		    0.0f, s.gates, G);
	for (int p = 0; b && p < BT; p++)
		for (int j = 0; j < G; j++)
			s.gates[(size_t)p * G + j] += b[j];
	for (int t = 0; t < T; t++) {
		/* gates[:, t] += h[:, t-1] wh^T: rows of one step are T*4Hd apart */
		if (t)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, G, Hd, 1.0f,
				    s.h + (size_t)(t - 1) * Hd, T * Hd, wh, Hd, 1.0f,
				    s.gates + (size_t)t * G, T * G);
		for (int n = 0; n < B; n++) {
			size_t bt = (size_t)n * T + t;
			float *c = s.c + bt * Hd;

			cell_fwd(s.gates + bt * G, c, s.h + bt * Hd, t ? c - Hd : NULL, Hd);
		}
	}
	for (int n = 0; n < B; n++)
		memcpy(out + (size_t)n * Hd, s.h + ((size_t)n * T + T - 1) * Hd,
		       (size_t)Hd * sizeof(float));
}

void nn_lstm_bwd_cpu(struct nn_backend *be, float *din, float *dwx, float *dwh, float *db,
		     const float *dout, const float *cache, const float *in, const float *wx,
		     const float *wh, int B, int T, int D, int Hd)
{
	struct nn_lstm_cache s = nn_lstm_cache_split(cache, B, T, Hd);
	int G = 4 * Hd, BT = B * T;
	float *dh = s.dh, *dh2 = s.tmp;

	memcpy(dh, dout, (size_t)B * Hd * sizeof(float));
	memset(s.dc, 0, (size_t)B * Hd * sizeof(float));
	for (int t = T - 1; t >= 0; t--) {
		for (int n = 0; n < B; n++) {
			size_t bt = (size_t)n * T + t;
			const float *c = s.c + bt * Hd;

			cell_bwd(s.dA + bt * G, s.dc + (size_t)n * Hd, s.gates + bt * G, c,
				 t ? c - Hd : NULL, dh + (size_t)n * Hd, Hd);
		}
		if (t) {
			/* dh_{t-1} (B,Hd) = dA[:, t] (B,4Hd) wh (4Hd,Hd) */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, Hd, G, 1.0f,
				    s.dA + (size_t)t * G, T * G, wh, Hd, 0.0f, dh2, Hd);
			float *sw = dh;
			dh = dh2;
			dh2 = sw;
		}
	}
	if (db)
		nn_cpu_colsum(db, s.dA, BT, G);
	/* dwx (4Hd,D) = dA^T (4Hd, B*T) in (B*T, D) */
	if (dwx)
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, G, D, BT, 1.0f, s.dA, G,
			    in, D, 0.0f, dwx, D);
	/* dwh (4Hd,Hd) = sum over samples of dA[n, 1:]^T h[n, :T-1] */
	if (dwh) {
		if (T < 2)
			memset(dwh, 0, (size_t)G * Hd * sizeof(float));
		for (int n = 0; T >= 2 && n < B; n++)
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, G, Hd, T - 1, 1.0f,
				    s.dA + ((size_t)n * T + 1) * G, G, s.h + (size_t)n * T * Hd, Hd,
				    n ? 1.0f : 0.0f, dwh, Hd);
	}
	/* din (B*T, D) = dA (B*T, 4Hd) wx (4Hd, D) */
	if (din)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, BT, D, G, 1.0f, s.dA, G,
			    wx, D, 0.0f, din, D);
}
