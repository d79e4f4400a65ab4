#include "kernels.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int hc_act_valid(int code)
{
    return code == HC_ACT_IDENTITY || code == HC_ACT_RELU || code == HC_ACT_MISH ||
           code == HC_ACT_SILU || code == HC_ACT_MISH_SCALE8;
}

static inline float mish_softplus(float x)
{
    float lo = x < 20.0f ? x : 20.0f;
    float hi = x > 20.0f ? x : 20.0f;
    return log1pf(expf(lo)) + (hi - 20.0f);
}

float hc_act_apply(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * tanhf(mish_softplus(x));
    case HC_ACT_SILU: return x / (expf(-x) + 1.0f);
    case HC_ACT_MISH_SCALE8: return x * tanhf(mish_softplus(8.0f * x));
    default: return x;
    }
}

float hc_act_apply_rmstip(int act, float x)
{
    switch (act) {
    case HC_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case HC_ACT_MISH: return x * tanhf(x < 20.0f ? log1pf(expf(x)) : x);
    case HC_ACT_SILU: return x / (1.0f + expf(-x));
    case HC_ACT_MISH_SCALE8: return x * tanhf(mish_softplus(8.0f * x));
    default: return x;
    }
}

void hc_mask_from_input(int batch, int hw, int c_spatial, const float *spatial, float *mask,
                        float *mask_sum)
{
    for (int b = 0; b < batch; b++) {
        const float *src = spatial + (size_t)b * c_spatial * hw;
        float s = 0.0f;
        for (int p = 0; p < hw; p++) {
            mask[(size_t)b * hw + p] = src[p];
            s += src[p];
        }
        mask_sum[b] = s;
    }
}

/* ---- convolution ---------------------------------------------------------------------- */

int hc_kconv_init(hc_kconv *cv, const float *weights, int oc, int ic, int kh, int kw, hc_err *err)
{
    memset(cv, 0, sizeof *cv);
    if (oc <= 0 || ic <= 0 || kh <= 0 || kw <= 0 || kh % 2 != 1 || kw % 2 != 1)
        return hc_err_set(err, HC_EINTERNAL, "conv %dx%d %d->%d: unsupported shape", kh, kw, ic,
                          oc);
    cv->w = weights;
    cv->oc = oc;
    cv->ic = ic;
    cv->kh = kh;
    cv->kw = kw;
    return 0;
}

size_t hc_kconv_workspace(const hc_kconv *cv, int batch, int nx, int ny)
{
    if (cv->kh == 1 && cv->kw == 1)
        return 0;
    return (size_t)cv->ic * cv->kh * cv->kw * batch * nx * ny;
}

