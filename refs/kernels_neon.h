/* Internal to refs/'s kernel files on aarch64: NEON forms of kernels_impl.h's vector helpers, each
 * lane doing the 8-lane forms' operations in the same order, so every build gives the same bits. */
#ifndef HC_KERNELS_NEON_H
#define HC_KERNELS_NEON_H

#include <arm_neon.h>

#include "harness/base/hcmath.h"
#include "refs/kernels.h"

/* Every operation below is a separate NEON multiply, add or subtract: no vfmaq/vmlaq, whose
 * single rounding would change the bits that the scalar chains (hc_expf, hc_bn_act) define. */

static inline float32x4_t n4_splat(float x)
{
    return vdupq_n_f32(x);
}

/* a > b ? a : b per lane: MAXPS's definition (b when either is NaN, and for +0 against -0), which
 * the x86 and generic forms use. NEON's FMAX is not it: it returns NaN for a NaN operand and
 * orders -0 below +0. */
static inline float32x4_t n4_max(float32x4_t a, float32x4_t b)
{
    return vbslq_f32(vcgtq_f32(a, b), a, b);
}

/* a < b ? a : b per lane: MINPS's definition, as n4_max. */
static inline float32x4_t n4_min(float32x4_t a, float32x4_t b)
{
    return vbslq_f32(vcltq_f32(a, b), a, b);
}

/* HC_EXPF_REDUCE (hcmath.h) and the scale by 2^k on x in [-87, 88] or NaN, spelled as
 * intrinsics step by step: k by the 1.5 * 2^23 trick, r in two constants, Cephes' polynomial.
 * hcmath.h's macro is the definition; tests/test_hcmath checks these lanes against hc_expf. */
static inline float32x4_t n4_exp_reduced(float32x4_t x)
{
    const float32x4_t shift = n4_splat(12582912.0f);
    float32x4_t k = vsubq_f32(vaddq_f32(vmulq_n_f32(x, 1.44269504088896341f), shift), shift);
    float32x4_t r = vsubq_f32(x, vmulq_n_f32(k, 0.693359375f));
    r = vsubq_f32(r, vmulq_n_f32(k, -2.12194440e-4f));
    float32x4_t p = vaddq_f32(vmulq_n_f32(r, 1.9875691500e-4f), n4_splat(1.3981999507e-3f));
    p = vaddq_f32(vmulq_f32(p, r), n4_splat(8.3334519073e-3f));
    p = vaddq_f32(vmulq_f32(p, r), n4_splat(4.1665795894e-2f));
    p = vaddq_f32(vmulq_f32(p, r), n4_splat(1.6666665459e-1f));
    p = vaddq_f32(vmulq_f32(p, r), n4_splat(5.0000001201e-1f));
    p = vaddq_f32(vaddq_f32(vmulq_f32(vmulq_f32(p, r), r), r), n4_splat(1.0f));
    /* k is integral in [-126, 127]: the conversion is exact, the exponent field is 2^k */
    int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(k), vdupq_n_s32(127)), 23);
    return vmulq_f32(p, vreinterpretq_f32_s32(e));
}

/* vexp8's lanes: the input clamped to [-87, 88] by MAXPS/MINPS, NaN kept. */
static inline float32x4_t n4_exp(float32x4_t x)
{
    return n4_exp_reduced(n4_min(n4_splat(88.0f), n4_max(n4_splat(-87.0f), x)));
}

/* n4_exp for x <= 0 or NaN (a softmax's v - max): the upper clamp is a no-op there. */
static inline float32x4_t n4_exp_nonpos(float32x4_t x)
{
    return n4_exp_reduced(n4_max(n4_splat(-87.0f), x));
}

/* vmish8's lanes: x * (q / (q + 2)) with n = exp(min(x, 20)), q = n (n + 2). */
static inline float32x4_t n4_mish(float32x4_t x)
{
    const float32x4_t twenty = n4_splat(20.0f), two = n4_splat(2.0f);
    float32x4_t n = n4_exp(vbslq_f32(vcltq_f32(x, twenty), x, twenty));
    float32x4_t q = vmulq_f32(n, vaddq_f32(n, two));
    return vmulq_f32(x, vdivq_f32(q, vaddq_f32(q, two)));
}

/* vsilu8's lanes: x / (exp(-x) + 1). */
static inline float32x4_t n4_silu(float32x4_t x)
{
    return vdivq_f32(x, vaddq_f32(n4_exp(vnegq_f32(x)), n4_splat(1.0f)));
}

/* bn_act8's lanes: x = v * sc + bi (a multiply, then an add), the activation, then the mask
 * select (mk == 1 keeps the lane, anything else gives +0). */
static inline float32x4_t n4_bn_act(float32x4_t v, float sc, float bi, int act, float32x4_t mk)
{
    const float32x4_t zero = n4_splat(0.0f);
    float32x4_t x = vaddq_f32(vmulq_n_f32(v, sc), n4_splat(bi)), y;
    switch (act) {
    case HC_ACT_IDENTITY: y = x; break;
    case HC_ACT_RELU: y = vbslq_f32(vcgtq_f32(x, zero), x, zero); break;
    case HC_ACT_MISH: y = n4_mish(x); break;
    case HC_ACT_SILU: y = n4_silu(x); break;
    default: {
        float t[4];
        vst1q_f32(t, x);
        for (int l = 0; l < 4; l++)
            t[l] = hc_act_apply(act, t[l]);
        y = vld1q_f32(t);
        break;
    }
    }
    return vbslq_f32(vceqq_f32(mk, n4_splat(1.0f)), y, zero);
}

/* A 4x4 transpose in registers: r[i] lane j -> d[j] lane i (pure data movement). */
static inline void n4_transpose(const float32x4_t r[4], float32x4_t d[4])
{
    float32x4x2_t a = vtrnq_f32(r[0], r[1]), b = vtrnq_f32(r[2], r[3]);
    d[0] = vcombine_f32(vget_low_f32(a.val[0]), vget_low_f32(b.val[0]));
    d[1] = vcombine_f32(vget_low_f32(a.val[1]), vget_low_f32(b.val[1]));
    d[2] = vcombine_f32(vget_high_f32(a.val[0]), vget_high_f32(b.val[0]));
    d[3] = vcombine_f32(vget_high_f32(a.val[1]), vget_high_f32(b.val[1]));
}

#endif
