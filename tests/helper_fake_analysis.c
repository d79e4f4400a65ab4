/* A stand-in for KataGo's JSON analysis engine (`katago analysis`) for tests/test_analysis.c:
 * queries answered with halfcheck's own ref32 evaluation in the analysis engine's format
 * (rootInfo.raw*, policy, ownership from white's side), batched the way its NN server batches,
 * its batch counts logged on stderr at exit, and batch-only bugs and misbehaviour on demand.
 *
 *   helper_fake_analysis MODEL -nn X Y -symmetry S [-batch B] [-no-stats]
 *       [-misbehave swap|stale|repeat|mask|nobatch|die|garbage|twice|never|hang|die-at-start] [-once FILE]
 *
 * Batches: after a query arrives, the queries already waiting (within 50 ms) join it, up to B.
 * -misbehave swap: in a batch of two or more, the first two rows' outputs are exchanged; stale:
 * the second row of a batch gets the first row's outputs of the previous batch; repeat: the
 * second row of a batch repeats the first row's answer; mask: the second row's legal moves are
 * shifted by one point along the board (its values are its own) (all batch-only bugs: a batch
 * of one is never wrong); nobatch: every batch is one row whatever B
 * is; die: exits after the first answer of a batch; garbage: a line that is not JSON instead of
 * an answer; twice: an answer written twice; never: the last query of a batch never answered;
 * hang: stops answering; flaky: queries q199, q399, ... answered with the winrate 1e-4 off; die-at-start: exits before answering query_version. With -once FILE
 * only while FILE does not exist (it is created then), so a restarted engine behaves.
 * At EOF on stdin it logs "NN rows: R", "NN batches: N", "NN avg batch size: A" on stderr (not
 * with -no-stats) and exits 0.
 * HC_FAKE_ANALYSIS_BATCH_CAP=N in the environment (batch_cap): batches of at most N rows while
 * query_models still says maxBatchSize B, as an engine whose batches stay small for reasons of
 * its own (too few queries in flight, too few analysis threads).
 * HC_FAKE_ANALYSIS_SMALL_PIPES=1: reads its input only when no whole query is left to answer, 4 KiB
 * at a time, and shrinks its pipes to 4 KiB where the system can (F_SETPIPE_SZ): an engine that
 * stops taking queries while its answers are not read, as KataGo's does, so that a caller writing
 * every query before reading an answer deadlocks. */
/* F_SETPIPE_SZ is Linux's (glibc shows it with _GNU_SOURCE); elsewhere the pipes keep their size. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "backends/backend.h"
#include "lib/testlib.h"
#include "harness/go/board.h"
#include "harness/eval/evaluate.h"
#include "harness/go/rules.h"

enum { MAX_BATCH = 256, LINE = 1 << 16 };

typedef struct fake {
    hc_net *net;
    hc_backend ref;
    int nx, ny, sym, batch, no_stats;
    const char *misbehave, *once;
    int misbehaving_now;
    long rows, batches;
    char rbuf[1 << 20];
    size_t rlen;
    size_t rcap; /* how much of rbuf one read may fill (HC_FAKE_ANALYSIS_SMALL_PIPES) */
    hc_nnoutput prev0; /* the previous batch's first row (stale) */
    int have_prev;
} fake;

static int is(const fake *f, const char *what)
{
    return f->misbehaving_now && f->misbehave && strcmp(f->misbehave, what) == 0;
}

/* Next line of stdin: 1 with it in line, 0 at EOF; with wait_ms >= 0 only if one arrives in
 * that time (-1 none). */
