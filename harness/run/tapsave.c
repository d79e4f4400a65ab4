/* Golden layers (taps.h hc_taps_save): one tapping backend's input rows, taps and raw heads per
 * position, written as .npy files and/or one safetensors file with an index.json, for tools and
 * unit tests that want a trusted per-layer expectation without halfcheck (docs/TAPS.md). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/base/files.h"
#include "harness/base/sha256.h"
#include "harness/base/stream.h"
#include "harness/run/taps.h"
#include "harness/data/tensorfile.h"
#include "harness/base/version.h"

/* One tensor being gathered: per-row values for every position. */
typedef struct gathered {
    char *name;
    const char *kind; /* "input", "tap", "head" */
    int fmt;          /* enum hc_tap_fmt */
    int channels, hw; /* per row: hw == nnX*nnY (spatial) or 1 (vector) */
    float *data;      /* [n][channels][hw] */
} gathered;

typedef struct recorder {
    hc_tapped *t;
    const hc_net *net;
    int nx, ny;
    size_t n, cursor;
    gathered *g;
    int ng, cap;
} recorder;

static gathered *gather(recorder *r, const char *name, const char *kind, int fmt, int channels, int hw, hc_err *err)
{
    for (int i = 0; i < r->ng; i++)
        if (!strcmp(r->g[i].name, name)) {
            if (r->g[i].channels != channels || r->g[i].hw != hw) {
                hc_err_set(err, HC_EBACKEND, "tap %s: shape %d x %d, earlier %d x %d", name, channels, hw,
                           r->g[i].channels, r->g[i].hw);
                return NULL;
            }
            return &r->g[i];
        }
    if (r->ng == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        gathered *ng = realloc(r->g, (size_t)cap * sizeof *ng);
        if (!ng) {
            hc_err_set(err, HC_ENOMEM, "out of memory gathering taps");
            return NULL;
        }
        r->g = ng;
        r->cap = cap;
    }
    gathered *g = &r->g[r->ng];
    memset(g, 0, sizeof *g);
    g->name = strdup(name);
    g->data = calloc(r->n * (size_t)channels * (size_t)hw, sizeof(float));
    if (!g->name || !g->data) {
        free(g->name);
        free(g->data);
        hc_err_set(err, HC_ENOMEM, "out of memory gathering tap %s (%zu positions x %d x %d floats)", name, r->n,
                   channels, hw);
        return NULL;
    }
    g->kind = kind;
    g->fmt = fmt;
    g->channels = channels;
    g->hw = hw;
    r->ng++;
    return g;
}

/* rows [batch][per] of one tensor into its gathered rows from the cursor on. */
static int put(recorder *r, const char *name, const char *kind, int fmt, int channels, int hw, const float *rows,
               int batch, hc_err *err)
{
    if (!rows || channels < 1)
        return 0;
    gathered *g = gather(r, name, kind, fmt, channels, hw, err);
    if (!g)
        return -1;
    size_t per = (size_t)channels * (size_t)hw;
    memcpy(g->data + r->cursor * per, rows, (size_t)batch * per * sizeof(float));
    return 0;
}

static int rec_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                    hc_raw_heads *out, hc_err *err)
{
    recorder *r = inst;
    const hc_net *net = r->net;
    int area = r->nx * r->ny;
    if (r->cursor + (size_t)batch > r->n)
        return hc_err_set(err, HC_EINTERNAL, "taps --save: more rows than positions");
    if (hc_tapped_eval(r->t, batch, spatial, global, meta, out, err))
        return -1;
    if (put(r, "input/spatial", "input", HC_TAPFMT_F32, net->num_input_c, area, spatial, batch, err) ||
        put(r, "input/global", "input", HC_TAPFMT_F32, net->num_input_global_c, 1, global, batch, err) ||
        put(r, "input/meta", "input", HC_TAPFMT_F32, net->num_input_meta_c, 1, meta, batch, err))
        return -1;
    const hc_tapset *ts = hc_tapped_rec(r->t);
    for (int i = 0; i < hc_tapset_count(ts); i++) {
        const hc_tapset_entry *e = hc_tapset_at(ts, i);
        if (e->rows == 0)
            continue;
        if (e->rows != batch)
            return hc_err_set(err, HC_EBACKEND, "tap %s: %d rows for a batch of %d", e->name, e->rows, batch);
        if (put(r, e->name, "tap", e->fmt, e->channels, e->hw, e->data, batch, err))
            return -1;
    }
    if (put(r, "heads/policy", "head", HC_TAPFMT_F32, out->policy_channels, area, out->policy, batch, err) ||
        put(r, "heads/policy_pass", "head", HC_TAPFMT_F32, out->policy_channels, 1, out->policy_pass, batch, err) ||
        put(r, "heads/value", "head", HC_TAPFMT_F32, 3, 1, out->value, batch, err) ||
        put(r, "heads/score", "head", HC_TAPFMT_F32, out->score_channels, 1, out->score, batch, err) ||
        put(r, "heads/ownership", "head", HC_TAPFMT_F32, 1, area, out->ownership, batch, err))
        return -1;
    r->cursor += (size_t)batch;
    return 0;
}

