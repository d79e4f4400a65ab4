/* cuda:fp32 / cuda:fp16 / cuda:ref32 / cuda:emulate:PROFILE: the reference graph (refs/engine.c) on an NVIDIA GPU.
 * fp32 and fp16: GEMMs through cuBLAS (convolutions as im2col + one GEMM over the whole batch,
 * per-position matmuls, attention as strided-batched GEMMs per head), own kernels for the rest.
 *
 * ref32: the fp32 reference itself, bit for bit ref32's outputs and taps: every kernel is
 * backends/cuda_ref.cu's (refs/' scalar orders: one FMA chain per GEMM output, Winograd
 * F(4x4,3x3) and F(2x2,5x5) with refs/winograd.c's transforms and weights, hcmath's functions),
 * no cuBLAS. Param ",split-k" (tests only) plants a reorder: every GEMM sums k in two halves.
 *
 * emulate:PROFILE: emulate:PROFILE's bits on the GPU (docs/EMULATION.md): ref32's kernels over the
 * CPU emulation's rounded net (backends/emulate.h opens it for its net, layer table and error
 * messages), the input rows rounded as it rounds them, each layer's output rounded in place where
 * the CPU engine's hook sees it (tap(); f->noemu marks the taps this file takes earlier than the
 * engine does: before a bias, a SwiGLU or RoPE), the pooled values, attention scores and
 * probabilities rounded per the reading layer, the pooling sums and RMSNorm reductions in the
 * reading layer's poolSum / normSum format by the CPU's own per-output arithmetic
 * (refs/sums_core.h), overflow (a stored value, or a sum: d_sum_over) flagged per row and
 * reported as the CPU does. fp16 accumulation (accum: fp16) runs the GEMMs the CPU runs in acc16
 * (each convolution conv_mode marks, each matmul and attention layer_mode marks) by cuda_ref.cu's
 * acc16 form, the CPU's per-output arithmetic (refs/acc16_core.inc). Winograd convolutions are
 * prepared as the CPU engine prepares them (hc_emulate_conv_mode, hc_engine_conv_prepare): fp16
 * tiles (winogradTiles) and F(2x2,3x3) (winograd: f2x2) by refs/wino_tile.inc's arithmetic.
 * Every profile is followed (docs/EMULATION.md); nothing is approximated.
 * Params (tests only): ",noround=LAYER" leaves that layer's rounding out, ",plant-acc16" makes
 * every acc16 chunk 8 products instead of 16, ",plant-sums" rounds the emulated sums after every
 * second add only, ",plant-tiles" leaves the fp16 Winograd tile products unrounded: planted
 * faults the tests must catch.
 *
 * fp32: fp32 operands, CUBLAS_COMPUTE_32F with the default math mode (no TF32).
 * fp16: weights of convolutions and matmuls are stored as half; GEMM operands are half (real
 * half buffers: the im2col columns and converted activations), accumulation fp32
 * (CUBLAS_COMPUTE_32F, tensor cores). Activations between layers live in float buffers but are
 * rounded to half (round to nearest even) wherever a layer stores them, which is numerically
 * the same as half storage with fp32 arithmetic inside each kernel. Batch-norm scales, biases,
 * norms' weights and RoPE tables stay fp32; the attention scores and softmax are fp32, the
 * probabilities are rounded to half for the second GEMM.
 *
 * Layouts are the engine's: spatial activations CBP [c][b][hw], vectors BC [b][c].
 * Device memory: weights uploaded once at open (plain cudaMalloc), one arena for all
 * activations sized by a dry run of the forward pass at max_batch (as the engine does).
 * Errors: every CUDA and cuBLAS call is checked; the first failure is kept with the call and
 * the layer named, the rest of the pass is skipped, eval returns HC_EBACKEND. Kernel faults
 * are asynchronous: they surface at the next synchronizing call, named "(asynchronous)";
 * HC_CUDA_SYNC=1 synchronizes after every layer to name the layer exactly. */
extern "C" {
#include "backends/backend.h"
#include "backends/emulate.h"
#include "refs/engine.h"
#include "refs/kernels.h"
#include "harness/model/layers.h"
#include "refs/round.h"
}
#include "backends/cuda_ref.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

/* ---- device kernels ------------------------------------------------------------------- */

__device__ __forceinline__ float rnd(float x, int r16)
{
    return r16 ? __half2float(__float2half_rn(x)) : x;
}

__device__ __forceinline__ float softplus20(float x)
{
    float lo = x < 20.0f ? x : 20.0f;
    float hi = x > 20.0f ? x : 20.0f;
    return log1pf(expf(lo)) + (hi - 20.0f);
}

__device__ __forceinline__ float act_f(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * tanhf(softplus20(x));
    case HC_ACT_SILU: return x / (expf(-x) + 1.0f);
    case HC_ACT_MISH_SCALE8: return x * tanhf(softplus20(8.0f * x));
    default: return x;
    }
}

__device__ __forceinline__ float act_rmstip(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * tanhf(x < 20.0f ? log1pf(expf(x)) : x);
    case HC_ACT_SILU: return x / (1.0f + expf(-x));
    case HC_ACT_MISH_SCALE8: return x * tanhf(softplus20(8.0f * x));
    default: return x;
    }
}

#define GRID_LOOP(i, n) for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
                             i += (size_t)gridDim.x * blockDim.x)

/* spatial [B][cin][hw] -> CBP, mask [B][hw] from channel 0 */
__global__ void k_input(int B, int cin, int hw, const float *sp, float *in, float *mask, int r16)
{
    size_t n = (size_t)B * cin * hw;
    GRID_LOOP(i, n) {
        int p = (int)(i % hw);
        int c = (int)((i / hw) % cin);
        int b = (int)(i / ((size_t)hw * cin));
        float v = sp[i];
        in[((size_t)c * B + b) * hw + p] = rnd(v, r16);
        if (c == 0)
            mask[(size_t)b * hw + p] = v;
    }
}

/* the float sum in buffer order, as the engine computes it */
__global__ void k_msum(int B, int hw, const float *mask, float *msum)
{
    GRID_LOOP(b, (size_t)B) {
        float s = 0.0f;
        for (int p = 0; p < hw; p++)
            s += mask[b * hw + p];
        msum[b] = s;
    }
}

__global__ void k_round(size_t n, float *x)
{
    GRID_LOOP(i, n) x[i] = __half2float(__float2half_rn(x[i]));
}

/* The planted bug of params "plant=LAYER" (a test of the taps: the layer's output off by 1/16). */
__global__ void k_plant(size_t n, float *x)
{
    GRID_LOOP(i, n) x[i] *= 1.0625f;
}

__global__ void k_tohalf(size_t n, const float *x, __half *y)
{
    GRID_LOOP(i, n) y[i] = __float2half_rn(x[i]);
}

__device__ __forceinline__ void store(float *p, float v) { *p = v; }
__device__ __forceinline__ void store(__half *p, float v) { *p = __float2half_rn(v); }

/* col[(i*kh + dy)*kw + dx][b*hw + p] = in[i][b][shifted p] or 0 outside the buffer */
template <typename T>
__global__ void k_im2col(int ic, int B, int nx, int ny, int kh, int kw, const float *in, T *col)
{
    int hw = nx * ny;
    size_t S = (size_t)B * hw;
    size_t n = (size_t)ic * kh * kw * S;
    GRID_LOOP(i, n) {
        size_t j = i % S;
        size_t r = i / S;
        int dx = (int)(r % kw), dy = (int)((r / kw) % kh), c = (int)(r / ((size_t)kw * kh));
        int b = (int)(j / hw), p = (int)(j % hw);
        int y = p / nx + dy - kh / 2, x = p % nx + dx - kw / 2;
        float v = 0.0f;
        if (x >= 0 && x < nx && y >= 0 && y < ny)
            v = in[((size_t)c * B + b) * hw + (size_t)y * nx + x];
        store(col + i, v);
    }
}

__global__ void k_bn_act(int C, size_t S, const float *in, float *out, const float *sc,
                         const float *bi, int act, const float *mask, int r16)
{
    GRID_LOOP(i, (size_t)C * S) {
        int c = (int)(i / S);
        size_t j = i % S;
        float v = 0.0f;
        if (mask[j] == 1.0f)
            v = act_f(act, in[i] * sc[c] + bi[c]);
        out[i] = rnd(v, r16);
    }
}