static int next_line(fake *f, char *line, int wait_ms)
{
    for (;;) {
        char *nl = memchr(f->rbuf, '\n', f->rlen);
        if (nl) {
            size_t n = (size_t)(nl - f->rbuf);
            if (n >= LINE)
                n = LINE - 1;
            memcpy(line, f->rbuf, n);
            line[n] = '\0';
            size_t used = (size_t)(nl - f->rbuf) + 1;
            memmove(f->rbuf, f->rbuf + used, f->rlen - used);
            f->rlen -= used;
            return 1;
        }
        if (wait_ms >= 0) {
            struct pollfd p = {.fd = 0, .events = POLLIN};
            if (poll(&p, 1, wait_ms) <= 0)
                return -1;
        }
        size_t room = sizeof f->rbuf - f->rlen;
        ssize_t r = read(0, f->rbuf + f->rlen, room < f->rcap ? room : f->rcap);
        if (r <= 0)
            return 0;
        f->rlen += (size_t)r;
    }
}

static int parse_vertex(const char *s, int ys, int *x, int *y)
{
    static const char cols[] = "ABCDEFGHJKLMNOPQRSTUVWXYZ";
    if (!s)
        return -1;
    if (!strcmp(s, "pass")) {
        *x = *y = -1;
        return 0;
    }
    const char *c = strchr(cols, s[0]);
    if (!c || !s[0])
        return -1;
    *x = (int)(c - cols);
    *y = ys - atoi(s + 1);
    return 0;
}

static int color(const char *s)
{
    return s && !strcmp(s, "B") ? HC_BLACK : s && !strcmp(s, "W") ? HC_WHITE : 0;
}

/* The query as a positions record and its settings, as analysis.cpp builds it. */
static int to_position(fake *f, json_t *q, hc_position *p, hc_eval_settings *s, hc_xy *stones, hc_move *moves)
{
    memset(p, 0, sizeof *p);
    p->x_size = (int)json_integer_value(json_object_get(q, "boardXSize"));
    p->y_size = (int)json_integer_value(json_object_get(q, "boardYSize"));
    hc_rules r;
    hc_err err = {0};
    if (hc_rules_parse(json_string_value(json_object_get(q, "rules")), &r, &err))
        return -1;
    r.komi = (float)json_number_value(json_object_get(q, "komi"));
    p->komi = r.komi;
    hc_rules_format(&r, p->rules, sizeof p->rules);
    json_t *init = json_object_get(q, "initialStones");
    int nb = 0, nw = 0, n = (int)json_array_size(init);
    hc_xy *b = stones, *w = stones + 400;
    for (int i = 0; i < n; i++) {
        json_t *e = json_array_get(init, (size_t)i);
        int x, y, c = color(json_string_value(json_array_get(e, 0)));
        if (parse_vertex(json_string_value(json_array_get(e, 1)), p->y_size, &x, &y))
            return -1;
        if (c == HC_BLACK)
            b[nb++] = (hc_xy){x, y};
        else
            w[nw++] = (hc_xy){x, y};
    }
    p->initial_black = b;
    p->n_initial_black = nb;
    p->initial_white = w;
    p->n_initial_white = nw;
    p->initial_pla = color(json_string_value(json_object_get(q, "initialPlayer")));
    json_t *mv = json_object_get(q, "moves");
    p->n_moves = (int)json_array_size(mv);
    int pla = p->initial_pla;
    for (int i = 0; i < p->n_moves; i++) {
        json_t *e = json_array_get(mv, (size_t)i);
        moves[i].pla = color(json_string_value(json_array_get(e, 0)));
        if (parse_vertex(json_string_value(json_array_get(e, 1)), p->y_size, &moves[i].x, &moves[i].y))
            return -1;
        pla = hc_opp(moves[i].pla);
    }
    p->moves = moves;
    p->next_pla = pla;
    p->assume_multiple_starting_black_moves_are_handicap = true;
    p->symmetry = f->sym;
    *s = hc_eval_settings_default(f->nx, f->ny);
    json_t *ov = json_object_get(q, "overrideSettings");
    s->policy_optimism = json_number_value(json_object_get(ov, "rootPolicyOptimism"));
    s->playout_doubling_advantage = json_number_value(json_object_get(ov, "playoutDoublingAdvantage"));
    json_t *t = json_object_get(ov, "nnPolicyTemperature");
    if (t)
        s->policy_temperature = (float)json_number_value(t);
    const char *prof = json_string_value(json_object_get(ov, "humanSLProfile"));
    if (prof)
        snprintf(s->meta_profile, sizeof s->meta_profile, "%s", prof);
    return 0;
}

