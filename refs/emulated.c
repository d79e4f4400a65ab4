/* Reduced-precision kernels that only the emulate backend's modes reach; the reference never calls them. */
#include "refs/kernels.h"
#include "refs/kernels_impl.h"
#include "refs/acc16.h"
#include "refs/gemm.h"
#include "refs/round.h"
#include "refs/sums_core.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HC_WT_FN static inline
#define HC_WT_HOST static inline
#define HC_WT_ROUND16(x) hc_round_fp16(x)
#include "refs/wino_tile.inc"

void hc_kconv_set_modes(hc_kconv *cv, int acc_fp16, int tiles_fp16)
{
    if (acc_fp16) /* its GEMMs read the weights as [36][oc][ic] */
        hc_wino_unpack(cv);
    cv->acc_fp16 = acc_fp16 != 0;
    cv->tiles_fp16 = tiles_fp16 != 0 && (cv->wino || cv->wino2) && cv->kh == 3;
    if (cv->tiles_fp16 && cv->wino2)
        hc_round_fp16_array(cv->wino2, (size_t)16 * cv->oc * cv->ic);
    else if (cv->tiles_fp16)
        hc_round_fp16_array(cv->wino, (size_t)36 * cv->oc * cv->ic);
}

void hc_sgemm_acc16(int M, int N, int K, const float *A, int lda, const float *B, int ldb, float *C, int ldc,
                    float *tmp)
{
    for (int k0 = 0; k0 < K; k0 += HC_ACC16_CHUNK) {
        int kc = K - k0 < HC_ACC16_CHUNK ? K - k0 : HC_ACC16_CHUNK;
        hc_gemm(M, N, kc, A + k0, (size_t)lda, 1, B + (size_t)k0 * ldb, (size_t)ldb, tmp, (size_t)N, 0);
        for (int i = 0; i < M; i++) {
            float *c = C + (size_t)i * ldc;
            const float *t = tmp + (size_t)i * N;
            for (int j = 0; j < N; j++) /* the fold the GPU shares (acc16_core.inc) */
                c[j] = k0 ? hc_acc16_add(c[j], t[j]) : hc_round_fp16(t[j]);
        }
    }
}

/* ---- Winograd F(2x2,3x3) (emulation of MLX's convolution) ---- */

int hc_kconv_use_winograd2(hc_kconv *cv, hc_err *err)
{
    if (cv->kh != 3 || cv->kw != 3 || cv->wino2)
        return 0;
    size_t per = (size_t)cv->oc * cv->ic;
    cv->wino2 = hc_malloc(16 * per * sizeof(float), err, "winograd F(2x2) weights");
    if (!cv->wino2)
        return -1;
    static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    for (int o = 0; o < cv->oc; o++)
        for (int i = 0; i < cv->ic; i++) {
            const float *g = cv->w + ((size_t)o * cv->ic + i) * 9;
            double t[3][4]; /* g G^T: along x first */
            for (int y = 0; y < 3; y++)
                for (int c = 0; c < 4; c++)
                    t[y][c] = G[c][0] * g[y * 3] + G[c][1] * g[y * 3 + 1] + G[c][2] * g[y * 3 + 2];
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++)
                    cv->wino2[(size_t)(r * 4 + c) * per + (size_t)o * cv->ic + i] =
                        (float)(G[r][0] * t[0][c] + G[r][1] * t[1][c] + G[r][2] * t[2][c]);
        }
    free(cv->wino);
    cv->wino = NULL;
    return 0;
}

/* F(2x2,3x3) of one batch row b, scalar: V = B^T d B per input tile, 16 GEMMs
 * M[k] = U[k] V[k] (oc x T x ic), Y = A^T M A; fp16 tiles round V before and M after the
 * GEMMs, as MLX stores them. The tile arithmetic is wino_tile.inc's, which the GPU's
 * cuda:emulate runs too (one source). */
