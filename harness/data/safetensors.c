/* safetensors (tensorfile.h), reader and writer: an 8-byte little-endian header length, a JSON
 * header naming every tensor's element type, shape and byte range in the data that follows, and
 * an optional "__metadata__" object of strings. The header is read with jansson (already the
 * JSON library of the outputs and results readers); duplicate names are refused. */
#include "harness/data/tensorfile.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"

/* The format's own cap on the header (its reference reader refuses more). */
#define ST_MAX_HEADER ((uint64_t)100000000)


void hc_tensorset_free(hc_tensorset *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        hc_tensor_clear(&s->t[i]);
    free(s->t);
    for (int i = 0; i < 2 * s->n_meta; i++)
        free(s->meta[i]);
    free(s->meta);
    memset(s, 0, sizeof *s);
}

const hc_tensor *hc_tensorset_find(const hc_tensorset *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].name, name))
            return &s->t[i];
    return NULL;
}

const char *hc_tensorset_meta(const hc_tensorset *s, const char *key)
{
    for (int i = 0; i < s->n_meta; i++)
        if (!strcmp(s->meta[2 * i], key))
            return s->meta[2 * i + 1];
    return NULL;
}

static int dtype_parse(const char *s)
{
    return !strcmp(s, "F32") ? HC_DT_F32 : !strcmp(s, "F16") ? HC_DT_F16 : !strcmp(s, "BF16") ? HC_DT_BF16 : -1;
}

typedef struct st_entry {
    uint64_t begin, end;
    int idx;
} st_entry;

static int by_begin(const void *a, const void *b)
{
    const st_entry *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : x->idx - y->idx;
}

