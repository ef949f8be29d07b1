/* nn/cpu/vec16.h — a vector of 16 floats, the unit every kernel of the fast CPU backend
 * computes in, whatever the machine's registers.
 *
 * nn/cpu/ is compiled once per level (NN_ISA, set by the Makefile): avx512, one zmm
 * register per vector; avx2, two ymm registers; generic, 16 floats in plain C (any
 * architecture).  Each operation here is the same IEEE operation on each of the 16
 * lanes at every level (vf_fma is one rounding everywhere, as fmaf), so a kernel
 * written with them computes every output by the same sequence of float operations on
 * every level: the same bits.  Only the few sums across lanes (vf_hsum) combine lanes,
 * and they do so in one fixed tree.  Loads and stores of the first n lanes (vf_loadn,
 * vf_storen) never touch memory past lane n.
 */
#ifndef NN_CPU_VEC16_H
#define NN_CPU_VEC16_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define NN_ISA_avx512 1
#define NN_ISA_avx2 2
#define NN_ISA_generic 3
#define NN_ISA_IS_(a, b) (NN_ISA_##a == NN_ISA_##b)
#define NN_ISA_IS(b) NN_ISA_IS_2(NN_ISA, b)
#define NN_ISA_IS_2(a, b) NN_ISA_IS_(a, b)

#if NN_ISA_IS(avx512)
#include <immintrin.h>

typedef __m512 vf16;
typedef __mmask16 vm16;

static inline vm16 vm_first(int n)
{
	return n >= 16 ? (vm16)0xffff : n <= 0 ? (vm16)0 : (vm16)((1u << n) - 1);
}

/* the first n lanes, 0 < n < 16: a loop's last partial vector, without vm_first's tests */
static inline vm16 vm_tail(int n) { return (vm16)((1u << n) - 1); }
static inline vm16 vm_bits(unsigned bits) { return (vm16)bits; }
static inline vm16 vm_and(vm16 a, vm16 b) { return a & b; }
static inline vf16 vf_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void vf_store(float *p, vf16 v) { _mm512_storeu_ps(p, v); }
static inline vf16 vf_loadm(const float *p, vm16 m) { return _mm512_maskz_loadu_ps(m, p); }
static inline void vf_storem(float *p, vm16 m, vf16 v) { _mm512_mask_storeu_ps(p, m, v); }
static inline vf16 vf_set1(float x) { return _mm512_set1_ps(x); }
static inline vf16 vf_zero(void) { return _mm512_setzero_ps(); }
static inline vf16 vf_add(vf16 a, vf16 b) { return _mm512_add_ps(a, b); }
static inline vf16 vf_sub(vf16 a, vf16 b) { return _mm512_sub_ps(a, b); }
static inline vf16 vf_mul(vf16 a, vf16 b) { return _mm512_mul_ps(a, b); }
static inline vf16 vf_div(vf16 a, vf16 b) { return _mm512_div_ps(a, b); }
static inline vf16 vf_fma(vf16 a, vf16 b, vf16 c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf16 vf_fnma(vf16 a, vf16 b, vf16 c) { return _mm512_fnmadd_ps(a, b, c); }
static inline vf16 vf_min(vf16 a, vf16 b) { return _mm512_min_ps(a, b); }
static inline vf16 vf_max(vf16 a, vf16 b) { return _mm512_max_ps(a, b); }
static inline vf16 vf_abs(vf16 a) { return _mm512_abs_ps(a); }
static inline vf16 vf_floor(vf16 a)
{
	return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}
static inline vm16 vf_gt(vf16 a, vf16 b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
static inline vm16 vf_lt(vf16 a, vf16 b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
/* m ? a : b, lane by lane */
static inline vf16 vf_select(vm16 m, vf16 a, vf16 b) { return _mm512_mask_blend_ps(m, b, a); }
static inline vf16 vf_maskz(vm16 m, vf16 a) { return _mm512_maskz_mov_ps(m, a); }
/* |mag| with the sign of sgn */
static inline vf16 vf_copysign(vf16 mag, vf16 sgn)
{
	__m512i s = _mm512_and_si512(_mm512_castps_si512(sgn), _mm512_set1_epi32(INT32_MIN));

	return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(_mm512_abs_ps(mag)), s));
}
/* 2^n for integral n in [-126, 127], from its bits */
static inline vf16 vf_pow2i(vf16 n)
{
	__m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));

	return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}
/* lanes 0..7 + 8..15, then 0..3 + 4..7, 0,1 + 2,3, 0 + 1 */
static inline float vf_hsum(vf16 v)
{
	__m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
	__m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));

	q = _mm_add_ps(q, _mm_movehl_ps(q, q));
	return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

#elif NN_ISA_IS(avx2)
#include <immintrin.h>

typedef struct { __m256 lo, hi; } vf16;
typedef struct { __m256 lo, hi; } vm16;	/* all ones in a lane that is in */

/* 16 lanes in, then 16 out: the mask of the first n lanes starts at 16 - n */
static const int32_t vm_first_tbl[32] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
					  -1, -1, -1, -1 };

