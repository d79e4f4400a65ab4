/* Winograd's NEON transforms (aarch64): the generic chunk runner's input and output transforms, four tiles per vector. */
#include "refs/kernels.h"
#include "refs/kernels_impl.h"
#include "refs/winograd_impl.h"

#include <string.h>

#ifdef HC_NEON
/* B^T of F(4x4,3x3) on 6 values, four tiles per vector: each output WINO_BT's expression, in
 * its order (the products, then the adds and subtracts left to right; never a fused one). */
static inline void n4_wino_bt(const float32x4_t z[6], float32x4_t o[6])
{
    o[0] = vaddq_f32(vsubq_f32(vmulq_n_f32(z[0], 4.0f), vmulq_n_f32(z[2], 5.0f)), z[4]);
    o[1] = vaddq_f32(vaddq_f32(vsubq_f32(vmulq_n_f32(z[1], -4.0f), vmulq_n_f32(z[2], 4.0f)), z[3]), z[4]);
    o[2] = vaddq_f32(vsubq_f32(vsubq_f32(vmulq_n_f32(z[1], 4.0f), vmulq_n_f32(z[2], 4.0f)), z[3]), z[4]);
    o[3] = vaddq_f32(vaddq_f32(vsubq_f32(vmulq_n_f32(z[1], -2.0f), z[2]), vmulq_n_f32(z[3], 2.0f)), z[4]);
    o[4] = vaddq_f32(vsubq_f32(vsubq_f32(vmulq_n_f32(z[1], 2.0f), z[2]), vmulq_n_f32(z[3], 2.0f)), z[4]);
    o[5] = vaddq_f32(vsubq_f32(vmulq_n_f32(z[1], 4.0f), vmulq_n_f32(z[3], 5.0f)), z[5]);
}

/* A^T on 6 values: F(4x4,3x3)'s 4 outputs (WINO_AT), or F(2x2,5x5)'s 2 (the scalar form's h). */
static inline void n4_wino_at(int five, const float32x4_t z[6], float32x4_t *o)
{
    float32x4_t d12 = vsubq_f32(z[1], z[2]), d34 = vsubq_f32(z[3], z[4]);
    o[0] = vaddq_f32(vaddq_f32(vaddq_f32(vaddq_f32(z[0], z[1]), z[2]), z[3]), z[4]);
    if (five) {
        o[1] = vaddq_f32(vaddq_f32(d12, vmulq_n_f32(d34, 2.0f)), z[5]);
        return;
    }
    o[1] = vaddq_f32(d12, vmulq_n_f32(d34, 2.0f));
    o[2] = vaddq_f32(vaddq_f32(z[1], z[2]), vmulq_n_f32(vaddq_f32(z[3], z[4]), 4.0f));
    o[3] = vaddq_f32(vaddq_f32(d12, vmulq_n_f32(d34, 8.0f)), z[5]);
}

/* k <= 4 floats, the rest zero (a chunk's last group: M's columns past n are never written). */
static inline float32x4_t n4_load_part(const float *p, int k)
{
    if (k >= 4)
        return vld1q_f32(p);
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; j < k; j++)
        t[j] = p[j];
    return vld1q_f32(t);
}

/* One channel's input transform into Vi [36][ld]: four tiles' input rows (6 floats each, read
 * whole from the padded buffer) transposed into lanes, B^T along x, then along y. */
void hc_wino_in_channel(const wino_chunk_geom *ch, const float *pad, float *Vi)
{
    for (int l0 = 0; l0 < ch->n; l0 += 4) {
        int lanes = ch->n - l0 < 4 ? ch->n - l0 : 4;
        float32x4_t tmp[36], o[6];
        for (int r = 0; r < 6; r++) {
            float32x4_t a[4], z[6];
            float32x2_t e[4];
            for (int l = 0; l < 4; l++) {
                if (l < lanes) {
                    const float *p = pad + ch->lane_off[l0 + l] + (size_t)r * ch->wp;
                    a[l] = vld1q_f32(p);
                    e[l] = vld1_f32(p + 4);
                } else {
                    a[l] = vdupq_n_f32(0.0f);
                    e[l] = vdup_n_f32(0.0f);
                }
            }
            n4_transpose(a, z); /* z[c] lane l: tile l's column c */
            float32x2x2_t e01 = vtrn_f32(e[0], e[1]), e23 = vtrn_f32(e[2], e[3]);
            z[4] = vcombine_f32(e01.val[0], e23.val[0]);
            z[5] = vcombine_f32(e01.val[1], e23.val[1]);
            n4_wino_bt(z, tmp + r * 6); /* along x first */
        }
        for (int c = 0; c < 6; c++) { /* then along y */
            float32x4_t col[6] = {tmp[c], tmp[6 + c], tmp[12 + c], tmp[18 + c], tmp[24 + c], tmp[30 + c]};
            n4_wino_bt(col, o);
            /* whole vectors: ld is a multiple of 8, and the columns past n are never read */
            for (int r = 0; r < 6; r++)
                vst1q_f32(Vi + (size_t)(r * 6 + c) * ch->ld + l0, o[r]);
        }
    }
}

