/* cuda:ref32's kernels (backends/cuda_ref.h): refs/' fp32 reference arithmetic on an NVIDIA GPU,
 * every output the same operations in the same order as the CPU's, hence the same bits.
 *
 * Why it can be exact: each ref32 output is defined by a scalar order (refs/gemm.h: one fmaf
 * chain over k in order; refs/winograd.c: the transforms' expressions along x, then y;
 * refs/norm_pool.c: sums in buffer or channel order; refs/attention.c: the softmax's max, its
 * exp summed into partial sum ki % 8, the partial sums added 0..7) and a GPU thread can follow
 * it. This file is compiled with -fmad=false -prec-div=true -prec-sqrt=true -ftz=false (the
 * Makefile): no contraction of a * b + c into an FMA, IEEE division and square root,
 * subnormals kept; fmaf is written where the CPU fuses. The transcendental functions are
 * harness/base/hcmath's, from the same source (hcmath_core.inc, hc_expf and HC_EXPF_REDUCE in
 * hcmath.h). Where the CPU evaluates 8 lanes of a vector (vexp8, vmish8, vsilu8, bn_act8),
 * each device function below is one lane's operations.
 *
 * Limits of the claim: NaN payloads (a GPU's arithmetic returns the canonical NaN where x86
 * propagates an operand's), which no finite net produces. */
#include "backends/cuda_ref.h"
#include "backends/cuda_shared.cuh"

extern "C" {
#include "harness/base/hcmath.h"
#include "refs/kernels.h"
#include "harness/model/model.h"
#include "refs/round.h"
}
#include "refs/sums_core.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define HCM(name) hcd_##name
#define HCM_STATIC static __device__
#define HCM_PUBLIC static __device__
#include "harness/base/hcmath_core.inc"

namespace hcref {
namespace {

/* ---- per-element arithmetic (one lane of refs/kernels_impl.h's vector forms) ----------- */

/* vexp8: the input clamped to [-87, 88] as MAXPS / MINPS do (NaN passes), HC_EXPF_REDUCE, 2^k
 * from the exponent bits. */
__device__ __forceinline__ float vexp(float x)
{
    x = -87.0f > x ? -87.0f : x;
    x = 88.0f < x ? 88.0f : x;
    float k, r, p;
    HC_EXPF_REDUCE(x, k, r, p);
    int e = ((int)k + 127) << 23;
    return p * __int_as_float(e);
}

/* vmish8: x * n(n+2) / (n(n+2) + 2), n = exp(min(x, 20)). */
__device__ __forceinline__ float vmish(float x)
{
    float n = vexp(x < 20.0f ? x : 20.0f);
    float q = n * (n + 2.0f);
    return x * (q / (q + 2.0f));
}

__device__ __forceinline__ float vsilu(float x)
{
    return x / (vexp(-x) + 1.0f);
}

__device__ __forceinline__ float mish_softplus(float x)
{
    float lo = x < 20.0f ? x : 20.0f;
    float hi = x > 20.0f ? x : 20.0f;
    return hcd_log1pf(hc_expf(lo)) + (hi - 20.0f);
}

/* hc_act_apply (the scalar form: vectors, and batch norms with mish_scale8) */
__device__ float act_apply(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * hcd_tanhf(mish_softplus(x));
    case HC_ACT_SILU: return x / (hc_expf(-x) + 1.0f);
    case HC_ACT_MISH_SCALE8: return x * hcd_tanhf(mish_softplus(8.0f * x));
    default: return x;
    }
}

/* hc_act_apply_rmstip */
__device__ float act_rmstip(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * hcd_tanhf(x < 20.0f ? hcd_log1pf(hc_expf(x)) : x);
    case HC_ACT_SILU: return x / (1.0f + hc_expf(-x));
    case HC_ACT_MISH_SCALE8: return x * hcd_tanhf(mish_softplus(8.0f * x));
    default: return x;
    }
}

/* bn_act8's lane: v * sc + bi (two roundings), the activation, 0 where the mask is not 1. */
__device__ __forceinline__ float bn_act1(float v, float sc, float bi, int act, float mk)
{
    float x = v * sc + bi, y;
    switch (act) {
    case HC_ACT_IDENTITY: y = x; break;
    case HC_ACT_RELU: y = x > 0.0f ? x : 0.0f; break;
    case HC_ACT_MISH: y = vmish(x); break;
    case HC_ACT_SILU: y = vsilu(x); break;
    default: y = act_apply(act, x); break;
    }
    return mk == 1.0f ? y : 0.0f;
}

/* ---- GEMM: one fmaf chain per output, k in order ---------------------------------------- */

/* BM x BN output tiles (BM 128, 64 or 32, the one that pads M least: 192 channels run as three
 * 64-row tiles, not two of 128), k in steps of 8 through shared memory (double-buffered, the next
 * step's loads in registers while this one computes); each of the 2*BM threads owns TM x TM
 * outputs (two 4x4 quadrants, half a tile apart, when TM is 8) and runs their chains in k order.
 * BN is 128 (TM 8), or 32 (TM 4) for a narrow N: a one-row pass's Winograd tiles (25 columns at
 * 19x19, 9 at 9x9), where 128 columns would leave 80% or more of every thread's chains on
 * padding. A tile's last partial k step runs only its k < K (a product of padding zeros added
 * to a -0 chain would make it +0). As rows are padded by 4 floats: a K-contiguous A
 * (activations) is stored transposed without bank conflicts. */
