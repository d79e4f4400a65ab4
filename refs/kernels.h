/* fp32 kernels of the reference forward pass (KataGo's Eigen backend arithmetic).
 *
 * Layout. Spatial activations are "CBP": data[(c * batch + b) * hw + p], p = y * nx + x over the
 * whole nn buffer (boards smaller than the buffer sit in its top-left corner and are marked by
 * the mask). Per-row vectors (global inputs, pooled features, value head) are "BC":
 * data[b * c_count + c].
 *
 * Every matrix product is hc_gemm (gemm.h): each output is one FMA chain over the reduction
 * index, whatever the call's shape, so products span all rows of a batch and a row's bits
 * still do not depend on its batch (OpenBLAS's would: its edge kernels differ per shape).
 *
 * The mask is [batch][hw] with values exactly 0 or 1; mask_sum[b] is its float sum in buffer
 * order, as KataGo computes it.
 *
 * Kernels never allocate: callers pass workspaces sized by the *_workspace functions. All
 * pointers are borrowed for the duration of the call. Results depend only on the row's own
 * data: no cross-row reduction, and shape-independent GEMMs. */
#ifndef HC_KERNELS_H
#define HC_KERNELS_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/model/model.h"

/* Activation codes are model.h's hc_act (KataGo's numbers). 1 when code is one of them. */
int hc_act_valid(int code);

/* The activation as KataGo's Eigen backend evaluates it after a batch norm or on a vector:
 * mish(x) = x * tanh(softplus) with softplus = log1p(exp(min(x,20))) + (max(x,20) - 20);
 * silu(x) = x / (exp(-x) + 1); mish_scale8(x) = x * tanh(softplus(8x)). */
float hc_act_apply(int act, float x);

/* The trunk-tip RMSNorm's own activation form: mish as x * tanh(x < 20 ? log1p(exp(x)) : x),
 * silu as x / (1 + exp(-x)). */
float hc_act_apply_rmstip(int act, float x);

/* ---- masks ---------------------------------------------------------------------------- */

/* mask[b][p] = spatial[b][0][p] (channel 0 of [batch][c_spatial][hw] input), mask_sum[b] its
 * sum in buffer order. */
void hc_mask_from_input(int batch, int hw, int c_spatial, const float *spatial, float *mask,
                        float *mask_sum);

/* ---- convolution ---------------------------------------------------------------------- */

/* A convolution with zero padding (kh, kw odd), stride 1, dilation 1, output the size of the
 * input. The weights are borrowed (they stay the caller's). Winograd convolutions run over
 * chunks of (row, tile) pairs so that each tile GEMM has many columns. */
typedef struct hc_kconv {
    int oc, ic, kh, kw;
    const float *w; /* [oc][ic][kh][kw], row-major: the sgemm A matrix (oc x ic*kh*kw) */
    float *wino;    /* owned: 3x3 Winograd F(4x4,3x3) weights [36][oc][ic], or NULL */
    int acc_fp16;   /* emulation, 0 by default: see hc_kconv_set_modes */
    int tiles_fp16;
    float *wino2;   /* owned: 3x3 Winograd F(2x2,3x3) weights [16][oc][ic] (emulation), or NULL */
    int wino_p4;    /* wino's 36 matrices are in hc_gemm_p4's layout (hc_kconv_pack) */
} hc_kconv;

/* weights: [oc][ic][kh][kw] (KataGo ConvLayerDesc order, hc_conv.w), borrowed. Fails on an
 * even or non-positive shape. Runs as im2col + GEMM (1x1: one GEMM over the whole batch). */
int hc_kconv_init(hc_kconv *cv, const float *weights, int oc, int ic, int kh, int kw, hc_err *err);

/* Switches a 3x3 convolution to Winograd F(4x4,3x3) (6x6 tiles, the transform KataGo's Eigen
 * backend uses for 3x3): transformed weights are computed in double and rounded once. A no-op
 * for other kernel sizes. */
int hc_kconv_use_winograd(hc_kconv *cv, hc_err *err);
void hc_kconv_free(hc_kconv *cv);

/* Reorders cv's Winograd weights into the layout this build's CPU tile GEMMs read fastest,
 * where there is one (AVX2 without AVX-512: hc_gemm_p4's blocks of 4 output channels, when oc
 * is a multiple of 4, ic at most 2048 and the GEMMs do not accumulate in fp16); a no-op
 * otherwise. The outputs' bits do not change. For the CPU engine's own convolutions only:
 * other readers of cv->wino (the GPU uploads it) expect [36][oc][ic]; hc_kconv_set_modes
 * puts them back when it turns fp16 accumulation on. */
void hc_kconv_pack(hc_kconv *cv);