static inline vm16 vm_first(int n)
{
	const int32_t *t = vm_first_tbl + 16 - (n >= 16 ? 16 : n <= 0 ? 0 : n);

	return (vm16){ _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)t)),
		       _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(t + 8))) };
}

static inline vm16 vm_tail(int n)
{
	const int32_t *t = vm_first_tbl + 16 - n;

	return (vm16){ _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)t)),
		       _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(t + 8))) };
}

static inline vm16 vm_bits(unsigned bits)
{
	const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	__m256i lo = _mm256_set1_epi32((int)(bits & 0xff)), hi = _mm256_set1_epi32((int)(bits >> 8 & 0xff));

	return (vm16){ _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(lo, bit), bit)),
		       _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(hi, bit), bit)) };
}

static inline vm16 vm_and(vm16 a, vm16 b)
{
	return (vm16){ _mm256_and_ps(a.lo, b.lo), _mm256_and_ps(a.hi, b.hi) };
}

static inline vf16 vf_load(const float *p) { return (vf16){ _mm256_loadu_ps(p), _mm256_loadu_ps(p + 8) }; }
static inline void vf_store(float *p, vf16 v)
{
	_mm256_storeu_ps(p, v.lo);
	_mm256_storeu_ps(p + 8, v.hi);
}
static inline vf16 vf_loadm(const float *p, vm16 m)
{
	return (vf16){ _mm256_maskload_ps(p, _mm256_castps_si256(m.lo)),
		       _mm256_maskload_ps(p + 8, _mm256_castps_si256(m.hi)) };
}
static inline void vf_storem(float *p, vm16 m, vf16 v)
{
	_mm256_maskstore_ps(p, _mm256_castps_si256(m.lo), v.lo);
	_mm256_maskstore_ps(p + 8, _mm256_castps_si256(m.hi), v.hi);
}
static inline vf16 vf_set1(float x) { return (vf16){ _mm256_set1_ps(x), _mm256_set1_ps(x) }; }
static inline vf16 vf_zero(void) { return (vf16){ _mm256_setzero_ps(), _mm256_setzero_ps() }; }
#define VF_AVX2_OP2(name, op)							\
	static inline vf16 name(vf16 a, vf16 b) { return (vf16){ op(a.lo, b.lo), op(a.hi, b.hi) }; }
VF_AVX2_OP2(vf_add, _mm256_add_ps)
VF_AVX2_OP2(vf_sub, _mm256_sub_ps)
VF_AVX2_OP2(vf_mul, _mm256_mul_ps)
VF_AVX2_OP2(vf_div, _mm256_div_ps)
VF_AVX2_OP2(vf_min, _mm256_min_ps)
VF_AVX2_OP2(vf_max, _mm256_max_ps)
#undef VF_AVX2_OP2
static inline vf16 vf_fma(vf16 a, vf16 b, vf16 c)
{
	return (vf16){ _mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi) };
}
static inline vf16 vf_fnma(vf16 a, vf16 b, vf16 c)
{
	return (vf16){ _mm256_fnmadd_ps(a.lo, b.lo, c.lo), _mm256_fnmadd_ps(a.hi, b.hi, c.hi) };
}
static inline vf16 vf_abs(vf16 a)
{
	const __m256 m = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MAX));

	return (vf16){ _mm256_and_ps(a.lo, m), _mm256_and_ps(a.hi, m) };
}
static inline vf16 vf_floor(vf16 a) { return (vf16){ _mm256_floor_ps(a.lo), _mm256_floor_ps(a.hi) }; }
static inline vm16 vf_gt(vf16 a, vf16 b)
{
	return (vm16){ _mm256_cmp_ps(a.lo, b.lo, _CMP_GT_OQ), _mm256_cmp_ps(a.hi, b.hi, _CMP_GT_OQ) };
}
static inline vm16 vf_lt(vf16 a, vf16 b)
{
	return (vm16){ _mm256_cmp_ps(a.lo, b.lo, _CMP_LT_OQ), _mm256_cmp_ps(a.hi, b.hi, _CMP_LT_OQ) };
}
static inline vf16 vf_select(vm16 m, vf16 a, vf16 b)
{
	return (vf16){ _mm256_blendv_ps(b.lo, a.lo, m.lo), _mm256_blendv_ps(b.hi, a.hi, m.hi) };
}
static inline vf16 vf_maskz(vm16 m, vf16 a)
{
	return (vf16){ _mm256_and_ps(a.lo, m.lo), _mm256_and_ps(a.hi, m.hi) };
}
static inline vf16 vf_copysign(vf16 mag, vf16 sgn)
{
	const __m256 s = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN));
	vf16 a = vf_abs(mag);

	return (vf16){ _mm256_or_ps(a.lo, _mm256_and_ps(sgn.lo, s)),
		       _mm256_or_ps(a.hi, _mm256_and_ps(sgn.hi, s)) };
}
static inline __m256 vf_pow2i_8(__m256 n)
{
	__m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));

	return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