enum { GBN = 128, GBN_NARROW = 32, GBK = 8 };

template <int BM, int BN, bool SPLIT>
__global__ void __launch_bounds__(2 * BM, BM == 128 ? 2 : 192 / BM) k_gemm(int M, int N, int K, const float *__restrict__ A,
                                                          long long rsa, long long csa, long long sA,
                                                          const float *__restrict__ Bm, long long ldb, long long sB,
                                                          float *C, long long ldc, long long sC, int accumulate)
{
    enum { NT = 2 * BM, TM = BN == GBN ? 8 : 4, NBL = GBK * BN / NT, AP = BM + 4 };
    static_assert(NBL >= 1 && NBL * NT == GBK * BN && (BN / TM) * (BM / TM) == NT, "tile shape");
    __shared__ __align__(16) float As[2][GBK][AP];
    __shared__ __align__(16) float Bs[2][GBK][BN];
    const int z = blockIdx.z;
    A += (long long)z * sA;
    Bm += (long long)z * sB;
    C += (long long)z * sC;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int tid = threadIdx.x, tx = tid % (BN / TM), ty = tid / (BN / TM);
    const bool a_kfast = csa == 1; /* A's k contiguous: consecutive threads read along k */
    float acc[TM][TM];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TM; j++)
            acc[i][j] = 0.0f;
    float lo[SPLIT ? TM : 1][SPLIT ? TM : 1];
    const int khalf = SPLIT && K >= 2 * GBK ? (K / 2) / GBK * GBK : -1;
    float ra[4], rb[NBL];
    auto a_at = [&](int e, int &mm, int &kk) {
        int idx = tid + e * NT;
        if (a_kfast) {
            kk = idx & (GBK - 1);
            mm = idx >> 3;
        } else {
            mm = idx % BM;
            kk = idx / BM;
        }
    };
    auto load = [&](int k0) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int mm, kk;
            a_at(e, mm, kk);
            int gm = m0 + mm, gk = k0 + kk;
            ra[e] = gm < M && gk < K ? A[(long long)gm * rsa + (long long)gk * csa] : 0.0f;
        }
#pragma unroll
        for (int e = 0; e < NBL; e++) {
            int idx = tid + e * NT, nn = idx & (BN - 1), kb = idx / BN;
            int gn = n0 + nn, gkb = k0 + kb;
            rb[e] = gn < N && gkb < K ? Bm[(long long)gkb * ldb + gn] : 0.0f;
        }
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int mm, kk;
            a_at(e, mm, kk);
            As[buf][kk][mm] = ra[e];
        }
#pragma unroll
        for (int e = 0; e < NBL; e++) {
            int idx = tid + e * NT;
            Bs[buf][idx / BN][idx & (BN - 1)] = rb[e];
        }
    };
    auto step = [&](int buf, int kk) {
        float a[TM], b[TM];
#pragma unroll
        for (int h = 0; h < TM / 4; h++) { /* quadrant h: rows and columns h halves of the tile on */
            float4 a4 = *(const float4 *)&As[buf][kk][h * (BM / 2) + ty * 4];
            float4 b4 = *(const float4 *)&Bs[buf][kk][h * (BN / 2) + tx * 4];
            a[4 * h] = a4.x, a[4 * h + 1] = a4.y, a[4 * h + 2] = a4.z, a[4 * h + 3] = a4.w;
            b[4 * h] = b4.x, b[4 * h + 1] = b4.y, b[4 * h + 2] = b4.z, b[4 * h + 3] = b4.w;
        }
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TM; j++)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    };
    load(0);
    stash(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += GBK) {
        if (k0 + GBK < K)
            load(k0 + GBK);
        if (SPLIT && k0 == khalf) {
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TM; j++) {
                    lo[SPLIT ? i : 0][SPLIT ? j : 0] = acc[i][j];
                    acc[i][j] = 0.0f;
                }
        }
        int kn = K - k0 < GBK ? K - k0 : GBK;
        if (kn == GBK) {
#pragma unroll
            for (int kk = 0; kk < GBK; kk++)
                step(buf, kk);
        } else {
            for (int kk = 0; kk < kn; kk++)
                step(buf, kk);
        }
        if (k0 + GBK < K) {
            stash(buf ^ 1);
            __syncthreads();
            buf ^= 1;
        }
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int gm = m0 + (i / 4) * (BM / 2) + ty * 4 + i % 4;
        if (gm >= M)
            continue;
#pragma unroll
        for (int j = 0; j < TM; j++) {
            int gn = n0 + (j / 4) * (BN / 2) + tx * 4 + j % 4;
            if (gn >= N)
                continue;
            float v = acc[i][j];
            if (SPLIT && khalf >= 0)
                v = lo[SPLIT ? i : 0][SPLIT ? j : 0] + v;
            float *c = C + (long long)gm * ldc + gn;
            *c = accumulate ? *c + v : v;
        }
    }
}

