/* nn/vmath.h — exp, sigmoid and tanh for the host backends' elementwise loops (the
 * fast CPU backend's LSTM), one float at a time (nn_vexpf...) and 16 at a time with
 * AVX-512 (nn_vexp16...).  Here rather than in nn/cpu/ so that a test can check them.
 *
 * Why not libm: expf/tanhf are scalar calls (tanhf through expm1f), and in the LSTM
 * libm's took 42% of a step (perf), more than all its sgemms.  These are the
 * Cephes single-precision forms (as Sleef and PyTorch's vectorised ops use): exp by
 * 2^n * poly(r) with |r| <= ln2/2, tanh by an odd polynomial below 0.625 and
 * 1 - 2/(e^2|x| + 1) above; within 2 ulp of the double-precision result over the
 * range (tests/test_nn_vmath.c checks that, and the bits of both forms).
 *
 * Both forms do the same IEEE operations in the same order (fmaf is one rounding like
 * vfmadd, floorf is exact like vrndscale, the 2^n is built from bits): they give the
 * same bits for every input other than NaN, so a machine without AVX-512 computes what
 * one with it does.  Inputs are clamped where e^x leaves the normal floats:
 * sigmoid(-100) is 1.2e-38 here, not 3.7e-44, and e^x saturates at e^88 (no inf).
 */
#ifndef NN_VMATH_H
#define NN_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define NN_VEXP_LO -87.0f	/* 2^n stays a normal float: n >= -126 */
#define NN_VEXP_HI 88.0f	/* n <= 127 */
#define NN_VTANH_HI 10.0f	/* tanh x rounds to 1 from 9.01 on */
#define NN_VTANH_SMALL 0.625f

/* e^x = 2^n e^r: n = floor(x log2 e + 1/2), r = x - n ln2 in two parts (Cody-Waite) */
static const float nn_vexp_c[] = { 1.44269504088896341f, 0.693359375f, -2.12194440e-4f,
				   1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
				   4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f };
/* tanh x = x + x^3 P(x^2) for |x| < 0.625 */
static const float nn_vtanh_c[] = { -5.70498872745e-3f, 2.06390887954e-2f,
				    -5.37397155531e-2f, 1.33314422036e-1f, -3.33332819422e-1f };

static inline float nn_vexpf(float x)
{
	const float *k = nn_vexp_c;
	float n, r, p;
	int32_t e;
	uint32_t bits;

	x = x < NN_VEXP_LO ? NN_VEXP_LO : x > NN_VEXP_HI ? NN_VEXP_HI : x;
	n = floorf(fmaf(x, k[0], 0.5f));
	r = fmaf(-n, k[1], x);
	r = fmaf(-n, k[2], r);
	p = fmaf(k[3], r, k[4]);
	p = fmaf(p, r, k[5]);
	p = fmaf(p, r, k[6]);
	p = fmaf(p, r, k[7]);
	p = fmaf(p, r, k[8]);
	p = fmaf(p, r * r, r + 1.0f);
	e = (int32_t)n + 127;
	bits = (uint32_t)e << 23;
	memcpy(&n, &bits, sizeof(n));
	return p * n;
}

static inline float nn_vsigmf(float x)
{
	return 1.0f / (1.0f + nn_vexpf(-x));
}

static inline float nn_vtanhf(float x)
{
	const float *k = nn_vtanh_c;
	float a = fabsf(x), z = x * x, p, big;

	p = fmaf(k[0], z, k[1]);
	p = fmaf(p, z, k[2]);
	p = fmaf(p, z, k[3]);
	p = fmaf(p, z, k[4]);
	p = fmaf(p * z, x, x);
	big = 1.0f - 2.0f / (nn_vexpf(2.0f * (a < NN_VTANH_HI ? a : NN_VTANH_HI)) + 1.0f);
	return a < NN_VTANH_SMALL ? p : copysignf(big, x);
}

#ifdef __AVX512F__
#include <immintrin.h>

static inline __m512 nn_vexp16(__m512 x)
{
	const float *k = nn_vexp_c;
	__m512 n, r, p;

	x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(NN_VEXP_LO)),
			  _mm512_set1_ps(NN_VEXP_HI));
	n = _mm512_fmadd_ps(x, _mm512_set1_ps(k[0]), _mm512_set1_ps(0.5f));
	n = _mm512_roundscale_ps(n, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(k[1]), x);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(k[2]), r);
	p = _mm512_fmadd_ps(_mm512_set1_ps(k[3]), r, _mm512_set1_ps(k[4]));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k[5]));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k[6]));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k[7]));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k[8]));
	p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
	__m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));

	return _mm512_mul_ps(p, _mm512_castsi512_ps(_mm512_slli_epi32(e, 23)));
}

static inline __m512 nn_vsigm16(__m512 x)
{
	const __m512 one = _mm512_set1_ps(1.0f);

	return _mm512_div_ps(one, _mm512_add_ps(one, nn_vexp16(_mm512_sub_ps(_mm512_setzero_ps(),
									      x))));
}

static inline __m512 nn_vtanh16(__m512 x)
{
	const float *k = nn_vtanh_c;
	const __m512 one = _mm512_set1_ps(1.0f);
	__m512 a = _mm512_abs_ps(x), z = _mm512_mul_ps(x, x), p, big;

	p = _mm512_fmadd_ps(_mm512_set1_ps(k[0]), z, _mm512_set1_ps(k[1]));
	p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(k[2]));
	p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(k[3]));
	p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(k[4]));
	p = _mm512_fmadd_ps(_mm512_mul_ps(p, z), x, x);
	big = nn_vexp16(_mm512_mul_ps(_mm512_set1_ps(2.0f),
				      _mm512_min_ps(a, _mm512_set1_ps(NN_VTANH_HI))));
	big = _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(big, one)));
	/* copysign: |big| with x's sign bit */
	big = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(big),
		_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN))));
	return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(NN_VTANH_SMALL),
						       _CMP_LT_OQ), big, p);
}
#endif

#endif
