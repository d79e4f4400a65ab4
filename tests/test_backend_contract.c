/* The contract every backend kind keeps, checked for each kind registered (the test registry: the
 * test kinds, then every user kind), so that a new kind is covered by registering it and adding
 * the spec it runs here with to `specs` below (a kind without one fails contract-KIND.0):
 *   .1 a bad params string is refused at parse (hc_backend_check) with an error naming the
 *      option and the spec;
 *   .2 it opens (net g170, NN buffer 10x14) with ops matching its shape, and closes (a SAN build
 *      reports any leak);
 *   .3 taps and resolution as declared: set_taps succeeds only with HC_TAPS_HOOK, an instance
 *      hands back taps only with HC_TAPS_RETURNED, declares a resolution only with caps.resolution;
 *   .4 batch 1 and batch N give the same bits, position by position;
 *   .5 lanes as declared: 2 threads run as lanes only where caps.lanes says so, with the same bits;
 *   .6 an engine kind reports its identity;
 *   .7 finish, called once after the evaluation, counts an engine's positions (a kind without
 *      engines leaves the figures unknown), and after close no child process is left.
 * Kinds needing an external program run against the repository's stand-ins (helper_fake_gtp,
 * helper_fake_analysis, helper_pipe_ref32), tensors: on ref32's taps of the positions
 * (hc_taps_save); a kind that cannot run here (cuda not built, or built without a device) is
 * reported as skipped with its reason. contract-planted: the batch check (.4) finds the planted losses of batch
 * invariance of fault:batch-drift and mutate:stale-row, so it can fail. Needs ../shared (the g170
 * net, the 10x14 positions and KataGo's outputs of them, for file:). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "harness/eval/evaluate.h"
#include "harness/model/model.h"
#include "harness/run/taps.h"
#include "hc_test.h"
#include "tests/lib/testkinds.h"

enum { NX = 10, NY = 14, N = 10, BATCH = 4, CHECKS = 7 };

static const char *const net_rel = "nets/g170-b6c96-s175395328-d26788732.bin.gz";
static const char *const golden_rel = "golden/outputs/g170_size10x14.jsonl.gz";
static const char *const positions_rel = "positions/size10x14.jsonl.gz";

/* How each kind runs here: its spec ("%M" the model, "%G" KataGo's outputs, "%H" the test
 * programs' directory, "%T" ref32's taps of the positions as `taps --save` writes them), a bad
 * spec and what its refusal must name; why, when it cannot run. */
typedef struct kind_spec {
    const char *kind, *spec, *bad, *bad_names, *cannot;
} kind_spec;

static const kind_spec specs[] = {
    {"fault", "fault:nan-value@100000:ref32", "fault:sevg@1", "sevg", NULL},
    {"ref32", "ref32", "ref32:x9", "x9", NULL},
    {"file", "file:%G", "file:@resolution=1,2 %G", "@resolution", NULL},
    {"mutate", "mutate:pass-dropped:ref32", "mutate:pass-droped:ref32", "pass-droped", NULL},
    {"emulate", "emulate:fp16", "emulate:fp61", "fp61", NULL},
    {"gtp", "gtp:@timeout=30 %H/helper_fake_gtp %M -nn 10 14", "gtp:@timeoutt=5 x", "timeoutt", NULL},
    {"pipe", "pipe:@timeout=30 @model=%M %H/helper_pipe_ref32", "pipe:@modle=x y", "modle", NULL},
    {"tensors", "tensors:%T", "tensors:@layout=nhcw .", "nhcw", NULL},
    {"analysis", "analysis:@timeout=60 %H/helper_fake_analysis %M -nn 10 14 -symmetry {symmetry} -batch {batch}",
     "analysis:@handicap=2 x {symmetry}", "handicap", NULL},
    {"cuda", "cuda:ref32", "cuda:fp17", "fp17", "needs an NVIDIA GPU (tests/gpu_test_* run it)"},
};

static char model[4096], golden[4096], here[4096], tapdir[4096];

/* spec with %M, %G and %H filled in. */
static void fill(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *c = in; *c && o + 1 < cap; c++) {
        const char *sub = NULL;
        if (c[0] == '%' && c[1] == 'M')
            sub = model;
        else if (c[0] == '%' && c[1] == 'G')
            sub = golden;
        else if (c[0] == '%' && c[1] == 'H')
            sub = here;
        else if (c[0] == '%' && c[1] == 'T')
            sub = tapdir;
        if (sub) {
            o += (size_t)snprintf(out + o, cap - o, "%s", sub);
            if (o >= cap)
                o = cap - 1;
            c++;
        } else {
            out[o++] = *c;
        }
    }
    out[o] = '\0';
}

