/* The cuda backend's forward passes (backends/cuda_impl.h: forward): refs/engine.c's graph on an
 * NVIDIA GPU, layer by layer, in the engine's layouts (spatial CBP [c][b][hw], vectors BC [b][c]).
 *
 * fp32 and fp16: GEMMs through cuBLAS (backends/cuda_blas.h; convolutions as im2col + one GEMM
 * over the whole batch, per-position matmuls, attention as strided-batched GEMMs per head), the
 * rest backends/cuda_kernels.h's kernels. fp32: fp32 operands, CUBLAS_COMPUTE_32F with the default
 * math mode (no TF32). fp16: weights of convolutions and matmuls are stored as half; GEMM operands
 * are half (real half buffers: the im2col columns and converted activations), accumulation fp32
 * (CUBLAS_COMPUTE_32F, tensor cores). Activations between layers live in float buffers but are
 * rounded to half (round to nearest even) wherever a layer stores them, which is numerically the
 * same as half storage with fp32 arithmetic inside each kernel. Batch-norm scales, biases, norms'
 * weights and RoPE tables stay fp32; the attention scores and softmax are fp32, the
 * probabilities are rounded to half for the second GEMM.
 *
 * ref32 (I->ref): the fp32 reference itself, bit for bit ref32's outputs and taps: every layer
 * is backends/cuda_ref.h's kernels (refs/' scalar orders: one FMA chain per GEMM output, Winograd
 * F(4x4,3x3) and F(2x2,5x5) with refs/winograd.c's transforms and weights, hcmath's functions),
 * no cuBLAS. The planted fault faults.split_k (tests only) makes every GEMM sum k in two halves.
 *
 * emulate:PROFILE (I->emu): emulate:PROFILE's bits on the GPU (docs/EMULATION.md): ref32's
 * kernels over the CPU emulation's rounded net (backends/emulate.h opens it for its net, layer
 * table and error messages), the input rows rounded as it rounds them, each layer's output
 * rounded in place where the CPU engine's hook sees it (tap(); f->noemu marks the taps this file
 * takes earlier than the engine does: before a bias, a SwiGLU or RoPE), the pooled values,
 * attention scores and probabilities rounded per the reading layer, the pooling sums and RMSNorm
 * reductions in the reading layer's poolSum / normSum format by the CPU's own per-output
 * arithmetic (refs/sums_core.h), overflow (a stored value, or a sum: d_sum_over) flagged per row
 * and reported as the CPU does. fp16 accumulation (accum: fp16) runs the GEMMs the CPU runs in
 * acc16 (each convolution conv_mode marks, each matmul and attention layer_mode marks) by
 * cuda_ref.cu's acc16 form, the CPU's per-output arithmetic (refs/acc16_core.inc). Winograd
 * convolutions are prepared as the CPU engine prepares them (hc_emulate_conv_mode,
 * hc_engine_conv_prepare): fp16 tiles (winogradTiles) and F(2x2,3x3) (winograd: f2x2) by
 * refs/wino_tile.inc's arithmetic. Every profile is followed; nothing is approximated. Planted
 * faults (hc_cuda_faults, tests only): noround leaves a layer's rounding out, acc16_chunk8 makes
 * every acc16 chunk 8 products instead of 16, sums rounds the emulated sums after every second
 * add only, tiles leaves the fp16 Winograd tile products unrounded.
 *
 * Device memory: weights uploaded once, in the dry run at open (plain cudaMalloc); one arena for
 * all activations, sized by that dry run at max_batch (as the engine does). Errors: every CUDA and
 * cuBLAS call is checked; the first failure is kept with the call and the layer named, the rest
 * of the pass is skipped. I->sync_layers (HC_CUDA_SYNC=1) synchronizes after every layer to name
 * a kernel fault's layer exactly. */
#include "backends/cuda_impl.h"
#include "backends/cuda_kernels.h"
#include "backends/cuda_ref.h"

extern "C" {
#include "harness/model/layers.h"
}

#include <cuda_fp16.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace hccuda {

