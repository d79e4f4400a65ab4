/* tensors:[@map=NAMES.yaml] [@layout=nchw|nhwc] PATH — a tap source reading per-layer tensors that
 * any tool wrote to files (docs/TAPS.md, "Taps from files"): PATH a directory of .npy and
 * .safetensors files, a directory `halfcheck taps --save` wrote (its index.json says where each
 * tensor is and which position each row is), or one .safetensors file. It is a tensor backend so
 * that `halfcheck taps` compares it with ref32 (or any tapping backend) exactly as it compares a
 * pipe program: its eval hands back the files' rows of the positions it is given, in the order the
 * evaluator gives them (position k of the run is the k-th position evaluated), as taps under
 * halfcheck's names; the name map translates the tool's names. Where the files hold the network's
 * input rows (input/spatial, input/global), every batch is checked against them, so files written
 * for other positions, another order or another symmetry are refused rather than compared. Heads
 * come from heads/... tensors where present (zero otherwise: `taps` compares taps, not heads). */
#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "backends/specopts.h"
#include "backends/tapnames.h"
#include "harness/data/tensorfile.h"
#include "harness/base/yamlcfg.h"

enum { LAY_NCHW = 0, LAY_NHWC = 1 };
enum { ROLE_TAP = 0, ROLE_IN_SPATIAL, ROLE_IN_GLOBAL, ROLE_IN_META, ROLE_H_POLICY, ROLE_H_PASS, ROLE_H_VALUE,
       ROLE_H_SCORE, ROLE_H_OWN };
static const char *const role_names[] = {"", "input/spatial", "input/global", "input/meta", "heads/policy",
                                         "heads/policy_pass", "heads/value", "heads/score", "heads/ownership"};

/* One entry of the name map: a tool's name (exact, or a pattern whose '*' match any run of
 * characters) to a tap name (whose '*' take the pattern's matches in order). */
typedef struct map_entry {
    char *tool, *tap;
    int layout; /* -1: the map's default */
    int fmt;    /* -1: the map's default */
    int line;
} map_entry;

typedef struct src {
    char *tool, *name; /* the tool's name, halfcheck's name */
    char *origin;      /* "FILE: tensor TOOL [shape] LAYOUT" */
    int role, fmt, layout;
    int rows, channels, hw;
    float *data; /* [rows][channels][hw] */
} src;

typedef struct tensors_backend {
    const hc_net *net;
    int nx, ny;
    src *s;
    int n;
    int rows;          /* rows of every tensor */
    int *pos_row;      /* position index -> file row (-1: absent) */
    int n_pos;         /* entries of pos_row */
    size_t cursor;     /* positions evaluated so far */
    char path[1024];
} tensors_backend;

static void tensors_close(void *inst)
{
    tensors_backend *b = inst;
    if (!b)
        return;
    for (int i = 0; i < b->n; i++) {
        free(b->s[i].tool);
        free(b->s[i].name);
        free(b->s[i].origin);
        free(b->s[i].data);
    }
    free(b->s);
    free(b->pos_row);
    free(b);
}

/* ---- the name map (YAML) ---- */

typedef struct tapmap {
    map_entry *e;
    int n;
    int layout, fmt; /* defaults (-1 fmt: from the file's element type) */
    int *rows;       /* the position of each file row, or NULL: row i is position i */
    int n_rows;
} tapmap;

static void tapmap_free(tapmap *m)
{
    for (int i = 0; i < m->n; i++) {
        free(m->e[i].tool);
        free(m->e[i].tap);
    }
    free(m->e);
    free(m->rows);
    memset(m, 0, sizeof *m);
}

static int parse_layout(const char *s)
{
    if (!strcmp(s, "NCHW") || !strcmp(s, "nchw"))
        return LAY_NCHW;
    if (!strcmp(s, "NHWC") || !strcmp(s, "nhwc"))
        return LAY_NHWC;
    return -1;
}

static int map_scalar(hc_ydoc *y, yaml_node_t *v, const char *key, const char *ctx, hc_err *err)
{
    return hc_ydoc_expect(y, v, YAML_SCALAR_NODE, key, ctx, err);
}