/* One evaluation of ps through the evaluator, with what it reports. */
typedef struct eval_run {
    hc_nnoutput *outs;
    int lanes;
    char identity[700];
    hc_engine_stats st;
    int finish_rc;
} eval_run;

static int evaluate(const char *spec, const hc_net *net, const hc_position *ps, int batch, int threads, eval_run *r,
                    hc_err *err)
{
    memset(r, 0, sizeof *r);
    hc_evaluator_opts eo = {.spec = spec, .net = net, .settings = hc_eval_settings_default(NX, NY), .batch = batch,
                            .threads = threads, .registry = hc_test_registry()};
    r->outs = calloc(N, sizeof *r->outs);
    hc_evaluator *ev = r->outs ? hc_evaluator_open(&eo, err) : NULL;
    if (!ev)
        return -1;
    r->lanes = hc_evaluator_lanes(ev);
    hc_eval_request req = {.ps = ps, .n = N, .outs = r->outs};
    int rc = hc_evaluator_run(ev, &req, err);
    const char *id = hc_evaluator_identity(ev);
    snprintf(r->identity, sizeof r->identity, "%s", id ? id : "");
    hc_err fe = {0};
    r->finish_rc = hc_evaluator_finish(ev, &r->st, &fe);
    hc_evaluator_close(ev);
    return rc;
}

static void run_free(eval_run *r)
{
    if (r->outs)
        hc_nnoutputs_free(r->outs, N);
    r->outs = NULL;
}

/* Whether two evaluations of the same positions are the same bits; the first difference in why. */
static int same_bits(const eval_run *a, const eval_run *b, char *why, size_t len)
{
    for (int i = 0; i < N; i++)
        if (hc_nnoutput_first_diff(&a->outs[i], &b->outs[i], why, len))
            return 0;
    return 1;
}

/* No child process left (an engine its kind failed to reap); reaps a zombie it finds. */
static int no_children(void)
{
    int st;
    return waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD;
}

static const kind_spec *spec_of(const char *kind)
{
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (!strcmp(specs[i].kind, kind))
            return &specs[i];
    return NULL;
}

/* .1: the bad spec is refused before anything opens, naming the option and the spec. */
static void check_parse(const hc_backend_kind *k, const kind_spec *ks, const char *name)
{
    char bad[8192];
    fill(ks->bad, bad, sizeof bad);
    hc_err err = {0};
    int rc = hc_backend_check(hc_test_registry(), bad, &err);
    /* A kind this binary lacks parses its params all the same (a typo is told as a typo), and
     * refuses a good spec as not built. */
    int missing_ok = 1;
    char good[8192] = "", why[sizeof err.msg] = "";
    if (k->missing) {
        hc_err e2 = {0};
        fill(ks->spec, good, sizeof good);
        missing_ok = hc_backend_check(hc_test_registry(), good, &e2) == -1 &&
                     strstr(e2.msg, "not built into this halfcheck") && strstr(e2.msg, k->name);
        snprintf(why, sizeof why, "%s", e2.msg);
    }
    hc_check(name, rc == -1 && err.code == HC_ECONFIG && strstr(err.msg, ks->bad_names) && strstr(err.msg, bad) && missing_ok,
             "%s: rc %d, the error must name \"%s\" and the spec: %s%s%s%s", bad, rc, ks->bad_names, err.msg,
             k->missing ? "; and the good spec " : "", good, k->missing ? why : "");
}

