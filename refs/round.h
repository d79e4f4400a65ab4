/* Rounding a float to the reduced formats backends store and compute in, as hardware does:
 * IEEE binary16 and bfloat16, round-to-nearest-even, overflow to ±inf, binary16 subnormals,
 * NaN kept NaN. The result is returned widened back to float, so emulated arithmetic can run
 * in float with a rounding step wherever the emulated backend would hold a reduced value. */
#ifndef HC_ROUND_H
#define HC_ROUND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The scalar forms are host and device functions under nvcc (the GPU's emulation kernels share
 * them through refs/sums_core.h); plain C sees ordinary static inline functions. */
#ifndef HC_HD
#ifdef __CUDACC__
#define HC_HD __host__ __device__
#else
#define HC_HD
#endif
#endif

static inline HC_HD uint32_t hc_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline HC_HD float hc_f32_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline HC_HD float hc_round_fp16(float f)
{
    uint32_t u = hc_f32_bits(f);
    uint32_t sign = u & 0x80000000u, a = u ^ sign;
    if (a >= 0x7f800000u) /* inf stays inf; NaN is quieted */
        return a > 0x7f800000u ? hc_f32_of_bits(u | 0x00400000u) : f;
    if (a >= 0x477ff000u) /* >= 65520: the tie above 65504 goes to even, which is inf */
        return hc_f32_of_bits(sign | 0x7f800000u);
    if (a < 0x38800000u) {
        /* binary16 subnormal range: a multiple of 2^-24. Adding 0.5 puts the float's last
         * mantissa bit at 2^-24, so the FPU's own round-to-nearest-even does the rounding. */
        float r = (hc_f32_of_bits(a) + 0.5f) - 0.5f;
        return hc_f32_of_bits(hc_f32_bits(r) | sign);
    }
    /* Normal range: keep 10 mantissa bits, nearest-even on the 13 dropped ones. */
    a += 0x0fffu + ((a >> 13) & 1u);
    return hc_f32_of_bits(sign | (a & 0xffffe000u));
}

static inline HC_HD float hc_round_bf16(float f)
{
    uint32_t u = hc_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return hc_f32_of_bits(u | 0x00400000u);
    /* bfloat16 shares float's exponent range; a carry out of the mantissa overflows to inf. */
    u += 0x7fffu + ((u >> 16) & 1u);
    return hc_f32_of_bits(u & 0xffff0000u);
}

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#define HC_ROUND_M256 1

/* Eight lanes at once, with the scalar forms' bits: binary16 by the hardware's own conversion
 * (nearest-even, overflow to inf, subnormals), bfloat16 by the integer rule; NaN lanes take the
 * scalar rule (the conversion would drop payload bits). */
static inline __m256 hc_round_nan_m256(__m256 rounded, __m256 x)
{
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    __m256 quiet = _mm256_or_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
    return _mm256_blendv_ps(rounded, quiet, nan);
}

static inline __m256 hc_round_fp16_m256(__m256 x)
{
    __m256 r = _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return hc_round_nan_m256(r, x);
}

static inline __m256 hc_round_bf16_m256(__m256 x)
{
    __m256i u = _mm256_castps_si256(x);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd),
                                 _mm256_set1_epi32((int)0xffff0000u));
    return hc_round_nan_m256(_mm256_castsi256_ps(r), x);
}
#endif

void hc_round_fp16_array(float *x, size_t n);
void hc_round_bf16_array(float *x, size_t n);

#endif