static int tapmap_load(const char *path, tapmap *m, hc_err *err)
{
    memset(m, 0, sizeof *m);
    m->fmt = -1;
    hc_ydoc y = {0};
    if (hc_ydoc_load_file(&y, path, 1 << 20, "name map", err))
        return -1;
    int rc = -1;
    yaml_node_t *root = hc_ydoc_root(&y);
    static const char *const keys[] = {"rows", "layout", "format", "map", NULL};
    static const char *const ekeys[] = {"tap", "layout", "format", NULL};
    if (hc_ydoc_expect(&y, root, YAML_MAPPING_NODE, "the name map", "", err) ||
        hc_ydoc_check_keys(&y, root, "name map", NULL, keys, err))
        goto done;
    yaml_node_t *v;
    if ((v = hc_ydoc_get(&y, root, "layout"))) {
        if (map_scalar(&y, v, "layout", "", err))
            goto done;
        if ((m->layout = parse_layout(hc_ynode_str(v))) < 0) {
            hc_ydoc_err(&y, &v->start_mark, "", err, "layout: \"%s\" (NCHW or NHWC)", hc_ynode_str(v));
            goto done;
        }
    }
    if ((v = hc_ydoc_get(&y, root, "format"))) {
        if (map_scalar(&y, v, "format", "", err))
            goto done;
        if ((m->fmt = hc_tap_fmt_parse(hc_ynode_str(v))) < 0) {
            hc_ydoc_err(&y, &v->start_mark, "", err, "format: \"%s\" (f32, f16 or bf16)", hc_ynode_str(v));
            goto done;
        }
    }
    if ((v = hc_ydoc_get(&y, root, "rows"))) {
        if (hc_ydoc_expect(&y, v, YAML_SEQUENCE_NODE, "rows", "", err))
            goto done;
        size_t n = hc_ynode_seq_len(v);
        m->rows = hc_calloc(n ? n : 1, sizeof *m->rows, err, "rows");
        if (!m->rows)
            goto done;
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *x = hc_ydoc_seq_at(&y, v, i);
            if (hc_ydoc_int(&y, x, "rows", "", 0, 1 << 30, &m->rows[i], err))
                goto done;
            for (size_t k = 0; k < i; k++)
                if (m->rows[k] == m->rows[i]) {
                    hc_ydoc_err(&y, &x->start_mark, "", err, "rows: position %d given twice (rows %zu and %zu)",
                                m->rows[i], k, i);
                    goto done;
                }
        }
        m->n_rows = (int)n;
    }
    if ((v = hc_ydoc_get(&y, root, "map"))) {
        if (hc_ydoc_expect(&y, v, YAML_MAPPING_NODE, "map", "", err))
            goto done;
        size_t np = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
        m->e = hc_calloc(np ? np : 1, sizeof *m->e, err, "name map");
        if (!m->e)
            goto done;
        for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
            yaml_node_t *k = hc_ydoc_node(&y, p->key), *val = hc_ydoc_node(&y, p->value);
            if (map_scalar(&y, k, "a name", "map", err))
                goto done;
            const char *tool = hc_ynode_str(k);
            for (int i = 0; i < m->n; i++)
                if (!strcmp(m->e[i].tool, tool)) {
                    hc_ydoc_err(&y, &k->start_mark, "map", err, "duplicate name \"%s\" (also at line %d)", tool,
                                m->e[i].line);
                    goto done;
                }
            map_entry *e = &m->e[m->n];
            e->layout = e->fmt = -1;
            e->line = (int)k->start_mark.line + 1;
            const char *tap = NULL;
            if (val->type == YAML_SCALAR_NODE)
                tap = hc_ynode_str(val);
            else {
                char ctx[300];
                snprintf(ctx, sizeof ctx, "map: %.256s", tool);
                if (hc_ydoc_expect(&y, val, YAML_MAPPING_NODE, tool, "map", err) ||
                    hc_ydoc_check_keys(&y, val, ctx, NULL, ekeys, err))
                    goto done;
                yaml_node_t *t = hc_ydoc_require(&y, val, "tap", ctx, err), *x;
                if (!t || map_scalar(&y, t, "tap", ctx, err))
                    goto done;
                tap = hc_ynode_str(t);
                if ((x = hc_ydoc_get(&y, val, "layout"))) {
                    if (map_scalar(&y, x, "layout", ctx, err))
                        goto done;
                    if ((e->layout = parse_layout(hc_ynode_str(x))) < 0) {
                        hc_ydoc_err(&y, &x->start_mark, ctx, err, "layout: \"%s\" (NCHW or NHWC)", hc_ynode_str(x));
                        goto done;
                    }
                }
                if ((x = hc_ydoc_get(&y, val, "format"))) {
                    if (map_scalar(&y, x, "format", ctx, err))
                        goto done;
                    if ((e->fmt = hc_tap_fmt_parse(hc_ynode_str(x))) < 0) {
                        hc_ydoc_err(&y, &x->start_mark, ctx, err, "format: \"%s\" (f32, f16 or bf16)",
                                    hc_ynode_str(x));
                        goto done;
                    }
                }
            }
            char why[400];
            if (hc_tapname_check(tool, tap, why, sizeof why)) {
                hc_ydoc_err(&y, &val->start_mark, "map", err, "%s: %s", tool, why);
                goto done;
            }
            e->tool = strdup(tool);
            e->tap = strdup(tap);
            m->n++;
            if (!e->tool || !e->tap) {
                hc_err_set(err, HC_ENOMEM, "out of memory");
                goto done;
            }
        }
    }
    rc = 0;