/* Reduced-precision emulation (refs/round.h rounding), for halfcheck's emulate backend; the
 * reference never sets them. acc_fp16: the GEMM accumulates in fp16 as a tensor core with an
 * fp16 accumulator does: each run of HC_ACC16_CHUNK products is summed in fp32, rounded to
 * fp16 and added to the fp16 accumulator, which is rounded again. tiles_fp16 (3x3 Winograd
 * only): the transformed weights, input tiles and tile products are stored as fp16 while the
 * transform arithmetic stays fp32 (what MLX does). Call after hc_kconv_use_winograd. */
enum { HC_ACC16_CHUNK = 16 };
/* The two forms of a chunk's fp32 sum (refs/acc16_core.inc, the per-output arithmetic the GPU
 * shares): HC_ACC16_FUSED, one fmaf chain (hc_sgemm_acc16 on hc_gemm: convolutions and their
 * Winograd tile GEMMs); HC_ACC16_MULADD, each product rounded, then added
 * (hc_gemm_acc16_strided: matmuls, the attention's q.k and p.v). */
enum { HC_ACC16_FUSED = 1, HC_ACC16_MULADD = 2 };
void hc_kconv_set_modes(hc_kconv *cv, int acc_fp16, int tiles_fp16);

/* Switches a 3x3 convolution to Winograd F(2x2,3x3) (4x4 tiles, the transform MLX uses; an
 * emulation choice, KataGo's Eigen backend does not run it): transformed weights G g G^T
 * computed in double and rounded once; input tiles B^T d B and outputs A^T m A in fp32, along
 * x first. Replaces F(4x4,3x3) if set. A no-op for other kernel sizes. Call before
 * hc_kconv_set_modes (whose tiles_fp16 then stores these tiles as fp16). */
int hc_kconv_use_winograd2(hc_kconv *cv, hc_err *err);

/* Floats of workspace hc_kconv_run needs for this batch and buffer size. */
size_t hc_kconv_workspace(const hc_kconv *cv, int batch, int nx, int ny);

/* out (CBP, oc channels) = conv(in) (CBP, ic channels), or out += conv(in) when accumulate.
 * in and out must not overlap. */
void hc_kconv_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                 int accumulate, float *ws);

/* A batch norm + activation applied to a convolution's output as it is produced: exactly
 * hc_add_bias_bc(oc, batch, nx*ny, out, row_bias) when row_bias is set (a global-pooling
 * block's bias), then hc_bn_act(oc, batch, nx*ny, out, out, scale, bias, act, mask), after
 * hc_kconv_run: the same bits, without more passes over the output (Winograd convolutions
 * apply it in the output transform). Pointers borrowed for the call. */
typedef struct hc_kepi {
    const float *scale, *bias; /* [oc] merged batch norm */
    int act;                   /* hc_act */
    const float *mask;         /* [batch][hw], 0 or 1 */
    const float *row_bias;     /* [batch][oc] added first, or NULL */
} hc_kepi;

/* out = bn_act(conv(in)) as described for hc_kepi (no accumulate form). */
void hc_kconv_run_bn(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                     float *ws, const hc_kepi *epi);

/* ---- batch norm, bias, activation ----------------------------------------------------- */

/* out[c][b][p] = mask[b][p] == 1 ? act(in * scale[c] + bias[c]) : 0 (in == out allowed).
 * Mish and SiLU are evaluated 8 lanes at a time from hc_vexpf's exp (mish as
 * x * n(n+2)/(n(n+2)+2), n = e^x): within a few ulp of the libm forms, as KataGo's Eigen
 * evaluates them with its own vectorized exp/log1p/tanh. */
void hc_bn_act(int channels, int batch, int hw, const float *in, float *out, const float *scale,
               const float *bias, int act, const float *mask);

/* hc_add_bias_bc(channels, batch, hw, in, row_bias) then hc_bn_act in one pass over the tensor
 * (the same bits; in is not written unless in == out). */
void hc_bias_bn_act(int channels, int batch, int hw, const float *in, float *out, const float *row_bias,
                    const float *scale, const float *bias, int act, const float *mask);

/* KataGo's merged batch norm: scale = gamma / sqrt(var + eps), bias = beta - scale * mean
 * (fp32, as desc.cpp computes it). gamma / beta may be NULL for 1 / 0. */
void hc_bn_merge(int channels, float eps, const float *mean, const float *var, const float *gamma,
                 const float *beta, float *scale, float *bias);

/* x[c][b][p] += bias[b][c] for every p (padding included, as KataGo does). */
void hc_add_bias_bc(int channels, int batch, int hw, float *x, const float *bias);

/* ---- pooling -------------------------------------------------------------------------- */