/* One answer line in the analysis engine's format (values to 9 significant digits, as
 * roundDynamic(x, 8) leaves them). */
static void answer(const char *id, const hc_position *p, const hc_nnoutput *o)
{
    const int nx = o->nn_x_len, ny = o->nn_y_len;
    double w = o->white_win_prob, l = o->white_loss_prob, sm = o->white_score_mean;
    printf("{\"id\":\"%s\",\"isDuringSearch\":false,\"turnNumber\":%d,\"moveInfos\":[],\"rootInfo\":{"
           "\"currentPlayer\":\"%s\",\"rawWinrate\":%.9g,\"rawNoResultProb\":%.9g,\"rawLead\":%.9g,"
           "\"rawScoreSelfplay\":%.9g,\"rawScoreSelfplayStdev\":%.9g,\"rawStWrError\":%.9g,\"rawStScoreError\":%.9g,"
           "\"rawVarTimeLeft\":%.9g,\"visits\":1},\"policy\":[",
           id, p->n_moves, p->next_pla == HC_BLACK ? "B" : "W", 0.5 + 0.5 * (w - l), (double)o->white_no_result_prob,
           (double)o->white_lead, sm, sqrt(fmax(0.0, (double)o->white_score_mean_sq - sm * sm)),
           (double)o->shortterm_winloss_error * 0.5, (double)o->shortterm_score_error, (double)o->var_time_left);
    for (int y = 0; y < p->y_size; y++)
        for (int x = 0; x < p->x_size; x++)
            printf("%.9g,", (double)o->policy_probs[y * nx + x]);
    printf("%.9g],\"ownership\":[", (double)o->policy_probs[nx * ny]);
    for (int y = 0; y < p->y_size; y++)
        for (int x = 0; x < p->x_size; x++)
            printf("%s%.9g", x || y ? "," : "", (double)o->white_owner_map[y * nx + x]);
    printf("]}\n");
}

static void copy_out(hc_nnoutput *dst, const hc_nnoutput *src)
{
    float *pp = dst->policy_probs, *ow = dst->white_owner_map;
    size_t area = (size_t)src->nn_x_len * (size_t)src->nn_y_len;
    *dst = *src;
    dst->policy_probs = pp;
    dst->white_owner_map = ow;
    memcpy(pp, src->policy_probs, sizeof(float) * (area + 1));
    memcpy(ow, src->white_owner_map, sizeof(float) * area);
}

/* The legal moves of a policy shifted by one board point in reading order (the last point's to
 * the first): a point that becomes legal gets a small probability, one that becomes illegal -1;
 * the pass and the values stay. */
static void shift_legal(hc_nnoutput *o, int xs, int ys)
{
    int nx = o->nn_x_len, pts = xs * ys;
    float *old = malloc(sizeof(float) * (size_t)pts);
    if (!old)
        return;
    for (int k = 0; k < pts; k++)
        old[k] = o->policy_probs[(k / xs) * nx + k % xs];
    for (int k = 0; k < pts; k++) {
        int was = old[(k + pts - 1) % pts] >= 0;
        o->policy_probs[(k / xs) * nx + k % xs] = !was ? -1.0f : old[k] >= 0 ? old[k] : 1e-4f;
    }
    free(old);
}

typedef struct row {
    char id[64];
    hc_position p;
    hc_xy stones[800];
    hc_move moves[1000];
    hc_nnoutput o;
} row;

static row rows_buf[MAX_BATCH];

/* The most rows a batch takes: B, or HC_FAKE_ANALYSIS_BATCH_CAP when it is smaller. */
static int batch_cap(int batch)
{
    const char *v = getenv("HC_FAKE_ANALYSIS_BATCH_CAP");
    int cap = v ? atoi(v) : 0;
    return cap >= 1 && cap < batch ? cap : batch;
}