done:
    hc_ydoc_free(&y);
    if (rc)
        tapmap_free(m);
    return rc;
}

/* halfcheck's name for a tool's name (*out, malloc'd): an exact entry, else the first pattern that
 * matches (tapnames.h: '*' and {i} captures, index arithmetic), else the name itself. *ent gets the
 * entry (or NULL). 0, or -1 with err (out of memory; an index below 0, the entry named). */
static int map_name(const tapmap *m, const char *tool, char **out, const map_entry **ent, hc_err *err)
{
    *ent = NULL;
    *out = NULL;
    for (int i = 0; i < m->n; i++)
        if (!hc_tapname_is_pattern(m->e[i].tool) && !strcmp(m->e[i].tool, tool)) {
            *ent = &m->e[i];
            *out = strdup(m->e[i].tap);
            break;
        }
    for (int i = 0; !*ent && i < m->n; i++) {
        if (!hc_tapname_is_pattern(m->e[i].tool))
            continue;
        int rc = hc_tapname_apply(m->e[i].tool, m->e[i].tap, tool, out, err);
        if (rc < 0)
            return hc_err_prefix(err, "map entry \"%s\" (line %d): ", m->e[i].tool, m->e[i].line);
        if (rc > 0)
            *ent = &m->e[i];
    }
    if (!*ent)
        *out = strdup(tool);
    return *out ? 0 : hc_err_set(err, HC_ENOMEM, "out of memory");
}

/* ---- reading the files ---- */

typedef struct loaded {
    hc_tensor *t; /* owned */
    char **file;  /* the file each came from */
    int n, cap;
} loaded;

static void loaded_free(loaded *l)
{
    for (int i = 0; i < l->n; i++) {
        hc_tensor_clear(&l->t[i]);
        free(l->file[i]);
    }
    free(l->t);
    free(l->file);
    memset(l, 0, sizeof *l);
}

/* Takes t over (zeroing it). */
static int loaded_add(loaded *l, hc_tensor *t, const char *file, hc_err *err)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->t[i].name, t->name)) {
            hc_err_set(err, HC_EFORMAT, "%s: tensor %s: duplicate name (also in %s)", file, t->name, l->file[i]);
            hc_tensor_clear(t);
            return -1;
        }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        hc_tensor *nt = realloc(l->t, (size_t)cap * sizeof *nt);
        if (nt)
            l->t = nt;
        char **nf = nt ? realloc(l->file, (size_t)cap * sizeof *nf) : NULL;
        if (!nt || !nf) {
            hc_tensor_clear(t);
            return hc_err_set(err, HC_ENOMEM, "out of memory reading %s", file);
        }
        l->file = nf;
        l->cap = cap;
    }
    if (!(l->file[l->n] = strdup(file))) {
        hc_tensor_clear(t);
        return hc_err_set(err, HC_ENOMEM, "out of memory reading %s", file);
    }
    l->t[l->n++] = *t;
    memset(t, 0, sizeof *t);
    return 0;
}

