/* nn/cpu/ops_seq_cpu.c — embedding and LSTM on emu's matrix kernels (nn/cpu/cpu.h): the
 * input projection of all time steps is one product, the recurrence one product per
 * step, and the weight gradients are products over all steps at once; the cells are
 * vf16 (nn/cpu/vec16.h).  Every level computes the same bits.  Same cache layout as
 * the reference (ops_seq.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
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

/* in (B,T,D), wx (4Hd,D), wh (4Hd,Hd), b (4Hd) -> out (B,Hd).  Both products through
 * nn_cpu_gemm_rows_a (each output sums its terms in k order, after the bias), A read in
 * place (in, then h_{t-1} each step) and B = the weights transposed, copies in one
 * scratch block of 4Hd (D + Hd) floats.  Measured against the dot products of rows
 * (nn_cpu_gemm_abt, no copies) at B 32, T 32, D 64, Hd 128: 2.15 ms against 3.45 ms a
 * forward pass with AVX-512: a 64- or 128-term dot product spends as much on its final
 * sum across lanes as on its products.  A given transposed instead (nn_cpu_gemm_at)
 * computes the same sums, but reads in^T's columns 4 KiB apart: 0.9-1.06 ms for the
 * input projection at the avx2 level against 0.61 in place. */
void nn_lstm_fwd_cpu(struct nn_backend *be, float *out, float *cache, const float *in,
		     const float *wx, const float *wh, const float *b, int B, int T, int D,
		     int Hd)
{
	struct nn_lstm_cache s = nn_lstm_cache_split(cache, B, T, Hd);
	int G = 4 * Hd, BT = B * T;
	float *wxt = nn_cpu_scratch(be, (size_t)G * (D + Hd), "lstm_fwd");

	if (!wxt)
		return;
	struct nn_gemm_rows wxr = { .p = wxt, .ps = (size_t)G, .nc = D, .kh = 1, .kw = 1 };
	struct nn_gemm_rows whr = { .p = wxt + (size_t)G * D, .ps = (size_t)G, .nc = Hd,
				    .kh = 1, .kw = 1 };

	nn_cpu_transpose(wxt, wx, G, D);
	nn_cpu_transpose(wxt + (size_t)G * D, wh, G, Hd);
	/* gates (B*T, 4Hd) = b + in (B*T, D) wx^T */
	for (int p = 0; b && p < BT; p++)
		memcpy(s.gates + (size_t)p * G, b, (size_t)G * sizeof(float));
	nn_cpu_gemm_rows_a(s.gates, (size_t)G, in, (size_t)D, 1, &wxr, BT, G, b != NULL);
	for (int t = 0; t < T; t++) {
		/* gates[:, t] += h[:, t-1] wh^T: rows of one step are T*4Hd apart */
		if (t)
			nn_cpu_gemm_rows_a(s.gates + (size_t)t * G, (size_t)T * G,
					   s.h + (size_t)(t - 1) * Hd, (size_t)T * Hd, 1, &whr, B, G,
					   1);
		for (int n = 0; n < B; n++) {
			size_t bt = (size_t)n * T + t;
			float *c = s.c + bt * Hd;

			cell_fwd(s.gates + bt * G, c, s.h + bt * Hd, t ? c - Hd : NULL, Hd);
		}
	}
	free(wxt);
	for (int n = 0; n < B; n++)
		memcpy(out + (size_t)n * Hd, s.h + ((size_t)n * T + T - 1) * Hd,
		       (size_t)Hd * sizeof(float));
}

/* dA (B*T, 4Hd) the gate pre-activations' gradients, step by step backwards; then the
 * products of all steps at once.  Every output of every product sums its terms in k
 * order (nn/cpu/ops_cpu_gemm.c).  The step's dh and din read dA in place as A and the
 * weights as they lie as B (nn_cpu_gemm_rows_a): no copies, and faster than dot
 * products of rows over transposed weights (B 32, T 32, D 64, Hd 128 at the avx2
 * level: dh 1.43 ms against 1.71 over the 31 steps, din 0.59 against 0.88). */
void nn_lstm_bwd_cpu(struct nn_backend *be, float *din, float *dwx, float *dwh, float *db,
		     const float *dout, const float *cache, const float *in, const float *wx,
		     const float *wh, int B, int T, int D, int Hd)
{
	struct nn_lstm_cache s = nn_lstm_cache_split(cache, B, T, Hd);
	int G = 4 * Hd, BT = B * T;
	float *dh = s.dh, *dh2 = s.tmp;
	const struct nn_gemm_rows whr = { .p = wh, .ps = (size_t)Hd, .nc = G, .kh = 1, .kw = 1 };

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
			nn_cpu_gemm_rows_a(dh2, (size_t)Hd, s.dA + (size_t)t * G, (size_t)T * G, 1,
					   &whr, B, Hd, 0);
			float *sw = dh;
			dh = dh2;
			dh2 = sw;
		}
	}
	if (db)
		nn_cpu_colsum(db, s.dA, BT, G);
	/* dwx (4Hd,D) = dA^T (4Hd, B*T) in (B*T, D) */
	if (dwx)
		nn_cpu_gemm_at(dwx, (size_t)D, s.dA, in, (size_t)D, G, D, BT, NULL, 0);
	/* dwh (4Hd,Hd) = sum over samples of dA[n, 1:]^T h[n, :T-1] */
	if (dwh) {
		if (T < 2)
			memset(dwh, 0, (size_t)G * Hd * sizeof(float));
		for (int n = 0; T >= 2 && n < B; n++)
			nn_cpu_gemm_at(dwh, (size_t)Hd, s.dA + ((size_t)n * T + 1) * G,
				       s.h + (size_t)n * T * Hd, (size_t)Hd, G, Hd, T - 1, NULL, n > 0);
	}
	/* din (B*T, D) = dA (B*T, 4Hd) wx (4Hd, D) */
	if (din) {
		const struct nn_gemm_rows wxr = { .p = wx, .ps = (size_t)D, .nc = G, .kh = 1,
						  .kw = 1 };

		nn_cpu_gemm_rows_a(din, (size_t)D, s.dA, (size_t)G, 1, &wxr, BT, D, 0);
	}
}