/* A JSON integer >= 0 into *out. */
static int json_u64(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

int hc_safetensors_parse(const void *buf, size_t len, const char *file, hc_tensorset *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    const unsigned char *b = buf;
    if (len < 8)
        return hc_tensorfile_fail(err, file, NULL, len, "truncated: the file ends inside the 8-byte header length (%zu bytes)",
                       len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | b[i];
    if (hlen > ST_MAX_HEADER)
        return hc_tensorfile_fail(err, file, NULL, 0, "a header of %llu bytes (at most %llu): not a safetensors file?",
                       (unsigned long long)hlen, (unsigned long long)ST_MAX_HEADER);
    if (hlen > len - 8)
        return hc_tensorfile_fail(err, file, NULL, 8, "truncated: the header is %llu bytes, the file holds %zu after its length",
                       (unsigned long long)hlen, len - 8);
    const unsigned char *data = b + 8 + hlen;
    uint64_t dlen = len - 8 - hlen, dbase = 8 + hlen;
    json_error_t je;
    json_t *root = json_loadb((const char *)b + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (strstr(je.text, "duplicate object key")) {
            /* jansson says `duplicate object key near '"NAME"'`: the name, for the message */
            char dup[256] = "?";
            const char *q = strstr(je.text, "near '\"");
            if (q) {
                snprintf(dup, sizeof dup, "%s", q + 7);
                size_t l = strlen(dup);
                if (l >= 2 && dup[l - 1] == '\'' && dup[l - 2] == '"')
                    dup[l - 2] = '\0';
            }
            return hc_tensorfile_fail(err, file, dup, 8 + (uint64_t)je.position,
                           "duplicate name: the header names this tensor twice");
        }
        return hc_tensorfile_fail(err, file, NULL, 8 + (uint64_t)je.position, "malformed JSON header: %s", je.text);
    }
    int rc = -1, n = 0;
    st_entry *ent = NULL;
    if (!json_is_object(root)) {
        hc_tensorfile_fail(err, file, NULL, 8, "the header is not a JSON object");
        goto done;
    }
    size_t nkeys = json_object_size(root);
    out->t = calloc(nkeys ? nkeys : 1, sizeof *out->t);
    ent = calloc(nkeys ? nkeys : 1, sizeof *ent);
    if (!out->t || !ent) {
        hc_err_set(err, HC_ENOMEM, "%s: out of memory", file);
        goto done;
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (!strcmp(key, "__metadata__")) {
            if (!json_is_object(v)) {
                hc_tensorfile_fail(err, file, NULL, 8, "\"__metadata__\" is not an object");
                goto done;
            }
            size_t nm = json_object_size(v);
            out->meta = calloc(2 * nm + 1, sizeof(char *));
            if (!out->meta) {
                hc_err_set(err, HC_ENOMEM, "%s: out of memory", file);
                goto done;
            }
            const char *mk;
            json_t *mv;
            json_object_foreach(v, mk, mv) {
                if (!json_is_string(mv)) {
                    hc_tensorfile_fail(err, file, NULL, 8, "\"__metadata__\": value of \"%s\" is not a string", mk);
                    goto done;
                }
                if (!(out->meta[2 * out->n_meta] = strdup(mk)) ||
                    !(out->meta[2 * out->n_meta + 1] = strdup(json_string_value(mv)))) {
                    out->n_meta++;
                    hc_err_set(err, HC_ENOMEM, "%s: out of memory", file);
                    goto done;
                }
                out->n_meta++;
            }
            continue;
        }
        json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
               *off = json_object_get(v, "data_offsets");
        if (!json_is_object(v) || !json_is_string(dt) || !json_is_array(sh) || !json_is_array(off) ||
            json_array_size(off) != 2 || json_object_size(v) != 3) {
            hc_tensorfile_fail(err, file, key, 8, "malformed entry: expected {\"dtype\": STRING, \"shape\": [...], "
                    "\"data_offsets\": [BEGIN, END]}");
            goto done;
        }
        int dtype = dtype_parse(json_string_value(dt));
        if (dtype < 0) {
            hc_tensorfile_fail(err, file, key, 8, "unsupported dtype %.32s (F32, F16 and BF16 are read)", json_string_value(dt));
            goto done;
        }
        hc_tensor *t = &out->t[n];
        if (json_array_size(sh) > HC_TENSOR_MAX_DIMS) {
            hc_tensorfile_fail(err, file, key, 8, "shape: more than %d dimensions", HC_TENSOR_MAX_DIMS);
            goto done;
        }
        uint64_t count = 1;
        for (size_t i = 0; i < json_array_size(sh); i++) {
            uint64_t d;
            if (json_u64(json_array_get(sh, i), &d)) {
                hc_tensorfile_fail(err, file, key, 8, "shape: dimension %zu is not an integer >= 0", i);
                goto done;
            }
            if (d > HC_TENSOR_MAX_ELEMS || (count *= d) > HC_TENSOR_MAX_ELEMS) {
                hc_tensorfile_fail(err, file, key, 8, "shape: more than %llu elements", (unsigned long long)HC_TENSOR_MAX_ELEMS);
                goto done;
            }
            t->shape[i] = (int64_t)d;
        }
        t->ndim = (int)json_array_size(sh);
        uint64_t b0, b1;
        if (json_u64(json_array_get(off, 0), &b0) || json_u64(json_array_get(off, 1), &b1) || b1 < b0) {
            hc_tensorfile_fail(err, file, key, 8, "data_offsets: not two integers BEGIN <= END");
            goto done;
        }
        char shs[160];
        uint64_t need = count * hc_dtype_size(dtype);
        if (b1 > dlen) {
            hc_tensorfile_fail(err, file, key, dbase + b0, "data_offsets [%llu, %llu] run past the data (%llu bytes after the "
                    "header): truncated file, or a header lying about the data", (unsigned long long)b0,
                    (unsigned long long)b1, (unsigned long long)dlen);
            goto done;
        }
        if (b1 - b0 != need) {
            hc_tensorfile_fail(err, file, key, dbase + b0, "data_offsets [%llu, %llu] hold %llu bytes, shape %s of %s needs %llu",
                    (unsigned long long)b0, (unsigned long long)b1, (unsigned long long)(b1 - b0),
                    hc_tensor_shape_str(t, shs, sizeof shs), json_string_value(dt), (unsigned long long)need);
            goto done;
        }
        t->dtype = dtype;
        t->count = (size_t)count;
        if (!(t->name = strdup(key)) || !(t->data = malloc(count ? (size_t)count * sizeof(float) : 1))) {
            n++;
            hc_err_set(err, HC_ENOMEM, "%s: tensor %s: out of memory", file, key);
            goto done;
        }
        const unsigned char *d = data + b0;
        for (size_t i = 0; i < (size_t)count; i++) {
            if (dtype == HC_DT_F32) {
                uint32_t u = (uint32_t)d[4 * i] | (uint32_t)d[4 * i + 1] << 8 | (uint32_t)d[4 * i + 2] << 16 |
                             (uint32_t)d[4 * i + 3] << 24;
                memcpy(&t->data[i], &u, 4);
            } else {
                uint16_t h = (uint16_t)(d[2 * i] | d[2 * i + 1] << 8);
                t->data[i] = dtype == HC_DT_F16 ? hc_f16_to_float(h) : hc_bf16_to_float(h);
            }
        }
        ent[n].begin = b0;
        ent[n].end = b1;
        ent[n].idx = n;
        n++;
    }
    /* in the order of their data: the order the writer laid them out (its forward order) */
    qsort(ent, (size_t)n, sizeof *ent, by_begin);
    hc_tensor *sorted = calloc(n ? (size_t)n : 1, sizeof *sorted);
    if (!sorted) {
        hc_err_set(err, HC_ENOMEM, "%s: out of memory", file);
        goto done;
    }
    for (int i = 0; i < n; i++)
        sorted[i] = out->t[ent[i].idx];
    free(out->t);
    out->t = sorted;
    rc = 0;
done:
    out->n = n;
    free(ent);
    json_decref(root);
    if (rc)
        hc_tensorset_free(out);
    return rc;
}

int hc_safetensors_load(const char *path, hc_tensorset *out, hc_err *err)
{
    size_t len = 0;
    memset(out, 0, sizeof *out);
    char *buf = hc_read_file(path, HC_TENSORFILE_MAX_BYTES, &len, err);
    if (!buf)
        return -1;
    int rc = hc_safetensors_parse(buf, len, path, out, err);
    free(buf);
    return rc;
}

int hc_safetensors_write(const char *path, const hc_tensor *ts, int n, const char *const *meta, int n_meta,
                         hc_err *err)
{
    json_t *root = json_object(), *md = n_meta ? json_object() : NULL;
    int rc = -1;
    char *text = NULL;
    hc_ostream *s = NULL;
    if (!root || (n_meta && !md))
        goto oom;
    for (int i = 0; i < n_meta; i++)
        if (json_object_set_new(md, meta[2 * i], json_string(meta[2 * i + 1])))
            goto oom;
    if (md && json_object_set(root, "__metadata__", md))
        goto oom;
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        const hc_tensor *t = &ts[i];
        if (json_object_get(root, t->name)) {
            hc_err_set(err, HC_EUSAGE, "%s: tensor %s: duplicate name", path, t->name);
            goto done;
        }
        json_t *e = json_object(), *sh = json_array(), *of = json_array();
        if (!e || !sh || !of) {
            json_decref(e), json_decref(sh), json_decref(of);
            goto oom;
        }
        for (int d = 0; d < t->ndim; d++)
            json_array_append_new(sh, json_integer(t->shape[d]));
        uint64_t bytes = (uint64_t)t->count * hc_dtype_size(t->dtype);
        json_array_append_new(of, json_integer((json_int_t)off));
        json_array_append_new(of, json_integer((json_int_t)(off + bytes)));
        off += bytes;
        json_object_set_new(e, "dtype", json_string(hc_dtype_str(t->dtype)));
        json_object_set_new(e, "shape", sh);
        json_object_set_new(e, "data_offsets", of);
        if (json_object_set_new(root, t->name, e))
            goto oom;
    }
    if (!(text = json_dumps(root, JSON_COMPACT)))
        goto oom;
    /* the header padded with spaces so that the data starts 8-aligned (the format allows it) */
    size_t tl = strlen(text), hl = (tl + 7) / 8 * 8;
    unsigned char l8[8];
    for (int i = 0; i < 8; i++)
        l8[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    if (!(s = hc_ostream_open(path, err)))
        goto done;
    int w = hc_ostream_write(s, l8, 8, err) || hc_ostream_write(s, text, tl, err) ||
            hc_ostream_write(s, "        ", hl - tl, err);
    for (int i = 0; !w && i < n; i++)
        w = hc_tensor_write_data(s, &ts[i], err);
    if (w) {
        hc_ostream_abort(s);
        goto done;
    }
    rc = hc_ostream_commit(s, err);
    goto done;
oom:
    hc_err_set(err, HC_ENOMEM, "%s: out of memory writing the safetensors header", path);
done:
    free(text);
    json_decref(md);
    json_decref(root);
    return rc;
}