static int load_safetensors(loaded *l, const char *path, hc_err *err)
{
    hc_tensorset ts;
    if (hc_safetensors_load(path, &ts, err))
        return -1;
    int rc = 0;
    for (int i = 0; i < ts.n && !rc; i++)
        rc = loaded_add(l, &ts.t[i], path, err);
    hc_tensorset_free(&ts);
    return rc;
}

/* A file name's stem percent-decoded ("rconv3%2Fw1a" -> "rconv3/w1a": how taps --save names files). */
static char *npy_stem(const char *fname)
{
    size_t n = strlen(fname) - 4;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (fname[i] == '%' && i + 2 < n && isxdigit((unsigned char)fname[i + 1]) &&
            isxdigit((unsigned char)fname[i + 2]) && (fname[i + 1] != '0' || fname[i + 2] != '0')) {
            char hex[3] = {fname[i + 1], fname[i + 2], '\0'};
            s[o++] = (char)strtol(hex, NULL, 16);
            i += 2;
        } else
            s[o++] = fname[i];
    }
    s[o] = '\0';
    return s;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every .npy and .safetensors file of dir (not its subdirectories), in name order. */
static int load_dir(loaded *l, const char *dir, hc_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return hc_err_set(err, HC_EIO, "%s: cannot read the directory", dir);
    char **names = NULL;
    int n = 0, cap = 0, rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!ends_with(de->d_name, ".npy") && !ends_with(de->d_name, ".safetensors"))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) {
                rc = hc_err_set(err, HC_ENOMEM, "out of memory listing %s", dir);
                break;
            }
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = hc_err_set(err, HC_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        n++;
    }
    closedir(d);
    if (!rc)
        qsort(names, (size_t)n, sizeof *names, by_str);
    for (int i = 0; i < n && !rc; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (ends_with(names[i], ".safetensors")) {
            rc = load_safetensors(l, path, err);
            continue;
        }
        char *stem = npy_stem(names[i]);
        hc_tensor t;
        if (!stem)
            rc = hc_err_set(err, HC_ENOMEM, "out of memory");
        else if (!(rc = hc_npy_load(path, stem, &t, err)))
            rc = loaded_add(l, &t, path, err);
        free(stem);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (!rc && l->n == 0)
        rc = hc_err_set(err, HC_EUSAGE, "%s: no .npy or .safetensors files", dir);
    return rc;
}

/* A directory taps --save wrote: index.json names the container and the position of each row. */
static int load_index(loaded *l, const char *dir, const char *index, tapmap *m, hc_err *err)
{
    json_error_t je;
    json_t *root = json_load_file(index, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return hc_err_set(err, HC_EFORMAT, "%s:%d:%d: %s", index, je.line, je.column, je.text);
    int rc = -1;
    json_t *st = json_object_get(root, "safetensors"), *tl = json_object_get(root, "tensors"),
           *rows = json_object_get(root, "rows");
    if (!json_is_array(tl) || !json_is_array(rows)) {
        hc_err_set(err, HC_EFORMAT, "%s: not a halfcheck taps index (no \"tensors\" or \"rows\" list)", index);
        goto done;
    }
    if (!m->rows) {
        size_t n = json_array_size(rows);
        m->rows = hc_calloc(n ? n : 1, sizeof *m->rows, err, "rows");
        if (!m->rows)
            goto done;
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_object_get(json_array_get(rows, i), "position");
            if (!json_is_integer(p) || json_integer_value(p) < 0 || json_integer_value(p) > 1 << 30) {
                hc_err_set(err, HC_EFORMAT, "%s: rows[%zu]: no \"position\" (an integer >= 0)", index, i);
                goto done;
            }
            m->rows[i] = (int)json_integer_value(p);
        }
        m->n_rows = (int)n;
    }
    char path[2048];
    if (json_is_string(st)) {
        snprintf(path, sizeof path, "%s/%s", dir, json_string_value(st));
        rc = load_safetensors(l, path, err);
        goto done;
    }
    size_t i;
    json_t *e;
    json_array_foreach(tl, i, e) {
        json_t *nm = json_object_get(e, "name"), *f = json_object_get(e, "npy");
        if (!json_is_string(nm) || !json_is_string(f)) {
            hc_err_set(err, HC_EFORMAT, "%s: tensors[%zu]: no \"name\" or \"npy\" file", index, i);
            goto done;
        }
        snprintf(path, sizeof path, "%s/%s", dir, json_string_value(f));
        hc_tensor t;
        if (hc_npy_load(path, json_string_value(nm), &t, err) || loaded_add(l, &t, path, err))
            goto done;
    }
    rc = 0;
done:
    json_decref(root);
    return rc;
}

