/* mutate:KIND:SPEC — plants a bug that a real backend shipped (../shared/BACKENDS.md) into any
 * tensor backend SPEC, opened through the registry. It exists to prove that the gate catches
 * such bugs: a test runs each kind against a tier and expects the check to fail, in the mode
 * (unbatched / batched) and on the boards where the real bug showed.
 *
 * The wrapper works at the raw-heads level, as a backend does: it may alter the rows it hands
 * to the inner backend and the raw heads it gets back, nothing after post-processing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/base/suggest.h"
#include "harness/go/symmetry.h"

enum mutation {
    /* Real bug: the mask of batch element i was read at the stride of the whole input tensor;
     * unbatched results were right, batched winrate error was 19%. The out-of-place read lands
     * on another row's mask; we give every row of a batch the mask (input channel 0) of row 0.
     * Rows of one batch that share a board size are unaffected, so it shows only batched and
     * only on boards smaller than the buffer (the rectangular sets): exactly where it hid. */
    M_MASK_STRIDE,
    /* Real bug: the pass logit was never filled (an output name mismatch), inflating the pass
     * probability by up to 14 points. We leave every policy channel's pass logit at 0, the
     * value of a freshly cleared output buffer. */
    M_PASS_DROPPED,
    /* Real bug: non-contiguous output strides read as contiguous (policy KL 9.19). The policy
     * planes come back read with x and y strides swapped: a true transpose on a square buffer,
     * a scramble on a rectangular one. */
    M_POLICY_TRANSPOSED,
    /* A backend whose getOutput forgets to map policy and ownership back from the symmetry
     * the rows were evaluated at. Raw heads here are in the symmetrized frame and the shared
     * post-processing inverts the row's symmetry, which the wrapper cannot see; we emulate the
     * wrong frame by an extra 180-degree rotation (flip x and y, valid on any buffer) of the
     * policy and ownership planes. Stronger than the real bug on symmetry-0 positions, where
     * forgetting is harmless. */
    M_SYMMETRY_NOT_INVERTED,
    /* Real bug: a masking constant (1e9) in a masked max overflowed fp16 to inf, and 0*inf gave
     * NaN in the pooled values. Pooling only masks where the mask is 0, so rows whose board is
     * smaller than the buffer get NaN; global pooling spreads it to every head of the row. */
    M_FP16_OVERFLOW,
    /* One batch row (row 1) returns the previous batch's result for that row, as a backend that
     * reads an output buffer before the copy of the current batch finished. Batched only. */
    M_STALE_ROW,
};

static const struct {
    const char *name;
    int kind;
} kinds[] = {
    {"mask-stride", M_MASK_STRIDE},
    {"pass-dropped", M_PASS_DROPPED},
    {"policy-transposed", M_POLICY_TRANSPOSED},
    {"symmetry-not-inverted", M_SYMMETRY_NOT_INVERTED},
    {"fp16-overflow", M_FP16_OVERFLOW},
    {"stale-row", M_STALE_ROW},
};

enum { STALE_ROW = 1, EXTRA_SYMMETRY = 3 };

typedef struct mutate_backend {
    int kind;
    hc_backend inner;
    int nx, ny, area, c_spatial, max_batch;
    float *spatial;     /* mask-stride: the altered rows */
    float *plane;       /* [area]: one plane being rearranged */
    hc_raw_heads *prev; /* stale-row: row STALE_ROW of the previous batch (row 0 here) */
    int have_prev;
} mutate_backend;

static void mutate_close(void *inst)
{
    mutate_backend *m = inst;
    if (!m)
        return;
    hc_backend_close(&m->inner);
    free(m->spatial);
    free(m->plane);
    hc_raw_heads_free(m->prev);
    free(m);
}

typedef struct mutate_opts {
    int kind;    /* enum mutation */
    char *inner; /* the tensor backend's spec */
} mutate_opts;

static void mutate_free_opts(void *opts)
{
    mutate_opts *mo = opts;
    if (mo)
        free(mo->inner);
    free(mo);
}