int fail_cuda(inst *I, cudaError_t e, const char *call, const char *layer)
{
    if (!I->bad) {
        I->bad = 1;
        hc_err_set(I->err, HC_EBACKEND, "cuda: %s: %s failed: %s (%s)", layer ? layer : "?", call,
                   cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return -1;
}

namespace {

/* after a kernel launch */
void launched(fwd *f, const char *kernel, const char *layer)
{
    inst *I = f->I;
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        fail_cuda(I, e, kernel, layer);
        return;
    }
    if (I->sync_layers) {
        e = cudaStreamSynchronize(cudaStreamPerThread);
        if (e != cudaSuccess)
            fail_cuda(I, e, kernel, layer);
    }
}

#define LIVE(f) (!(f)->dry && !(f)->I->bad)
/* fn (a launcher of cuda_kernels.h or cuda_ref.h) on a live pass, then its launch checked */
#define LAUNCH(f, layer, fn, ...)                                                                \
    do {                                                                                         \
        if (LIVE(f)) {                                                                           \
            fn(__VA_ARGS__);                                                                     \
            launched((f), #fn, (layer));                                                         \
        }                                                                                        \
    } while (0)

float *ar_get(fwd *f, size_t n)
{
    n = (n + 63) & ~(size_t)63;
    float *p = f->dry ? NULL : f->I->arena + f->top;
    f->top += n;
    if (f->top > f->peak)
        f->peak = f->top;
    return p;
}

/* A layer's output handed back as a tap (only when the eval asked for taps): copied from the
 * device, [C][B][hw] (HC_TAP_CBP) or [B][C] (HC_TAP_BC) as the engine taps them, into the
 * tapset's [row][C][hw]. fmt: the element format the values are stored in (fp16 mode rounds
 * what it stores to half). A name seen twice in one pass keeps its last tensor, as ref32's. */
void tap(fwd *f, const char *name, int layout, int C, const float *dev, int fmt)
{
    inst *I = f->I;
    if (I->emu && LIVE(f) && name && dev) {
        /* backends/emulate.c's hook: the layer's output rounded to its storage format in place
         * (later layers read it), overflow flagged per row; taps carry the storage format */
        int li = hc_emulate_layer_find(I->emu, name), st = hc_emulate_layer_fmt(I->emu, li);
        if (li >= 0 && !f->noemu && strcmp(name, I->faults.noround) != 0) {
            size_t n = (size_t)C * f->B * (layout == HC_TAP_CBP ? (size_t)f->hw : 1);
            hcref::emu_store(n, (float *)dev, st, layout == HC_TAP_CBP, C, f->B, f->hw, f->mask, I->d_over, li);
            launched(f, "hcref::emu_store", name);
        }
        fmt = st == HC_FMT_FP16 ? HC_TAPFMT_F16 : st == HC_FMT_BF16 ? HC_TAPFMT_BF16 : HC_TAPFMT_F32;
    }
    if (!LIVE(f) || !I->taps || !name || !dev)
        return;
    size_t hw = layout == HC_TAP_CBP ? (size_t)f->hw : 1, B = (size_t)f->B, n = (size_t)C * B * hw;
    if (n > I->tap_host_n) {
        float *p = (float *)realloc(I->tap_host, n * sizeof(float));
        if (!p) {
            I->bad = 1;
            hc_err_set(I->err, HC_ENOMEM, "cuda: %s: out of memory for its tap", name);
            return;
        }
        I->tap_host = p;
        I->tap_host_n = n;
    }
    CK(I, cudaMemcpy(I->tap_host, dev, n * sizeof(float), cudaMemcpyDeviceToHost), name);
    if (I->bad)
        return;
    hc_tapset_entry *e = hc_tapset_entry_get(I->taps, name, layout, fmt, C, (int)hw, I->err);
    if (!e) {
        I->bad = 1;
        return;
    }
    e->fmt = fmt;
    for (size_t r = 0; r < B; r++) {
        float *dst = e->data + r * C * hw;
        if (layout == HC_TAP_CBP)
            for (size_t c = 0; c < (size_t)C; c++)
                memcpy(dst + c * hw, I->tap_host + (c * B + r) * hw, hw * sizeof(float));
        else
            memcpy(dst, I->tap_host + r * C, C * sizeof(float));
    }
    e->rows = (int)B;
}

/* A tensor inside a layer, named BLOCK.SUFFIX as ref32 names its inner taps (docs/TAPS.md). */
void tap_inner(fwd *f, const char *block, const char *suffix, int C, const float *dev, int fmt)
{
    if (!f->I->taps)
        return;
    char name[320];
    snprintf(name, sizeof name, "%s.%s", block ? block : "?", suffix);
    tap(f, name, HC_TAP_CBP, C, dev, fmt);
}

/* The format of what fp16 mode stores: half, unless a knob kept it fp32. */
int stored_fmt(const fwd *f, int kept32)
{
    return f->I->fp16 && !kept32 ? HC_TAPFMT_F16 : HC_TAPFMT_F32;
}

/* The planted fault faults.plant: perturbs that layer's output (a stand-in kernel bug the taps must find). */
void planted(fwd *f, const char *name, float *dev, size_t n)
{
    if (f->I->faults.plant[0] && name && strcmp(name, f->I->faults.plant) == 0)
        LAUNCH(f, name, hck::plant, n, dev);
}

/* The device array of (host, form) in the weight table, or NULL. */
void *w_find(const inst *I, const void *host, int half)
{
    for (int i = 0; i < I->n_w; i++)
        if (I->w[i].host == host && I->w[i].half == half)
            return I->w[i].dev;
    return NULL;
}

/* A new device array of `bytes` for (host, form), entered in the weight table: only in the dry
 * run at open; NULL (error set) otherwise or on failure. */
void *w_new(fwd *f, const void *host, int half, size_t bytes, const char *layer)
{
    inst *I = f->I;
    /* a lane borrows its base's table, complete after the base's dry run: never added to */
    if (!f->dry || I->borrowed) {
        if (!I->bad) {
            I->bad = 1;
            hc_err_set(I->err, HC_EINTERNAL, "cuda: %s: weights not uploaded", layer);
        }
        return NULL;
    }
    if (I->bad)
        return NULL;
    if (I->n_w == I->cap_w) {
        int cap = I->cap_w ? 2 * I->cap_w : 64;
        wentry *g = (wentry *)realloc(I->w, (size_t)cap * sizeof *g);
        if (!g) {
            I->bad = 1;
            hc_err_set(I->err, HC_ENOMEM, "cuda: weight table");
            return NULL;
        }
        I->w = g;
        I->cap_w = cap;
    }
    void *d = NULL;
    cudaError_t e = cudaMalloc(&d, bytes ? bytes : 4);
    if (e != cudaSuccess) {
        fail_cuda(I, e, "cudaMalloc (weights)", layer);
        return NULL;
    }
    I->w[I->n_w].host = host;
    I->w[I->n_w].half = half;
    I->w[I->n_w].dev = d;
    I->n_w++;
    return d;
}

/* Device copy of a host array: uploaded in the dry run at open, looked up afterwards. */
void *dev_array(fwd *f, const float *host, size_t n, int half, const char *layer)
{
    inst *I = f->I;
    if (!host)
        return NULL;
    void *d = w_find(I, host, half);
    if (d)
        return d;
    size_t bytes = n * (half == 1 ? sizeof(__half) : sizeof(float));
    d = w_new(f, host, half, bytes, layer);
    if (!d)
        return NULL;
    if (half) {
        /* converted on the device (the same round-to-nearest-even as the host's
         * __float2half_rn, at a fraction of a large net's open) from a float copy */
        float *tmp = NULL;
        CK(I, cudaMalloc(&tmp, n * sizeof(float) + 4), layer);
        if (!I->bad)
            CK(I, cudaMemcpy(tmp, host, n * sizeof(float), cudaMemcpyHostToDevice), layer);
        if (!I->bad && half == 1) {
            hck::to_half(n, tmp, (__half *)d);
            CK(I, cudaGetLastError(), layer);
        }
        if (!I->bad && half == 2) { /* floats holding half-rounded values */
            hck::round16(n, tmp);
            CK(I, cudaGetLastError(), layer);
            if (!I->bad)
                CK(I, cudaMemcpy(d, tmp, bytes, cudaMemcpyDeviceToDevice), layer);
        }
        cudaFree(tmp);
    } else {
        CK(I, cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), layer);
    }
    return d;
}

/* GEMM operand weights (half in fp16 mode; with f32, an fp32 GEMM's half-rounded floats)
 * and fp32 parameter vectors */
const void *wgemm(fwd *f, const float *h, size_t n, const char *layer, int f32 = 0)
{
    return dev_array(f, h, n, f->I->fp16 ? (f32 ? 2 : 1) : 0, layer);
}
const float *wvec(fwd *f, const float *h, size_t n, const char *layer)
{
    return (const float *)dev_array(f, h, n, 0, layer);
}

/* Row-major C[M][N] (ldc) = op(A) op(B) (+ C when beta 1), op(A) M x K, op(B) K x N; A and B
 * are half in fp16 mode, C float; strided-batched when batch > 1. */
void gemm(fwd *f, const char *layer, int ta, int tb, int M, int N, int K, const void *A, int lda,
          long long sA, const void *Bm, int ldb, long long sB, float *C, int ldc, long long sC,
          int batch, float beta, int f32 = 0)
{
    if (!LIVE(f))
        return;
    inst *I = f->I;
    float alpha = 1.0f;
    cudaDataType dt = I->fp16 && !f32 ? CUDA_R_16F : CUDA_R_32F;
    cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t st;
    const char *call;
    if (batch == 1) {
        call = "cublasGemmEx";
        st = I->blas.gemm_ex(I->blas.handle, ob, oa, N, M, K, &alpha, Bm, dt, ldb, A, dt, lda, &beta, C,
                          CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    } else {
        call = "cublasGemmStridedBatchedEx";
        st = I->blas.gemm_sb_ex(I->blas.handle, ob, oa, N, M, K, &alpha, Bm, dt, ldb, sB, A, dt,
                                        lda, sA, &beta, C, CUDA_R_32F, ldc, sC, batch,
                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
    if (st != CUBLAS_STATUS_SUCCESS && !I->bad) {
        I->bad = 1;
        hc_err_set(I->err, HC_EBACKEND, "cuda: %s: %s (%dx%dx%d, batch %d) failed: %s", layer,
                   call, M, N, K, batch, I->blas.status_string(st));
    }
    if (I->sync_layers && LIVE(f))
        CK(I, cudaStreamSynchronize(cudaStreamPerThread), layer);
}

void round16(fwd *f, float *x, size_t n, const char *layer)
{
    if (f->I->fp16)
        LAUNCH(f, layer, hck::round16, n, x);
}

/* A GEMM operand from a float activation: itself in fp32 mode, a half copy in fp16 mode
 * (from the arena; the caller resets the arena top). */
const void *operand(fwd *f, const float *x, size_t n, const char *layer)
{
    if (!f->I->fp16)
        return x;
    __half *h = (__half *)ar_get(f, (n + 1) / 2);
    LAUNCH(f, layer, hck::to_half, n, x, h);
    return h;
}

/* A 3x3 or 5x5 convolution's F(4x4,3x3) or F(2x2,5x5) weights [36][oc][ic] where its mode is
 * 0 (every convolution of ref32, and emulate's that the profile leaves in fp32): computed on the
 * device at open (hcref::wino_weights, the host's arithmetic) from the raw weights, so that a
 * large net's open neither transforms them on the host nor uploads 4x (3x3) their size. */
const float *wino_dev(fwd *f, const hc_conv *c)
{
    inst *I = f->I;
    const float *U = (const float *)w_find(I, c->w, W_WINO);
    if (U)
        return U;
    size_t per = (size_t)c->out_c * c->in_c, raw = per * c->ky * c->kx;
    float *d = (float *)w_new(f, c->w, W_WINO, 36 * per * sizeof(float), c->name);
    if (!d)
        return NULL;
    float *tmp = NULL;
    CK(I, cudaMalloc(&tmp, raw * sizeof(float) + 4), c->name);
    if (!I->bad)
        CK(I, cudaMemcpy(tmp, c->w, raw * sizeof(float), cudaMemcpyHostToDevice), c->name);
    if (!I->bad) {
        hcref::wino_weights(c->ky, c->out_c, c->in_c, tmp, d);
        CK(I, cudaGetLastError(), c->name);
    }
    cudaFree(tmp);
    return I->bad ? NULL : d;
}

/* emulate mode: the Winograd weights of a 3x3 or 5x5 convolution whose mode is not 0, prepared
 * on the host at open (dry run) by refs/winograd.c, as the CPU engine prepares them. NULL (error set) on failure. */
const hc_kconv *wino_prep(fwd *f, const hc_conv *c)
{
    inst *I = f->I;
    for (int i = 0; i < I->n_wp; i++)
        if (I->wp[i].src == c)
            return &I->wp[i].k;
    if (!f->dry || I->borrowed) {
        if (!I->bad) {
            I->bad = 1;
            hc_err_set(I->err, HC_EINTERNAL, "cuda: %s: Winograd weights not prepared", c->name);
        }
        return NULL;
    }
    wprep *g = (wprep *)realloc(I->wp, (size_t)(I->n_wp + 1) * sizeof *g);
    if (!g) {
        I->bad = 1;
        hc_err_set(I->err, HC_ENOMEM, "cuda: Winograd table");
        return NULL;
    }
    I->wp = g;
    wprep *p = &I->wp[I->n_wp];
    memset(p, 0, sizeof *p);
    p->src = c;
    /* emulate: what the CPU emulation's engine asks for this convolution (fp16 tiles,
     * F(2x2,3x3)), prepared by the engine's own function */
    int mode = I->emu ? hc_emulate_conv_mode(I->emu, c) : 0;
    if (hc_engine_conv_prepare(&p->k, c, 1, mode, I->err)) {
        I->bad = 1;
        return NULL;
    }
    I->n_wp++;
    return &p->k;
}

/* emulate mode: the fp16 accumulation the CPU engine gives convolution c (conv_mode's
 * HC_CONV_ACC_FP16: hc_sgemm_acc16, fmaf chunks) and matmul or attention `layer` (layer_mode's
 * HC_LM_ACC_FP16: hc_gemm_acc16_strided, product-then-add chunks); form 0 otherwise. */
hcref::acc16 conv_acc16(const fwd *f, const hc_conv *c)
{
    const inst *I = f->I;
    int on = I->emu && (hc_emulate_conv_mode(I->emu, c) & HC_CONV_ACC_FP16);
    return hcref::acc16{on ? (int)HC_ACC16_FUSED : 0, I->acc16_chunk};
}

hcref::acc16 layer_acc16(const fwd *f, const char *layer)
{
    const inst *I = f->I;
    int on = I->emu && (hc_emulate_layer_mode(I->emu, layer) & HC_LM_ACC_FP16);
    return hcref::acc16{on ? (int)HC_ACC16_MULADD : 0, I->acc16_chunk};
}

/* ref32 mode: refs/conv.c's convolution (1x1: one GEMM; 3x3, 5x5: Winograd; else im2col + GEMM). */
void conv_ref(fwd *f, const hc_conv *c, const float *in, float *out, int accumulate)
{
    inst *I = f->I;
    int K = c->in_c * c->ky * c->kx;
    hcref::acc16 acc = conv_acc16(f, c); /* the CPU adds an acc16 result to out in fp32 too */
    if (c->ky == 1 && c->kx == 1) {
        const float *w = wvec(f, c->w, (size_t)c->out_c * K, c->name);
        LAUNCH(f, c->name, hcref::gemm, c->out_c, (int)f->S, K, w, K, 1, 0, in, (long long)f->S, 0, out,
               (long long)f->S, 0, 1, accumulate, I->faults.split_k, acc);
        return;
    }
    if ((c->ky == 3 && c->kx == 3) || (c->ky == 5 && c->kx == 5)) {
        int kind = c->ky == 5 ? hcref::WINO_F2_5 : hcref::WINO_F4, tiles16 = 0;
        const float *U;
        if (!I->emu || hc_emulate_conv_mode(I->emu, c) == 0) {
            U = wino_dev(f, c);
        } else {
            const hc_kconv *k = wino_prep(f, c);
            if (!k)
                return;
            /* the engine's kernel choice (refs/conv.c kconv_run): F(2x2,3x3) weights when the
             * emulation asked for them, else F(4x4,3x3) or, 5x5, F(2x2,5x5) */
            kind = k->wino2 ? hcref::WINO_F2 : kind;
            U = k->wino2 ? wvec(f, k->wino2, (size_t)16 * c->out_c * c->in_c, c->name)
                         : wvec(f, k->wino, (size_t)36 * c->out_c * c->in_c, c->name);
            tiles16 = k->tiles_fp16;
        }
        if (!U)
            return;
        float *ws = ar_get(f, hcref::wino_ws(kind, c->in_c, c->out_c, f->B, f->nx, f->ny));
        LAUNCH(f, c->name, hcref::wino_conv, kind, c->in_c, c->out_c, f->B, f->nx, f->ny, in, U, out, accumulate, NULL,
               ws, I->faults.split_k, acc, tiles16, I->faults.tiles);
        return;
    }
    const float *w = wvec(f, c->w, (size_t)c->out_c * K, c->name);
    float *ws = ar_get(f, hcref::direct_ws(c->in_c, c->ky, c->kx, f->B, f->nx, f->ny));
    LAUNCH(f, c->name, hcref::direct_conv, c->in_c, c->out_c, c->ky, c->kx, f->B, f->nx, f->ny, in, w, out, accumulate,
           ws, I->faults.split_k, acc);
}

void conv(fwd *f, const hc_conv *c, const float *in, float *out, int accumulate)
{
    size_t top = f->top;
    if (f->I->ref) {
        conv_ref(f, c, in, out, accumulate);
        planted(f, c->name, out, (size_t)c->out_c * f->S);
        tap(f, c->name, HC_TAP_CBP, c->out_c, out, HC_TAPFMT_F32);
        f->top = top;
        return;
    }
    int K = c->in_c * c->ky * c->kx;
    const void *w = wgemm(f, c->w, (size_t)c->out_c * K, c->name);
    const void *col;
    if (c->ky == 1 && c->kx == 1) {
        col = operand(f, in, (size_t)K * f->S, c->name);
    } else {
        size_t n = (size_t)K * f->S;
        if (f->I->fp16) {
            __half *h = (__half *)ar_get(f, (n + 1) / 2);
            LAUNCH(f, c->name, hck::im2col, c->in_c, f->B, f->nx, f->ny, c->ky, c->kx, in, h);
            col = h;
        } else {
            float *h = ar_get(f, n);
            LAUNCH(f, c->name, hck::im2col, c->in_c, f->B, f->nx, f->ny, c->ky, c->kx, in, h);
            col = h;
        }
    }
    gemm(f, c->name, 0, 0, c->out_c, (int)f->S, K, w, K, 0, col, (int)f->S, 0, out, (int)f->S, 0,
         1, accumulate ? 1.0f : 0.0f);
    round16(f, out, (size_t)c->out_c * f->S, c->name);
    planted(f, c->name, out, (size_t)c->out_c * f->S);
    tap(f, c->name, HC_TAP_CBP, c->out_c, out, stored_fmt(f, 0));
    f->top = top;
}

void bn(fwd *f, const hc_bn *b, const hc_activation *a, const float *in, float *out)
{
    const float *sc = wvec(f, b->merged_scale, b->c, b->name);
    const float *bi = wvec(f, b->merged_bias, b->c, b->name);
    size_t n = (size_t)b->c * f->S;
    if (f->I->ref) {
        LAUNCH(f, b->name, hcref::bn_act, b->c, f->B, f->hw, in, out, sc, bi, (int)a->kind, f->mask, NULL);
    } else
        LAUNCH(f, b->name, hck::bn_act, b->c, f->S, in, out, sc, bi, (int)a->kind, f->mask, f->I->fp16);
    planted(f, b->name, out, n);
    tap(f, b->name, HC_TAP_CBP, b->c, out, stored_fmt(f, 0));
}

/* out[b][o] = in[b][:] * w (BC); pooled: the input is pooled values (pool32 knob) */
void matmul_bc(fwd *f, const hc_matmul *m, const float *in, float *out, int pooled = 0)
{
    size_t top = f->top;
    int f32 = pooled && f->I->pool32;
    const void *w = wgemm(f, m->w, (size_t)m->in_c * m->out_c, m->name, f32);
    if (f->I->ref) {
        /* refs/norm_pool.c hc_matmul_bc: out[b][o] = chain over i of in[b][i] w[i][o] */
        LAUNCH(f, m->name, hcref::gemm, f->B, m->out_c, m->in_c, in, m->in_c, 1, 0, (const float *)w, m->out_c, 0, out,
               m->out_c, 0, 1, 0, f->I->faults.split_k, layer_acc16(f, m->name));
    } else {
        const void *a = f32 ? in : operand(f, in, (size_t)f->B * m->in_c, m->name);
        gemm(f, m->name, 0, 0, f->B, m->out_c, m->in_c, a, m->in_c, 0, w, m->out_c, 0, out, m->out_c,
             0, 1, 0.0f, f32);
    }
    round16(f, out, (size_t)f->B * m->out_c, m->name);
    planted(f, m->name, out, (size_t)f->B * m->out_c);
    tap(f, m->name, HC_TAP_BC, m->out_c, out, stored_fmt(f, 0));
    f->top = top;
}

void bias_act_bc(fwd *f, const char *layer, int C, float *x, const float *bias, int act)
{
    const float *b = bias ? wvec(f, bias, C, layer) : NULL;
    if (f->I->ref) {
        LAUNCH(f, layer, hcref::bias_act_bc, f->B, C, x, b, act);
    } else
        LAUNCH(f, layer, hck::bias_act_bc, f->B, C, x, b, act, f->I->fp16);
    /* ref32 taps a head's matmul after its bias and activation: this replaces matmul_bc's tap */
    tap(f, layer, HC_TAP_BC, C, x, stored_fmt(f, 0));
}

void add_bias_bc(fwd *f, const char *layer, int C, float *x, const float *bias)
{
    if (f->I->ref) {
        LAUNCH(f, layer, hcref::add_bias_bc, C, f->B, f->hw, x, bias);
        return;
    }
    LAUNCH(f, layer, hck::add_bias_bc, C, f->B, f->hw, x, bias, f->I->fp16 && !f->I->mid32);
}

/* The emulated reductions' overflow flags for a layer's sum code (hc_emulate_sum_code; none for
 * -1, which would read as "no overflow"). */
int *sum_flags(inst *I, int code)
{
    return code >= 0 ? I->d_sum_over : NULL;
}

/* reader: the layer reading the pooled values (the emulation rounds them to its pool format) */
void gpool(fwd *f, const char *layer, int C, const float *in, float *out, int value_head, const char *reader)
{
    inst *I = f->I;
    if (I->ref) {
        if (!LIVE(f))
            return;
        /* emulated: the pooling sums in the reader's poolSum format (refs/engine.c pool_gpool) */
        int sf = I->emu ? (hc_emulate_layer_mode(I->emu, reader) >> HC_LM_POOLSUM_SHIFT) & HC_LM_FMT_MASK : 0;
        if (sf) {
            int code = hc_emulate_sum_code(I->emu, reader, HC_EMULATE_SUM_POOL);
            hcref::pool_fmt(sf, C, f->B, f->hw, in, f->mask, f->msum, out, value_head, sum_flags(I, code), code,
                            I->faults.sums);
            launched(f, "hcref::pool_fmt", layer);
        } else {
            hcref::pool(C, f->B, f->hw, in, f->mask, f->msum, out, value_head);
            launched(f, "hcref::pool", layer);
        }
        if (I->emu) {
            int pf = (hc_emulate_layer_mode(I->emu, reader) >> HC_LM_POOL_SHIFT) & HC_LM_FMT_MASK;
            hcref::round_fmt((size_t)f->B * 3 * C, out, pf);
            launched(f, "hcref::round_fmt", reader);
        }
        return;
    }
    LAUNCH(f, layer, hck::gpool, C, f->B, f->hw, in, f->mask, f->msum, out, value_head, f->I->fp16 && !f->I->pool32);
}

/* out[o][s] = sum_i w[i][o] in[i][s] over all S columns; f32: an fp32 GEMM (knobs);
 * keep32: the output is not rounded (knobs); mode_of: the layer whose emulation mode the GEMM
 * takes (NULL: m's own; the CPU engine asks linear1's for an FFN's gate) */
void matmul_cs(fwd *f, const hc_matmul *m, const float *in, float *out, int f32 = 0,
               int keep32 = 0, const char *mode_of = NULL)
{
    size_t top = f->top;
    const void *w = wgemm(f, m->w, (size_t)m->in_c * m->out_c, m->name, f32);
    if (f->I->ref) {
        /* hc_matmul_cs: out[o][s] = chain over i of w[i][o] in[i][s] */
        LAUNCH(f, m->name, hcref::gemm, m->out_c, (int)f->S, m->in_c, (const float *)w, 1, m->out_c, 0, in,
               (long long)f->S, 0, out, (long long)f->S, 0, 1, 0, f->I->faults.split_k,
               layer_acc16(f, mode_of ? mode_of : m->name));
    } else {
        const void *b = f32 ? in : operand(f, in, (size_t)m->in_c * f->S, m->name);
        gemm(f, m->name, 1, 0, m->out_c, (int)f->S, m->in_c, w, m->out_c, 0, b, (int)f->S, 0, out,
             (int)f->S, 0, 1, 0.0f, f32);
    }
    if (!keep32)
        round16(f, out, (size_t)m->out_c * f->S, m->name);
    planted(f, m->name, out, (size_t)m->out_c * f->S);
    tap(f, m->name, HC_TAP_CBP, m->out_c, out, stored_fmt(f, keep32));
    f->top = top;
}

const rope_dev *find_rope(inst *I, const hc_attn_block *a)
{
    for (int i = 0; i < I->n_ropes; i++)
        if (I->ropes[i].blk == a)
            return &I->ropes[i];
    return NULL;
}

void run_stack(fwd *f, const hc_block *blocks, int n, int c, float *x, float *s);

/* A transformer pre-norm, every mode, tapped; emulated, its reductions in the norm layer's
 * normSum format, as refs/engine.c rmsnorm_pos asks. */
void prenorm(fwd *f, const hc_tf_rmsnorm *n, int c, const float *x, float *s)
{
    inst *I = f->I;
    const float *lw = wvec(f, n->weight, c, n->name);
    if (!I->ref) {
        LAUNCH(f, n->name, hck::rmsnorm_pos, c, f->S, x, s, lw, n->eps, f->mask, I->fp16);
    } else if (LIVE(f)) {
        int nf = I->emu ? (hc_emulate_layer_mode(I->emu, n->name) >> HC_LM_NORMSUM_SHIFT) & HC_LM_FMT_MASK : 0;
        if (nf) {
            int code = hc_emulate_sum_code(I->emu, n->name, HC_EMULATE_SUM_NORM);
            hcref::rmsnorm_pos_fmt(nf, c, f->B, f->hw, x, s, lw, n->eps, f->mask, sum_flags(I, code), code,
                                   I->faults.sums);
            launched(f, "hcref::rmsnorm_pos_fmt", n->name);
        } else {
            hcref::rmsnorm_pos(c, f->S, x, s, lw, n->eps, f->mask);
            launched(f, "hcref::rmsnorm_pos", n->name);
        }
    }
    planted(f, n->name, s, (size_t)c * f->S);
    tap(f, n->name, HC_TAP_CBP, c, s, stored_fmt(f, 0));
}

/* A block's masked residual x += s, every mode, tapped as the block's output. */
void residual(fwd *f, const char *block, int c, float *x, const float *s)
{
    if (f->I->ref)
        LAUNCH(f, block, hcref::residual, c, f->S, x, s, f->mask);
    else
        LAUNCH(f, block, hck::residual, c, f->S, x, s, f->mask, f->I->fp16);
    tap(f, block, HC_TAP_CBP, c, x, stored_fmt(f, 0));
}

/* An attention block's start, every mode: the pre-norm, q, k and v, RoPE on q and k, each
 * tapped as ref32 taps it (q and k after their rotation). */
void attention_qkv(fwd *f, const hc_block *bl, int c, float *x, float *s, float *q, float *k, float *v)
{
    const hc_attn_block *a = &bl->attn;
    inst *I = f->I;
    int nh = a->num_heads, nkv = a->num_kv_heads, qd = a->q_head_dim;
    prenorm(f, &a->pre_ln, c, x, s);
    f->noemu = a->use_rope; /* emulate: the CPU hooks q and k after their rotation */
    matmul_cs(f, &a->q_proj, s, q);
    matmul_cs(f, &a->k_proj, s, k);
    f->noemu = 0;
    matmul_cs(f, &a->v_proj, s, v);
    if (!a->use_rope)
        return;
    const rope_dev *rt = find_rope(I, a);
    if (LIVE(f) && !rt) {
        I->bad = 1;
        hc_err_set(I->err, HC_EINTERNAL, "cuda: %s: no RoPE table", bl->name);
    }
    if (I->ref) {
        LAUNCH(f, a->q_proj.name, hcref::rope, f->B, f->hw, nh, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, q);
        LAUNCH(f, a->k_proj.name, hcref::rope, f->B, f->hw, nkv, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, k);
    } else {
        LAUNCH(f, a->q_proj.name, hck::rope, f->B, f->hw, nh, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, q,
               I->fp16);
        LAUNCH(f, a->k_proj.name, hck::rope, f->B, f->hw, nkv, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, k,
               I->fp16);
    }
    tap(f, a->q_proj.name, HC_TAP_CBP, nh * qd, q, stored_fmt(f, 0));
    tap(f, a->k_proj.name, HC_TAP_CBP, nkv * qd, k, stored_fmt(f, 0));
}

/* An attention block: ref32 mode the exact attention head by head (refs/attention.c's chains and
 * softmax, as refs/engine.c's hooked block runs it), fp32/fp16 cuBLAS's batched GEMMs per head
 * around a masked softmax; then the output projection and the masked residual. */
void attention(fwd *f, const hc_block *bl, int c, float *x, float *s)
{
    const hc_attn_block *a = &bl->attn;
    inst *I = f->I;
    int nh = a->num_heads, nkv = a->num_kv_heads, qd = a->q_head_dim, vd = a->v_head_dim;
    int B = f->B, hw = f->hw, group = nh / nkv;
    size_t S = f->S;
    float *q = ar_get(f, (size_t)nh * qd * S);
    float *k = ar_get(f, (size_t)nkv * qd * S);
    float *v = ar_get(f, (size_t)nkv * vd * S);
    float *att = ar_get(f, (size_t)nh * vd * S);
    /* ref: a one-row pass runs up to nh heads side by side (below), and the arena is sized by a
     * dry run at the largest batch, which may be under nh */
    float *sc = ar_get(f, (size_t)(I->ref && nh > B ? nh : B) * hw * hw);
    attention_qkv(f, bl, c, x, s, q, k, v);
    if (I->ref) {
        int am = I->emu ? hc_emulate_layer_mode(I->emu, a->out_proj.name) : 0;
        int sfmt = (am >> HC_LM_SCORES_SHIFT) & HC_LM_FMT_MASK, pfmt = (am >> HC_LM_PROBS_SHIFT) & HC_LM_FMT_MASK;
        hcref::acc16 acc = layer_acc16(f, a->out_proj.name); /* the engine's attention asks out_proj */
        /* One row (a one-row pass): its heads side by side, all in one launch when each has its
         * own kv head, else the heads of each kv head together (the GEMMs' batch strides are
         * one per operand). Rows: head by head, the batch side by side. */
        int step = B > 1 ? 1 : group > 1 ? group : nh;
        for (int h = 0; h < nh && LIVE(f); h += step) {
            int kvh = h / group;
            hcref::head_batch hb = {step, (long long)qd * (long long)S, group > 1 ? 0 : (long long)qd * (long long)S,
                                    group > 1 ? 0 : (long long)vd * (long long)S, (long long)vd * (long long)S};
            hcref::attention_head(B, hw, qd, vd, q + (size_t)h * qd * S, k + (size_t)kvh * qd * S,
                                  v + (size_t)kvh * vd * S, f->mask, att + (size_t)h * vd * S, sc, I->faults.split_k,
                                  sfmt, pfmt, acc, hb);
            launched(f, "hcref::attention_head", bl->name);
        }
        tap_inner(f, bl->name, "attn.out_preproj", nh * vd, att, HC_TAPFMT_F32);
        matmul_cs(f, &a->out_proj, att, s);
        residual(f, bl->name, c, x, s);
        return;
    }
    size_t top = f->top;
    const void *qo = operand(f, q, (size_t)nh * qd * S, a->q_proj.name);
    const void *ko = operand(f, k, (size_t)nkv * qd * S, a->k_proj.name);
    const void *vo = operand(f, v, (size_t)nkv * vd * S, a->v_proj.name);
    size_t esz = I->fp16 ? sizeof(__half) : sizeof(float);
    int p32 = I->fp16 && I->probs32;
    void *probs = I->fp16 && !p32 ? (void *)ar_get(f, ((size_t)B * hw * hw + 1) / 2) : (void *)sc;
    float scale = 1.0f / sqrtf((float)qd);
    for (int h = 0; h < nh && LIVE(f); h++) {
        int kvh = h / group;
        const char *qh = (const char *)qo + (size_t)h * qd * S * esz;
        const char *kh = (const char *)ko + (size_t)kvh * qd * S * esz;
        const char *vh = (const char *)vo + (size_t)kvh * vd * S * esz;
        float *oh = att + (size_t)h * vd * S;
        /* sc[b][q][k] = sum_d q[d][b,q] k[d][b,k] */
        gemm(f, bl->name, 1, 0, hw, hw, qd, qh, (int)S, hw, kh, (int)S, hw, sc, hw,
             (long long)hw * hw, B, 0.0f);
        if (I->fp16 && !p32)
            LAUNCH(f, bl->name, hck::softmax, B, hw, sc, (__half *)probs, f->mask, scale);
        else
            LAUNCH(f, bl->name, hck::softmax, B, hw, sc, (float *)probs, f->mask, scale);
        /* out[d][b,q] = sum_k v[d][b,k] p[b][q][k] */
        if (p32)
            vh = (const char *)(v + (size_t)kvh * vd * S);
        gemm(f, bl->name, 0, 1, vd, hw, hw, vh, (int)S, hw, probs, hw, (long long)hw * hw, oh,
             (int)S, hw, B, 0.0f, p32);
    }
    f->top = top;
    if (!p32)
        round16(f, att, (size_t)nh * vd * S, bl->name);
    tap_inner(f, bl->name, "attn.out_preproj", nh * vd, att, p32 ? HC_TAPFMT_F32 : stored_fmt(f, 0));
    matmul_cs(f, &a->out_proj, att, s, p32);
    residual(f, bl->name, c, x, s);
}

void ffn(fwd *f, const hc_block *bl, int c, float *x, float *s)
{
    const hc_ffn_block *ff = &bl->ffn;
    inst *I = f->I;
    size_t S = f->S;
    float *a1 = ar_get(f, (size_t)ff->ffn_c * S);
    float *gate = ar_get(f, (size_t)ff->ffn_c * S);
    prenorm(f, &ff->pre_ln, c, x, s);
    f->noemu = 1; /* the CPU hooks linear1 after the SwiGLU, the gate never */
    matmul_cs(f, &ff->linear1, s, a1, 0, I->mid32);
    matmul_cs(f, &ff->linear_gate, s, gate, 0, I->mid32, ff->linear1.name);
    f->noemu = 0;
    tap_inner(f, bl->name, "ffn.up", ff->ffn_c, a1, stored_fmt(f, I->mid32));
    tap_inner(f, bl->name, "ffn.gate", ff->ffn_c, gate, stored_fmt(f, I->mid32));
    size_t n = (size_t)ff->ffn_c * S;
    if (I->ref) {
        LAUNCH(f, ff->linear1.name, hcref::swiglu, n, a1, gate);
    } else
        LAUNCH(f, ff->linear1.name, hck::swiglu, n, a1, gate, I->fp16);
    /* ref32 taps linear1 after the SwiGLU */
    tap(f, ff->linear1.name, HC_TAP_CBP, ff->ffn_c, a1, stored_fmt(f, 0));
    matmul_cs(f, &ff->linear2, a1, s);
    residual(f, bl->name, c, x, s);
}

void run_block(fwd *f, const hc_block *bl, int c, float *x, float *s)
{
    size_t top = f->top;
    size_t S = f->S;
    int B = f->B;
    switch (bl->kind) {
    case HC_BLOCK_ORDINARY: {
        const hc_res_block *r = &bl->ordinary;
        float *mid = ar_get(f, (size_t)r->regular_conv.out_c * S);
        bn(f, &r->pre_bn, &r->pre_act, x, s);
        conv(f, &r->regular_conv, s, mid, 0);
        bn(f, &r->mid_bn, &r->mid_act, mid, mid);
        conv(f, &r->final_conv, mid, x, 1);
        break;
    }
    case HC_BLOCK_GPOOL: {
        const hc_gpool_block *g = &bl->gpool;
        int rc = g->regular_conv.out_c, gc = g->gpool_conv.out_c;
        float *reg = ar_get(f, (size_t)rc * S);
        float *gp = ar_get(f, (size_t)gc * S);
        float *pooled = ar_get(f, (size_t)B * 3 * gc);
        float *bias = ar_get(f, (size_t)B * rc);
        bn(f, &g->pre_bn, &g->pre_act, x, s);
        conv(f, &g->regular_conv, s, reg, 0);
        conv(f, &g->gpool_conv, s, gp, 0);
        bn(f, &g->gpool_bn, &g->gpool_act, gp, gp);
        gpool(f, g->gpool_bn.name, gc, gp, pooled, 0, g->gpool_to_bias_mul.name);
        matmul_bc(f, &g->gpool_to_bias_mul, pooled, bias, 1);
        add_bias_bc(f, g->gpool_to_bias_mul.name, rc, reg, bias);
        bn(f, &g->mid_bn, &g->mid_act, reg, reg);
        conv(f, &g->final_conv, reg, x, 1);
        break;
    }
    case HC_BLOCK_NESTED_BOTTLENECK: {
        const hc_nbt_block *nb = &bl->nbt;
        int mc = nb->pre_conv.out_c;
        float *mid = ar_get(f, (size_t)mc * S);
        float *mids = ar_get(f, (size_t)mc * S);
        bn(f, &nb->pre_bn, &nb->pre_act, x, s);
        conv(f, &nb->pre_conv, s, mid, 0);
        run_stack(f, nb->blocks, nb->num_blocks, mc, mid, mids);
        bn(f, &nb->post_bn, &nb->post_act, mid, mid);
        conv(f, &nb->post_conv, mid, x, 1);
        break;
    }
    case HC_BLOCK_ATTENTION:
        attention(f, bl, c, x, s);
        break;
    case HC_BLOCK_FFN:
        ffn(f, bl, c, x, s);
        break;
    }
    /* a block's output, as ref32 taps it (attention and FFN blocks tap theirs themselves) */
    if (bl->kind != HC_BLOCK_ATTENTION && bl->kind != HC_BLOCK_FFN)
        tap(f, bl->name, HC_TAP_CBP, c, x, stored_fmt(f, 0));
    f->top = top;
}

void run_stack(fwd *f, const hc_block *blocks, int n, int c, float *x, float *s)
{
    for (int i = 0; i < n; i++)
        run_block(f, &blocks[i], c, x, s);
}

/* One block of the walk the engine shares (hc_blocks_walk): an attention block's RoPE tables. */
int rope_visit(const hc_block *b, void *ctx)
{
    inst *I = (inst *)ctx;
    if (b->kind != HC_BLOCK_ATTENTION || !b->attn.use_rope)
        return 0;
    const hc_attn_block *a = &b->attn;
    rope_dev *g = (rope_dev *)realloc(I->ropes, (size_t)(I->n_ropes + 1) * sizeof *g);
    if (!g)
        return hc_err_set(I->err, HC_ENOMEM, "cuda: rope tables");
    I->ropes = g;
    rope_dev *r = &I->ropes[I->n_ropes++];
    memset(r, 0, sizeof *r);
    r->blk = a;
    int pairs = a->q_head_dim / 2;
    size_t nt = (size_t)(a->learnable_rope ? a->num_kv_heads : 1) * pairs * I->hw;
    float *ct = (float *)malloc(nt * sizeof(float) + 4), *st = (float *)malloc(nt * sizeof(float) + 4);
    if (!ct || !st) {
        free(ct);
        free(st);
        return hc_err_set(I->err, HC_ENOMEM, "cuda: rope tables");
    }
    hc_rope_tables(I->nx, I->ny, pairs, a->num_kv_heads,
                   a->learnable_rope ? a->rope_freqs : NULL, a->rope_theta, ct, st);
    CK(I, cudaMalloc(&r->cos_t, nt * sizeof(float) + 4), b->name);
    CK(I, cudaMalloc(&r->sin_t, nt * sizeof(float) + 4), b->name);
    if (!I->bad) {
        CK(I, cudaMemcpy(r->cos_t, ct, nt * sizeof(float), cudaMemcpyHostToDevice), b->name);
        CK(I, cudaMemcpy(r->sin_t, st, nt * sizeof(float), cudaMemcpyHostToDevice), b->name);
    }
    free(ct);
    free(st);
    if (I->bad)
        return -1;
    return 0;
}

} // namespace

/* The forward pass over B rows already on the device (I->d_spatial ...), outputs into the
 * device head buffers. dry: sizes the arena and uploads the weights. */
void forward(fwd *f)
{
    inst *I = f->I;
    const hc_net *net = I->net;
    const hc_trunk *t = &net->trunk;
    const hc_policy_head *ph = &net->policy;
    const hc_value_head *vh = &net->value;
    int B = f->B, hw = f->hw, tc = t->trunk_c, cin = net->num_input_c;
    size_t S = f->S;
    int r16 = I->fp16;
    f->top = 0;
    f->mask = ar_get(f, (size_t)B * hw);
    f->msum = ar_get(f, (size_t)B);
    float *in = ar_get(f, (size_t)cin * S);
    float *x = ar_get(f, (size_t)tc * S);
    float *s = ar_get(f, (size_t)tc * S);
    float *gbias = ar_get(f, (size_t)B * tc);
    float *gin = ar_get(f, (size_t)B * net->num_input_global_c);
    LAUNCH(f, "input", hck::input, B, cin, hw, I->d_spatial, in, f->mask, r16);
    LAUNCH(f, "input", hck::mask_sum, B, hw, f->mask, f->msum);
    if (LIVE(f)) {
        CK(I, cudaMemcpy(gin, I->d_global, (size_t)B * net->num_input_global_c * sizeof(float),
                         cudaMemcpyDeviceToDevice),
           "input");
        round16(f, gin, (size_t)B * net->num_input_global_c, "input");
    }

    conv(f, &t->initial_conv, in, x, 0);
    matmul_bc(f, &t->initial_matmul, gin, gbias);
    add_bias_bc(f, t->initial_matmul.name, tc, x, gbias);
    if (t->has_meta_encoder) {
        const hc_meta_encoder *m = &t->meta;
        size_t top = f->top;
        float *min = ar_get(f, (size_t)B * net->num_input_meta_c);
        float *h1 = ar_get(f, (size_t)B * m->mul1.out_c);
        float *h2 = ar_get(f, (size_t)B * m->mul2.out_c);
        if (LIVE(f)) {
            CK(I, cudaMemcpy(min, I->d_meta, (size_t)B * net->num_input_meta_c * sizeof(float),
                             cudaMemcpyDeviceToDevice),
               m->name);
            round16(f, min, (size_t)B * net->num_input_meta_c, m->name);
        }
        f->noemu = 1; /* the CPU hooks mul1 and mul2 after their bias and activation */
        matmul_bc(f, &m->mul1, min, h1);
        f->noemu = 0;
        bias_act_bc(f, m->mul1.name, m->mul1.out_c, h1, m->bias1.w, m->act1.kind);
        f->noemu = 1;
        matmul_bc(f, &m->mul2, h1, h2);
        f->noemu = 0;
        bias_act_bc(f, m->mul2.name, m->mul2.out_c, h2, m->bias2.w, m->act2.kind);
        matmul_bc(f, &m->mul3, h2, gbias);
        add_bias_bc(f, m->mul3.name, tc, x, gbias);
        f->top = top;
    }
    run_stack(f, t->blocks, t->num_blocks, tc, x, s);
    if (t->norm_kind == HC_TRUNK_NORM_RMSNORM) {
        const hc_rmsnorm *r = &t->tip_rmsnorm;
        const float *g = wvec(f, r->gamma, tc, r->name), *be = wvec(f, r->beta, tc, r->name);
        if (I->ref) {
            size_t top = f->top;
            float *ws = ar_get(f, S);
            /* emulated: its reductions in its own normSum format (refs/engine.c's trunk tip) */
            int nf = I->emu ? (hc_emulate_layer_mode(I->emu, r->name) >> HC_LM_NORMSUM_SHIFT) & HC_LM_FMT_MASK : 0;
            if (LIVE(f) && nf) {
                int code = hc_emulate_sum_code(I->emu, r->name, HC_EMULATE_SUM_NORM);
                hcref::rmsnorm_tip_fmt(nf, tc, B, hw, x, s, g, be, r->eps, r->spatial, (int)t->tip_act.kind, f->mask,
                                       ws, sum_flags(I, code), code, I->faults.sums);
                launched(f, "hcref::rmsnorm_tip_fmt", r->name);
            } else if (LIVE(f)) {
                hcref::rmsnorm_tip(tc, B, hw, x, s, g, be, r->eps, r->spatial, (int)t->tip_act.kind, f->mask, ws);
                launched(f, "hcref::rmsnorm_tip", r->name);
            }
            f->top = top;
        } else
            LAUNCH(f, r->name, hck::rmsnorm_tip, tc, B, hw, x, s, g, be, r->eps, r->spatial, (int)t->tip_act.kind, f->mask, r16);
        planted(f, r->name, s, (size_t)tc * S);
        tap(f, r->name, HC_TAP_CBP, tc, s, stored_fmt(f, 0));
    } else {
        bn(f, &t->tip_bn, &t->tip_act, x, s);
    }
    const float *trunk = s;

    /* policy head */
    {
        size_t top = f->top;
        int p1c = ph->p1_conv.out_c, g1c = ph->g1_conv.out_c, pc = ph->p2_conv.out_c;
        float *p1 = ar_get(f, (size_t)p1c * S);
        float *g1 = ar_get(f, (size_t)g1c * S);
        float *pooled = ar_get(f, (size_t)B * 3 * g1c);
        float *bias = ar_get(f, (size_t)B * p1c);
        float *pol = ar_get(f, (size_t)pc * S);
        float *passh = ar_get(f, (size_t)B * ph->gpool_to_pass_mul.out_c);
        conv(f, &ph->p1_conv, trunk, p1, 0);
        conv(f, &ph->g1_conv, trunk, g1, 0);
        bn(f, &ph->g1_bn, &ph->g1_act, g1, g1);
        gpool(f, ph->g1_bn.name, g1c, g1, pooled, 0, ph->gpool_to_bias_mul.name);
        matmul_bc(f, &ph->gpool_to_bias_mul, pooled, bias, 1);
        add_bias_bc(f, ph->gpool_to_bias_mul.name, p1c, p1, bias);
        bn(f, &ph->p1_bn, &ph->p1_act, p1, p1);
        conv(f, &ph->p2_conv, p1, pol, 0);
        LAUNCH(f, ph->p2_conv.name, hck::cbp_to_bcp, pc, B, hw, pol, I->d_policy);
        if (ph->has_pass_mlp) {
            int hc = ph->gpool_to_pass_mul.out_c;
            f->noemu = 1; /* hooked after its bias and activation */
            matmul_bc(f, &ph->gpool_to_pass_mul, pooled, passh, 1);
            f->noemu = 0;
            bias_act_bc(f, ph->gpool_to_pass_mul.name, hc, passh, ph->gpool_to_pass_bias.w,
                        ph->pass_act.kind);
            matmul_bc(f, &ph->gpool_to_pass_mul2, passh, I->d_pass);
        } else {
            matmul_bc(f, &ph->gpool_to_pass_mul, pooled, I->d_pass, 1);
        }
        f->top = top;
    }

    /* value head */
    {
        int v1c = vh->v1_conv.out_c, v2c = vh->v2_mul.out_c, sc = vh->sv3_mul.out_c;
        float *v1 = ar_get(f, (size_t)v1c * S);
        float *pooled = ar_get(f, (size_t)B * 3 * v1c);
        float *v2 = ar_get(f, (size_t)B * v2c);
        conv(f, &vh->v1_conv, trunk, v1, 0);
        bn(f, &vh->v1_bn, &vh->v1_act, v1, v1);
        gpool(f, vh->v1_bn.name, v1c, v1, pooled, 1, vh->v2_mul.name);
        f->noemu = 1; /* v2, v3, sv3: hooked after their bias (and activation) */
        matmul_bc(f, &vh->v2_mul, pooled, v2, 1);
        f->noemu = 0;
        bias_act_bc(f, vh->v2_mul.name, v2c, v2, vh->v2_bias.w, vh->v2_act.kind);
        f->noemu = 1;
        matmul_bc(f, &vh->v3_mul, v2, I->d_value);
        f->noemu = 0;
        bias_act_bc(f, vh->v3_mul.name, 3, I->d_value, vh->v3_bias.w, HC_ACT_IDENTITY);
        f->noemu = 1;
        matmul_bc(f, &vh->sv3_mul, v2, I->d_score);
        f->noemu = 0;
        bias_act_bc(f, vh->sv3_mul.name, sc, I->d_score, vh->sv3_bias.w, HC_ACT_IDENTITY);
        conv(f, &vh->ownership_conv, v1, I->d_own, 0);
    }
}

int collect_ropes(inst *I, const hc_block *blocks, int n)
{
    return hc_blocks_walk(blocks, n, rope_visit, I) ? -1 : 0;
}

} // namespace hccuda
