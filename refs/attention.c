/* Attention kernels: RoPE, vectorized exp, masked softmax, dot-product attention and its rounding forms. */
#include "refs/kernels.h"
#include "refs/kernels_impl.h"
#include "refs/gemm.h"
#include "harness/base/hcmath.h"
#include "refs/round.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Eight lanes rounded to an emulated format with hc_round_fmt_array's bits, in registers: a
 * round trip through memory per 8 scores stalled on store forwarding (a quarter of a
 * transformer's emulation time). Here, its only user, rather than in kernels_impl.h: the
 * helpers there must not depend on refs/emulated.c, which includes them. */
static inline hc_v8f v8_round(int fmt, hc_v8f v)
{
#ifdef HC_ROUND_M256
    if (fmt == HC_KFMT_FP16)
        return (hc_v8f)hc_round_fp16_m256((__m256)v);
    if (fmt == HC_KFMT_BF16)
        return (hc_v8f)hc_round_bf16_m256((__m256)v);
    return v;
#else
    float t[8];
    memcpy(t, &v, sizeof t);
    hc_round_fmt_array(fmt, t, 8);
    memcpy(&v, t, sizeof v);
    return v;
#endif
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
                        cos_t[idx] = hc_cosf(angle);
                        sin_t[idx] = hc_sinf(angle);
                    }
            }
        return;
    }
    int per_dim = pairs / 2;
    int dim_half = pairs; /* head_dim / 2 */
    for (int p = 0; p < pairs; p++) {
        int pe = p < per_dim ? p : p - per_dim;
        float freq = 1.0f / hc_powf_pos(theta, (float)(2 * pe) / (float)dim_half);
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                float angle = p < per_dim ? (float)y * freq : (float)x * freq;
                size_t idx = (size_t)p * hw + (size_t)y * nx + x;
                cos_t[idx] = hc_cosf(angle);
                sin_t[idx] = hc_sinf(angle);
            }
    }
}

void hc_rope_cols(int hw, size_t j0, int n, int heads, int head_dim, int kv_heads, int learnable,
                  const float *cos_t, const float *sin_t, float *x, size_t ldx)
{
    int pairs = head_dim / 2;
    for (int h = 0; h < heads; h++) {
        const float *ct = cos_t, *st = sin_t;
        if (learnable) {
            int kvh = h * kv_heads / heads;
            ct += (size_t)kvh * pairs * hw;
            st += (size_t)kvh * pairs * hw;
        }
        for (int p = 0; p < pairs; p++) {
            float *r0 = x + ((size_t)h * head_dim + 2 * p) * ldx;
            float *r1 = r0 + ldx;
            const float *cp = ct + (size_t)p * hw, *sp = st + (size_t)p * hw;
            /* runs of columns within one board: point i = column % hw */
            for (size_t j = j0, end = j0 + (size_t)n; j < end;) {
                size_t i0 = j % (size_t)hw;
                int len = end - j < (size_t)hw - i0 ? (int)(end - j) : (int)((size_t)hw - i0);
                float *a0 = r0 + j, *a1 = r1 + j;
                const float *c0 = cp + i0, *s0 = sp + i0;
                int i = 0;
                for (; i + 8 <= len; i += 8) {
                    hc_v8f x0, x1, c, sn;
                    memcpy(&x0, a0 + i, sizeof x0);
                    memcpy(&x1, a1 + i, sizeof x1);
                    memcpy(&c, c0 + i, sizeof c);
                    memcpy(&sn, s0 + i, sizeof sn);
                    hc_v8f y0 = x0 * c - x1 * sn, y1 = x0 * sn + x1 * c;
                    memcpy(a0 + i, &y0, sizeof y0);
                    memcpy(a1 + i, &y1, sizeof y1);
                }
                if (i < len) {
                    int k = len - i;
                    hc_v8f x0 = v8_load(a0 + i, k), x1 = v8_load(a1 + i, k);
                    hc_v8f c = v8_load(c0 + i, k), sn = v8_load(s0 + i, k);
                    v8_store(a0 + i, x0 * c - x1 * sn, k);
                    v8_store(a1 + i, x0 * sn + x1 * c, k);
                }
                j += (size_t)len;
            }
        }
    }
}

void hc_rope_apply(int batch, int hw, int heads, int head_dim, int kv_heads, int learnable,
                   const float *cos_t, const float *sin_t, float *x)
{
    size_t cs = (size_t)batch * hw;
    hc_rope_cols(hw, 0, (int)cs, heads, head_dim, kv_heads, learnable, cos_t, sin_t, x, cs);
}