/* x[c][b][p] += bias[b][c] */
__global__ void k_add_bias_bc(int C, int B, int hw, float *x, const float *bias, int r16)
{
    size_t S = (size_t)B * hw;
    GRID_LOOP(i, (size_t)C * S) {
        int c = (int)(i / S);
        int b = (int)((i % S) / hw);
        x[i] = rnd(x[i] + bias[(size_t)b * C + c], r16);
    }
}

/* One warp per (b, c): sum and masked max over hw. */
__global__ void k_gpool(int C, int B, int hw, const float *in, const float *mask,
                        const float *msum, float *out, int value_head, int r16)
{
    int warp = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32), lane = threadIdx.x % 32;
    if (warp >= B * C)
        return;
    int b = warp / C, c = warp % C;
    const float *src = in + ((size_t)c * B + b) * hw;
    const float *m = mask + (size_t)b * hw;
    float s = 0.0f, mx = -1.0f;
    for (int p = lane; p < hw; p += 32) {
        float x = src[p];
        s += x;
        float v = x + (m[p] - 1.0f);
        mx = mx > v ? mx : v;
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_down_sync(0xffffffffu, s, o);
        float t = __shfl_down_sync(0xffffffffu, mx, o);
        mx = mx > t ? mx : t;
    }
    if (lane != 0)
        return;
    float div = msum[b], sq = sqrtf(div);
    float mean = s / div;
    float *o = out + (size_t)b * 3 * C;
    o[c] = rnd(mean, r16);
    o[c + C] = rnd(mean * (sq - 14.0f) * 0.1f, r16);
    if (value_head)
        o[c + 2 * C] = rnd(mean * ((sq - 14.0f) * (sq - 14.0f) * 0.01f - 0.1f), r16);
    else
        o[c + 2 * C] = rnd(mx, r16);
}

__global__ void k_bias_act_bc(int B, int C, float *x, const float *bias, int act, int r16)
{
    GRID_LOOP(i, (size_t)B * C) {
        float v = x[i];
        if (bias)
            v += bias[i % C];
        x[i] = rnd(act_f(act, v), r16);
    }
}

/* transformer RMSNorm, one thread per column */
__global__ void k_rmsnorm_pos(int C, size_t S, const float *in, float *out, const float *w,
                              float eps, const float *mask, int r16)
{
    GRID_LOOP(j, S) {
        float ss = 0.0f;
        for (int c = 0; c < C; c++) {
            float v = in[(size_t)c * S + j];
            ss += v * v;
        }
        float r = mask[j] == 0.0f ? 0.0f : 1.0f / sqrtf(ss / (float)C + eps);
        for (int c = 0; c < C; c++) {
            float v = mask[j] == 0.0f ? 0.0f : in[(size_t)c * S + j] * r * w[c];
            out[(size_t)c * S + j] = rnd(v, r16);
        }
    }
}

/* trunk-tip RMSNorm: one block per row */
__global__ void k_rmsnorm_tip(int C, int B, int hw, const float *in, float *out, const float *g,
                              const float *be, float eps, int spatial, int act, const float *mask,
                              int r16)
{
    __shared__ float red[256];
    __shared__ float cnt[256];
    int b = blockIdx.x;
    size_t S = (size_t)B * hw;
    float row_r = 0.0f;
    if (spatial) {
        float ss = 0.0f, n = 0.0f;
        for (int p = threadIdx.x; p < hw; p += blockDim.x) {
            size_t col = (size_t)b * hw + p;
            if (mask[col] == 0.0f)
                continue;
            for (int c = 0; c < C; c++) {
                float v = in[c * S + col];
                ss += v * v;
            }
            n += 1.0f;
        }
        red[threadIdx.x] = ss;
        cnt[threadIdx.x] = n;
        __syncthreads();
        for (int o = blockDim.x / 2; o > 0; o >>= 1) {
            if ((int)threadIdx.x < o) {
                red[threadIdx.x] += red[threadIdx.x + o];
                cnt[threadIdx.x] += cnt[threadIdx.x + o];
            }
            __syncthreads();
        }
        row_r = 1.0f / sqrtf(red[0] / (cnt[0] * (float)C) + eps);
    }
    for (int p = threadIdx.x; p < hw; p += blockDim.x) {
        size_t col = (size_t)b * hw + p;
        if (mask[col] == 0.0f) {
            for (int c = 0; c < C; c++)
                out[c * S + col] = 0.0f;
            continue;
        }
        float r = row_r;
        if (!spatial) {
            float ss = 0.0f;
            for (int c = 0; c < C; c++) {
                float v = in[c * S + col];
                ss += v * v;
            }
            r = 1.0f / sqrtf(ss / (float)C + eps);
        }
        for (int c = 0; c < C; c++)
            out[c * S + col] = rnd(act_rmstip(act, in[c * S + col] * r * g[c] + be[c]), r16);
    }
}

__global__ void k_residual_masked(int C, size_t S, float *x, const float *d, const float *mask,
                                  int r16)
{
    GRID_LOOP(i, (size_t)C * S) x[i] = rnd(x[i] + d[i] * mask[i % S], r16);
}

__global__ void k_swiglu(size_t n, float *a, const float *g, int r16)
{
    GRID_LOOP(i, n) {
        float x = a[i];
        a[i] = rnd(x / (1.0f + expf(-x)) * g[i], r16);
    }
}

/* rotates pairs (2p, 2p+1) of every head of x [heads*hd][S] */
__global__ void k_rope(int B, int hw, int heads, int hd, int kvh, int learnable,
                       const float *cos_t, const float *sin_t, float *x, int r16)
{
    int pairs = hd / 2;
    size_t S = (size_t)B * hw;
    GRID_LOOP(i, (size_t)heads * pairs * S) {
        size_t j = i % S;
        int p = (int)((i / S) % pairs), h = (int)(i / (S * pairs));
        size_t t = (size_t)p * hw + j % hw;
        if (learnable)
            t += (size_t)(h * kvh / heads) * pairs * hw;
        float *r0 = x + ((size_t)h * hd + 2 * p) * S + j, *r1 = r0 + S;
        float x0 = *r0, x1 = *r1, c = cos_t[t], s = sin_t[t];
        *r0 = rnd(x0 * c - x1 * s, r16);
        *r1 = rnd(x0 * s + x1 * c, r16);
    }
}

/* masked softmax of rows sc[b][q][:] (one warp a row); masked-out queries give 0 rows */
template <typename T>
__global__ void k_softmax(int B, int hw, float *sc, T *probs, const float *mask, float scale)
{
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= (size_t)B * hw)
        return;
    int b = (int)(warp / hw), q = (int)(warp % hw);
    const float *m = mask + (size_t)b * hw;
    float *row = sc + warp * hw;
    T *prow = probs + warp * hw;
    if (m[q] == 0.0f) {
        for (int k = lane; k < hw; k += 32)
            store(prow + k, 0.0f);
        return;
    }
    float mx = -1e30f;
    for (int k = lane; k < hw; k += 32)
        if (m[k] != 0.0f)
            mx = fmaxf(mx, row[k] * scale);
    for (int o = 16; o > 0; o >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    float s = 0.0f;
    for (int k = lane; k < hw; k += 32) {
        float e = m[k] != 0.0f ? expf(row[k] * scale - mx) : 0.0f;
        row[k] = e;
        s += e;
    }
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    float inv = 1.0f / s;
    for (int k = lane; k < hw; k += 32)
        store(prow + k, row[k] * inv);
}

/* CBP [C][B][hw] -> [B][C][hw] */
__global__ void k_cbp_to_bcp(int C, int B, int hw, const float *in, float *out)
{
    GRID_LOOP(i, (size_t)C * B * hw) {
        int p = (int)(i % hw);
        int c = (int)((i / hw) % C);
        int b = (int)(i / ((size_t)hw * C));
        out[i] = in[((size_t)c * B + b) * hw + p];
    }
}

inline unsigned nblocks(size_t n, int threads = 256)
{
    size_t b = (n + threads - 1) / threads;
    if (b > (1u << 30))
        b = 1u << 30;
    return (unsigned)(b ? b : 1);
}

