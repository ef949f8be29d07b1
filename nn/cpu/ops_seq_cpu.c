/* nn/cpu/ops_seq_cpu.c — embedding and LSTM on OpenBLAS: the input projection of all time
 * steps is one sgemm, the recurrence one sgemm per step, and the weight gradients are
 * sgemms over all steps at once.  Same cache layout as the reference (ops_seq.h). */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "nn/cpu/cpu.h"
#include "nn/cpu/vmath16.h"
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

/* The loads and stores of the cells' 16 lanes: plain when full, else masked by m */
#define LD(p) (full ? vf_load(p) : vf_loadm(p, m))
#define ST(p, v) (full ? vf_store(p, v) : vf_storem(p, m, v))

/* One sample's LSTM cell at one step, 16 k at a time from k: g (4Hd) the gate
 * pre-activations in, their nonlinearities out; c, h (Hd) the new state; cp the
 * previous c or NULL:
 *   i, f, o = sigm(g_i, g_f, g_o), gg = tanh(g_g), c = (f cp or 0) + i gg, h = o tanh(c)
 * Lane by lane on every level, so a level's width changes no bit.  full: all 16 lanes
 * are in; else the lanes of m (the row's last block), the others never touched. */
static inline __attribute__((always_inline)) void
cell_fwd16(float *g, float *c, float *h, const float *cp, int k, int Hd, vm16 m, const int full)
{
	vf16 gi = nn_vsigm16(LD(g + k)), gf = nn_vsigm16(LD(g + Hd + k));
	vf16 gg = nn_vtanh16(LD(g + 2 * Hd + k)), go = nn_vsigm16(LD(g + 3 * Hd + k));
	vf16 ck = vf_add(cp ? vf_mul(gf, LD(cp + k)) : vf_zero(), vf_mul(gi, gg));

	ST(g + k, gi);
	ST(g + Hd + k, gf);
	ST(g + 2 * Hd + k, gg);
	ST(g + 3 * Hd + k, go);
	ST(c + k, ck);
	ST(h + k, vf_mul(go, nn_vtanh16(ck)));
}

static void cell_fwd(float *g, float *c, float *h, const float *cp, int Hd)
{
	int k = 0;

	for (; k + 16 <= Hd; k += 16)
		cell_fwd16(g, c, h, cp, k, Hd, vm_first(16), 1);
	if (k < Hd)
		cell_fwd16(g, c, h, cp, k, Hd, vm_first(Hd - k), 0);
}

/* The gate gradients dA (4Hd) of one sample at one step, 16 k at a time from k, and
 * the running dc (Hd) <- dc_{t-1}; g, c, cp as cell_fwd left them, dh the step's
 * hidden-state gradient:
 *   tc = tanh(c), dc' = dc + dh o (1 - tc^2), dA_i = dc' gg i (1 - i),
 *   dA_f = (dc' cp or 0) f (1 - f), dA_g = dc' i (1 - gg^2), dA_o = dh tc o (1 - o),
 *   dc_{t-1} = dc' f   (products left to right, as written) */
static inline __attribute__((always_inline)) void
cell_bwd16(float *dA, float *dc, const float *g, const float *c, const float *cp,
	   const float *dh, int k, int Hd, vm16 m, const int full)
{
	const vf16 one = vf_set1(1.0f);
	vf16 gi = LD(g + k), gf = LD(g + Hd + k), gg = LD(g + 2 * Hd + k), go = LD(g + 3 * Hd + k);
	vf16 tc = nn_vtanh16(LD(c + k)), d = LD(dh + k);
	vf16 dck = vf_add(LD(dc + k), vf_mul(vf_mul(d, go), vf_sub(one, vf_mul(tc, tc))));
	vf16 df = cp ? vf_mul(dck, LD(cp + k)) : vf_zero();

	ST(dA + k, vf_mul(vf_mul(vf_mul(dck, gg), gi), vf_sub(one, gi)));
	ST(dA + Hd + k, vf_mul(vf_mul(df, gf), vf_sub(one, gf)));
	ST(dA + 2 * Hd + k, vf_mul(vf_mul(dck, gi), vf_sub(one, vf_mul(gg, gg))));
	ST(dA + 3 * Hd + k, vf_mul(vf_mul(vf_mul(d, tc), go), vf_sub(one, go)));
	ST(dc + k, vf_mul(dck, gf));
}
#undef LD
#undef ST

static void cell_bwd(float *dA, float *dc, const float *g, const float *c, const float *cp,
		     const float *dh, int Hd)
{
	int k = 0;

	for (; k + 16 <= Hd; k += 16)
		cell_bwd16(dA, dc, g, c, cp, dh, k, Hd, vm_first(16), 1);
	if (k < Hd)
		cell_bwd16(dA, dc, g, c, cp, dh, k, Hd, vm_first(Hd - k), 0);
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
