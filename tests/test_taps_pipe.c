/* Taps through the backend interface and pipe protocol version 2 (docs/TAPS.md, docs/PROTOCOL.md):
 * tests/helper_pipe_ref32 -taps 1 announces and sends ref32's taps; the comparison finds a bug
 * planted in one layer at that layer (convnet and transformer) and nothing without it; a tap of
 * another shape is reported with both shapes; f16 taps are explained by storage; version-1
 * programs hand back no taps; taps --layers lists every tap with its shape. examples/pipe_numpy.py
 * (numpy fp32 from the model file) shows no divergent layer against ref32 on the three shared
 * nets, and a bug planted in one block's kernel (RoPE, SwiGLU, norm epsilon, mask stride) is
 * named at its layer. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "harness/run/taps.h"

static char helper[4096];
static const char *python; /* a python3 with numpy, or NULL */

/* ref32 against `prog` (a pipe command taking the model path after @model=) over ps at nn x nn. */
static hc_tapcmp *cmp_prog(const hc_net *net, const char *path, const hc_position *ps, size_t n, const char *prog,
                           int nn, hc_err *err)
{
    char spec[8192];
    snprintf(spec, sizeof spec, "pipe:@model=%s %s", path, prog);
    hc_eval_settings s = hc_eval_settings_default(nn, nn);
    return hc_taps_compare(net, ps, n, &s, "ref32", spec, 2, err);
}

/* examples/pipe_numpy.py with args against ref32: the first divergent layer is `want` (NULL: none,
 * and every layer compared). */
static void py_check(const char *name, const hc_net *net, const char *path, const hc_position *ps, size_t n,
                     const char *args, int nn, const char *want)
{
    char prog[1024];
    hc_err err = {0};
    snprintf(prog, sizeof prog, "%s examples/pipe_numpy.py %s", python, args);
    hc_tapcmp *c = cmp_prog(net, path, ps, n, prog, nn, &err);
    int f = c ? hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) : -2, all = c && hc_tapcmp_count(c) > 10;
    double worst = 0;
    for (int i = 0; c && i < hc_tapcmp_count(c); i++) {
        const hc_tapdiff *d = hc_tapcmp_at(c, i);
        all = all && !d->missing && !d->mismatch;
        worst = hc_max_nan(worst, hc_tapdiff_max_rel(d));
    }
    const char *got = f >= 0 ? hc_tapcmp_at(c, f)->name : "none";
    hc_check(name, c && (want ? !strcmp(got, want) : f == -1 && all),
             "pipe_numpy.py %s (%dx%d): first divergent %s, expected %s; largest max_rel %g %s", args, nn, nn, got,
             want ? want : "none (and every layer compared)", worst, c ? "" : err.msg);
    hc_tapcmp_free(c);
}

static void py_checks(const char *tag, const char *rel, const hc_position *ps, size_t n, const char *const *cases,
                      int n_cases)
{
    const char *p0 = hc_shared(rel);
    char *path = p0 ? strdup(p0) : NULL;
    hc_err err = {0};
    hc_net *net = path && python ? hc_net_load(path, &err) : NULL;
    if (!net) {
        hc_skip_n(tag, (unsigned)n_cases, "%s", !python ? "python3-numpy absent (no python3 with numpy)"
                                                        : "shared net absent (../shared)");
        free(path);
        return;
    }
    hc_net_reduce_activations(net);
    char name[64];
    for (int i = 0; i < n_cases; i++) {
        snprintf(name, sizeof name, "%s.%d", tag, i + 1);
        const char *const *c = cases + 3 * i; /* args, nn, expected layer ("" none) */
        py_check(name, net, path, ps, n, c[0], atoi(c[1]), c[2][0] ? c[2] : NULL);
    }
    hc_net_free(net);
    free(path);
}

static hc_tapcmp *cmp(const hc_net *net, const char *path, const hc_position *ps, size_t n, const char *args,
                      hc_err *err)
{
    char spec[8192];
    snprintf(spec, sizeof spec, "pipe:@model=%s %s -taps 1 %s", path, helper, args);
    hc_eval_settings s = hc_eval_settings_default(9, 9);
    return hc_taps_compare(net, ps, n, &s, "ref32", spec, 2, err);
}

static int index_of(const hc_tapcmp *c, const char *name)
{
    for (int i = 0; i < hc_tapcmp_count(c); i++)
        if (strcmp(hc_tapcmp_at(c, i)->name, name) == 0)
            return i;
    return -1;
}

