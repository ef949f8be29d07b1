/* emu/algo/bitpack.h — signs packed 32 to a word, and the majority vote over packed signs.
 *
 * Layout: element i of a vector is bit (i % 32) of word i / 32; bit 1 means +1, bit 0
 * means -1; sign(0) (and -0) is +1.  Bits past the last element of the last word are 0.
 * On a little-endian machine (the only kind emu builds on) bit b of a word lives in byte
 * b / 8 of it, which is what the loss of a packet of bytes maps to (bitpack_byte_mask).
 */
#ifndef EMU_BITPACK_H
#define EMU_BITPACK_H

#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "emu/algo/bitpack.h assumes a little-endian machine"
#endif

static inline size_t bitpack_words(size_t n)
{
	return (n + 31) / 32;
}

/* out[bitpack_words(n)] = the signs of v[0..n). */
void bitpack_signs(uint32_t *out, const float *v, size_t n);
/* out[0..n) = +1.0f or -1.0f from packed signs. */
void bitpack_unpack(float *out, const uint32_t *in, size_t n);
/* Flip the n sign bits (pad bits stay 0). */
void bitpack_invert(uint32_t *w, size_t n);
/* Clear the pad bits of the last word. */
void bitpack_clear_pad(uint32_t *w, size_t n);

/* The bits of a word whose bytes are set in byte_arrived (bit k: byte k of the word). */
static inline uint32_t bitpack_byte_mask(unsigned byte_arrived)
{
	uint32_t m = 0;
	for (int k = 0; k < 4; k++)
		if (byte_arrived & (1u << k))
			m |= 0xffu << (8 * k);
	return m;
}

/* Majority vote of nvoters packed sign vectors of n elements each: out bit i = +1 iff
 * the sum over voters v with valid[v] bit i set of (+1 or -1) is >= 0 (a tie, and an
 * element nobody voted on, give +1).  valid[v] == NULL: every bit of voter v counts;
 * valid == NULL: every bit of every voter counts.  Voters are summed in index order. */
void bitpack_vote(uint32_t *out, size_t n, int nvoters, const uint32_t *const signs[],
		  const uint32_t *const valid[]);

#endif
