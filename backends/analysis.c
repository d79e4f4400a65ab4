/* analysis:[@OPTION=VALUE ...] COMMAND — KataGo's JSON analysis engine (`katago analysis`) as a
 * position backend that batches. docs/ANALYSIS.md describes the syntax and what is checked.
 *
 * Why this engine: it evaluates concurrent queries in batches (its NN server thread takes what
 * the analysis threads have queued, up to nnMaxBatchSize), so a case's positions sent together
 * go through the build's batched path, which GTP's kata-raw-nn never does. With maxVisits 1 a
 * query's answer carries the root's raw network outputs (rootInfo.raw*, policy, ownership) to 8
 * significant digits.
 *
 * The analysis engine has no per-query symmetry: its evaluator uses the config's
 * nnForcedSymmetry for every row. So the backend runs one engine per symmetry, lazily, with
 * COMMAND's {symmetry} replaced by 0..7 (the template passes nnForcedSymmetry={symmetry}), and
 * {batch} by the mode's batch (1 unbatched, the board config's maxBatchSize batched: the
 * template passes it as nnMaxBatchSize) and {threads} by the analysis threads each engine needs
 * (the template's numAnalysisThreads): 1 unbatched, THREADS_PER_ROW times the batch batched.
 * Why that many: KataGo's NN server thread does not wait for a batch to fill, it takes what the
 * analysis threads have queued when it comes back (up to nnMaxBatchSize), and each analysis
 * thread has one evaluation at a time, with its own CPU work (setting up the search, writing the
 * answer) between two; with only as many threads as rows, batches split into fragments (a GPU
 * build averaged 2.2-2.6 rows of 6). With several threads per row and more queries queued than
 * threads, a batch's worth is waiting whenever the server comes back. So a call's positions are
 * grouped by symmetry and every group's queries are written at once, and the evaluator hands
 * this backend QUERIES_PER_THREAD queries per analysis thread of each engine per call
 * (positions_per_call: 768 for a batch of 6, so the 2,000 positions of a board are three calls),
 * and only the last queries of a call are evaluated with fewer in flight. Unbatched, each engine gets a couple of queries
 * that it evaluates one at a time, so that the engines still work side by side.
 *
 * Before sending, each position is replayed the way the analysis engine builds it
 * (analysis.cpp: setup stones, initialPlayer, moves played tolerantly, a move by the player not
 * to move restarts the history, preventCleanupPhase) and its NN inputs and legal moves are
 * compared with the record's; a position that would differ is skipped with the reason.
 *
 * At finish every engine's stdin is closed; it logs "NN rows", "NN batches" on stderr as it
 * exits, which finish sums, and the operating system's peak RSS of the engines is read with
 * getrusage(RUSAGE_CHILDREN) once they are reaped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "backends/backend.h"
#include "backends/engine_replay.h"
#include "backends/extproc.h"
#include "harness/go/history.h"
#include "harness/features/nnfeatures.h"
#include "harness/go/rules.h"
#include "harness/base/template.h"
#include "backends/settings.h"
#include "backends/specopts.h"

/* THREADS_PER_ROW: analysis threads per row of a batch (batched); QUERIES_PER_THREAD: queries
 * per analysis thread of each engine in one call (docs/ANALYSIS.md, "Batches"). */
enum { N_SYM = 8, LINE_CAP = 65536, THREADS_PER_ROW = 4, QUERIES_PER_THREAD = 4 };

typedef struct engine {
    hc_extproc proc;
    int ran;          /* started at least once */
    int lost;         /* killed at least once: its log's counts are gone */
} engine;

typedef struct pending {
    long seq;
    int i;            /* index in the call */
    int done;
    char warning[300];
} pending;

typedef struct analysis_backend {
    char *cmd;        /* the command template, {symmetry} and {batch} still in it */
    double timeout_s, startup_timeout_s;
    int engine_handicap;
    const hc_net *net;
    int nx, ny, max_batch;
    hc_eval_settings settings;
    hc_resolution res;
    engine eng[N_SYM];
    long next_seq;
    char version[64];
    char identity[600]; /* what the engine says it is (query_version, query_models), "" unknown */
    long positions;
    double eval_s;
    long rows, batches;
    long engine_max;  /* the smallest maxBatchSize the engines reported (query_models), -1 unknown */
    int nn_missing;   /* an engine exited without its counts in the log */
    hc_replay_cmp *cmp;  /* the record's and the replay's NN inputs, with a net */
    char *line;
    pending *pend;
    int pend_cap;
} analysis_backend;

static double now_s(void)
{
    return hc_extproc_now();
}

/* --- the engines ------------------------------------------------------------------------------ */

/* "NN rows: 40" in an exiting engine's stderr tail: the last such line's number, or -1. */
static long log_count(const char *tail, const char *key)
{
    const char *hit = NULL, *p = tail;
    while ((p = strstr(p, key)) != NULL) {
        hit = p;
        p += strlen(key);
    }
    if (!hit)
        return -1;
    char *end;
    long v = strtol(hit + strlen(key), &end, 10);
    return end == hit + strlen(key) ? -1 : v;
}

