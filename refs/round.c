#include "round.h"

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
