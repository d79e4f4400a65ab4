/* Taps through files (docs/TAPS.md, "Golden layers" and "Taps from files"): `taps --save` read back
 * through the tensors: backend equals ref32 at every layer (error 0, no divergent layer) from
 * safetensors and from .npy, for a convnet and a transformer; a tool's own names, NHWC layout, f16
 * storage and a stated row order are read through a name map; a planted bug is named at its
 * layer, a missing layer listed, another shape reported with the file's tensor and both shapes,
 * names the reference lacks listed, and files written for another row order, two tensors under
 * one name and a malformed map refused. A 0.02 bias (g170 rconv3/norm1) or a 1% scale (a
 * transformer's q_proj) planted in a tool's f32, f16 or bf16 dump of ref32, or an f16 dump of
 * emulate:fp16, is named at its layer and the unchanged dumps name none; `taps` exits 1 on it and
 * states its coverage, and exits 2 when a map matches nothing. examples/pipe_numpy.py --dump with
 * a bug planted in one block is named at that block's layer from the files alone (g170 convnet,
 * b7c96h3tfrs transformer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "refs/round.h"
#include "harness/base/sha256.h"
#include "harness/run/taps.h"
#include "harness/data/tensorfile.h"

#define G170 "nets/g170-b6c96-s175395328-d26788732.bin.gz"
#define TF "nets/b7c96h3tfrs-test5-cnorm.bin.gz"
#define KV "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"

static const char *dir;
static const char *python;

static hc_net *load_net(const char *path, hc_err *err)
{
    hc_net *net = hc_net_load(path, err);
    if (net)
        hc_net_reduce_activations(net);
    return net;
}

static hc_tapcmp *cmp_spec(const hc_net *net, const hc_position *ps, size_t n, const char *spec, hc_err *err)
{
    hc_eval_settings s = hc_eval_settings_default(9, 9);
    return hc_taps_compare(net, ps, n, &s, "ref32", spec, 2, err);
}

/* Every layer compared with error 0 and none divergent. */
static int all_zero(const hc_tapcmp *c, double *worst)
{
    int ok = c && hc_tapcmp_count(c) > 10 && hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) < 0 &&
             hc_tapcmp_extra_count(c) == 0;
    *worst = 0;
    for (int i = 0; c && i < hc_tapcmp_count(c); i++) {
        const hc_tapdiff *d = hc_tapcmp_at(c, i);
        ok = ok && !d->missing && !d->mismatch && d->n > 0 && d->fmt == HC_TAPFMT_F32;
        *worst = hc_max_nan(*worst, d->max_abs);
    }
    return ok && *worst == 0;
}

static int save(const hc_net *net, const char *netpath, const hc_position *ps, size_t n, const char *out, int fmts,
                hc_err *err)
{
    hc_eval_settings s = hc_eval_settings_default(9, 9);
    hc_taps_save_opts o = {.dir = out, .formats = fmts, .net_path = netpath, .positions_path = "size9"};
    hc_shf("rm -rf %s", out);
    return hc_taps_save(net, ps, n, &s, "ref32", 2, &o, NULL, err);
}

static void roundtrip(const char *tag, const char *rel, const hc_position *ps, size_t n)
{
    const char *p0 = hc_shared(rel);
    char *path = p0 ? strdup(p0) : NULL;
    hc_err err = {0};
    hc_net *net = path ? load_net(path, &err) : NULL;
    char name[64];
    if (!net) {
        hc_skip_n(tag, 3, "%s absent", rel);
        free(path);
        return;
    }
    char out[512], spec[700];
    snprintf(out, sizeof out, "%s/%s-both", dir, tag);
    int ok = save(net, path, ps, n, out, HC_TAPS_SAVE_NPY | HC_TAPS_SAVE_SAFETENSORS, &err) == 0;
    double w = -1;
    snprintf(spec, sizeof spec, "tensors:%s", out);
    hc_tapcmp *c = ok ? cmp_spec(net, ps, n, spec, &err) : NULL;
    snprintf(name, sizeof name, "%s.1", tag);
    hc_check(name, all_zero(c, &w), "taps --save (safetensors) read back: every layer compared, error 0 (largest "
             "%g), none divergent %s", w, c ? "" : err.msg);
    hc_tapcmp_free(c);
    snprintf(out, sizeof out, "%s/%s-npy", dir, tag);
    ok = save(net, path, ps, n, out, HC_TAPS_SAVE_NPY, &err) == 0;
    snprintf(spec, sizeof spec, "tensors:%s", out);
    c = ok ? cmp_spec(net, ps, n, spec, &err) : NULL;
    snprintf(name, sizeof name, "%s.2", tag);
    hc_check(name, all_zero(c, &w) && !hc_file_exists(hc_path(out, "taps.safetensors")),
             "taps --save --save-format npy read back: error 0 (largest %g) %s", w, c ? "" : err.msg);
    hc_tapcmp_free(c);
    /* the safetensors file alone (no index: row i is position i) */
    snprintf(spec, sizeof spec, "tensors:%s/%s-both/taps.safetensors", dir, tag);
    c = cmp_spec(net, ps, n, spec, &err);
    snprintf(name, sizeof name, "%s.3", tag);
    hc_check(name, all_zero(c, &w), "the .safetensors file given alone: error 0 %s", c ? "" : err.msg);
    hc_tapcmp_free(c);
    hc_net_free(net);
    free(path);
}