/* Closes the engine's stdin, waits for it to exit and adds its log's counts. */
static void finish_engine(analysis_backend *a, engine *e)
{
    if (!hc_extproc_running(&e->proc))
        return;
    e->proc.tail_len = 0;
    e->proc.tail[0] = '\0';
    hc_extproc_finish(&e->proc, a->timeout_s > 60 ? a->timeout_s : 60);
    long rows = log_count(e->proc.tail, "NN rows: ");
    long batches = log_count(e->proc.tail, "NN batches: ");
    if (rows < 0 || batches < 0) {
        a->nn_missing = 1;
        return;
    }
    a->rows += rows;
    a->batches += batches;
}

static void kill_engine(engine *e)
{
    if (hc_extproc_running(&e->proc)) {
        hc_extproc_stop(&e->proc);
        e->lost = 1;
    }
}

static void kill_all(analysis_backend *a)
{
    for (int s = 0; s < N_SYM; s++)
        kill_engine(&a->eng[s]);
}

static void analysis_close(void *inst)
{
    analysis_backend *a = inst;
    if (!a)
        return;
    for (int s = 0; s < N_SYM; s++)
        if (hc_extproc_running(&a->eng[s].proc))
            hc_extproc_finish(&a->eng[s].proc, 2.0);
    free(a->cmd);
    hc_replay_cmp_free(a->cmp);
    free(a->line);
    free(a->pend);
    free(a);
}

/* The analysis threads an engine gets ({threads}): one unbatched (an Eigen build batches two
 * rows whatever nnMaxBatchSize says, so only one query at a time keeps its batches at one row),
 * THREADS_PER_ROW per row batched. */
static int engine_threads(const analysis_backend *a)
{
    return a->max_batch > 1 ? THREADS_PER_ROW * a->max_batch : 1;
}

/* The command for symmetry s: {symmetry}, {batch} and {threads} replaced. */
static char *engine_command(const analysis_backend *a, int s, hc_err *err)
{
    char sym[16], batch[16], threads[16];
    snprintf(sym, sizeof sym, "%d", s);
    snprintf(batch, sizeof batch, "%d", a->max_batch);
    snprintf(threads, sizeof threads, "%d", engine_threads(a));
    const hc_template_var vars[] = {{"symmetry", sym}, {"batch", batch}, {"threads", threads}};
    return hc_template_expand(a->cmd, vars, sizeof vars / sizeof vars[0], err);
}

/* Starts the engine of symmetry s and asks its version (query_version), which it answers once
 * its net is loaded. */
static int start_engine(analysis_backend *a, int s, hc_err *err)
{
    engine *e = &a->eng[s];
    char *cmd = engine_command(a, s, err);
    if (!cmd)
        return -1;
    char **argv = hc_extproc_split(cmd, err);
    free(cmd);
    if (!argv)
        return -1;
    int rc = hc_extproc_start(&e->proc, argv, err);
    hc_extproc_free_argv(argv);
    if (rc)
        return -1;
    e->ran = 1;
    static const char q[] = "{\"id\":\"hc-version\",\"action\":\"query_version\"}\n";
    if (hc_extproc_write(&e->proc, q, sizeof q - 1, now_s() + a->startup_timeout_s, err))
        return hc_err_prefix(err, "starting the symmetry %d engine: ", s);
    long n;
    do {
        n = hc_extproc_read_line(&e->proc, a->line, LINE_CAP, now_s() + a->startup_timeout_s, err);
    } while (n == 0);
    if (n < 0)
        return hc_err_prefix(err, "starting the symmetry %d engine (query_version): ", s);
    json_error_t je;
    json_t *j = json_loads(a->line, 0, &je);
    const char *id = j ? json_string_value(json_object_get(j, "id")) : NULL;
    const char *v = j ? json_string_value(json_object_get(j, "version")) : NULL;
    if (!id || strcmp(id, "hc-version") != 0 || !v) {
        json_decref(j);
        kill_engine(e);
        return hc_err_set(err, HC_EBACKEND,
                          "starting the symmetry %d engine: expected the answer to query_version "
                          "({\"id\":\"hc-version\",\"version\":...}), got \"%.120s\"", s, a->line);
    }
    snprintf(a->version, sizeof a->version, "%s", v);
    const char *git = json_string_value(json_object_get(j, "git_hash"));
    int o = snprintf(a->identity, sizeof a->identity, "KataGo %s%s%s (analysis engine)", v, git && *git ? " git " : "",
                     git ? git : "");
    json_decref(j);
    /* The model it loaded and its precision, where it says (query_models, KataGo 1.12 on). */
    static const char qm[] = "{\"id\":\"hc-models\",\"action\":\"query_models\"}\n";
    if (hc_extproc_write(&e->proc, qm, sizeof qm - 1, now_s() + a->timeout_s, err))
        return hc_err_prefix(err, "starting the symmetry %d engine: ", s);
    do {
        n = hc_extproc_read_line(&e->proc, a->line, LINE_CAP, now_s() + a->timeout_s, err);
    } while (n == 0);
    if (n < 0)
        return hc_err_prefix(err, "starting the symmetry %d engine (query_models): ", s);
    j = json_loads(a->line, 0, &je);
    id = j ? json_string_value(json_object_get(j, "id")) : NULL;
    if (!id || strcmp(id, "hc-models") != 0) {
        json_decref(j);
        kill_engine(e);
        return hc_err_set(err, HC_EBACKEND, "starting the symmetry %d engine: expected the answer to query_models "
                          "({\"id\":\"hc-models\",...}), got \"%.120s\"", s, a->line);
    }
    json_t *m0 = json_array_get(json_object_get(j, "models"), 0);
    const char *internal = json_string_value(json_object_get(m0, "internalName"));
    json_t *fp16 = json_object_get(m0, "usingFP16");
    /* The largest batch it will form: an Eigen build's is 2 whatever nnMaxBatchSize says
     * (setup.cpp fixes it), a GPU build's is nnMaxBatchSize. */
    json_t *mb = json_object_get(m0, "maxBatchSize");
    if (json_is_integer(mb) && json_integer_value(mb) > 0 &&
        (a->engine_max < 0 || json_integer_value(mb) < a->engine_max))
        a->engine_max = (long)json_integer_value(mb);
    if (internal && o < (int)sizeof a->identity)
        o += snprintf(a->identity + o, sizeof a->identity - (size_t)o, ", model %s", internal);
    if (json_is_string(fp16) && o < (int)sizeof a->identity)
        snprintf(a->identity + o, sizeof a->identity - (size_t)o, ", usingFP16 %s", json_string_value(fp16));
    else if (json_is_boolean(fp16) && o < (int)sizeof a->identity)
        snprintf(a->identity + o, sizeof a->identity - (size_t)o, ", usingFP16 %s", json_is_true(fp16) ? "true" : "false");
    json_decref(j);
    return 0;
}

