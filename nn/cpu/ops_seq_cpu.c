/* nn/cpu/ops_seq_cpu.c — embedding and LSTM on OpenBLAS: the input projection of all time
 * steps is one sgemm, the recurrence one sgemm per step, and the weight gradients are
 * sgemms over all steps at once.  Same cache layout as the reference (ops_seq.h). */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "nn/cpu/cpu.h"
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

static inline float sigmf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

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
			float *g = s.gates + bt * G, *c = s.c + bt * Hd, *h = s.h + bt * Hd;
			const float *cp = t ? c - Hd : NULL;
			for (int k = 0; k < Hd; k++) {
				float gi = sigmf(g[k]), gf = sigmf(g[Hd + k]);
				float gg = tanhf(g[2 * Hd + k]), go = sigmf(g[3 * Hd + k]);
				g[k] = gi;
				g[Hd + k] = gf;
				g[2 * Hd + k] = gg;
				g[3 * Hd + k] = go;
				c[k] = (cp ? gf * cp[k] : 0.0f) + gi * gg;
				h[k] = go * tanhf(c[k]);
			}
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
			const float *g = s.gates + bt * G, *c = s.c + bt * Hd;
			const float *cp = t ? c - Hd : NULL;
			float *dA = s.dA + bt * G, *dc = s.dc + (size_t)n * Hd;
			const float *dhn = dh + (size_t)n * Hd;
			for (int k = 0; k < Hd; k++) {
				float gi = g[k], gf = g[Hd + k], gg = g[2 * Hd + k], go = g[3 * Hd + k];
				float tc = tanhf(c[k]);
				float dck = dc[k] + dhn[k] * go * (1.0f - tc * tc);
				dA[k] = dck * gg * gi * (1.0f - gi);
				dA[Hd + k] = (cp ? dck * cp[k] : 0.0f) * gf * (1.0f - gf);
				dA[2 * Hd + k] = dck * gi * (1.0f - gg * gg);
				dA[3 * Hd + k] = dhn[k] * tc * go * (1.0f - go);
				dc[k] = dck * gf;
			}
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