static const hc_backend_ops rec_ops = {.eval = rec_eval};
/* Composed here around a backend opened through the registry; never registered. */
static const hc_backend_kind rec_kind = {
    .name = "taps-save",
    .summary = "a tapped backend whose rows, taps and heads are kept",
    .caps = {.shape = HC_BACKEND_TENSOR},
    .ops = &rec_ops,
};

/* '%' and '/' (and anything a file name should not hold) as %XX. */
static void file_name(const char *name, char *out, size_t cap)
{
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c && o + 4 < cap; c++) {
        if (*c == '%' || *c == '/' || *c == '\\' || *c == ':' || *c < 0x20 || *c == 0x7f)
            o += (size_t)snprintf(out + o, cap - o, "%%%02X", *c);
        else
            out[o++] = (char)*c;
    }
    out[o] = '\0';
}

static int dtype_of(int fmt) { return fmt == HC_TAPFMT_F16 ? HC_DT_F16 : fmt == HC_TAPFMT_BF16 ? HC_DT_BF16 : HC_DT_F32; }

static void to_tensor(const recorder *r, const gathered *g, hc_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->name = g->name;
    t->dtype = dtype_of(g->fmt);
    t->shape[0] = (int64_t)r->n;
    t->shape[1] = g->channels;
    if (g->hw > 1) {
        t->ndim = 4;
        t->shape[2] = r->ny;
        t->shape[3] = r->nx;
    } else
        t->ndim = 2;
    t->count = r->n * (size_t)g->channels * (size_t)g->hw;
    t->data = g->data;
}

