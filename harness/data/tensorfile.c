/* What the .npy and safetensors readers share (tensorfile.h): the tensor record, element types
 * and their exact conversions to and from float. */
#include "harness/data/tensorfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hc_tensor_clear(hc_tensor *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->data);
    memset(t, 0, sizeof *t);
}

size_t hc_dtype_size(int dtype) { return dtype == HC_DT_F32 ? 4 : 2; }

const char *hc_dtype_str(int dtype)
{
    return dtype == HC_DT_F32 ? "F32" : dtype == HC_DT_F16 ? "F16" : dtype == HC_DT_BF16 ? "BF16" : "?";
}

const char *hc_tensor_shape_str(const hc_tensor *t, char *buf, size_t len)
{
    size_t o = 0;
    o += (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < t->ndim && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    if (o < len)
        snprintf(buf + o, len - o, "]");
    return buf;
}

float hc_f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
    if (e == 0x1f)
        u = sign | 0x7f800000u | (m << 13);
    else if (e)
        u = sign | ((e + 112u) << 23) | (m << 13);
    else if (!m)
        u = sign;
    else { /* subnormal: normalize */
        e = 113;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        u = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float hc_bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Round to nearest, ties to even, of the low `shift` bits of m away. */
static uint32_t rne_shift(uint32_t m, int shift)
{
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    return q + (rem > half || (rem == half && (q & 1u)));
}

uint16_t hc_float_to_f16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t ax = u & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: quiet, keep the top payload bits */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x1ffu));
    if (ax >= 0x477ff000u) /* 65520 and above (and inf) round to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* a normal half: rebias the exponent, round the mantissa (a carry is right) */
        uint32_t e = (ax >> 23) - 112u, m = ax & 0x7fffffu;
        return (uint16_t)(sign | rne_shift((e << 23) | m, 13));
    }
    if (ax <= 0x33000000u) /* at most 2^-25: rounds to zero (2^-25 itself to the even 0) */
        return sign;
    uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
    return (uint16_t)(sign | rne_shift(m, (int)(126u - e)));
}

uint16_t hc_float_to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

int hc_tensor_write_data(hc_ostream *s, const hc_tensor *t, hc_err *err)
{
    unsigned char chunk[4096];
    size_t esz = hc_dtype_size(t->dtype), per = sizeof chunk / esz;
    for (size_t k0 = 0; k0 < t->count; k0 += per) {
        size_t k = t->count - k0 < per ? t->count - k0 : per;
        for (size_t j = 0; j < k; j++) {
            float f = t->data[k0 + j];
            if (esz == 4) {
                uint32_t u;
                memcpy(&u, &f, 4);
                chunk[4 * j] = (unsigned char)u, chunk[4 * j + 1] = (unsigned char)(u >> 8);
                chunk[4 * j + 2] = (unsigned char)(u >> 16), chunk[4 * j + 3] = (unsigned char)(u >> 24);
            } else {
                uint16_t h = t->dtype == HC_DT_F16 ? hc_float_to_f16(f) : hc_float_to_bf16(f);
                chunk[2 * j] = (unsigned char)h, chunk[2 * j + 1] = (unsigned char)(h >> 8);
            }
        }
        if (hc_ostream_write(s, chunk, k * esz, err))
            return -1;
    }
    return 0;
}

int hc_tensorfile_fail(hc_err *err, const char *file, const char *name, uint64_t off, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (name)
        return hc_err_set(err, HC_EFORMAT, "%s: tensor %s: offset %llu: %s", file, name, (unsigned long long)off,
                          what);
    return hc_err_set(err, HC_EFORMAT, "%s: offset %llu: %s", file, (unsigned long long)off, what);
}
