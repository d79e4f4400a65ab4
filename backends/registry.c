/* The table of backends by name (ref32, file, mutate, fault, emulate, gtp, pipe, tensors, analysis, cuda) and lookup in it. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/base/suggest.h"

extern const hc_backend_vtbl hc_backend_ref32;
extern const hc_backend_vtbl hc_backend_file;
extern const hc_backend_vtbl hc_backend_mutate;
extern const hc_backend_vtbl hc_backend_fault;
extern const hc_backend_vtbl hc_backend_emulate;
extern const hc_backend_vtbl hc_backend_gtp;
extern const hc_backend_vtbl hc_backend_pipe;
extern const hc_backend_vtbl hc_backend_tensors;
extern const hc_backend_vtbl hc_backend_analysis;
#ifdef HC_HAVE_CUDA
extern const hc_backend_vtbl hc_backend_cuda;
#endif

/* One line per backend kind; guard optional ones with their HC_HAVE_* macro. */
const hc_backend_vtbl *const hc_backends[] = {
    &hc_backend_ref32,
    &hc_backend_file,
    &hc_backend_mutate,
    &hc_backend_fault,
    &hc_backend_emulate,
    &hc_backend_gtp,
    &hc_backend_pipe,
    &hc_backend_tensors,
    &hc_backend_analysis,
#ifdef HC_HAVE_CUDA
    &hc_backend_cuda,
#endif
    NULL,
};

/* What `halfcheck backends` prints: the spec syntax and one line per kind, kept here beside the
 * table so the two are read (and tested: test_cli_conv) together. Kinds built only with an
 * optional dependency are listed too; the command says when this binary lacks one. */
const hc_backend_doc hc_backend_docs[] = {
    {"ref32", "ref32", "the fp32 reference forward pass (KataGo's Eigen arithmetic, one FMA chain per GEMM output)"},
    {"file", "file:[@resolution=W,S,P,O|kata-raw-nn] PATH",
     "plays back recorded outputs (golden or KataGo reference-file JSONL); record i is position i"},
    {"mutate", "mutate:KIND:BACKEND",
     "plants a shipped backend bug into a tensor backend (KIND: mask-stride, pass-dropped, policy-transposed, "
     "symmetry-not-inverted, fp16-overflow, stale-row)"},
    {"fault", "fault:KIND[@N|@open][:BACKEND]",
     "a broken backend for testing isolation (KIND: segv, abort, hang, exit, error, nan-value|score|policy|pass|ownership)"},
    {"emulate", "emulate:PROFILE|PATH.yaml",
     "reduced precision emulated on the fp32 engine, as a precision profile says (built-in profiles below)"},
    {"gtp", "gtp:[@timeout=S @startup-timeout=S @temperature=T @handicap=0|1] CMD",
     "runs a GTP engine (e.g. KataGo) and reads kata-raw-nn; $VAR from the environment, unset means skipped"},
    {"pipe", "pipe:[@timeout=S @startup-timeout=S @model=PATH] CMD",
     "runs a program speaking docs/PROTOCOL.md (input rows in, raw heads out); $VAR unset means skipped"},
    {"tensors", "tensors:[@map=NAMES.yaml @layout=nchw|nhwc] DIR|FILE.safetensors",
     "a tap source: per-layer tensors another tool wrote (.npy, safetensors) for the positions in order, "
     "compared by `taps` (docs/TAPS.md)"},
    {"analysis", "analysis:[@timeout=S @startup-timeout=S @handicap=0|1] CMD",
     "runs KataGo's JSON analysis engine, one per symmetry ({symmetry}, {batch}, {threads} in CMD), queries sent concurrently so "
     "that it batches; reads the root's raw outputs; $VAR unset means skipped"},
    {"cuda", "cuda:ref32|emulate:PROFILE|PATH.yaml|fp32|fp16[,pool32][,mid32][,probs32][,emulike]",
     "KataGo nets on an NVIDIA GPU: ref32 (the reference, bit for bit), emulate:PROFILE (emulate:PROFILE's "
     "bits, every built-in profile or YAML path), fp32 and fp16 (cuBLAS GEMMs, halfcheck's own kernels); with "
     "threads, instances side by side on their own streams; built where nvcc is found"},
    {NULL, NULL, NULL},
};

