/* The suite loop: nets x boards x backends x modes, each case's reference, isolated run and verdict. */
#include "harness/run/runner.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/run/casetaps.h"
#include "harness/metrics/diagnose.h"
#include "harness/eval/evaluate.h"
#include "harness/base/files.h"
#include "harness/base/template.h"
#include "harness/run/headroom.h"
#include "harness/model/heads.h"
#include "harness/run/isolate.h"
#include "harness/run/preflight.h"
#include "harness/run/provenance.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/run/refcache.h"
#include "harness/run/repeat.h"
#include "harness/run/shown.h"
#include "harness/run/verdict.h"
#include "harness/metrics/stats.h"
#include "harness/base/stream.h"
#include "reports/reports.h"
#include "harness/metrics/tiers.h"
#include "harness/base/version.h"

/* Storage a result points into, owned by the run. */
typedef struct owned {
    hc_shown_pos *shown;
    hc_stats *stats;
    hc_tier *tiers;
    hc_tier_check *checks;
    char *message;
    char *skip_message;
    hc_result_taps *taps;
    hc_diag_finding *diag;
} owned;

struct hc_run {
    const hc_suite *suite;
    hc_result *items;
    owned *own;
    size_t n, cap;
    int input_error, backend_error, tier_fail;
    int interrupted;
    unsigned seed;       /* the effective seed of the batched shuffles */
    const char *ref_spec; /* the reference's backend (--ref, the suite's reference:, else ref32) */
    char *rerun_tail;    /* what a rerun command needs beyond the case (--net..., --seed N), malloc'd */
    int cache_hits, cache_misses;
    int cache_off;       /* the cache directory cannot be used (warned once): nothing is written */
    hc_results results;
    char timestamp[32];
    char scratch[512];
    unsigned n_children; /* names each child's scratch files */
    hc_suite filtered;   /* the suite narrowed by opts->only (cases array owned) */
    int model_version;   /* of the net being run, for its results; 0 while none is loaded */
    /* Loaded once, before any work: the nets and positions the selected cases need. */
    hc_preflight *pf;
    /* Provenance of the results (results.h): the nets as evaluated, the backends' engines. */
    hc_prov_builder *prov;
    /* The suite's headroom rows (suite key headroom:), their layer and what strings malloc'd. */
    hc_result_headroom *headroom;
    size_t n_headroom;
};

hc_run_options hc_run_options_default(void)
{
    hc_run_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.timeout_s = 600;
    o.seed = 1;
    return o;
}

int hc_run_ref_spec_ok(const char *spec)
{
    /* cuda:ref32, also with params after a comma: its parser refuses them, naming them (it takes none) */
    return spec && (strcmp(spec, "ref32") == 0 || (strncmp(spec, "cuda:ref32", 10) == 0 && (!spec[10] || spec[10] == ',')));
}

