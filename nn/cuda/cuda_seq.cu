/* nn/cuda/cuda_seq.cu — the embedding and the one-layer LSTM, a port of the CPU backend's
 * (nn/cpu/ops_seq_cpu.c): the same matrix products (cuBLAS here, row-major calls one to
 * one), the gate arithmetic one thread per (sample, unit), the cache layout of
 * nn/ops_seq.h.  The embedding's backward adds without atomics, each row's positions in
 * order, as the reference does. */
#include <math.h>
#include "nn/cuda/cuda.cuh"

static __host__ __device__ inline float sigmf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* out (B,T,D) = table[tokens (B,T)] */
extern "C" void nn_cuda_embed_fwd(struct nn_backend *be, float *out, const int32_t *tokens,
				  const float *table, int B, int T, int D)
{
	nn_cuda_launch(be, (size_t)B * T * D, [=] __device__(size_t i) {
		out[i] = table[(size_t)tokens[i / D] * D + i % D];
	});
}

/* dtable (V,D): row v = the sum of the dout rows whose token is v, in position order
 * (tokens outside [0, V) are skipped).  One thread per (position, column): the thread of
 * a token's first position walks the later ones and writes the row, the others return.
 * No thread writes where another does, and no thread adds to memory: each walks the
 * positions on its own (one token load for a warp's 32 columns), not D threads walking
 * all of them through read-modify-writes of dtable. */
extern "C" void nn_cuda_embed_bwd(struct nn_backend *be, float *dtable, const float *dout,
				  const int32_t *tokens, int B, int T, int D, int V)
{
	if (!dtable || be->err)
		return;
	size_t P = (size_t)B * T;

	CU_RT(be, cudaMemsetAsync(dtable, 0, (size_t)V * D * sizeof(float), nn_cu(be)->stream));
	nn_cuda_launch(be, P * D, [=] __device__(size_t i) {
		size_t p = i / D, d = i % D;
		int32_t v = tokens[p];

		if (v < 0 || v >= V)
			return;
		for (size_t q = 0; q < p; q++)
			if (tokens[q] == v)
				return;
		float acc = 0.0f;

		for (size_t q = p; q < P; q++)
			if (tokens[q] == v)
				acc += dout[q * D + d];
		dtable[(size_t)v * D + d] = acc;
	});
}

/* in (B,T,D), wx (4Hd,D), wh (4Hd,Hd), b (4Hd) -> out (B,Hd) */
extern "C" void nn_cuda_lstm_fwd(struct nn_backend *be, float *out, float *cache,
				 const float *in, const float *wx, const float *wh,
				 const float *b, int B, int T, int D, int Hd)
{
	struct nn_lstm_cache s = nn_lstm_cache_split(cache, B, T, Hd);
	int G = 4 * Hd, BT = B * T;
	float *gates = s.gates, *cs = s.c, *hs = s.h;

	/* gates (B*T, 4Hd) = in (B*T, D) wx^T (+ b) */
	nn_cuda_gemm(be, false, true, BT, G, D, 1.0f, in, D, wx, D, 0.0f, gates, G);
	if (b)
		nn_cuda_launch(be, (size_t)BT * G, [=] __device__(size_t i) { gates[i] += b[i % G]; });
	for (int t = 0; t < T; t++) {
		/* gates[:, t] += h[:, t-1] wh^T: rows of one step are T*4Hd apart */
		if (t)
			nn_cuda_gemm(be, false, true, B, G, Hd, 1.0f, hs + (size_t)(t - 1) * Hd,
				     T * Hd, wh, Hd, 1.0f, gates + (size_t)t * G, T * G);
		nn_cuda_launch(be, (size_t)B * Hd, [=] __device__(size_t i) {
			size_t bt = i / Hd * T + t;
			int k = (int)(i % Hd);
			float *g = gates + bt * G;
			float gi = sigmf(g[k]), gf = sigmf(g[Hd + k]);
			float gg = tanhf(g[2 * Hd + k]), go = sigmf(g[3 * Hd + k]);
			float c = (t ? gf * cs[(bt - 1) * Hd + k] : 0.0f) + gi * gg;

			g[k] = gi;
			g[Hd + k] = gf;
			g[2 * Hd + k] = gg;
			g[3 * Hd + k] = go;
			cs[bt * Hd + k] = c;
			hs[bt * Hd + k] = go * tanhf(c);
		});
	}
	nn_cuda_launch(be, (size_t)B * Hd, [=] __device__(size_t i) {
		out[i] = hs[(i / Hd * T + T - 1) * Hd + i % Hd];
	});
}