/* ---- shapes ---- */

/* Per-row shape of t under layout: [N, C] (a vector), [N, C, H, W] / [N, C, H*W] (NCHW) or
 * [N, H, W, C] / [N, H*W, C] (NHWC). */
static int row_shape(const hc_tensor *t, int layout, const char *file, int *rows, int *c, int *hw, hc_err *err)
{
    char sh[160];
    const int64_t *s = t->shape;
    int64_t C, HW;
    if (t->ndim == 2)
        C = s[1], HW = 1;
    else if (t->ndim == 3)
        C = layout == LAY_NHWC ? s[2] : s[1], HW = layout == LAY_NHWC ? s[1] : s[2];
    else if (t->ndim == 4)
        C = layout == LAY_NHWC ? s[3] : s[1], HW = layout == LAY_NHWC ? s[1] * s[2] : s[2] * s[3];
    else
        return hc_err_set(err, HC_EFORMAT, "%s: tensor %s: shape %s: expected [N, C] or, %s, %s", file, t->name,
                          hc_tensor_shape_str(t, sh, sizeof sh), layout == LAY_NHWC ? "NHWC" : "NCHW",
                          layout == LAY_NHWC ? "[N, H, W, C] or [N, H*W, C]" : "[N, C, H, W] or [N, C, H*W]");
    if (s[0] < 1 || C < 1 || HW < 1 || C > 1 << 16 || HW > 1 << 20 || s[0] > 1 << 20)
        return hc_err_set(err, HC_EFORMAT, "%s: tensor %s: shape %s: empty, or larger than any tap", file, t->name,
                          hc_tensor_shape_str(t, sh, sizeof sh));
    *rows = (int)s[0];
    *c = (int)C;
    *hw = (int)HW;
    return 0;
}

static int role_of(const char *name)
{
    for (int r = 1; r < (int)(sizeof role_names / sizeof role_names[0]); r++)
        if (!strcmp(name, role_names[r]))
            return r;
    return ROLE_TAP;
}

/* The per-row size a role must have (0: taps, any). */
static size_t role_size(const tensors_backend *b, int role)
{
    size_t area = (size_t)b->nx * (size_t)b->ny;
    const hc_net *n = b->net;
    switch (role) {
    case ROLE_IN_SPATIAL: return (size_t)n->num_input_c * area;
    case ROLE_IN_GLOBAL: return (size_t)n->num_input_global_c;
    case ROLE_IN_META: return (size_t)n->num_input_meta_c;
    case ROLE_H_POLICY: return (size_t)n->num_policy_c * area;
    case ROLE_H_PASS: return (size_t)n->num_policy_c;
    case ROLE_H_VALUE: return 3;
    case ROLE_H_SCORE: return (size_t)n->num_score_value_c;
    case ROLE_H_OWN: return area;
    default: return 0;
    }
}

static const src *find_role(const tensors_backend *b, int role)
{
    for (int i = 0; i < b->n; i++)
        if (b->s[i].role == role)
            return &b->s[i];
    return NULL;
}

/* What a tensors: spec says: the name map, the layout, the directory or file. */
typedef struct tensors_opts {
    char *mapfile; /* NULL: none */
    int layout;    /* -1: the map's (or NCHW) */
    char *path;
} tensors_opts;

static void tensors_free_opts(void *opts)
{
    tensors_opts *to = opts;
    if (to) {
        free(to->mapfile);
        free(to->path);
    }
    free(to);
}

/* [@map=NAMES.yaml] [@layout=nchw|nhwc] PATH: the map is read (and so checked) and the path
 * must exist; the tensors themselves are read at open. */