const hc_backend_doc *hc_backend_doc_find(const char *name)
{
    for (const hc_backend_doc *d = hc_backend_docs; d->name; d++)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

const hc_backend_vtbl *hc_backend_find(const char *spec, const char **params, hc_err *err)
{
    if (!spec)
        spec = "";
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int i = 0; hc_backends[i]; i++)
        if (strlen(hc_backends[i]->name) == n && strncmp(hc_backends[i]->name, spec, n) == 0) {
            if (params)
                *params = colon ? colon + 1 : spec + n;
            return hc_backends[i];
        }
    char known[512] = "";
    const char *names[32];
    int nn = 0;
    for (int i = 0; hc_backends[i]; i++) {
        size_t len = strlen(known);
        snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", hc_backends[i]->name);
        if (nn < 32)
            names[nn++] = hc_backends[i]->name;
    }
    char hint[96];
    hc_suggest_text(hint, sizeof hint, spec, n, names, nn);
    /* A kind this binary lacks (cuda without nvcc) says so rather than "unknown". */
    const hc_backend_doc *doc = NULL;
    for (const hc_backend_doc *d = hc_backend_docs; d->name; d++)
        if (strlen(d->name) == n && strncmp(d->name, spec, n) == 0)
            doc = d;
    if (doc)
        hc_err_set(err, HC_ECONFIG, "backend kind \"%s\" is not built into this halfcheck (%s; built: %s)", doc->name,
                   doc->summary, known);
    else
        hc_err_set(err, HC_ECONFIG, "unknown backend kind \"%.*s\"%s (known: %s)", (int)n, spec, hint, known);
    return NULL;
}

int hc_backend_open_with(hc_backend *b, const hc_backend_open_opts *o, hc_err *err)
{
    const char *params;
    b->vt = hc_backend_find(o->spec, &params, err);
    b->inst = NULL;
    if (!b->vt)
        return -1;
    if (o->profile || o->active) {
        if (!b->vt->open_opts) {
            const char *name = b->vt->name;
            b->vt = NULL;
            return hc_err_set(err, HC_EUSAGE, "backend %s: takes no profile or layer subset", name);
        }
        b->inst = b->vt->open_opts(params, o, err);
    } else
        b->inst = b->vt->open(params, o->net, o->nx, o->ny, o->max_batch, o->threads, err);
    if (!b->inst) {
        b->vt = NULL;
        return hc_err_prefix(err, "backend %s: ", o->spec);
    }
    return 0;
}

int hc_backend_open(hc_backend *b, const char *spec, const hc_net *net, int nx, int ny,
                    int max_batch, int threads, hc_err *err)
{
    hc_backend_open_opts o = {.spec = spec, .net = net, .nx = nx, .ny = ny, .max_batch = max_batch,
                              .threads = threads};
    return hc_backend_open_with(b, &o, err);
}

int hc_backend_open_like(hc_backend *b, const hc_backend *base, const hc_backend_open_opts *o, hc_err *err)
{
    if (!base->vt->open_sharing)
        return hc_backend_open_with(b, o, err);
    b->vt = base->vt;
    b->inst = base->vt->open_sharing(base->inst, o->max_batch, o->threads, err);
    if (!b->inst) {
        b->vt = NULL;
        return hc_err_prefix(err, "backend %s: ", o->spec);
    }
    return 0;
}

hc_engine_stats hc_engine_stats_unknown(void)
{
    return (hc_engine_stats){.positions = -1, .eval_seconds = -1, .peak_rss_kib = -1, .engines = 0,
                             .nn_rows = -1, .nn_batches = -1, .avg_batch = -1, .max_batch = -1};
}

void hc_backend_close(hc_backend *b)
{
    if (b && b->vt && b->inst)
        b->vt->close(b->inst);
    if (b) {
        b->vt = NULL;
        b->inst = NULL;
    }
}

int hc_backend_set_taps(hc_backend *b, hc_engine_hook_fn fn, void *user, hc_err *err)
{
    if (!b->vt || !b->vt->set_taps)
        return hc_err_set(err, HC_EBACKEND, "backend %s: taps not supported",
                          b->vt ? b->vt->name : "(closed)");
    return b->vt->set_taps(b->inst, fn, user, err);
}

int hc_backend_taps(const hc_backend *b)
{
    return b->vt && b->vt->shape == HC_BACKEND_TENSOR && b->vt->taps && b->vt->taps(b->inst);
}

int hc_backend_check(const char *spec, hc_err *err)
{
    const char *params;
    const hc_backend_vtbl *vt = hc_backend_find(spec, &params, err);
    if (!vt)
        return -1;
    if (vt->check && vt->check(params, err))
        return hc_err_prefix(err, "backend %s: ", spec);
    return 0;
}

const char *hc_backend_identity(const hc_backend *b)
{
    const char *id = b && b->vt && b->inst && b->vt->identity ? b->vt->identity(b->inst) : NULL;
    return id && *id ? id : NULL;
}
