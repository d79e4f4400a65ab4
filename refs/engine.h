/* The fp32 reference forward pass: KataGo's Eigen backend arithmetic over an hc_net, on
 * refs/gemm.h's products, batched across positions, threaded over batch rows.
 *
 * Lifetimes: the net outlives the engine (the engine borrows its weights, it copies nothing
 * big); an hc_raw_heads is owned by the caller. All scratch memory is allocated by
 * hc_engine_new; hc_engine_eval allocates nothing. One engine serves one caller at a time
 * (eval is not reentrant); use one engine per calling thread.
 *
 * Inputs are rows already featurized AND symmetrized by the caller (KataGo applies the
 * symmetry while copying rows into its input buffer; the engine does not). Channel 0 of the
 * spatial input is the board mask (1 on the board, 0 on padding of a buffer larger than the
 * board), exactly as KataGo's backends read it.
 *
 * Determinism: the result of a row depends only on that row (no cross-row reductions) and
 * the thread count only decides which rows a thread computes, so outputs are the same bits
 * for every run and every thread count; tests/test_engine.c also checks that a row gives the
 * same bits at every batch size (every product is refs/gemm.h's, whose outputs are each one
 * FMA chain whatever the call's shape).
 *
 * What the outputs are, and what the caller's post-processing must do with them (KataGo's
 * nneval.cpp semantics; getOutput in eigenbackend.cpp copies these raw values out, in the
 * player-to-move's perspective):
 *  - policy: raw logits of every policy channel over the whole nn buffer, also off the board
 *    (the values there are meaningless). Channel 0 is the policy; when policy_channels is 2,
 *    or 4 with model version >= 16, channel 1 is the optimistic policy and KataGo mixes
 *    p + (p_opt - p) * policyOptimism for every point AND for the pass logit (getOutput does
 *    this; the engine does NOT). Channels 2, 3 (v16+: q-value predictions) are unused by
 *    KataGo's output. Then: map back through the symmetry, mask illegal moves, divide by the
 *    policy temperature, softmax over legal moves plus pass (nneval.cpp).
 *  - policy_pass: the pass logit of every policy channel.
 *  - value: the win, loss, no-result logits; softmax them (nneval.cpp), then flip to white's
 *    perspective if black is to move.
 *  - score: the raw score-value channels (1, 2, 4 or 6 by model version): scoreMean,
 *    scoreMeanSq (or its raw form), lead, varTimeLeft, shortterm winloss error, shortterm
 *    score error; nneval.cpp multiplies every raw value (value logits included) by
 *    output_scale_multiplier, then applies the model's post-process multipliers
 *    (hc_net.post: score_mean_multiplier etc.), the softplus / sqrt transforms that depend on
 *    the model version, and the player-to-move flip. For version 3 (1 channel) KataGo sets scoreMeanSq = mean^2,
 *    and lead = mean for versions < 8.
 *  - ownership: raw pre-tanh values over the buffer; nneval.cpp applies tanh, the symmetry
 *    and the perspective flip.
 * KataGo also applies hc_net_reduce_activations at load time; a caller that wants KataGo's
 * rounding applies it to the net before creating the engine. */
#ifndef HC_ENGINE_H
#define HC_ENGINE_H

#include "harness/base/err.h"
#include "harness/model/heads.h"
#include "harness/model/model.h"

typedef struct hc_engine hc_engine;

/* Engine choices that change arithmetic (not results beyond rounding). */
/* What an emulation asks of one convolution (hc_engine_opts.conv_mode; refs/kernels.h
 * hc_kconv_set_modes says what they do). */
enum { HC_CONV_ACC_FP16 = 1, HC_CONV_TILES_FP16 = 2,
       HC_CONV_WINO_F2 = 4 /* 3x3 by Winograd F(2x2,3x3) instead (hc_kconv_use_winograd2) */ };

