/* Reference kernels: the activations, scalar (KataGo's Eigen forms; the 8-lane forms are in
 * kernels_impl.h). A file of their own below the kernel files, so that the shared vector helpers,
 * which fall back on them, depend on nothing that includes those helpers. */
#include "refs/kernels.h"
#include "harness/base/hcmath.h"

int hc_act_valid(int code)
{
    return code == HC_ACT_IDENTITY || code == HC_ACT_RELU || code == HC_ACT_MISH ||
           code == HC_ACT_SILU || code == HC_ACT_MISH_SCALE8;
}

static inline float mish_softplus(float x)
{
    float lo = x < 20.0f ? x : 20.0f;
    float hi = x > 20.0f ? x : 20.0f;
    return hc_log1pf(hc_expf(lo)) + (hi - 20.0f);
}

float hc_act_apply(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * hc_tanhf(mish_softplus(x));
    case HC_ACT_SILU: return x / (hc_expf(-x) + 1.0f);
    case HC_ACT_MISH_SCALE8: return x * hc_tanhf(mish_softplus(8.0f * x));
    default: return x;
    }
}

float hc_act_apply_rmstip(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * hc_tanhf(x < 20.0f ? hc_log1pf(hc_expf(x)) : x);
    case HC_ACT_SILU: return x / (1.0f + hc_expf(-x));
    case HC_ACT_MISH_SCALE8: return x * hc_tanhf(mish_softplus(8.0f * x));
    default: return x;
    }
}