/* .2 and .3 on one instance. */
static void check_instance(const hc_backend_kind *k, const char *spec, const hc_net *net, const char *n2,
                           const char *n3)
{
    hc_err err = {0};
    hc_backend b = {0};
    hc_backend_open_opts o = {.spec = spec, .net = net, .nx = NX, .ny = NY, .max_batch = BATCH, .threads = 1,
                              .registry = hc_test_registry()};
    int rc = hc_backend_open_with(&b, &o, &err);
    const hc_backend_caps *c = rc == 0 ? hc_backend_caps_of(&b) : NULL;
    int shape_ok = c && b.kind == k &&
                   (c->shape == HC_BACKEND_TENSOR ? k->ops->eval && !k->ops->eval_positions
                                                  : k->ops->eval_positions && !k->ops->eval);
    hc_check(n2, rc == 0 && shape_ok, "%s: open rc %d, ops for its shape %d: %s", spec, rc, shape_ok, err.msg);
    if (rc) {
        hc_check(n3, 0, "%s did not open", spec);
        return;
    }
    hc_err te = {0};
    int hook = hc_backend_set_taps(&b, NULL, NULL, &te) == 0;
    int taps = hc_backend_taps(&b);
    const hc_resolution *res = hc_backend_resolution(&b);
    hc_check(n3, hook == !!(c->taps & HC_TAPS_HOOK) && (!taps || (c->taps & HC_TAPS_RETURNED)) && (!res || c->resolution),
             "%s: set_taps %d (declared %d: %s), hands back taps %d (declared %d), resolution %d (declared %d)", spec,
             hook, !!(c->taps & HC_TAPS_HOOK), te.msg, taps, !!(c->taps & HC_TAPS_RETURNED), res != NULL, c->resolution);
    hc_backend_close(&b);
}

/* The batch check .4: whether batch 1 and batch BATCH give the same bits. -1: an evaluation failed. */
static int batch_invariant(const char *spec, const hc_net *net, const hc_position *ps, eval_run *one, char *why,
                           size_t len, hc_err *err)
{
    eval_run many;
    int rc = evaluate(spec, net, ps, BATCH, 1, &many, err);
    int same = rc == 0 && same_bits(one, &many, why, len);
    run_free(&many);
    return rc ? -1 : same;
}

static void check_kind(const hc_backend_kind *k, const hc_net *net, const hc_position *ps)
{
    char name[CHECKS][64];
    for (int i = 0; i < CHECKS; i++)
        snprintf(name[i], sizeof name[i], "contract-%s.%d", k->name, i + 1);
    const kind_spec *ks = spec_of(k->name);
    if (!ks) {
        hc_fail_n(name[0], CHECKS, "kind %s has no spec to run with: add one to tests/test_backend_contract.c's specs",
                  k->name);
        return;
    }
    check_parse(k, ks, name[0]);
    const char *cannot = k->missing ? k->missing : ks->cannot;
    if (k->missing || !ks->spec) {
        hc_skip_n(name[1], CHECKS - 1, "%s cannot run here: %s", k->name, cannot);
        return;
    }
    char spec[8192];
    fill(ks->spec, spec, sizeof spec);
    /* A kind built here whose hardware is absent (cuda without a device) cannot run either: its
     * open says so, and the rest is skipped with that reason. */
    {
        hc_err e = {0};
        hc_backend b = {0};
        hc_backend_open_opts o = {.spec = spec, .net = net, .nx = NX, .ny = NY, .max_batch = 1, .threads = 1,
                                  .registry = hc_test_registry()};
        if (hc_backend_open_with(&b, &o, &e) == 0)
            hc_backend_close(&b);
        else if (strstr(e.msg, "no CUDA device")) {
            hc_skip_n(name[1], CHECKS - 1, "%s cannot run here: %s", k->name, e.msg);
            return;
        }
    }
    check_instance(k, spec, net, name[1], name[2]);

    hc_err err = {0};
    eval_run one;
    char why[512] = "";
    int rc = evaluate(spec, net, ps, 1, 1, &one, &err);
    if (!hc_check(name[3], rc == 0 && batch_invariant(spec, net, ps, &one, why, sizeof why, &err) == 1,
                  "%s: batch 1 (rc %d) and batch %d differ: %s %s", spec, rc, BATCH, why, err.msg)) {
        printf("#   %s\n", err.msg);
    }
    eval_run two;
    hc_err e2 = {0};
    int rc2 = rc == 0 ? evaluate(spec, net, ps, BATCH, 2, &two, &e2) : -1;
    int want_lanes = k->caps.lanes && k->caps.shape == HC_BACKEND_TENSOR;
    hc_check(name[4], rc2 == 0 && (two.lanes > 0) == want_lanes && same_bits(&one, &two, why, sizeof why),
             "%s: 2 threads: rc %d, %d lanes (declared %d), same bits as batch 1: %s %s", spec, rc2, two.lanes,
             k->caps.lanes, why, e2.msg);
    if (rc2 == 0)
        run_free(&two);
    hc_check(name[5], rc == 0 && (!k->caps.engine || one.identity[0]), "%s: identity \"%s\"", spec, one.identity);
    if (one.identity[0])
        printf("# %s: identity %s\n", k->name, one.identity);
    int fin_ok = one.finish_rc == 0 && (k->caps.engine ? one.st.positions == N && one.st.engines >= 1
                                                        : one.st.positions == -1 && one.st.engines == 0);
    hc_check(name[6], rc == 0 && fin_ok && no_children(),
             "%s: finish rc %d, %ld positions by %d engines (engine kind %d), children left %d", spec, one.finish_rc,
             one.st.positions, one.st.engines, k->caps.engine, !no_children());
    run_free(&one);
}