void hc_vexpf(size_t n, float *x)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        hc_v8f v;
        memcpy(&v, x + i, sizeof v);
        v = vexp8(v);
        memcpy(x + i, &v, sizeof v);
    }
    if (i < n) {
        hc_v8f v = {0};
        memcpy(&v, x + i, (n - i) * sizeof(float));
        v = vexp8(v);
        memcpy(x + i, &v, (n - i) * sizeof(float));
    }
}

const char *hc_vexp_isa(void)
{
#ifdef HC_NEON
    return "neon";
#else
    return "vector";
#endif
}

/* Masked softmax of one score row in place (scores times scale first): keys with m == 0 get 0.
 * Vectorized 8 lanes at a time; a short tail is padded with masked-out lanes. */
static void softmax_row(int n, float *row, const float *m, float scale)
{
    const hc_v8f neg = v8_splat(-1e30f), zero = v8_splat(0.0f);
    hc_v8f vmx = neg;
    for (int i = 0; i < n; i += 8) {
        int k = n - i < 8 ? n - i : 8;
        hc_v8f v = v8_load(row + i, k) * scale, mk = v8_load(m + i, k);
        v8_store(row + i, v, k);
        hc_v8f c = v8_select(mk != zero, v, neg);
        vmx = v8_select(c > vmx, c, vmx);
    }
    float mx = -1e30f;
    for (int j = 0; j < 8; j++)
        mx = vmx[j] > mx ? vmx[j] : mx;
    hc_v8f vsum = zero;
    for (int i = 0; i < n; i += 8) {
        int k = n - i < 8 ? n - i : 8;
        /* the mask is exactly 0 or 1; padding lanes have mask 0 */
        hc_v8f v = vexp8(v8_load(row + i, k) - mx) * v8_load(m + i, k);
        v8_store(row + i, v, k);
        vsum += v;
    }
    float sum = 0.0f;
    for (int j = 0; j < 8; j++)
        sum += vsum[j];
    hc_v8f inv = v8_splat(1.0f / sum);
    for (int i = 0; i < n; i += 8) {
        int k = n - i < 8 ? n - i : 8;
        v8_store(row + i, v8_load(row + i, k) * inv, k);
    }
}

/* One head's slices of batch row b in the [channel][batch * hw] q/k/v/out planes: q and out by
 * head, k and v by the head's KV group (grouped-query attention). */
typedef struct att_head {
    const float *q, *k, *v;
    float *o;
} att_head;

static att_head att_head_at(int batch, int hw, int b, int h, int group, int qd, int vd, const float *q,
                            const float *k, const float *v, float *out)
{
    size_t s = (size_t)batch * hw, row = (size_t)b * hw;
    int kvh = h / group;
    att_head a = {q + (size_t)h * qd * s + row, k + (size_t)kvh * qd * s + row, v + (size_t)kvh * vd * s + row,
                  out + (size_t)h * vd * s + row};
    return a;
}

/* The exact softmax strips (refs/softmax_strip.inc): 8 lanes, and 16 where AVX-512 is on
 * (HC_SM16=1 forces the 16-lane form elsewhere, so that it can be tested there); NEON
 * intrinsics on aarch64. */
#if !defined(HC_SM16)
#if defined(__AVX512F__)
#define HC_SM16 1
#else
#define HC_SM16 0
#endif
#endif
#if !HC_SM16 && defined(HC_NEON)
/* softmax_strip.inc's 8-lane strip in NEON intrinsics: each strip vector is two float32x4_t
 * (queries 0-3 and 4-7), every lane doing the .inc's operations in its order: the max chains by
 * MAXPS's select (not FMAX, which would keep a NaN score and order -0 below +0), exp(v * scale -
 * max) by n4_exp_nonpos, key ki's exp into partial sum ki % 8, the partial sums added 0..7, one
 * division, the products by its inverse. The 16 partial sums and the two maxima fit the 32
 * vector registers. */