template <int BM>
void gemm_bm(int M, int N, int K, const float *A, long long rsa, long long csa, long long sA, const float *B,
             long long ldb, long long sB, float *C, long long ldc, long long sC, int batch, int accumulate, int split)
{
    int narrow = N <= 2 * GBN_NARROW, bn = narrow ? GBN_NARROW : GBN;
    dim3 grid((unsigned)((N + bn - 1) / bn), (unsigned)((M + BM - 1) / BM), (unsigned)batch);
    if (narrow && split)
        k_gemm<BM, GBN_NARROW, true><<<grid, 2 * BM>>>(M, N, K, A, rsa, csa, sA, B, ldb, sB, C, ldc, sC, accumulate);
    else if (narrow)
        k_gemm<BM, GBN_NARROW, false><<<grid, 2 * BM>>>(M, N, K, A, rsa, csa, sA, B, ldb, sB, C, ldc, sC, accumulate);
    else if (split)
        k_gemm<BM, GBN, true><<<grid, 2 * BM>>>(M, N, K, A, rsa, csa, sA, B, ldb, sB, C, ldc, sC, accumulate);
    else
        k_gemm<BM, GBN, false><<<grid, 2 * BM>>>(M, N, K, A, rsa, csa, sA, B, ldb, sB, C, ldc, sC, accumulate);
}

/* ---- Winograd (refs/winograd.c, refs/emulated.c's F(2x2,3x3)) -------------------------------- */

/* The tile arithmetic is refs/wino_tile.inc's, the source the CPU's F(2x2,3x3) runs and
 * tests/test_wino_tile.c checks against refs/winograd.c's kernels: here one thread per tile. */
__device__ __forceinline__ float round_fmt_dev(int fmt, float f);
#define HC_WT_FN static __device__ __forceinline__
#define HC_WT_HOST static inline
#define HC_WT_ROUND16(x) round_fmt_dev(1, (x))
#include "refs/wino_tile.inc"
#undef HC_WT_FN
#undef HC_WT_HOST
#undef HC_WT_ROUND16
static_assert((int)HC_WT_F4 == (int)WINO_F4 && (int)HC_WT_F2_5 == (int)WINO_F2_5 && (int)HC_WT_F2 == (int)WINO_F2,
              "refs/wino_tile.inc and cuda_ref.h number the tilings alike");

/* V[k][i][g] = (B^T d B)[k] of input channel i's tile g (b = g / T), rounded when tiles16.
 * KIND a template argument: the tile loops unroll into registers. */
template <int KIND>
__global__ void k_wino_in(hc_wt_geom w, int ic, const float *__restrict__ in, float *__restrict__ V, int tiles16)
{
    hc_wt_geom_kind(&w, KIND);
    GRID_LOOP(idx, (size_t)ic * w.G) hc_wt_in_at(&w, ic, in, V, (long long)idx, tiles16);
}

/* The output transform of M[k][o][g] (rounded first when tiles16), the epilogue, stored into
 * (or added to) the output planes inside the buffer. */
template <int KIND>
__global__ void k_wino_out(hc_wt_geom w, int oc, const float *__restrict__ Mt, float *out, int accumulate, epi e,
                           int has_epi, int tiles16)
{
    hc_wt_geom_kind(&w, KIND);
    GRID_LOOP(idx, (size_t)oc * w.G) {
        if (!has_epi) {
            hc_wt_out_at(&w, oc, Mt, out, accumulate, (long long)idx, tiles16);
            continue;
        }
        float res[16];
        size_t d0;
        int rmax, cmax, osz = w.step, o = (int)(idx / w.G), b = (int)(((long long)idx % w.G) / w.T);
        hc_wt_out_res(&w, oc, Mt, (long long)idx, tiles16, res, &d0, &rmax, &cmax);
        float *plane = out + (size_t)o * w.B * w.hw;
        float sc = e.scale[o], bi = e.bias[o], rb = e.row_bias ? e.row_bias[(size_t)b * oc + o] : 0.0f;
        for (int r = 0; r < rmax; r++)
            for (int c = 0; c < cmax; c++) {
                float v = res[r * osz + c];
                size_t at = d0 + (size_t)r * w.nx + c;
                if (e.row_bias)
                    v = v + rb;
                v = bn_act1(v, sc, bi, e.act, e.mask[at]);
                plane[at] = accumulate ? plane[at] + v : v;
            }
    }
}

/* One thread per filter f = o * ic + i: its 36 values, U[t][f], consecutive threads' stores
 * adjacent. */
__global__ void k_wino_weights(int k, size_t per, const float *__restrict__ w, float *__restrict__ U)
{
    GRID_LOOP(f, per) {
        float u[36];
        hc_wt_filter(k, w + f * k * k, u);
#pragma unroll
        for (int t = 0; t < 36; t++)
            U[t * per + f] = u[t];
    }
}

/* ---- elementwise, pooling, norms (refs/norm_pool.c) -------------------------------------- */