/* A tool's directory written from a saved tensorset: its own names ("t." + name, '/' as "__"),
 * spatial taps NHWC when nhwc, in f16 (f16: the files' type) or bf16 (bf16: values rounded to
 * bf16 in f32 arrays; the map says `format: bf16`), rows in the order `order` (file row j =
 * position order[j]); layer `skip` left out, layer `plant` written as v * scale + bias, layer
 * `fewer` with one channel fewer. Downstream layers stay the reference's: a file is not a
 * forward pass. */
typedef struct tool_opts {
    const int *order;
    int rows, nhwc, f16, bf16;
    const char *skip, *plant, *fewer;
    float scale, bias;
} tool_opts;

static int write_tool(const hc_tensorset *ts, const char *out, const tool_opts *to, hc_err *err)
{
    hc_shf("rm -rf %s && mkdir -p %s", out, out);
    for (int i = 0; i < ts->n; i++) {
        const hc_tensor *t = &ts->t[i];
        if (to->skip && !strcmp(t->name, to->skip))
            continue;
        if (!strncmp(t->name, "heads/", 6))
            continue;
        int input = !strncmp(t->name, "input/", 6), rows = to->rows;
        hc_tensor o = *t;
        size_t per = t->count / (size_t)rows;
        int C = (int)t->shape[1], hw = (int)(per / (size_t)C);
        if (to->fewer && !strcmp(t->name, to->fewer)) {
            o.shape[1] = --C;
            per = (size_t)C * (size_t)hw;
            o.count = per * (size_t)rows;
        }
        o.data = malloc(o.count * sizeof(float));
        int transpose = to->nhwc && !input && t->ndim == 4, planted = to->plant && !strcmp(t->name, to->plant);
        for (int j = 0; j < rows; j++)
            for (int c = 0; c < C; c++)
                for (int q = 0; q < hw; q++) {
                    float v = t->data[(size_t)to->order[j] * (size_t)t->shape[1] * hw + (size_t)c * hw + q];
                    if (planted)
                        v = v * to->scale + to->bias;
                    if (to->bf16 && !input)
                        v = hc_round_bf16(v);
                    o.data[(size_t)j * per + (transpose ? (size_t)q * C + c : (size_t)c * hw + q)] = v;
                }
        if (transpose) {
            o.shape[1] = t->shape[2], o.shape[2] = t->shape[3], o.shape[3] = C;
        }
        o.dtype = to->f16 && !input ? HC_DT_F16 : HC_DT_F32;
        char nm[300], file[900];
        size_t k = (size_t)snprintf(nm, sizeof nm, "%s", input ? "in." : "t.");
        for (const char *p = input ? t->name + 6 : t->name; *p && k + 3 < sizeof nm; p++)
            if (*p == '/')
                nm[k++] = '_', nm[k++] = '_';
            else
                nm[k++] = *p;
        nm[k] = '\0';
        snprintf(file, sizeof file, "%s/%s.npy", out, nm);
        int rc = hc_npy_write(file, &o, err);
        free(o.data);
        if (rc)
            return -1;
    }
    return 0;
}

static const char *map_text(const char *extra)
{
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "layout: NHWC\n"
             "map:\n"
             "  in.spatial: {tap: input/spatial, layout: NCHW}\n"
             "  in.global: input/global\n"
             "  \"t.model.blocks.*\": \"model.blocks.*\"\n"
             "  \"t.*__*__*\": \"*/*/*\"\n"
             "  \"t.*__*\": \"*/*\"\n"
             "  \"t.*\": \"*\"\n%s",
             extra ? extra : "");
    return buf;
}