/* ---- the instance --------------------------------------------------------------------- */

/* cuBLAS is opened at run time (dlopen) rather than linked: loading it costs every process
 * ~0.2 s of relocations, which every test program and CLI call would pay. */
#ifndef HC_CUDA_LIBDIR
#define HC_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif
struct blas_api {
    void *lib;
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetMathMode) set_math_mode;
    decltype(&cublasSetStream_v2) set_stream;
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const void *, const void *, cudaDataType, int, const void *,
                              cudaDataType, int, const void *, void *, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t);
    cublasStatus_t (*gemm_sb_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                 int, const void *, const void *, cudaDataType, int, long long,
                                 const void *, cudaDataType, int, long long, const void *, void *,
                                 cudaDataType, int, long long, int, cublasComputeType_t,
                                 cublasGemmAlgo_t);
    decltype(&cublasGetStatusString) status_string;
};

int blas_load(blas_api *a, hc_err *err)
{
    const char *names[] = {"libcublas.so.13", "libcublas.so", HC_CUDA_LIBDIR "/libcublas.so.13",
                           HC_CUDA_LIBDIR "/libcublas.so"};
    const char *why = "";
    for (size_t i = 0; i < sizeof names / sizeof *names && !a->lib; i++) {
        a->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!a->lib && i == 0) {
            const char *d = dlerror();
            why = d ? d : "";
        }
    }
    if (!a->lib)
        return hc_err_set(err, HC_EBACKEND, "cuda: cannot load cuBLAS (libcublas.so.13): %s", why);
#define BLAS_SYM(field, sym)                                                                    \
    do {                                                                                        \
        *(void **)&a->field = dlsym(a->lib, sym);                                               \
        if (!a->field)                                                                          \
            return hc_err_set(err, HC_EBACKEND, "cuda: cuBLAS lacks %s", sym);                  \
    } while (0)
    BLAS_SYM(create, "cublasCreate_v2");
    BLAS_SYM(destroy, "cublasDestroy_v2");
    BLAS_SYM(set_math_mode, "cublasSetMathMode");
    BLAS_SYM(set_stream, "cublasSetStream_v2");
    BLAS_SYM(gemm_ex, "cublasGemmEx");
    BLAS_SYM(gemm_sb_ex, "cublasGemmStridedBatchedEx");
    BLAS_SYM(status_string, "cublasGetStatusString");
#undef BLAS_SYM
    return 0;
}

struct wentry {
    const void *host;
    int half;
    void *dev;
};

struct rope_dev {
    const hc_attn_block *blk;
    float *cos_t, *sin_t;
};

/* ref32 mode: a Winograd convolution's transformed weights (refs/winograd.c's, on the host). */
struct wprep {
    const hc_conv *src;
    hc_kconv k;
};

struct inst {
    const hc_net *net;
    int fp16, nx, ny, hw, max_batch, sync_layers;
    int ref, split; /* ref32 mode; split: the planted reorder (",split-k") */
    /* emulate:PROFILE mode (ref32's kernels plus backends/emulate.c's roundings): the CPU
     * emulation opened for its rounded net, layer table and error reports; d_over [max_batch]:
     * per row the first layer whose stored output overflowed (INT_MAX none); in_host: rounded
     * copies of the input rows. */
    hc_emulate *emu;
    char noround[128]; /* the planted fault ",noround=LAYER": that layer's rounding left out */
    int acc16_chunk;   /* products per fp16-accumulation chunk: HC_ACC16_CHUNK (",plant-acc16": 8) */
    int plant_tiles;   /* the planted fault ",plant-tiles": fp16 Winograd tile products left unrounded */
    int *d_over, *h_over;
    /* d_sum_over [max_batch]: per row the smallest hc_emulate_sum_code of an emulated reduction
     * that overflowed (INT_MAX none); plant_sums: the planted fault ",plant-sums" */
    int *d_sum_over, *h_sum_over, plant_sums;
    float *in_host;
    size_t in_host_n;
    wprep *wp;
    int n_wp;
    /* fp16 calibration knobs (params "fp16,pool32,mid32,probs32"; "fp16,emulike" = all three):
     * leave fp32 what emulate:fp16 leaves fp32, to find which rounding explains a difference.
     * pool32: pooled values (and the matmuls reading them run as fp32 GEMMs on half-rounded
     * weights); mid32: bias additions and the SwiGLU inputs; probs32: attention
     * probabilities and the attention output (fp32 GEMMs on half-rounded values). */
    int pool32, mid32, probs32;
    /* Taps (hc_raw_heads.taps): the eval's tapset, or NULL when none is wanted; a host staging
     * buffer for the copies. plant: the layer a test perturbs ("" none). */
    hc_tapset *taps;
    float *tap_host;
    size_t tap_host_n;
    char plant[128];
    blas_api api;
    cublasHandle_t blas;
    int blas_ok;
    wentry *w;
    int n_w, cap_w;
    rope_dev *ropes;
    int n_ropes;
    float *arena;
    size_t arena_floats;
    float *d_spatial, *d_global, *d_meta;
    float *d_policy, *d_pass, *d_value, *d_score, *d_own;
    float *h_stage; /* pinned: the outputs (and the emulation's overflow rows) copied back at once */
    /* the first error of the current open or eval */
    int bad;
    hc_err *err;
};

/* One forward pass (or its dry run at open). */
struct fwd {
    inst *I;
    int dry;
    size_t top, peak;
    int B, nx, ny, hw;
    size_t S;
    float *mask, *msum;
    int noemu; /* emulate mode: this tap is not where the CPU engine's hook sees the layer */
};