__global__ void k_bn_act(int C, int B, int hw, const float *in, float *out, const float *sc, const float *bi,
                         int act, const float *mask, const float *row_bias)
{
    size_t S = (size_t)B * hw;
    ROW_LOOP(c, C, j, S) {
        size_t i = (size_t)c * S + j;
        float v = in[i];
        if (row_bias)
            v = v + row_bias[(size_t)(j / (unsigned)hw) * C + c];
        out[i] = bn_act1(v, sc[c], bi[c], act, mask[j]);
    }
}

/* One thread per (row, channel): the sum and masked max one chain over the buffer in order. */
__global__ void k_pool(int C, int B, int hw, const float *in, const float *mask, const float *msum, float *out,
                       int value_head)
{
    GRID_LOOP(i, (size_t)B * C) {
        int c = (int)(i % C), b = (int)(i / C);
        const float *src = in + ((size_t)c * B + b) * hw;
        const float *m = mask + (size_t)b * hw;
        float s = 0.0f, x = -1.0f;
        for (int p = 0; p < hw; p++) {
            float v = src[p];
            s += v;
            float wv = v + (m[p] - 1.0f);
            x = x > wv ? x : wv;
        }
        float div = msum[b];
        float sqrtdiv = sqrtf(div);
        float mean = s / div;
        float *o = out + (size_t)b * 3 * C;
        o[c] = mean;
        o[c + C] = mean * (sqrtdiv - 14.0f) * 0.1f;
        o[c + 2 * C] = value_head ? mean * ((sqrtdiv - 14.0f) * (sqrtdiv - 14.0f) * 0.01f - 0.1f) : x;
    }
}

__global__ void k_bias_act_bc(int B, int C, float *x, const float *bias, int act)
{
    GRID_LOOP(i, (size_t)B * C) {
        float v = x[i];
        if (bias)
            v = v + bias[i % C];
        x[i] = act_apply(act, v);
    }
}

/* hc_rmsnorm_tip's rms: spatial, one per row (positions in order, channels within, on-board
 * only), else one per column. */
__global__ void k_tip_rms_row(int C, int B, int hw, const float *in, const float *mask, float eps, float *rms)
{
    size_t S = (size_t)B * hw;
    GRID_LOOP(b, (size_t)B) {
        float ss = 0.0f;
        int count = 0;
        for (int p = 0; p < hw; p++) {
            size_t col = b * hw + p;
            if (mask[col] == 0.0f)
                continue;
            for (int c = 0; c < C; c++) {
                float v = in[c * S + col];
                ss += v * v;
            }
            count++;
        }
        float total = (float)count * (float)C;
        float r = 1.0f / sqrtf(ss / total + eps);
        for (int p = 0; p < hw; p++)
            rms[b * hw + p] = r;
    }
}

__global__ void k_tip_rms_col(int C, size_t S, const float *in, float eps, float *rms)
{
    GRID_LOOP(j, S) {
        float ss = 0.0f;
        for (int c = 0; c < C; c++) {
            float v = in[(size_t)c * S + j];
            ss += v * v;
        }
        rms[j] = 1.0f / sqrtf(ss / (float)C + eps);
    }
}

__global__ void k_tip_apply(int C, size_t S, const float *in, float *out, const float *g, const float *be, int act,
                            const float *mask, const float *rms)
{
    GRID_LOOP(i, (size_t)C * S) {
        int c = (int)(i / S);
        size_t j = i % S;
        out[i] = mask[j] == 0.0f ? 0.0f : act_rmstip(act, in[i] * rms[j] * g[c] + be[c]);
    }
}

/* The emulated reductions (refs/sums_core.h, refs/emulated.c's loops): pooling one thread per
 * (row, channel), RMSNorm one per column, the spatial tip's scale one per row (its one sum runs
 * sequentially over the row, as the CPU's); a row whose sum is not finite flagged with code. */
__global__ void k_pool_fmt(int fmt, int C, int B, int hw, const float *in, const float *mask, const float *msum,
                           float *out, int value_head, int *over, int code, int plant)
{
    GRID_LOOP(i, (size_t)B * C) {
        int r = hc_sums_pool_thread(fmt, C, B, hw, in, value_head ? NULL : mask, msum, out, i, plant);
        if (r >= 0 && over)
            atomicMin(&over[r], code);
    }
}

__global__ void k_rmsnorm_pos_fmt(int fmt, int C, int B, int hw, const float *in, float *out, const float *w,
                                  float eps, const float *mask, int *over, int code, int plant)
{
    GRID_LOOP(j, (size_t)B * hw) {
        int r = hc_sums_rmsnorm_pos_thread(fmt, C, B, hw, in, out, w, eps, mask, j, plant);
        if (r >= 0 && over)
            atomicMin(&over[r], code);
    }
}

__global__ void k_tip_rms_row_fmt(int fmt, int C, int B, int hw, const float *in, const float *mask, float eps,
                                  float *rms, int *over, int code, int plant)
{
    GRID_LOOP(b, (size_t)B) {
        int r = hc_sums_tip_row_thread(fmt, C, B, hw, in, mask, eps, rms, b, plant);
        if (r >= 0 && over)
            atomicMin(&over[r], code);
    }
}

