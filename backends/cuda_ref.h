/* The GPU reference's kernels (backends/cuda_ref.cu), for backends/cuda.cu's ref32 mode: every
 * output the operations of refs/' scalar order (gemm.h's one FMA chain over k in order per output,
 * winograd.c's transforms, norm_pool.c's sums, attention.c's softmax strips, hcmath's exp, log
 * and tanh), so that cuda:ref32 gives ref32's bits. C++ only (nvcc); pointers are device memory,
 * layouts refs/kernels.h's (CBP spatial, BC vectors). Launchers enqueue on the default stream and
 * return without synchronizing; the caller checks cudaGetLastError. */
#ifndef HC_CUDA_REF_H
#define HC_CUDA_REF_H

#include <stddef.h>

namespace hcref {

/* fp16 accumulation of a GEMM (cuda:emulate, refs/acc16_core.inc): form 0 none (gemm's fp32
 * chain), else refs/kernels.h HC_ACC16_FUSED (convolutions, as hc_sgemm_acc16) or
 * HC_ACC16_MULADD (matmuls and attention, as hc_gemm_acc16_strided); chunk: products per fp32
 * chunk (HC_ACC16_CHUNK; the tests plant another). */
struct acc16 {
    int form, chunk;
};

/* C_z[i][j] = (C_z[i][j] + when accumulate) acc(i, j), acc one fmaf chain over k = 0..K-1 from
 * +0 of A_z[i*rsa + k*csa] * B_z[k*ldb + j], for z < batch (A_z = A + z*sA ...). split (a planted
 * reorder for the tests, never set otherwise): k summed in two halves added at the end. With
 * acc.form: acc is refs/acc16_core.inc's acc16_dot of that form and chunk (split ignored). */
void gemm(int M, int N, int K, const float *A, long long rsa, long long csa, long long sA, const float *B,
          long long ldb, long long sB, float *C, long long ldc, long long sC, int batch, int accumulate,
          int split, acc16 acc = acc16{0, 0});

/* hc_kepi (refs/kernels.h): a batch norm and activation applied to a convolution's output. */
struct epi {
    const float *scale, *bias;
    int act;
    const float *mask;
    const float *row_bias; /* [B][oc] added first, or NULL */
};

/* Winograd convolutions, the tile arithmetic refs/wino_tile.inc's (the CPU's own for F(2x2,3x3)):
 * kind WINO_F4 F(4x4,3x3) or WINO_F2_5 F(2x2,5x5) as refs/winograd.c computes them, U the
 * transformed weights [36][oc][ic] (hc_kconv_use_winograd's); WINO_F2 F(2x2,3x3) as
 * refs/emulated.c does (the emulation's), U [16][oc][ic] (hc_kconv_use_winograd2's). acc: the
 * tile GEMMs' fp16 accumulation (gemm's). tiles16: the emulation's fp16 tiles
 * (hc_kconv_set_modes' tiles_fp16: V and M rounded; U comes rounded). plant (tests only, a
 * planted moved rounding point, hc_cuda_faults.tiles): with tiles16, the products M are left
 * unrounded. ws wino_ws floats. */
enum { WINO_F4 = 0, WINO_F2_5 = 1, WINO_F2 = 2 };
size_t wino_ws(int kind, int ic, int oc, int B, int nx, int ny);
void wino_conv(int kind, int ic, int oc, int B, int nx, int ny, const float *in, const float *U, float *out,
               int accumulate, const epi *e, float *ws, int split, acc16 acc = acc16{0, 0}, int tiles16 = 0,
               int plant = 0);

/* U [36][oc][ic]: the 6x6 tilings' weights of the filters w [oc][ic][k][k] (k 3: WINO_F4, 5:
 * WINO_F2_5) by refs/wino_tile.inc's hc_wt_filter, hc_kconv_use_winograd's arithmetic: the
 * host's bits, computed where they are used instead of uploaded at 4x (3x3) the raw size. */
void wino_weights(int k, int oc, int ic, const float *w, float *U);

/* Any other odd kernel: im2col (refs/conv.c's column order) + gemm. ws direct_ws floats. */
size_t direct_ws(int ic, int kh, int kw, int B, int nx, int ny);
void direct_conv(int ic, int oc, int kh, int kw, int B, int nx, int ny, const float *in, const float *w,
                 float *out, int accumulate, float *ws, int split, acc16 acc = acc16{0, 0});

/* refs/kernels.h's kernels of the same names, the same per-element arithmetic. */
void bn_act(int C, int B, int hw, const float *in, float *out, const float *scale, const float *bias, int act,
            const float *mask, const float *row_bias);
void add_bias_bc(int C, int B, int hw, float *x, const float *bias);
void pool(int C, int B, int hw, const float *in, const float *mask, const float *msum, float *out,
          int value_head);
void bias_act_bc(int B, int C, float *x, const float *bias, int act);
void rmsnorm_pos(int C, size_t S, const float *in, float *out, const float *w, float eps, const float *mask);
/* ws: B*hw floats */
void rmsnorm_tip(int C, int B, int hw, const float *in, float *out, const float *gamma, const float *beta,
                 float eps, int spatial, int act, const float *mask, float *ws);
void residual(int C, size_t S, float *x, const float *d, const float *mask);
void swiglu(size_t n, float *a, const float *g);
void rope(int B, int hw, int heads, int hd, int kvh, int learnable, const float *cos_t, const float *sin_t,
          float *x);
void mask_sum(int B, int hw, const float *mask, float *msum);

/* Heads of one row run side by side (B 1): `heads` of them, head j's q and out at q + j * sq
 * and out + j * so, its k and v at k + j * sk and v + j * sv (0: the heads share one kv head).
 * heads 1: one head. */
struct head_batch {
    int heads;
    long long sq, sk, sv, so;
};

/* The exact attention of one head over B rows (refs/attention.c): q, k, v, out the head's rows
 * in [d][S] planes (S = B*hw), sc B*hw*hw floats of scratch; or, hb.heads > 1 with B 1, of
 * hb.heads heads of the row at once (sc hb.heads*hw*hw floats), each head's own chains, so the
 * same bits in a third of the launches or fewer. sfmt, pfmt (HC_KFMT_*; 0 0: the exact
 * attention): hc_attention_emul's scores and probabilities rounded to those formats (its
 * fp32-accumulation path, refs/attention.c softmax_cols). acc.form HC_ACC16_MULADD: its
 * fp16-accumulation path instead (q.k and p.v by acc16, softmax_row's lanes). */
void attention_head(int B, int hw, int qd, int vd, const float *q, const float *k, const float *v,
                    const float *mask, float *out, float *sc, int split, int sfmt = 0, int pfmt = 0,
                    acc16 acc = acc16{0, 0}, head_batch hb = head_batch{1, 0, 0, 0, 0});

/* The emulated reductions (poolSum, normSum: refs/kernels.h hc_pool_*_fmt, hc_rmsnorm_*_fmt),
 * one thread per output calling refs/sums_core.h's functions, the CPU's own arithmetic. fmt:
 * HC_KFMT_*; over (NULL: not wanted) [B]: a row whose sum is not finite gets
 * over[r] = min(over[r], code) (the caller's encoding of the layer and what overflowed); plant:
 * sums_core.h's planted moved rounding point (tests only). pool_fmt: value_head as pool's. */
void pool_fmt(int fmt, int C, int B, int hw, const float *in, const float *mask, const float *msum, float *out,
              int value_head, int *over, int code, int plant);
void rmsnorm_pos_fmt(int fmt, int C, int B, int hw, const float *in, float *out, const float *w, float eps,
                     const float *mask, int *over, int code, int plant);
/* ws: B*hw floats */
void rmsnorm_tip_fmt(int fmt, int C, int B, int hw, const float *in, float *out, const float *gamma,
                     const float *beta, float eps, int spatial, int act, const float *mask, float *ws, int *over,
                     int code, int plant);

/* Emulated storage (cuda:emulate:PROFILE, backends/emulate.c's arithmetic): x[0..n) rounded to
 * fmt (HC_KFMT_*, refs/round.h's bits). */
void round_fmt(size_t n, float *x, int fmt);
/* The emulation's hook on a stored tensor: rounded to fmt, and overflow[r] = min(overflow[r], li)
 * for each row r holding an inf or NaN (cbp: a [C][B][hw] tensor, on-board points only, mask
 * [B][hw]; else [B][C]). */
void emu_store(size_t n, float *x, int fmt, int cbp, int C, int B, int hw, const float *mask, int *overflow, int li);

} // namespace hcref

#endif
