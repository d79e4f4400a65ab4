/* The user registry of backend kinds (ref32, file, mutate, emulate, gtp, pipe, tensors, analysis,
 * cuda), lookup in a chain of registries, and the wrappers every caller reaches instances through. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/base/suggest.h"

extern const hc_backend_kind hc_backend_ref32;
extern const hc_backend_kind hc_backend_file;
extern const hc_backend_kind hc_backend_mutate;
extern const hc_backend_kind hc_backend_emulate;
extern const hc_backend_kind hc_backend_gtp;
extern const hc_backend_kind hc_backend_pipe;
extern const hc_backend_kind hc_backend_tensors;
extern const hc_backend_kind hc_backend_analysis;
extern const hc_backend_kind hc_backend_cuda;

/* One line per backend kind, in the order `halfcheck backends` lists them. */
static const hc_backend_kind *const user_kinds[] = {
    &hc_backend_ref32,    &hc_backend_file, &hc_backend_mutate,  &hc_backend_emulate, &hc_backend_gtp,
    &hc_backend_pipe,     &hc_backend_tensors, &hc_backend_analysis, &hc_backend_cuda, NULL,
};

const hc_backend_registry hc_backend_registry_builtin = {user_kinds, NULL};

const hc_backend_registry *hc_backend_registry_user(void) { return &hc_backend_registry_builtin; }

void *hc_backend_no_opts(void)
{
    static const char none;
    return (void *)&none;
}

/* "not built" for a kind this binary lacks, naming the kinds it has. */
static int not_built(const hc_backend_registry *reg, const hc_backend_kind *k, hc_err *err)
{
    char known[512] = "";
    int nn = 0;
    for (const hc_backend_registry *r = reg ? reg : &hc_backend_registry_builtin; r; r = r->next)
        for (int i = 0; r->kinds[i]; i++)
            if (!r->kinds[i]->missing) {
                size_t len = strlen(known);
                snprintf(known + len, sizeof known - len, "%s%s", nn++ ? ", " : "", r->kinds[i]->name);
            }
    return hc_err_set(err, HC_ECONFIG, "backend kind \"%s\" is not built into this halfcheck (%s; built: %s)", k->name,
                      k->summary, known);
}

/* The kind spec names; a missing one (cuda without nvcc) too when allow_missing, else refused. */
static const hc_backend_kind *find(const hc_backend_registry *reg, const char *spec, const char **params,
                                   int allow_missing, hc_err *err)
{
    if (!reg)
        reg = &hc_backend_registry_builtin;
    if (!spec)
        spec = "";
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    for (const hc_backend_registry *r = reg; r; r = r->next)
        for (int i = 0; r->kinds[i]; i++)
            if (strlen(r->kinds[i]->name) == n && strncmp(r->kinds[i]->name, spec, n) == 0) {
                /* A kind this binary lacks (cuda without nvcc) says so rather than "unknown". */
                if (r->kinds[i]->missing && !allow_missing) {
                    not_built(reg, r->kinds[i], err);
                    return NULL;
                }
                if (params)
                    *params = colon ? colon + 1 : spec + n;
                return r->kinds[i];
            }
    char known[512] = "";
    const char *names[48];
    int nn = 0;
    for (const hc_backend_registry *r = reg; r; r = r->next)
        for (int i = 0; r->kinds[i]; i++) {
            if (r->kinds[i]->missing)
                continue;
            size_t len = strlen(known);
            snprintf(known + len, sizeof known - len, "%s%s", nn ? ", " : "", r->kinds[i]->name);
            if (nn < 48)
                names[nn++] = r->kinds[i]->name;
        }
    char hint[96];
    hc_suggest_text(hint, sizeof hint, spec, n, names, nn);
    hc_err_set(err, HC_ECONFIG, "unknown backend kind \"%.*s\"%s (known: %s)", (int)n, spec, hint, known);
    return NULL;
}

static void free_opts(const hc_backend_kind *k, void *opts)
{
    if (opts && k->free_opts)
        k->free_opts(opts);
}

const hc_backend_kind *hc_backend_find(const hc_backend_registry *reg, const char *spec, const char **params,
                                       hc_err *err)
{
    return find(reg, spec, params, 0, err);
}

int hc_backend_check(const hc_backend_registry *reg, const char *spec, hc_err *err)
{
    const char *params;
    const hc_backend_kind *k = find(reg, spec, &params, 1, err);
    if (!k)
        return -1;
    /* A missing kind's params are checked too (its parser is plain C): a typo is told as such. */
    void *opts = k->parse(params, err);
    if (!opts)
        return hc_err_prefix(err, "backend %s: ", spec);
    free_opts(k, opts);
    return k->missing ? not_built(reg, k, err) : 0;
}

int hc_backend_open_parsed(hc_backend *b, const hc_backend_kind *kind, const void *opts,
                           const hc_backend_open_opts *o, hc_err *err)
{
    b->kind = NULL;
    b->inst = NULL;
    if ((o->profile || o->active) && !kind->caps.profile)
        return hc_err_set(err, HC_EUSAGE, "backend %s: takes no profile or layer subset", kind->name);
    b->inst = kind->open(opts, o, err);
    if (!b->inst)
        return hc_err_prefix(err, "backend %s: ", o->spec ? o->spec : kind->name);
    b->kind = kind;
    return 0;
}