static void wino2_row(const hc_kconv *cv, int batch, int b, int nx, int ny, const float *in, float *out,
                      int accumulate, float *ws)
{
    int hw = nx * ny, txn = (nx + 1) / 2, T = ((nx + 1) / 2) * ((ny + 1) / 2);
    float *V = ws, *M = ws + (size_t)16 * cv->ic * T;
    for (int i = 0; i < cv->ic; i++) {
        const float *src = in + ((size_t)i * batch + b) * hw;
        for (int t = 0; t < T; t++) {
            int y0 = (t / txn) * 2 - 1, x0 = (t % txn) * 2 - 1;
            float d[16], v[16];
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++) {
                    int y = y0 + r, x = x0 + c;
                    d[r * 4 + c] = y >= 0 && y < ny && x >= 0 && x < nx ? src[(size_t)y * nx + x] : 0.0f;
                }
            hc_wt_in_tile(HC_WT_F2, d, v, cv->tiles_fp16);
            for (int k = 0; k < 16; k++)
                V[((size_t)k * cv->ic + i) * T + t] = v[k];
        }
    }
    size_t per = (size_t)cv->oc * cv->ic;
    for (int k = 0; k < 16; k++) {
        if (cv->acc_fp16)
            hc_sgemm_acc16(cv->oc, T, cv->ic, cv->wino2 + (size_t)k * per, cv->ic, V + (size_t)k * cv->ic * T, T,
                        M + (size_t)k * cv->oc * T, T, M + (size_t)16 * cv->oc * T);
        else
            hc_gemm(cv->oc, T, cv->ic, cv->wino2 + (size_t)k * per, (size_t)cv->ic, 1, V + (size_t)k * cv->ic * T,
                    (size_t)T, M + (size_t)k * cv->oc * T, (size_t)T, 0);
    }
    for (int o = 0; o < cv->oc; o++) {
        float *dst = out + ((size_t)o * batch + b) * hw;
        for (int t = 0; t < T; t++) {
            int ty = t / txn, tx = t % txn;
            float m[16], y2[4];
            for (int k = 0; k < 16; k++)
                m[k] = M[((size_t)k * cv->oc + o) * T + t];
            hc_wt_out_tile(HC_WT_F2, m, y2, cv->tiles_fp16);
            for (int r = 0; r < 2; r++)
                for (int c = 0; c < 2; c++) {
                    int y = ty * 2 + r, x = tx * 2 + c;
                    if (y >= ny || x >= nx)
                        continue;
                    float *p = dst + (size_t)y * nx + x;
                    *p = accumulate ? *p + y2[r * 2 + c] : y2[r * 2 + c];
                }
        }
    }
}

size_t hc_wino2_workspace(const hc_kconv *cv, int nx, int ny)
{
    /* V [16][ic][T] and M [16][oc][T] of one row (+ an fp16-accumulation chunk) */
    return (size_t)(16 * (cv->ic + cv->oc) + (cv->acc_fp16 ? cv->oc : 0)) * (size_t)(((nx + 1) / 2) * ((ny + 1) / 2));
}

void hc_wino2_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out, int accumulate,
                  float *ws)
{
    for (int b = 0; b < batch; b++)
        wino2_row(cv, batch, b, nx, ny, in, out, accumulate, ws);
}

/* The emulated reductions: loops over refs/sums_core.h's per-output functions, which
 * backends/cuda_ref.cu's kernels call too (one source for the CPU and the GPU). */

void hc_pool_gpool_fmt(int fmt, int channels, int batch, int hw, const float *in, const float *mask,
                       const float *mask_sum, float *out, unsigned char *row_bad)
{
    for (int b = 0; b < batch; b++)
        for (int c = 0; c < channels; c++)
            if (hc_sums_pool_one(fmt, channels, batch, hw, in, mask, mask_sum[b], b, c, out, 0) && row_bad)
                row_bad[b] = 1;
}

void hc_pool_value_fmt(int fmt, int channels, int batch, int hw, const float *in, const float *mask_sum,
                       float *out, unsigned char *row_bad)
{
    for (int b = 0; b < batch; b++)
        for (int c = 0; c < channels; c++)
            if (hc_sums_pool_one(fmt, channels, batch, hw, in, NULL, mask_sum[b], b, c, out, 0) && row_bad)
                row_bad[b] = 1;
}

void hc_rmsnorm_pos_fmt(int fmt, int channels, int batch, int hw, const float *in, float *out,
                        const float *weight, float eps, const float *mask, unsigned char *row_bad)
{
    size_t cs = (size_t)batch * hw;
    for (size_t j = 0; j < cs; j++)
        if (hc_sums_rmsnorm_col(fmt, channels, cs, in, out, weight, eps, mask[j], j, 0) && row_bad)
            row_bad[j / (size_t)hw] = 1;
}

