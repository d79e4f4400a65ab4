/* Rounding floats to fp16/bf16 as hardware does: the array forms (round.h). */
#include "refs/round.h"

/* The array forms give exactly the scalar forms' bits, NaN payloads included: eight lanes at a
 * time where round.h has the vector forms, the scalar forms for the tail. */
void hc_round_fp16_array(float *x, size_t n)
{
    size_t i = 0;
#ifdef HC_ROUND_M256
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, hc_round_fp16_m256(_mm256_loadu_ps(x + i)));
#endif
    for (; i < n; i++)
        x[i] = hc_round_fp16(x[i]);
}

void hc_round_bf16_array(float *x, size_t n)
{
    size_t i = 0;
#ifdef HC_ROUND_M256
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, hc_round_bf16_m256(_mm256_loadu_ps(x + i)));
#endif
    for (; i < n; i++)
        x[i] = hc_round_bf16(x[i]);
}
