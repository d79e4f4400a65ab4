/* Headroom: how far below a reduced format's largest finite value every layer of a net stays, measured
 * from the fp32 reference alone (ref32 and its taps) before anyone writes a reduced-precision kernel.
 *
 * Per layer (the tap names of docs/TAPS.md, in forward order) the figures below, each the largest over
 * the positions measured, with the position where it peaks. Spatial tensors count on-board points only
 * (the buffer's padding holds nothing a kernel must keep). A figure is either a value the computation
 * forms whatever its order ("exact") or an upper bound on every partial sum of a reduction in any
 * summation order ("bound"):
 *   stored        exact  max |x| of the layer's output tensor (the tap), what a kernel stores
 *   sum           exact  max |sum_i w_i x_i| of a convolution's or matmul's full reduction (no bias, no
 *                        residual), listed only where the stored output is not that sum itself: a
 *                        residual convolution (the tap is the trunk after the add), a matmul followed
 *                        by a bias or RoPE
 *   sum bound     bound  max over outputs of sum_i |w_i x_i|; for a residual convolution (which the
 *                        reference accumulates onto the trunk) plus |trunk|
 *   sum of squares exact max of an RMSNorm's sum of x^2 over its reduction: the channels of one
 *                        position, or for a spatial trunk-tip RMSNorm the channels and every on-board
 *                        point (terms >= 0: every partial sum is below it)
 *   pooling sum   exact  max over channels of |sum_p x_p| over the on-board points p, the sum behind a
 *                        global pooling's mean (listed on the layer that reads the pooled values, as the
 *                        emulation's profiles name it)
 *   pooling sum bound  bound  sum_p |x_p|
 *   pooled        exact  max |value| of the pooled row (means, scaled means, maxima)
 *   logit         exact  max |q.k| / sqrt(head dim) over heads, on-board queries and keys (attention:
 *                        listed on BLOCK.attn.out_preproj)
 *   q.k sum       exact  max |q.k| before the scaling (a kernel that scales after the dot product)
 *   q.k bound     bound  sum_d |q_d k_d|
 *   softmax sum   exact  max over heads and queries of sum_j exp(logit_j - max_j logit_j) (the row max
 *                        subtracted, as every stable softmax does; terms in (0, 1])
 *   p.v bound     bound  sum_j p_j |v_j|, the attention GEMM's partial sums with normalized
 *                        probabilities (a kernel that divides by the softmax sum last holds up to
 *                        softmax sum times this)
 * The margin of a figure to a format is log2(limit / value): the powers of two left before the format's
 * largest finite value (65504 for fp16); negative when it overflows. */
#ifndef HC_HEADROOM_H
#define HC_HEADROOM_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "backends/settings.h"

typedef struct hc_headroom_fig {
    char layer[256];  /* the tap name ("input/spatial", "input/global" for the input rows) */
    const char *what; /* "stored", "sum", "sum bound", ... (above) */
    int bound;        /* 1: an upper bound on partial sums, 0: a value formed (exact) */
    double value;     /* the largest over the positions; +inf when non-finite in the reference */
    long position;    /* index into ps where it peaks (the first such), -1 before any */
} hc_headroom_fig;

typedef struct hc_headroom hc_headroom;

/* How hc_headroom_measure runs: the evaluation settings (NN buffer) and positions per batch (0: 1). */
typedef struct hc_headroom_opts {
    const hc_eval_settings *settings;
    int batch;
} hc_headroom_opts;

/* Evaluates ps[0..n) with ref32 (featurized at each position's symmetry, as every evaluation is) and
 * measures every figure. NULL with err. */
hc_headroom *hc_headroom_measure(const hc_net *net, const hc_position *ps, size_t n, const hc_headroom_opts *o,
                                 hc_err *err);
void hc_headroom_free(hc_headroom *h);

/* The figures in forward order: per layer its intermediates first (formed before its output), then
 * "stored". */
int hc_headroom_count(const hc_headroom *h);
const hc_headroom_fig *hc_headroom_at(const hc_headroom *h, int i);

/* The largest finite value of a format (enum hc_tap_fmt: f16 65504, bf16 about 3.39e38, f32 FLT_MAX). */
double hc_headroom_limit(int fmt);
/* log2(limit / value): +inf for 0, -inf for a non-finite value. */
double hc_headroom_margin(double value, double limit);
/* The first figure in forward order over limit, among exact figures (bound 0) or bounds (bound 1);
 * -1 when none. */
int hc_headroom_first_over(const hc_headroom *h, double limit, int bound);
/* The figure of the smallest margin among exact figures (bound 0) or bounds (bound 1) (the first of
 * equals); -1 when there is none. */
int hc_headroom_smallest(const hc_headroom *h, int bound);

#endif
