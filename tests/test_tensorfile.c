/* The .npy and safetensors readers and writers (harness/data/tensorfile.h): round trips of every
 * element type and shape rank, the f16/bf16 conversions against their definitions, and every
 * refusal (a file that ends early, a header lying about the data length, another element type, a
 * Fortran-order array, a name given twice) naming the file, the tensor and the offset. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/data/tensorfile.h"

static const char *dir;

/* A .npy image: preamble, the header text padded as numpy pads it, then `data` bytes. */
static size_t npy_image(unsigned char *out, const char *header, const void *data, size_t dlen)
{
    size_t hl = strlen(header), total = 10 + hl + 1, pad = (64 - total % 64) % 64;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    size_t h = hl + pad + 1;
    out[8] = (unsigned char)h;
    out[9] = (unsigned char)(h >> 8);
    memcpy(out + 10, header, hl);
    memset(out + 10 + hl, ' ', pad);
    out[10 + hl + pad] = '\n';
    memcpy(out + 10 + h, data, dlen);
    return 10 + h + dlen;
}

/* parse must fail with every fragment in the message */
static void npy_refused(const char *name, const unsigned char *buf, size_t len, const char *frag, const char *frag2)
{
    hc_tensor t;
    hc_err err = {0};
    int rc = hc_npy_parse(buf, len, "bad.npy", "x", &t, &err);
    hc_check(name, rc == -1 && err.code == HC_EFORMAT && strstr(err.msg, "bad.npy: tensor x: offset ") &&
                       strstr(err.msg, frag) && (!frag2 || strstr(err.msg, frag2)) && !t.data && !t.name,
             "refused with \"%s\"%s%s: %s", frag, frag2 ? " and " : "", frag2 ? frag2 : "", rc ? err.msg : "accepted");
}

/* A safetensors image of one JSON header and data bytes. */
static size_t st_image(unsigned char *out, const char *header, const void *data, size_t dlen)
{
    size_t hl = strlen(header);
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(out + 8, header, hl);
    memcpy(out + 8 + hl, data, dlen);
    return 8 + hl + dlen;
}

static void st_refused(const char *name, const unsigned char *buf, size_t len, const char *tensor, const char *frag)
{
    hc_tensorset s;
    hc_err err = {0};
    int rc = hc_safetensors_parse(buf, len, "bad.safetensors", &s, &err);
    char want[128] = "bad.safetensors: offset ";
    if (tensor)
        snprintf(want, sizeof want, "bad.safetensors: tensor %s: offset ", tensor);
    hc_check(name, rc == -1 && err.code == HC_EFORMAT && strstr(err.msg, want) && strstr(err.msg, frag) && !s.t &&
                       !s.n,
             "refused naming \"%s\" with \"%s\": %s", want, frag, rc ? err.msg : "accepted");
}