static void softmax_strip8(int hw, const float *src, size_t lds, float *st, size_t ld, const float *mq,
                           const float *mk, float scale, int allon)
{
    const float32x4_t ninf = n4_splat(-INFINITY), neg = n4_splat(-1e30f), zero = n4_splat(0.0f);
    float32x4_t mx0[2] = {ninf, ninf}, mx1[2] = {ninf, ninf};
    int ki = 0;
    for (; ki + 2 <= hw; ki += 2) {
        const float *s0 = src + (size_t)ki * lds, *s1 = s0 + lds;
        if (allon || mk[ki] != 0.0f) {
            mx0[0] = n4_max(vld1q_f32(s0), mx0[0]);
            mx0[1] = n4_max(vld1q_f32(s0 + 4), mx0[1]);
        }
        if (allon || mk[ki + 1] != 0.0f) {
            mx1[0] = n4_max(vld1q_f32(s1), mx1[0]);
            mx1[1] = n4_max(vld1q_f32(s1 + 4), mx1[1]);
        }
    }
    if (ki < hw && mk[ki] != 0.0f) {
        const float *s0 = src + (size_t)ki * lds;
        mx0[0] = n4_max(vld1q_f32(s0), mx0[0]);
        mx0[1] = n4_max(vld1q_f32(s0 + 4), mx0[1]);
    }
    float32x4_t vmx[2];
    for (int h = 0; h < 2; h++)
        vmx[h] = n4_max(vmulq_n_f32(n4_max(mx1[h], mx0[h]), scale), neg);
    float32x4_t ps[8][2];
    for (int u = 0; u < 8; u++)
        ps[u][0] = ps[u][1] = zero;
#define HC_SM_EXP(u)                                                                            \
    do {                                                                                       \
        const float *s_ = src + (size_t)(ki + u) * lds;                                        \
        float *d_ = st + (size_t)(ki + u) * ld;                                                \
        float32x4_t e0 = n4_exp_nonpos(vsubq_f32(vmulq_n_f32(vld1q_f32(s_), scale), vmx[0]));   \
        float32x4_t e1 = n4_exp_nonpos(vsubq_f32(vmulq_n_f32(vld1q_f32(s_ + 4), scale), vmx[1])); \
        vst1q_f32(d_, e0);                                                                     \
        vst1q_f32(d_ + 4, e1);                                                                 \
        ps[u][0] = vaddq_f32(ps[u][0], e0);                                                    \
        ps[u][1] = vaddq_f32(ps[u][1], e1);                                                    \
    } while (0)
#define HC_SM_EXPM(u)                                                                           \
    do {                                                                                       \
        const float *s_ = src + (size_t)(ki + u) * lds;                                        \
        float *d_ = st + (size_t)(ki + u) * ld;                                                \
        float32x4_t e0 = zero, e1 = zero;                                                      \
        if (mk[ki + u] != 0.0f) {                                                              \
            e0 = n4_exp_nonpos(vsubq_f32(vmulq_n_f32(vld1q_f32(s_), scale), vmx[0]));           \
            e1 = n4_exp_nonpos(vsubq_f32(vmulq_n_f32(vld1q_f32(s_ + 4), scale), vmx[1]));       \
            e0 = vmulq_n_f32(e0, mk[ki + u]);                                                  \
            e1 = vmulq_n_f32(e1, mk[ki + u]);                                                  \
        }                                                                                      \
        vst1q_f32(d_, e0);                                                                     \
        vst1q_f32(d_ + 4, e1);                                                                 \
        ps[u][0] = vaddq_f32(ps[u][0], e0);                                                    \
        ps[u][1] = vaddq_f32(ps[u][1], e1);                                                    \
    } while (0)
    if (allon) {
        for (ki = 0; ki + 8 <= hw; ki += 8) {
            HC_SM_EXP(0);
            HC_SM_EXP(1);
            HC_SM_EXP(2);
            HC_SM_EXP(3);
            HC_SM_EXP(4);
            HC_SM_EXP(5);
            HC_SM_EXP(6);
            HC_SM_EXP(7);
        }
    } else {
        for (ki = 0; ki + 8 <= hw; ki += 8) {
            HC_SM_EXPM(0);
            HC_SM_EXPM(1);
            HC_SM_EXPM(2);
            HC_SM_EXPM(3);
            HC_SM_EXPM(4);
            HC_SM_EXPM(5);
            HC_SM_EXPM(6);
            HC_SM_EXPM(7);
        }
    }
    for (int u = 0; ki + u < hw; u++)
        HC_SM_EXPM(u);
#undef HC_SM_EXP
#undef HC_SM_EXPM
    float32x4_t inv[2];
    uint32x4_t off[2];
    for (int h = 0; h < 2; h++) {
        float32x4_t sum = zero;
        for (int u = 0; u < 8; u++)
            sum = vaddq_f32(sum, ps[u][h]);
        inv[h] = vdivq_f32(n4_splat(1.0f), sum);
        off[h] = vceqq_f32(vld1q_f32(mq + 4 * h), zero);
    }
    if (vmaxvq_u32(vorrq_u32(off[0], off[1])) == 0)
        for (ki = 0; ki < hw; ki++) {
            float *p = st + (size_t)ki * ld;
            vst1q_f32(p, vmulq_f32(vld1q_f32(p), inv[0]));
            vst1q_f32(p + 4, vmulq_f32(vld1q_f32(p + 4), inv[1]));
        }
    else
        for (ki = 0; ki < hw; ki++) {
            float *p = st + (size_t)ki * ld;
            vst1q_f32(p, vbslq_f32(off[0], zero, vmulq_f32(vld1q_f32(p), inv[0])));
            vst1q_f32(p + 4, vbslq_f32(off[1], zero, vmulq_f32(vld1q_f32(p + 4), inv[1])));
        }
}
#elif !HC_SM16
#define SM_W 8
#define SM_VF hc_v8f
#define SM_VI hc_v8i
#include "refs/softmax_strip.inc"
#undef SM_W
#undef SM_VF
#undef SM_VI
#else
typedef float hc_v16f __attribute__((vector_size(64)));
typedef int32_t hc_v16i __attribute__((vector_size(64)));
#define SM_W 16
#define SM_VF hc_v16f
#define SM_VI hc_v16i
#include "refs/softmax_strip.inc"
#undef SM_W
#undef SM_VF
#undef SM_VI
#endif

