/* cuda:fp32 and cuda:fp16's own kernels and their launchers (backends/cuda_kernels.h): everything
 * but the GEMMs (cuBLAS), in CUDA's own arithmetic (expf, tanhf, log1pf; nvcc's default
 * contraction of a * b + c), and the few every mode runs (input rows, mask sums, the policy's
 * layout, the planted fault). Not the reference: cuda:ref32's kernels are backends/cuda_ref.cu's. */
extern "C" {
#include "harness/model/model.h"
}
#include "backends/cuda_kernels.h"
#include "backends/cuda_shared.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

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

__global__ void k_round(size_t n, float *x)
{
    GRID_LOOP(i, n) x[i] = __half2float(__float2half_rn(x[i]));
}

/* The planted fault hc_cuda_faults.plant (a test of the taps: the layer's output off by 1/16). */
__global__ void k_plant(size_t n, float *x)
{
    GRID_LOOP(i, n) x[i] *= 1.0625f;
}

__global__ void k_tohalf(size_t n, const float *x, __half *y)
{
    GRID_LOOP(i, n) y[i] = __float2half_rn(x[i]);
}

__global__ void k_bn_act(int C, size_t S, const float *in, float *out, const float *sc,
                         const float *bi, int act, const float *mask, int r16)
{
    ROW_LOOP(c, C, j, S) {
        size_t i = (size_t)c * S + j;
        float v = 0.0f;
        if (mask[j] == 1.0f)
            v = act_f(act, in[i] * sc[c] + bi[c]);
        out[i] = rnd(v, r16);
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

__global__ void k_swiglu(size_t n, float *a, const float *g, int r16)
{
    GRID_LOOP(i, n) {
        float x = a[i];
        a[i] = rnd(x / (1.0f + expf(-x)) * g[i], r16);
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

} // namespace

/* ---- launchers --------------------------------------------------------------------------- */

namespace hck {

void input(int B, int cin, int hw, const float *sp, float *in, float *mask, int r16)
{
    k_input<<<nblocks((size_t)B * cin * hw), 256>>>(B, cin, hw, sp, in, mask, r16);
}

void mask_sum(int B, int hw, const float *mask, float *msum)
{
    k_mask_sum<<<nblocks(B), 256>>>(B, hw, mask, msum);
}

void round16(size_t n, float *x)
{
    k_round<<<nblocks(n), 256>>>(n, x);
}

void plant(size_t n, float *x)
{
    k_plant<<<nblocks(n), 256>>>(n, x);
}

void to_half(size_t n, const float *x, __half *y)
{
    k_tohalf<<<nblocks(n), 256>>>(n, x, y);
}

void im2col(int ic, int B, int nx, int ny, int kh, int kw, const float *in, float *col)
{
    dim3 grid, block;
    launch_im2col_dims(ic, B, nx, ny, kh, kw, &grid, &block);
    k_im2col<float><<<grid, block>>>(ic, B, nx, ny, kh, kw, in, col);
}

void im2col(int ic, int B, int nx, int ny, int kh, int kw, const float *in, __half *col)
{
    dim3 grid, block;
    launch_im2col_dims(ic, B, nx, ny, kh, kw, &grid, &block);
    k_im2col<__half><<<grid, block>>>(ic, B, nx, ny, kh, kw, in, col);
}

void bn_act(int C, size_t S, const float *in, float *out, const float *sc, const float *bi, int act,
            const float *mask, int r16)
{
    k_bn_act<<<row_grid(C, S), 256>>>(C, S, in, out, sc, bi, act, mask, r16);
}

void add_bias_bc(int C, int B, int hw, float *x, const float *bias, int r16)
{
    k_add_bias_bc<<<row_grid(C, (size_t)B * hw), 256>>>(C, B, hw, x, bias, r16);
}

void gpool(int C, int B, int hw, const float *in, const float *mask, const float *msum, float *out, int value_head,
           int r16)
{
    k_gpool<<<nblocks((size_t)B * C * 32), 256>>>(C, B, hw, in, mask, msum, out, value_head, r16);
}

void bias_act_bc(int B, int C, float *x, const float *bias, int act, int r16)
{
    k_bias_act_bc<<<nblocks((size_t)B * C), 256>>>(B, C, x, bias, act, r16);
}

void rmsnorm_pos(int C, size_t S, const float *in, float *out, const float *w, float eps, const float *mask,
                 int r16)
{
    k_rmsnorm_pos<<<nblocks(S), 256>>>(C, S, in, out, w, eps, mask, r16);
}

void rmsnorm_tip(int C, int B, int hw, const float *in, float *out, const float *g, const float *be, float eps,
                 int spatial, int act, const float *mask, int r16)
{
    /* one block of 256 threads per row (the kernel's shared reduction is that wide) */
    k_rmsnorm_tip<<<B, 256>>>(C, B, hw, in, out, g, be, eps, spatial, act, mask, r16);
}

void residual(int C, size_t S, float *x, const float *d, const float *mask, int r16)
{
    k_residual<<<row_grid(C, S), 256>>>(C, S, x, d, mask, r16);
}

void swiglu(size_t n, float *a, const float *g, int r16)
{
    k_swiglu<<<nblocks(n), 256>>>(n, a, g, r16);
}

void rope(int B, int hw, int heads, int hd, int kvh, int learnable, const float *cos_t, const float *sin_t, float *x,
          int r16)
{
    k_rope<<<row_grid(heads * (hd / 2), (size_t)B * hw), 256>>>(B, hw, heads, hd, kvh, learnable, cos_t, sin_t, x,
                                                                r16);
}

void softmax(int B, int hw, float *sc, float *probs, const float *mask, float scale)
{
    k_softmax<float><<<nblocks((size_t)B * hw * 32), 256>>>(B, hw, sc, probs, mask, scale);
}

void softmax(int B, int hw, float *sc, __half *probs, const float *mask, float scale)
{
    k_softmax<__half><<<nblocks((size_t)B * hw * 32), 256>>>(B, hw, sc, probs, mask, scale);
}

void cbp_to_bcp(int C, int B, int hw, const float *in, float *out)
{
    k_cbp_to_bcp<<<nblocks((size_t)C * B * hw), 256>>>(C, B, hw, in, out);
}

} // namespace hck