typedef struct hc_engine_opts {
    /* Reduced-precision emulation (NULL: none, the reference's arithmetic): called once per
     * convolution by hc_engine_new_opts, returns HC_CONV_* flags for it. */
    int (*conv_mode)(void *user, const hc_conv *conv);
    void *conv_mode_user;
    int winograd; /* 3x3 convolutions by Winograd F(4x4,3x3), as KataGo's Eigen backend does
                     (faster); 0: im2col + sgemm (direct summation) */
    /* Reduced-precision emulation inside layers (NULL: none): called during each forward pass
     * with the name of a layer, returns HC_LM_* bits for it (thread-safe, cheap, the same
     * answer every time). Asked for: the layer that reads pooled values (a gpool block's and
     * the policy head's gpool_to_bias_mul, the value head's v2_mul: rounds the pooled values,
     * the pass layers' included; also the format of the pooling sums and scalings behind
     * them, HC_LM_POOLSUM), an attention block's out_proj (scores, probabilities and the
     * attention GEMMs), every matmul layer (its accumulation), and every RMSNorm by its own
     * name (a transformer block's pre_ln, the trunk tip's RMSNorm: HC_LM_NORMSUM, the format
     * of its reductions). */
    int (*layer_mode)(void *user, const char *layer);
    void *layer_mode_user;
    /* With layer_mode (NULL: not told): called on the row's worker thread when a reduction
     * emulated in a reduced format overflowed in batch row `row` (what: "pooling sum" or
     * "RMSNorm sum of squares"; layer as asked of layer_mode), which later layers may hide
     * (an RMSNorm's 1 / sqrt(inf) is 0, a ReLU's max(NaN, 0) is 0). */
    void (*sum_overflow)(void *user, const char *layer, const char *what, int row);
} hc_engine_opts;

/* hc_engine_opts.layer_mode bits: formats numbered as refs/kernels.h HC_KFMT_* */
enum {
    HC_LM_POOL_SHIFT = 0,   /* pooled values stored as this format */
    HC_LM_SCORES_SHIFT = 2, /* attention scores (scaled q.k) before the softmax */
    HC_LM_PROBS_SHIFT = 4,  /* attention probabilities after it */
    HC_LM_FMT_MASK = 3,
    HC_LM_ACC_FP16 = 1 << 6, /* the matmul (or the attention GEMMs) accumulates in fp16 */
    HC_LM_POOLSUM_SHIFT = 7, /* pooling sums, means and scalings computed in this format
                                (refs/kernels.h hc_pool_gpool_fmt, hc_pool_value_fmt) */
    HC_LM_NORMSUM_SHIFT = 9  /* RMSNorm reductions in this format (hc_rmsnorm_*_fmt) */
};

/* The defaults hc_engine_new uses. */
hc_engine_opts hc_engine_default_opts(void);

/* Prepares the net for an nx x ny buffer and batches up to max_batch rows, split over
 * `threads` threads (>= 1; persistent workers, the calling thread runs the first share).
 * Sets OpenBLAS (linked, no longer called by the engine) to one thread, process-wide.
 * Fails (HC_EBACKEND) on layers KataGo's Eigen backend does not run either: dilated
 * convolutions, even kernels, FFN blocks without SwiGLU, unknown activations. */
hc_engine *hc_engine_new(const hc_net *net, int max_batch, int nx, int ny, int threads,
                         hc_err *err);
/* The checks hc_engine_new makes of the net (the layers it can run), without preparing
 * anything: for a backend that runs the same graph elsewhere (the GPU). 0, or -1 and err. */
int hc_engine_check(const hc_net *net, hc_err *err);
/* The same with explicit options (opts NULL: defaults). */
hc_engine *hc_engine_new_opts(const hc_net *net, int max_batch, int nx, int ny, int threads,
                              const hc_engine_opts *opts, hc_err *err);

/* Evaluates `batch` rows (1..max_batch):
 *   spatial [batch][net->num_input_c][ny][nx], global [batch][net->num_input_global_c],
 *   meta [batch][net->num_input_meta_c] (required iff the net has a metadata encoder, else
 *   must be NULL).
 * out must have been allocated for the same nx, ny, channel counts and at least batch rows;
 * out->batch is set to batch. Returns 0, or -1 and err on bad arguments. */