static void *tensors_parse(const char *params, hc_err *err)
{
    char *layout_s = NULL;
    tapmap m = {0};
    tensors_opts *to = hc_calloc(1, sizeof *to, err, "tensors options");
    if (!to)
        return NULL;
    to->layout = -1;
    const hc_specopt opts[] = {
        {.name = "map", .hint = "NAMES.yaml", .kind = HC_SPECOPT_STRING, .str = &to->mapfile},
        {.name = "layout", .hint = "nchw|nhwc", .kind = HC_SPECOPT_STRING, .str = &layout_s},
    };
    const char *p = hc_specopts_parse("tensors", params, opts, sizeof opts / sizeof opts[0], err);
    if (!p)
        goto fail;
    while (*p == ' ')
        p++;
    if (!*p) {
        hc_err_set(err, HC_ECONFIG, "tensors: needs a directory or a .safetensors file (tensors:[@map=NAMES.yaml] "
                   "[@layout=nchw|nhwc] PATH)");
        goto fail;
    }
    if (!(to->path = strdup(p))) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        goto fail;
    }
    if (to->mapfile && tapmap_load(to->mapfile, &m, err))
        goto fail;
    if (layout_s && (to->layout = parse_layout(layout_s)) < 0) {
        hc_err_set(err, HC_ECONFIG, "tensors: @layout=%s (nchw or nhwc)", layout_s);
        goto fail;
    }
    struct stat st;
    if (stat(to->path, &st) != 0) {
        hc_err_set(err, HC_EIO, "%s: no such file or directory", to->path);
        goto fail;
    }
    free(layout_s);
    tapmap_free(&m);
    return to;
fail:
    free(layout_s);
    tapmap_free(&m);
    tensors_free_opts(to);
    return NULL;
}