/* col[(i*kh+dy)*kw+dx][b*hw + y*nx + x] = in[i][b][y+dy-ph][x+dx-pw] or 0 outside the buffer. */
static void im2col(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *col)
{
    int hw = nx * ny, ph = cv->kh / 2, pw = cv->kw / 2;
    size_t s = (size_t)batch * hw;
    for (int i = 0; i < cv->ic; i++) {
        for (int dy = 0; dy < cv->kh; dy++) {
            for (int dx = 0; dx < cv->kw; dx++) {
                float *dst = col + (((size_t)i * cv->kh + dy) * cv->kw + dx) * s;
                int ox = dx - pw;
                int x0 = ox < 0 ? -ox : 0;          /* first x with a source */
                int x1 = ox > 0 ? nx - ox : nx;     /* one past the last */
                if (x1 < x0)
                    x1 = x0;
                for (int b = 0; b < batch; b++) {
                    const float *src = in + ((size_t)i * batch + b) * hw;
                    for (int y = 0; y < ny; y++) {
                        float *d = dst + (size_t)b * hw + (size_t)y * nx;
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
}

void hc_kconv_run(const hc_kconv *cv, int batch, int nx, int ny, const float *in, float *out,
                 int accumulate, float *ws)
{
    int s = batch * nx * ny;
    int k = cv->ic * cv->kh * cv->kw;
    const float *bmat = in;
    if (!(cv->kh == 1 && cv->kw == 1)) {
        im2col(cv, batch, nx, ny, in, ws);
        bmat = ws;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, cv->oc, s, k, 1.0f, cv->w, k, bmat, s,
                accumulate ? 1.0f : 0.0f, out, s);
}

/* ---- batch norm, bias, activation ----------------------------------------------------- */

void hc_bn_act(int channels, int batch, int hw, const float *in, float *out, const float *scale,
               const float *bias, int act, const float *mask)
{
    for (int c = 0; c < channels; c++) {
        float sc = scale[c], bi = bias[c];
        for (int b = 0; b < batch; b++) {
            const float *src = in + ((size_t)c * batch + b) * hw;
            float *dst = out + ((size_t)c * batch + b) * hw;
            const float *m = mask + (size_t)b * hw;
            switch (act) {
            case HC_ACT_IDENTITY:
                for (int p = 0; p < hw; p++)
                    dst[p] = m[p] == 1.0f ? src[p] * sc + bi : 0.0f;
                break;
            case HC_ACT_RELU:
                for (int p = 0; p < hw; p++) {
                    float x = src[p] * sc + bi;
                    dst[p] = m[p] == 1.0f ? (x > 0.0f ? x : 0.0f) : 0.0f;
                }
                break;
            default:
                for (int p = 0; p < hw; p++)
                    dst[p] = m[p] == 1.0f ? hc_act_apply(act, src[p] * sc + bi) : 0.0f;
                break;
            }
        }
    }
}

void hc_bn_merge(int channels, float eps, const float *mean, const float *var, const float *gamma,
                 const float *beta, float *scale, float *bias)
{
    for (int c = 0; c < channels; c++) {
        float g = gamma ? gamma[c] : 1.0f;
        float be = beta ? beta[c] : 0.0f;
        scale[c] = g / sqrtf(var[c] + eps);
        bias[c] = be - scale[c] * mean[c];
    }
}

void hc_add_bias_bc(int channels, int batch, int hw, float *x, const float *bias)
{
    for (int c = 0; c < channels; c++)
        for (int b = 0; b < batch; b++) {
            float v = bias[(size_t)b * channels + c];
            float *d = x + ((size_t)c * batch + b) * hw;
            for (int p = 0; p < hw; p++)
                d[p] += v;
        }
}

/* ---- pooling -------------------------------------------------------------------------- */

void hc_pool_gpool(int channels, int batch, int hw, const float *in, const float *mask,
                   const float *mask_sum, float *out)
{
    for (int b = 0; b < batch; b++) {
        const float *m = mask + (size_t)b * hw;
        float div = mask_sum[b];
        float sqrtdiv = sqrtf(div);
        for (int c = 0; c < channels; c++) {
            const float *src = in + ((size_t)c * batch + b) * hw;
            float s = 0.0f, mx = -1.0f;
            for (int p = 0; p < hw; p++) {
                float x = src[p];
                s += x;
                float v = x + (m[p] - 1.0f);
                mx = mx > v ? mx : v;
            }
            float mean = s / div;
            float *o = out + (size_t)b * 3 * channels;
            o[c] = mean;
            o[c + channels] = mean * (sqrtdiv - 14.0f) * 0.1f;
            o[c + 2 * channels] = mx;
        }
    }
}

void hc_pool_value(int channels, int batch, int hw, const float *in, const float *mask_sum,
                   float *out)
{
    for (int b = 0; b < batch; b++) {
        float div = mask_sum[b];
        float sqrtdiv = sqrtf(div);
        for (int c = 0; c < channels; c++) {
            const float *src = in + ((size_t)c * batch + b) * hw;
            float s = 0.0f;
            for (int p = 0; p < hw; p++)
                s += src[p];
            float mean = s / div;
            float *o = out + (size_t)b * 3 * channels;
            o[c] = mean;
            o[c + channels] = mean * (sqrtdiv - 14.0f) * 0.1f;
            o[c + 2 * channels] = mean * ((sqrtdiv - 14.0f) * (sqrtdiv - 14.0f) * 0.01f - 0.1f);
        }
    }
}

/* ---- vectors -------------------------------------------------------------------------- */

void hc_matmul_bc(int batch, int in_c, int out_c, const float *in, const float *w, float *out)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, out_c, in_c, 1.0f, in, in_c, w,
                out_c, 0.0f, out, out_c);
}

void hc_bias_act_bc(int batch, int channels, float *x, const float *bias, int act)
{
    for (int b = 0; b < batch; b++)
        for (int c = 0; c < channels; c++) {
            float *d = x + (size_t)b * channels + c;
            if (bias)
                *d += bias[c];
            *d = hc_act_apply(act, *d);
        }
}

/* ---- per-position ops ----------------------------------------------------------------- */

void hc_matmul_cs(int s, int in_c, int out_c, const float *in, const float *w, float *out)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out_c, s, in_c, 1.0f, w, out_c, in, s,
                0.0f, out, s);
}

void hc_rmsnorm_pos(int channels, int batch, int hw, const float *in, float *out,
                    const float *weight, float eps, const float *mask)
{
    size_t cs = (size_t)batch * hw;
    for (int b = 0; b < batch; b++)
        for (int p = 0; p < hw; p++) {
            size_t col = (size_t)b * hw + p;
            if (mask[col] == 0.0f) {
                for (int c = 0; c < channels; c++)
                    out[c * cs + col] = 0.0f;
                continue;
            }
            float ss = 0.0f;
            for (int c = 0; c < channels; c++) {
                float v = in[c * cs + col];
                ss += v * v;
            }
            float rms = 1.0f / sqrtf(ss / (float)channels + eps);
            for (int c = 0; c < channels; c++)
                out[c * cs + col] = in[c * cs + col] * rms * weight[c];
        }
}

void hc_rmsnorm_tip(int channels, int batch, int hw, const float *in, float *out,
                    const float *gamma, const float *beta, float eps, int spatial, int act,
                    const float *mask)
{
    size_t cs = (size_t)batch * hw;
    for (int b = 0; b < batch; b++) {
        float rms_row = 0.0f;
        if (spatial) {
            float ss = 0.0f;
            int count = 0;
            for (int p = 0; p < hw; p++) {
                size_t col = (size_t)b * hw + p;
                if (mask[col] == 0.0f)
                    continue;
                for (int c = 0; c < channels; c++) {
                    float v = in[c * cs + col];
                    ss += v * v;
                }
                count++;
            }
            float total = (float)count * (float)channels;
            rms_row = 1.0f / sqrtf(ss / total + eps);
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
                float ss = 0.0f;
                for (int c = 0; c < channels; c++) {
                    float v = in[c * cs + col];
                    ss += v * v;
                }
                rms = 1.0f / sqrtf(ss / (float)channels + eps);
            }
            for (int c = 0; c < channels; c++)
                out[c * cs + col] =
                    hc_act_apply_rmstip(act, in[c * cs + col] * rms * gamma[c] + beta[c]);
        }
    }
}