__global__ void k_tip_rms_col_fmt(int fmt, int C, int B, int hw, const float *in, const float *mask, float eps,
                                  float *rms, int *over, int code, int plant)
{
    GRID_LOOP(j, (size_t)B * hw) {
        int r = hc_sums_tip_col_thread(fmt, C, B, hw, in, mask, eps, rms, j, plant);
        if (r >= 0 && over)
            atomicMin(&over[r], code);
    }
}

__global__ void k_tip_apply_fmt(int fmt, int C, size_t S, const float *in, float *out, const float *g,
                                const float *be, int act, const float *mask, const float *rms)
{
    GRID_LOOP(i, (size_t)C * S) {
        out[i] = mask[i % S] == 0.0f ? 0.0f : act_rmstip(act, hc_sums_tip_apply_thread(fmt, S, in, g, be, rms, i));
    }
}

__global__ void k_swiglu(size_t n, float *a, const float *g)
{
    GRID_LOOP(i, n) {
        float x = a[i];
        a[i] = x / (1.0f + vexp(-x)) * g[i];
    }
}

/* A softmax's queries run on SM_LANES threads each (SM_LANES consecutive lanes of a warp): lane u
 * takes keys u, u + 8, u + 16 ... in order, which are exactly the keys that refs/' strip adds into
 * partial sum u (ki % 8), so every partial sum is the same chain as on the CPU; the maxima are
 * exact whatever the order (a tie differs at most in the sign of a zero maximum, which no
 * difference x - max can see), and the partial sums are added 0..7 in order by every lane. One
 * query per thread ran a 361-key strip three times through on few SMs: the attention's softmax
 * took most of a one-position pass. */
enum { SM_LANES = 8 };

__device__ __forceinline__ float lanes_max(float v)
{
#pragma unroll
    for (int o = SM_LANES / 2; o > 0; o /= 2) {
        float w = __shfl_xor_sync(0xffffffffu, v, o, SM_LANES);
        v = w > v ? w : v;
    }
    return v;
}

__device__ __forceinline__ float lanes_sum_in_order(float part)
{
    float sum = 0.0f;
#pragma unroll
    for (int u = 0; u < SM_LANES; u++)
        sum += __shfl_sync(0xffffffffu, part, u, SM_LANES);
    return sum;
}

/* refs/round.h's hc_round_fp16 and hc_round_bf16, the same integer and float steps (this file
 * is built without FMA contraction and without flush-to-zero, so the subnormal trick's two adds
 * round as on the CPU). fmt: HC_KFMT_* (0 fp32: unchanged). */
__device__ __forceinline__ float round_fmt_dev(int fmt, float f)
{
    if (fmt == 1) {
        unsigned u = __float_as_uint(f);
        unsigned sign = u & 0x80000000u, a = u ^ sign;
        if (a >= 0x7f800000u)
            return a > 0x7f800000u ? __uint_as_float(u | 0x00400000u) : f;
        if (a >= 0x477ff000u)
            return __uint_as_float(sign | 0x7f800000u);
        if (a < 0x38800000u) {
            float r = __fsub_rn(__fadd_rn(__uint_as_float(a), 0.5f), 0.5f);
            return __uint_as_float(__float_as_uint(r) | sign);
        }
        a += 0x0fffu + ((a >> 13) & 1u);
        return __uint_as_float(sign | (a & 0xffffe000u));
    }
    if (fmt == 2) {
        unsigned u = __float_as_uint(f);
        if ((u & 0x7fffffffu) > 0x7f800000u)
            return __uint_as_float(u | 0x00400000u);
        u += 0x7fffu + ((u >> 16) & 1u);
        return __uint_as_float(u & 0xffff0000u);
    }
    return f;
}

__global__ void k_round_fmt(size_t n, float *x, int fmt)
{
    GRID_LOOP(i, n) x[i] = round_fmt_dev(fmt, x[i]);
}

/* ---- fp16 accumulation (cuda:emulate): refs/acc16_core.inc's arithmetic, the CPU's source --- */

#define ACC16(name) hcd_##name
#define ACC16_FN __device__ __forceinline__
#define ACC16_ROUND(fmt, x) round_fmt_dev((fmt), (x))
#define ACC16_EXP(x) vexp(x)
#include "refs/acc16_core.inc"

/* gemm's acc16 form: one thread per output, its acc16_dot (k in order, chunk by chunk). */
__global__ void k_gemm_acc16(int M, int N, int K, const float *__restrict__ A, long long rsa, long long csa,
                             long long sA, const float *__restrict__ Bm, long long ldb, long long sB, float *C,
                             long long ldc, long long sC, int batch, int accumulate, int form, int chunk)
{
    GRID_LOOP(idx, (size_t)batch * M * N) {
        int j = (int)(idx % (size_t)N), i = (int)((idx / (size_t)N) % (size_t)M);
        long long z = (long long)(idx / ((size_t)N * M));
        float v = hcd_acc16_dot(K, A + z * sA + (long long)i * rsa, csa, Bm + z * sB + j, ldb, form, chunk);
        float *c = C + z * sC + (long long)i * ldc + j;
        *c = accumulate ? *c + v : v;
    }
}

/* hc_attention_emul's fp16-accumulation softmax: query qi of row b over sc[b][ki][qi] (the
 * transposed layout changes no operation), a masked-out query all zeros. */
