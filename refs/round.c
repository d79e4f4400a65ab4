#include "round.h"

/* The array forms give exactly the scalar forms' bits, NaN payloads included. With F16C the
 * binary16 rounding is the hardware's own conversion (round-to-nearest-even, overflow to inf,
 * subnormals), eight lanes at a time; NaN lanes take the scalar rule (the conversion would drop
 * payload bits). bfloat16 is the scalar integer rule on eight lanes. */
#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>

void hc_round_fp16_array(float *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 r = _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        __m256 quiet = _mm256_or_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
        _mm256_storeu_ps(x + i, _mm256_blendv_ps(r, quiet, nan));
    }
    for (; i < n; i++)
        x[i] = hc_round_fp16(x[i]);
}

void hc_round_bf16_array(float *x, size_t n)
{
    const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1),
                  keep = _mm256_set1_epi32((int)0xffff0000u), quiet = _mm256_set1_epi32(0x00400000);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256i u = _mm256_castps_si256(v);
        __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
        __m256i r = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(u, bias), odd), keep);
        __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        __m256 q = _mm256_castsi256_ps(_mm256_or_si256(u, quiet));
        _mm256_storeu_ps(x + i, _mm256_blendv_ps(_mm256_castsi256_ps(r), q, nan));
    }
    for (; i < n; i++)
        x[i] = hc_round_bf16(x[i]);
}

#else

void hc_round_fp16_array(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = hc_round_fp16(x[i]);
}

void hc_round_bf16_array(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = hc_round_bf16(x[i]);
}

#endif