/* Global pooling of a masked activation (zero off the board) into out[b][3*channels]:
 * mean, mean * (sqrt(area) - 14) * 0.1, and the masked max (initialised to -1 and taken over
 * x + mask - 1, so padding counts as -1), with area = mask_sum[b]. */
void hc_pool_gpool(int channels, int batch, int hw, const float *in, const float *mask,
                   const float *mask_sum, float *out);

/* Value-head pooling into out[b][3*channels]: mean, mean * (sqrt(area) - 14) * 0.1,
 * mean * ((sqrt(area) - 14)^2 * 0.01 - 0.1). */
void hc_pool_value(int channels, int batch, int hw, const float *in, const float *mask_sum,
                   float *out);

/* ---- vectors (BC layout) -------------------------------------------------------------- */

/* out[b][o] = sum_i in[b][i] * w[i][o]; w is [in_c][out_c] (KataGo MatMulLayerDesc order). */
void hc_matmul_bc(int batch, int in_c, int out_c, const float *in, const float *w, float *out);

/* x[b][c] += bias[c], then x = act(x) (act HC_ACT_IDENTITY to skip). */
void hc_bias_act_bc(int batch, int channels, float *x, const float *bias, int act);

/* ---- per-position ops (CBP layout, s = batch * hw columns) ---------------------------- */

/* out[o][s] = sum_i w[i][o] * in[i][s] over s = batch * hw columns; w is [in_c][out_c]. */
void hc_matmul_cs(int batch, int hw, int in_c, int out_c, const float *in, const float *w,
                  float *out);

/* Transformer RMSNorm (weight only): at masked-out positions 0, else
 * x * (1 / sqrtf(sum_c x^2 / C + eps)) * weight[c]. in == out allowed. */
void hc_rmsnorm_pos(int channels, int batch, int hw, const float *in, float *out,
                    const float *weight, float eps, const float *mask);

/* hc_rmsnorm_pos on n columns: in[c * ldi + j] to out[c * ldo + j], mask[j] (the same bits per
 * column). in == out allowed when ldi == ldo. */
void hc_rmsnorm_cols(int channels, int n, const float *in, size_t ldi, float *out, size_t ldo,
                     const float *weight, float eps, const float *mask);

/* Trunk-tip RMSNorm with gamma, beta and activation; spatial: one rms over all channels and
 * on-board positions of a row, else one per position. Masked-out positions are 0. */
void hc_rmsnorm_tip(int channels, int batch, int hw, const float *in, float *out,
                    const float *gamma, const float *beta, float eps, int spatial, int act,
                    const float *mask);

/* trunk[c][b][p] += delta[c][b][p] * mask[b][p]. */
void hc_residual_masked(int channels, int batch, int hw, float *trunk, const float *delta,
                        const float *mask);

/* hc_residual_masked on n columns: trunk[c * ldt + j] += delta[c * ldd + j] * mask[j]. */
void hc_residual_cols(int channels, int n, float *trunk, size_t ldt, const float *delta, size_t ldd,
                      const float *mask);

/* a = silu(a) * g elementwise, silu(a) = a / (1 + exp(-a)). */
void hc_swiglu(size_t n, float *a, const float *g);

/* RoPE tables (KataGo computeRopeCosSin): learnable: freqs [kv_heads][pairs][2] (x, y), tables
 * [kv_heads][pairs][hw]; fixed (freqs NULL): theta, tables [pairs][hw], the first pairs/2 pairs
 * rotate by y, the rest by x. */
void hc_rope_tables(int nx, int ny, int pairs, int kv_heads, const float *freqs, float theta,
                    float *cos_t, float *sin_t);

/* Rotates pairs (2p, 2p+1) of every head of x ([heads*head_dim][batch*hw]) in place.
 * learnable: table head = h * kv_heads / heads; else the shared table. */
void hc_rope_apply(int batch, int hw, int heads, int head_dim, int kv_heads, int learnable,
                   const float *cos_t, const float *sin_t, float *x);

/* hc_rope_apply on columns [j0, j0 + n) of x (rows [heads*head_dim], row stride ldx), column j
 * being point j % hw of its board: the same bits per element. */
void hc_rope_cols(int hw, size_t j0, int n, int heads, int head_dim, int kv_heads, int learnable,
                  const float *cos_t, const float *sin_t, float *x, size_t ldx);

/* Which form each kernel family was compiled to, for tests and `halfcheck version` (every form
 * gives the same bits): the Winograd transforms "avx2" (AVX2 and AVX-512 builds), "neon" or
 * "vector" (GCC vector extensions); the exact attention's softmax strips "avx512" (16 lanes),
 * "neon" or "vector"; the vector exp, Mish and SiLU "neon" or "vector". The GEMM's:
 * hc_gemm_isa (gemm.h). */