__global__ void k_softmax_acc16(int B, int hw, float *sc, const float *mask, int mrows, float scale, int sfmt,
                                int pfmt)
{
    GRID_LOOP(i, (size_t)B * hw) {
        int b = (int)(i / hw), qi = (int)(i % hw);
        const float *m = mask + (size_t)(b % mrows) * hw;
        float *col = sc + (size_t)b * hw * hw + qi;
        if (m[qi] == 0.0f) {
            for (int ki = 0; ki < hw; ki++)
                col[(size_t)ki * hw] = 0.0f;
            continue;
        }
        hcd_acc16_softmax_row(hw, col, hw, m, scale, sfmt, pfmt);
    }
}

/* backends/emulate.c's hook: a stored tensor rounded, and each row whose on-board values (CBP:
 * where the mask is not 0; BC: all) hold an inf or NaN flagged with the layer's index (the
 * smallest index wins, as the CPU keeps the first layer in the net's order). */
__global__ void k_emu_store(size_t n, float *x, int fmt, int cbp, int C, int B, int hw, const float *mask,
                            int *overflow, int li)
{
    GRID_LOOP(i, n) {
        float v = round_fmt_dev(fmt, x[i]);
        x[i] = v;
        if ((__float_as_uint(v) & 0x7f800000u) == 0x7f800000u) {
            int r;
            bool on = true;
            if (cbp) {
                r = (int)((i / (size_t)hw) % (size_t)B);
                on = mask[(size_t)r * hw + i % (size_t)hw] != 0.0f;
            } else {
                r = (int)(i / (size_t)C);
            }
            if (on)
                atomicMin(&overflow[r], li);
        }
    }
}

/* The attention's softmax, query qi of row b over sc[b][ki][qi] in place (its mask row b %
 * mrows: heads of one row side by side share one), on SM_LANES threads per query:
 * refs/attention.c softmax_cols (hc_attention_emul's path with fp32 accumulation): scores
 * scaled and rounded to sfmt, their max over masked-in keys floored at -1e30, exp(score - max)
 * times the key's mask into partial sum ki % 8, the sums added 0..7, probabilities = e * (1 /
 * sum) rounded to pfmt, 0 for a masked-out query. With sfmt = pfmt = 0 (no rounding) these are
 * the reference's softmax_strip's bits: a positive scale keeps the maximum where it was (max(v) *
 * scale = max(v * scale), rounding being monotonic), and the rest is the same operations. Every
 * thread of a warp reaches the shuffles (no early return). */
__global__ void k_softmax(int B, int hw, float *sc, const float *mask, int mrows, float scale, int sfmt, int pfmt)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x, q = t / SM_LANES;
    int u = (int)(t % SM_LANES);
    bool live = q < (size_t)B * hw;
    int b = live ? (int)(q / hw) : 0, qi = live ? (int)(q % hw) : 0, n = live ? hw : 0;
    const float *m = mask + (size_t)(b % mrows) * hw;
    float *col = sc + (size_t)b * hw * hw + qi;
    float vmx = -1e30f;
    for (int ki = u; ki < n; ki += SM_LANES) {
        float v = round_fmt_dev(sfmt, col[(size_t)ki * hw] * scale);
        col[(size_t)ki * hw] = v;
        if (m[ki] != 0.0f)
            vmx = v > vmx ? v : vmx;
    }
    vmx = lanes_max(vmx);
    float ps = 0.0f;
    for (int ki = u; ki < n; ki += SM_LANES) {
        float mk = m[ki];
        float e = mk != 0.0f ? vexp(col[(size_t)ki * hw] - vmx) * mk : 0.0f;
        col[(size_t)ki * hw] = e;
        ps += e;
    }
    float inv = 1.0f / lanes_sum_in_order(ps);
    bool off = !live || m[qi] == 0.0f;
    for (int ki = u; ki < n; ki += SM_LANES) {
        float *p = col + (size_t)ki * hw;
        float v = round_fmt_dev(pfmt, *p * inv);
        *p = off ? 0.0f : v;
    }
}

} // namespace

/* ---- launchers --------------------------------------------------------------------------- */

void gemm(int M, int N, int K, const float *A, long long rsa, long long csa, long long sA, const float *B,
          long long ldb, long long sB, float *C, long long ldc, long long sC, int batch, int accumulate, int split,
          acc16 acc)
{
    if (M < 1 || N < 1 || batch < 1)
        return;
    if (acc.form) {
        size_t n = (size_t)batch * M * N;
        k_gemm_acc16<<<nblocks(n), 256>>>(M, N, K, A, rsa, csa, sA, B, ldb, sB, C, ldc, sC, batch, accumulate,
                                         acc.form, acc.chunk);
        return;
    }
    if (K < 1) { /* empty chains: +0 (or C unchanged plus +0) */
        split = 0;
    }
    /* the tile height that pads M least (the larger on a tie) */
    int pad128 = (M + 127) / 128 * 128, pad64 = (M + 63) / 64 * 64, pad32 = (M + 31) / 32 * 32;
    if (pad128 <= pad64 && pad128 <= pad32)
        gemm_bm<128>(M, N, K, A, rsa, csa, sA, B, ldb, sB, C, ldc, sC, batch, accumulate, split);
    else if (pad64 <= pad32)
        gemm_bm<64>(M, N, K, A, rsa, csa, sA, B, ldb, sB, C, ldc, sC, batch, accumulate, split);
    else
        gemm_bm<32>(M, N, K, A, rsa, csa, sA, B, ldb, sB, C, ldc, sC, batch, accumulate, split);
}

