/* emu/algo/jointspar_msg.c — building, reducing and taking JointSpar's layer messages (format
 * in the header). */
#include <errno.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "emu/algo/jointspar_msg.h"

/* Layer l's floats inside the block, as [lo, hi) relative to b0. */
static void piece(const struct jointspar_block *blk, const struct nn_layer *layers, int l,
		  size_t *lo, size_t *hi)
{
	size_t a = layers[l].off, b = layers[l].off + layers[l].size;
	*lo = (a > blk->b0 ? a : blk->b0) - blk->b0;
	*hi = (b < blk->b1 ? b : blk->b1) - blk->b0;
}

static int bit(const uint8_t *hdr, int k)
{
	uint32_t word;
	memcpy(&word, hdr + 4 * (k / 32), sizeof(word));
	return (word >> (k % 32)) & 1;
}

static void set_bit(uint8_t *hdr, int k)
{
	uint32_t word;
	memcpy(&word, hdr + 4 * (k / 32), sizeof(word));
	word |= 1u << (k % 32);
	memcpy(hdr + 4 * (k / 32), &word, sizeof(word));
}

int jointspar_block_init(struct jointspar_block *blk, const struct nn_layer *layers,
			 int nlayers, size_t nparams, size_t b0, size_t b1)
{
	size_t end = 0;
	for (int l = 0; l < nlayers; l++) {
		if (layers[l].off != end)
			return -EINVAL;
		end += layers[l].size;
	}
	if (end != nparams || b0 > b1 || b1 > nparams)
		return -EINVAL;
	blk->b0 = b0;
	blk->b1 = b1;
	blk->l0 = blk->l1 = 0;
	if (b0 < b1) {
		int l = 0;
		while (layers[l].off + layers[l].size <= b0)
			l++;
		blk->l0 = l;
		while (l < nlayers && layers[l].off < b1)
			l++;
		blk->l1 = l;
	}
	blk->hdr_bytes = (size_t)(blk->l1 - blk->l0 + 31) / 32 * sizeof(uint32_t);
	return 0;
}

size_t jointspar_msg_build(uint8_t *buf, const struct jointspar_block *blk,
			   const struct nn_layer *layers, const uint8_t *sampled,
			   const double *p, const float *g)
{
	memset(buf, 0, blk->hdr_bytes);
	float *body = (float *)(buf + blk->hdr_bytes);
	size_t pos = 0;
	for (int l = blk->l0; l < blk->l1; l++) {
		if (!sampled[l])
			continue;
		int k = l - blk->l0;
		set_bit(buf, k);
		size_t lo, hi;
		piece(blk, layers, l, &lo, &hi);
		const float *src = g + blk->b0 + lo;
		float scale = (float)(1.0 / p[l]);
		for (size_t i = 0; i < hi - lo; i++)
			body[pos + i] = src[i] * scale;
		pos += hi - lo;
	}
	return blk->hdr_bytes + pos * sizeof(float);
}

/* Whether every unit holding the header arrived (a lost message has none). */
static int header_arrived(const struct xmsg *m, size_t hdr_bytes)
{
	if (m->narrived == 0)
		return 0;
	if (m->narrived == m->nunits || hdr_bytes == 0)
		return 1;
	for (size_t u = 0; u * m->unit < hdr_bytes; u++)
		if (!xmsg_unit_arrived(m, (int)u))
			return 0;
	return 1;
}

/* The length a message with header hdr must have. */
static size_t expected_len(const struct jointspar_block *blk, const struct nn_layer *layers,
			   const uint8_t *hdr)
{
	size_t len = blk->hdr_bytes;
	for (int l = blk->l0; l < blk->l1; l++) {
		if (bit(hdr, l - blk->l0)) {
			size_t lo, hi;
			piece(blk, layers, l, &lo, &hi);
			len += (hi - lo) * sizeof(float);
		}
	}
	return len;
}

size_t jointspar_msg_reduce(const struct jointspar_block *blk, const struct nn_layer *layers,
			    const struct xmsg in[], int n, float *sum, uint32_t *cnt,
			    uint8_t *reply, size_t cap)
{
	size_t len = blk->b1 - blk->b0;
	memset(sum, 0, len * sizeof(float));
	memset(cnt, 0, len * sizeof(uint32_t));
	memset(reply, 0, blk->hdr_bytes);
	/* Workers in id order, so the sums never depend on arrival order. */
	for (int w = 0; w < n; w++) {
		const struct xmsg *m = &in[w];
		if (!header_arrived(m, blk->hdr_bytes) ||
		    expected_len(blk, layers, m->data) != m->len)
			continue;
		const float *body = (const float *)(m->data + blk->hdr_bytes);
		size_t first = blk->hdr_bytes / sizeof(float), pos = 0;
		for (int l = blk->l0; l < blk->l1; l++) {
			size_t lo, hi;
			piece(blk, layers, l, &lo, &hi);
			int k = l - blk->l0;
			if (!bit(m->data, k)) {
				for (size_t i = lo; i < hi; i++)
					cnt[i]++;
				continue;
			}
			set_bit(reply, k);
			for (size_t i = lo; i < hi; i++, pos++) {
				if (algo_float_arrived(m, first + pos)) {
					sum[i] += body[pos];
					cnt[i]++;
				}
			}
		}
	}
	float *out = (float *)(reply + blk->hdr_bytes);
	size_t pos = 0;
	for (int l = blk->l0; l < blk->l1; l++) {
		if (!bit(reply, l - blk->l0))
			continue;
		size_t lo, hi;
		piece(blk, layers, l, &lo, &hi);
		for (size_t i = lo; i < hi; i++)
			out[pos++] = cnt[i] ? sum[i] / (float)cnt[i] : 0.0f;
	}
	return blk->hdr_bytes + pos * sizeof(float);
}

size_t jointspar_msg_take(const struct jointspar_block *blk, const struct nn_layer *layers,
			  const struct xmsg *reply, float *agg, uint8_t *arrived)
{
	size_t len = blk->b1 - blk->b0;
	float *a = agg + blk->b0;
	uint8_t *ok = arrived + blk->b0;
	if (!header_arrived(reply, blk->hdr_bytes) ||
	    expected_len(blk, layers, reply->data) != reply->len) {
		memset(ok, 0, len);
		return 0;
	}
	const float *body = (const float *)(reply->data + blk->hdr_bytes);
	size_t first = blk->hdr_bytes / sizeof(float), pos = 0, taken = 0;
	for (int l = blk->l0; l < blk->l1; l++) {
		size_t lo, hi;
		piece(blk, layers, l, &lo, &hi);
		if (!bit(reply->data, l - blk->l0)) {
			memset(a + lo, 0, (hi - lo) * sizeof(float));
			memset(ok + lo, 1, hi - lo);
			taken += hi - lo;
			continue;
		}
		for (size_t i = lo; i < hi; i++, pos++) {
			ok[i] = (uint8_t)algo_float_arrived(reply, first + pos);
			a[i] = ok[i] ? body[pos] : 0.0f;
			taken += ok[i];
		}
	}
	return taken;
}