void hc_residual_masked(int channels, int batch, int hw, float *trunk, const float *delta,
                        const float *mask)
{
    for (int c = 0; c < channels; c++)
        for (int b = 0; b < batch; b++) {
            float *t = trunk + ((size_t)c * batch + b) * hw;
            const float *d = delta + ((size_t)c * batch + b) * hw;
            const float *m = mask + (size_t)b * hw;
            for (int p = 0; p < hw; p++)
                t[p] += d[p] * m[p];
        }
}

void hc_swiglu(size_t n, float *a, const float *g)
{
    for (size_t i = 0; i < n; i++) {
        float x = a[i];
        a[i] = x / (1.0f + expf(-x)) * g[i];
    }
}

void hc_rope_tables(int nx, int ny, int pairs, int kv_heads, const float *freqs, float theta,
                    float *cos_t, float *sin_t)
{
    int hw = nx * ny;
    if (freqs) {
        for (int h = 0; h < kv_heads; h++)
            for (int p = 0; p < pairs; p++) {
                float fx = freqs[((size_t)h * pairs + p) * 2 + 0];
                float fy = freqs[((size_t)h * pairs + p) * 2 + 1];
                for (int y = 0; y < ny; y++)
                    for (int x = 0; x < nx; x++) {
                        float angle = (float)x * fx + (float)y * fy;
                        size_t idx = ((size_t)h * pairs + p) * hw + (size_t)y * nx + x;
                        cos_t[idx] = cosf(angle);
                        sin_t[idx] = sinf(angle);
                    }
            }
        return;
    }
    int per_dim = pairs / 2;
    int dim_half = pairs; /* head_dim / 2 */
    for (int p = 0; p < pairs; p++) {
        int pe = p < per_dim ? p : p - per_dim;
        float freq = 1.0f / powf(theta, (float)(2 * pe) / (float)dim_half);
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                float angle = p < per_dim ? (float)y * freq : (float)x * freq;
                size_t idx = (size_t)p * hw + (size_t)y * nx + x;
                cos_t[idx] = cosf(angle);
                sin_t[idx] = sinf(angle);
            }
    }
}