static void *tensors_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    const tensors_opts *to = opts;
    const hc_net *net = o->net;
    int nx = o->nx, ny = o->ny;
    const char *mapfile = to->mapfile;
    tapmap m = {0};
    loaded l = {0};
    m.fmt = -1;
    tensors_backend *b = hc_calloc(1, sizeof *b, err, "tensors backend");
    if (!b)
        return NULL;
    b->net = net;
    b->nx = nx;
    b->ny = ny;
    snprintf(b->path, sizeof b->path, "%s", to->path);
    if (mapfile && tapmap_load(mapfile, &m, err))
        goto fail;
    if (to->layout >= 0)
        m.layout = to->layout;
    struct stat st;
    if (stat(b->path, &st) != 0) {
        hc_err_set(err, HC_EIO, "%s: no such file or directory", b->path);
        goto fail;
    }
    char index[1100];
    snprintf(index, sizeof index, "%s/index.json", b->path);
    if (!S_ISDIR(st.st_mode)) {
        if (load_safetensors(&l, b->path, err))
            goto fail;
    } else if (stat(index, &st) == 0) {
        if (load_index(&l, b->path, index, &m, err))
            goto fail;
    } else if (load_dir(&l, b->path, err))
        goto fail;

    b->s = hc_calloc((size_t)l.n, sizeof *b->s, err, "tensors");
    if (!b->s)
        goto fail;
    b->rows = -1;
    for (int i = 0; i < l.n; i++) {
        hc_tensor *t = &l.t[i];
        const map_entry *e;
        src *s = &b->s[b->n];
        s->tool = strdup(t->name);
        b->n++;
        if (map_name(&m, t->name, &s->name, &e, err)) {
            hc_err_prefix(err, "%s: tensor %s: %s: ", l.file[i], t->name, mapfile ? mapfile : "name map");
            goto fail;
        }
        if (!s->tool) {
            hc_err_set(err, HC_ENOMEM, "out of memory");
            goto fail;
        }
        for (int k = 0; k < b->n - 1; k++)
            if (!strcmp(b->s[k].name, s->name)) {
                hc_err_set(err, HC_EFORMAT, "%s: tensor %s: duplicate name: it maps to %s, as does tensor %s (%s)",
                           l.file[i], s->tool, s->name, b->s[k].tool, b->s[k].origin);
                goto fail;
            }
        s->layout = e && e->layout >= 0 ? e->layout : m.layout;
        s->role = role_of(s->name);
        if (row_shape(t, s->layout, l.file[i], &s->rows, &s->channels, &s->hw, err))
            goto fail;
        int fmt = e && e->fmt >= 0 ? e->fmt : m.fmt;
        s->fmt = fmt >= 0 ? fmt : t->dtype == HC_DT_F16 ? HC_TAPFMT_F16 : t->dtype == HC_DT_BF16 ? HC_TAPFMT_BF16
                                                                                               : HC_TAPFMT_F32;
        char sh[160], org[1024];
        snprintf(org, sizeof org, "%s: tensor %s %s %s %s", l.file[i], s->tool, hc_tensor_shape_str(t, sh, sizeof sh),
                 t->ndim == 2 ? "NC" : s->layout == LAY_NHWC ? "NHWC" : "NCHW", hc_dtype_str(t->dtype));
        if (!(s->origin = strdup(org))) {
            hc_err_set(err, HC_ENOMEM, "out of memory");
            goto fail;
        }
        if (b->rows < 0)
            b->rows = s->rows;
        else if (s->rows != b->rows) {
            hc_err_set(err, HC_EFORMAT, "%s: %d rows, but %s has %d: every tensor holds the same positions", org,
                       s->rows, b->s[0].origin, b->rows);
            goto fail;
        }
        size_t per = (size_t)s->channels * (size_t)s->hw, want = role_size(b, s->role);
        if (s->role != ROLE_TAP && per != want) {
            hc_err_set(err, HC_EFORMAT, "%s: %zu values per row, %s of this net at %dx%d has %zu", org, per,
                       s->name, nx, ny, want);
            goto fail;
        }
        /* to [row][channel][point] */
        if (t->ndim >= 3 && s->layout == LAY_NHWC) {
            float *d = hc_malloc(t->count * sizeof(float), err, "tensor");
            if (!d)
                goto fail;
            size_t C = (size_t)s->channels, hw = (size_t)s->hw;
            for (size_t r = 0; r < (size_t)s->rows; r++)
                for (size_t q = 0; q < hw; q++)
                    for (size_t c = 0; c < C; c++)
                        d[r * per + c * hw + q] = t->data[r * per + q * C + c];
            s->data = d;
        } else {
            s->data = t->data;
            t->data = NULL;
        }
    }
    if (m.rows && m.n_rows != b->rows) {
        hc_err_set(err, HC_EFORMAT, "%s: the tensors hold %d rows, the row order names %d positions", b->path,
                   b->rows, m.n_rows);
        goto fail;
    }
    b->n_pos = 0;
    for (int j = 0; j < b->rows; j++) {
        int pos = m.rows ? m.rows[j] : j;
        b->n_pos = pos + 1 > b->n_pos ? pos + 1 : b->n_pos;
    }
    b->pos_row = hc_malloc((size_t)(b->n_pos ? b->n_pos : 1) * sizeof(int), err, "rows");
    if (!b->pos_row)
        goto fail;
    for (int k = 0; k < b->n_pos; k++)
        b->pos_row[k] = -1;
    for (int j = 0; j < b->rows; j++)
        b->pos_row[m.rows ? m.rows[j] : j] = j;
    tapmap_free(&m);
    loaded_free(&l);
    return b;
fail:
    tapmap_free(&m);
    loaded_free(&l);
    tensors_close(b);
    return NULL;
}

/* The first difference of a row of input values with the file's row, or -1. */
static long first_diff(const float *got, const float *file, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &file[i], sizeof(float)) != 0 && !(got[i] == file[i]))
            return (long)i;
    return -1;
}