/* KIND:BACKEND; BACKEND is checked in the user registry. */
static void *mutate_parse(const char *params, hc_err *err)
{
    const char *colon = params ? strchr(params, ':') : NULL;
    const char *names[sizeof kinds / sizeof kinds[0]];
    size_t klen = colon ? (size_t)(colon - params) : strlen(params ? params : "");
    int kind = -1;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        names[i] = kinds[i].name;
        if (strlen(kinds[i].name) == klen && strncmp(kinds[i].name, params, klen) == 0)
            kind = kinds[i].kind;
    }
    if (kind < 0 || !colon || colon[1] == '\0') {
        char hint[96] = "";
        if (kind < 0)
            hc_suggest_text(hint, sizeof hint, params ? params : "", klen, names, (int)(sizeof kinds / sizeof kinds[0]));
        hc_err_set(err, HC_ECONFIG, "mutate: expects KIND:BACKEND, got \"%s\"%s", params ? params : "", hint);
        return NULL;
    }
    if (hc_backend_check(NULL, colon + 1, err))
        return NULL;
    mutate_opts *mo = hc_calloc(1, sizeof *mo, err, "mutate options");
    if (mo && !(mo->inner = strdup(colon + 1))) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        mutate_free_opts(mo);
        return NULL;
    }
    if (mo)
        mo->kind = kind;
    return mo;
}

static void *mutate_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    const mutate_opts *mo = opts;
    const hc_net *net = o->net;
    int nx = o->nx, ny = o->ny, max_batch = o->max_batch, kind = mo->kind;
    if (!net) {
        hc_err_set(err, HC_ECONFIG, "mutate: needs a net");
        return NULL;
    }
    mutate_backend *m = hc_calloc(1, sizeof *m, err, "mutate backend");
    if (!m)
        return NULL;
    m->kind = kind;
    m->nx = nx;
    m->ny = ny;
    m->area = nx * ny;
    m->c_spatial = net->num_input_c;
    m->max_batch = max_batch;
    hc_backend_open_opts io = *o;
    io.spec = mo->inner;
    if (hc_backend_open_with(&m->inner, &io, err)) {
        free(m);
        return NULL;
    }
    if (hc_backend_caps_of(&m->inner)->shape != HC_BACKEND_TENSOR) {
        hc_err_set(err, HC_ECONFIG, "mutate: %s is not a tensor backend (mutations act on raw heads)", mo->inner);
        mutate_close(m);
        return NULL;
    }
    m->plane = hc_malloc(sizeof(float) * (size_t)m->area, err, "mutate plane");
    if (!m->plane) {
        mutate_close(m);
        return NULL;
    }
    if (kind == M_MASK_STRIDE) {
        m->spatial = hc_malloc(sizeof(float) * (size_t)max_batch * (size_t)m->c_spatial * (size_t)m->area, err,
                               "mutate rows");
        if (!m->spatial) {
            mutate_close(m);
            return NULL;
        }
    }
    if (kind == M_STALE_ROW) {
        m->prev = hc_raw_heads_new(1, nx, ny, net->num_policy_c, net->num_score_value_c, err);
        if (!m->prev) {
            mutate_close(m);
            return NULL;
        }
    }
    return m;
}

/* Copies row r of a into row s of b (same shapes). */
static void copy_row(const hc_raw_heads *a, int r, hc_raw_heads *b, int s)
{
    size_t area = (size_t)a->nx * (size_t)a->ny, pc = (size_t)a->policy_channels, sc = (size_t)a->score_channels;
    memcpy(b->policy + (size_t)s * pc * area, a->policy + (size_t)r * pc * area, sizeof(float) * pc * area);
    memcpy(b->policy_pass + (size_t)s * pc, a->policy_pass + (size_t)r * pc, sizeof(float) * pc);
    memcpy(b->value + (size_t)s * 3, a->value + (size_t)r * 3, sizeof(float) * 3);
    memcpy(b->score + (size_t)s * sc, a->score + (size_t)r * sc, sizeof(float) * sc);
    memcpy(b->ownership + (size_t)s * area, a->ownership + (size_t)r * area, sizeof(float) * area);
}

static void swap_row(hc_raw_heads *h, int r, hc_raw_heads *other, int s)
{
    size_t area = (size_t)h->nx * (size_t)h->ny, pc = (size_t)h->policy_channels, sc = (size_t)h->score_channels;
    struct {
        float *a, *b;
        size_t n;
    } parts[5] = {
        {h->policy + (size_t)r * pc * area, other->policy + (size_t)s * pc * area, pc * area},
        {h->policy_pass + (size_t)r * pc, other->policy_pass + (size_t)s * pc, pc},
        {h->value + (size_t)r * 3, other->value + (size_t)s * 3, 3},
        {h->score + (size_t)r * sc, other->score + (size_t)s * sc, sc},
        {h->ownership + (size_t)r * area, other->ownership + (size_t)s * area, area},
    };
    for (int p = 0; p < 5; p++)
        for (size_t i = 0; i < parts[p].n; i++) {
            float t = parts[p].a[i];
            parts[p].a[i] = parts[p].b[i];
            parts[p].b[i] = t;
        }
}