/* --- open, settings --------------------------------------------------------------------------- */

/* What an analysis: spec says: its @options (with their defaults) and the command template. */
typedef struct analysis_opts {
    double timeout_s, startup_timeout_s;
    int handicap;
    char *cmd;
} analysis_opts;

static void analysis_free_opts(void *opts)
{
    analysis_opts *ao = opts;
    if (ao)
        free(ao->cmd);
    free(ao);
}

/* The spec without opening anything (preflight): its options, a command, and {symmetry}. */
static void *analysis_parse(const char *params, hc_err *err)
{
    analysis_opts *ao = hc_calloc(1, sizeof *ao, err, "analysis options");
    if (!ao)
        return NULL;
    ao->timeout_s = 120;
    ao->startup_timeout_s = 600;
    ao->handicap = 1;
    const hc_specopt opts[] = {
        {.name = "timeout", .hint = "S", .kind = HC_SPECOPT_POSITIVE, .num = &ao->timeout_s},
        {.name = "startup-timeout", .hint = "S", .kind = HC_SPECOPT_POSITIVE, .num = &ao->startup_timeout_s},
        {.name = "handicap", .hint = "0|1", .kind = HC_SPECOPT_01, .flag = &ao->handicap},
    };
    ao->cmd = hc_specopts_command("analysis", params, opts, sizeof opts / sizeof opts[0], err);
    if (ao->cmd && !strstr(ao->cmd, "{symmetry}"))
        hc_err_set(err, HC_ECONFIG,
                   "analysis: the command must contain {symmetry} (e.g. -override-config "
                   "nnForcedSymmetry={symmetry}): the analysis engine takes no symmetry per query, so "
                   "halfcheck runs one engine per symmetry");
    if (!ao->cmd || !strstr(ao->cmd, "{symmetry}")) {
        analysis_free_opts(ao);
        return NULL;
    }
    return ao;
}

static void *analysis_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    const analysis_opts *ao = opts;
    const hc_net *net = o->net;
    int nx = o->nx, ny = o->ny, max_batch = o->max_batch;
    analysis_backend *a = hc_calloc(1, sizeof *a, err, "analysis backend");
    if (!a)
        return NULL;
    for (int s = 0; s < N_SYM; s++) {
        a->eng[s].proc.pid = -1;
        a->eng[s].proc.to_fd = a->eng[s].proc.from_fd = a->eng[s].proc.err_fd = -1;
    }
    a->timeout_s = ao->timeout_s;
    a->startup_timeout_s = ao->startup_timeout_s;
    a->engine_handicap = ao->handicap;
    a->engine_max = -1;
    a->net = net;
    a->nx = nx;
    a->ny = ny;
    a->max_batch = max_batch < 1 ? 1 : max_batch;
    a->settings = hc_eval_settings_default(nx, ny);
    /* roundDynamic(x, 8) (searchresults.cpp): x to 10^(floor(log10|x|) - 8), so at most
     * 5e-9 |x|: 5e-9 for probabilities and ownership; whiteWin = rawWinrate - noResult/2 and
     * whiteLoss from both, 1e-8; scores 5e-7 (|score| < 1000). */
    a->res = (hc_resolution){.winrate = 1e-8, .score = 5e-7, .policy = 5e-9, .ownership = 5e-9};
    a->cmd = strdup(ao->cmd);
    a->line = hc_malloc(LINE_CAP, err, "analysis reply");
    if (!a->cmd || !a->line)
        goto fail;
    /* Check the command's words ($VAR unset: skipped) before any engine starts. */
    char *c0 = engine_command(a, 0, err);
    char **argv = c0 ? hc_extproc_split(c0, err) : NULL;
    free(c0);
    if (!argv)
        goto fail;
    hc_extproc_free_argv(argv);
    if (net && !(a->cmp = hc_replay_cmp_new(net, nx, ny, err)))
        goto fail;
    return a;
