/* halfcheck's own transcendental functions: the same bits on every platform, libm and compiler. */
#ifndef HC_HCMATH_H
#define HC_HCMATH_H

/* Why: libms differ (glibc x86-64 and aarch64 disagree by 1 ulp on tanhf, Apple's is another
 * implementation), so outputs that went through them were not the same bits everywhere. These
 * use IEEE-754 +, -, *, / and the exact operations (sqrt, ldexp, frexp, floor, copysign, fabs)
 * only, each operation written out (no fma), so with -ffp-contract=off and FLT_EVAL_METHOD 0
 * every build computes the same bits. Accuracy: hc_expf within 1 ulp of the exact result (the
 * polynomial the vector kernels share); the other float functions are evaluated in double and
 * rounded once (within 1 ulp, nearly always correctly rounded); the double ones within a few
 * double ulp. Special values follow C's Annex F (NaN, ±inf, overflow, underflow, -0). */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The Makefile's -ffp-contract=off is what keeps every file free of fused multiply-adds; clang
 * also honours the standard pragma, so a build without the flag still keeps this header's
 * arithmetic (and the rest of the including file) unfused. GCC in ISO C mode does not contract
 * and warns about the pragma. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Under nvcc the inline functions below are device functions too (backends/cuda_ref.cu, compiled
 * with -fmad=false: the same operations, the same bits). */
#if defined(__CUDACC__)
#define HC_HD __host__ __device__
#else
#define HC_HD
#endif

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != -1
#error "hcmath needs FLT_EVAL_METHOD 0: float operations rounded to float (SSE2, NEON)"
#endif

/* exp's range reduction and polynomial on x (a float or an 8-lane vector, k, r, p of the same
 * type): k = round(x / ln 2) by the 1.5 * 2^23 trick, r = x - k ln 2 in two constants (the first
 * with 9 bits, so k times it is exact), p = exp(r) by a degree-6 polynomial (Cephes' expf).
 * exp(x) = p * 2^k. The one definition hc_expf and refs' vexp8 both expand, so a scalar and a
 * vector lane give the same bits. */
#define HC_EXPF_REDUCE(x, k, r, p)                                                                  \
    do {                                                                                            \
        (k) = ((x) * 1.44269504088896341f + 12582912.0f) - 12582912.0f;                             \
        (r) = (x) - (k) * 0.693359375f;                                                             \
        (r) = (r) - (k) * -2.12194440e-4f;                                                          \
        (p) = (r) * 1.9875691500e-4f + 1.3981999507e-3f;                                            \
        (p) = (p) * (r) + 8.3334519073e-3f;                                                         \
        (p) = (p) * (r) + 4.1665795894e-2f;                                                         \
        (p) = (p) * (r) + 1.6666665459e-1f;                                                         \
        (p) = (p) * (r) + 5.0000001201e-1f;                                                         \
        (p) = (p) * (r) * (r) + (r) + 1.0f;                                                         \
    } while (0)

/* 2^k as a float for an integral k in [-126, 127] (exact, from the exponent bits). */
HC_HD static inline float hc_pow2f_(float k)
{
    int32_t e = ((int32_t)k + 127) * (1 << 23);
    float s;
    memcpy(&s, &e, sizeof s);
    return s;
}

/* e^x. For x in [-87, 88] exactly p * 2^k of HC_EXPF_REDUCE (so refs' vector exp, which clamps
 * its input to that range, agrees bit for bit there); outside, p scaled in two exact steps so
 * the result overflows to inf or rounds into the subnormals once. */
HC_HD static inline float hc_expf(float x)
{
    if (x != x)
        return x + x;
    if (x > 89.0f)
        return INFINITY;
    if (x < -104.0f)
        return 0.0f;
    float k, r, p;
    HC_EXPF_REDUCE(x, k, r, p);
    if (k > 127.0f)
        return p * hc_pow2f_(k - 1.0f) * 2.0f;
    if (k < -126.0f)
        return p * hc_pow2f_(k + 64.0f) * 5.42101086242752217e-20f; /* 2^-64 */
    return p * hc_pow2f_(k);
}

/* float functions (evaluated in double, rounded once) */
float hc_tanhf(float x);
float hc_logf(float x);
float hc_log1pf(float x);
float hc_sinf(float x);
float hc_cosf(float x);
/* x^y for x > 0 (NaN for x <= 0 or NaN operands; 1 for y == 0), as exp(y log x). */
float hc_powf_pos(float x, float y);

/* double functions */
double hc_exp(double x);
double hc_expm1(double x);
double hc_log(double x);
double hc_log1p(double x);
/* Arguments reduced modulo pi/2 in three parts: within a few ulp for |x| < 2^20; beyond that the
 * result loses accuracy (halfcheck's arguments are angles of a few turns at most). */
double hc_sin(double x);
double hc_cos(double x);
double hc_atan(double x);
/* x^y for x > 0 as above. */
double hc_pow_pos(double x, double y);

#endif
