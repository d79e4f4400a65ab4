/* fp16 accumulation's per-output arithmetic on the host (refs/acc16_core.inc, the source the GPU's kernels share). */
#ifndef HC_ACC16_H
#define HC_ACC16_H

#include <math.h>

#include "refs/kernels_impl.h"
#include "refs/round.h"

/* x rounded to HC_KFMT_* fmt (fp32: unchanged), refs/round.h's bits. */
static inline float hc_acc16_rfmt(int fmt, float x)
{
    return fmt == HC_KFMT_FP16 ? hc_round_fp16(x) : fmt == HC_KFMT_BF16 ? hc_round_bf16(x) : x;
}

/* One lane of vexp8, the softmax's exp (the vector function itself, so the lane cannot differ). */
static inline float hc_acc16_vexp1(float x)
{
    hc_v8f v = vexp8(v8_splat(x));
    return v[0];
}

#define ACC16(name) hc_##name
#define ACC16_FN static inline
#define ACC16_ROUND(fmt, x) hc_acc16_rfmt((fmt), (x))
#define ACC16_EXP(x) hc_acc16_vexp1(x)
#include "refs/acc16_core.inc"
#undef ACC16
#undef ACC16_FN
#undef ACC16_ROUND
#undef ACC16_EXP

#endif