fail:
    analysis_close(a);
    return NULL;
}

/* What the engine says it is (provenance): KataGo's version and git hash, the model it loaded
 * and its fp16 mode, from the first engine started. */
static const char *analysis_identity(void *inst)
{
    return ((analysis_backend *)inst)->identity;
}

static int analysis_configure(void *inst, const hc_eval_settings *s, hc_err *err)
{
    (void)err;
    ((analysis_backend *)inst)->settings = *s;
    return 0;
}

static const hc_resolution *analysis_resolution(void *inst)
{
    return &((analysis_backend *)inst)->res;
}

/* Batched: QUERIES_PER_THREAD queries per analysis thread of each engine (the top of the file
 * says why). Unbatched: two queries per engine, so that the eight engines work side by side;
 * each evaluates them one at a time all the same ({batch} = 1 is its nnMaxBatchSize, {threads}
 * = 1 its number of analysis threads), as its log's rows per batch confirms. */
static int analysis_per_call(void *inst, int batch)
{
    (void)inst;
    return batch > 1 ? N_SYM * QUERIES_PER_THREAD * THREADS_PER_ROW * batch : 2 * N_SYM;
}

/* --- the replay the analysis engine will do --------------------------------------------------- */

static const hc_replay_words ANALYSIS_WORDS = {
    .encore = "an analysis query cannot start a game in the cleanup phase",
    .board = "the analysis engine takes",
    .komi = "the analysis engine takes",
    .stones = "",
};

/* Why the analysis engine cannot be given this position exactly (into why), or "". */
static int check_replay(analysis_backend *a, const hc_position *p, char *why, size_t len, hc_err *err)
{
    hc_rules rules;
    hc_board b;
    if (hc_replay_start(p, &ANALYSIS_WORDS, &rules, &b, why, len, err))
        return -1;
    if (why[0])
        return 0;
    int pla = p->n_moves > 0 ? p->initial_pla : p->next_pla;
    hc_history *gh = hc_history_new(&b, pla, &rules, 0, false, err);
    if (!gh)
        return -1;
    hc_history_set_assume_multiple_starting_black_moves_are_handicap(gh, a->engine_handicap);
    int rc = 0;
    for (int i = 0; i < p->n_moves && rc == 0 && !why[0]; i++) {
        const hc_move *m = &p->moves[i];
        int pass = m->x < 0;
        char v[8];
        hc_replay_vertex(m->x, m->y, p->y_size, v, sizeof v);
        /* analysis.cpp's hist.clear(board, movePla, ...) when a move is by the player not to move */
        if (m->pla != pla && hc_replay_restart_history(gh, m->pla, a->engine_handicap, err)) {
            rc = -1;
            break;
        }
        if (pass && rules.scoring_rule == HC_SCORING_TERRITORY && hc_history_pass_would_end_phase(gh, m->pla)) {
            snprintf(why, len, "move %d (%s pass) ends the play phase under territory scoring: the analysis engine "
                     "prevents the cleanup phase (preventCleanupPhase)", i + 1, m->pla == HC_BLACK ? "B" : "W");
            break;
        }
        if (!hc_history_is_legal_tolerant(gh, m->x, m->y, m->pla)) {
            snprintf(why, len, "move %d (%s %s) is not even tolerantly legal", i + 1, m->pla == HC_BLACK ? "B" : "W", v);
            break;
        }
        if (hc_history_play_tolerant(gh, m->x, m->y, m->pla, err))
            rc = -1;
        pla = hc_opp(m->pla);
    }
    if (rc == 0 && !why[0] && p->next_pla != pla)
        snprintf(why, len, "%s to move after a move by the same colour: an analysis query's player to move is the "
                 "opponent of the last move", p->next_pla == HC_BLACK ? "black" : "white");
    hc_replay_diff d;
    if (rc == 0 && !why[0] && a->cmp && (rc = hc_replay_compare(a->cmp, &a->settings, p, gh, &d, err)) == 0) {
        if (d.kind == HC_REPLAY_SPATIAL)
            snprintf(why, len, "the analysis engine's replay gives different NN inputs (spatial channel "
                     "%zu; ko, pass or move history state) than the record", d.channel);
        else if (d.kind == HC_REPLAY_GLOBAL)
            snprintf(why, len, "the analysis engine's replay gives different NN inputs (global channel "
                     "%zu: %g in the record, %g in the replay)", d.channel, d.record, d.replay);
        else if (d.kind == HC_REPLAY_LEGAL)
            snprintf(why, len, "the analysis engine's replay gives different legal moves than the record");
    }
    hc_history_free(gh);
    return rc;
}

/* --- queries and answers ---------------------------------------------------------------------- */

static json_t *stone_list(const hc_xy *st, int n, const char *color, int y_size)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++) {
        char v[8];
        hc_replay_vertex(st[i].x, st[i].y, y_size, v, sizeof v);
        json_array_append_new(arr, json_pack("[ss]", color, v));
    }
    return arr;
}