static int stopped(const hc_run_options *opts)
{
    return opts->stop && *opts->stop;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* message, then the command that reruns just case c ("rerun: halfcheck run SUITE --only
 * net=N,board=B,backend=K"), malloc'd. The suite's path is as it was given. */
static char *with_rerun(const hc_run *run, const hc_case *c, const char *message)
{
    const hc_suite *s = run->suite;
    char only[1200], cmd[8192];
    snprintf(only, sizeof only, "net=%s,board=%s,backend=%s", s->nets[c->net].name, s->boards[c->board].name,
             s->backends[c->backend].name);
    size_t o = (size_t)snprintf(cmd, sizeof cmd, "%s%srerun: halfcheck run ", message ? message : "",
                                message && *message ? "; " : "");
    if (o < sizeof cmd)
        o += hc_shell_word(cmd + o, sizeof cmd - o, s->path ? s->path : "SUITE");
    if (o < sizeof cmd)
        o += (size_t)snprintf(cmd + o, sizeof cmd - o, " --only ");
    if (o < sizeof cmd)
        o += hc_shell_word(cmd + o, sizeof cmd - o, only);
    if (o < sizeof cmd)
        snprintf(cmd + o, sizeof cmd - o, "%s", run->rerun_tail ? run->rerun_tail : "");
    return strdup(cmd);
}

/* Appends a result; the strings and arrays given are adopted by the run. */
static int add_result(hc_run *run, const hc_case *c, const char *mode, int outcome, char *message, hc_stats *stats,
                      double seconds, hc_err *err)
{
    if (run->n == run->cap) {
        size_t cap = run->cap ? run->cap * 2 : 32;
        hc_result *ni = realloc(run->items, cap * sizeof *ni);
        if (ni)
            run->items = ni;
        owned *no = realloc(run->own, cap * sizeof *no);
        if (no)
            run->own = no;
        if (!ni || !no) {
            free(message);
            free(stats);
            return hc_err_set(err, HC_ENOMEM, "out of memory for results");
        }
        run->cap = cap;
    }
    const hc_suite *s = run->suite;
    owned *o = &run->own[run->n];
    memset(o, 0, sizeof *o);
    o->message = message;
    o->stats = stats;
    o->tiers = calloc(c->n_tiers ? c->n_tiers : 1, sizeof(hc_tier));
    o->checks = calloc(c->n_tiers ? c->n_tiers : 1, sizeof(hc_tier_check));
    if (!o->tiers || !o->checks) {
        free(o->tiers);
        free(o->checks);
        free(message);
        free(stats);
        return hc_err_set(err, HC_ENOMEM, "out of memory for results");
    }
    for (size_t t = 0; t < c->n_tiers; t++) {
        o->tiers[t] = s->tiers[c->tiers[t]];
        if (outcome == HC_OUT_CHECKED && stats) {
            hc_tier_check_stats(&o->tiers[t], stats, &o->checks[t]);
            if (!o->checks[t].pass)
                run->tier_fail = 1;
        }
    }
    hc_result *r = &run->items[run->n];
    memset(r, 0, sizeof *r);
    r->net = s->nets[c->net].name;
    r->board = s->boards[c->board].name;
    r->backend = s->backends[c->backend].name;
    r->mode = mode;
    r->outcome = outcome;
    r->message = message;
    r->stats = stats;
    r->n_tiers = c->n_tiers;
    r->tiers = o->tiers;
    r->checks = outcome == HC_OUT_CHECKED ? o->checks : NULL;
    r->nn_x_len = c->settings.nn_x_len;
    r->nn_y_len = c->settings.nn_y_len;
    r->max_batch_size = c->settings.max_batch_size;
    r->policy_optimism = c->settings.policy_optimism;
    r->pda = c->settings.pda;
    r->policy_temperature = c->settings.policy_temperature;
    r->seconds = seconds;
    r->model_version = run->model_version;
    /* the reference checking itself (its batch invariance, its lanes): the case's backend is
     * the reference's; ref32 against a GPU reference is a check across devices */
    r->self_check = strcmp(s->backends[c->backend].spec, run->ref_spec) == 0;
    if (outcome == HC_OUT_CHECKED && stats && hc_stats_any_nonfinite(stats))
        run->backend_error = 1;
    int bad = outcome == HC_OUT_ERROR || (outcome == HC_OUT_CHECKED && stats && hc_stats_any_nonfinite(stats));
    for (size_t t = 0; outcome == HC_OUT_CHECKED && t < c->n_tiers; t++)
        bad |= !o->checks[t].pass;
    if (bad) {
        /* Every failure and error names the one command that reruns just this case. */
        char *full = with_rerun(run, c, message);
        if (full) { /* out of memory: the message without it */
            free(message);
            o->message = full;
            r->message = full;
        }
    }
    run->n++;
    return 0;
}

static const char *mode_name(int mode)
{
    return mode == HC_MODE_BATCHED ? "batched" : "unbatched";
}

/* An error result for every mode of a case. */
static int add_case_errors(hc_run *run, const hc_case *c, const char *msg, hc_err *err)
{
    for (int mode = HC_MODE_UNBATCHED; mode <= HC_MODE_BATCHED; mode <<= 1) {
        if (!(run->suite->modes & mode))
            continue;
        char *m = strdup(msg);
        if (add_result(run, c, mode_name(mode), HC_OUT_ERROR, m, NULL, 0, err))
            return -1;
    }
    return 0;
}

static hc_eval_settings settings_of(const hc_board_cfg *b)
{
    hc_eval_settings s = hc_eval_settings_default(b->nn_x_len, b->nn_y_len);
    s.policy_optimism = b->policy_optimism;
    s.playout_doubling_advantage = b->pda;
    s.policy_temperature = (float)b->policy_temperature;
    return s;
}

typedef struct progress_ctx {
    const hc_run_options *opts;
    const char *what;
} progress_ctx;

static int report_progress(void *user, size_t done, size_t total)
{
    progress_ctx *pc = user;
    if (pc->opts->progress)
        pc->opts->progress(pc->opts->progress_user, pc->what, done, total);
    return stopped(pc->opts); /* non-zero stops the evaluation */
}

/* hc_isolate_case's callbacks (user: a progress_ctx). */
static int case_stopped(void *user)
{
    return stopped(((progress_ctx *)user)->opts);
}

static void case_progress(void *user, size_t done, size_t total)
{
    report_progress(user, done, total);
}

/* The reference outputs of one net x board x settings: from the cache, or ref32 in this
 * process (the reference is halfcheck's own code, not a backend under test), or cuda:ref32
 * (the same bits on a GPU) checked against ref32 here at a few positions. */
/* A board config's positions as the reference needs them: the records, the digest of their
 * source (the cache key) and the positions file's path (NULL for an SGF collection). */
typedef struct pos_set {
    const hc_position *ps;
    size_t n;
    const char *digest;
    const char *path;
} pos_set;

/* A reference computed on another device (cuda:ref32) must be ref32's bits: a few of its
 * positions (the first, the middle, the last; opts->ref_check of them) are evaluated again by
 * ref32 on the CPU and compared bit for bit. A difference is a bug of the GPU reference, never
 * a tolerance: it fails the reference loudly, naming the position. */
static int ref_self_check(const hc_run_options *opts, const hc_net *net, const pos_set *set, const hc_eval_settings *s,
                          const char *spec, const hc_nnoutput *outs, hc_err *err)
{
    size_t n = set->n, k = (size_t)(opts->ref_check > 0 ? opts->ref_check : HC_RUN_REF_CHECK);
    if (k > n)
        k = n;
    hc_position *pick = k ? calloc(k, sizeof *pick) : NULL;
    size_t *idx = k ? calloc(k, sizeof *idx) : NULL;
    hc_nnoutput *cpu = k ? calloc(k, sizeof *cpu) : NULL;
    int rc = 0;
    if (k && (!pick || !idx || !cpu)) {
        rc = hc_err_set(err, HC_ENOMEM, "reference self-check");
        goto done;
    }
    for (size_t i = 0; i < k; i++) {
        idx[i] = k > 1 ? i * (n - 1) / (k - 1) : 0; /* the first, ..., the last */
        pick[i] = set->ps[idx[i]];                    /* a shallow copy: read only */
    }
    if (k) {
        hc_evaluator_opts eo = {.spec = "ref32", .net = net, .settings = *s, .batch = 1, .threads = 1};
        hc_evaluator *ev = hc_evaluator_open(&eo, err);
        hc_eval_request req = {.ps = pick, .n = k, .outs = cpu};
        rc = ev ? hc_evaluator_run(ev, &req, err) : -1;
        hc_evaluator_close(ev);
        if (rc) {
            hc_err_prefix(err, "reference self-check (ref32 on the CPU): ");
            goto done;
        }
    }
    for (size_t i = 0; i < k; i++) {
        char what[160];
        const char *d = hc_nnoutput_first_diff(&outs[idx[i]], &cpu[i], what, sizeof what);
        if (d) {
            const hc_position *p = &set->ps[idx[i]];
            char where[1100] = "";
            if (set->path && p->file_line > 0)
                snprintf(where, sizeof where, " (%s:%ld)", set->path, p->file_line);
            rc = hc_err_set(err, HC_EBACKEND,
                            "reference %s differs from ref32 on the CPU at position %zu%s: %s; the GPU reference "
                            "must give the CPU's bits (a bug: report it); nothing was cached, use --ref ref32",
                            spec, idx[i], where, d);
            break;
        }
    }
done:
    if (cpu)
        for (size_t i = 0; i < k; i++)
            hc_nnoutput_free(&cpu[i]);
    free(cpu);
    free(idx);
    free(pick);
    return rc ? -1 : 0;
}

/* The reference cache cannot be used (why: what failed, naming the directory or file): warned
 * once through opts->warn, and no further reference is written to it. */
static void cache_unusable(hc_run *run, const hc_run_options *opts, const char *why)
{
    run->cache_off = 1;
    if (opts->warn) {
        char msg[1400];
        snprintf(msg, sizeof msg, "reference cache %s not used: %s; each reference is computed afresh", opts->cache_dir,
                 why);
        opts->warn(opts->progress_user, msg);
    }
}

static int opts_stopped(void *opts)
{
    return stopped((const hc_run_options *)opts);
}

static int compute_reference(hc_run *run, const hc_run_options *opts, const hc_net *net, const pos_set *set,
                             const hc_eval_settings *s, const char *what, hc_nnoutput *outs, hc_err *err);

static int reference(hc_run *run, const hc_run_options *opts, const hc_net *net, const char *net_digest,
                     const pos_set *set, const hc_eval_settings *s, const char *what, hc_nnoutput *outs, hc_err *err)
{
    size_t n = set->n;
    char key[65], path[1200];
    path[0] = '\0';
    int lock = -1;
    if (opts->cache_dir) {
        hc_refcache_key(net_digest, set->digest, s, key);
        snprintf(path, sizeof path, "%s/ref-%s.bin", opts->cache_dir, key);
        if (hc_refcache_read(path, outs, n, s)) {
            run->cache_hits++;
            return 0;
        }
        /* Another run computing the same reference (the jobs of a sweep that share a net and a
         * board start together): wait for it and read its entry. */
        if (!run->cache_off) {
            lock = hc_refcache_lock(opts->cache_dir, key, opts_stopped, (void *)opts);
            if (lock == -2)
                return hc_err_set(err, HC_EINTERRUPTED, "interrupted");
            if (lock >= 0 && hc_refcache_read(path, outs, n, s)) {
                hc_refcache_unlock(lock);
                run->cache_hits++;
                return 0;
            }
        }
    }
    run->cache_misses++;
    int rc = compute_reference(run, opts, net, set, s, what, outs, err);
    if (!rc && path[0] && !run->cache_off) {
        hc_err cerr = {0};
        /* A cache that cannot be written only costs time, but the user is told once. */
        if (hc_refcache_write(path, outs, n, &cerr))
            cache_unusable(run, opts, cerr.msg);
    }
    hc_refcache_unlock(lock);
    return rc;
}

/* The reference's outputs computed by the run's reference backend (ref32 here, a GPU reference
 * in a child process), a GPU's checked against the CPU's on a sample. */
static int compute_reference(hc_run *run, const hc_run_options *opts, const hc_net *net, const pos_set *set,
                             const hc_eval_settings *s, const char *what, hc_nnoutput *outs, hc_err *err)
{
    const hc_position *ps = set->ps;
    size_t n = set->n;
    const char *pos_path = set->path;
    const char *spec = run->ref_spec;
    if (!hc_run_ref_spec_ok(spec))
        return hc_err_set(err, HC_ECONFIG, "reference %s: must be ref32 or cuda:ref32", spec);
    int cpu = strcmp(spec, "ref32") == 0;
    progress_ctx pc = {opts, what};
    int rc;
    if (cpu) {
        hc_evaluator_opts eo = {.spec = spec, .net = net, .settings = *s, .batch = 16, .threads = opts->threads,
                                .registry = opts->registry};
        hc_evaluator *ev = hc_evaluator_open(&eo, err);
        if (!ev)
            return -1;
        hc_eval_failure fail = {.position = -1};
        hc_eval_request req = {.ps = ps, .n = n, .outs = outs, .fail = &fail, .progress = report_progress, .user = &pc};
        rc = hc_evaluator_run(ev, &req, err);
        /* A record the game replay refused (an illegal move, a wrong nextPla): name its file and line. */
        if (rc && pos_path && err->code == HC_EFORMAT && fail.position >= 0 && (size_t)fail.position < n &&
            ps[fail.position].file_line > 0)
            hc_err_prefix(err, "%s:%ld: ", pos_path, ps[fail.position].file_line);
        hc_evaluator_close(ev);
    } else {
        /* A GPU reference runs in a child process as the backend cases do: a process that has
         * initialised CUDA cannot hand the device on to the children it forks later. */
        char prefix[600], *message = NULL;
        snprintf(prefix, sizeof prefix, "%s/ref%u", run->scratch, run->n_children++);
        hc_isolate_side cs = {0};
        cs.skipped = calloc(n ? n : 1, 1);
        hc_isolate_case ic = {.spec = spec, .net = net, .ps = ps, .n = n, .batch = 128, .settings = s,
                              .registry = opts->registry, .threads = opts->threads, .timeout_s = opts->timeout_s, .scratch_prefix = prefix,
                              .stopped = case_stopped, .progress = case_progress, .user = &pc};
        rc = cs.skipped ? hc_isolate_run(&ic, outs, &cs, &message) : -1;
        size_t skipped = 0;
        for (size_t i = 0; rc == 0 && i < n; i++)
            skipped += cs.skipped[i] != 0;
        if (rc == -2)
            hc_err_set(err, HC_EINTERRUPTED, "interrupted");
        else if (rc)
            hc_err_set(err, HC_EBACKEND, "%s", message ? message : "out of memory");
        else if (skipped)
            rc = hc_err_set(err, HC_EBACKEND, "%zu positions skipped: %s", skipped,
                            cs.skip_text ? cs.skip_text : "the backend cannot express them");
        free(message);
        free(cs.skipped);
        free(cs.skip_text);
        rc = rc ? -1 : 0;
    }
    if (!rc && !cpu)
        rc = ref_self_check(opts, net, set, s, spec, outs, err);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            hc_nnoutput_free(&outs[i]);
        return -1;
    }
    return 0;
}

/* Backend specs may name the case: {net_name}, {board_name}, {model} (the net's file),
 * {suite_dir}, {nnX}, {nnY}; e.g. file:{suite_dir}/out/{net_name}_{board_name}.jsonl.gz. */
static int expand_spec(const hc_suite *s, const hc_case *c, const char *spec, char *out, size_t len, hc_err *err)
{
    char suite_dir[1024];
    snprintf(suite_dir, sizeof suite_dir, "%s", s->path ? s->path : ".");
    char *slash = strrchr(suite_dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(suite_dir, sizeof suite_dir, ".");
    char nx[16], ny[16];
    snprintf(nx, sizeof nx, "%d", c->settings.nn_x_len);
    snprintf(ny, sizeof ny, "%d", c->settings.nn_y_len);
    /* {model} absolute: an engine may run in a directory of its own (halfcheck katago's does). */
    const char *model = s->nets[c->net].model;
    char model_abs[2048];
    if (model[0] != '/' && getcwd(model_abs, sizeof model_abs - 1)) {
        size_t l = strlen(model_abs);
        snprintf(model_abs + l, sizeof model_abs - l, "/%s", model[0] == '.' && model[1] == '/' ? model + 2 : model);
        model = model_abs;
    }
    const hc_template_var vars[] = {{"net_name", s->nets[c->net].name}, {"board_name", s->boards[c->board].name},
                                    {"model", model}, {"suite_dir", suite_dir}, {"nnX", nx}, {"nnY", ny}};
    char *x = hc_template_expand(spec, vars, sizeof vars / sizeof vars[0], err);
    if (!x)
        return -1;
    size_t xl = strlen(x);
    if (xl < len)
        memcpy(out, x, xl + 1);
    free(x);
    return xl < len ? 0 : hc_err_set(err, HC_ECONFIG, "backend spec too long after expansion: %s", spec);
}

/* The seed of a batched case's shuffle: FNV-1a 64 over the run's seed and the case's names,
 * so that a case deals the same batches whichever cases run beside it. */
static uint64_t case_seed(unsigned seed, const char *net, const char *board, const char *backend, const char *mode)
{
    char text[64];
    snprintf(text, sizeof text, "halfcheck-batches v1 seed %u", seed);
    const char *parts[5] = {text, net, board, backend, mode};
    uint64_t h = 0xcbf29ce484222325ull;
    for (int k = 0; k < 5; k++) {
        for (const unsigned char *p = (const unsigned char *)parts[k]; *p; p++) {
            h ^= *p;
            h *= 0x100000001b3ull;
        }
        h ^= 0xff; /* a separator no name holds as a byte of UTF-8 */
        h *= 0x100000001b3ull;
    }
    return h;
}

typedef struct case_inputs {
    const hc_position *ps;
    size_t n;
} case_inputs;

static int add_verdict(hc_run *run, const hc_case *c, int mode, hc_verdict_result *v, double secs, hc_err *err);
static int repeat_case(hc_run *run, const hc_run_options *opts, const hc_case *c, const hc_net *net,
                       const case_inputs *in, const char *spec, const hc_eval_settings *es, hc_err *err);
static void attach_diagnosis(hc_run *run, hc_diag_finding *diag, size_t n_diag);

static int run_case(hc_run *run, const hc_run_options *opts, const hc_case *c, const hc_net *net, const hc_position *ps,
                    size_t n, const hc_nnoutput *ref, hc_err *err)
{
    const hc_suite *s = run->suite;
    const hc_backend_cfg *bc = &s->backends[c->backend];
    hc_eval_settings es = settings_of(&c->settings);
    char spec[2048];
    hc_err xerr = {0};
    if (expand_spec(s, c, bc->spec, spec, sizeof spec, &xerr)) {
        run->input_error = 1;
        return add_case_errors(run, c, xerr.msg, err);
    }
    for (int mode = HC_MODE_UNBATCHED; mode <= HC_MODE_BATCHED; mode <<= 1) {
        if (!(s->modes & mode))
            continue;
        int batch = mode == HC_MODE_BATCHED ? c->settings.max_batch_size : 1;
        const hc_backend_kind *kind = hc_backend_find(opts->registry, spec, NULL, NULL);
        if (mode == HC_MODE_BATCHED && kind && kind->caps.never_batches) {
            /* Running it would only repeat the unbatched case in another order. */
            char *m = strdup("not a batched check: this backend evaluates one position at a time; its unbatched "
                             "case checks it, the analysis: backend checks a build's batches");
            if (add_result(run, c, mode_name(mode), HC_OUT_SKIPPED, m, NULL, 0, err))
                return -1;
            continue;
        }
        size_t *order = NULL;
        if (mode == HC_MODE_BATCHED) {
            order = malloc(sizeof(size_t) * (n ? n : 1));
            if (!order)
                return hc_err_set(err, HC_ENOMEM, "out of memory");
            /* deterministic (hc_repeat_shuffle), so a failing batched case can be rerun exactly */
            hc_repeat_shuffle(order, n, case_seed(run->seed, s->nets[c->net].name, s->boards[c->board].name, bc->name,
                                               mode_name(mode)));
        }
        char what[512];
        snprintf(what, sizeof what, "%s %s %s %s", s->nets[c->net].name, s->boards[c->board].name, bc->name,
                 mode_name(mode));
        if (opts->progress)
            opts->progress(opts->progress_user, what, 0, n);
        hc_nnoutput *outs = calloc(n ? n : 1, sizeof *outs);
        hc_isolate_side cs = {0};
        cs.skipped = calloc(n ? n : 1, 1);
        char *message = NULL;
        double t0 = now_s();
        char prefix[600];
        snprintf(prefix, sizeof prefix, "%s/case%u", run->scratch, run->n_children++);
        progress_ctx pc = {opts, what};
        hc_isolate_case ic = {.spec = spec, .net = net, .ps = ps, .n = n, .order = order, .batch = batch,
                              .settings = &es, .threads = opts->threads, .registry = opts->registry, .timeout_s = opts->timeout_s,
                              .scratch_prefix = prefix, .stopped = case_stopped, .progress = case_progress, .user = &pc,
                              .no_pdeathsig = opts->no_pdeathsig};
        int rc = outs && cs.skipped ? hc_isolate_run(&ic, outs, &cs, &message) : -1;
        double secs = now_s() - t0;
        if (rc == -2) {
            free(order);
            /* Stopped: the case has no result, and no further case starts. */
            run->interrupted = 1;
            free(outs);
            free(cs.skipped);
            free(cs.skip_text);
            free(cs.engine);
            return 0;
        }
        size_t before = run->n;
        /* The backend's engine, as it reported itself: the first case that ran it says. */
        hc_prov_builder_engine(run->prov, bc->name, &cs.engine);
        char *rr = with_rerun(run, c, NULL);
        hc_shown_case sc = {s, c, spec, rr ? rr + strlen("rerun: ") : ""};
        hc_verdict_case vc = {.mode = mode, .spec = spec, .ps = ps, .n = n, .ref = ref, .order = order, .batch = batch,
                              .shown = &sc};
        hc_verdict_result v;
        hc_verdict_of(&vc, rc, message, outs, &cs, &v);
        free(rr);
        free(order);
        if (add_verdict(run, c, mode, &v, secs, err))
            return -1;
        if (bc->taps_on_failure && run->n > before && hc_casetaps_wanted(&run->items[run->n - 1])) {
            hc_casetaps_opts to = {.spec = spec, .net = net, .ps = ps, .n = n, .settings = &es,
                                   .max_positions = bc->taps_positions, .timeout_s = opts->timeout_s};
            if (hc_casetaps_attach(&run->items[run->n - 1], &run->own[run->n - 1].message, &run->own[run->n - 1].taps,
                                   &to, err))
                return -1;
        }
        if (opts->case_end && run->n > before)
            opts->case_end(opts->progress_user, what, n, secs, &run->items[run->n - 1]);
    }
    case_inputs in = {ps, n};
    return run->interrupted ? 0 : repeat_case(run, opts, c, net, &in, spec, &es, err);
}

/* run --repeat / a backend's repeat: (harness/run/repeat.h): the case's positions evaluated N times in
 * other batch compositions and orders and compared bit for bit, as one more result (mode "repeat",
 * judged by its verdict, not by tiers): checked when deterministic or within the limit, an error
 * naming the positions otherwise. */
static int repeat_case(hc_run *run, const hc_run_options *opts, const hc_case *c, const hc_net *net,
                       const case_inputs *in, const char *spec, const hc_eval_settings *es, hc_err *err)
{
    const hc_suite *s = run->suite;
    const hc_backend_cfg *bc = &s->backends[c->backend];
    int reps = opts->repeat ? opts->repeat : bc->repeat;
    double limit = opts->repeat ? opts->repeat_limit : bc->repeat_limit;
    if (reps < 2)
        return 0;
    char what[512], prefix[600];
    snprintf(what, sizeof what, "%s %s %s repeat", s->nets[c->net].name, s->boards[c->board].name, bc->name);
    snprintf(prefix, sizeof prefix, "%s/case%u", run->scratch, run->n_children++);
    if (opts->progress)
        opts->progress(opts->progress_user, what, 0, (size_t)reps * in->n);
    progress_ctx pc = {opts, what};
    hc_repeat_opts ro = {.spec = spec, .net = net, .ps = in->ps, .n = in->n, .settings = es,
                         .batch = c->settings.max_batch_size, .threads = opts->threads, .evaluations = reps, .registry = opts->registry,
                         .seed = case_seed(run->seed, s->nets[c->net].name, s->boards[c->board].name, bc->name,
                                           "repeat"),
                         .timeout_s = opts->timeout_s, .scratch_prefix = prefix, .stopped = case_stopped,
                         .progress = case_progress, .user = &pc, .no_pdeathsig = opts->no_pdeathsig};
    hc_repeat r;
    hc_stats *st = NULL;
    char *message = NULL;
    double t0 = now_s();
    int rc = hc_repeat_run(&ro, &r, &st, &message, err);
    double secs = now_s() - t0;
    if (rc == -2) {
        run->interrupted = 1;
        hc_repeat_clear(&r);
        free(st);
        return 0;
    }
    hc_case rcase = *c;
    rcase.n_tiers = 0;
    int outcome = HC_OUT_ERROR;
    if (rc == 0) {
        char v[3000];
        outcome = hc_repeat_verdict(&r, limit, ro.batch, v, sizeof v) == HC_REPEAT_DIFFERS ? HC_OUT_ERROR
                                                                                          : HC_OUT_CHECKED;
        message = strdup(v);
    }
    hc_repeat_clear(&r);
    if (outcome == HC_OUT_ERROR)
        run->backend_error = 1;
    size_t before = run->n;
    if (add_result(run, &rcase, "repeat", outcome, message, st, secs, err))
        return -1;
    if (opts->case_end && run->n > before)
        opts->case_end(opts->progress_user, what, in->n, secs, &run->items[run->n - 1]);
    return 0;
}

/* Records a case's verdict as its result (adopting v's buffers). */
static int add_verdict(hc_run *run, const hc_case *c, int mode, hc_verdict_result *v, double secs, hc_err *err)
{
    if (v->backend_error)
        run->backend_error = 1;
    if (add_result(run, c, mode_name(mode), v->outcome, v->message, v->stats, secs, err)) {
        free(v->shown);
        free(v->skip_message);
        free(v->diag);
        return -1;
    }
    attach_diagnosis(run, v->diag, v->n_diag);
    hc_result *r = &run->items[run->n - 1];
    owned *o = &run->own[run->n - 1];
    r->has_engine = v->has_engine;
    r->engine = v->engine;
    r->n_shown = v->n_shown;
    r->shown = o->shown = v->shown;
    r->n_skipped = v->n_skipped;
    r->skip_message = o->skip_message = v->skip_message;
    return 0;
}

/* Gives the last result the diagnosis of its outputs when it failed a tier (not when it passed,
 * nor when it is an error): the findings, and their text ahead of the message. Adopts diag. */
static void attach_diagnosis(hc_run *run, hc_diag_finding *diag, size_t n_diag)
{
    hc_result *r = &run->items[run->n - 1];
    owned *o = &run->own[run->n - 1];
    if (n_diag == 0 || hc_result_passed(r) || hc_result_is_error(r)) {
        free(diag);
        return;
    }
    o->diag = diag;
    r->diag = diag;
    r->n_diag = n_diag;
    char *text = hc_diag_text(diag, n_diag, 3);
    size_t len = text ? strlen(text) + 3 + (o->message ? strlen(o->message) : 0) : 0;
    char *m = text ? malloc(len) : NULL;
    if (m) {
        snprintf(m, len, "%s%s%s", text, o->message ? "; " : "", o->message ? o->message : "");
        free(o->message);
        o->message = m;
        r->message = m;
    }
    free(text);
}

static int settings_equal(const hc_board_cfg *a, const hc_board_cfg *b)
{
    return a->nn_x_len == b->nn_x_len && a->nn_y_len == b->nn_y_len && a->policy_optimism == b->policy_optimism &&
           a->pda == b->pda && a->policy_temperature == b->policy_temperature;
}

/* How many of a net x board's exact headroom figures the results keep: the few closest to the
 * format's limit say where a reduced-precision kernel must take care; the whole list is
 * `halfcheck headroom`'s. */
enum { HEADROOM_ROWS = 3 };

/* The suite's headroom (headroom: fp16|bf16) of one net x board: measured on the first
 * headroom_positions positions with the board's settings (cs), and its HEADROOM_ROWS exact
 * figures of smallest margin (the first in forward order among equal margins) kept. Informational:
 * a measurement that fails is a warning, never a verdict or an exit status. Returns -1 only when
 * out of memory. */
static int measure_headroom(hc_run *run, const hc_run_options *opts, size_t ni, size_t bi, const hc_net *net,
                            const hc_board_cfg *cs, hc_err *err)
{
    const hc_suite *s = run->suite;
    const char *fmt_name = s->headroom == HC_SUITE_HEADROOM_BF16 ? "bf16" : "fp16";
    double limit = hc_headroom_limit(s->headroom == HC_SUITE_HEADROOM_BF16 ? HC_TAPFMT_BF16 : HC_TAPFMT_F16);
    size_t n;
    const hc_position *ps = hc_preflight_positions(run->pf, bi, &n);
    if (s->headroom_positions > 0 && (size_t)s->headroom_positions < n)
        n = (size_t)s->headroom_positions;
    char what[512];
    snprintf(what, sizeof what, "%s %s headroom", s->nets[ni].name, s->boards[bi].name);
    if (opts->progress)
        opts->progress(opts->progress_user, what, 0, n);
    double t0 = now_s();
    hc_eval_settings es = settings_of(cs);
    hc_headroom_opts ho = {.settings = &es, .batch = cs->max_batch_size};
    hc_err herr = {0};
    hc_headroom *h = hc_headroom_measure(net, ps, n, &ho, &herr);
    if (!h) {
        if (herr.code == HC_ENOMEM)
            return hc_err_set(err, HC_ENOMEM, "%s: out of memory", what);
        if (opts->warn) {
            char msg[1600];
            snprintf(msg, sizeof msg, "%s not measured: %s", what, herr.msg);
            opts->warn(opts->progress_user, msg);
        }
        return 0;
    }
    int pick[HEADROOM_ROWS];
    double pm[HEADROOM_ROWS];
    int np = 0;
    for (int i = 0; i < hc_headroom_count(h); i++) {
        const hc_headroom_fig *f = hc_headroom_at(h, i);
        if (f->bound || f->position < 0)
            continue;
        double m = hc_headroom_margin(f->value, limit);
        int at = np;
        while (at > 0 && m < pm[at - 1])
            at--;
        if (at >= HEADROOM_ROWS)
            continue;
        int last = np < HEADROOM_ROWS ? np : HEADROOM_ROWS - 1;
        for (int k = last; k > at; k--) {
            pick[k] = pick[k - 1];
            pm[k] = pm[k - 1];
        }
        pick[at] = i;
        pm[at] = m;
        if (np < HEADROOM_ROWS)
            np++;
    }
    hc_result_headroom *grown = realloc(run->headroom, (run->n_headroom + (size_t)np + 1) * sizeof *grown);
    if (!grown) {
        hc_headroom_free(h);
        return hc_err_set(err, HC_ENOMEM, "%s: out of memory", what);
    }
    run->headroom = grown;
    int rc = 0;
    for (int k = 0; k < np && rc == 0; k++) {
        const hc_headroom_fig *f = hc_headroom_at(h, pick[k]);
        hc_result_headroom *row = &run->headroom[run->n_headroom];
        *row = (hc_result_headroom){.net = s->nets[ni].name, .board = s->boards[bi].name, .format = fmt_name,
                                    .layer = strdup(f->layer), .what = strdup(f->what), .value = f->value,
                                    .position = f->position, .margin = pm[k]};
        run->n_headroom++;
        if (!row->layer || !row->what)
            rc = hc_err_set(err, HC_ENOMEM, "%s: out of memory", what);
    }
    hc_headroom_free(h);
    if (rc == 0 && opts->case_end)
        opts->case_end(opts->progress_user, what, n, now_s() - t0, NULL);
    return rc;
}

static int run_net_board(hc_run *run, const hc_run_options *opts, size_t ni, size_t bi, const hc_net *net,
                         const char *net_digest, hc_err *err)
{
    const hc_suite *s = run->suite;
    const hc_board_cfg *board = &s->boards[bi];
    /* Loaded and checked by preflight. */
    size_t n;
    const hc_position *ps = hc_preflight_positions(run->pf, bi, &n);
    const pos_set set = {ps, n, hc_preflight_positions_digest(run->pf, bi), board->positions};
    /* Cases of this net x board, grouped by the settings that change the reference. */
    hc_nnoutput *ref = NULL;
    const hc_board_cfg *ref_settings = NULL;
    int rc = 0, headroom_done = 0;
    for (size_t k = 0; rc == 0 && !run->interrupted && k < s->n_cases; k++) {
        const hc_case *c = &s->cases[k];
        if (c->net != ni || c->board != bi)
            continue;
        hc_err cerr = {0};
        const hc_board_cfg *cs = &c->settings;
        int bad = 0;
        if (!ref || !settings_equal(ref_settings, cs)) {
            hc_nnoutputs_free(ref, n);
            ref = calloc(n, sizeof *ref);
            hc_eval_settings es = settings_of(cs);
            char what[512];
            snprintf(what, sizeof what, "%s %s reference", s->nets[ni].name, board->name);
            if (opts->progress)
                opts->progress(opts->progress_user, what, 0, n);
            double t0 = now_s();
            int hits = run->cache_hits;
            if (!ref || reference(run, opts, net, net_digest, &set, &es, what, ref, &cerr)) {
                free(ref);
                ref = NULL;
                if (stopped(opts)) {
                    run->interrupted = 1;
                    break;
                }
                hc_err_prefix(&cerr, "fp32 reference: ");
                bad = 1;
            } else {
                ref_settings = cs;
                if (opts->case_end)
                    opts->case_end(opts->progress_user, what, n,
                                   run->cache_hits > hits ? HC_RUN_FROM_CACHE : now_s() - t0, NULL);
                /* Once per net x board, with the settings of its first reference. */
                if (s->headroom && !headroom_done && !stopped(opts)) {
                    headroom_done = 1;
                    rc = measure_headroom(run, opts, ni, bi, net, cs, err);
                    if (rc)
                        break;
                }
            }
        }
        if (bad) {
            run->input_error = 1;
            rc = add_case_errors(run, c, cerr.msg, err);
            continue;
        }
        rc = run_case(run, opts, c, net, ps, n, ref, err);
        if (run->interrupted || stopped(opts)) {
            run->interrupted = 1;
            break;
        }
    }
    hc_nnoutputs_free(ref, n);
    return rc;
}

/* opts->only: a shallow copy of the suite whose cases array holds the selected cases. */
static int filter_cases(hc_run *run, const hc_suite *suite, const char *const *only, size_t n_only, hc_err *err)
{
    unsigned char *sel = hc_calloc(suite->n_cases ? suite->n_cases : 1, 1, err, "cases");
    run->filtered = *suite;
    run->filtered.cases = sel ? hc_calloc(suite->n_cases ? suite->n_cases : 1, sizeof(hc_case), err, "cases") : NULL;
    if (!run->filtered.cases || hc_suite_select(suite, only, n_only, sel, err)) {
        free(sel);
        return -1;
    }
    run->filtered.n_cases = 0;
    for (size_t i = 0; i < suite->n_cases; i++)
        if (sel[i])
            run->filtered.cases[run->filtered.n_cases++] = suite->cases[i];
    free(sel);
    return 0;
}

hc_run *hc_run_suite(const hc_suite *suite, const hc_run_options *opts, hc_err *err)
{
    hc_run *run = hc_calloc(1, sizeof *run, err, "run");
    if (!run)
        return NULL;
    if (opts->n_only) {
        if (filter_cases(run, suite, opts->only, opts->n_only, err)) {
            free(run->filtered.cases);
            free(run);
            return NULL;
        }
        suite = &run->filtered;
    }
    run->suite = suite;
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(run->timestamp, sizeof run->timestamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (hc_scratch_dir(run->scratch, sizeof run->scratch, "run", opts->tmp_dir, err)) {
        free(run->filtered.cases);
        free(run);
        return NULL;
    }
    run->seed = opts->seed_given ? opts->seed : suite->has_seed ? (unsigned)suite->seed : 1u;
    run->ref_spec = opts->ref_spec ? opts->ref_spec : suite->reference ? suite->reference : "ref32";
    unsigned suite_seed = suite->has_seed ? (unsigned)suite->seed : 1u;
    const char *ra = opts->rerun_args ? opts->rerun_args : "";
    run->rerun_tail = malloc(strlen(ra) + 32);
    if (!run->rerun_tail) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        rmdir(run->scratch);
        free(run->filtered.cases);
        free(run);
        return NULL;
    }
    snprintf(run->rerun_tail, strlen(ra) + 32, "%s", ra);
    if (run->seed != suite_seed)
        snprintf(run->rerun_tail + strlen(ra), 32, " --seed %u", run->seed);
    if (!(run->prov = hc_prov_builder_new(suite, opts->command, err)) ||
        !(run->pf = hc_preflight_run(suite, opts->registry, expand_spec, err))) {
        rmdir(run->scratch);
        hc_run_free(run);
        return NULL;
    }
    for (size_t ni = 0; ni < suite->n_nets; ni++) {
        const hc_net *net = hc_preflight_net(run->pf, ni);
        if (net)
            hc_prov_builder_add_net(run->prov, &suite->nets[ni], hc_preflight_net_digest(run->pf, ni),
                                    net->model_version);
    }
    hc_err cerr = {0};
    if (opts->cache_dir && hc_refcache_usable(opts->cache_dir, &cerr))
        cache_unusable(run, opts, cerr.msg);
    int rc = 0;
    for (size_t ni = 0; rc == 0 && ni < suite->n_nets; ni++) {
        if (stopped(opts))
            run->interrupted = 1;
        if (run->interrupted)
            break;
        int used = 0;
        for (size_t k = 0; k < suite->n_cases; k++)
            used |= suite->cases[k].net == ni;
        if (!used)
            continue;
        hc_net *net = hc_preflight_net(run->pf, ni); /* loaded and checked by preflight */
        run->model_version = net->model_version;
        for (size_t bi = 0; rc == 0 && !run->interrupted && bi < suite->n_boards; bi++) {
            int pair = 0;
            for (size_t k = 0; k < suite->n_cases; k++)
                pair |= suite->cases[k].net == ni && suite->cases[k].board == bi;
            if (pair)
                rc = run_net_board(run, opts, ni, bi, net, hc_preflight_net_digest(run->pf, ni), err);
        }
        /* Its cases are done: the memory goes back before the next net's. */
        hc_preflight_release_net(run->pf, ni);
        run->model_version = 0;
    }
    rmdir(run->scratch);
    run->results.suite = suite->name;
    run->results.timestamp = run->timestamp;
    run->results.version = HC_VERSION;
    run->results.items = run->items;
    run->results.n = run->n;
    run->results.interrupted = run->interrupted;
    run->results.allow_skips = opts->allow_skips || suite->allow_skips;
    run->results.prov = hc_prov_builder_get(run->prov);
    run->results.n_prov = 1;
    run->results.headroom = run->headroom;
    run->results.n_headroom = run->n_headroom;
    if (rc) {
        hc_run_free(run);
        return NULL;
    }
    return run;
}

const hc_results *hc_run_results(const hc_run *run)
{
    return &run->results;
}

int hc_run_status(const hc_run *run)
{
    if (run->input_error)
        return 2;
    if (run->backend_error)
        return 3;
    return hc_results_status(&run->results);
}

int hc_run_interrupted(const hc_run *run)
{
    return run->interrupted;
}

int hc_run_write_reports(const hc_run *run, const char *dir, hc_err *err)
{
    return hc_reports_write_dir(&run->results, dir, err);
}

int hc_run_cache_hits(const hc_run *run)
{
    return run->cache_hits;
}

int hc_run_cache_misses(const hc_run *run)
{
    return run->cache_misses;
}

void hc_run_free(hc_run *run)
{
    if (!run)
        return;
    for (size_t i = 0; i < run->n; i++) {
        free(run->own[i].stats);
        free(run->own[i].tiers);
        free(run->own[i].checks);
        free(run->own[i].message);
        free(run->own[i].skip_message);
        free(run->own[i].diag);
        free(run->own[i].shown);
        hc_result_taps_free(run->own[i].taps);
    }
    free(run->items);
    free(run->own);
    free(run->filtered.cases);
    free(run->rerun_tail);
    hc_preflight_free(run->pf);
    hc_prov_builder_free(run->prov);
    for (size_t i = 0; i < run->n_headroom; i++) {
        free((char *)run->headroom[i].layer);
        free((char *)run->headroom[i].what);
    }
    free(run->headroom);
    free(run);
}