static int write_map(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static void tool_checks(const hc_position *ps, size_t n)
{
    const char *p0 = hc_shared(G170);
    char *path = p0 ? strdup(p0) : NULL;
    hc_err err = {0};
    hc_net *net = path ? load_net(path, &err) : NULL;
    char saved[512], tool[512], map[600], spec[1400];
    snprintf(saved, sizeof saved, "%s/tool-golden", dir);
    hc_tensorset ts = {0};
    if (!net || n < 4 || save(net, path, ps, 4, saved, HC_TAPS_SAVE_SAFETENSORS, &err) ||
        hc_safetensors_load(hc_path(saved, "taps.safetensors"), &ts, &err)) {
        hc_skip_n("tapsfiles-tool", 14, "g170 absent or could not be saved: %s", err.msg);
        hc_net_free(net);
        free(path);
        return;
    }
    /* index.json: the net's sha256, engine version, each row's position */
    char sha[65] = "";
    hc_sha256_file(path, sha, &err);
    const char *idx = hc_text(hc_path(saved, "index.json"));
    hc_check("tapsfiles-tool.0", sha[0] && strstr(idx, sha) && strstr(idx, "\"engineVersion\": 3") &&
                                     strstr(idx, "\"position\": 3") && strstr(idx, "\"name\": \"input/spatial\"") &&
                                     strstr(idx, "\"name\": \"heads/ownership\"") &&
                                     strstr(idx, "\"layout\": \"NCHW\"") && strstr(idx, "\"dtype\": \"F32\""),
             "index.json names the net's sha256, the engine version, each row's position, every tensor's "
             "layout and element type");
    snprintf(tool, sizeof tool, "%s/tool", dir);
    snprintf(map, sizeof map, "%s/tool-names.yaml", dir);
    static const int perm[4] = {1, 0, 3, 2}, ident[4] = {0, 1, 2, 3};
    char extra[128];
    snprintf(extra, sizeof extra, "rows: [1, 0, 3, 2]\n");
    int ok = write_tool(&ts, tool, &(tool_opts){.order = perm, .rows = 4, .nhwc = 1, .f16 = 1}, &err) == 0 &&
             write_map(map, map_text(extra)) == 0;
    snprintf(spec, sizeof spec, "tensors:@map=%s %s", map, tool);
    hc_tapcmp *c = ok ? cmp_spec(net, ps, 4, spec, &err) : NULL;
    int good = c && hc_tapcmp_count(c) > 10 && hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) < 0 &&
               hc_tapcmp_extra_count(c) == 0;
    for (int i = 0; good && i < hc_tapcmp_count(c); i++) {
        const hc_tapdiff *d = hc_tapcmp_at(c, i);
        good = !d->missing && !d->mismatch && d->fmt == HC_TAPFMT_F16 && hc_tapdiff_max_rel(d) == hc_tapdiff_stor_rel(d);
    }
    hc_check("tapsfiles-tool.1", good, "own names by patterns, NHWC, f16, rows in a stated order: every layer's "
             "error is its f16 storage, none divergent %s", c ? "" : err.msg);
    hc_tapcmp_free(c);

    /* the layout from the spec (@layout=nhwc) instead of the map, and a format the map states:
     * the same f16 values read as bf16 storage, still none divergent */
    char map2[600], spec2[1400];
    snprintf(map2, sizeof map2, "%s/tool-names2.yaml", dir);
    const char *m2 = map_text(NULL);
    write_map(map2, strstr(m2, "map:\n") ? strstr(m2, "map:\n") : m2); /* no layout: line */
    FILE *mf = fopen(map2, "a");
    if (mf) {
        fputs("rows: [1, 0, 3, 2]\nformat: bf16\n", mf);
        fclose(mf);
    }
    snprintf(spec2, sizeof spec2, "tensors:@map=%s @layout=nhwc %s", map2, tool);
    c = cmp_spec(net, ps, 4, spec2, &err);
    good = c && hc_tapcmp_count(c) > 10 && hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) < 0;
    for (int i = 0; good && i < hc_tapcmp_count(c); i++) {
        const hc_tapdiff *d = hc_tapcmp_at(c, i);
        good = !d->missing && !d->mismatch && d->fmt == HC_TAPFMT_BF16;
    }
    hc_check("tapsfiles-tool.12", good, "@layout=nhwc in the spec, format: bf16 in the map: every layer read, bf16, "
             "none divergent %s", c ? "" : err.msg);
    hc_tapcmp_free(c);

    /* the same files without the row order: the input rows differ, refused */
    write_map(map, map_text(NULL));
    c = cmp_spec(net, ps, 4, spec, &err);
    hc_check("tapsfiles-tool.2", !c && strstr(err.msg, "the input rows differ") && strstr(err.msg, "in.spatial") &&
                                     strstr(err.msg, "position 0 (row 0 of"),
             "files in another row order than stated are refused: %s", c ? "compared" : err.msg);
    hc_tapcmp_free(c);

    /* a bug planted in one layer's tensor is named there; a missing layer listed */
    ok = write_tool(&ts, tool,
                    &(tool_opts){.order = ident, .rows = 4, .nhwc = 1, .skip = "rconv2/norm1", .plant = "rconv3/w1a",
                                 .scale = 1.05f},
                    &err) == 0;
    c = ok ? cmp_spec(net, ps, 4, spec, &err) : NULL;
    int f = c ? hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) : -1, miss = 0;
    const char *missing = "";
    for (int i = 0; c && i < hc_tapcmp_count(c); i++)
        if (hc_tapcmp_at(c, i)->missing)
            miss++, missing = hc_tapcmp_at(c, i)->name;
    hc_check("tapsfiles-tool.3", f >= 0 && !strcmp(hc_tapcmp_at(c, f)->name, "rconv3/w1a"),
             "a tensor off by 5%% is named: first divergent %s %s", f >= 0 ? hc_tapcmp_at(c, f)->name : "none",
             c ? "" : err.msg);
    hc_check("tapsfiles-tool.4", miss == 1 && !strcmp(missing, "rconv2/norm1"),
             "the layer without a file is listed absent (%d absent, %s)", miss, missing);
    hc_tapcmp_free(c);

    /* one channel fewer: a mismatch naming the file's tensor and both shapes; a name the map
     * leaves unknown is listed */
    ok = write_tool(&ts, tool, &(tool_opts){.order = ident, .rows = 4, .fewer = "rconv4/w1"}, &err) == 0 &&
         hc_shf("cp %s/t.v1__w.npy %s/extra_tensor.npy", tool, tool) == 0;
    write_map(map, "map:\n  in.spatial: input/spatial\n  in.global: input/global\n  \"t.model.blocks.*\": "
                   "\"model.blocks.*\"\n  \"t.*__*__*\": \"*/*/*\"\n  \"t.*__*\": \"*/*\"\n  \"t.*\": \"*\"\n");
    c = ok ? cmp_spec(net, ps, 4, spec, &err) : NULL;
    const hc_tapdiff *mm = NULL;
    for (int i = 0; c && i < hc_tapcmp_count(c); i++)
        if (hc_tapcmp_at(c, i)->mismatch)
            mm = hc_tapcmp_at(c, i);
    hc_check("tapsfiles-tool.5", mm && !strcmp(mm->name, "rconv4/w1") && mm->channels == 96 && mm->b_channels == 95 &&
                                     strstr(mm->b_origin, "t.rconv4__w1.npy: tensor t.rconv4__w1 [4, 95, 9, 9] NCHW"),
             "one channel fewer: a shape mismatch, A 96, B %d, from \"%s\"", mm ? mm->b_channels : -1,
             mm ? mm->b_origin : "");
    hc_check("tapsfiles-tool.6", c && hc_tapcmp_extra_count(c) == 1 && !strcmp(hc_tapcmp_extra_at(c, 0), "extra_tensor"),
             "a tensor under a name the reference lacks is listed (%d: %s)", c ? hc_tapcmp_extra_count(c) : -1,
             c && hc_tapcmp_extra_count(c) ? hc_tapcmp_extra_at(c, 0) : "");
    hc_tapcmp_free(c);

    /* two tensors under one name; a map with a bad layout */
    hc_shf("cp %s/t.conv1.npy %s/conv1_again.npy", tool, tool);
    write_map(map, map_text("  conv1_again: conv1\n"));
    c = cmp_spec(net, ps, 4, spec, &err);
    hc_check("tapsfiles-tool.7", !c && strstr(err.msg, "duplicate name") && strstr(err.msg, "conv1_again") &&
                                     strstr(err.msg, "t.conv1"),
             "two tensors mapped to one name are refused naming both: %s", c ? "compared" : err.msg);
    hc_tapcmp_free(c);
    write_map(map, "layout: NWHC\n");
    c = cmp_spec(net, ps, 4, spec, &err);
    hc_check("tapsfiles-tool.8", !c && strstr(err.msg, "tool-names.yaml:1:9: layout: \"NWHC\" (NCHW or NHWC)"),
             "a bad map names its place: %s", c ? "compared" : err.msg);
    hc_tapcmp_free(c);

    /* BF16 in safetensors: read as bf16, every layer's error its bf16 storage */
    hc_tensor *bt = calloc((size_t)ts.n, sizeof *bt);
    int nb = 0;
    for (int i = 0; bt && i < ts.n; i++)
        if (strncmp(ts.t[i].name, "heads/", 6)) {
            bt[nb] = ts.t[i];
            bt[nb++].dtype = strncmp(ts.t[i].name, "input/", 6) ? HC_DT_BF16 : HC_DT_F32;
        }
    ok = bt && hc_safetensors_write(hc_path(dir, "bf16.safetensors"), bt, nb, NULL, 0, &err) == 0;
    free(bt);
    snprintf(spec, sizeof spec, "tensors:%s", hc_path(dir, "bf16.safetensors"));
    c = ok ? cmp_spec(net, ps, 4, spec, &err) : NULL;
    good = c && hc_tapcmp_count(c) > 10 && hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) < 0;
    for (int i = 0; good && i < hc_tapcmp_count(c); i++) {
        const hc_tapdiff *d = hc_tapcmp_at(c, i);
        good = !d->missing && d->fmt == HC_TAPFMT_BF16 && hc_tapdiff_max_rel(d) == hc_tapdiff_stor_rel(d) &&
               (d->max_abs > 0 || d->max_ref == 0);
    }
    hc_check("tapsfiles-tool.10", good, "BF16 safetensors: every layer bf16, its error its storage, none divergent %s",
             c ? "" : err.msg);
    hc_tapcmp_free(c);

    /* emulate:fp16 saved (F16 tensors) and read back compares with ref32 as emulate:fp16 itself does */
    char emu[512];
    snprintf(emu, sizeof emu, "%s/emu", dir);
    hc_eval_settings s9 = hc_eval_settings_default(9, 9);
    hc_taps_save_opts so = {.dir = emu, .formats = HC_TAPS_SAVE_SAFETENSORS, .net_path = path};
    hc_tapcmp *direct = cmp_spec(net, ps, 4, "emulate:fp16", &err);
    ok = direct && hc_taps_save(net, ps, 4, &s9, "emulate:fp16", 2, &so, NULL, &err) == 0;
    snprintf(spec, sizeof spec, "tensors:%s", emu);
    c = ok ? cmp_spec(net, ps, 4, spec, &err) : NULL;
    good = c && hc_tapcmp_count(c) == hc_tapcmp_count(direct) && hc_tapcmp_count(c) > 10;
    int f16 = 0;
    for (int i = 0; good && i < hc_tapcmp_count(c); i++) {
        const hc_tapdiff *x = hc_tapcmp_at(c, i), *y = hc_tapcmp_at(direct, i);
        good = !strcmp(x->name, y->name) && x->fmt == y->fmt && x->max_abs == y->max_abs && x->sum_abs == y->sum_abs;
        f16 += x->fmt == HC_TAPFMT_F16;
    }
    hc_check("tapsfiles-tool.11", good && f16 > 10, "emulate:fp16 through taps --save (F16 tensors, %d layers f16): "
             "every layer's errors equal the direct comparison's %s", f16, c && direct ? "" : err.msg);
    hc_tapcmp_free(c);
    hc_tapcmp_free(direct);

    /* the command: taps --save, then the saved directory compared, exit 0 and no divergent layer */
    const char *pp = hc_shared("positions/size9.jsonl.gz");
    char ppath[1024], cli[512];
    snprintf(ppath, sizeof ppath, "%s", pp ? pp : "");
    snprintf(cli, sizeof cli, "%s/cli", dir);
    int rc1 = hc_shf("%s taps --net %s --positions %s --nn 9x9 --limit 3 --batch 2 --save %s >%s/save.out 2>&1",
                     hc_halfcheck_bin(), path, ppath, cli, dir);
    int rc2 = hc_shf("%s taps --net %s --positions %s --nn 9x9 --limit 3 --batch 3 --backend tensors:%s >%s/cmp.out 2>&1",
                     hc_halfcheck_bin(), path, ppath, cli, dir);
    const char *o1 = hc_text(hc_path(dir, "save.out")), *o2 = hc_text(hc_path(dir, "cmp.out"));
    hc_check("tapsfiles-tool.9", rc1 == 0 && rc2 == 0 && strstr(o1, "tensors (input rows, taps, raw heads) written") &&
                                     strstr(o2, "no divergent layer") && !strstr(o2, "absent in B"),
             "halfcheck taps --save, then --backend tensors:DIR: no divergent layer (%d, %d): %s%s", rc1, rc2, o1, o2);
    /* other positions than the files hold (the first one dropped): bad input, exit 2 as
     * docs/TAPS.md says, not 3 (a backend that failed) */
    int rc3 = hc_shf("gzip -dc %s | tail -n +2 | gzip > %s/shifted.jsonl.gz && %s taps --net %s --positions "
                     "%s/shifted.jsonl.gz --nn 9x9 --limit 3 --batch 3 --backend tensors:%s >%s/shifted.out 2>&1",
                     ppath, dir, hc_halfcheck_bin(), path, dir, cli, dir);
    const char *o3 = hc_text(hc_path(dir, "shifted.out"));
    hc_check("tapsfiles-tool.13", rc3 == 2 && strstr(o3, "the input rows differ"),
             "taps on other positions than the files': exit %d (want 2): %s", rc3, o3);
    hc_tensorset_free(&ts);
    hc_net_free(net);
    free(path);
}