/* The query of position p, id "q<seq>", as one line (malloc'd, '\n'-terminated). */
static char *make_query(const analysis_backend *a, const hc_position *p, long seq, hc_err *err)
{
    hc_rules rules;
    char rs[HC_RULES_STR_MAX];
    if (hc_rules_parse(p->rules, &rules, err) || hc_rules_format_no_komi(&rules, rs, sizeof rs) < 0)
        return NULL;
    char id[32];
    snprintf(id, sizeof id, "q%ld", seq);
    json_t *q = json_object();
    json_object_set_new(q, "id", json_string(id));
    json_object_set_new(q, "boardXSize", json_integer(p->x_size));
    json_object_set_new(q, "boardYSize", json_integer(p->y_size));
    json_object_set_new(q, "rules", json_string(rs));
    json_object_set_new(q, "komi", json_real(p->komi));
    json_t *init = stone_list(p->initial_black, p->n_initial_black, "B", p->y_size);
    json_t *initw = stone_list(p->initial_white, p->n_initial_white, "W", p->y_size);
    json_array_extend(init, initw);
    json_decref(initw);
    json_object_set_new(q, "initialStones", init);
    int first = p->n_moves > 0 ? p->initial_pla : p->next_pla;
    json_object_set_new(q, "initialPlayer", json_string(first == HC_BLACK ? "B" : "W"));
    json_t *moves = json_array();
    for (int i = 0; i < p->n_moves; i++) {
        char v[8];
        hc_replay_vertex(p->moves[i].x, p->moves[i].y, p->y_size, v, sizeof v);
        json_array_append_new(moves, json_pack("[ss]", p->moves[i].pla == HC_BLACK ? "B" : "W", v));
    }
    json_object_set_new(q, "moves", moves);
    json_object_set_new(q, "maxVisits", json_integer(1));
    json_object_set_new(q, "includePolicy", json_true());
    json_object_set_new(q, "includeOwnership", json_true());
    /* The root's evaluation as testgpuerror's: the board's optimism, PDA and temperature; no
     * root noise, policy temperature, symmetry sampling, passing hacks or anti-mirror that
     * would change what is reported; values from white's side, as the reference reports. */
    json_t *ov = json_object();
    json_object_set_new(ov, "reportAnalysisWinratesAs", json_string("WHITE"));
    json_object_set_new(ov, "rootPolicyOptimism", json_real(a->settings.policy_optimism));
    json_object_set_new(ov, "policyOptimism", json_real(a->settings.policy_optimism));
    json_object_set_new(ov, "playoutDoublingAdvantage", json_real(a->settings.playout_doubling_advantage));
    json_object_set_new(ov, "nnPolicyTemperature", json_real(a->settings.policy_temperature));
    json_object_set_new(ov, "rootNumSymmetriesToSample", json_integer(1));
    json_object_set_new(ov, "rootSymmetryPruning", json_false());
    json_object_set_new(ov, "rootNoiseEnabled", json_false());
    json_object_set_new(ov, "rootPolicyTemperature", json_real(1.0));
    json_object_set_new(ov, "rootPolicyTemperatureEarly", json_real(1.0));
    json_object_set_new(ov, "conservativePass", json_false());
    json_object_set_new(ov, "enablePassingHacks", json_false());
    json_object_set_new(ov, "antiMirror", json_false());
    json_object_set_new(ov, "ignorePreRootHistory", json_false());
    json_object_set_new(ov, "drawEquivalentWinsForWhite", json_real(0.5));
    if (a->net && a->net->num_input_meta_c > 0)
        json_object_set_new(ov, "humanSLProfile", json_string(a->settings.meta_profile));
    json_object_set_new(q, "overrideSettings", ov);
    char *text = json_dumps(q, JSON_COMPACT);
    json_decref(q);
    if (!text) {
        hc_err_set(err, HC_ENOMEM, "out of memory for a query");
        return NULL;
    }
    size_t l = strlen(text);
    char *line = realloc(text, l + 2);
    if (!line) {
        free(text);
        hc_err_set(err, HC_ENOMEM, "out of memory for a query");
        return NULL;
    }
    line[l] = '\n';
    line[l + 1] = '\0';
    return line;
}

static int get_num(json_t *obj, const char *key, double *v)
{
    json_t *x = json_object_get(obj, key);
    if (!json_is_number(x))
        return 0;
    *v = json_number_value(x);
    return 1;
}