/* Evaluates a batch of queries and answers them (with the planted bug, if any). */
static void run_batch(fake *f, json_t **qs, int n)
{
    hc_err err = {0};
    for (int i = 0; i < n; i++) {
        row *r = &rows_buf[i];
        hc_eval_settings s;
        snprintf(r->id, sizeof r->id, "%s", json_string_value(json_object_get(qs[i], "id")));
        if (to_position(f, qs[i], &r->p, &s, r->stones, r->moves)) {
            printf("{\"id\":\"%s\",\"field\":\"moves\",\"error\":\"fake engine: cannot read the query\"}\n", r->id);
            r->id[0] = '\0';
            continue;
        }
        memset(&r->o, 0, sizeof r->o);
        if (hc_eval_positions(&f->ref, f->net, &r->p, 1, NULL, 1, &s, &r->o, NULL, NULL, NULL, NULL, &err)) {
            printf("{\"id\":\"%s\",\"error\":\"fake engine: %s\"}\n", r->id, "evaluation failed");
            r->id[0] = '\0';
        }
    }
    f->rows += n;
    f->batches++;
    hc_nnoutput first;
    int have_first = 0;
    if (n >= 1 && rows_buf[0].id[0] && hc_nnoutput_init(&first, f->nx, f->ny, 1, &err) == 0) {
        copy_out(&first, &rows_buf[0].o);
        have_first = 1;
    }
    if (n >= 2 && is(f, "swap") && rows_buf[0].id[0] && rows_buf[1].id[0]) {
        hc_nnoutput t = rows_buf[0].o;
        rows_buf[0].o = rows_buf[1].o;
        rows_buf[1].o = t;
    }
    if (n >= 2 && is(f, "stale") && f->have_prev && rows_buf[1].id[0])
        copy_out(&rows_buf[1].o, &f->prev0);
    if (n >= 2 && is(f, "repeat") && rows_buf[0].id[0] && rows_buf[1].id[0])
        copy_out(&rows_buf[1].o, &rows_buf[0].o);
    if (n >= 2 && is(f, "mask") && rows_buf[1].id[0])
        shift_legal(&rows_buf[1].o, rows_buf[1].p.x_size, rows_buf[1].p.y_size);
    /* flaky: the caller's query q199, q399, ... answered slightly off (its winrate by 1e-4): 1
     * evaluation in 200, a different position each time the caller sends them in another order. */
    for (int i = 0; i < n && is(f, "flaky"); i++)
        if (rows_buf[i].id[0] == 'q' && atol(rows_buf[i].id + 1) % 200 == 199) {
            rows_buf[i].o.white_win_prob += 1e-4f;
            rows_buf[i].o.white_loss_prob -= 1e-4f;
        }
    for (int i = 0; i < n; i++) {
        row *r = &rows_buf[i];
        if (!r->id[0])
            continue;
        if (is(f, "never") && i == n - 1)
            continue;
        if (is(f, "garbage") && i == 0) {
            printf("this is not JSON\n");
            continue;
        }
        answer(r->id, &r->p, &r->o);
        if (is(f, "twice") && i == 0)
            answer(r->id, &r->p, &r->o);
        fflush(stdout);
        if (is(f, "die")) {
            fprintf(stderr, "fake analysis engine: dying mid-batch on purpose\n");
            exit(3);
        }
        if (is(f, "hang"))
            for (;;)
                pause();
    }
    fflush(stdout);
    for (int i = 0; i < n; i++)
        if (rows_buf[i].id[0])
            hc_nnoutput_free(&rows_buf[i].o);
    if (have_first) {
        if (f->have_prev)
            hc_nnoutput_free(&f->prev0);
        f->prev0 = first;
        f->have_prev = 1;
    }
}