/* A small bug planted in one layer of a tool's dump (its own names through a map; f32, f16 and
 * bf16) is named at that layer: a bias added to every value or a 1% scale, which the maximum
 * relative error hides under f16's and bf16's allowance, and the mean or RMS sees. The same dump
 * without it names none (every layer compared). With `cli`, also through the command: exit 1 and
 * the coverage line; a map that matches nothing is refused, exit 2, nothing compared. */
static void planted_checks(const char *tag, const char *rel, const hc_position *ps, size_t n, const char *layer,
                           float scale, float bias, int cli)
{
    const char *p0 = hc_shared(rel);
    char *path = p0 ? strdup(p0) : NULL;
    hc_err err = {0};
    hc_net *net = path ? load_net(path, &err) : NULL;
    char saved[512], tool[512], map[600], spec[1400], name[96];
    snprintf(saved, sizeof saved, "%s/%s-golden", dir, tag);
    snprintf(tool, sizeof tool, "%s/%s-tool", dir, tag);
    snprintf(map, sizeof map, "%s/%s-names.yaml", dir, tag);
    hc_tensorset ts = {0}, emu = {0};
    char saved_emu[600];
    snprintf(saved_emu, sizeof saved_emu, "%s-emu", saved);
    hc_eval_settings s9 = hc_eval_settings_default(9, 9);
    hc_taps_save_opts so = {.dir = saved_emu, .formats = HC_TAPS_SAVE_SAFETENSORS, .net_path = path};
    if (!net || n < 4 || save(net, path, ps, 4, saved, HC_TAPS_SAVE_SAFETENSORS, &err) ||
        hc_safetensors_load(hc_path(saved, "taps.safetensors"), &ts, &err) ||
        hc_taps_save(net, ps, 4, &s9, "emulate:fp16", 2, &so, NULL, &err) ||
        hc_safetensors_load(hc_path(saved_emu, "taps.safetensors"), &emu, &err)) {
        hc_skip_n(tag, 7 + 3 * cli, "%s absent or could not be saved: %s", rel, err.msg);
        hc_tensorset_free(&ts);
        hc_tensorset_free(&emu);
        hc_net_free(net);
        free(path);
        return;
    }
    static const int ident[4] = {0, 1, 2, 3};
    /* ref32's layers written as f32, f16 or bf16; emulate:fp16's (an f16 computation, whose
     * error grows from layer to layer and widens the maximum's allowance) written as f16 */
    static const struct {
        const char *fmt;
        int f16, bf16, plant, emu;
    } v[7] = {{"f32", 0, 0, 1, 0},  {"f16", 1, 0, 1, 0},  {"f16", 1, 0, 0, 0},     {"bf16", 0, 1, 1, 0},
              {"bf16", 0, 1, 0, 0}, {"emulate:fp16 f16", 1, 0, 1, 1}, {"emulate:fp16 f16", 1, 0, 0, 1}};
    snprintf(spec, sizeof spec, "tensors:@map=%s %s", map, tool);
    for (int k = 0; k < 7; k++) {
        tool_opts to = {.order = ident, .rows = 4, .nhwc = 1, .f16 = v[k].f16, .bf16 = v[k].bf16,
                        .plant = v[k].plant ? layer : NULL, .scale = scale, .bias = bias};
        int ok = write_tool(v[k].emu ? &emu : &ts, tool, &to, &err) == 0 &&
                 write_map(map, map_text(v[k].bf16 ? "format: bf16\n" : NULL)) == 0;
        hc_tapcmp *c = ok ? cmp_spec(net, ps, 4, spec, &err) : NULL;
        int why = -1, f = c ? hc_tapcmp_first_unexplained_by(c, HC_TAPS_FACTOR, &why) : -2;
        hc_tapcov cov = {0};
        if (c)
            hc_tapcmp_coverage(c, &cov);
        const char *got = f >= 0 ? hc_tapcmp_at(c, f)->name : "none";
        char figs[600] = "";
        for (int i = 0; c && i < hc_tapcmp_count(c); i++)
            if (!strcmp(hc_tapcmp_at(c, i)->name, layer)) {
                const hc_tapdiff *d = hc_tapcmp_at(c, i);
                snprintf(figs, sizeof figs, "%s: max_rel %.3g (allowed %.3g), mean_rel %.3g (%.3g), rms_rel %.3g (%.3g)",
                         layer, hc_tapdiff_max_rel(d), hc_tapcmp_allowed(c, i, HC_TAPSTAT_MAX, HC_TAPS_FACTOR),
                         hc_tapdiff_mean_rel(d), hc_tapcmp_allowed(c, i, HC_TAPSTAT_MEAN, HC_TAPS_FACTOR),
                         hc_tapdiff_rms_rel(d), hc_tapcmp_allowed(c, i, HC_TAPSTAT_RMS, HC_TAPS_FACTOR));
            }
        printf("# %s %s %s: first divergent %s (%s); %s\n", tag, v[k].fmt, v[k].plant ? "planted" : "clean", got,
               why >= 0 ? hc_tapstat_str(why) : "-", figs);
        snprintf(name, sizeof name, "%s.%d", tag, k + 1);
        /* every layer compared (emulate: hands back no inner taps: those are absent) */
        int whole = cov.compared > 10 && cov.mismatched == 0 && cov.extra == 0 &&
                    cov.compared + cov.absent == cov.layers && (v[k].emu || cov.absent == 0);
        if (v[k].plant)
            hc_check(name, f >= 0 && !strcmp(got, layer) && whole,
                     "%s dump, tool's names, %s x %g + %g: first divergent %s, want %s (%d of %d compared); %s %s",
                     v[k].fmt, layer, (double)scale, (double)bias, got, layer, cov.compared, cov.layers, figs,
                     c ? "" : err.msg);
        else
            hc_check(name, c && f == -1 && whole,
                     "%s round trip, tool's names: first divergent %s, want none (%d of %d compared, %d unmatched) %s",
                     v[k].fmt, got, cov.compared, cov.layers, cov.extra, c ? "" : err.msg);
        hc_tapcmp_free(c);
    }
    if (cli) {
        /* the f16 dump with the bug, through the command: exit 1, the layer named, coverage */
        tool_opts to = {.order = ident, .rows = 4, .nhwc = 1, .f16 = 1, .plant = layer, .scale = scale, .bias = bias};
        write_tool(&ts, tool, &to, &err);
        write_map(map, map_text(NULL));
        const char *pp = hc_shared("positions/size9.jsonl.gz");
        char want[400];
        int rc = hc_shf("%s taps --net %s --positions %s --nn 9x9 --limit 4 --batch 2 --backend 'tensors:@map=%s %s' "
                        ">%s/%s-cli.out 2>&1", hc_halfcheck_bin(), path, pp, map, tool, dir, tag);
        snprintf(name, sizeof name, "%s-cli.out", tag);
        const char *o = hc_text(hc_path(dir, name));
        const char *cv = o ? strstr(o, "\ncoverage: ") : NULL;
        int nc = -1, nl = -2;
        if (cv)
            sscanf(cv, "\ncoverage: %d of %d layers compared", &nc, &nl);
        snprintf(want, sizeof want, "explain): %s\n", layer);
        snprintf(name, sizeof name, "%s.8", tag);
        hc_check(name, rc == 1 && o && strstr(o, want) && nc == nl && nc > 10,
                 "halfcheck taps on the f16 dump: status %d (want 1), %s named, coverage %d of %d: %s", rc, layer, nc,
                 nl, o ? o : "");
        /* a map that matches none of the files' names: nothing compared, exit 2, the reason */
        write_map(map, "map:\n  \"nomatch.*\": \"*\"\n");
        rc = hc_shf("%s taps --net %s --positions %s --nn 9x9 --limit 4 --batch 2 --backend 'tensors:@map=%s %s' "
                    ">%s/%s-none.out 2>&1", hc_halfcheck_bin(), path, pp, map, tool, dir, tag);
        snprintf(name, sizeof name, "%s-none.out", tag);
        o = hc_text(hc_path(dir, name));
        snprintf(name, sizeof name, "%s.9", tag);
        hc_check(name, rc == 2 && o && strstr(o, "nothing compared (0 of ") && strstr(o, "matched nothing") &&
                           strstr(o, "in.spatial") && !strstr(o, "no divergent layer"),
                 "a map that matches nothing: status %d (want 2), nothing compared and why: %s", rc, o ? o : "");
        hc_tapcmp *c = cmp_spec(net, ps, 4, spec, &err);
        snprintf(name, sizeof name, "%s.10", tag);
        hc_check(name, !c && err.code == HC_EFORMAT && strstr(err.msg, "nothing compared"),
                 "hc_taps_compare with nothing compared: an error, not a comparison: %s", c ? "compared" : err.msg);
        hc_tapcmp_free(c);
    }
    hc_tensorset_free(&ts);
    hc_tensorset_free(&emu);
    hc_net_free(net);
    free(path);
}