static int check_input(const tensors_backend *b, int role, const float *rows, int batch, size_t pos0, hc_err *err)
{
    const src *s = find_role(b, role);
    if (!s || !rows)
        return 0;
    size_t per = (size_t)s->channels * (size_t)s->hw, area = (size_t)b->nx * (size_t)b->ny;
    for (int r = 0; r < batch; r++) {
        int j = b->pos_row[pos0 + (size_t)r];
        long d = first_diff(rows + (size_t)r * per, s->data + (size_t)j * per, per);
        if (d >= 0) {
            char where[96];
            if (role == ROLE_IN_SPATIAL)
                snprintf(where, sizeof where, "channel %zu point %zu", (size_t)d / area, (size_t)d % area);
            else
                snprintf(where, sizeof where, "value %ld", d);
            /* Bad input (the files hold other positions), not a failing backend: exit 2. */
            return hc_err_set(err, HC_EFORMAT, "position %zu (row %d of %s): the input rows differ from the file's "
                              "(%s: %g here, %g in the file): the files hold other positions, another row order, "
                              "symmetry or buffer size", pos0 + (size_t)r, j, s->origin, where,
                              (double)rows[(size_t)r * per + (size_t)d], (double)s->data[(size_t)j * per + (size_t)d]);
        }
    }
    return 0;
}

static void fill_head(const tensors_backend *b, int role, float *dst, int batch, size_t pos0)
{
    const src *s = find_role(b, role);
    size_t per = role_size(b, role);
    for (int r = 0; r < batch; r++) {
        float *o = dst + (size_t)r * per;
        if (s)
            memcpy(o, s->data + (size_t)b->pos_row[pos0 + (size_t)r] * per, per * sizeof(float));
        else
            memset(o, 0, per * sizeof(float));
    }
}

static int tensors_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                        hc_raw_heads *out, hc_err *err)
{
    tensors_backend *b = inst;
    size_t pos0 = b->cursor;
    for (int r = 0; r < batch; r++) {
        size_t pos = pos0 + (size_t)r;
        if (pos >= (size_t)b->n_pos || b->pos_row[pos] < 0)
            return hc_err_set(err, HC_EFORMAT, "%s: no row for position %zu (the files hold %d rows%s)", b->path,
                              pos, b->rows, b->n_pos != b->rows ? ", the row order names others" : "");
    }
    if (check_input(b, ROLE_IN_SPATIAL, spatial, batch, pos0, err) ||
        check_input(b, ROLE_IN_GLOBAL, global, batch, pos0, err) || check_input(b, ROLE_IN_META, meta, batch, pos0, err))
        return -1;
    out->batch = batch;
    fill_head(b, ROLE_H_POLICY, out->policy, batch, pos0);
    fill_head(b, ROLE_H_PASS, out->policy_pass, batch, pos0);
    fill_head(b, ROLE_H_VALUE, out->value, batch, pos0);
    fill_head(b, ROLE_H_SCORE, out->score, batch, pos0);
    fill_head(b, ROLE_H_OWN, out->ownership, batch, pos0);
    if (out->taps) {
        hc_tapset_reset(out->taps);
        for (int i = 0; i < b->n; i++) {
            const src *s = &b->s[i];
            if (s->role != ROLE_TAP)
                continue;
            hc_tapset_entry *x = hc_tapset_entry_get(out->taps, s->name, s->hw == 1 ? HC_TAP_BC : HC_TAP_CBP, s->fmt,
                                                     s->channels, s->hw, err);
            if (!x || (!x->origin && hc_tapset_entry_set_origin(x, s->origin, err)))
                return -1;
            size_t per = (size_t)s->channels * (size_t)s->hw;
            for (int r = 0; r < batch; r++)
                memcpy(x->data + (size_t)r * per, s->data + (size_t)b->pos_row[pos0 + (size_t)r] * per,
                       per * sizeof(float));
            x->rows = batch;
        }
    }
    b->cursor += (size_t)batch;
    return 0;
}

static int tensors_taps(void *inst)
{
    (void)inst;
    return 1;
}

static const hc_backend_ops tensors_ops = {
    .eval = tensors_eval,
    .taps = tensors_taps,
    .close = tensors_close,
};

const hc_backend_kind hc_backend_tensors = {
    .name = "tensors",
    .syntax = "tensors:[@map=NAMES.yaml @layout=nchw|nhwc] DIR|FILE.safetensors",
    .summary = "a tap source: per-layer tensors another tool wrote (.npy, safetensors) for the positions in order, "
               "compared by `taps` (docs/TAPS.md)",
    .caps = {.shape = HC_BACKEND_TENSOR, .taps = HC_TAPS_RETURNED},
    .parse = tensors_parse,
    .free_opts = tensors_free_opts,
    .open = tensors_open,
    .ops = &tensors_ops,
};
