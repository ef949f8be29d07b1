/* nn/vmath.h — exp, sigmoid and tanh for the host backends' elementwise loops (the
 * fast CPU backend's LSTM), one float at a time (nn_vexpf...); nn/cpu/vmath16.h has
 * the same 16 at a time (nn_vexp16...) on every level of nn/cpu/.  Here rather than in
 * nn/cpu/ so that a test can check them.
 *
 * Why not libm: expf/tanhf are scalar calls (tanhf through expm1f), and in the LSTM
 * libm's took 42% of a step (perf), more than all its sgemms.  These are the
 * Cephes single-precision forms (as Sleef and PyTorch's vectorised ops use): exp by
 * 2^n * poly(r) with |r| <= ln2/2, tanh by an odd polynomial below 0.625 and
 * 1 - 2/(e^2|x| + 1) above; within 2 ulp of the double-precision result over the
 * range (tests/test_nn_vmath.c checks that, and the bits of both forms).
 *
 * Both forms do the same IEEE operations in the same order (fmaf is one rounding like
 * vf_fma, floorf is exact like vf_floor, the 2^n is built from bits): they give the
 * same bits for every input other than NaN, whatever the level (avx512, avx2,
 * generic) the vector form runs at.  Inputs are clamped where e^x leaves the normal
 * floats: sigmoid(-100) is 1.2e-38 here, not 3.7e-44, and e^x saturates at e^88 (no inf).
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

#endif
