/* Reference convolutions: the hc_kconv object, im2col + GEMM and 1x1 GEMM (Winograd: winograd.c). */
#include "refs/kernels.h"
#include "refs/kernels_impl.h"
#include "refs/gemm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- convolution ---------------------------------------------------------------------- */

int hc_kconv_init(hc_kconv *cv, const float *weights, int oc, int ic, int kh, int kw, hc_err *err)
{
    memset(cv, 0, sizeof *cv);
    if (oc <= 0 || ic <= 0 || kh <= 0 || kw <= 0 || kh % 2 != 1 || kw % 2 != 1)
        return hc_err_set(err, HC_EINTERNAL, "conv %dx%d %d->%d: unsupported shape", kh, kw, ic,
                          oc);
    cv->w = weights;
    cv->wino = NULL;
    cv->oc = oc;
    cv->ic = ic;
    cv->kh = kh;
    cv->kw = kw;
    return 0;
}

void hc_kconv_free(hc_kconv *cv)
{
    if (cv) {
        free(cv->wino);
        cv->wino = NULL;
        free(cv->wino2);
        cv->wino2 = NULL;
    }
}

size_t hc_kconv_workspace(const hc_kconv *cv, int batch, int nx, int ny)
{
    if (cv->wino2)
        return hc_wino2_workspace(cv, nx, ny);
    if (cv->wino)
        return hc_wino_workspace(cv, batch, nx, ny);
    size_t acc = cv->acc_fp16 ? (size_t)2 * cv->oc * nx * ny : 0; /* result and chunk */
    if (cv->kh == 1 && cv->kw == 1)
        return acc;
    return (size_t)cv->ic * cv->kh * cv->kw * nx * ny + acc;
}

/* col[(i*kh+dy)*kw+dx][y*nx + x] = in[i][b][y+dy-ph][x+dx-pw] or 0 outside the buffer, for
 * one row b of a CBP tensor of `batch` rows. */
static void im2col_row(const hc_kconv *cv, int batch, int b, int nx, int ny, const float *in,
                       float *col)
{
    int hw = nx * ny, ph = cv->kh / 2, pw = cv->kw / 2;
    for (int i = 0; i < cv->ic; i++) {
        const float *src = in + ((size_t)i * batch + b) * hw;
        for (int dy = 0; dy < cv->kh; dy++) {
            for (int dx = 0; dx < cv->kw; dx++) {
                float *dst = col + (((size_t)i * cv->kh + dy) * cv->kw + dx) * hw;
                int ox = dx - pw;
                int x0 = ox < 0 ? -ox : 0;      /* first x with a source */
                int x1 = ox > 0 ? nx - ox : nx; /* one past the last */
                if (x1 < x0)
                    x1 = x0;
                for (int y = 0; y < ny; y++) {
                    float *d = dst + (size_t)y * nx;
                    int sy = y + dy - ph;
                    if (sy < 0 || sy >= ny) {
                        memset(d, 0, (size_t)nx * sizeof(float));
                        continue;
                    }
                    const float *srow = src + (size_t)sy * nx + ox;
                    for (int x = 0; x < x0; x++)
                        d[x] = 0.0f;
                    if (x1 > x0)
                        memcpy(d + x0, srow + x0, (size_t)(x1 - x0) * sizeof(float));
                    for (int x = x1; x < nx; x++)
                        d[x] = 0.0f;
                }
            }
        }
    }
}

/* Every GEMM here is hc_gemm, whose outputs are each one FMA chain: a row's bits do not depend
 * on the rows it shares a call with, so the batch runs in large calls. */
static void kconv_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                      int accumulate, float *ws, const hc_kepi *epi)
{
    int hw = nx * ny;
    int s = batch * hw;
    int k = cv->ic * cv->kh * cv->kw;
    int one = cv->kh == 1 && cv->kw == 1;
    if (cv->wino2) {
        hc_wino2_run(cv, batch, nx, ny, in, out, accumulate, ws);
        return;
    }
    if (cv->wino) {
        hc_wino_run(cv, batch, nx, ny, in, out, accumulate, ws, epi);
        return;
    }
    if (one && !cv->acc_fp16) {
        hc_gemm(cv->oc, s, k, cv->w, (size_t)k, 1, in, (size_t)s, out, (size_t)s, accumulate);
        return;
    }
    for (int b = 0; b < batch; b++) {
        const float *bmat = in + (size_t)b * hw;
        int ldb = s;
        if (!one) {
            im2col_row(cv, batch, b, nx, ny, in, ws);
            bmat = ws;
            ldb = hw;
        }
        if (cv->acc_fp16) {
            float *res = ws + (one ? 0 : (size_t)k * hw), *tmp = res + (size_t)cv->oc * hw;
            hc_sgemm_acc16(cv->oc, hw, k, cv->w, k, bmat, ldb, res, hw, tmp);
            for (int o = 0; o < cv->oc; o++) {
                float *dst = out + (size_t)o * s + (size_t)b * hw;
                const float *r = res + (size_t)o * hw;
                for (int p = 0; p < hw; p++)
                    dst[p] = accumulate ? dst[p] + r[p] : r[p];
            }
            continue;
        }
        hc_gemm(cv->oc, hw, k, cv->w, (size_t)k, 1, bmat, (size_t)ldb, out + (size_t)b * hw,
                (size_t)s, accumulate);
    }
}

void hc_kconv_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                  int accumulate, float *ws)
{
    kconv_run(cv, batch, nx, ny, in, out, accumulate, ws, NULL);
}

void hc_kconv_run_bn(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                     float *ws, const hc_kepi *epi)
{
    if (cv->wino && !cv->wino2) {
        kconv_run(cv, batch, nx, ny, in, out, 0, ws, epi);
        return;
    }
    kconv_run(cv, batch, nx, ny, in, out, 0, ws, NULL);
    if (epi->row_bias)
        hc_add_bias_bc(cv->oc, batch, nx * ny, out, epi->row_bias);
    hc_bn_act(cv->oc, batch, nx * ny, out, out, epi->scale, epi->bias, epi->act, epi->mask);
}
