/* halfcheck eval: positions (or feature rows) through one backend into an outputs file. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/cli/cli.h"
#include "harness/eval/evaluate.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "harness/base/thread.h"

typedef struct pos_job {
    const char *path;
    hc_position *ps;
    size_t n;
    int failed;
    hc_err err;
    struct timespec done; /* when it ended (--profile) */
} pos_job;

static void *load_positions(void *arg)
{
    pos_job *j = arg;
    j->failed = hc_positions_load(j->path, &j->ps, &j->n, &j->err) != 0;
    clock_gettime(CLOCK_MONOTONIC, &j->done);
    return NULL;
}

/* The backend's warm (a GPU's context), on a thread of its own while the net loads. */
typedef struct warm_job {
    const hc_backend_registry *reg;
    const char *spec;
    struct timespec done;
} warm_job;

static void *warm_backend(void *arg)
{
    warm_job *w = arg;
    hc_backend_warm(w->reg, w->spec);
    clock_gettime(CLOCK_MONOTONIC, &w->done);
    return NULL;
}

static const cli_opt opts[] = {
    {"net", 1, 0, "KataGo model file (.bin.gz or .txt.gz)", "PATH"},
    {"positions", 1, 0, "positions file (.jsonl[.gz]) as written by halfcheck record", "PATH"},
    {"features", 1, 0, "feature rows as written by halfcheck features, instead of featurizing positions", "PATH"},
    {"nn", 1, 0, "NN buffer WxH (boards smaller than it sit in its top-left corner)", "WxH"},
    {"backend", 1, 0, "backend spec (default ref32; see halfcheck backends)", "SPEC"},
    {"batch", 1, 0, "positions per batch (default 16)", "N"},
    {"threads", 1, 0, "threads (default 1)", "N"},
    {"policy-optimism", 1, 0, "KataGo's policyOptimism (default 0)", "X"},
    {"pda", 1, 0, "playout doubling advantage (default 0)", "X"},
    {"temperature", 1, 0, "policy temperature (default 1)", "T"},
    {"human-profile", 1, 0, "SGF-metadata profile for human-SL nets (default preaz_5k, as testgpuerror)", "NAME"},
    {"format", 1, 0, "golden (default) or katago (katago testgpuerror -reference-file)", "golden|katago"},
    {"out", 1, 0, "outputs file (.jsonl or .jsonl.gz), written atomically", "PATH"},
    {"profile", 0, 0, "print where the time went: loading, opening the backend, featurizing, the backend's calls, "
                      "post-processing, writing", NULL},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

typedef struct progress_state {
    struct timespec start;
    int tty;
    /* outputs are written (and freed) as the finished prefix grows, so that writing overlaps
     * the evaluation and the outputs of a long run are not all held at once */
    hc_nnoutwriter *w;
    hc_nnoutput *outs;
    size_t written;
    int write_failed;
    hc_err write_err;
} progress_state;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* Writes (and frees) the outputs of positions [written, done); -1 once a write failed. */
/* The steps of an eval, in seconds from its start (--profile). */
typedef struct eval_clock {
    double net, open, positions, warm, joined, eval, commit, close;
    int lanes;
    hc_eval_timing t;
} eval_clock;

static double seconds_between(const struct timespec *t0, const struct timespec *t1)
{
    return (double)(t1->tv_sec - t0->tv_sec) + 1e-9 * (double)(t1->tv_nsec - t0->tv_nsec);
}

static void print_profile(const eval_clock *c, size_t n, const char *spec)
{
    fprintf(stderr,
            "halfcheck eval --profile: %zu positions on %s (wall seconds; the work inside the evaluation is summed "
            "over its %d thread%s)\n",
            n, spec, c->lanes > 0 ? c->lanes : 1, c->lanes > 1 ? "s" : "");
    fprintf(stderr, "  %-36s %8.3f  (alongside the net, ended at %.3f)\n", "reading the positions", c->positions,
            c->positions);
    fprintf(stderr, "  %-36s %8.3f  ended at %.3f\n", "loading the net", c->net, c->net);
    if (c->warm > 0)
        fprintf(stderr, "  %-36s %8.3f  (alongside the net, ended at %.3f)\n", "starting the device", c->warm, c->warm);
    fprintf(stderr, "  %-36s %8.3f  ended at %.3f\n", "opening the backend", c->open - c->net, c->open);
    fprintf(stderr, "  %-36s %8.3f  ended at %.3f\n", "waiting for the positions", c->joined - c->open, c->joined);
    fprintf(stderr, "  %-36s %8.3f  ended at %.3f\n", "evaluating (and writing as it goes)", c->eval - c->joined,
            c->eval);
    fprintf(stderr, "    %-34s %8.3f  thread-s\n", "featurizing", c->t.featurize);
    char calls[64];
    snprintf(calls, sizeof calls, "the backend's calls (%ld)", c->t.calls);
    fprintf(stderr, "    %-34s %8.3f  thread-s\n", calls, c->t.backend);
    fprintf(stderr, "    %-34s %8.3f  thread-s\n", "post-processing", c->t.postprocess);
    fprintf(stderr, "    %-34s %8.3f  (this thread, while the others evaluate)\n", "writing the outputs",
            c->t.progress);
    fprintf(stderr, "  %-36s %8.3f  ended at %.3f\n", "finishing the outputs file", c->commit - c->eval, c->commit);
    fprintf(stderr, "  %-36s %8.3f  ended at %.3f\n", "closing the backend, freeing", c->close - c->commit, c->close);
    fprintf(stderr, "  %-36s %8.3f\n", "end to end (from main)", c->close);
}

static int write_prefix(progress_state *ps, size_t done)
{
    for (; !ps->write_failed && ps->written < done; ps->written++) {
        if (hc_nnoutwriter_write(ps->w, &ps->outs[ps->written], NULL, &ps->write_err))
            ps->write_failed = 1;
        hc_nnoutput_free(&ps->outs[ps->written]);
    }
    return ps->write_failed ? -1 : 0;
}

static int show_progress(void *user, size_t done, size_t total)
{
    progress_state *ps = user;
    if (write_prefix(ps, done))
        return 1; /* stop evaluating: the outputs cannot be kept */
    if (!ps->tty)
        return 0;
    double el = seconds_since(&ps->start);
    double rate = el > 0 ? (double)done / el : 0;
    fprintf(stderr, "\r%zu/%zu positions, %.0f/s, ETA %.0fs   ", done, total, rate,
            rate > 0 ? (double)(total - done) / rate : 0.0);
    if (done == total)
        fprintf(stderr, "\n");
    return 0;
}

int cmd_eval(int argc, char **argv, const hc_backend_registry *reg)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"eval", opts,
        "usage: halfcheck eval --net NET (--positions POS | --features F.f32 [--positions POS]) --nn WxH "
        "--out OUT.jsonl[.gz] [options]\n",
        0, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *net_path = cli_require(&a, "net", &err);
    const char *nn = net_path ? cli_require(&a, "nn", &err) : NULL;
    const char *out_path = nn ? cli_require(&a, "out", &err) : NULL;
    const char *pos_path = cli_get(&a, "positions", NULL);
    const char *feat_path = cli_get(&a, "features", NULL);
    if (!out_path)
        return cli_fail("eval", &err);
    if (!pos_path && !feat_path) {
        hc_err_set(&err, HC_EUSAGE, "give --positions or --features");
        return cli_fail("eval", &err);
    }
    int nx, ny, batch, threads;
    double optimism, pda, temperature;
    if (cli_parse_size(nn, &nx, &ny, &err) || cli_get_int(&a, "batch", 16, &batch, &err) ||
        cli_get_int(&a, "threads", 1, &threads, &err) || cli_get_double(&a, "policy-optimism", 0, &optimism, &err) ||
        cli_get_double(&a, "pda", 0, &pda, &err) || cli_get_double(&a, "temperature", 1, &temperature, &err))
        return cli_fail("eval", &err);
    if (batch < 1 || batch > 4096 || threads < 1 || threads > 256) {
        hc_err_set(&err, HC_EUSAGE, "--batch must be 1..4096 and --threads 1..256");
        return cli_fail("eval", &err);
    }
    const char *format_s = cli_get(&a, "format", "golden");
    int format;
    if (strcmp(format_s, "golden") == 0)
        format = HC_NNOUT_GOLDEN;
    else if (strcmp(format_s, "katago") == 0)
        format = HC_NNOUT_KATAGO;
    else {
        hc_err_set(&err, HC_EUSAGE, "--format must be golden or katago, not \"%s\"", format_s);
        return cli_fail("eval", &err);
    }
    hc_eval_settings s = hc_eval_settings_default(nx, ny);
    s.policy_optimism = optimism;
    s.playout_doubling_advantage = pda;
    s.policy_temperature = (float)temperature;
    snprintf(s.meta_profile, sizeof s.meta_profile, "%s", cli_get(&a, "human-profile", "preaz_5k"));

    int rc = HC_EXIT_OK;
    int profile = cli_has(&a, "profile");
    eval_clock ck = {0};
    hc_position *ps = NULL;
    size_t n = 0, n_out = 0;
    hc_nnoutput *outs = NULL;
    hc_evaluator *ev = NULL;
    /* The rate printed is end to end: loading, featurizing, evaluating, post-processing and
     * writing, as the issue of speed measures it. */
    progress_state prog = {.tty = isatty(2)};
    clock_gettime(CLOCK_MONOTONIC, &prog.start);
    /* The positions are parsed on a thread of their own while the model loads and the backend
     * opens (a tenth of a second each for testgpuerror's 19x19 set and g170 on one core);
     * the errors are reported in the order of the steps all the same. */
    pos_job pj = {.path = pos_path};
    pthread_t pos_thread;
    int pos_threaded = pos_path && hc_thread_start(&pos_thread, load_positions, &pj) == 0;
    if (pos_path && !pos_threaded)
        load_positions(&pj);
    /* A GPU's context is started meanwhile too (hc_backend_kind.warm). */
    warm_job wj = {.reg = reg, .spec = cli_get(&a, "backend", "ref32")};
    pthread_t warm_thread;
    int warm_threaded = hc_thread_start(&warm_thread, warm_backend, &wj) == 0;
    hc_net *net = hc_net_load(net_path, &err);
    ck.net = seconds_since(&prog.start);
    if (warm_threaded) {
        pthread_join(warm_thread, NULL);
        ck.warm = seconds_between(&prog.start, &wj.done);
    }
    hc_err open_err = {0};
    int open_failed = 0;
    if (net) {
        /* KataGo folds small batch-norm scales into the weights at load; evaluate what it evaluates. */
        hc_net_reduce_activations(net);
        /* feature rows are read as one stream, on one instance */
        hc_evaluator_opts eo = {.spec = cli_get(&a, "backend", "ref32"), .net = net, .settings = s, .batch = batch,
                                .threads = threads, .one_instance = feat_path != NULL, .registry = reg};
        open_failed = !(ev = hc_evaluator_open(&eo, &open_err));
        ck.lanes = ev ? hc_evaluator_lanes(ev) : 0;
    }
    ck.open = seconds_since(&prog.start);
    if (pos_threaded)
        pthread_join(pos_thread, NULL);
    ck.joined = seconds_since(&prog.start);
    ck.positions = pos_path ? seconds_between(&prog.start, &pj.done) : 0;
    ps = pj.ps, n = pj.n;
    if (!net) {
        hc_positions_free(ps, n);
        return cli_fail("eval", &err);
    }
    if (pj.failed || open_failed) {
        err = pj.failed ? pj.err : open_err;
        rc = cli_fail("eval", &err);
        goto done;
    }
    /* Every record must fit the buffer: said with the file and line, before anything is written. */
    for (size_t i = 0; pos_path && i < n; i++)
        if (ps[i].x_size > nx || ps[i].y_size > ny) {
            char line[32] = "";
            if (ps[i].file_line > 0)
                snprintf(line, sizeof line, ":%ld", ps[i].file_line);
            hc_err_set(&err, HC_EUSAGE, "%s%s: position %zu is %dx%d, which does not fit the %dx%d NN buffer (--nn)",
                       pos_path, line, i, ps[i].x_size, ps[i].y_size, nx, ny);
            rc = cli_fail("eval", &err);
            goto done;
        }
    /* opened first: an output path that cannot be written fails before the evaluation */
    prog.w = hc_nnoutwriter_open(out_path, format, &err);
    if (!prog.w) {
        rc = cli_fail("eval", &err);
        goto done;
    }
    struct timespec eval_start;
    clock_gettime(CLOCK_MONOTONIC, &eval_start);
    int failed;
    if (feat_path) {
        failed = hc_evaluator_run_features(ev, feat_path, ps, n, &outs, &n_out, &err);
    } else {
        outs = hc_calloc(n ? n : 1, sizeof *outs, &err, "outputs");
        n_out = n; /* every entry is initialised or zeroed */
        prog.outs = outs;
        hc_eval_failure fail = {.position = -1};
        hc_eval_request req = {.ps = ps, .n = n, .outs = outs, .fail = &fail, .progress = show_progress, .user = &prog,
                               .timing = &ck.t};
        failed = !outs || hc_evaluator_run(ev, &req, &err);
        /* A record the game replay refused (an illegal move, a wrong nextPla): name its file and line. */
        if (failed && outs && err.code == HC_EFORMAT && fail.position >= 0 && (size_t)fail.position < n &&
            ps[fail.position].file_line > 0)
            hc_err_prefix(&err, "%s:%ld: ", pos_path, ps[fail.position].file_line);
    }
    prog.outs = outs;
    ck.eval = seconds_since(&prog.start);
    /* what the progress calls have not written yet: all of the feature rows' outputs, or
     * the last of a position backend's */
    if (!failed && write_prefix(&prog, n_out))
        failed = 1;
    if (prog.write_failed)
        err = prog.write_err;
    if (failed)
        hc_nnoutwriter_abort(prog.w); /* no half-written outputs file */
    if (failed || hc_nnoutwriter_commit(prog.w, &err)) {
        rc = cli_fail("eval", &err);
        goto done;
    }
    double eval_s = seconds_since(&eval_start);
    double el = seconds_since(&prog.start);
    ck.commit = el;
    fprintf(stderr, "halfcheck eval: %zu positions in %.2fs end to end (%.1f/s; evaluating and writing %.2fs), wrote %s\n",
            n_out, el, el > 0 ? (double)n_out / el : 0.0, eval_s, out_path);
done:
    hc_nnoutputs_free(outs, n_out);
    hc_evaluator_close(ev);
    hc_positions_free(ps, n);
    hc_net_free(net);
    ck.close = seconds_since(&prog.start);
    if (profile && rc == HC_EXIT_OK)
        print_profile(&ck, n_out, cli_get(&a, "backend", "ref32"));
    return rc;
}