size_t wino_ws(int kind, int ic, int oc, int B, int nx, int ny)
{
    hc_wt_geom w = hc_wt_geom_make(kind, B, nx, ny);
    return (size_t)w.nk * (size_t)(ic + oc) * (size_t)w.G;
}

template <int KIND>
void wino_launch(const hc_wt_geom &w, int ic, int oc, const float *in, const float *U, float *out, int accumulate,
                 const epi *e, float *ws, int split, acc16 acc, int tiles16, int plant)
{
    float *V = ws, *Mt = ws + (size_t)w.nk * ic * w.G;
    k_wino_in<KIND><<<nblocks((size_t)ic * w.G), 256>>>(w, ic, in, V, tiles16);
    /* M[k] = U[k] V[k]: U[k] [oc][ic], V[k] [ic][G] */
    gemm(oc, (int)w.G, ic, U, ic, 1, (long long)oc * ic, V, w.G, (long long)ic * w.G, Mt, w.G, (long long)oc * w.G,
         w.nk, 0, split, acc);
    epi none = {NULL, NULL, 0, NULL, NULL};
    k_wino_out<KIND><<<nblocks((size_t)oc * w.G), 256>>>(w, oc, Mt, out, accumulate, e ? *e : none, e != NULL,
                                                          tiles16 && !plant);
}

void wino_conv(int kind, int ic, int oc, int B, int nx, int ny, const float *in, const float *U, float *out,
               int accumulate, const epi *e, float *ws, int split, acc16 acc, int tiles16, int plant)
{
    hc_wt_geom w = hc_wt_geom_make(kind, B, nx, ny);
    if (kind == WINO_F2)
        wino_launch<WINO_F2>(w, ic, oc, in, U, out, accumulate, e, ws, split, acc, tiles16, plant);
    else if (kind == WINO_F2_5)
        wino_launch<WINO_F2_5>(w, ic, oc, in, U, out, accumulate, e, ws, split, acc, tiles16, plant);
    else
        wino_launch<WINO_F4>(w, ic, oc, in, U, out, accumulate, e, ws, split, acc, tiles16, plant);
}

void wino_weights(int k, int oc, int ic, const float *w, float *U)
{
    size_t per = (size_t)oc * ic;
    k_wino_weights<<<nblocks(per), 256>>>(k, per, w, U);
}

size_t direct_ws(int ic, int kh, int kw, int B, int nx, int ny)
{
    return (size_t)ic * kh * kw * (size_t)B * nx * ny;
}

void direct_conv(int ic, int oc, int kh, int kw, int B, int nx, int ny, const float *in, const float *w,
                 float *out, int accumulate, float *ws, int split, acc16 acc)
{
    size_t S = (size_t)B * nx * ny;
    int K = ic * kh * kw;
    dim3 grid, block;
    launch_im2col_dims(ic, B, nx, ny, kh, kw, &grid, &block);
    k_im2col<<<grid, block>>>(ic, B, nx, ny, kh, kw, in, ws);
    gemm(oc, (int)S, K, w, K, 1, 0, ws, (long long)S, 0, out, (long long)S, 0, 1, accumulate, split, acc);
}

void bn_act(int C, int B, int hw, const float *in, float *out, const float *scale, const float *bias, int act,
            const float *mask, const float *row_bias)
{
    k_bn_act<<<row_grid(C, (size_t)B * hw), 256>>>(C, B, hw, in, out, scale, bias, act, mask, row_bias);
}

void add_bias_bc(int C, int B, int hw, float *x, const float *bias)
{
    k_add_bias_bc<<<row_grid(C, (size_t)B * hw), 256>>>(C, B, hw, x, bias, 0);
}

void pool(int C, int B, int hw, const float *in, const float *mask, const float *msum, float *out, int value_head)
{
    k_pool<<<nblocks((size_t)B * C, 128), 128>>>(C, B, hw, in, mask, msum, out, value_head);
}

void bias_act_bc(int B, int C, float *x, const float *bias, int act)
{
    k_bias_act_bc<<<nblocks((size_t)B * C), 256>>>(B, C, x, bias, act);
}

void rmsnorm_pos(int C, size_t S, const float *in, float *out, const float *w, float eps, const float *mask)
{
    k_rmsnorm_pos<<<nblocks(S, 128), 128>>>(C, S, in, out, w, eps, mask, 0);
}

void rmsnorm_tip(int C, int B, int hw, const float *in, float *out, const float *gamma, const float *beta,
                 float eps, int spatial, int act, const float *mask, float *ws)
{
    size_t S = (size_t)B * hw;
    if (spatial)
        k_tip_rms_row<<<nblocks((size_t)B, 64), 64>>>(C, B, hw, in, mask, eps, ws);
    else
        k_tip_rms_col<<<nblocks(S, 128), 128>>>(C, S, in, eps, ws);
    k_tip_apply<<<nblocks((size_t)C * S), 256>>>(C, S, in, out, gamma, beta, act, mask, ws);
}