/* examples/pipe_numpy.py --dump: its own names and map, no pipe; a planted bug named at its block. */
static void numpy_checks(const char *tag, const char *rel, const hc_position *ps, size_t n, const char *args,
                         const char *want)
{
    const char *p0 = hc_shared(rel);
    char *path = p0 ? strdup(p0) : NULL;
    hc_err err = {0};
    hc_net *net = path && python ? load_net(path, &err) : NULL;
    if (!net) {
        hc_skip_n(tag, 2, "%s", !python ? "python3-numpy absent (no python3 with numpy)" : "shared net absent");
        free(path);
        return;
    }
    char saved[512], tool[512], spec[1400], name[64];
    snprintf(saved, sizeof saved, "%s/%s-golden", dir, tag);
    snprintf(tool, sizeof tool, "%s/%s-np", dir, tag);
    int ok = save(net, path, ps, n, saved, HC_TAPS_SAVE_NPY, &err) == 0;
    for (int bug = 0; bug < 2; bug++) {
        hc_shf("rm -rf %s", tool);
        int rc = ok ? hc_shf("%s examples/pipe_numpy.py --model %s --inputs %s --dump %s %s", python, path, saved, tool,
                             bug ? args : strstr(args, "--layout") ? strstr(args, "--layout") : "")
                    : -1;
        snprintf(spec, sizeof spec, "tensors:@map=%s/names.yaml %s", tool, tool);
        hc_tapcmp *c = rc == 0 ? cmp_spec(net, ps, n, spec, &err) : NULL;
        int f = c ? hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) : -2, all = c && hc_tapcmp_count(c) > 10;
        for (int i = 0; c && i < hc_tapcmp_count(c); i++)
            all = all && !hc_tapcmp_at(c, i)->missing && !hc_tapcmp_at(c, i)->mismatch;
        const char *got = f >= 0 ? hc_tapcmp_at(c, f)->name : "none";
        snprintf(name, sizeof name, "%s.%d", tag, bug + 1);
        hc_check(name, bug ? f >= 0 && !strcmp(got, want) : f == -1 && all && hc_tapcmp_extra_count(c) == 0,
                 "pipe_numpy.py --dump %s: first divergent %s, expected %s (from files alone) %s",
                 bug ? args : "(no bug)", got, bug ? want : "none, every layer compared", c ? "" : err.msg);
        hc_tapcmp_free(c);
    }
    hc_net_free(net);
    free(path);
}

