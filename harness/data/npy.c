/* numpy's .npy format (tensorfile.h), reader and writer: a magic string, a version, a Python
 * dict literal naming the element type, the order and the shape, then the raw data. Only what
 * numpy itself writes for float16/float32 arrays is read: the dict's three keys, little-endian
 * '<f4' and '<f2', C order. */
#include "harness/data/tensorfile.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"

#define NPY_MAGIC "\x93NUMPY"

/* A refusal: "FILE: tensor NAME: offset N: WHAT". */
#define NPY_FAIL(off, ...) hc_tensorfile_fail(err, file, name, (off), __VA_ARGS__)

typedef struct cursor {
    const char *p, *end, *start;
    size_t base; /* file offset of start */
} cursor;

static size_t cur_off(const cursor *c) { return c->base + (size_t)(c->p - c->start); }

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A Python string literal in quotes (no escapes: numpy writes none) into out. */
static int read_str(cursor *c, char *out, size_t cap)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return -1;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= cap)
            return -1;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return -1;
    c->p++;
    out[n] = '\0';
    return 0;
}

int hc_npy_parse(const void *buf, size_t len, const char *file, const char *name, hc_tensor *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    const unsigned char *b = buf;
    if (len < 10)
        return NPY_FAIL(len, "truncated: the file ends inside the .npy preamble (%zu bytes, at least 10 needed)", len);
    if (memcmp(b, NPY_MAGIC, 6) != 0)
        return NPY_FAIL(0, "not a .npy file (no \\x93NUMPY magic)");
    int major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return NPY_FAIL(6, "unsupported .npy format version %d.%d (1.0, 2.0, 3.0 read)", major, minor);
    size_t hstart = major == 1 ? 10 : 12, hlen;
    if (len < hstart)
        return NPY_FAIL(len, "truncated: the file ends inside the .npy preamble");
    hlen = major == 1 ? (size_t)b[8] | (size_t)b[9] << 8
                      : (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    if (hlen > len - hstart)
        return NPY_FAIL(hstart, "truncated: the header is %zu bytes, the file holds %zu after the preamble", hlen,
                        len - hstart);
    cursor c = {(const char *)b + hstart, (const char *)b + hstart + hlen, (const char *)b + hstart, hstart};
    char descr[64] = "";
    int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0;
    int64_t shape[HC_TENSOR_MAX_DIMS];
    int ndim = 0;
    if (!eat(&c, '{'))
        return NPY_FAIL(cur_off(&c), "malformed header: expected '{'");
    while (!eat(&c, '}')) {
        char key[32];
        size_t koff = (skip_ws(&c), cur_off(&c));
        if (read_str(&c, key, sizeof key) || !eat(&c, ':'))
            return NPY_FAIL(koff, "malformed header: expected 'key': value");
        skip_ws(&c);
        size_t voff = cur_off(&c);
        if (!strcmp(key, "descr") && !have_descr) {
            if (read_str(&c, descr, sizeof descr))
                return NPY_FAIL(voff, "malformed header: 'descr' is not a string (a structured dtype?)");
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order") && !have_fortran) {
            if ((size_t)(c.end - c.p) >= 4 && !memcmp(c.p, "True", 4))
                fortran = 1, c.p += 4;
            else if ((size_t)(c.end - c.p) >= 5 && !memcmp(c.p, "False", 5))
                c.p += 5;
            else
                return NPY_FAIL(voff, "malformed header: 'fortran_order' is not True or False");
            have_fortran = 1;
        } else if (!strcmp(key, "shape") && !have_shape) {
            if (!eat(&c, '('))
                return NPY_FAIL(voff, "malformed header: 'shape' is not a tuple");
            while (!eat(&c, ')')) {
                skip_ws(&c);
                size_t doff = cur_off(&c);
                int64_t v = 0;
                int digits = 0;
                while (c.p < c.end && isdigit((unsigned char)*c.p)) {
                    if (v > (int64_t)HC_TENSOR_MAX_ELEMS)
                        return NPY_FAIL(doff, "shape: a dimension over %llu", (unsigned long long)HC_TENSOR_MAX_ELEMS);
                    v = v * 10 + (*c.p++ - '0');
                    digits++;
                }
                if (c.p < c.end && *c.p == 'L') /* Python 2's long suffix */
                    c.p++;
                if (!digits)
                    return NPY_FAIL(doff, "malformed header: 'shape' holds something other than integers");
                if (ndim == HC_TENSOR_MAX_DIMS)
                    return NPY_FAIL(doff, "shape: more than %d dimensions", HC_TENSOR_MAX_DIMS);
                shape[ndim++] = v;
                if (!eat(&c, ',')) {
                    if (!eat(&c, ')'))
                        return NPY_FAIL(cur_off(&c), "malformed header: expected ',' or ')' in 'shape'");
                    break;
                }
            }
            have_shape = 1;
        } else
            return NPY_FAIL(koff, "malformed header: key '%s' unexpected or given twice (descr, fortran_order, "
                            "shape once each)", key);
        if (!eat(&c, ',')) {
            if (!eat(&c, '}'))
                return NPY_FAIL(cur_off(&c), "malformed header: expected ',' or '}'");
            break;
        }
    }
    skip_ws(&c);
    if (c.p != c.end)
        return NPY_FAIL(cur_off(&c), "malformed header: text after the dict");
    if (!have_descr || !have_fortran || !have_shape)
        return NPY_FAIL(hstart, "malformed header: missing key '%s'",
                        !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
    int dtype;
    if (!strcmp(descr, "<f4"))
        dtype = HC_DT_F32;
    else if (!strcmp(descr, "<f2"))
        dtype = HC_DT_F16;
    else
        return NPY_FAIL(hstart, "unsupported dtype '%s' (float32 '<f4' and float16 '<f2' are read; convert with "
                        "a.astype('<f4'))", descr);
    if (fortran)
        return NPY_FAIL(hstart, "fortran-order array refused (write it in C order: np.ascontiguousarray(a))");
    uint64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        count *= (uint64_t)shape[i];
        if (count > HC_TENSOR_MAX_ELEMS)
            return NPY_FAIL(hstart, "shape: more than %llu elements", (unsigned long long)HC_TENSOR_MAX_ELEMS);
    }
    size_t dstart = hstart + hlen, need = (size_t)count * hc_dtype_size(dtype);
    if (len - dstart != need) {
        char sh[160];
        hc_tensor tmp = {.ndim = ndim};
        memcpy(tmp.shape, shape, sizeof(int64_t) * (size_t)ndim);
        return NPY_FAIL(dstart, "the header's shape %s of %s needs %zu data bytes, the file holds %zu%s",
                        hc_tensor_shape_str(&tmp, sh, sizeof sh), hc_dtype_str(dtype), need, len - dstart,
                        len - dstart < need ? " (truncated?)" : "");
    }
    float *data = malloc(count ? (size_t)count * sizeof(float) : 1);
    char *nm = strdup(name);
    if (!data || !nm) {
        free(data);
        free(nm);
        return hc_err_set(err, HC_ENOMEM, "%s: tensor %s: out of memory", file, name);
    }
    const unsigned char *d = b + dstart;
    for (size_t i = 0; i < (size_t)count; i++) {
        if (dtype == HC_DT_F32) {
            uint32_t u = (uint32_t)d[4 * i] | (uint32_t)d[4 * i + 1] << 8 | (uint32_t)d[4 * i + 2] << 16 |
                         (uint32_t)d[4 * i + 3] << 24;
            memcpy(&data[i], &u, 4);
        } else
            data[i] = hc_f16_to_float((uint16_t)(d[2 * i] | d[2 * i + 1] << 8));
    }
    out->name = nm;
    out->dtype = dtype;
    out->ndim = ndim;
    memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
    out->count = (size_t)count;
    out->data = data;
    return 0;
}

int hc_npy_load(const char *path, const char *name, hc_tensor *out, hc_err *err)
{
    size_t len = 0;
    memset(out, 0, sizeof *out);
    char *buf = hc_read_file(path, HC_TENSORFILE_MAX_BYTES, &len, err);
    if (!buf)
        return -1;
    int rc = hc_npy_parse(buf, len, path, name, out, err);
    free(buf);
    return rc;
}

int hc_npy_write(const char *path, const hc_tensor *t, hc_err *err)
{
    if (t->dtype != HC_DT_F32 && t->dtype != HC_DT_F16)
        return hc_err_set(err, HC_EUSAGE, "%s: tensor %s: .npy holds F32 or F16, not %s", path, t->name,
                          hc_dtype_str(t->dtype));
    char hdr[512];
    int o = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     t->dtype == HC_DT_F32 ? "<f4" : "<f2");
    for (int i = 0; i < t->ndim; i++)
        o += snprintf(hdr + o, sizeof hdr - (size_t)o, "%lld,%s", (long long)t->shape[i],
                      i + 1 < t->ndim ? " " : "");
    if (t->ndim > 1) /* numpy writes "(3,)" for one dimension and "(2, 3)" for more */
        o--;
    o += snprintf(hdr + o, sizeof hdr - (size_t)o, "), }");
    /* numpy pads the header with spaces and a newline so that the data starts at a multiple of 64 */
    size_t total = 10 + (size_t)o + 1;
    size_t pad = (64 - total % 64) % 64;
    unsigned char pre[10];
    size_t hlen = (size_t)o + pad + 1;
    memcpy(pre, NPY_MAGIC, 6);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);
    hc_ostream *s = hc_ostream_open(path, err);
    if (!s)
        return -1;
    int rc = hc_ostream_write(s, pre, 10, err) || hc_ostream_write(s, hdr, (size_t)o, err);
    for (size_t i = 0; !rc && i < pad; i++)
        rc = hc_ostream_write(s, " ", 1, err);
    rc = rc || hc_ostream_write(s, "\n", 1, err);
    rc = rc || hc_tensor_write_data(s, t, err);
    if (rc) {
        hc_ostream_abort(s);
        return -1;
    }
    return hc_ostream_commit(s, err);
}