int main(int argc, char **argv)
{
    static fake f;
    const char *model = NULL;
    f.batch = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-nn") && i + 2 < argc) {
            f.nx = atoi(argv[++i]);
            f.ny = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-symmetry") && i + 1 < argc)
            f.sym = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-batch") && i + 1 < argc)
            f.batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-no-stats"))
            f.no_stats = 1;
        else if (!strcmp(argv[i], "-misbehave") && i + 1 < argc)
            f.misbehave = argv[++i];
        else if (!strcmp(argv[i], "-once") && i + 1 < argc)
            f.once = argv[++i];
        else
            model = argv[i];
    }
    if (!model || f.nx < 1 || f.ny < 1 || f.batch < 1 || f.batch > MAX_BATCH || f.sym < 0 || f.sym > 7) {
        fprintf(stderr, "usage: helper_fake_analysis MODEL -nn X Y -symmetry S [-batch B] [-misbehave WHAT] "
                        "[-once FILE] [-no-stats]\n");
        return 2;
    }
    f.misbehaving_now = hc_misbehave_now(f.misbehave, f.once);
    f.rcap = sizeof f.rbuf;
    if (getenv("HC_FAKE_ANALYSIS_SMALL_PIPES")) {
        f.rcap = 4096;
#ifdef F_SETPIPE_SZ
        fcntl(0, F_SETPIPE_SZ, 4096);
        fcntl(1, F_SETPIPE_SZ, 4096);
#endif
    }
    if (is(&f, "die-at-start")) {
        fprintf(stderr, "fake analysis engine: cannot load the model (on purpose)\n");
        return 1;
    }
    hc_err err = {0};
    f.net = hc_net_load(model, &err);
    if (f.net)
        hc_net_reduce_activations(f.net); /* as KataGo's loader and halfcheck's reference do */
    if (!f.net || hc_backend_open_with(&f.ref, &(hc_backend_open_opts){.spec = "ref32", .net = f.net, .nx = f.nx,
                                                                       .ny = f.ny, .max_batch = 1,
                                                                       .threads = 1}, &err)) {
        fprintf(stderr, "fake analysis engine: %s\n", err.msg);
        return 1;
    }
    fprintf(stderr, "Started, ready to begin handling requests\n");
    static char line[LINE];
    json_t *qs[MAX_BATCH];
    int cap = is(&f, "nobatch") ? 1 : batch_cap(f.batch);
    for (;;) {
        int r = next_line(&f, line, -1);
        if (r == 0)
            break;
        int n = 0;
        for (;;) {
            json_t *q = json_loads(line, 0, NULL);
            const char *action = q ? json_string_value(json_object_get(q, "action")) : NULL;
            if (action && (!strcmp(action, "query_version") || !strcmp(action, "query_models"))) {
                if (!strcmp(action, "query_version")) {
                    json_object_set_new(q, "version", json_string("fake-1.0"));
                    json_object_set_new(q, "git_hash", json_string("none"));
                } else {
                    json_object_set_new(q, "models", json_pack("[{s:s, s:s, s:i, s:b}]", "name", model, "internalName",
                                                              f.net->name ? f.net->name : "net", "maxBatchSize",
                                                              f.batch, "usingFP16", 0));
                }
                char *t = json_dumps(q, JSON_COMPACT);
                printf("%s\n", t);
                fflush(stdout);
                free(t);
                json_decref(q);
            } else if (q) {
                qs[n++] = q;
            } else {
                printf("{\"error\":\"Could not parse json\"}\n");
                fflush(stdout);
            }
            if (n >= cap || next_line(&f, line, 50) != 1)
                break;
        }
        if (n > 0)
            run_batch(&f, qs, n);
        for (int i = 0; i < n; i++)
            json_decref(qs[i]);
    }
    if (!f.no_stats)
        fprintf(stderr, "2026-01-01 00:00:00+0000: NN rows: %ld\n2026-01-01 00:00:00+0000: NN batches: %ld\n"
                        "2026-01-01 00:00:00+0000: NN avg batch size: %g\n",
                f.rows, f.batches, f.batches ? (double)f.rows / (double)f.batches : 0.0);
    if (f.have_prev)
        hc_nnoutput_free(&f.prev0);
    hc_backend_close(&f.ref);
    hc_net_free(f.net);
    return 0;
}