/* A bug planted in `layer` is found there. */
static void planted(const char *tag, const hc_net *net, const char *path, const hc_position *ps, size_t n,
                    const char *layer)
{
    char args[512], name[64];
    hc_err err = {0};
    snprintf(args, sizeof args, "-plant %s", layer);
    hc_tapcmp *c = cmp(net, path, ps, n, args, &err);
    int f = c ? hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) : -2;
    snprintf(name, sizeof name, "%s", tag);
    hc_check(name, c && f >= 0 && f == index_of(c, layer), "bug planted in %s found at %s (%s)", layer,
             f >= 0 ? hc_tapcmp_at(c, f)->name : "none", c ? "" : err.msg);
    hc_tapcmp_free(c);
}

static void net_checks(const char *tag, const char *rel, const hc_position *ps, size_t n, const char *const *plants,
                       int n_plants)
{
    const char *p0 = hc_shared(rel);
    char *path = p0 ? strdup(p0) : NULL;
    hc_err err = {0};
    hc_net *net = path ? hc_net_load(path, &err) : NULL;
    char name[64];
    if (!net) {
        hc_skip_n(tag, 5 + (unsigned)n_plants, "%s absent (../shared)", rel);
        free(path);
        return;
    }
    hc_net_reduce_activations(net);
    /* the bug-free program against ref32: every layer compared, equal, none divergent */
    hc_tapcmp *c = cmp(net, path, ps, n, "", &err);
    int all = c && hc_tapcmp_count(c) > 10, zero = all;
    for (int i = 0; c && i < hc_tapcmp_count(c); i++) {
        const hc_tapdiff *d = hc_tapcmp_at(c, i);
        all = all && !d->missing && !d->mismatch && d->n > 0;
        zero = zero && d->max_abs == 0 && !d->nonfinite;
    }
    snprintf(name, sizeof name, "%s.1", tag);
    hc_check(name, all, "every ref32 tap compared with the pipe program's (%d layers) %s", c ? hc_tapcmp_count(c) : 0,
             c ? "" : err.msg);
    snprintf(name, sizeof name, "%s.2", tag);
    hc_check(name, zero && hc_tapcmp_first_unexplained(c, HC_TAPS_FACTOR) == -1,
             "the bug-free program equals ref32 at every tap and no layer diverges");
    /* a tap of another shape: reported with both shapes, not compared, not divergent */
    const char *mid = c && hc_tapcmp_count(c) > 4 ? hc_tapcmp_at(c, 4)->name : "none";
    char args[512];
    snprintf(args, sizeof args, "-reshape %s", mid);
    hc_tapcmp *r = cmp(net, path, ps, n, args, &err);
    int i4 = r ? index_of(r, mid) : -1;
    const hc_tapdiff *d4 = i4 >= 0 ? hc_tapcmp_at(r, i4) : NULL;
    snprintf(name, sizeof name, "%s.3", tag);
    hc_check(name, d4 && d4->mismatch && d4->b_channels == d4->channels - 1 && d4->b_hw == d4->hw && d4->n == 0 &&
                       hc_tapcmp_first_unexplained(r, HC_TAPS_FACTOR) == -1,
             "tap %s of another shape: mismatch %d, A %d x %d, B %d x %d", mid, d4 ? d4->mismatch : -1,
             d4 ? d4->channels : 0, d4 ? d4->hw : 0, d4 ? d4->b_channels : 0, d4 ? d4->b_hw : 0);
    hc_tapcmp_free(r);
    /* f16 taps of ref32's own tensors: the error is storage's, explained */
    hc_tapcmp *h = cmp(net, path, ps, n, "-tapfmt f16", &err);
    int stor = h != NULL;
    for (int i = 0; h && i < hc_tapcmp_count(h); i++) {
        const hc_tapdiff *d = hc_tapcmp_at(h, i);
        stor = stor && d->fmt == HC_TAPFMT_F16 && d->max_abs <= d->stor_max_abs && d->stor_max_abs == d->max_abs;
    }
    snprintf(name, sizeof name, "%s.4", tag);
    hc_check(name, stor && hc_tapcmp_first_unexplained(h, HC_TAPS_FACTOR) == -1,
             "f16 taps: measured error = storage error at every layer, no divergence %s", h ? "" : err.msg);
    hc_tapcmp_free(h);
    for (int i = 0; i < n_plants; i++) {
        snprintf(name, sizeof name, "%s.5.%d", tag, i + 1);
        planted(name, net, path, ps, n, plants[i]);
    }
    /* halfcheck taps --layers lists the taps with shapes */
    const char *bin = getenv("HALFCHECK");
    snprintf(name, sizeof name, "%s.6", tag);
    if (bin && *bin && c) {
        char cmd[8192], line[512], want[300];
        snprintf(cmd, sizeof cmd, "%s taps --net %s --layers --nn 9x9", bin, path);
        snprintf(want, sizeof want, " %s ", hc_tapcmp_at(c, 0)->name);
        FILE *f = popen(cmd, "r");
        int rows = 0, first = 0, inner = 0;
        while (f && fgets(line, sizeof line, f)) {
            rows += strstr(line, " 81 spatial") != NULL || strstr(line, " 1 vector") != NULL;
            first += strstr(line, want) != NULL && strstr(line, " 81 spatial") != NULL;
            /* the inner taps of attention and FFN blocks (docs/TAPS.md), listed with the layers */
            inner += strstr(line, ".attn.out_preproj ") != NULL || strstr(line, ".ffn.up ") != NULL ||
                     strstr(line, ".ffn.gate ") != NULL;
        }
        int rc = f ? pclose(f) : -1;
        int want_inner = strcmp(tag, "tapspipe-tf") == 0;
        hc_check(name, rc == 0 && rows == hc_tapcmp_count(c) && first == 1 && (want_inner ? inner >= 3 : inner == 0),
                 "taps --layers: rc %d, %d rows with shapes for %d taps, %d inner taps", rc, rows, hc_tapcmp_count(c),
                 inner);
    } else
        hc_skip(name, "HALFCHECK unset or no comparison");
    hc_tapcmp_free(c);
    hc_net_free(net);
    free(path);
}