/* Fills o from an answer's rootInfo, policy and ownership; a message in why when malformed. */
static int parse_answer(json_t *j, const hc_position *p, hc_nnoutput *o, double optimism, char *why, size_t len)
{
    static const char *keys[] = {"rawWinrate", "rawNoResultProb", "rawLead", "rawScoreSelfplay",
                                 "rawScoreSelfplayStdev", "rawVarTimeLeft", "rawStWrError", "rawStScoreError"};
    double v[8];
    json_t *ri = json_object_get(j, "rootInfo");
    if (!json_is_object(ri)) {
        snprintf(why, len, "no rootInfo object");
        return -1;
    }
    for (int k = 0; k < 8; k++)
        if (!get_num(ri, keys[k], &v[k])) {
            snprintf(why, len, "rootInfo.%s missing or not a number (a KataGo older than the raw outputs?)", keys[k]);
            return -1;
        }
    const int nx = o->nn_x_len, ny = o->nn_y_len, xs = p->x_size, ys = p->y_size;
    json_t *pol = json_object_get(j, "policy"), *own = json_object_get(j, "ownership");
    if (!json_is_array(pol) || json_array_size(pol) != (size_t)(xs * ys + 1)) {
        snprintf(why, len, "policy is not an array of %d numbers", xs * ys + 1);
        return -1;
    }
    if (!json_is_array(own) || json_array_size(own) != (size_t)(xs * ys)) {
        snprintf(why, len, "ownership is not an array of %d numbers", xs * ys);
        return -1;
    }
    for (int i = 0; i < nx * ny; i++) {
        o->policy_probs[i] = -1.0f;
        if (o->white_owner_map)
            o->white_owner_map[i] = 0.0f;
    }
    for (int k = 0; k <= xs * ys; k++) {
        json_t *x = json_array_get(pol, (size_t)k);
        if (!json_is_number(x)) {
            snprintf(why, len, "policy[%d] is not a number", k);
            return -1;
        }
        float f = (float)json_number_value(x);
        if (k == xs * ys)
            o->policy_probs[nx * ny] = f;
        else
            o->policy_probs[(k / xs) * nx + k % xs] = f;
    }
    for (int k = 0; k < xs * ys && o->white_owner_map; k++) {
        json_t *x = json_array_get(own, (size_t)k);
        if (!json_is_number(x)) {
            snprintf(why, len, "ownership[%d] is not a number", k);
            return -1;
        }
        o->white_owner_map[(k / xs) * nx + k % xs] = (float)json_number_value(x);
    }
    /* rawWinrate = 0.5 + 0.5 (win - loss) from white's side and win + loss + noResult = 1. */
    double win = v[0] - 0.5 * v[1], loss = 1.0 - v[0] - 0.5 * v[1];
    o->white_win_prob = (float)win;
    o->white_loss_prob = (float)loss;
    o->white_no_result_prob = (float)v[1];
    o->white_lead = (float)v[2];
    o->white_score_mean = (float)v[3];
    o->white_score_mean_sq = (float)(v[4] * v[4] + v[3] * v[3]);
    o->var_time_left = (float)v[5];
    o->shortterm_winloss_error = (float)(2.0 * v[6]);
    o->shortterm_score_error = (float)v[7];
    o->policy_optimism_used = (float)optimism;
    return 0;
}

static void describe_pos(const hc_position *p, char *buf, size_t len)
{
    snprintf(buf, len, "position index %ld (SGF line %ld, symmetry %d)", p->index, p->sgf_line, p->symmetry);
}

/* Reads engine s's answers that have arrived, without waiting (*got: how many lines), until every
 * query of the call sent to it has one. */
static int collect(analysis_backend *a, int s, long first_seq, int n, const hc_position *pos, hc_nnoutput *outs,
                   int *left, int *got, hc_err *err)
{
    engine *e = &a->eng[s];
    while (*left > 0) {
        long r = hc_extproc_try_read_line(&e->proc, a->line, LINE_CAP, err);
        if (r == HC_EXTPROC_NO_LINE)
            return 0;
        (*got)++;
        char d[200] = "";
        for (int k = 0; k < n; k++)
            if (!a->pend[k].done && pos[a->pend[k].i].symmetry == s) {
                describe_pos(&pos[a->pend[k].i], d, sizeof d);
                break;
            }
        if (r < 0)
            return hc_err_prefix(err, "symmetry %d engine, %d answer(s) outstanding, first %s: ", s, *left, d);
        if (r == 0)
            continue;
        json_error_t je;
        json_t *j = json_loads(a->line, 0, &je);
        if (!json_is_object(j)) {
            json_decref(j);
            return hc_err_set(err, HC_EBACKEND, "symmetry %d engine, waiting for %s: malformed answer (not a JSON "
                              "object: %s): \"%.100s\"", s, d, je.text, a->line);
        }
        char id[40];
        snprintf(id, sizeof id, "%s", json_string_value(json_object_get(j, "id")) ? json_string_value(json_object_get(j, "id")) : "");
        long seq = -1;
        char *end = NULL;
        if (id[0] == 'q')
            seq = strtol(id + 1, &end, 10);
        if (seq < 0 || !end || *end) {
            const char *msg = json_string_value(json_object_get(j, "error"));
            int rc = hc_err_set(err, HC_EBACKEND, "symmetry %d engine, waiting for %s: %s \"%.160s\"", s, d,
                                msg ? "answered an error for no query of halfcheck's:" : "answered with an unknown id:",
                                a->line);
            json_decref(j);
            return rc;
        }
        if (seq < first_seq || seq >= first_seq + n) {
            json_decref(j);
            return hc_err_set(err, HC_EBACKEND, "symmetry %d engine, waiting for %s: answered query %s, which is not "
                              "one of this call's (%s): \"%.80s\"", s, d, id,
                              seq < first_seq ? "a query answered before: answered twice" : "never sent", a->line);
        }
        pending *pd = &a->pend[seq - first_seq];
        const hc_position *p = &pos[pd->i];
        describe_pos(p, d, sizeof d);
        if (pd->done) {
            json_decref(j);
            return hc_err_set(err, HC_EBACKEND, "symmetry %d engine: %s was answered twice (query %s)", s, d, id);
        }
        const char *emsg = json_string_value(json_object_get(j, "error"));
        const char *wmsg = json_string_value(json_object_get(j, "warning"));
        const char *field = json_string_value(json_object_get(j, "field"));
        if (emsg) {
            /* The engine refuses the query (rules its net cannot take, an illegal move): it
             * cannot evaluate this position as the reference does. */
            int rc = hc_err_set(err, HC_EBACKEND, HC_BACKEND_SKIP "%s: the analysis engine refused the query (%s: %.200s)",
                                d, field ? field : "?", emsg);
            json_decref(j);
            return rc;
        }
        if (wmsg) {
            /* A warning comes before the answer (e.g. rules replaced by the net's supported
             * ones): the answer that follows is of another position. */
            snprintf(pd->warning, sizeof pd->warning, "%s: %s", field ? field : "?", wmsg);
            json_decref(j);
            continue;
        }
        if (json_is_true(json_object_get(j, "isDuringSearch"))) {
            json_decref(j);
            continue;
        }
        if (pd->warning[0]) {
            int rc = hc_err_set(err, HC_EBACKEND, HC_BACKEND_SKIP "%s: the analysis engine warned \"%.200s\"", d,
                                pd->warning);
            json_decref(j);
            return rc;
        }
        char why[200];
        if (json_is_true(json_object_get(j, "noResults"))) {
            json_decref(j);
            return hc_err_set(err, HC_EBACKEND, "symmetry %d engine: %s: answer without results (noResults)", s, d);
        }
        int prc = parse_answer(j, p, &outs[pd->i], a->settings.policy_optimism, why, sizeof why);
        json_decref(j);
        if (prc)
            return hc_err_set(err, HC_EBACKEND, "symmetry %d engine: %s: malformed answer: %s", s, d, why);
        pd->done = 1;
        (*left)--;
    }
    return 0;
}

