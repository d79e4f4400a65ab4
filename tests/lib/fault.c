/* fault:KIND[@N][:BACKEND] — a deliberately broken tensor backend, a test-only kind (the test
 * registry, tests/lib/testkinds.h; tests/helper_halfcheck is the CLI with it) for testing the
 * runner's isolation and the CI scripts' wiring (a crashing backend must turn into a reported
 * error, not a red build with no report) and that tests/test_backend_contract catches a kind
 * that breaks its contract. It wraps a real backend (BACKEND, checked in the user registry,
 * opened through the open's registry; ref32 when absent), so everything but the fault is real
 * output.
 *
 * The fault fires in the eval call whose rows include row N (0-based, counting every row this
 * instance has evaluated, in the order given; N = 0 when absent): in the runner that is the
 * N-th position of the case's evaluation order, so fault:segv@5 crashes on the batch that
 * holds the sixth position evaluated. @open fires in open instead, as the runtimes that
 * aborted at model load (a weight stored as fp16 but declared fp32, an unsupported version).
 *   segv, abort     raise(SIGSEGV) / raise(SIGABRT) with the default action restored (a
 *                   sanitizer's handler would otherwise turn the signal into an exit status)
 *   hang            never returns (sleeps until killed)
 *   exit            _exit(7), as a runtime that aborts the process with a status
 *   error           returns an HC_EBACKEND error
 *   nan-value, nan-score, nan-policy, nan-pass, nan-ownership
 *                   NaN in every element of that raw head of row N ("nan" = nan-value)
 *   flaky           a stand-in for a nondeterministic backend: 1 row in N (default 200; rows N-1,
 *                   2N-1, ... of this instance) comes back with its win logit 1e-4 (relative) higher,
 *                   an answer slightly other than the same position gets elsewhere (run --repeat); one
 *                   ulp would often vanish in the softmax's rounding
 *   batch-drift     a backend whose batched path differs from its one-row path: in a call of more
 *                   than one row, every row but the first comes back with its win logit 1e-4
 *                   (relative) higher, so batch N no longer gives batch 1's bits */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/base/suggest.h"
#include "tests/lib/testkinds.h"

enum fault_kind { F_SEGV, F_ABORT, F_HANG, F_EXIT, F_ERROR, F_NAN_VALUE, F_NAN_SCORE, F_NAN_POLICY, F_NAN_PASS, F_NAN_OWNERSHIP,
                  F_FLAKY, F_BATCH_DRIFT };

static const struct {
    const char *name;
    int kind;
} kinds[] = {
    {"segv", F_SEGV},          {"abort", F_ABORT},         {"hang", F_HANG},           {"exit", F_EXIT},
    {"error", F_ERROR},        {"nan", F_NAN_VALUE},       {"nan-value", F_NAN_VALUE},
    {"nan-score", F_NAN_SCORE}, {"nan-policy", F_NAN_POLICY}, {"nan-pass", F_NAN_PASS},
    {"nan-ownership", F_NAN_OWNERSHIP}, {"flaky", F_FLAKY}, {"batch-drift", F_BATCH_DRIFT},
};

static const char *const default_inner = "ref32";

typedef struct fault_backend {
    int kind;
    long at;   /* the row that triggers the fault; -1: open */
    long rows; /* rows evaluated so far */
    hc_backend inner;
} fault_backend;

static int fire(int kind, long at, hc_err *err);

static void fault_close(void *inst)
{
    fault_backend *f = inst;
    if (!f)
        return;
    hc_backend_close(&f->inner);
    free(f);
}

/* Parses KIND[@N|@open][:BACKEND]: the kind, the row (-1: at open) and the inner spec. */
static int fault_parse(const char *params, int *kind_out, long *at_out, const char **inner_out, hc_err *err)
{
    const char *p = params ? params : "";
    size_t klen = strcspn(p, "@:");
    int kind = -1;
    const char *names[sizeof kinds / sizeof kinds[0]];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        names[i] = kinds[i].name;
        if (strlen(kinds[i].name) == klen && strncmp(kinds[i].name, p, klen) == 0)
            kind = kinds[i].kind;
    }
    if (kind < 0) {
        char hint[96];
        hc_suggest_text(hint, sizeof hint, p, klen, names, (int)(sizeof kinds / sizeof kinds[0]));
        return hc_err_set(err, HC_ECONFIG,
                          "fault: unknown kind \"%.*s\"%s (expected fault:KIND[@N][:BACKEND], KIND one of segv, hang, "
                          "exit, error, nan-value, nan-score, nan-policy, nan-pass, nan-ownership, flaky, batch-drift)",
                          (int)klen, p, hint);
    }
    p += klen;
    long at = 0;
    if (strncmp(p, "@open", 5) == 0 && (p[5] == '\0' || p[5] == ':')) {
        at = -1;
        p += 5;
    } else if (*p == '@') {
        char *end;
        at = strtol(p + 1, &end, 10);
        if (end == p + 1 || at < 0 || (*end != '\0' && *end != ':'))
            return hc_err_set(err, HC_ECONFIG, "fault: \"%s\": @N needs a row number >= 0 (or @open)", params);
        p = end;
    }
    const char *inner = default_inner;
    if (*p == ':') {
        if (p[1] == '\0')
            return hc_err_set(err, HC_ECONFIG, "fault: \"%s\": empty backend after ':'", params);
        inner = p + 1;
    }
    if (at < 0 && kind >= F_NAN_VALUE)
        return hc_err_set(err, HC_ECONFIG, "fault: \"%s\": NaN and flaky faults act on outputs; @open does not apply",
                          params);
    if (kind == F_FLAKY && at == 0) {
        if (params[klen] == '@')
            return hc_err_set(err, HC_ECONFIG, "fault: \"%s\": flaky@N needs N >= 1 (1 row in N)", params);
        at = 200;
    }
    *kind_out = kind;
    *at_out = at;
    *inner_out = inner;
    return 0;
}

