/* The device code cuda:fp32/fp16's kernels (backends/cuda_kernels.cu) and cuda:ref32's
 * (backends/cuda_ref.cu) share: the grid loop, the block count, the fp16 store rounding, and the
 * kernels whose arithmetic is the same in both modes (RoPE, the mask sums, im2col, the bias
 * broadcast, the masked residual, the transformer RMSNorm), one source for both.
 *
 * Each of the two files includes this and compiles its own copy under its own flags: cuda_ref.cu
 * with -fmad=false (each product and sum rounded as refs/ rounds them: ref32's bits), cuda_kernels.cu
 * with nvcc's defaults (a * b + c may be fused, as the fp32/fp16 modes always were). So a kernel
 * here gives each mode the bits it gave before; r16 (1: the output rounded to half, fp16 mode) is
 * 0 in ref32 mode, where rnd returns its argument unchanged. Internal linkage: every kernel here
 * is used by both files. */
#ifndef HC_CUDA_SHARED_CUH
#define HC_CUDA_SHARED_CUH

#include <cuda_fp16.h>
#include <stddef.h>

#define GRID_LOOP(i, n) for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
                             i += (size_t)gridDim.x * blockDim.x)

/* blocks of `threads` covering n elements (at least 1, at most 2^30: the grid loops beyond) */
static inline unsigned nblocks(size_t n, int threads = 256)
{
    size_t b = (n + threads - 1) / threads;
    if (b > (1u << 30))
        b = 1u << 30;
    return (unsigned)(b ? b : 1);
}

static __device__ __forceinline__ float rnd(float x, int r16)
{
    return r16 ? __half2float(__float2half_rn(x)) : x;
}

static __device__ __forceinline__ void store(float *p, float v) { *p = v; }
static __device__ __forceinline__ void store(__half *p, float v) { *p = __float2half_rn(v); }

/* col[(i*kh + dy)*kw + dx][b*hw + p] = in[i][b][shifted p] or 0 outside the buffer (refs/conv.c's
 * column order) */
template <typename T>
static __global__ void k_im2col(int ic, int B, int nx, int ny, int kh, int kw, const float *in, T *col)
{
    /* grid: x over the points of a row, y over the columns' rows (c, dy, dx); each thread walks
     * the batch rows, so that a block has work enough to cover its start (one element a thread
     * in blocks of a few hundred made the block scheduling, not the memory, bound the kernel);
     * 32-bit index arithmetic */
    int hw = nx * ny;
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= hw)
        return;
    int py = p / nx, px = p - py * nx;
    size_t S = (size_t)B * hw;
    for (int r = blockIdx.y; r < ic * kh * kw; r += gridDim.y) {
        int dx = r % kw, dy = (r / kw) % kh, c = r / (kw * kh);
        int y = py + dy - kh / 2, x = px + dx - kw / 2;
        int inside = x >= 0 && x < nx && y >= 0 && y < ny;
        const float *src = inside ? in + (size_t)c * B * hw + (size_t)y * nx + x : in;
        T *dst = col + (size_t)r * S + p;
        for (int b = 0; b < B; b++)
            store(dst + (size_t)b * hw, inside ? src[(size_t)b * hw] : 0.0f);
    }
}

/* k_im2col's launch */
static inline void launch_im2col_dims(int ic, int B, int nx, int ny, int kh, int kw, dim3 *grid, dim3 *block)
{
    (void)B;
    int hw = nx * ny, rows = ic * kh * kw;
    *block = dim3(hw < 128 ? 64 : 128);
    *grid = dim3((unsigned)((hw + (int)block->x - 1) / (int)block->x), (unsigned)(rows < 65535 ? rows : 65535), 1);
}

/* Row-major [rows][S] elementwise kernels: a grid of x over S (32-bit, looping where S is
 * larger than the grid), y over the rows (looping past 65535). */
#define ROW_LOOP(r, rows, j, S)                                                                 \
    for (int r = blockIdx.y; r < (rows); r += gridDim.y)                                        \
        for (unsigned j = blockIdx.x * blockDim.x + threadIdx.x; j < (unsigned)(S); j += gridDim.x * blockDim.x)

static inline dim3 row_grid(int rows, size_t S, int threads = 256)
{
    /* about 4096 blocks in all, each thread looping over several elements of its row: blocks
     * of one element a thread cost more to schedule than their memory traffic */
    size_t bx = (S + threads - 1) / threads, cap = (size_t)(rows > 0 && rows < 4096 ? 4096 / rows : 1);
    if (bx > cap)
        bx = cap;
    if (bx > 65535)
        bx = 65535;
    return dim3((unsigned)(bx ? bx : 1), (unsigned)(rows < 65535 ? (rows > 0 ? rows : 1) : 65535));
}

/* the mask's float sum per row in buffer order, as the engine computes it */
static __global__ void k_mask_sum(int B, int hw, const float *mask, float *msum)
{
    GRID_LOOP(b, (size_t)B) {
        float s = 0.0f;
        for (int p = 0; p < hw; p++)
            s += mask[b * hw + p];
        msum[b] = s;
    }
}

/* x[c][b][p] += bias[b][c] */
static __global__ void k_add_bias_bc(int C, int B, int hw, float *x, const float *bias, int r16)
{
    size_t S = (size_t)B * hw;
    ROW_LOOP(c, C, j, S) {
        size_t i = (size_t)c * S + j;
        x[i] = rnd(x[i] + bias[(size_t)(j / (unsigned)hw) * C + c], r16);
    }
}

/* transformer RMSNorm (hc_rmsnorm_cols): one thread per column, the squares summed in channel
 * order; off-board columns 0 */
static __global__ void k_rmsnorm_pos(int C, size_t S, const float *in, float *out, const float *w, float eps,
                                     const float *mask, int r16)
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

static __global__ void k_residual(int C, size_t S, float *x, const float *d, const float *mask, int r16)
{
    ROW_LOOP(c, C, j, S) {
        size_t i = (size_t)c * S + j;
        x[i] = rnd(x[i] + d[i] * mask[j], r16);
    }
}

/* rotates pairs (2p, 2p+1) of every head of x [heads*hd][S] */
static __global__ void k_rope(int B, int hw, int heads, int hd, int kvh, int learnable, const float *cos_t,
                              const float *sin_t, float *x, int r16)
{
    int pairs = hd / 2;
    size_t S = (size_t)B * hw;
    ROW_LOOP(hp, heads * pairs, j, S) {
        int p = hp % pairs, h = hp / pairs;
        size_t t = (size_t)p * hw + j % (unsigned)hw;
        if (learnable)
            t += (size_t)(h * kvh / heads) * pairs * hw;
        float *r0 = x + ((size_t)h * hd + 2 * p) * S + j, *r1 = r0 + S;
        float x0 = *r0, x1 = *r1, c = cos_t[t], s = sin_t[t];
        *r0 = rnd(x0 * c - x1 * s, r16);
        *r1 = rnd(x0 * s + x1 * c, r16);
    }
}

#endif