/* *sent: whether any query of the call was written (before that, a refusal leaves the engines
 * with nothing outstanding). */
static int eval_call(analysis_backend *a, int n, const hc_position *pos, hc_nnoutput *outs, int *sent, hc_err *err)
{
    char why[400];
    for (int i = 0; i < n; i++) {
        if (outs[i].nn_x_len != a->nx || outs[i].nn_y_len != a->ny || !outs[i].policy_probs)
            return hc_err_set(err, HC_EINTERNAL, "analysis: output %d was not initialised for the %dx%d buffer", i,
                              a->nx, a->ny);
        if (pos[i].x_size > a->nx || pos[i].y_size > a->ny)
            return hc_err_set(err, HC_EUSAGE, "board %dx%d does not fit the %dx%d NN buffer", pos[i].x_size,
                              pos[i].y_size, a->nx, a->ny);
        if (pos[i].symmetry < 0 || pos[i].symmetry >= N_SYM)
            return hc_err_set(err, HC_EUSAGE, "position index %ld: symmetry %d", pos[i].index, pos[i].symmetry);
        if (check_replay(a, &pos[i], why, sizeof why, err))
            return -1;
        if (why[0]) {
            char d[200];
            describe_pos(&pos[i], d, sizeof d);
            return hc_err_set(err, HC_EBACKEND, HC_BACKEND_SKIP "%s: %s", d, why);
        }
    }
    if (n > a->pend_cap) {
        pending *t = realloc(a->pend, sizeof *t * (size_t)n);
        if (!t)
            return hc_err_set(err, HC_ENOMEM, "out of memory");
        a->pend = t;
        a->pend_cap = n;
    }
    long first = a->next_seq;
    a->next_seq += n;
    int left[N_SYM] = {0};
    for (int i = 0; i < n; i++) {
        a->pend[i] = (pending){.seq = first + i, .i = i};
        left[pos[i].symmetry]++;
    }
    /* Every group's queries at once, so that the engines work side by side and each has its
     * group in flight: each engine's queries in one buffer, written as its input takes them while
     * its answers are read as they come. A call holds more queries than the pipes do, and an
     * engine whose answers are not read stops reading its queries (KataGo's does): writing all
     * before reading would deadlock with a fast engine. */
    char *buf[N_SYM] = {NULL};
    size_t used[N_SYM] = {0}, off[N_SYM] = {0};
    int rc = 0;
    for (int s = 0; s < N_SYM && rc == 0; s++) {
        if (!left[s])
            continue;
        *sent = 1;
        if (!hc_extproc_running(&a->eng[s].proc) && start_engine(a, s, err)) {
            rc = -1;
            break;
        }
        size_t cap = 1 << 14;
        if (!(buf[s] = hc_malloc(cap, err, "queries"))) {
            rc = -1;
            break;
        }
        for (int i = 0; i < n && rc == 0; i++) {
            if (pos[i].symmetry != s)
                continue;
            char *q = make_query(a, &pos[i], first + i, err);
            if (!q) {
                rc = -1;
                break;
            }
            size_t l = strlen(q);
            if (used[s] + l + 1 > cap) {
                while (used[s] + l + 1 > cap)
                    cap *= 2;
                char *t = realloc(buf[s], cap);
                if (!t)
                    rc = hc_err_set(err, HC_ENOMEM, "out of memory");
                else
                    buf[s] = t;
            }
            if (rc == 0) {
                memcpy(buf[s] + used[s], q, l);
                used[s] += l;
            }
            free(q);
        }
    }
    /* An engine that neither takes input nor answers for timeout_s counts as hung. */
    double last = now_s();
    for (;;) {
        int pending_any = 0, progress = 0;
        for (int s = 0; s < N_SYM && rc == 0; s++) {
            if (off[s] < used[s]) {
                long w = hc_extproc_write_some(&a->eng[s].proc, buf[s] + off[s], used[s] - off[s], err);
                if (w < 0) {
                    char d[200] = "";
                    for (int i = 0; i < n && !d[0]; i++)
                        if (pos[i].symmetry == s)
                            describe_pos(&pos[i], d, sizeof d);
                    rc = hc_err_prefix(err, "symmetry %d engine, sending %d queries, first %s: ", s, left[s], d);
                    break;
                }
                off[s] += (size_t)w;
                progress |= w > 0;
            }
            int got = 0;
            if (left[s] && collect(a, s, first, n, pos, outs, &left[s], &got, err)) {
                rc = -1;
                break;
            }
            progress |= got > 0;
            pending_any |= left[s] > 0;
        }
        if (rc || !pending_any)
            break;
        double t = now_s();
        if (progress) {
            last = t;
            continue;
        }
        if (t - last > a->timeout_s) {
            int s = 0;
            while (s < N_SYM - 1 && !left[s])
                s++;
            char d[200] = "";
            for (int k = 0; k < n && !d[0]; k++)
                if (!a->pend[k].done && pos[a->pend[k].i].symmetry == s)
                    describe_pos(&pos[a->pend[k].i], d, sizeof d);
            rc = hc_err_set(err, HC_EBACKEND, "symmetry %d engine, %d answer(s) outstanding, first %s: %s: no answer "
                            "and no input taken for %g s (timed out)", s, left[s], d, a->eng[s].proc.name, a->timeout_s);
            break;
        }
        hc_extproc *ps[N_SYM];
        int ww[N_SYM], wr[N_SYM], k = 0;
        for (int s = 0; s < N_SYM; s++)
            if (left[s] || off[s] < used[s]) {
                ps[k] = &a->eng[s].proc;
                ww[k] = off[s] < used[s];
                wr[k] = left[s] > 0;
                k++;
            }
        hc_extproc_wait_any(ps, ww, wr, k, last + a->timeout_s + 0.01);
    }
    for (int s = 0; s < N_SYM; s++)
        free(buf[s]);
    return rc;
}