static inline vf16 vf_pow2i(vf16 n) { return (vf16){ vf_pow2i_8(n.lo), vf_pow2i_8(n.hi) }; }
static inline float vf_hsum(vf16 v)
{
	__m256 h = _mm256_add_ps(v.lo, v.hi);
	__m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));

	q = _mm_add_ps(q, _mm_movehl_ps(q, q));
	return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

#elif NN_ISA_IS(generic)

typedef struct { float f[16]; } vf16;
typedef struct { uint16_t b; } vm16;

#define VF_LANES(expr)								\
	do {									\
		for (int l_ = 0; l_ < 16; l_++)					\
			expr;							\
	} while (0)

static inline vm16 vm_first(int n)
{
	return (vm16){ (uint16_t)(n >= 16 ? 0xffff : n <= 0 ? 0 : (1u << n) - 1) };
}
static inline vm16 vm_tail(int n) { return (vm16){ (uint16_t)((1u << n) - 1) }; }
static inline vm16 vm_bits(unsigned bits) { return (vm16){ (uint16_t)bits }; }
static inline vm16 vm_and(vm16 a, vm16 b) { return (vm16){ (uint16_t)(a.b & b.b) }; }
static inline vf16 vf_load(const float *p)
{
	vf16 r;

	memcpy(r.f, p, sizeof(r.f));
	return r;
}
static inline void vf_store(float *p, vf16 v) { memcpy(p, v.f, sizeof(v.f)); }
static inline vf16 vf_loadm(const float *p, vm16 m)
{
	vf16 r;

	VF_LANES(r.f[l_] = m.b >> l_ & 1 ? p[l_] : 0.0f);
	return r;
}
static inline void vf_storem(float *p, vm16 m, vf16 v)
{
	VF_LANES(if (m.b >> l_ & 1) p[l_] = v.f[l_]);
}
static inline vf16 vf_set1(float x)
{
	vf16 r;

	VF_LANES(r.f[l_] = x);
	return r;
}
static inline vf16 vf_zero(void) { return vf_set1(0.0f); }
#define VF_GENERIC_OP2(name, expr)						\
	static inline vf16 name(vf16 a, vf16 b)					\
	{									\
		vf16 r;								\
										\
		VF_LANES(r.f[l_] = expr);					\
		return r;							\
	}
VF_GENERIC_OP2(vf_add, a.f[l_] + b.f[l_])
VF_GENERIC_OP2(vf_sub, a.f[l_] - b.f[l_])
VF_GENERIC_OP2(vf_mul, a.f[l_] * b.f[l_])
VF_GENERIC_OP2(vf_div, a.f[l_] / b.f[l_])
/* as minps/maxps: the second operand where the comparison is false (NaN) */
VF_GENERIC_OP2(vf_min, a.f[l_] < b.f[l_] ? a.f[l_] : b.f[l_])
VF_GENERIC_OP2(vf_max, a.f[l_] > b.f[l_] ? a.f[l_] : b.f[l_])
#undef VF_GENERIC_OP2
static inline vf16 vf_fma(vf16 a, vf16 b, vf16 c)
{
	vf16 r;

	VF_LANES(r.f[l_] = fmaf(a.f[l_], b.f[l_], c.f[l_]));
	return r;
}
static inline vf16 vf_fnma(vf16 a, vf16 b, vf16 c)
{
	vf16 r;

	VF_LANES(r.f[l_] = fmaf(-a.f[l_], b.f[l_], c.f[l_]));
	return r;
}
static inline vf16 vf_abs(vf16 a)
{
	VF_LANES(a.f[l_] = fabsf(a.f[l_]));
	return a;
}
static inline vf16 vf_floor(vf16 a)
{
	VF_LANES(a.f[l_] = floorf(a.f[l_]));
	return a;
}
static inline vm16 vf_gt(vf16 a, vf16 b)
{
	unsigned m = 0;

	VF_LANES(m |= (unsigned)(a.f[l_] > b.f[l_]) << l_);
	return (vm16){ (uint16_t)m };
}
static inline vm16 vf_lt(vf16 a, vf16 b) { return vf_gt(b, a); }
static inline vf16 vf_select(vm16 m, vf16 a, vf16 b)
{
	VF_LANES(a.f[l_] = m.b >> l_ & 1 ? a.f[l_] : b.f[l_]);
	return a;
}
static inline vf16 vf_maskz(vm16 m, vf16 a) { return vf_select(m, a, vf_zero()); }
static inline vf16 vf_copysign(vf16 mag, vf16 sgn)
{
	VF_LANES(mag.f[l_] = copysignf(mag.f[l_], sgn.f[l_]));
	return mag;
}
static inline vf16 vf_pow2i(vf16 n)
{
	VF_LANES({
		uint32_t bits = (uint32_t)((int32_t)n.f[l_] + 127) << 23;

		memcpy(&n.f[l_], &bits, sizeof(float));
	});
	return n;
}
static inline float vf_hsum(vf16 v)
{
	for (int w = 8; w >= 1; w /= 2)
		for (int l = 0; l < w; l++)
			v.f[l] += v.f[l + w];
	return v.f[0];
}
#undef VF_LANES

#else
#error "NN_ISA must be avx512, avx2 or generic (the Makefile sets it for nn/cpu/)"
#endif

#endif
