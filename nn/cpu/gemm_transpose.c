/* nn/cpu/gemm_transpose.c — matrix transposes for the conv's channel-last copies and the
 * filters given transposed to nn/cpu/ops_cpu_gemm.c.  Data movement only: each level
 * moves the same floats its own way (shuffles of zmm or ymm registers, plain loops). */
#include "nn/cpu/cpu.h"

#if NN_ISA_IS(avx512)
/* dst (16 rows, ldd apart) = src (16 rows, lds apart)^T: three rounds of shuffles.  Rows
 * 8..15 of dst go to dst8 on (dst + 8*ldd for a plain block): the weight gradient's
 * channel-last copies of 8-wide planes put a padding column between them. */
void nn_cpu_transpose16(float *dst, float *dst8, size_t ldd, const float *src, size_t lds)
{
	__m512 r[16], t[16];

	for (int i = 0; i < 16; i++)
		r[i] = _mm512_loadu_ps(src + i * lds);
	/* per 128-bit lane: pairs of rows interleaved, then quads of rows */
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
	for (int i = 0; i < 16; i += 4) {
		r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]),
							   _mm512_castps_pd(t[i + 2])));
		r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]),
							       _mm512_castps_pd(t[i + 2])));
		r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]),
							       _mm512_castps_pd(t[i + 3])));
		r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]),
							       _mm512_castps_pd(t[i + 3])));
	}
	/* r[4q + c] lane L now holds column 4L + c of rows 4q..4q+3: gather the lanes */
	for (int c = 0; c < 4; c++) {
		__m512 v0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
		__m512 v1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xdd);
		__m512 w0 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
		__m512 w1 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xdd);

		_mm512_storeu_ps(dst + (size_t)c * ldd, _mm512_shuffle_f32x4(v0, w0, 0x88));
		_mm512_storeu_ps(dst8 + (size_t)c * ldd, _mm512_shuffle_f32x4(v0, w0, 0xdd));
		_mm512_storeu_ps(dst + (size_t)(4 + c) * ldd, _mm512_shuffle_f32x4(v1, w1, 0x88));
		_mm512_storeu_ps(dst8 + (size_t)(4 + c) * ldd, _mm512_shuffle_f32x4(v1, w1, 0xdd));
	}
}
#elif NN_ISA_IS(avx2)
/* dst (8 rows, ldd apart) = src (8 rows, lds apart)^T: the usual three rounds */
static inline void transpose8(float *dst, size_t ldd, const float *src, size_t lds)
{
	__m256 r[8], t[8];

	for (int i = 0; i < 8; i++)
		r[i] = _mm256_loadu_ps(src + i * lds);
	for (int i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
	}
	for (int i = 0; i < 8; i += 4) {
		r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
		r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
		r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
		r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
	}
	/* r[4q + c] 128-bit half h holds column 4h + c of rows 4q..4q+3 */
	for (int c = 0; c < 4; c++) {
		_mm256_storeu_ps(dst + (size_t)c * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x20));
		_mm256_storeu_ps(dst + (size_t)(4 + c) * ldd,
				 _mm256_permute2f128_ps(r[c], r[4 + c], 0x31));
	}
}

/* As the avx512 level's: four 8 x 8 blocks */
void nn_cpu_transpose16(float *dst, float *dst8, size_t ldd, const float *src, size_t lds)
{
	transpose8(dst, ldd, src, lds);
	transpose8(dst + 8, ldd, src + 8 * lds, lds);
	transpose8(dst8, ldd, src + 8, lds);
	transpose8(dst8 + 8, ldd, src + 8 * lds + 8, lds);
}
#else
void nn_cpu_transpose16(float *dst, float *dst8, size_t ldd, const float *src, size_t lds)
{
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++)
			(r < 8 ? dst + r * ldd : dst8 + (r - 8) * ldd)[c] = src[c * lds + r];
}
#endif

void nn_cpu_transpose(float *restrict dst, const float *restrict src, int rows, int cols)
{
	int r0 = 0;

	for (; r0 + 16 <= rows; r0 += 16) {
		int c0 = 0;

		for (; c0 + 16 <= cols; c0 += 16) {
			float *d = dst + (size_t)c0 * rows + r0;

			nn_cpu_transpose16(d, d + (size_t)8 * rows, rows, src + (size_t)r0 * cols + c0,
					   cols);
		}
		for (int c = c0; c < cols; c++)
			for (int r = r0; r < r0 + 16; r++)
				dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
	}
	for (int r = r0; r < rows; r++)
		for (int c = 0; c < cols; c++)
			dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}