/* Reads a whole file (NULL when absent). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    if (b)
        b[n] = 0;
    return b;
}

/* A suite whose backend plants a bug, with taps: on-failure: the failure names the layer. */
static void run_checks(const char *net_path)
{
    const char *bin = getenv("HALFCHECK");
    const char *pp = hc_shared("positions/size9.jsonl.gz");
    const char *dir0 = hc_tmpdir("test_taps_pipe");
    char dir[512], cmd[8192], path[700];
    if (!bin || !*bin || !pp || !dir0 || !net_path) {
        hc_skip_n("tapspipe-run", 6, "HALFCHECK unset or ../shared absent");
        return;
    }
    /* the suite's paths are read relative to its own folder: absolute ones */
    char cwd[1024], net_abs[1600], helper_abs[5200];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    snprintf(dir, sizeof dir, "%s%s%s", dir0[0] == '/' ? "" : cwd, dir0[0] == '/' ? "" : "/", dir0);
    snprintf(net_abs, sizeof net_abs, "%s%s%s", net_path[0] == '/' ? "" : cwd, net_path[0] == '/' ? "" : "/", net_path);
    snprintf(helper_abs, sizeof helper_abs, "%s%s%s", helper[0] == '/' ? "" : cwd, helper[0] == '/' ? "" : "/",
             helper);
    snprintf(cmd, sizeof cmd, "rm -rf %s/out %s/merged && gzip -dc %s | head -6 > %s/p.jsonl", dir, dir, pp, dir);
    int ok = system(cmd) == 0;
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    FILE *f = ok ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "name: t\nnets:\n  - {name: g170, model: %s}\n"
                   "boards:\n  - {name: b, positions: %s/p.jsonl, nnBuffer: 9x9, maxBatchSize: 2}\n"
                   "backends:\n"
                   "  - {name: buggy, backend: \"pipe:@model={model} %s -taps 1 -plant rconv3/w1a\", tiers: [exact], "
                   "taps: on-failure, taps_positions: 2}\n"
                   "  - {name: v1, backend: \"pipe:@model={model} %s -plant rconv3/w1a\", tiers: [exact], "
                   "taps: on-failure}\n"
                   "modes: [unbatched]\n",
              net_abs, dir, helper_abs, helper_abs);
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "%s run %s --out %s/out --no-cache --quiet >/dev/null 2>&1", bin, path, dir);
    int rc = f ? system(cmd) : -1;
    hc_check("tapspipe-run.1", rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "halfcheck run: status %d (want 1)",
             rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
    snprintf(path, sizeof path, "%s/out/junit.xml", dir);
    char *junit = slurp(path);
    hc_check("tapspipe-run.2",
             junit && strstr(junit, "first divergent layer: rconv3/w1a (max_rel ") &&
                 strstr(junit, "; taps of 2 positions against ref32; ") && strstr(junit, " layers compared)") &&
                 strstr(junit, "has no layer taps"),
             "junit.xml failure messages name the first divergent layer (and why the version-1 one has none)");
    snprintf(path, sizeof path, "%s/out/results.json", dir);
    char *json = slurp(path);
    char *t = json ? strstr(json, "\"firstDivergent\": \"rconv3/w1a\"") : NULL;
    hc_check("tapspipe-run.3", t && strstr(json, "\"storageRel\"") && strstr(json, "\"layer\": \"rconv3/w1a\""),
             "results.json holds the per-layer taps and the first divergent layer");
    snprintf(cmd, sizeof cmd, "%s merge %s/out/results.json --out %s/merged >/dev/null 2>&1", bin, dir, dir);
    rc = system(cmd);
    snprintf(path, sizeof path, "%s/merged/results.json", dir);
    char *merged = slurp(path);
    /* The merge's provenance names its job (the input): that line aside, the same bytes. */
    char *job = merged ? strstr(merged, "\n   \"job\": ") : NULL;
    if (job) {
        char *eol = strchr(job + 1, '\n');
        if (eol)
            memmove(job, eol, strlen(eol) + 1);
    }
    hc_check("tapspipe-run.4", json && merged && job && !strcmp(json, merged), "merge writes the taps back byte for byte");
    /* the version-1 backend: an error saying why, no layers */
    char *v1 = json ? strstr(json, "\"backend\": \"v1\"") : NULL;
    char *v1t = v1 ? strstr(v1, "\"taps\"") : NULL;
    hc_check("tapspipe-run.5", v1t && strstr(v1t, "\"firstDivergent\": null") && strstr(v1t, "\"layers\": []"),
             "a backend without taps: taps with an error and no layers");
    /* report.html draws the failing case's per-layer errors and names its first divergent layer
     * (the merged page, so the drawing comes from results.json alone) */
    snprintf(path, sizeof path, "%s/merged/report.html", dir);
    char *html = slurp(path);
    char *fig = html ? strstr(html, "<figure class=taps>") : NULL;
    hc_check("tapspipe-run.6",
             fig && strstr(fig, "<b class=tapfirst>rconv3/w1a</b>") && strstr(fig, "<polyline") &&
                 strstr(fig, "has no layer taps"),
             "report.html lacks the per-layer plot naming rconv3/w1a (or the version-1 backend's reason)");
    free(html);
    free(junit);
    free(json);
    free(merged);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[4096];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(helper, sizeof helper, "%s/helper_pipe_ref32", dirname(self));
    static const char *const conv[] = {"rconv3/w1a", "rconv4/norm2"};
    static const char *const tf[] = {"model.blocks.2.q_proj", "model.blocks.3.ffn_linear1", "model.blocks.4.norm1"};
    static const char *const py_conv[] = {
        "", "9", "",
        "--bug norm-eps --bug-layer 4", "9", "rconv5/norm1",
        "--bug mask-stride --bug-layer 2", "11", "rconv3/norm1",
    };
    static const char *const py_tf[] = {
        "", "9", "",
        "", "11", "",
        "--bug rope --bug-layer 2", "9", "model.blocks.2.q_proj",
        "--bug swiglu --bug-layer 3", "9", "model.blocks.3.ffn.up",
        "--bug norm-eps --bug-layer 4", "9", "model.blocks.4.norm1",
        "--bug mask-stride --bug-layer 4", "11", "model.blocks.4.attn.out_preproj",
    };
    static const char *const py_gqa[] = {"", "9", "", "--bug rope --bug-layer 4", "9", "model.blocks.4.q_proj"};
    hc_plan(3 + 7 + 8 + 3 + 6 + 2 + 6);
    /* a python3 with numpy (Debian's python3-numpy): the one on PATH, else the system's */
    if (system("python3 -c 'import numpy' >/dev/null 2>&1") == 0)
        python = "python3";
    else if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0)
        python = "/usr/bin/python3";
    hc_err err = {0};
    const char *pp = hc_shared("positions/size9.jsonl.gz");
    hc_position *ps = NULL;
    size_t n = 0;
    if (!pp || hc_positions_load(pp, &ps, &n, &err)) {
        hc_skip_rest("tapspipe", "../shared positions absent");
        return hc_test_exit();
    }
    size_t m = n < 4 ? n : 4;

    /* the interface: a version-1 program hands back no taps; a version-2 one does, ref32's bits */
    const char *np0 = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    char *np = np0 ? strdup(np0) : NULL;
    hc_net *net = np ? hc_net_load(np, &err) : NULL;
    if (net) {
        hc_net_reduce_activations(net);
        char s1[8192], s2[8192];
        snprintf(s1, sizeof s1, "pipe:@model=%s %s", np, helper);
        snprintf(s2, sizeof s2, "pipe:@model=%s %s -taps 1", np, helper);
        hc_backend v1 = {0}, v2 = {0}, ref = {0};
        int o1 = hc_backend_open_with(&v1, &(hc_backend_open_opts){.spec = s1, .net = net, .nx = 9, .ny = 9,
                                                                   .max_batch = 1, .threads = 1}, &err) == 0;
        int o2 = o1 && hc_backend_open_with(&v2, &(hc_backend_open_opts){.spec = s2, .net = net, .nx = 9, .ny = 9,
                                                                         .max_batch = 1, .threads = 1}, &err) == 0;
        int o3 = o2 && hc_backend_open_with(&ref, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = 9,
                                                                          .ny = 9, .max_batch = 1,
                                                                          .threads = 1}, &err) == 0;
        hc_check("tapspipe-0.1", o3 && !hc_backend_taps(&v1) && hc_backend_taps(&v2) && hc_backend_taps(&ref),
                 "version 1: no taps; version 2 and ref32: taps %s", o3 ? "" : err.msg);
        float *sp = calloc((size_t)net->num_input_c * 81, sizeof(float));
        float *gl = calloc((size_t)net->num_input_global_c + 1, sizeof(float));
        for (int p = 0; p < 81; p++)
            sp[p] = 1.0f, sp[81 + p] = (float)(p % 3 == 0);
        hc_raw_heads *o = hc_raw_heads_new(1, 9, 9, net->num_policy_c, net->num_score_value_c, &err);
        hc_tapset *t1 = hc_tapset_new(1, &err), *t2 = hc_tapset_new(1, &err), *tr = hc_tapset_new(1, &err);
        int ok = o3 && o && t1 && t2 && tr;
        if (ok) {
            o->taps = t1;
            ok = hc_backend_eval(&v1, 1, sp, gl, NULL, o, &err) == 0;
            o->taps = t2;
            ok = ok && hc_backend_eval(&v2, 1, sp, gl, NULL, o, &err) == 0;
            o->taps = tr;
            ok = ok && hc_backend_eval(&ref, 1, sp, gl, NULL, o, &err) == 0;
        }
        hc_check("tapspipe-0.2", ok && hc_tapset_count(t1) == 0, "a version-1 program fills no taps %s", err.msg);
        int same = ok && hc_tapset_count(t2) == hc_tapset_count(tr) && hc_tapset_count(tr) > 10;
        for (int i = 0; same && i < hc_tapset_count(tr); i++) {
            const hc_tapset_entry *a = hc_tapset_at(tr, i), *b = hc_tapset_at(t2, i);
            same = !strcmp(a->name, b->name) && a->channels == b->channels && a->hw == b->hw && b->rows == 1 &&
                   !memcmp(a->data, b->data, sizeof(float) * (size_t)a->channels * (size_t)a->hw);
        }
        hc_check("tapspipe-0.3", same, "version 2 carries every ref32 tap bit for bit, in order (%d vs %d)",
                 t2 ? hc_tapset_count(t2) : 0, tr ? hc_tapset_count(tr) : 0);
        hc_tapset_free(t1);
        hc_tapset_free(t2);
        hc_tapset_free(tr);
        hc_raw_heads_free(o);
        free(sp);
        free(gl);
        if (o3)
            hc_backend_close(&ref);
        if (o2)
            hc_backend_close(&v2);
        if (o1)
            hc_backend_close(&v1);
    } else
        hc_skip_n("tapspipe-0", 3, "shared g170 net absent");
    hc_net_free(net);
    free(np);

    net_checks("tapspipe-conv", "nets/g170-b6c96-s175395328-d26788732.bin.gz", ps, m, conv, 2);
    net_checks("tapspipe-tf", "nets/b7c96h3tfrs-test5-cnorm.bin.gz", ps, m, tf, 3);
    /* examples/pipe_numpy.py: the net in numpy fp32 agrees with ref32 within what fp32 explains;
     * each planted kernel bug is named at its layer */
    py_checks("tapspipe-py-conv", "nets/g170-b6c96-s175395328-d26788732.bin.gz", ps, m, py_conv, 3);
    py_checks("tapspipe-py-tf", "nets/b7c96h3tfrs-test5-cnorm.bin.gz", ps, m, py_tf, 6);
    py_checks("tapspipe-py-gqa", "nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz", ps, m, py_gqa, 2);
    const char *gp = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    char *gpath = gp ? strdup(gp) : NULL;
    run_checks(gpath);
    free(gpath);
    hc_positions_free(ps, n);
    return hc_test_exit();
}