const char *hc_softmax_isa(void)
{
#if HC_SM16
    return "avx512";
#elif defined(HC_NEON)
    return "neon";
#else
    return "vector";
#endif
}

/* Attention probabilities of a block of nq queries computed transposed: st[ki][j] (row stride
 * ld) holds query j's score for key ki on entry and its probability on return, so the value
 * GEMM reads them as its B matrix without a transpose. Each query's arithmetic is exactly
 * softmax_row's on its row (the same products, the same max, the key i's exp summed into
 * partial sum i % 8 in key order, the partial sums added in order 0..7, the same
 * normalisation), with hc_attention_emul's roundings; 8 queries per vector instead of 8 keys.
 * mq: the queries' mask values, mk: the keys'. */
static void softmax_cols(int hw, int nq, float *st, size_t ld, const float *mq, const float *mk,
                         float scale, int scores_fmt, int probs_fmt)
{
    const hc_v8f neg = v8_splat(-1e30f), zero = v8_splat(0.0f);
    for (int j = 0; j < nq; j += 8) {
        int k = nq - j < 8 ? nq - j : 8;
        hc_v8f vmx = neg;
        for (int ki = 0; ki < hw; ki++) {
            float *p = st + (size_t)ki * ld + j;
            hc_v8f v = v8_load(p, k) * scale;
            if (scores_fmt != HC_KFMT_FP32)
                v = v8_round(scores_fmt, v);
            v8_store(p, v, k);
            if (mk[ki] != 0.0f)
                vmx = v8_select(v > vmx, v, vmx);
        }
        hc_v8f ps[8] = {zero, zero, zero, zero, zero, zero, zero, zero};
        for (int ki = 0; ki < hw; ki++) {
            float *p = st + (size_t)ki * ld + j;
            /* the mask is exactly 0 or 1: a masked key's exp times 0 is +0 */
            hc_v8f e = mk[ki] != 0.0f ? vexp8(v8_load(p, k) - vmx) * mk[ki] : zero;
            v8_store(p, e, k);
            ps[ki & 7] += e;
        }
        hc_v8f sum = zero;
        for (int l = 0; l < 8; l++)
            sum += ps[l];
        hc_v8f inv = 1.0f / sum;
        hc_v8f on = v8_load(mq + j, k);
        for (int ki = 0; ki < hw; ki++) {
            float *p = st + (size_t)ki * ld + j;
            hc_v8f v = v8_load(p, k) * inv;
            if (probs_fmt != HC_KFMT_FP32)
                v = v8_round(probs_fmt, v);
            v8_store(p, v8_select(on == zero, zero, v), k);
        }
    }
}

/* Queries per block of the transposed attention (rounding emulations): the block's scores stay
 * in L2. */