/* Another engine for the same net, buffer and options as base, with its own batch size,
 * threads and scratch, that borrows base's prepared weights (Winograd-transformed
 * convolutions, RoPE tables: read-only once prepared), so that engines evaluating side by side
 * (unbatched lanes) cost their scratch only. opts (NULL: base's) gives only the callbacks'
 * user pointers (conv_mode_user, layer_mode_user: per-instance state such as overflow flags);
 * every arithmetic choice stays base's. base must outlive it; hooks are not shared. */
hc_engine *hc_engine_new_sharing(const hc_engine *base, int max_batch, int threads, const hc_engine_opts *opts,
                                 hc_err *err);

int hc_engine_eval(hc_engine *e, int batch, const float *spatial, const float *global,
                   const float *meta, hc_raw_heads *out, hc_err *err);

void hc_engine_free(hc_engine *e);

/* Layer hooks, for taps and for emulating reduced-precision storage: after each layer the
 * engine passes its output tensor, which the hook may read or modify in place (later layers
 * see the modified values). Hooks run on the worker threads, concurrently for disjoint rows:
 * a hook must be thread-safe. Layers are named as in the net (hc_net names):
 *  - every conv (after a residual conv: the trunk after the add), batch norm + activation,
 *    and every block (the trunk after the block), the trunk tip norm;
 *  - transformer blocks: pre_ln (normalized input), q/k projections (after RoPE), v
 *    projection, out_proj (before the masked residual add), linear1 (after SwiGLU), linear2;
 *  - vectors (HC_TAP_BC): initial_matmul (global input bias), metadata encoder mul1/mul2
 *    (after bias and activation) and mul3, gpool_to_bias_mul, pass layers, v2 (after bias
 *    and activation), v3 (value logits), sv3 (score values).
 * Spatial taps cover the whole buffer, padding included (values there are what the engine
 * computed, usually meaningless). */

/* Installs (or with fn NULL removes) the hook; not while an eval runs. */
void hc_engine_set_hook(hc_engine *e, hc_engine_hook_fn fn, void *user);
/* With on, the hook also sees tensors inside layers, named BLOCK.SUFFIX (docs/TAPS.md: an
 * attention block's output before its projection, attn.out_preproj; an FFN's ffn.up and ffn.gate,
 * its linear1 and linear_gate outputs before the SwiGLU). Off by default: every other tap is a
 * model layer, whose name pointer is the model's (profiles and bisect-precision rely on it). */
void hc_engine_set_inner_taps(hc_engine *e, int on);

/* A convolution prepared as the engine prepares it (hc_kconv_free frees it): Winograd weights
 * when winograd (hc_engine_opts.winograd), then what conv_mode's HC_CONV_* flags `mode` ask
 * (F(2x2,3x3) weights, hc_kconv_set_modes). Another device that must follow the engine bit for
 * bit (cuda:emulate) prepares its convolutions with it, so both read the same weights and modes.
 * 0, or -1 with err (nothing left allocated). */
struct hc_kconv;
int hc_engine_conv_prepare(struct hc_kconv *k, const hc_conv *c, int winograd, int mode, hc_err *err);
/* hc_engine_conv_prepare of ks[i] for cs[i] at modes[i] (modes NULL: 0), i < n, the
 * convolutions side by side on `threads` threads (0: the host's processors for a large net, one
 * for a small one; a convolution's prepared weights are its own, the same bits as one by one).
 * On failure every ks[i] is freed and err is the first failing convolution's. */
int hc_engine_convs_prepare(struct hc_kconv *const *ks, const hc_conv *const *cs, const int *modes, int n,
                            int winograd, int threads, hc_err *err);
/* Calls fn on every convolution of the net in the engine's order (the trunk's, nested blocks'
 * included, then the heads'); returns fn's first nonzero, else 0. */
int hc_engine_each_conv(const hc_net *net, int (*fn)(const hc_conv *c, void *user), void *user);

/* Engine facts, for callers that size buffers. */
const hc_net *hc_engine_net(const hc_engine *e);
int hc_engine_max_batch(const hc_engine *e);

#endif