static int write_all(const recorder *r, const hc_net *net, const hc_position *ps, const char *spec,
                     const hc_taps_save_opts *o, hc_err *err)
{
    char sha[65] = "", path[4096], fn[1024];
    if (o->net_path && hc_sha256_file(o->net_path, sha, err))
        return -1;
    if (hc_mkdir_p(o->dir, err))
        return -1;
    hc_tensor *ts = hc_calloc((size_t)r->ng, sizeof *ts, err, "tensors");
    if (!ts)
        return -1;
    for (int i = 0; i < r->ng; i++)
        to_tensor(r, &r->g[i], &ts[i]);
    int rc = -1;
    char nn[32], ver[16], npos[32];
    snprintf(nn, sizeof nn, "%dx%d", r->nx, r->ny);
    snprintf(ver, sizeof ver, "%d", HC_ENGINE_VERSION);
    snprintf(npos, sizeof npos, "%zu", r->n);
    json_t *idx = json_object(), *tl = json_array(), *rows = json_array(), *jn = json_object();
    char *text = NULL;
    if (!idx || !tl || !rows || !jn)
        goto oom;
    if (o->formats & HC_TAPS_SAVE_NPY) {
        snprintf(path, sizeof path, "%s/npy", o->dir);
        if (hc_mkdir_p(path, err))
            goto done;
    }
    for (int i = 0; i < r->ng; i++) {
        const gathered *g = &r->g[i];
        json_t *e = json_object(), *sh = json_array();
        if (!e || !sh) {
            json_decref(e);
            json_decref(sh);
            goto oom;
        }
        for (int d = 0; d < ts[i].ndim; d++)
            json_array_append_new(sh, json_integer(ts[i].shape[d]));
        json_object_set_new(e, "name", json_string(g->name));
        json_object_set_new(e, "kind", json_string(g->kind));
        json_object_set_new(e, "shape", sh);
        json_object_set_new(e, "layout", json_string(g->hw > 1 ? "NCHW" : "NC"));
        json_object_set_new(e, "format", json_string(hc_tap_fmt_str(g->fmt)));
        json_t *npy = json_null();
        if (o->formats & HC_TAPS_SAVE_NPY) {
            hc_tensor t = ts[i];
            if (t.dtype == HC_DT_BF16)
                t.dtype = HC_DT_F32; /* numpy has no bfloat16: its values exactly, as float32 */
            file_name(g->name, fn, sizeof fn);
            snprintf(path, sizeof path, "%s/npy/%s.npy", o->dir, fn);
            if (hc_npy_write(path, &t, err)) {
                json_decref(e);
                goto done;
            }
            json_object_set_new(e, "dtype_npy", json_string(hc_dtype_str(t.dtype)));
            snprintf(path, sizeof path, "npy/%s.npy", fn);
            npy = json_string(path);
        }
        json_object_set_new(e, "npy", npy);
        if (o->formats & HC_TAPS_SAVE_SAFETENSORS)
            json_object_set_new(e, "dtype", json_string(hc_dtype_str(ts[i].dtype)));
        json_array_append_new(tl, e);
    }
    for (size_t k = 0; k < r->n; k++) {
        json_t *row = json_object();
        if (!row)
            goto oom;
        json_object_set_new(row, "position", json_integer((json_int_t)k));
        json_object_set_new(row, "symmetry", json_integer(ps[k].symmetry));
        if (ps[k].file_line > 0)
            json_object_set_new(row, "line", json_integer(ps[k].file_line));
        json_array_append_new(rows, row);
    }
    json_object_set_new(idx, "format", json_string("halfcheck-taps"));
    json_object_set_new(idx, "formatVersion", json_integer(1));
    json_object_set_new(idx, "halfcheck", json_string(HC_VERSION));
    json_object_set_new(idx, "engineVersion", json_integer(HC_ENGINE_VERSION));
    json_object_set_new(jn, "name", json_string(net->name ? net->name : ""));
    json_object_set_new(jn, "file", o->net_path ? json_string(o->net_path) : json_null());
    json_object_set_new(jn, "sha256", sha[0] ? json_string(sha) : json_null());
    json_object_set_new(jn, "version", json_integer(net->model_version));
    json_object_set(idx, "net", jn);
    json_object_set_new(idx, "backend", json_string(spec));
    json_object_set_new(idx, "nn", json_pack("{s:i,s:i}", "x", r->nx, "y", r->ny));
    json_object_set_new(idx, "positionsFile", o->positions_path ? json_string(o->positions_path) : json_null());
    json_object_set_new(idx, "rows", rows);
    rows = NULL;
    json_object_set_new(idx, "safetensors",
                        o->formats & HC_TAPS_SAVE_SAFETENSORS ? json_string("taps.safetensors") : json_null());
    json_object_set_new(idx, "tensors", tl);
    tl = NULL;
    if (o->formats & HC_TAPS_SAVE_SAFETENSORS) {
        const char *meta[] = {"format", "halfcheck-taps", "halfcheck", HC_VERSION, "engineVersion", ver,
                              "net", net->name ? net->name : "", "netSha256", sha, "backend", spec, "nn", nn,
                              "positions", npos};
        snprintf(path, sizeof path, "%s/taps.safetensors", o->dir);
        if (hc_safetensors_write(path, ts, r->ng, meta, (int)(sizeof meta / sizeof meta[0] / 2), err))
            goto done;
    }
    if (!(text = json_dumps(idx, JSON_INDENT(1) | JSON_PRESERVE_ORDER)))
        goto oom;
    snprintf(path, sizeof path, "%s/index.json", o->dir);
    hc_ostream *os = hc_ostream_open(path, err);
    if (!os)
        goto done;
    if (hc_ostream_write_line(os, text, err)) {
        hc_ostream_abort(os);
        goto done;
    }
    rc = hc_ostream_commit(os, err);
    goto done;
oom:
    hc_err_set(err, HC_ENOMEM, "out of memory writing the taps index");
done:
    free(text);
    json_decref(idx);
    json_decref(tl);
    json_decref(rows);
    json_decref(jn);
    free(ts);
    return rc;
}

int hc_taps_save(const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s, const char *spec,
                 int batch, const hc_taps_save_opts *o, int *n_tensors, hc_err *err)
{
    if (n == 0)
        return hc_err_set(err, HC_EUSAGE, "taps --save: no positions");
    if (!o->formats)
        return hc_err_set(err, HC_EUSAGE, "taps --save: no format (npy, safetensors)");
    recorder r = {.net = net, .nx = s->nn_x, .ny = s->nn_y, .n = n};
    hc_nnoutput *outs = NULL;
    int rc = -1;
    if (!(r.t = hc_tapped_open(spec, net, s->nn_x, s->nn_y, batch, err)) ||
        !(outs = hc_calloc(n, sizeof *outs, err, "outputs")))
        goto done;
    hc_backend b = {&rec_kind, &r};
    hc_evaluator_opts eo = {.net = net, .settings = *s, .batch = batch, .backend = &b};
    hc_evaluator *ev = hc_evaluator_open(&eo, err);
    hc_eval_request req = {.ps = ps, .n = n, .outs = outs};
    int ran = ev && hc_evaluator_run(ev, &req, err) == 0;
    hc_evaluator_close(ev);
    if (!ran)
        goto done;
    if (r.cursor != n) {
        hc_err_set(err, HC_EINTERNAL, "taps --save: %zu of %zu rows evaluated", r.cursor, n);
        goto done;
    }
    if (write_all(&r, net, ps, spec, o, err))
        goto done;
    if (n_tensors)
        *n_tensors = r.ng;
    rc = 0;
done:
    if (outs)
        hc_nnoutputs_free(outs, n);
    for (int i = 0; i < r.ng; i++) {
        free(r.g[i].name);
        free(r.g[i].data);
    }
    free(r.g);
    hc_tapped_free(r.t);
    return rc;
}