int fail_cuda(inst *I, cudaError_t e, const char *call, const char *layer)
{
    if (!I->bad) {
        I->bad = 1;
        hc_err_set(I->err, HC_EBACKEND, "cuda: %s: %s failed: %s (%s)", layer ? layer : "?", call,
                   cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return -1;
}

#define CK(I, call, layer)                                                                       \
    do {                                                                                         \
        cudaError_t ck_e_ = (call);                                                              \
        if (ck_e_ != cudaSuccess)                                                                \
            fail_cuda((I), ck_e_, #call, (layer));                                               \
    } while (0)

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
#define LAUNCH(f, layer, kern, grid, block, ...)                                                 \
    do {                                                                                         \
        if (LIVE(f)) {                                                                           \
            kern<<<(grid), (block)>>>(__VA_ARGS__);                                              \
            launched((f), #kern, (layer));                                                       \
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
        if (li >= 0 && !f->noemu && strcmp(name, I->noround) != 0) {
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

/* params "plant=LAYER": perturbs that layer's output (a stand-in kernel bug the taps must find). */
void planted(fwd *f, const char *name, float *dev, size_t n)
{
    if (f->I->plant[0] && name && strcmp(name, f->I->plant) == 0)
        LAUNCH(f, name, k_plant, nblocks(n), 256, n, dev);
}

/* Device copy of a host array: uploaded in the dry run at open, looked up afterwards. */
void *dev_array(fwd *f, const float *host, size_t n, int half, const char *layer)
{
    inst *I = f->I;
    if (!host)
        return NULL;
    for (int i = 0; i < I->n_w; i++)
        if (I->w[i].host == host && I->w[i].half == half)
            return I->w[i].dev;
    if (!f->dry) {
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
    size_t bytes = n * (half == 1 ? sizeof(__half) : sizeof(float));
    cudaError_t e = cudaMalloc(&d, bytes ? bytes : 4);
    if (e != cudaSuccess) {
        fail_cuda(I, e, "cudaMalloc (weights)", layer);
        return NULL;
    }
    I->w[I->n_w].host = host;
    I->w[I->n_w].half = half;
    I->w[I->n_w].dev = d;
    I->n_w++;
    if (half == 1) {
        __half *tmp = (__half *)malloc(bytes ? bytes : 2);
        if (!tmp) {
            I->bad = 1;
            hc_err_set(I->err, HC_ENOMEM, "cuda: %s: half weights", layer);
            return NULL;
        }
        for (size_t i = 0; i < n; i++)
            tmp[i] = __float2half_rn(host[i]);
        CK(I, cudaMemcpy(d, tmp, bytes, cudaMemcpyHostToDevice), layer);
        free(tmp);
    } else if (half == 2) { /* floats holding half-rounded values */
        float *tmp = (float *)malloc(bytes ? bytes : 4);
        if (!tmp) {
            I->bad = 1;
            hc_err_set(I->err, HC_ENOMEM, "cuda: %s: rounded weights", layer);
            return NULL;
        }
        for (size_t i = 0; i < n; i++)
            tmp[i] = __half2float(__float2half_rn(host[i]));
        CK(I, cudaMemcpy(d, tmp, bytes, cudaMemcpyHostToDevice), layer);
        free(tmp);
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
        st = I->api.gemm_ex(I->blas, ob, oa, N, M, K, &alpha, Bm, dt, ldb, A, dt, lda, &beta, C,
                          CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    } else {
        call = "cublasGemmStridedBatchedEx";
        st = I->api.gemm_sb_ex(I->blas, ob, oa, N, M, K, &alpha, Bm, dt, ldb, sB, A, dt,
                                        lda, sA, &beta, C, CUDA_R_32F, ldc, sC, batch,
                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
    if (st != CUBLAS_STATUS_SUCCESS && !I->bad) {
        I->bad = 1;
        hc_err_set(I->err, HC_EBACKEND, "cuda: %s: %s (%dx%dx%d, batch %d) failed: %s", layer,
                   call, M, N, K, batch, I->api.status_string(st));
    }
    if (I->sync_layers && LIVE(f))
        CK(I, cudaStreamSynchronize(cudaStreamPerThread), layer);
}

void round16(fwd *f, float *x, size_t n, const char *layer)
{
    if (f->I->fp16)
        LAUNCH(f, layer, k_round, nblocks(n), 256, n, x);
}

/* A GEMM operand from a float activation: itself in fp32 mode, a half copy in fp16 mode
 * (from the arena; the caller resets the arena top). */
const void *operand(fwd *f, const float *x, size_t n, const char *layer)
{
    if (!f->I->fp16)
        return x;
    __half *h = (__half *)ar_get(f, (n + 1) / 2);
    LAUNCH(f, layer, k_tohalf, nblocks(n), 256, n, x, h);
    return h;
}

/* ref32 mode: the Winograd weights of a 3x3 or 5x5 convolution, prepared on the host at open
 * (dry run) by refs/winograd.c, as the CPU engine prepares them. NULL (error set) on failure. */
const hc_kconv *wino_prep(fwd *f, const hc_conv *c)
{
    inst *I = f->I;
    for (int i = 0; i < I->n_wp; i++)
        if (I->wp[i].src == c)
            return &I->wp[i].k;
    if (!f->dry) {
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
        if (LIVE(f)) {
            hcref::gemm(c->out_c, (int)f->S, K, w, K, 1, 0, in, (long long)f->S, 0, out, (long long)f->S, 0, 1,
                        accumulate, I->split, acc);
            launched(f, "hcref::gemm", c->name);
        }
        return;
    }
    if ((c->ky == 3 && c->kx == 3) || (c->ky == 5 && c->kx == 5)) {
        const hc_kconv *k = wino_prep(f, c);
        if (!k)
            return;
        /* the engine's kernel choice (refs/conv.c kconv_run): F(2x2,3x3) weights when the
         * emulation asked for them, else F(4x4,3x3) or, 5x5, F(2x2,5x5) */
        int kind = k->wino2 ? hcref::WINO_F2 : c->ky == 5 ? hcref::WINO_F2_5 : hcref::WINO_F4;
        const float *U = k->wino2 ? wvec(f, k->wino2, (size_t)16 * c->out_c * c->in_c, c->name)
                                  : wvec(f, k->wino, (size_t)36 * c->out_c * c->in_c, c->name);
        float *ws = ar_get(f, hcref::wino_ws(kind, c->in_c, c->out_c, f->B, f->nx, f->ny));
        if (LIVE(f)) {
            hcref::wino_conv(kind, c->in_c, c->out_c, f->B, f->nx, f->ny, in, U, out, accumulate, NULL, ws,
                             I->split, acc, k->tiles_fp16, I->plant_tiles);
            launched(f, "hcref::wino_conv", c->name);
        }
        return;
    }
    const float *w = wvec(f, c->w, (size_t)c->out_c * K, c->name);
    float *ws = ar_get(f, hcref::direct_ws(c->in_c, c->ky, c->kx, f->B, f->nx, f->ny));
    if (LIVE(f)) {
        hcref::direct_conv(c->in_c, c->out_c, c->ky, c->kx, f->B, f->nx, f->ny, in, w, out, accumulate, ws, I->split,
                           acc);
        launched(f, "hcref::direct_conv", c->name);
    }
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
            LAUNCH(f, c->name, k_im2col<__half>, nblocks(n), 256, c->in_c, f->B, f->nx, f->ny,
                   c->ky, c->kx, in, h);
            col = h;
        } else {
            float *h = ar_get(f, n);
            LAUNCH(f, c->name, k_im2col<float>, nblocks(n), 256, c->in_c, f->B, f->nx, f->ny,
                   c->ky, c->kx, in, h);
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
        if (LIVE(f)) {
            hcref::bn_act(b->c, f->B, f->hw, in, out, sc, bi, (int)a->kind, f->mask, NULL);
            launched(f, "hcref::bn_act", b->name);
        }
    } else
        LAUNCH(f, b->name, k_bn_act, nblocks(n), 256, b->c, f->S, in, out, sc, bi, (int)a->kind,
               f->mask, f->I->fp16);
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
        if (LIVE(f)) { /* refs/norm_pool.c hc_matmul_bc: out[b][o] = chain over i of in[b][i] w[i][o] */
            hcref::gemm(f->B, m->out_c, m->in_c, in, m->in_c, 1, 0, (const float *)w, m->out_c, 0, out, m->out_c,
                        0, 1, 0, f->I->split, layer_acc16(f, m->name));
            launched(f, "hcref::gemm", m->name);
        }
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
    size_t n = (size_t)f->B * C;
    if (f->I->ref) {
        if (LIVE(f)) {
            hcref::bias_act_bc(f->B, C, x, b, act);
            launched(f, "hcref::bias_act_bc", layer);
        }
    } else
        LAUNCH(f, layer, k_bias_act_bc, nblocks(n), 256, f->B, C, x, b, act, f->I->fp16);
    /* ref32 taps a head's matmul after its bias and activation: this replaces matmul_bc's tap */
    tap(f, layer, HC_TAP_BC, C, x, stored_fmt(f, 0));
}

void add_bias_bc(fwd *f, const char *layer, int C, float *x, const float *bias)
{
    size_t n = (size_t)C * f->S;
    if (f->I->ref) {
        if (LIVE(f)) {
            hcref::add_bias_bc(C, f->B, f->hw, x, bias);
            launched(f, "hcref::add_bias_bc", layer);
        }
        return;
    }
    LAUNCH(f, layer, k_add_bias_bc, nblocks(n), 256, C, f->B, f->hw, x, bias,
           f->I->fp16 && !f->I->mid32);
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
                            I->plant_sums);
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
    size_t threads = (size_t)f->B * C * 32;
    LAUNCH(f, layer, k_gpool, nblocks(threads), 256, C, f->B, f->hw, in, f->mask, f->msum, out,
           value_head, f->I->fp16 && !f->I->pool32);
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
        if (LIVE(f)) { /* hc_matmul_cs: out[o][s] = chain over i of w[i][o] in[i][s] */
            hcref::gemm(m->out_c, (int)f->S, m->in_c, (const float *)w, 1, m->out_c, 0, in, (long long)f->S, 0,
                        out, (long long)f->S, 0, 1, 0, f->I->split, layer_acc16(f, mode_of ? mode_of : m->name));
            launched(f, "hcref::gemm", m->name);
        }
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

/* ref32 mode: a transformer pre-norm; emulated, its reductions in the norm layer's normSum
 * format, as refs/engine.c rmsnorm_pos asks. */
void rmsnorm_pos_ref(fwd *f, const hc_tf_rmsnorm *n, int c, const float *x, float *s, const float *lw)
{
    inst *I = f->I;
    if (!LIVE(f))
        return;
    int nf = I->emu ? (hc_emulate_layer_mode(I->emu, n->name) >> HC_LM_NORMSUM_SHIFT) & HC_LM_FMT_MASK : 0;
    if (nf) {
        int code = hc_emulate_sum_code(I->emu, n->name, HC_EMULATE_SUM_NORM);
        hcref::rmsnorm_pos_fmt(nf, c, f->B, f->hw, x, s, lw, n->eps, f->mask, sum_flags(I, code), code,
                               I->plant_sums);
        launched(f, "hcref::rmsnorm_pos_fmt", n->name);
    } else {
        hcref::rmsnorm_pos(c, f->S, x, s, lw, n->eps, f->mask);
        launched(f, "hcref::rmsnorm_pos", n->name);
    }
}

/* ref32 mode: ref32's hooked attention block (refs/engine.c): the pre-norm, q, k, v, RoPE, the
 * exact attention head by head (refs/attention.c's chains and softmax), the output projection
 * and the masked residual; each output tapped as ref32 taps it. */
void attention_ref(fwd *f, const hc_block *bl, int c, float *x, float *s)
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
    float *sc = ar_get(f, (size_t)B * hw * hw);
    const float *lw = wvec(f, a->pre_ln.weight, c, a->pre_ln.name);
    rmsnorm_pos_ref(f, &a->pre_ln, c, x, s, lw);
    planted(f, a->pre_ln.name, s, (size_t)c * S);
    tap(f, a->pre_ln.name, HC_TAP_CBP, c, s, HC_TAPFMT_F32);
    f->noemu = a->use_rope; /* the CPU hooks q and k after their rotation */
    matmul_cs(f, &a->q_proj, s, q);
    matmul_cs(f, &a->k_proj, s, k);
    f->noemu = 0;
    matmul_cs(f, &a->v_proj, s, v);
    if (a->use_rope) {
        const rope_dev *rt = find_rope(I, a);
        if (LIVE(f) && !rt) {
            I->bad = 1;
            hc_err_set(I->err, HC_EINTERNAL, "cuda: %s: no RoPE table", bl->name);
        }
        if (LIVE(f)) {
            hcref::rope(B, hw, nh, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, q);
            launched(f, "hcref::rope", a->q_proj.name);
            hcref::rope(B, hw, nkv, qd, nkv, a->learnable_rope, rt->cos_t, rt->sin_t, k);
            launched(f, "hcref::rope", a->k_proj.name);
        }
        tap(f, a->q_proj.name, HC_TAP_CBP, nh * qd, q, HC_TAPFMT_F32);
        tap(f, a->k_proj.name, HC_TAP_CBP, nkv * qd, k, HC_TAPFMT_F32);
    }
    int am = I->emu ? hc_emulate_layer_mode(I->emu, a->out_proj.name) : 0;
    int sfmt = (am >> HC_LM_SCORES_SHIFT) & HC_LM_FMT_MASK, pfmt = (am >> HC_LM_PROBS_SHIFT) & HC_LM_FMT_MASK;
    hcref::acc16 acc = layer_acc16(f, a->out_proj.name); /* the engine's attention asks out_proj */
    for (int h = 0; h < nh && LIVE(f); h++) {
        int kvh = h / group;
        hcref::attention_head(B, hw, qd, vd, q + (size_t)h * qd * S, k + (size_t)kvh * qd * S,
                              v + (size_t)kvh * vd * S, f->mask, att + (size_t)h * vd * S, sc, I->split, sfmt,
                              pfmt, acc);
        launched(f, "hcref::attention_head", bl->name);
    }
    tap_inner(f, bl->name, "attn.out_preproj", nh * vd, att, HC_TAPFMT_F32);
    matmul_cs(f, &a->out_proj, att, s);
    if (LIVE(f)) {
        hcref::residual(c, S, x, s, f->mask);
        launched(f, "hcref::residual", bl->name);
    }
    tap(f, bl->name, HC_TAP_CBP, c, x, HC_TAPFMT_F32);
}

void attention(fwd *f, const hc_block *bl, int c, float *x, float *s)
{
    const hc_attn_block *a = &bl->attn;
    inst *I = f->I;
    if (I->ref) {
        attention_ref(f, bl, c, x, s);
        return;
    }
    int nh = a->num_heads, nkv = a->num_kv_heads, qd = a->q_head_dim, vd = a->v_head_dim;
    int B = f->B, hw = f->hw, group = nh / nkv;
    size_t S = f->S;
    float *q = ar_get(f, (size_t)nh * qd * S);
    float *k = ar_get(f, (size_t)nkv * qd * S);
    float *v = ar_get(f, (size_t)nkv * vd * S);
    float *att = ar_get(f, (size_t)nh * vd * S);
    float *sc = ar_get(f, (size_t)B * hw * hw);
    const float *lw = wvec(f, a->pre_ln.weight, c, a->pre_ln.name);
    LAUNCH(f, a->pre_ln.name, k_rmsnorm_pos, nblocks(S), 256, c, S, x, s, lw, a->pre_ln.eps,
           f->mask, I->fp16);
    planted(f, a->pre_ln.name, s, (size_t)c * S);
    tap(f, a->pre_ln.name, HC_TAP_CBP, c, s, stored_fmt(f, 0));
    matmul_cs(f, &a->q_proj, s, q);
    matmul_cs(f, &a->k_proj, s, k);
    matmul_cs(f, &a->v_proj, s, v);
    if (a->use_rope) {
        const rope_dev *rt = find_rope(I, a);
        if (LIVE(f) && !rt) {
            I->bad = 1;
            hc_err_set(I->err, HC_EINTERNAL, "cuda: %s: no RoPE table", bl->name);
        }
        if (LIVE(f)) {
            size_t nq = (size_t)nh * (qd / 2) * S, nk = (size_t)nkv * (qd / 2) * S;
            LAUNCH(f, a->q_proj.name, k_rope, nblocks(nq), 256, B, hw, nh, qd, nkv,
                   a->learnable_rope, rt->cos_t, rt->sin_t, q, I->fp16);
            LAUNCH(f, a->k_proj.name, k_rope, nblocks(nk), 256, B, hw, nkv, qd, nkv,
                   a->learnable_rope, rt->cos_t, rt->sin_t, k, I->fp16);
        }
        /* ref32 taps q and k after their rotation */
        tap(f, a->q_proj.name, HC_TAP_CBP, nh * qd, q, stored_fmt(f, 0));
        tap(f, a->k_proj.name, HC_TAP_CBP, nkv * qd, k, stored_fmt(f, 0));
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
        size_t rows = (size_t)B * hw;
        if (I->fp16 && !p32)
            LAUNCH(f, bl->name, k_softmax<__half>, nblocks(rows * 32), 256, B, hw, sc,
                   (__half *)probs, f->mask, scale);
        else
            LAUNCH(f, bl->name, k_softmax<float>, nblocks(rows * 32), 256, B, hw, sc,
                   (float *)probs, f->mask, scale);
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
    LAUNCH(f, bl->name, k_residual_masked, nblocks((size_t)c * S), 256, c, S, x, s, f->mask,
           I->fp16);
    tap(f, bl->name, HC_TAP_CBP, c, x, stored_fmt(f, 0));
}

void ffn(fwd *f, const hc_block *bl, int c, float *x, float *s)
{
    const hc_ffn_block *ff = &bl->ffn;
    inst *I = f->I;
    size_t S = f->S;
    float *a1 = ar_get(f, (size_t)ff->ffn_c * S);
    float *gate = ar_get(f, (size_t)ff->ffn_c * S);
    const float *lw = wvec(f, ff->pre_ln.weight, c, ff->pre_ln.name);
    if (I->ref)
        rmsnorm_pos_ref(f, &ff->pre_ln, c, x, s, lw);
    else
        LAUNCH(f, ff->pre_ln.name, k_rmsnorm_pos, nblocks(S), 256, c, S, x, s, lw, ff->pre_ln.eps,
               f->mask, I->fp16);
    planted(f, ff->pre_ln.name, s, (size_t)c * S);
    tap(f, ff->pre_ln.name, HC_TAP_CBP, c, s, stored_fmt(f, 0));
    f->noemu = 1; /* the CPU hooks linear1 after the SwiGLU, the gate never */
    matmul_cs(f, &ff->linear1, s, a1, 0, I->mid32);
    matmul_cs(f, &ff->linear_gate, s, gate, 0, I->mid32, ff->linear1.name);
    f->noemu = 0;
    tap_inner(f, bl->name, "ffn.up", ff->ffn_c, a1, stored_fmt(f, I->mid32));
    tap_inner(f, bl->name, "ffn.gate", ff->ffn_c, gate, stored_fmt(f, I->mid32));
    size_t n = (size_t)ff->ffn_c * S;
    if (I->ref) {
        if (LIVE(f)) {
            hcref::swiglu(n, a1, gate);
            launched(f, "hcref::swiglu", ff->linear1.name);
        }
    } else
        LAUNCH(f, ff->linear1.name, k_swiglu, nblocks(n), 256, n, a1, gate, I->fp16);
    /* ref32 taps linear1 after the SwiGLU */
    tap(f, ff->linear1.name, HC_TAP_CBP, ff->ffn_c, a1, stored_fmt(f, 0));
    matmul_cs(f, &ff->linear2, a1, s);
    if (I->ref) {
        if (LIVE(f)) {
            hcref::residual(c, S, x, s, f->mask);
            launched(f, "hcref::residual", bl->name);
        }
    } else
        LAUNCH(f, bl->name, k_residual_masked, nblocks((size_t)c * S), 256, c, S, x, s, f->mask,
               I->fp16);
    tap(f, bl->name, HC_TAP_CBP, c, x, stored_fmt(f, 0));
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
    size_t nin = (size_t)B * cin * hw;
    LAUNCH(f, "input", k_input, nblocks(nin), 256, B, cin, hw, I->d_spatial, in, f->mask, r16);
    LAUNCH(f, "input", k_msum, nblocks(B), 256, B, hw, f->mask, f->msum);
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
                                       ws, sum_flags(I, code), code, I->plant_sums);
                launched(f, "hcref::rmsnorm_tip_fmt", r->name);
            } else if (LIVE(f)) {
                hcref::rmsnorm_tip(tc, B, hw, x, s, g, be, r->eps, r->spatial, (int)t->tip_act.kind, f->mask, ws);
                launched(f, "hcref::rmsnorm_tip", r->name);
            }
            f->top = top;
        } else
            LAUNCH(f, r->name, k_rmsnorm_tip, B, 256, tc, B, hw, x, s, g, be, r->eps, r->spatial,
                   (int)t->tip_act.kind, f->mask, r16);
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
        LAUNCH(f, ph->p2_conv.name, k_cbp_to_bcp, nblocks((size_t)pc * S), 256, pc, B, hw, pol,
               I->d_policy);
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

int collect_ropes(inst *I, const hc_block *blocks, int n)
{
    return hc_blocks_walk(blocks, n, rope_visit, I) ? -1 : 0;
}

void inst_free(inst *I)
{
    if (!I)
        return;
    for (int i = 0; i < I->n_w; i++)
        cudaFree(I->w[i].dev);
    free(I->w);
    for (int i = 0; i < I->n_ropes; i++) {
        cudaFree(I->ropes[i].cos_t);
        cudaFree(I->ropes[i].sin_t);
    }
    free(I->ropes);
    for (int i = 0; i < I->n_wp; i++)
        hc_kconv_free(&I->wp[i].k);
    free(I->wp);
    free(I->tap_host);
    cudaFree(I->d_over);
    free(I->h_over);
    cudaFree(I->d_sum_over);
    free(I->h_sum_over);
    free(I->in_host);
    hc_emulate_close(I->emu);
    cudaFree(I->arena);
    cudaFree(I->d_spatial);
    cudaFree(I->d_global);
    cudaFree(I->d_meta);
    cudaFree(I->d_policy);
    cudaFree(I->d_pass);
    cudaFree(I->d_value);
    cudaFree(I->d_score);
    cudaFree(I->d_own);
    cudaFreeHost(I->h_stage);
    if (I->blas_ok)
        I->api.destroy(I->blas);
    if (I->api.lib)
        dlclose(I->api.lib);
    free(I);
}

/* ---- the vtable ----------------------------------------------------------------------- */

/* The params: fp32, ref32[,split-k], emulate:PROFILE[,split-k][,noround=LAYER][,plant-acc16]
 * [,plant-sums][,plant-tiles] or fp16[,pool32][,mid32][,probs32][,emulike], each but emulate
 * [,plant=LAYER]; "emulate" alone when oprof (hc_backend_open_opts's parsed profile) is given.
 * ref: the bit-exact reference kernels (cuda_ref.cu); split: its planted reorder; profile:
 * emulate's profile ("" none); noround, acc16_plant (acc16 chunks of 8), plant_sums, plant_tiles
 * (Winograd tile products unrounded): the planted faults. 0, or -1 with err. */
static int cuda_params(const char *params, const hc_profile *oprof, int *fp16_out, int *ref_out, int *split_out,
                       int knobs[3], char plant[128], char profile[1024], char noround[128], int *acc16_plant,
                       int *plant_sums, int *plant_tiles, hc_err *err)
{
    int fp16 = -1, ref = 0, split = 0;
    *acc16_plant = 0;
    *plant_sums = 0;
    *plant_tiles = 0;
    plant[0] = profile[0] = noround[0] = '\0';
    knobs[0] = knobs[1] = knobs[2] = 0;
    if (oprof && params && strcmp(params, "emulate") == 0) {
        fp16 = 0;
        ref = 1;
        snprintf(profile, 1024, "%s", oprof->name ? oprof->name : "profile");
    } else if (params && strncmp(params, "emulate:", 8) == 0) {
        /* the rest are planted faults for the tests: the reordered sum, LAYER's rounding left out,
         * acc16 chunks of 8, the emulated sums' rounding moved, the Winograd tile products left
         * unrounded */
        snprintf(profile, 1024, "%s", params + 8);
        char *ps = strstr(profile, ",plant-sums");
        *plant_sums = ps != NULL;
        if (ps)
            memmove(ps, ps + 11, strlen(ps + 11) + 1);
        char *k = strstr(profile, ",split-k"), *nr = strstr(profile, ",noround="), *pa = strstr(profile, ",plant-acc16");
        if (nr) {
            snprintf(noround, 128, "%s", nr + 9);
            char *c = strchr(noround, ',');
            if (c)
                *c = 0;
        }
        char *pt = strstr(profile, ",plant-tiles");
        split = k != NULL;
        *acc16_plant = pa != NULL;
        *plant_tiles = pt != NULL;
        if (k)
            *k = 0;
        if (nr)
            *nr = 0;
        if (pa)
            *pa = 0;
        if (pt)
            *pt = 0;
        if (!profile[0] || strlen(params) >= 1024)
            return hc_err_set(err, HC_ECONFIG, "cuda: emulate needs a profile: cuda:emulate:NAME or cuda:emulate:PATH.yaml");
        fp16 = 0;
        ref = 1;
    } else {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", params ? params : "");
        char *save = NULL;
        int i = 0;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
            if (i == 0 && strcmp(tok, "fp32") == 0)
                fp16 = 0;
            else if (i == 0 && strcmp(tok, "ref32") == 0)
                fp16 = 0, ref = 1;
            else if (i > 0 && ref && strcmp(tok, "split-k") == 0)
                split = 1;
            else if (i == 0 && strcmp(tok, "fp16") == 0)
                fp16 = 1;
            else if (i > 0 && fp16 == 1 && strcmp(tok, "pool32") == 0)
                knobs[0] = 1;
            else if (i > 0 && fp16 == 1 && strcmp(tok, "mid32") == 0)
                knobs[1] = 1;
            else if (i > 0 && fp16 == 1 && strcmp(tok, "probs32") == 0)
                knobs[2] = 1;
            else if (i > 0 && fp16 == 1 && strcmp(tok, "emulike") == 0)
                knobs[0] = knobs[1] = knobs[2] = 1;
            else if (i > 0 && fp16 >= 0 && strncmp(tok, "plant=", 6) == 0 && tok[6])
                snprintf(plant, 128, "%s", tok + 6);
            else
                fp16 = -1;
            if (fp16 < 0)
                break;
        }
        if (fp16 < 0 || strlen(params ? params : "") >= sizeof buf)
            return hc_err_set(err, HC_ECONFIG,
                              "cuda: params must be fp32, ref32[,split-k], emulate:PROFILE or "
                              "fp16[,pool32][,mid32][,probs32][,emulike], each [,plant=LAYER] (got \"%s\")",
                              params ? params : "");
    }
    *fp16_out = fp16;
    *ref_out = ref;
    *split_out = split;
    return 0;
}

/* Checked before any work, without a GPU: the params, and emulate's profile loads (whether the
 * GPU follows it depends on the net's layers: told at open). */
int cuda_check(const char *params, hc_err *err)
{
    int fp16, ref, split, knobs[3], acc16_plant, plant_tiles;
    char plant[128], profile[1024], noround[128];
    int plant_sums;
    if (cuda_params(params, NULL, &fp16, &ref, &split, knobs, plant, profile, noround, &acc16_plant, &plant_sums,
                    &plant_tiles, err))
        return -1;
    if (profile[0]) {
        hc_profile *p = hc_profile_load(profile, err);
        if (!p)
            return -1;
        hc_profile_free(p);
    }
    return 0;
}

/* oprof, active, n_active: hc_backend_open_opts's parsed profile and layer subset (emulate only) */
void *open_impl(const char *params, const hc_net *net, int nx, int ny, int max_batch, const hc_profile *oprof,
                const unsigned char *active, int n_active, hc_err *err)
{
    int fp16 = -1, ref = 0, split = 0, knobs[3] = {0, 0, 0}, acc16_plant = 0, plant_tiles = 0;
    char plant[128] = "", profile[1024] = "", noround[128] = "";
    int plant_sums = 0;
    if ((oprof || active) && !(params && (strcmp(params, "emulate") == 0 || strncmp(params, "emulate:", 8) == 0))) {
        hc_err_set(err, HC_EUSAGE, "cuda: only cuda:emulate takes a profile or a layer subset (got \"%s\")",
                   params ? params : "");
        return NULL;
    }
    if (cuda_params(params, oprof, &fp16, &ref, &split, knobs, plant, profile, noround, &acc16_plant, &plant_sums,
                    &plant_tiles, err))
        return NULL;
    if (!net) {
        hc_err_set(err, HC_ECONFIG, "cuda needs a net");
        return NULL;
    }
    if (max_batch < 1 || nx < 1 || ny < 1 || (size_t)nx * ny > 100000) {
        hc_err_set(err, HC_EBACKEND, "cuda: bad arguments (batch %d, %dx%d)", max_batch, nx, ny);
        return NULL;
    }
    /* The engine's checks of what the graph may hold (odd kernels, no dilation, SwiGLU ...):
     * a tiny CPU engine validates the net exactly as ref32 would. */
    hc_engine *probe = hc_engine_new(net, 1, nx, ny, 1, err);
    if (!probe)
        return NULL;
    hc_engine_free(probe);
    /* emulate: the CPU emulation's rounded net and layer table (one row, one thread: its own
     * engine never runs here); every rounding it asks is one this mode follows */
    hc_emulate *emu = NULL;
    if (profile[0]) {
        emu = oprof ? hc_emulate_open_profile(oprof, net, nx, ny, 1, 1, active, n_active, err)
                    : hc_emulate_open_subset(profile, net, nx, ny, 1, 1, active, n_active, err);
        if (!emu)
            return NULL;
        net = hc_emulate_net(emu);
    }

    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        hc_emulate_close(emu);
        hc_err_set(err, HC_EBACKEND, "cuda: no CUDA device (cudaGetDeviceCount: %s)",
                   e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return NULL;
    }
    inst *I = (inst *)calloc(1, sizeof *I);
    if (!I) {
        hc_emulate_close(emu);
        hc_err_set(err, HC_ENOMEM, "cuda: instance");
        return NULL;
    }
    I->emu = emu;
    snprintf(I->noround, sizeof I->noround, "%s", noround);
    I->acc16_chunk = acc16_plant ? 8 : (int)HC_ACC16_CHUNK;
    I->plant_sums = plant_sums;
    I->plant_tiles = plant_tiles;
    I->err = err;
    I->net = net;
    I->fp16 = fp16;
    I->ref = ref;
    I->split = split;
    I->pool32 = knobs[0];
    I->mid32 = knobs[1];
    I->probs32 = knobs[2];
    snprintf(I->plant, sizeof I->plant, "%s", plant);
    I->nx = nx;
    I->ny = ny;
    I->hw = nx * ny;
    I->max_batch = max_batch;
    const char *sy = getenv("HC_CUDA_SYNC");
    I->sync_layers = sy && *sy && strcmp(sy, "0") != 0;
    /* A waiting thread sleeps instead of spinning: on a host running a sweep, many processes
     * wait on one GPU and their spinning would take the cores the CPU cases need. Only possible
     * before the process's context exists (a later instance keeps what the first set). */
    if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
        (void)cudaGetLastError();
    CK(I, cudaSetDevice(0), "open");
    if (!I->bad && !I->ref && blas_load(&I->api, err))
        I->bad = 1;
    if (!I->bad && !I->ref) {
        cublasStatus_t st = I->api.create(&I->blas);
        if (st != CUBLAS_STATUS_SUCCESS) {
            I->bad = 1;
            hc_err_set(err, HC_EBACKEND, "cuda: open: cublasCreate failed: %s",
                       I->api.status_string(st));
        } else {
            I->blas_ok = 1;
            /* fp32 stays fp32: no TF32 tensor-core shortcut */
            st = I->api.set_math_mode(I->blas, CUBLAS_DEFAULT_MATH);
            if (st != CUBLAS_STATUS_SUCCESS) {
                I->bad = 1;
                hc_err_set(err, HC_EBACKEND, "cuda: open: cublasSetMathMode failed: %s",
                           I->api.status_string(st));
            }
            /* the calling thread's stream, as every kernel of this file (lanes side by side) */
            st = I->bad ? st : I->api.set_stream(I->blas, cudaStreamPerThread);
            if (!I->bad && st != CUBLAS_STATUS_SUCCESS) {
                I->bad = 1;
                hc_err_set(err, HC_EBACKEND, "cuda: open: cublasSetStream failed: %s", I->api.status_string(st));
            }
        }
    }
    if (!I->bad)
        collect_ropes(I, net->trunk.blocks, net->trunk.num_blocks);
    size_t hw = (size_t)I->hw, B = (size_t)max_batch;
    int pc = net->num_policy_c, sc = net->num_score_value_c;
    CK(I, cudaMalloc(&I->d_spatial, B * net->num_input_c * hw * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_global, B * (net->num_input_global_c + 1) * sizeof(float)), "open");
    if (net->trunk.has_meta_encoder)
        CK(I, cudaMalloc(&I->d_meta, B * net->num_input_meta_c * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_policy, B * pc * hw * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_pass, B * pc * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_value, B * 3 * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_score, B * sc * sizeof(float)), "open");
    CK(I, cudaMalloc(&I->d_own, B * hw * sizeof(float)), "open");
    CK(I, cudaMallocHost(&I->h_stage, B * ((size_t)pc * hw + pc + 3 + sc + hw + 2) * sizeof(float)), "open");
    if (I->emu) {
        CK(I, cudaMalloc(&I->d_over, B * sizeof(int)), "open");
        CK(I, cudaMalloc(&I->d_sum_over, B * sizeof(int)), "open");
        I->h_over = (int *)malloc(B * sizeof(int));
        I->h_sum_over = (int *)malloc(B * sizeof(int));
        I->in_host_n = B * ((size_t)net->num_input_c * hw + net->num_input_global_c + net->num_input_meta_c);
        I->in_host = (float *)malloc(I->in_host_n * sizeof(float) + 4);
        if (!I->h_over || !I->h_sum_over || !I->in_host) {
            I->bad = 1;
            hc_err_set(err, HC_ENOMEM, "cuda: emulate buffers");
        }
    }
    if (!I->bad) {
        fwd F = {};
        F.I = I;
        F.dry = 1;
        F.B = max_batch;
        F.nx = nx;
        F.ny = ny;
        F.hw = I->hw;
        F.S = B * hw;
        forward(&F);
        I->arena_floats = F.peak;
        if (!I->bad)
            CK(I, cudaMalloc(&I->arena, (F.peak + 64) * sizeof(float)), "open (activation arena)");
    }
    /* The uploads done before another thread's stream (a lane's) reads them. */
    if (!I->bad)
        CK(I, cudaDeviceSynchronize(), "open");
    if (I->bad) {
        inst_free(I);
        return NULL;
    }
    I->err = NULL;
    return I;
}

void *cuda_open(const char *params, const hc_net *net, int nx, int ny, int max_batch, int threads, hc_err *err)
{
    (void)threads;
    return open_impl(params, net, nx, ny, max_batch, NULL, NULL, 0, err);
}

/* taps and bisect-precision: cuda:emulate with a profile they built or a subset of layers. */
void *cuda_open_opts(const char *params, const hc_backend_open_opts *o, hc_err *err)
{
    return open_impl(params, o->net, o->nx, o->ny, o->max_batch, o->profile, o->active, o->n_active, err);
}

int cuda_eval(void *vi, int batch, const float *spatial, const float *global, const float *meta,
              hc_raw_heads *out, hc_err *err)
{
    inst *I = (inst *)vi;
    const hc_net *net = I->net;
    if (batch < 1 || batch > I->max_batch)
        return hc_err_set(err, HC_EBACKEND, "cuda: batch %d outside 1..%d", batch, I->max_batch);
    if (!spatial || !global || !out)
        return hc_err_set(err, HC_EBACKEND, "cuda: missing input or output");
    if (net->trunk.has_meta_encoder != (meta != NULL))
        return hc_err_set(err, HC_EBACKEND, "cuda: %s %s metadata input rows",
                          net->name ? net->name : "net",
                          net->trunk.has_meta_encoder ? "needs" : "takes no");
    if (out->nx != I->nx || out->ny != I->ny || out->policy_channels != net->num_policy_c ||
        out->score_channels != net->num_score_value_c || out->max_batch < batch)
        return hc_err_set(err, HC_EBACKEND, "cuda: output buffer does not match the net / board");
    I->bad = 0;
    I->err = err;
    I->taps = out->taps;
    if (I->taps)
        hc_tapset_reset(I->taps);
    size_t hw = (size_t)I->hw, B = (size_t)batch;
    int pc = net->num_policy_c, sc = net->num_score_value_c;
    if (I->emu) {
        /* the input rows rounded as backends/emulate.c rounds them (the mask is channel 0 of the
         * rounded rows there too) */
        int fmt = hc_emulate_input_fmt(I->emu);
        size_t ns = B * net->num_input_c * hw, ng = B * net->num_input_global_c,
               nm = meta ? B * net->num_input_meta_c : 0;
        float *h = I->in_host;
        memcpy(h, spatial, ns * sizeof(float));
        memcpy(h + ns, global, ng * sizeof(float));
        if (nm)
            memcpy(h + ns + ng, meta, nm * sizeof(float));
        if (fmt == HC_FMT_FP16)
            hc_round_fp16_array(h, ns + ng + nm);
        else if (fmt == HC_FMT_BF16)
            hc_round_bf16_array(h, ns + ng + nm);
        spatial = h;
        global = h + ns;
        meta = nm ? h + ns + ng : meta;
        CK(I, cudaMemset(I->d_over, 0x7f, B * sizeof(int)), "input");
        CK(I, cudaMemset(I->d_sum_over, 0x7f, B * sizeof(int)), "input");
    }
    CK(I, cudaMemcpy(I->d_spatial, spatial, B * net->num_input_c * hw * sizeof(float),
                     cudaMemcpyHostToDevice),
       "input");
    if (net->num_input_global_c > 0)
        CK(I, cudaMemcpy(I->d_global, global, B * net->num_input_global_c * sizeof(float),
                         cudaMemcpyHostToDevice),
           "input");
    if (meta)
        CK(I, cudaMemcpy(I->d_meta, meta, B * net->num_input_meta_c * sizeof(float),
                         cudaMemcpyHostToDevice),
           "input");
    if (!I->bad) {
        fwd F = {};
        F.I = I;
        F.B = batch;
        F.nx = I->nx;
        F.ny = I->ny;
        F.hw = I->hw;
        F.S = B * hw;
        forward(&F);
    }
    /* The outputs queued behind the pass into one pinned staging buffer, then one wait: a
     * one-position pass is short, and every synchronous copy would be another wait. */
    size_t o_pass = B * pc * hw, o_val = o_pass + B * pc, o_sc = o_val + B * 3, o_own = o_sc + B * sc,
           o_over = o_own + B * hw;
    float *st = I->h_stage;
    if (!I->bad) {
        cudaStream_t cs = cudaStreamPerThread;
        CK(I, cudaMemcpyAsync(st, I->d_policy, o_pass * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        CK(I, cudaMemcpyAsync(st + o_pass, I->d_pass, B * pc * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        CK(I, cudaMemcpyAsync(st + o_val, I->d_value, B * 3 * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        CK(I, cudaMemcpyAsync(st + o_sc, I->d_score, B * sc * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        CK(I, cudaMemcpyAsync(st + o_own, I->d_own, B * hw * sizeof(float), cudaMemcpyDeviceToHost, cs), "output");
        if (I->emu) {
            CK(I, cudaMemcpyAsync(st + o_over, I->d_over, B * sizeof(int), cudaMemcpyDeviceToHost, cs), "output");
            CK(I, cudaMemcpyAsync(st + o_over + B, I->d_sum_over, B * sizeof(int), cudaMemcpyDeviceToHost, cs),
               "output");
        }
        cudaError_t e = cudaStreamSynchronize(cs);
        if (e != cudaSuccess)
            fail_cuda(I, e, "cudaStreamSynchronize", "forward pass (asynchronous)");
    }
    if (!I->bad) {
        memcpy(out->policy, st, o_pass * sizeof(float));
        memcpy(out->policy_pass, st + o_pass, B * pc * sizeof(float));
        memcpy(out->value, st + o_val, B * 3 * sizeof(float));
        memcpy(out->score, st + o_sc, B * sc * sizeof(float));
        memcpy(out->ownership, st + o_own, B * hw * sizeof(float));
    }
    if (I->emu && !I->bad) {
        memcpy(I->h_over, st + o_over, B * sizeof(int));
        memcpy(I->h_sum_over, st + o_over + B, B * sizeof(int));
        for (size_t r = 0; r < B; r++) {
            if (I->h_over[r] == 0x7f7f7f7f)
                I->h_over[r] = -1;
            if (I->h_sum_over[r] == 0x7f7f7f7f)
                I->h_sum_over[r] = -1;
        }
    }
    I->err = NULL;
    I->taps = NULL;
    if (I->bad)
        return -1;
    out->batch = batch;
    if (I->emu && hc_emulate_finish_sums(I->emu, batch, I->h_over, I->h_sum_over, out, err))
        return -1;
    return 0;
}

int cuda_taps(void *vi)
{
    (void)vi;
    return 1;
}

void cuda_close(void *vi)
{
    inst_free((inst *)vi);
}

hc_backend_vtbl make_vtbl()
{
    hc_backend_vtbl v;
    memset(&v, 0, sizeof v);
    v.name = "cuda";
    v.shape = HC_BACKEND_TENSOR;
    v.help = "KataGo nets on an NVIDIA GPU (cuBLAS GEMMs, own kernels); params: ref32 (the fp32 "
             "reference itself, bit-identical to ref32: own kernels in its operation order, no cuBLAS), "
             "emulate:PROFILE (emulate:PROFILE's bits on the GPU: docs/EMULATION.md), "
             "fp32 (fp32 everywhere, no TF32) or fp16 (half weights and activations, fp32 accumulation; "
             "calibration knobs ,pool32 ,mid32 ,probs32 ,emulike keep those values fp32; ,plant=LAYER "
             "perturbs one layer, to test the taps); taps every layer it computes; given threads, that many "
             "instances run side by side on their own streams (each with its own weights and scratch on the "
             "GPU), each taking whole batches";
    v.open = cuda_open;
    v.open_opts = cuda_open_opts;
    v.eval = cuda_eval;
    v.close = cuda_close;
    v.taps = cuda_taps;
    v.check = cuda_check;
    /* with threads: several passes at once (each lane on its own thread's stream), each still
     * of the evaluation's whole batch */
    v.lanes = HC_LANES_WHOLE_BATCH;
    return v;
}

} // namespace

extern "C" const hc_backend_vtbl hc_backend_cuda = make_vtbl();