void pool_fmt(int fmt, int C, int B, int hw, const float *in, const float *mask, const float *msum, float *out,
              int value_head, int *over, int code, int plant)
{
    k_pool_fmt<<<nblocks((size_t)B * C, 128), 128>>>(fmt, C, B, hw, in, mask, msum, out, value_head, over, code,
                                                     plant);
}

void rmsnorm_pos_fmt(int fmt, int C, int B, int hw, const float *in, float *out, const float *w, float eps,
                     const float *mask, int *over, int code, int plant)
{
    k_rmsnorm_pos_fmt<<<nblocks((size_t)B * hw, 128), 128>>>(fmt, C, B, hw, in, out, w, eps, mask, over, code,
                                                             plant);
}

void rmsnorm_tip_fmt(int fmt, int C, int B, int hw, const float *in, float *out, const float *gamma,
                     const float *beta, float eps, int spatial, int act, const float *mask, float *ws, int *over,
                     int code, int plant)
{
    size_t S = (size_t)B * hw;
    if (spatial)
        k_tip_rms_row_fmt<<<nblocks((size_t)B, 64), 64>>>(fmt, C, B, hw, in, mask, eps, ws, over, code, plant);
    else
        k_tip_rms_col_fmt<<<nblocks(S, 128), 128>>>(fmt, C, B, hw, in, mask, eps, ws, over, code, plant);
    k_tip_apply_fmt<<<nblocks((size_t)C * S), 256>>>(fmt, C, S, in, out, gamma, beta, act, mask, ws);
}

void residual(int C, size_t S, float *x, const float *d, const float *mask)
{
    k_residual<<<row_grid(C, S), 256>>>(C, S, x, d, mask, 0);
}

void swiglu(size_t n, float *a, const float *g)
{
    k_swiglu<<<nblocks(n), 256>>>(n, a, g);
}

void rope(int B, int hw, int heads, int hd, int kvh, int learnable, const float *cos_t, const float *sin_t,
          float *x)
{
    k_rope<<<row_grid(heads * (hd / 2), (size_t)B * hw), 256>>>(B, hw, heads, hd, kvh, learnable, cos_t, sin_t, x,
                                                                0);
}

void mask_sum(int B, int hw, const float *mask, float *msum)
{
    k_mask_sum<<<nblocks((size_t)B, 64), 64>>>(B, hw, mask, msum);
}

void round_fmt(size_t n, float *x, int fmt)
{
    if (fmt && n)
        k_round_fmt<<<nblocks(n), 256>>>(n, x, fmt);
}

void emu_store(size_t n, float *x, int fmt, int cbp, int C, int B, int hw, const float *mask, int *overflow, int li)
{
    if (n)
        k_emu_store<<<nblocks(n), 256>>>(n, x, fmt, cbp, C, B, hw, mask, overflow, li);
}

void attention_head(int B, int hw, int qd, int vd, const float *q, const float *k, const float *v,
                    const float *mask, float *out, float *sc, int split, int sfmt, int pfmt, acc16 acc,
                    head_batch hb)
{
    long long S = (long long)B * hw, hh = (long long)hw * hw;
    float scale = 1.0f / sqrtf((float)qd);
    /* the GEMMs' and the softmax's batch: B rows of one head, or the heads of one row, each
     * with its operands' strides and the mask row it reads */
    int many = hb.heads > 1, nb = many ? hb.heads : B, mrows = many ? 1 : B;
    long long sq = many ? hb.sq : hw, sk = many ? hb.sk : hw, sv = many ? hb.sv : hw, so = many ? hb.so : hw;
    if (acc.form) {
        /* refs/attention.c's acc16 path: sc[b][ki][qi] = acc16 over d of q(d, qi) k(d, ki) (the
         * products commute), softmax_row per query, out[d][b,qi] = acc16 over ki of v(d, ki) p(qi, ki) */
        gemm(hw, hw, qd, k, 1, S, sk, q, S, sq, sc, hw, hh, nb, 0, 0, acc);
        k_softmax_acc16<<<nblocks((size_t)nb * hw, 128), 128>>>(nb, hw, sc, mask, mrows, scale, sfmt, pfmt);
        gemm(vd, hw, hw, v, S, 1, sv, sc, hw, hh, out, S, so, nb, 0, 0, acc);
        return;
    }
    /* sc[b][ki][qi] = sum_d k[d][b,ki] q[d][b,qi]: the CPU's score chains */
    gemm(hw, hw, qd, k, 1, S, sk, q, S, sq, sc, hw, hh, nb, 0, split);
    k_softmax<<<nblocks((size_t)nb * hw * SM_LANES, 128), 128>>>(nb, hw, sc, mask, mrows, scale, sfmt, pfmt);
    /* out[d][b,qi] = sum_ki v[d][b,ki] p[b][ki][qi] */
    gemm(vd, hw, hw, v, S, 1, sv, sc, hw, hh, out, S, so, nb, 0, split);
}

} // namespace hcref