int main(void)
{
    hc_plan(3 + 6 + 12 + 8);
    dir = hc_tmpdir("test_tensorfile");
    hc_err err = {0};

    /* ---- conversions ---- */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = hc_f16_to_float((uint16_t)h);
        if (isnan(f)) {
            bad += !isnan(hc_f16_to_float(hc_float_to_f16(f)));
            continue;
        }
        bad += hc_float_to_f16(f) != h; /* every half round-trips, -0 and subnormals included */
    }
    hc_check("tensorfile-1.1", bad == 0, "every f16 bit pattern round-trips through float (%d do not)", bad);
    /* ties to even, overflow to inf, the smallest subnormal */
    int ok = hc_float_to_f16(1.0f + 0x1p-11f) == 0x3c00 && hc_float_to_f16(1.0f + 3 * 0x1p-11f) == 0x3c02 &&
             hc_float_to_f16(65520.0f) == 0x7c00 && hc_float_to_f16(65519.0f) == 0x7bff &&
             hc_float_to_f16(0x1p-25f) == 0 && hc_float_to_f16(0x1.8p-25f) == 1 && hc_float_to_f16(-0x1p-24f) == 0x8001;
    hc_check("tensorfile-1.2", ok, "f16 rounding: ties to even, 65520 to inf, subnormals");
    bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = hc_bf16_to_float((uint16_t)h);
        bad += !isnan(f) && hc_float_to_bf16(f) != h;
    }
    hc_check("tensorfile-1.3", bad == 0 && hc_float_to_bf16(1.0f + 0x1p-8f) == 0x3f80 &&
                                   hc_float_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82,
             "every bf16 round-trips, ties to even (%d do not)", bad);

    /* ---- round trips through files ---- */
    float vals[2 * 3 * 2 * 2];
    for (int i = 0; i < 24; i++)
        vals[i] = (float)(i - 11) * 0.37f + (i == 5 ? 1e-30f : 0.0f);
    hc_tensor a = {.name = "rconv3/w1a", .dtype = HC_DT_F32, .ndim = 4, .shape = {2, 3, 2, 2}, .count = 24,
                   .data = vals};
    hc_tensor b = a, r, r2;
    b.dtype = HC_DT_F16;
    b.name = "v";
    b.ndim = 1;
    b.shape[0] = 24;
    const char *p32 = hc_path(dir, "a.npy"), *p16 = hc_path(dir, "b.npy");
    ok = hc_npy_write(p32, &a, &err) == 0 && hc_npy_load(p32, "a", &r, &err) == 0;
    hc_check("tensorfile-2.1", ok && r.dtype == HC_DT_F32 && r.ndim == 4 && r.shape[3] == 2 && r.count == 24 &&
                                   !memcmp(r.data, vals, sizeof vals) && !strcmp(r.name, "a"),
             "an f32 [2, 3, 2, 2] .npy reads back bit for bit %s", ok ? "" : err.msg);
    hc_tensor_clear(&r);
    ok = hc_npy_write(p16, &b, &err) == 0 && hc_npy_load(p16, "b", &r2, &err) == 0;
    int same = ok && r2.dtype == HC_DT_F16 && r2.ndim == 1 && r2.count == 24;
    for (int i = 0; same && i < 24; i++)
        same = r2.data[i] == hc_f16_to_float(hc_float_to_f16(vals[i]));
    hc_check("tensorfile-2.2", same, "an f16 (24,) .npy holds each value rounded to f16 %s", ok ? "" : err.msg);
    hc_tensor_clear(&r2);
    hc_tensor sc = {.name = "s", .dtype = HC_DT_F32, .ndim = 0, .count = 1, .data = vals};
    ok = hc_npy_write(hc_path(dir, "s.npy"), &sc, &err) == 0 && hc_npy_load(hc_path(dir, "s.npy"), "s", &r, &err) == 0;
    hc_check("tensorfile-2.3", ok && r.ndim == 0 && r.count == 1 && r.data[0] == vals[0], "a 0-d .npy %s",
             ok ? "" : err.msg);
    hc_tensor_clear(&r);

    hc_tensor set[3] = {a, b, a};
    set[1].ndim = 2, set[1].shape[0] = 4, set[1].shape[1] = 6;
    set[2].name = "bf";
    set[2].dtype = HC_DT_BF16;
    const char *meta[] = {"format", "halfcheck-taps", "net", "g170"};
    const char *pst = hc_path(dir, "t.safetensors");
    hc_tensorset ts;
    ok = hc_safetensors_write(pst, set, 3, meta, 2, &err) == 0 && hc_safetensors_load(pst, &ts, &err) == 0;
    same = ok && ts.n == 3 && !strcmp(ts.t[0].name, "rconv3/w1a") && !strcmp(ts.t[1].name, "v") &&
           !strcmp(ts.t[2].name, "bf") && ts.t[1].dtype == HC_DT_F16 && ts.t[2].dtype == HC_DT_BF16 &&
           ts.t[1].ndim == 2 && ts.t[1].shape[1] == 6 && !memcmp(ts.t[0].data, vals, sizeof vals) &&
           hc_tensorset_meta(&ts, "net") && !strcmp(hc_tensorset_meta(&ts, "net"), "g170");
    for (int i = 0; same && i < 24; i++)
        same = ts.t[1].data[i] == hc_f16_to_float(hc_float_to_f16(vals[i])) &&
               ts.t[2].data[i] == hc_bf16_to_float(hc_float_to_bf16(vals[i]));
    hc_check("tensorfile-2.4", same, "safetensors with F32, F16, BF16 and metadata reads back in order %s",
             ok ? "" : err.msg);
    if (ok)
        hc_tensorset_free(&ts);
    hc_check("tensorfile-2.5", hc_npy_write(hc_path(dir, "c.npy"), &set[2], &err) == -1 && strstr(err.msg, "BF16"),
             "BF16 is not written to .npy (numpy has no such type): %s", err.msg);
    hc_tensor dup[2] = {a, a};
    hc_check("tensorfile-2.6", hc_safetensors_write(hc_path(dir, "d.safetensors"), dup, 2, NULL, 0, &err) == -1 &&
                                   strstr(err.msg, "duplicate name") && strstr(err.msg, "rconv3/w1a"),
             "the writer refuses a name twice: %s", err.msg);

    /* ---- .npy refusals ---- */
    unsigned char buf[4096], d96[96];
    memset(d96, 0, sizeof d96);
    size_t n = npy_image(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", d96, 24);
    hc_tensor t;
    hc_check("tensorfile-3.1", hc_npy_parse(buf, n, "ok.npy", "x", &t, &err) == 0 && t.count == 6,
             "a hand-made header is read %s", err.msg);
    hc_tensor_clear(&t);
    npy_refused("tensorfile-3.2", buf, 7, "truncated", "preamble");
    npy_refused("tensorfile-3.3", buf, 40, "truncated", "header is");
    npy_refused("tensorfile-3.4", buf, n - 4, "needs 24 data bytes, the file holds 20", "truncated");
    n = npy_image(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", d96, 24);
    npy_refused("tensorfile-3.5", buf, n, "shape [2, 4] of F32 needs 32 data bytes, the file holds 24", NULL);
    n = npy_image(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", d96, 24);
    npy_refused("tensorfile-3.6", buf, n, "needs 16 data bytes, the file holds 24", NULL);
    n = npy_image(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d96, 24);
    npy_refused("tensorfile-3.7", buf, n, "unsupported dtype '<f8'", NULL);
    n = npy_image(buf, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", d96, 24);
    npy_refused("tensorfile-3.8", buf, n, "unsupported dtype '>f4'", NULL);
    n = npy_image(buf, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", d96, 24);
    npy_refused("tensorfile-3.9", buf, n, "fortran-order array refused", NULL);
    n = npy_image(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", d96, 24);
    npy_refused("tensorfile-3.10", buf, n, "key 'x' unexpected", NULL);
    n = npy_image(buf, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", d96, 24);
    npy_refused("tensorfile-3.11", buf, n, "key 'descr' unexpected or given twice", NULL);
    hc_check("tensorfile-3.12", hc_npy_load(hc_path(dir, "absent.npy"), "x", &t, &err) == -1 &&
                                    strstr(err.msg, "absent.npy"),
             "a missing file names it: %s", err.msg);

    /* ---- safetensors refusals ---- */
    n = st_image(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}", d96, 24);
    ok = hc_safetensors_parse(buf, n, "ok.safetensors", &ts, &err) == 0;
    hc_check("tensorfile-4.1", ok && ts.n == 1 && ts.t[0].count == 6, "a hand-made header is read %s", err.msg);
    if (ok)
        hc_tensorset_free(&ts);
    st_refused("tensorfile-4.2", buf, 5, NULL, "truncated: the file ends inside the 8-byte header length");
    st_refused("tensorfile-4.3", buf, 30, NULL, "truncated: the header is");
    st_refused("tensorfile-4.4", buf, n - 4, "a", "run past the data");
    n = st_image(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,4],\"data_offsets\":[0,24]}}", d96, 24);
    st_refused("tensorfile-4.5", buf, n, "a", "hold 24 bytes, shape [2, 4] of F32 needs 32");
    n = st_image(buf, "{\"a\":{\"dtype\":\"I64\",\"shape\":[3],\"data_offsets\":[0,24]}}", d96, 24);
    st_refused("tensorfile-4.6", buf, n, "a", "unsupported dtype I64");
    n = st_image(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]},"
                      "\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]}}", d96, 24);
    st_refused("tensorfile-4.7", buf, n, "a", "duplicate name");
    n = st_image(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[6]}}", d96, 24);
    st_refused("tensorfile-4.8", buf, n, "a", "malformed entry");
    return hc_test_exit();
}
