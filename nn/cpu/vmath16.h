/* nn/cpu/vmath16.h — nn/vmath.h's exp, sigmoid and tanh on 16 floats (vf16, nn/cpu/vec16.h):
 * the scalar forms' operations in the same order on each lane, so every level gives
 * the scalar forms' bits (NaN inputs aside: the clamps give a bound for them).
 * tests/test_nn_vmath.c checks that on the levels a test program can be built for. */
#ifndef NN_CPU_VMATH16_H
#define NN_CPU_VMATH16_H

#include "nn/cpu/vec16.h"
#include "nn/vmath.h"

static inline vf16 nn_vexp16(vf16 x)
{
	const float *k = nn_vexp_c;
	vf16 n, r, p;

	x = vf_min(vf_max(x, vf_set1(NN_VEXP_LO)), vf_set1(NN_VEXP_HI));
	n = vf_floor(vf_fma(x, vf_set1(k[0]), vf_set1(0.5f)));
	r = vf_fnma(n, vf_set1(k[1]), x);
	r = vf_fnma(n, vf_set1(k[2]), r);
	p = vf_fma(vf_set1(k[3]), r, vf_set1(k[4]));
	p = vf_fma(p, r, vf_set1(k[5]));
	p = vf_fma(p, r, vf_set1(k[6]));
	p = vf_fma(p, r, vf_set1(k[7]));
	p = vf_fma(p, r, vf_set1(k[8]));
	p = vf_fma(p, vf_mul(r, r), vf_add(r, vf_set1(1.0f)));
	return vf_mul(p, vf_pow2i(n));
}

static inline vf16 nn_vsigm16(vf16 x)
{
	const vf16 one = vf_set1(1.0f);

	return vf_div(one, vf_add(one, nn_vexp16(vf_sub(vf_zero(), x))));
}

static inline vf16 nn_vtanh16(vf16 x)
{
	const float *k = nn_vtanh_c;
	const vf16 one = vf_set1(1.0f), two = vf_set1(2.0f);
	vf16 a = vf_abs(x), z = vf_mul(x, x), p, big;

	p = vf_fma(vf_set1(k[0]), z, vf_set1(k[1]));
	p = vf_fma(p, z, vf_set1(k[2]));
	p = vf_fma(p, z, vf_set1(k[3]));
	p = vf_fma(p, z, vf_set1(k[4]));
	p = vf_fma(vf_mul(p, z), x, x);
	big = nn_vexp16(vf_mul(two, vf_min(a, vf_set1(NN_VTANH_HI))));
	big = vf_sub(one, vf_div(two, vf_add(big, one)));
	return vf_select(vf_lt(a, vf_set1(NN_VTANH_SMALL)), p, vf_copysign(big, x));
}

#endif
