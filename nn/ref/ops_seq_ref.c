/* nn/ref/ops_seq_ref.c — embedding and LSTM, plain loops with double accumulators: the
 * oracle the fast path is tested against.  Shapes in comments; layouts in ops_seq.h. */
#include <math.h>
#include <string.h>
#include "nn/ops_seq.h"
#include "nn/ref/ref.h"

size_t nn_lstm_cache_floats(int B, int T, int Hd)
{
	return (size_t)B * T * 10 * Hd + (size_t)3 * B * Hd;
}

/* out (B,T,D) = table[tokens (B,T)] */
void nn_embed_fwd_ref(struct nn_backend *be, float *out, const int32_t *tokens,
		      const float *table, int B, int T, int D)
{
	for (int p = 0; p < B * T; p++)
		for (int d = 0; d < D; d++)
			out[(size_t)p * D + d] = table[(size_t)tokens[p] * D + d];
}

/* dtable (V,D): row v = sum of dout rows whose token is v */
void nn_embed_bwd_ref(struct nn_backend *be, float *dtable, const float *dout,
		      const int32_t *tokens, int B, int T, int D, int V)
{
	if (!dtable)
		return;
	memset(dtable, 0, (size_t)V * D * sizeof(float));
	for (int p = 0; p < B * T; p++) {
		if (tokens[p] < 0 || tokens[p] >= V)
			continue;
		for (int d = 0; d < D; d++)
			dtable[(size_t)tokens[p] * D + d] += dout[(size_t)p * D + d];
	}
}

static double sigm(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

/* in (B,T,D), wx (4Hd,D), wh (4Hd,Hd), b (4Hd) -> out (B,Hd) */
void nn_lstm_fwd_ref(struct nn_backend *be, float *out, float *cache, const float *in,
		     const float *wx, const float *wh, const float *b, int B, int T, int D,
		     int Hd)
{
	struct nn_lstm_cache s = nn_lstm_cache_split(cache, B, T, Hd);
	for (int n = 0; n < B; n++) {
		for (int t = 0; t < T; t++) {
			size_t bt = (size_t)n * T + t;
			const float *x = in + bt * D;
			const float *hp = t ? s.h + (bt - 1) * Hd : NULL;
			const float *cp = t ? s.c + (bt - 1) * Hd : NULL;
			float *gt = s.gates + bt * 4 * Hd;
			for (int k = 0; k < Hd; k++) {
				double a[4];
				for (int q = 0; q < 4; q++) {
					int j = q * Hd + k;
					double acc = b ? b[j] : 0.0;
					for (int d = 0; d < D; d++)
						acc += (double)wx[(size_t)j * D + d] * x[d];
					for (int m = 0; hp && m < Hd; m++)
						acc += (double)wh[(size_t)j * Hd + m] * hp[m];
					a[q] = acc;
				}
				double gi = sigm(a[0]), gf = sigm(a[1]), gg = tanh(a[2]),
				       go = sigm(a[3]);
				double c = gf * (cp ? cp[k] : 0.0) + gi * gg;
				gt[k] = (float)gi;
				gt[Hd + k] = (float)gf;
				gt[2 * Hd + k] = (float)gg;
				gt[3 * Hd + k] = (float)go;
				s.c[bt * Hd + k] = (float)c;
				s.h[bt * Hd + k] = (float)(go * tanh(c));
			}
		}
		memcpy(out + (size_t)n * Hd, s.h + ((size_t)n * T + T - 1) * Hd,
		       (size_t)Hd * sizeof(float));
	}
}

/* dout (B,Hd) is the gradient of the last hidden state; see ops_seq.h for the cache. */
void nn_lstm_bwd_ref(struct nn_backend *be, float *din, float *dwx, float *dwh, float *db,
		     const float *dout, const float *cache, const float *in, const float *wx,
		     const float *wh, int B, int T, int D, int Hd)
{
	struct nn_lstm_cache s = nn_lstm_cache_split(cache, B, T, Hd);
	int G = 4 * Hd;

	memcpy(s.dh, dout, (size_t)B * Hd * sizeof(float));
	memset(s.dc, 0, (size_t)B * Hd * sizeof(float));
	/* Back through time: dA (B,T,4Hd) = gradient of the gate pre-activations. */
	for (int t = T - 1; t >= 0; t--) {
		for (int n = 0; n < B; n++) {
			size_t bt = (size_t)n * T + t;
			const float *g = s.gates + bt * G;
			float *dA = s.dA + bt * G;
			for (int k = 0; k < Hd; k++) {
				double gi = g[k], gf = g[Hd + k], gg = g[2 * Hd + k],
				       go = g[3 * Hd + k];
				double c = s.c[bt * Hd + k], cp = t ? s.c[(bt - 1) * Hd + k] : 0.0;
				double tc = tanh(c), dh = s.dh[(size_t)n * Hd + k];
				double dc = s.dc[(size_t)n * Hd + k] + dh * go * (1 - tc * tc);
				dA[k] = (float)(dc * gg * gi * (1 - gi));
				dA[Hd + k] = (float)(dc * cp * gf * (1 - gf));
				dA[2 * Hd + k] = (float)(dc * gi * (1 - gg * gg));
				dA[3 * Hd + k] = (float)(dh * tc * go * (1 - go));
				s.dc[(size_t)n * Hd + k] = (float)(dc * gf);
			}
			/* dh_{t-1} = dA_t wh */
			for (int m = 0; t && m < Hd; m++) {
				double acc = 0;
				for (int j = 0; j < G; j++)
					acc += (double)dA[j] * wh[(size_t)j * Hd + m];
				s.dh[(size_t)n * Hd + m] = (float)acc;
			}
		}
	}
	size_t BT = (size_t)B * T;
	for (int j = 0; j < G; j++) {
		if (db) {
			double acc = 0;
			for (size_t p = 0; p < BT; p++)
				acc += s.dA[p * G + j];
			db[j] = (float)acc;
		}
		for (int d = 0; dwx && d < D; d++) {
			double acc = 0;
			for (size_t p = 0; p < BT; p++)
				acc += (double)s.dA[p * G + j] * in[p * D + d];
			dwx[(size_t)j * D + d] = (float)acc;
		}
		for (int m = 0; dwh && m < Hd; m++) {
			double acc = 0;
			for (int n = 0; n < B; n++)
				for (int t = 1; t < T; t++) {
					size_t bt = (size_t)n * T + t;
					acc += (double)s.dA[bt * G + j] * s.h[(bt - 1) * Hd + m];
				}
			dwh[(size_t)j * Hd + m] = (float)acc;
		}
	}
	for (size_t p = 0; din && p < BT; p++)
		for (int d = 0; d < D; d++) {
			double acc = 0;
			for (int j = 0; j < G; j++)
				acc += (double)s.dA[p * G + j] * wx[(size_t)j * D + d];
			din[p * D + d] = (float)acc;
		}
}