int main(void)
{
    hc_plan(3 + 3 + 14 + 2 + 2 + 10 + 7 + 7);
    if (system("python3 -c 'import numpy' >/dev/null 2>&1") == 0)
        python = "python3";
    else if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0)
        python = "/usr/bin/python3";
    dir = hc_tmpdir("test_taps_files");
    hc_err err = {0};
    const char *pp = hc_shared("positions/size9.jsonl.gz");
    hc_position *ps = NULL;
    size_t n = 0;
    if (!dir || !pp || hc_positions_load(pp, &ps, &n, &err)) {
        hc_skip_rest("tapsfiles", "../shared positions absent");
        return hc_test_exit();
    }
    size_t m = n < 4 ? n : 4;
    roundtrip("tapsfiles-conv", G170, ps, m);
    roundtrip("tapsfiles-tf", TF, ps, m);
    tool_checks(ps, n);
    planted_checks("tapsfiles-bias-conv", G170, ps, n, "rconv3/norm1", 1.0f, 0.02f, 0);
    planted_checks("tapsfiles-scale-tf", TF, ps, n, "model.blocks.2.q_proj", 1.01f, 0.0f, 1);
    planted_checks("tapsfiles-scale-kv", KV, ps, n, "model.blocks.4.q_proj", 1.01f, 0.0f, 0);
    numpy_checks("tapsfiles-py-conv", G170, ps, m, "--bug norm-eps --bug-layer 4", "rconv5/norm1");
    numpy_checks("tapsfiles-py-tf", TF, ps, m, "--bug rope --bug-layer 2 --layout nhwc --dtype f16",
                 "model.blocks.2.q_proj");
    hc_positions_free(ps, n);
    return hc_test_exit();
}