enum { ATT_NQ = 64 };

/* The exact attention runs over blocks of ATT_QB queries: the score GEMM writes the block's
 * transposed scores [key][ATT_QB] (two panels of refs/gemm.c's 24-column AVX2 kernel), then
 * each strip of ATT_QS queries gets its probabilities [key][ATT_QS] (23 KB at 19x19, in L1),
 * which the value GEMM reads in place (hc_gemm copies no B panel when ldb is its panel width,
 * 16 for K > 256). Boards under ATT_QB points (workspace 2 * hw * hw) use blocks of ATT_QS,
 * the scores and probabilities in one buffer. */
#if defined(__AVX512F__)
enum { ATT_QB = 64, ATT_QS = 16 }; /* two 32-column panels of the AVX-512 kernel */
#else
enum { ATT_QB = 48, ATT_QS = 16 };
#endif

/* hc_attention's arithmetic (as hc_attention_emul's exact path): per query, the same score
 * chains, softmax and value chains, so the same bits. ws: hw * (ATT_QB + ATT_QS) floats when
 * hw >= ATT_QB, else hw * ATT_QS. */
static void attention_strips(int batch, int hw, int heads, int kv_heads, int qd, int vd,
                             const float *q, const float *k, const float *v, const float *mask,
                             float *out, float *ws)
{
    int group = heads / kv_heads;
    size_t s = (size_t)batch * hw;
    float scale = 1.0f / sqrtf((float)qd);
    int qb = hw >= ATT_QB ? ATT_QB : ATT_QS;
    float *sc = ws, *pr = qb == ATT_QS ? ws : ws + (size_t)hw * ATT_QB;
    float mqp[ATT_QS];
    for (int b = 0; b < batch; b++) {
        const float *m = mask + (size_t)b * hw;
        int allon = 1;
        for (int i = 0; i < hw; i++)
            allon &= m[i] == 1.0f;
        for (int h = 0; h < heads; h++) {
            att_head ah = att_head_at(batch, hw, b, h, group, qd, vd, q, k, v, out);
            const float *qh = ah.q, *kh = ah.k, *vh = ah.v;
            float *oh = ah.o;
            for (int q0 = 0; q0 < hw; q0 += qb) {
                int nqb = hw - q0 < qb ? hw - q0 : qb;
                /* sc(ki, qi) = sum_d k(d, ki) q(d, qi): the same FMA chains as q.k */
                hc_gemm(hw, nqb, qd, kh, 1, s, qh + q0, s, sc, (size_t)qb, 0);
                int nqb8 = HC_SM16 ? (nqb + 15) & ~15 : (nqb + 7) & ~7;
                if (nqb8 > nqb) /* padding lanes of a last partial strip: zeros, masked */
                    for (int ki = 0; ki < hw; ki++)
                        memset(sc + (size_t)ki * qb + nqb, 0, (size_t)(nqb8 - nqb) * sizeof(float));
                for (int t0 = 0; t0 < nqb; t0 += ATT_QS) {
                    int nq = nqb - t0 < ATT_QS ? nqb - t0 : ATT_QS;
                    const float *mq = m + q0 + t0;
                    if (nq < ATT_QS) {
                        memcpy(mqp, mq, (size_t)nq * sizeof(float));
                        memset(mqp + nq, 0, (size_t)(ATT_QS - nq) * sizeof(float));
                        mq = mqp;
                    }
#if HC_SM16
                    softmax_strip16(hw, sc + t0, (size_t)qb, pr, ATT_QS, mq, m, scale, allon);
#else
                    for (int j = 0; j < nq; j += 8)
                        softmax_strip8(hw, sc + t0 + j, (size_t)qb, pr + j, ATT_QS, mq + j, m, scale, allon);
#endif
                    hc_gemm(vd, nq, hw, vh, s, 1, pr, ATT_QS, oh + q0 + t0, s, 0);
                }
            }
        }
    }
}

void hc_attention(int batch, int hw, int heads, int kv_heads, int qd, int vd, const float *q,
                  const float *k, const float *v, const float *mask, float *out, float *ws)
{
    static const hc_attn_emul exact = {HC_KFMT_FP32, HC_KFMT_FP32, 0};
    hc_attention_emul(batch, hw, heads, kv_heads, qd, vd, q, k, v, mask, out, ws, &exact);
}

