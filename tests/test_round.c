/* Every one of the 2^32 float bit patterns rounded to binary16 (against the compiler's _Float16
 * conversion) and to bfloat16 (against an independent nearest-even search in double); the array
 * forms (vectorized where the compiler targets AVX2/F16C) give the scalar forms' bits on every
 * pattern, NaN payloads included. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "hc_test.h"
#include "refs/round.h"

/* Independent bfloat16 reference: the two bfloat16 neighbours by truncation, then the nearer
 * in exact double arithmetic, ties to the even mantissa, overflow where the nearest is past max. */
static float bf16_reference(float f)
{
    if (isnan(f))
        return f;
    if (isinf(f))
        return f;
    uint32_t u = hc_f32_bits(f);
    float lo = hc_f32_of_bits(u & 0xffff0000u);
    uint32_t hi_bits = (u & 0xffff0000u) + 0x10000u;
    float hi = hc_f32_of_bits(hi_bits); /* may be inf: the step past the largest finite */
    double dlo = fabs((double)f - (double)lo);
    double dhi = isinf(hi) ? fabs((double)f - (double)ldexp(1.0, 128) * (f < 0 ? -1 : 1)) : fabs((double)f - (double)hi);
    if (dlo < dhi)
        return lo;
    if (dhi < dlo)
        return hi;
    return ((u >> 16) & 1u) ? hi : lo;
}

typedef struct {
    uint64_t start, end;
    uint64_t bad16, badbf, arr16, arrbf;
    uint32_t first16, firstbf, firstarr16, firstarrbf;
} range;

static int same(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return hc_f32_bits(a) == hc_f32_bits(b);
}

static void *work(void *arg)
{
    range *r = arg;
    enum { BLK = 4096 };
    float a16[BLK], abf[BLK];
    unsigned blocks = 0;
    for (uint64_t b = r->start, n = 0; b < r->end; b += n, blocks++) {
        /* Every other block has an odd length, so the arrays' scalar tails are exercised too. */
        n = r->end - b < BLK ? r->end - b : BLK - (blocks & 1u);
        for (size_t k = 0; k < n; k++)
            a16[k] = abf[k] = hc_f32_of_bits((uint32_t)(b + k));
        hc_round_fp16_array(a16, n);
        hc_round_bf16_array(abf, n);
        for (size_t k = 0; k < n; k++) {
            uint64_t i = b + k;
            float f = hc_f32_of_bits((uint32_t)i);
            float want16 = (float)(_Float16)f, s16 = hc_round_fp16(f), sbf = hc_round_bf16(f);
            if (!same(s16, want16) && r->bad16++ == 0)
                r->first16 = (uint32_t)i;
            if (!same(sbf, bf16_reference(f)) && r->badbf++ == 0)
                r->firstbf = (uint32_t)i;
            if (hc_f32_bits(a16[k]) != hc_f32_bits(s16) && r->arr16++ == 0)
                r->firstarr16 = (uint32_t)i;
            if (hc_f32_bits(abf[k]) != hc_f32_bits(sbf) && r->arrbf++ == 0)
                r->firstarrbf = (uint32_t)i;
        }
    }
    return NULL;
}

int main(void)
{
    hc_plan(5 + 2 + 2);
    /* Spot checks that name the cases: ties, overflow, subnormals, signed zero. */
    hc_check("round-1.1", hc_round_fp16(65504.0f) == 65504.0f && isinf(hc_round_fp16(65520.0f)) &&
                              hc_round_fp16(65519.99f) == 65504.0f && isinf(hc_round_fp16(-1e9f)) &&
                              hc_round_fp16(-1e9f) < 0,
             "overflow");
    hc_check("round-1.2", hc_round_fp16(5.9604645e-8f) == 5.9604645e-8f && hc_round_fp16(2.9802322e-8f) == 0.0f &&
                              hc_round_fp16(2.9802326e-8f) == 5.9604645e-8f && hc_round_fp16(1e-5f) == 1.001358e-05f,
             "subnormals");
    hc_check("round-1.3", hc_round_fp16(1.0f + 1.0f / 2048) == 1.0f && hc_round_fp16(1.0f + 3.0f / 2048) == 1.001953125f,
             "ties to even");
    hc_check("round-1.4", signbit(hc_round_fp16(-0.0f)) && signbit(hc_round_fp16(-1e-30f)) && isnan(hc_round_fp16(NAN)),
             "signed zero and NaN");
    hc_check("round-1.5", hc_round_bf16(1.0f + 1.0f / 256) == 1.0f && hc_round_bf16(1.0f + 3.0f / 256) == 1.015625f &&
                              isinf(hc_round_bf16(3.4028235e38f)),
             "bf16 ties and overflow");

    enum { T = 2 };
    range r[T];
    pthread_t th[T];
    uint64_t total = 1ull << 32;
    for (int t = 0; t < T; t++) {
        r[t] = (range){.start = total / T * (uint64_t)t, .end = total / T * (uint64_t)(t + 1)};
        pthread_create(&th[t], NULL, work, &r[t]);
    }
    uint64_t bad16 = 0, badbf = 0, arr16 = 0, arrbf = 0;
    uint32_t first16 = 0, firstbf = 0, firstarr16 = 0, firstarrbf = 0;
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        if (r[t].bad16 && !bad16)
            first16 = r[t].first16;
        if (r[t].badbf && !badbf)
            firstbf = r[t].firstbf;
        if (r[t].arr16 && !arr16)
            firstarr16 = r[t].firstarr16;
        if (r[t].arrbf && !arrbf)
            firstarrbf = r[t].firstarrbf;
        bad16 += r[t].bad16;
        badbf += r[t].badbf;
        arr16 += r[t].arr16;
        arrbf += r[t].arrbf;
    }
    hc_check("round-2.1", bad16 == 0, "%llu of 2^32 patterns differ from _Float16, first 0x%08x",
             (unsigned long long)bad16, first16);
    hc_check("round-2.2", badbf == 0, "%llu of 2^32 patterns differ from the bfloat16 reference, first 0x%08x",
             (unsigned long long)badbf, firstbf);
    hc_check("round-3.1", arr16 == 0, "hc_round_fp16_array: %llu of 2^32 patterns differ from hc_round_fp16, first 0x%08x",
             (unsigned long long)arr16, firstarr16);
    hc_check("round-3.2", arrbf == 0, "hc_round_bf16_array: %llu of 2^32 patterns differ from hc_round_bf16, first 0x%08x",
             (unsigned long long)arrbf, firstarrbf);
    return hc_test_exit();
}