static int analysis_eval_positions(void *inst, int n, const hc_position *pos, hc_nnoutput *outs, hc_err *err)
{
    analysis_backend *a = inst;
    double t0 = now_s();
    int sent = 0;
    int rc = eval_call(a, n, pos, outs, &sent, err);
    a->eval_s += now_s() - t0;
    if (rc) {
        /* Answers may still be on their way: no engine of this call is reused. A position
         * refused before anything was sent (the replay check) leaves the engines as they were,
         * with their batch counts. */
        if (sent)
            kill_all(a);
        return hc_err_prefix(err, "analysis: ");
    }
    a->positions += n;
    return 0;
}

static int analysis_finish(void *inst, hc_engine_stats *st, hc_err *err)
{
    (void)err;
    analysis_backend *a = inst;
    int ran = 0, lost = 0;
    for (int s = 0; s < N_SYM; s++) {
        finish_engine(a, &a->eng[s]);
        ran += a->eng[s].ran;
        lost |= a->eng[s].lost;
    }
    *st = hc_engine_stats_unknown();
    st->positions = a->positions;
    st->eval_seconds = a->eval_s;
    st->engines = ran;
    st->batching = a->max_batch > 1;
    st->engine_batches = st->batching; /* KataGo's NN server batches whatever queries are waiting */
    snprintf(st->version, sizeof st->version, "%s", a->version);
    if (ran)
        st->peak_rss_kib = hc_extproc_children_peak_rss_kib();
    if (ran && !lost && !a->nn_missing) {
        st->nn_rows = a->rows;
        st->nn_batches = a->batches;
        st->avg_batch = a->batches > 0 ? (double)a->rows / (double)a->batches : 0;
    }
    /* The largest batch the engines will form: one unbatched (one analysis thread), batched the
     * engines' own maxBatchSize where they said it, else the board's. */
    if (ran)
        st->max_batch = a->max_batch == 1 ? 1 : a->engine_max > 0 ? a->engine_max : a->max_batch;
    return 0;
}

static const hc_backend_ops analysis_ops = {
    .eval_positions = analysis_eval_positions,
    .resolution = analysis_resolution,
    .configure = analysis_configure,
    .identity = analysis_identity,
    .positions_per_call = analysis_per_call,
    .finish = analysis_finish,
    .close = analysis_close,
};

const hc_backend_kind hc_backend_analysis = {
    .name = "analysis",
    .syntax = "analysis:[@timeout=S @startup-timeout=S @handicap=0|1] CMD",
    .summary = "runs KataGo's JSON analysis engine, one per symmetry ({symmetry}, {batch}, {threads} in CMD), queries sent "
               "concurrently so that it batches; reads the root's raw outputs; $VAR unset means skipped",
    .caps = {.shape = HC_BACKEND_POSITION, .resolution = 1, .engine = 1},
    .parse = analysis_parse,
    .free_opts = analysis_free_opts,
    .open = analysis_open,
    .ops = &analysis_ops,
};