void hc_rmsnorm_tip_fmt(int fmt, int channels, int batch, int hw, const float *in, float *out,
                        const float *gamma, const float *beta, float eps, int spatial, int act,
                        const float *mask, unsigned char *row_bad)
{
    size_t cs = (size_t)batch * hw;
    for (int b = 0; b < batch; b++) {
        float rms_row = 0.0f;
        int bad = 0;
        if (spatial) {
            rms_row = hc_sums_tip_row_rms(fmt, channels, batch, hw, in, mask, eps, b, &bad, 0);
            if (row_bad && bad)
                row_bad[b] = 1;
        }
        for (int p = 0; p < hw; p++) {
            size_t col = (size_t)b * hw + p;
            if (mask[col] == 0.0f) {
                for (int c = 0; c < channels; c++)
                    out[c * cs + col] = 0.0f;
                continue;
            }
            float rms = rms_row;
            if (!spatial) {
                rms = hc_sums_tip_col_rms(fmt, channels, cs, in, eps, col, &bad, 0);
                if (row_bad && bad)
                    row_bad[b] = 1;
            }
            for (int c = 0; c < channels; c++)
                out[c * cs + col] = hc_act_apply_rmstip(act, hc_sums_tip_affine(fmt, in[c * cs + col], rms, gamma[c], beta[c]));
        }
    }
}

/* ---- reduced-precision emulation inside layers ------------------------------------------ */

void hc_round_fmt_array(int fmt, float *x, size_t n)
{
    if (fmt == HC_KFMT_FP16)
        hc_round_fp16_array(x, n);
    else if (fmt == HC_KFMT_BF16)
        hc_round_bf16_array(x, n);
}

/* C(m,n) = sum_k A(m,k) X(k,n) with fp16 accumulation in HC_ACC16_CHUNK runs; every operand
 * addressed by strides (A(m,k) = A[m*sam + k*sak] ...), no workspace. Slow but plain: the
 * fp16-acc16 emulation is measured, not bounded. */
void hc_gemm_acc16_strided(int M, int N, int K, const float *A, size_t sam, size_t sak, const float *X, size_t sxk,
                       size_t sxn, float *C, size_t scm, size_t scn)
{
    enum { NB = 256 };
    float part[NB], acc[NB];
    for (int m = 0; m < M; m++)
        for (int n0 = 0; n0 < N; n0 += NB) {
            int nb = N - n0 < NB ? N - n0 : NB;
            for (int j = 0; j < nb; j++)
                acc[j] = 0.0f;
            for (int k0 = 0; k0 < K; k0 += HC_ACC16_CHUNK) {
                int kc = K - k0 < HC_ACC16_CHUNK ? K - k0 : HC_ACC16_CHUNK;
                for (int j = 0; j < nb; j++)
                    part[j] = 0.0f;
                for (int k = k0; k < k0 + kc; k++) {
                    float a = A[(size_t)m * sam + (size_t)k * sak];
                    const float *x = X + (size_t)k * sxk + (size_t)n0 * sxn;
                    if (sxn == 1)
                        for (int j = 0; j < nb; j++)
                            part[j] += a * x[j];
                    else
                        for (int j = 0; j < nb; j++)
                            part[j] += a * x[(size_t)j * sxn];
                }
                for (int j = 0; j < nb; j++)
                    acc[j] = k0 ? hc_acc16_add(acc[j], part[j]) : hc_round_fp16(part[j]);
            }
            for (int j = 0; j < nb; j++)
                C[(size_t)m * scm + (size_t)(n0 + j) * scn] = acc[j];
        }
}

void hc_matmul_bc_acc16(int batch, int in_c, int out_c, const float *in, const float *w, float *out)
{
    for (int b = 0; b < batch; b++)
        hc_gemm_acc16_strided(1, out_c, in_c, in + (size_t)b * in_c, 0, 1, w, (size_t)out_c, 1, out + (size_t)b * out_c, 0, 1);
}

void hc_matmul_cs_acc16(int batch, int hw, int in_c, int out_c, const float *in, const float *w,
                        float *out)
{
    size_t s = (size_t)batch * hw;
    for (int b = 0; b < batch; b++)
        hc_gemm_acc16_strided(out_c, hw, in_c, w, 1, (size_t)out_c, in + (size_t)b * hw, s, 1, out + (size_t)b * hw, s, 1);
}