const char *hc_wino_isa(void);
const char *hc_softmax_isa(void);
const char *hc_vexp_isa(void);

/* x = exp(x) elementwise, vectorized: hc_expf's bits (hcmath.h, within 1 ulp) for x in
 * [-87, 88], clamped there (never inf). Used for the attention softmax. */
void hc_vexpf(size_t n, float *x);

/* Scaled dot-product attention with a key and query mask, grouped heads (head h uses kv head
 * h / (heads / kv_heads)). q: [heads*qd][s], k: [kv_heads*qd][s], v: [kv_heads*vd][s],
 * out: [heads*vd][s] with s = batch*hw. Masked-out queries give zero output. The softmax
 * sums in 8 interleaved partial sums and uses hc_vexpf (KataGo: sequential sum, expf).
 * ws: 2*hw*hw floats (scratch for the scores and probabilities). */
void hc_attention(int batch, int hw, int heads, int kv_heads, int qd, int vd, const float *q,
                  const float *k, const float *v, const float *mask, float *out, float *ws);

/* ---- reduced-precision emulation inside layers (refs/emulated.c, halfcheck's emulate backend; the reference
 * never calls these) ------------------------------------------------------------------ */

/* Formats, numbered as backends/profile.h's hc_fmt. */
enum { HC_KFMT_FP32 = 0, HC_KFMT_FP16 = 1, HC_KFMT_BF16 = 2 };

/* x[0..n) rounded to fmt in place (fp32: untouched). */
void hc_round_fmt_array(int fmt, float *x, size_t n);

/* Pooling and RMSNorm with their reductions computed in fmt (HC_KFMT_*), as a backend that
 * keeps the sums in its compute dtype does; fmt fp32 gives the reference kernels' bits.
 * Pooling: the sum over the buffer rounded after every add (buffer order, as the reference
 * sums), then the mean's divide, sqrt(area), sqrt(area) - 14, the constants 0.1 and 0.01 and
 * every product and difference of the scaled means, each rounded; an overflowing sum is inf
 * (never clamped) and so is its mean. The masked max is the reference's (x + mask - 1 over
 * stored values, initialised to -1: exact in any format). RMSNorm: each square and each add
 * of the sum of squares rounded (channel order; spatial: positions in buffer order, channels
 * within), then the divide by the count, eps itself (1e-5 becomes a binary16 subnormal), the
 * add, the sqrt and the reciprocal, and the products x * rms * weight (tip: * gamma + beta,
 * before the activation) each rounded. row_bad (NULL: not wanted, else [batch], the caller
 * zeroes it): set to 1 for a row where a sum overflowed to inf (or met a NaN), which an RMSNorm
 * would otherwise hide (1 / sqrt(inf) is 0). Separate from the reference kernels so that
 * those stay as fast. */
void hc_pool_gpool_fmt(int fmt, int channels, int batch, int hw, const float *in, const float *mask,
                       const float *mask_sum, float *out, unsigned char *row_bad);
void hc_pool_value_fmt(int fmt, int channels, int batch, int hw, const float *in, const float *mask_sum,
                       float *out, unsigned char *row_bad);
void hc_rmsnorm_pos_fmt(int fmt, int channels, int batch, int hw, const float *in, float *out,
                        const float *weight, float eps, const float *mask, unsigned char *row_bad);
void hc_rmsnorm_tip_fmt(int fmt, int channels, int batch, int hw, const float *in, float *out,
                        const float *gamma, const float *beta, float eps, int spatial, int act,
                        const float *mask, unsigned char *row_bad);

/* hc_matmul_bc and hc_matmul_cs accumulating in fp16 as hc_kconv_set_modes's acc_fp16 does:
 * each run of HC_ACC16_CHUNK products summed in fp32, rounded to fp16, added to an fp16
 * accumulator rounded again. */
void hc_matmul_bc_acc16(int batch, int in_c, int out_c, const float *in, const float *w, float *out);
void hc_matmul_cs_acc16(int batch, int hw, int in_c, int out_c, const float *in, const float *w,
                        float *out);

/* hc_attention with rounding: scores_fmt rounds the scaled scores q.k/sqrt(qd) before the
 * softmax, probs_fmt the probabilities after it, acc_fp16 makes both GEMMs (q.k and p.v)
 * accumulate in fp16 (above). Masked-out keys stay exactly 0. */
typedef struct hc_attn_emul {
    int scores_fmt, probs_fmt, acc_fp16;
} hc_attn_emul;
void hc_attention_emul(int batch, int hw, int heads, int kv_heads, int qd, int vd, const float *q,
                       const float *k, const float *v, const float *mask, float *out, float *ws,
                       const hc_attn_emul *em);

#endif