int main(int argc, char **argv)
{
    (void)argc;
    unsigned n_kinds = 0;
    for (const hc_backend_registry *r = hc_test_registry(); r; r = r->next)
        for (const hc_backend_kind *const *k = r->kinds; *k; k++)
            n_kinds++;
    hc_plan(CHECKS * n_kinds + 2);
    char self[4096];
    snprintf(self, sizeof self, "%s", argv[0]);
    char rel[4096];
    snprintf(rel, sizeof rel, "%s", dirname(self));
    hc_abspath(rel, here, sizeof here);
    const char *p = hc_shared(net_rel);
    if (p)
        hc_abspath(p, model, sizeof model);
    p = hc_shared(golden_rel);
    if (p)
        hc_abspath(p, golden, sizeof golden);
    const char *pp = hc_shared(positions_rel);
    if (!model[0] || !golden[0] || !pp) {
        hc_skip_rest("contract", "../shared absent: no g170 net, 10x14 positions or KataGo's outputs of them");
        return hc_test_exit();
    }
    hc_err err = {0};
    hc_net *net = hc_net_load(model, &err);
    hc_position *all = NULL;
    size_t n_all = 0;
    if (net)
        hc_net_reduce_activations(net);
    if (!net || hc_positions_load(pp, &all, &n_all, &err) || n_all < N) {
        hc_fail_n("contract-setup", hc_test_rest(), "net or positions did not load (%zu positions): %s", n_all,
                  err.msg);
        hc_net_free(net);
        hc_positions_free(all, n_all);
        return hc_test_exit();
    }
    /* tensors: reads back what ref32 tapped of these positions */
    const char *tmp = hc_tmpdir("test_backend_contract");
    hc_eval_settings es = hc_eval_settings_default(NX, NY);
    if (tmp) {
        char rel_t[600];
        snprintf(rel_t, sizeof rel_t, "%s/taps", tmp);
        hc_abspath(rel_t, tapdir, sizeof tapdir);
        hc_shf("rm -rf %s", tapdir);
        hc_taps_save_opts so = {.dir = tapdir, .formats = HC_TAPS_SAVE_SAFETENSORS, .net_path = model,
                                .positions_path = pp};
        if (hc_taps_save(net, all, N, &es, "ref32", 2, &so, NULL, &err))
            printf("# taps --save for tensors: failed: %s\n", err.msg);
    }
    for (const hc_backend_registry *r = hc_test_registry(); r; r = r->next)
        for (const hc_backend_kind *const *k = r->kinds; *k; k++)
            check_kind(*k, net, all);

    /* The batch check finds a deliberately broken kind: a test kind whose batched path differs,
     * and a user kind's planted stale row. */
    const char *planted[2] = {"fault:batch-drift:ref32", "mutate:stale-row:ref32"};
    for (int i = 0; i < 2; i++) {
        char name[64], why[512] = "";
        snprintf(name, sizeof name, "contract-planted.%d", i + 1);
        eval_run one;
        int rc = evaluate(planted[i], net, all, 1, 1, &one, &err);
        int inv = rc == 0 ? batch_invariant(planted[i], net, all, &one, why, sizeof why, &err) : -1;
        hc_check(name, inv == 0, "%s: the batch check must find batch %d differing from batch 1 (rc %d, verdict %d): %s",
                 planted[i], BATCH, rc, inv, err.msg);
        if (inv == 0)
            printf("# %s caught: %s\n", planted[i], why);
        run_free(&one);
    }
    hc_positions_free(all, n_all);
    hc_net_free(net);
    return hc_test_exit();
}