/* The output transform from M [oc][36][ld]: A^T along x, then y, the fused epilogue, then four
 * tiles' outputs transposed back into rows and stored into (or added to) the planes. */
void hc_wino_out_chunk(const wino_chunk_geom *ch, const float *M, float *out, int accumulate,
                       const hc_kepi *epi)
{
    const hc_kconv *cv = ch->cv;
    int five = ch->five, osz = ch->osz, ov = osz * osz, ld = ch->ld, nx = ch->nx;
    for (int l0 = 0; l0 < ch->n; l0 += 4) {
        int lanes = ch->n - l0 < 4 ? ch->n - l0 : 4;
        wino_lane_out lo[4];
        float32x4_t mk[16];
        for (int l = 0; l < 4; l++)
            hc_wino_lane_out_at(ch, l0 + l, epi, &lo[l]);
        for (int k = 0; k < ov; k++) {
            float t[4] = {lo[0].mk[k], lo[1].mk[k], lo[2].mk[k], lo[3].mk[k]};
            mk[k] = vld1q_f32(t);
        }
        for (int oc = 0; oc < cv->oc; oc++) {
            const float *mo = M + (size_t)oc * 36 * ld + l0;
            float32x4_t tmp[24], res[16];
            for (int r = 0; r < 6; r++) { /* along x first: 6 columns -> osz */
                float32x4_t z[6];
                for (int c = 0; c < 6; c++)
                    z[c] = n4_load_part(mo + (size_t)(r * 6 + c) * ld, lanes);
                n4_wino_at(five, z, tmp + r * 4);
            }
            for (int c = 0; c < osz; c++) { /* then along y: 6 rows -> osz */
                float32x4_t col[6] = {tmp[c], tmp[4 + c], tmp[8 + c], tmp[12 + c], tmp[16 + c], tmp[20 + c]};
                float32x4_t y[4];
                n4_wino_at(five, col, y);
                for (int r = 0; r < osz; r++)
                    res[r * osz + c] = y[r];
            }
            if (epi) {
                if (epi->row_bias) { /* hc_add_bias_bc's add, before the batch norm */
                    float t[4];
                    for (int l = 0; l < 4; l++)
                        t[l] = epi->row_bias[(size_t)lo[l].row * cv->oc + oc];
                    float32x4_t rb = vld1q_f32(t);
                    for (int k = 0; k < ov; k++)
                        res[k] = vaddq_f32(res[k], rb);
                }
                for (int k = 0; k < ov; k++)
                    res[k] = n4_bn_act(res[k], epi->scale[oc], epi->bias[oc], epi->act, mk[k]);
            }
            float *plane = out + (size_t)oc * ch->batch * ch->hw;
            for (int r = 0; r < osz; r++) {
                float row[4][4]; /* row[l]: lane l's output row r */
                if (!five) {
                    float32x4_t x[4];
                    n4_transpose(res + r * 4, x);
                    for (int l = 0; l < 4; l++) {
                        if (l >= lanes || r >= lo[l].rmax)
                            continue;
                        float *d = plane + lo[l].dst + (size_t)r * nx;
                        if (lo[l].cmax == 4) {
                            vst1q_f32(d, accumulate ? vaddq_f32(vld1q_f32(d), x[l]) : x[l]);
                            continue;
                        }
                        vst1q_f32(row[l], x[l]);
                        hc_wino_put_row(d, row[l], lo[l].cmax, accumulate);
                    }
                } else {
                    float32x4x2_t p = vzipq_f32(res[r * 2], res[r * 2 + 1]);
                    float32x2_t x[4] = {vget_low_f32(p.val[0]), vget_high_f32(p.val[0]), vget_low_f32(p.val[1]),
                                        vget_high_f32(p.val[1])};
                    for (int l = 0; l < 4; l++) {
                        if (l >= lanes || r >= lo[l].rmax)
                            continue;
                        float *d = plane + lo[l].dst + (size_t)r * nx;
                        if (lo[l].cmax == 2) {
                            vst1_f32(d, accumulate ? vadd_f32(vld1_f32(d), x[l]) : x[l]);
                            continue;
                        }
                        vst1_f32(row[l], x[l]);
                        hc_wino_put_row(d, row[l], lo[l].cmax, accumulate);
                    }
                }
            }
        }
    }
}
#endif