int hc_backend_open_with(hc_backend *b, const hc_backend_open_opts *o, hc_err *err)
{
    const char *params;
    b->kind = NULL;
    b->inst = NULL;
    const hc_backend_kind *k = hc_backend_find(o->registry, o->spec, &params, err);
    if (!k)
        return -1;
    if ((o->profile || o->active) && !k->caps.profile)
        return hc_err_set(err, HC_EUSAGE, "backend %s: takes no profile or layer subset", k->name);
    /* A profile in memory stands for the params (spec "emulate" or "cuda:emulate" given a
     * profile that taps or bisect-precision built): open gets no parsed options. */
    void *opts = NULL;
    if (!(o->profile && k->caps.profile) && !(opts = k->parse(params, err)))
        return hc_err_prefix(err, "backend %s: ", o->spec);
    int rc = hc_backend_open_parsed(b, k, opts, o, err);
    free_opts(k, opts);
    return rc;
}

void hc_backend_warm(const hc_backend_registry *reg, const char *spec)
{
    hc_err err = {0};
    const hc_backend_kind *k = spec ? hc_backend_find(reg, spec, NULL, &err) : NULL;
    if (k && k->warm)
        k->warm();
}

int hc_backend_open_like(hc_backend *b, const hc_backend *base, const hc_backend_open_opts *o, hc_err *err)
{
    if (!base->kind->ops->open_sharing)
        return hc_backend_open_with(b, o, err);
    b->kind = NULL;
    b->inst = base->kind->ops->open_sharing(base->inst, o->max_batch, o->threads, err);
    if (!b->inst)
        return hc_err_prefix(err, "backend %s: ", o->spec);
    b->kind = base->kind;
    return 0;
}

hc_engine_stats hc_engine_stats_unknown(void)
{
    return (hc_engine_stats){.positions = -1, .eval_seconds = -1, .peak_rss_kib = -1, .engines = 0,
                             .nn_rows = -1, .nn_batches = -1, .avg_batch = -1, .max_batch = -1};
}

void hc_backend_close(hc_backend *b)
{
    if (b && b->kind && b->inst)
        b->kind->ops->close(b->inst);
    if (b) {
        b->kind = NULL;
        b->inst = NULL;
    }
}

const hc_backend_caps *hc_backend_caps_of(const hc_backend *b)
{
    return b && b->kind ? &b->kind->caps : NULL;
}

int hc_backend_eval(hc_backend *b, int batch, const float *spatial, const float *global, const float *meta,
                    hc_raw_heads *out, hc_err *err)
{
    if (!b->kind || !b->kind->ops->eval)
        return hc_err_set(err, HC_EUSAGE, "backend %s: not a tensor backend", b->kind ? b->kind->name : "(closed)");
    return b->kind->ops->eval(b->inst, batch, spatial, global, meta, out, err);
}

int hc_backend_eval_positions(hc_backend *b, int n, const hc_position *pos, hc_nnoutput *outs, hc_err *err)
{
    if (!b->kind || !b->kind->ops->eval_positions)
        return hc_err_set(err, HC_EUSAGE, "backend %s: not a position backend", b->kind ? b->kind->name : "(closed)");
    return b->kind->ops->eval_positions(b->inst, n, pos, outs, err);
}

int hc_backend_configure(hc_backend *b, const struct hc_eval_settings *s, hc_err *err)
{
    return b->kind && b->kind->ops->configure ? b->kind->ops->configure(b->inst, s, err) : 0;
}

int hc_backend_positions_per_call(hc_backend *b, int batch)
{
    return b->kind && b->kind->ops->positions_per_call ? b->kind->ops->positions_per_call(b->inst, batch) : 0;
}

int hc_backend_finish(hc_backend *b, hc_engine_stats *st, hc_err *err)
{
    if (!b || !b->kind || !b->inst || !b->kind->ops->finish)
        return 0;
    return b->kind->ops->finish(b->inst, st, err);
}

const hc_resolution *hc_backend_resolution(const hc_backend *b)
{
    return b && b->kind && b->inst && b->kind->ops->resolution ? b->kind->ops->resolution(b->inst) : NULL;
}

int hc_backend_set_taps(hc_backend *b, hc_engine_hook_fn fn, void *user, hc_err *err)
{
    if (!b->kind || !b->kind->ops->set_taps)
        return hc_err_set(err, HC_EBACKEND, "backend %s: taps not supported", b->kind ? b->kind->name : "(closed)");
    return b->kind->ops->set_taps(b->inst, fn, user, err);
}

int hc_backend_taps(const hc_backend *b)
{
    return b->kind && b->kind->caps.shape == HC_BACKEND_TENSOR && b->kind->ops->taps && b->kind->ops->taps(b->inst);
}

const char *hc_backend_identity(const hc_backend *b)
{
    const char *id = b && b->kind && b->inst && b->kind->ops->identity ? b->kind->ops->identity(b->inst) : NULL;
    return id && *id ? id : NULL;
}
