/* emu/algo/bitpack.c — packing signs and counting votes (layout in bitpack.h). */
#include <string.h>
#include "emu/algo/bitpack.h"

void bitpack_signs(uint32_t *out, const float *v, size_t n)
{
	size_t full = n / 32;
	for (size_t k = 0; k < full; k++) {
		uint32_t w = 0;
		const float *p = v + 32 * k;
		/* !(x < 0) makes 0, -0 and NaN count as +1 */
		for (int b = 0; b < 32; b++)
			w |= (uint32_t)!(p[b] < 0.0f) << b;
		out[k] = w;
	}
	if (n % 32) {
		uint32_t w = 0;
		const float *p = v + 32 * full;
		for (size_t b = 0; b < n % 32; b++)
			w |= (uint32_t)!(p[b] < 0.0f) << b;
		out[full] = w;
	}
}

void bitpack_unpack(float *out, const uint32_t *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (in[i / 32] >> (i % 32)) & 1 ? 1.0f : -1.0f;
}

void bitpack_clear_pad(uint32_t *w, size_t n)
{
	if (n % 32)
		w[n / 32] &= (1u << (n % 32)) - 1;
}

void bitpack_invert(uint32_t *w, size_t n)
{
	size_t nw = bitpack_words(n);
	for (size_t k = 0; k < nw; k++)
		w[k] = ~w[k];
	bitpack_clear_pad(w, n);
}

void bitpack_vote(uint32_t *out, size_t n, int nvoters, const uint32_t *const signs[],
		  const uint32_t *const valid[])
{
	size_t nw = bitpack_words(n);
	for (size_t k = 0; k < nw; k++) {
		/* per bit: (number of +1 votes) - (number of -1 votes) */
		int sum[32];
		memset(sum, 0, sizeof(sum));
		for (int v = 0; v < nvoters; v++) {
			uint32_t s = signs[v][k];
			uint32_t m = valid && valid[v] ? valid[v][k] : 0xffffffffu;
			for (int b = 0; b < 32; b++) {
				int on = (int)((m >> b) & 1);
				sum[b] += on * (2 * (int)((s >> b) & 1) - 1);
			}
		}
		uint32_t w = 0;
		for (int b = 0; b < 32; b++)
			w |= (uint32_t)(sum[b] >= 0) << b;
		out[k] = w;
	}
	bitpack_clear_pad(out, n);
}