typedef struct fault_opts {
    int kind;
    long at;
    char *inner;
} fault_opts;

static void fault_free_opts(void *opts)
{
    fault_opts *fo = opts;
    if (fo)
        free(fo->inner);
    free(fo);
}

static void *fault_parse_opts(const char *params, hc_err *err)
{
    int kind = 0;
    long at = 0;
    const char *inner = NULL;
    if (fault_parse(params, &kind, &at, &inner, err) || hc_backend_check(NULL, inner, err))
        return NULL;
    fault_opts *fo = hc_calloc(1, sizeof *fo, err, "fault options");
    if (fo && !(fo->inner = strdup(inner))) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        fault_free_opts(fo);
        return NULL;
    }
    if (fo) {
        fo->kind = kind;
        fo->at = at;
    }
    return fo;
}

static void *fault_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    const fault_opts *fo = opts;
    if (fo->at < 0) {
        fire(fo->kind, fo->at, err);
        return NULL;
    }
    fault_backend *f = hc_calloc(1, sizeof *f, err, "fault backend");
    if (!f)
        return NULL;
    f->kind = fo->kind;
    f->at = fo->at;
    hc_backend_open_opts io = *o;
    io.spec = fo->inner;
    if (hc_backend_open_with(&f->inner, &io, err)) {
        free(f);
        return NULL;
    }
    if (hc_backend_caps_of(&f->inner)->shape != HC_BACKEND_TENSOR) {
        hc_err_set(err, HC_ECONFIG, "fault: %s is not a tensor backend", fo->inner);
        fault_close(f);
        return NULL;
    }
    return f;
}

static void fill_nan(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
}

static void crash(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached */
}

/* The faults that stop the caller; returns only for the kinds that act on outputs. */
static int fire(int kind, long at, hc_err *err)
{
    switch (kind) {
    case F_SEGV:
        crash(SIGSEGV);
        break;
    case F_ABORT:
        crash(SIGABRT);
        break;
    case F_HANG:
        for (;;) {
            struct timespec t = {3600, 0};
            nanosleep(&t, NULL);
        }
    case F_EXIT:
        _exit(7);
    case F_ERROR:
        if (at < 0)
            return hc_err_set(err, HC_EBACKEND, "fault:error: injected failure at open");
        return hc_err_set(err, HC_EBACKEND, "fault:error: injected failure at row %ld", at);
    }
    return 0;
}

static int fault_eval(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                      hc_raw_heads *out, hc_err *err)
{
    fault_backend *f = inst;
    long first = f->rows;
    f->rows += batch;
    if (f->kind == F_BATCH_DRIFT) {
        if (hc_backend_eval(&f->inner, batch, spatial, global, meta, out, err))
            return -1;
        for (int r = 1; r < batch; r++) {
            float *v = out->value + (size_t)r * 3;
            v[0] += 1e-4f * (fabsf(v[0]) + 1.0f);
        }
        return 0;
    }
    if (f->kind == F_FLAKY) {
        if (hc_backend_eval(&f->inner, batch, spatial, global, meta, out, err))
            return -1;
        for (long g = first; g < first + batch; g++)
            if ((g + 1) % f->at == 0) {
                float *v = out->value + (size_t)(g - first) * 3;
                v[0] += 1e-4f * (fabsf(v[0]) + 1.0f);
            }
        return 0;
    }
    int fires = f->at >= first && f->at < first + batch;
    if (fires && fire(f->kind, f->at, err))
        return -1;
    if (hc_backend_eval(&f->inner, batch, spatial, global, meta, out, err))
        return -1;
    if (!fires)
        return 0;
    size_t r = (size_t)(f->at - first), area = (size_t)out->nx * (size_t)out->ny;
    size_t pc = (size_t)out->policy_channels, sc = (size_t)out->score_channels;
    switch (f->kind) {
    case F_NAN_VALUE:
        fill_nan(out->value + r * 3, 3);
        break;
    case F_NAN_SCORE:
        fill_nan(out->score + r * sc, sc);
        break;
    case F_NAN_POLICY:
        fill_nan(out->policy + r * pc * area, pc * area);
        break;
    case F_NAN_PASS:
        fill_nan(out->policy_pass + r * pc, pc);
        break;
    case F_NAN_OWNERSHIP:
        fill_nan(out->ownership + r * area, area);
        break;
    }
    return 0;
}

static const hc_backend_ops fault_ops = {
    .eval = fault_eval,
    .close = fault_close,
};

const hc_backend_kind hc_test_kind_fault = {
    .name = "fault",
    .syntax = "fault:KIND[@N|@open][:BACKEND]",
    .summary = "a broken backend for testing isolation: KIND segv, abort, hang, exit (status 7), error, "
               "nan-value|score|policy|pass|ownership, fired at row N (default 0) or at open, over BACKEND (default "
               "ref32); flaky@N: 1 row in N (default 200) answered slightly off (win logit +1e-4); batch-drift: rows "
               "after the first of a call answered slightly off",
    .caps = {.shape = HC_BACKEND_TENSOR},
    .parse = fault_parse_opts,
    .free_opts = fault_free_opts,
    .open = fault_open,
    .ops = &fault_ops,
};

static const hc_backend_kind *const test_kinds[] = {&hc_test_kind_fault, NULL};

static const hc_backend_registry test_registry = {test_kinds, &hc_backend_registry_builtin};

const hc_backend_registry *hc_test_registry(void) { return &test_registry; }