static void fill_row_nan(hc_raw_heads *h, int r)
{
    size_t area = (size_t)h->nx * (size_t)h->ny, pc = (size_t)h->policy_channels, sc = (size_t)h->score_channels;
    for (size_t i = 0; i < pc * area; i++)
        h->policy[(size_t)r * pc * area + i] = NAN;
    for (size_t i = 0; i < pc; i++)
        h->policy_pass[(size_t)r * pc + i] = NAN;
    for (size_t i = 0; i < 3; i++)
        h->value[(size_t)r * 3 + i] = NAN;
    for (size_t i = 0; i < sc; i++)
        h->score[(size_t)r * sc + i] = NAN;
    for (size_t i = 0; i < area; i++)
        h->ownership[(size_t)r * area + i] = NAN;
}

static int mutate_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                       hc_raw_heads *out, hc_err *err)
{
    mutate_backend *m = inst;
    const size_t area = (size_t)m->area, row_floats = (size_t)m->c_spatial * area;
    const float *rows = spatial;
    if (m->kind == M_MASK_STRIDE && batch > 1 && batch <= m->max_batch) {
        memcpy(m->spatial, spatial, sizeof(float) * row_floats * (size_t)batch);
        for (int r = 1; r < batch; r++)
            memcpy(m->spatial + (size_t)r * row_floats, spatial, sizeof(float) * area);
        rows = m->spatial;
    }
    if (hc_backend_eval(&m->inner, batch, rows, global, meta, out, err))
        return -1;
    const size_t pc = (size_t)out->policy_channels;
    switch (m->kind) {
    case M_MASK_STRIDE:
        break;
    case M_PASS_DROPPED:
        for (size_t i = 0; i < (size_t)batch * pc; i++)
            out->policy_pass[i] = 0.0f;
        break;
    case M_POLICY_TRANSPOSED:
        for (size_t p = 0; p < (size_t)batch * pc; p++) {
            float *plane = out->policy + p * area;
            memcpy(m->plane, plane, sizeof(float) * area);
            for (int y = 0; y < m->ny; y++)
                for (int x = 0; x < m->nx; x++)
                    plane[y * m->nx + x] = m->plane[x * m->ny + y];
        }
        break;
    case M_SYMMETRY_NOT_INVERTED:
        for (size_t p = 0; p < (size_t)batch * (pc + 1); p++) {
            float *plane = p < (size_t)batch * pc ? out->policy + p * area
                                                  : out->ownership + (p - (size_t)batch * pc) * area;
            memcpy(m->plane, plane, sizeof(float) * area);
            hc_sym_apply_planes(m->plane, plane, 1, m->ny, m->nx, EXTRA_SYMMETRY);
        }
        break;
    case M_FP16_OVERFLOW:
        for (int r = 0; r < batch; r++) {
            const float *mask = spatial + (size_t)r * row_floats;
            for (size_t i = 0; i < area; i++)
                if (mask[i] == 0.0f) {
                    fill_row_nan(out, r);
                    break;
                }
        }
        break;
    case M_STALE_ROW:
        if (batch > STALE_ROW) {
            if (m->have_prev) {
                swap_row(out, STALE_ROW, m->prev, 0);
            } else {
                copy_row(out, STALE_ROW, m->prev, 0);
                m->have_prev = 1;
            }
        }
        break;
    }
    return 0;
}

static const hc_backend_ops mutate_ops = {
    .eval = mutate_eval,
    .close = mutate_close,
};

const hc_backend_kind hc_backend_mutate = {
    .name = "mutate",
    .syntax = "mutate:KIND:BACKEND",
    .summary = "plants a shipped backend bug into a tensor backend (KIND: mask-stride, pass-dropped, policy-transposed, "
               "symmetry-not-inverted, fp16-overflow, stale-row)",
    .caps = {.shape = HC_BACKEND_TENSOR},
    .parse = mutate_parse,
    .free_opts = mutate_free_opts,
    .open = mutate_open,
    .ops = &mutate_ops,
};