void hc_attention_emul(int batch, int hw, int heads, int kv_heads, int qd, int vd, const float *q,
                       const float *k, const float *v, const float *mask, float *out, float *ws,
                       const hc_attn_emul *em)
{
    int group = heads / kv_heads;
    size_t s = (size_t)batch * hw;
    float scale = 1.0f / sqrtf((float)qd);
    float *sc = ws; /* [query][key] */
    if (!em->acc_fp16 && em->scores_fmt == HC_KFMT_FP32 && em->probs_fmt == HC_KFMT_FP32 &&
        (size_t)hw * (hw >= ATT_QB ? ATT_QB + ATT_QS : ATT_QS) <= 2 * (size_t)hw * hw) {
        attention_strips(batch, hw, heads, kv_heads, qd, vd, q, k, v, mask, out, ws);
        return;
    }
    if (!em->acc_fp16) { /* transposed scores [key][query], in blocks of queries */
        int nqb = hw < ATT_NQ ? hw : ATT_NQ;
        /* whole strips of 8 queries when the workspace (2*hw*hw) has room (hw >= 4) */
        int pad8 = ((nqb + 7) & ~7) <= 2 * hw;
        size_t ld = pad8 ? (size_t)(nqb + 7) & ~(size_t)7 : (size_t)nqb;
        float mqp[ATT_NQ + 8];
        for (int b = 0; b < batch; b++) {
            const float *m = mask + (size_t)b * hw;
            for (int h = 0; h < heads; h++) {
                att_head ah = att_head_at(batch, hw, b, h, group, qd, vd, q, k, v, out);
                const float *qh = ah.q, *kh = ah.k, *vh = ah.v;
                float *oh = ah.o;
                for (int q0 = 0; q0 < hw; q0 += nqb) {
                    int nq = hw - q0 < nqb ? hw - q0 : nqb;
                    /* sc(ki, qi) = sum_d k(d, ki) q(d, qi): the same FMA chains as q.k */
                    hc_gemm(hw, nq, qd, kh, 1, s, qh + q0, s, sc, ld, 0);
                    int nq8 = pad8 ? (nq + 7) & ~7 : nq;
                    const float *mq = m + q0;
                    if (nq8 > nq) { /* a last partial strip: padding queries are zeros, masked */
                        for (int ki = 0; ki < hw; ki++)
                            memset(sc + (size_t)ki * ld + nq, 0, (size_t)(nq8 - nq) * sizeof(float));
                        memcpy(mqp, mq, (size_t)nq * sizeof(float));
                        memset(mqp + nq, 0, (size_t)(nq8 - nq) * sizeof(float));
                        mq = mqp;
                    }
                    softmax_cols(hw, nq8, sc, ld, mq, m, scale, em->scores_fmt, em->probs_fmt);
                    hc_gemm(vd, nq, hw, vh, s, 1, sc, ld, oh + q0, s, 0);
                }
            }
        }
        return;
    }
    /* fp16 accumulation (every other case returned above): scores [query][key] per head */
    for (int b = 0; b < batch; b++) {
        const float *m = mask + (size_t)b * hw;
        for (int h = 0; h < heads; h++) {
            att_head ah = att_head_at(batch, hw, b, h, group, qd, vd, q, k, v, out);
            const float *qh = ah.q, *kh = ah.k, *vh = ah.v;
            float *oh = ah.o;
            hc_gemm_acc16_strided(hw, hw, qd, qh, 1, s, kh, s, 1, sc, (size_t)hw, 1); /* sc(qi, ki) = sum_d q(d, qi) k(d, ki) */
            for (int qi = 0; qi < hw; qi++) {
                float *row = sc + (size_t)qi * hw;
                if (m[qi] == 0.0f) {
                    memset(row, 0, (size_t)hw * sizeof(float));
                    continue;
                }
                if (em->scores_fmt == HC_KFMT_FP32) { /* softmax_row scales: the same products */
                    softmax_row(hw, row, m, scale);
                } else {
                    for (int j = 0; j < hw; j++)
                        row[j] *= scale;
                    hc_round_fmt_array(em->scores_fmt, row, (size_t)hw);
                    softmax_row(hw, row, m, 1.0f);
                }
                hc_round_fmt_array(em->probs_fmt, row, (size_t)hw);
            }
            hc_gemm_acc16_strided(vd, hw, hw, vh, s, 1, sc, 1, (size_t)hw, oh, s, 1); /* oh(d, qi) = sum_ki v(d, ki) p(qi, ki) */
        }
    }
}