void hc_rope_apply(int batch, int hw, int heads, int head_dim, int kv_heads, int learnable,
                   const float *cos_t, const float *sin_t, float *x)
{
    int pairs = head_dim / 2;
    size_t cs = (size_t)batch * hw;
    for (int h = 0; h < heads; h++) {
        const float *ct = cos_t, *st = sin_t;
        if (learnable) {
            int kvh = h * kv_heads / heads;
            ct += (size_t)kvh * pairs * hw;
            st += (size_t)kvh * pairs * hw;
        }
        for (int p = 0; p < pairs; p++) {
            float *r0 = x + ((size_t)h * head_dim + 2 * p) * cs;
            float *r1 = r0 + cs;
            const float *cp = ct + (size_t)p * hw, *sp = st + (size_t)p * hw;
            for (int b = 0; b < batch; b++)
                for (int i = 0; i < hw; i++) {
                    size_t col = (size_t)b * hw + i;
                    float x0 = r0[col], x1 = r1[col];
                    r0[col] = x0 * cp[i] - x1 * sp[i];
                    r1[col] = x0 * sp[i] + x1 * cp[i];
                }
        }
    }
}

void hc_attention(int batch, int hw, int heads, int kv_heads, int qd, int vd, const float *q,
                  const float *k, const float *v, const float *mask, float *out, float *ws)
{
    int s = batch * hw;
    int group = heads / kv_heads;
    float scale = 1.0f / sqrtf((float)qd);
    float *sc = ws; /* [query][key] */
    for (int b = 0; b < batch; b++) {
        const float *m = mask + (size_t)b * hw;
        for (int h = 0; h < heads; h++) {
            int kvh = h / group;
            const float *qh = q + (size_t)h * qd * s + (size_t)b * hw;
            const float *kh = k + (size_t)kvh * qd * s + (size_t)b * hw;
            const float *vh = v + (size_t)kvh * vd * s + (size_t)b * hw;
            float *oh = out + (size_t)h * vd * s + (size_t)b * hw;
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, hw, hw, qd, 1.0f, qh, s, kh, s,
                        0.0f, sc, hw);
            for (int qi = 0; qi < hw; qi++) {
                float *row = sc + (size_t)qi * hw;
                if (m[qi] == 0.0f) {
                    memset(row, 0, (size_t)hw * sizeof(float));
                    continue;
                }
                for (int ki = 0; ki < hw; ki++)
                    row[ki] *= scale;
                float mx = -1e30f;
                for (int ki = 0; ki < hw; ki++)
                    if (m[ki] != 0.0f && row[ki] > mx)
                        mx = row[ki];
                float sum = 0.0f;
                for (int ki = 0; ki < hw; ki++) {
                    if (m[ki] != 0.0f) {
                        float e = expf(row[ki] - mx);
                        row[ki] = e;
                        sum += e;
                    } else {
                        row[ki] = 0.0f;
                    }
                }
                float inv = 1.0f / sum;
                for (int ki = 0; ki < hw; ki++)
                    row[ki] *= inv;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, vd, hw, hw, 1.0f, vh, s, sc, hw,
                        0.0f, oh, s);
        }
    }
}