extern "C" void nn_cuda_lstm_bwd(struct nn_backend *be, float *din, float *dwx, float *dwh,
				 float *db, const float *dout, const float *cache,
				 const float *in, const float *wx, const float *wh, int B, int T,
				 int D, int Hd)
{
	struct nn_lstm_cache s = nn_lstm_cache_split(cache, B, T, Hd);
	int G = 4 * Hd, BT = B * T;
	float *dh = s.dh, *dh2 = s.tmp, *dc = s.dc, *dA = s.dA;
	const float *gates = s.gates, *cs = s.c, *hs = s.h;

	nn_cuda_launch(be, (size_t)B * Hd, [=] __device__(size_t i) {
		dh[i] = dout[i];
		dc[i] = 0.0f;
	});
	for (int t = T - 1; t >= 0; t--) {
		const float *dhn = dh;

		nn_cuda_launch(be, (size_t)B * Hd, [=] __device__(size_t i) {
			size_t bt = i / Hd * T + t;
			int k = (int)(i % Hd);
			const float *g = gates + bt * G;
			float *a = dA + bt * G;
			float gi = g[k], gf = g[Hd + k], gg = g[2 * Hd + k], go = g[3 * Hd + k];
			float tc = tanhf(cs[bt * Hd + k]);
			float dck = dc[i] + dhn[i] * go * (1.0f - tc * tc);

			a[k] = dck * gg * gi * (1.0f - gi);
			a[Hd + k] = (t ? dck * cs[(bt - 1) * Hd + k] : 0.0f) * gf * (1.0f - gf);
			a[2 * Hd + k] = dck * gi * (1.0f - gg * gg);
			a[3 * Hd + k] = dhn[i] * tc * go * (1.0f - go);
			dc[i] = dck * gf;
		});
		if (t) {
			/* dh_{t-1} (B,Hd) = dA[:, t] (B,4Hd) wh (4Hd,Hd) */
			nn_cuda_gemm(be, false, false, B, Hd, G, 1.0f, dA + (size_t)t * G, T * G, wh,
				     Hd, 0.0f, dh2, Hd);
			float *sw = dh;

			dh = dh2;
			dh2 = sw;
		}
	}
	if (db)
		nn_cuda_colsum(be, db, dA, BT, G);
	/* dwx (4Hd,D) = dA^T (4Hd, B*T) in (B*T, D) */
	if (dwx)
		nn_cuda_gemm(be, true, false, G, D, BT, 1.0f, dA, G, in, D, 0.0f, dwx, D);
	/* dwh (4Hd,Hd) = sum over samples of dA[n, 1:]^T h[n, :T-1] */
	if (dwh) {
		if (T < 2)
			CU_RT(be, cudaMemsetAsync(dwh, 0, (size_t)G * Hd * sizeof(float),
						  nn_cu(be)->stream));
		for (int n = 0; T >= 2 && n < B; n++)
			nn_cuda_gemm(be, true, false, G, Hd, T - 1, 1.0f, dA + ((size_t)n * T + 1) * G,
				     G, hs + (size_t)n * T * Hd, Hd, n ? 1.0f : 0.0f, dwh, Hd);
	}
	/* din (B*T, D) = dA (B*T, 4Hd) wx (4Hd, D) */
	if (din)
		nn_cuda_gemm(be, false, false, BT, D, G, 1.0f, dA, G, wx, D, 0.0f, din, D);
}
