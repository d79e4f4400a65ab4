/* The forward pass's own kernels (backends/cuda_kernels.cu), for backends/cuda_graph.cu: the
 * layers of cuda:fp32 and cuda:fp16 (cuBLAS does their GEMMs), and what every mode runs (the
 * input rows, the mask sums, the policy's layout, the planted fault). C++ only (nvcc); pointers
 * are device memory, layouts refs/kernels.h's (CBP spatial [C][B][hw], BC vectors [B][C]). r16:
 * the output rounded to half (fp16 mode stores half values in float buffers). Launchers enqueue on
 * the calling thread's stream (--default-stream per-thread) and return without synchronizing; the
 * caller checks cudaGetLastError. */
#ifndef HC_CUDA_KERNELS_H
#define HC_CUDA_KERNELS_H

#include <cuda_fp16.h>
#include <stddef.h>

namespace hck {

/* spatial rows [B][cin][hw] -> in CBP (rounded per r16), mask [B][hw] = channel 0 */
void input(int B, int cin, int hw, const float *sp, float *in, float *mask, int r16);
/* msum[b]: the float sum of mask row b in buffer order, as the engine computes it */
void mask_sum(int B, int hw, const float *mask, float *msum);
/* x rounded to half in place */
void round16(size_t n, float *x);
/* the planted fault hc_cuda_faults.plant: x *= 1.0625 */
void plant(size_t n, float *x);
void to_half(size_t n, const float *x, __half *y);
/* col[(i*kh + dy)*kw + dx][b*hw + p] = in[i][b][shifted p] or 0 (float, or half for fp16 GEMMs) */
void im2col(int ic, int B, int nx, int ny, int kh, int kw, const float *in, float *col);
void im2col(int ic, int B, int nx, int ny, int kh, int kw, const float *in, __half *col);
/* out = act(in * sc[c] + bi[c]) where mask is 1, else 0 (CUDA's expf, log1pf, tanhf) */
void bn_act(int C, size_t S, const float *in, float *out, const float *sc, const float *bi, int act,
            const float *mask, int r16);
/* x[c][b][p] += bias[b][c] */
void add_bias_bc(int C, int B, int hw, float *x, const float *bias, int r16);
/* KataGo's global pooling, one warp per (row, channel): [B][3C] mean, scaled mean, max (or the
 * value head's second scaled mean) */
void gpool(int C, int B, int hw, const float *in, const float *mask, const float *msum, float *out, int value_head,
           int r16);
/* x[b][c] = act(x[b][c] + bias[c]) (bias NULL: none) */
void bias_act_bc(int B, int C, float *x, const float *bias, int act, int r16);
void rmsnorm_pos(int C, size_t S, const float *in, float *out, const float *w, float eps, const float *mask,
                 int r16);
/* trunk-tip RMSNorm (spatial: one scale per row over its on-board points), then act */
void rmsnorm_tip(int C, int B, int hw, const float *in, float *out, const float *g, const float *be, float eps,
                 int spatial, int act, const float *mask, int r16);
/* x += d * mask */
void residual(int C, size_t S, float *x, const float *d, const float *mask, int r16);
/* a = silu(a) * g */
void swiglu(size_t n, float *a, const float *g, int r16);
void rope(int B, int hw, int heads, int hd, int kvh, int learnable, const float *cos_t, const float *sin_t, float *x,
          int r16);
/* masked softmax of the rows sc[b][q][:] scaled by scale (sc overwritten), into probs (float, or
 * half for fp16 GEMMs); masked-out queries give rows of 0 */
void softmax(int B, int hw, float *sc, float *probs, const float *mask, float scale);
void softmax(int B, int hw, float *sc, __half *probs, const float *mask, float scale);
/* CBP [C][B][hw] -> [B][C][hw] */
void cbp_to_bcp(int C, int B, int hw, const float *in, float *out);

} // namespace hck

#endif
