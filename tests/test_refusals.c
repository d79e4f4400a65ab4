/* Every reader's refusal names the file and the place in it, and one range of board and NN buffer
 * sizes (sizes.h) is accepted or refused alike by config, CLI, evaluation, features and self-play.
 *
 * Conventions the checks hold the messages to (the first thing in each message):
 *   text, line-based (positions, outputs files):  "PATH:LINE: "            (lines from 1)
 *   YAML (suites, board configs, profiles):        "PATH:LINE:COL: "
 *   results.json: jansson's syntax errors           "PATH:LINE:COL: ", content errors "PATH: results[I].field: "
 *   SGF collections:                                "PATH: game G (line L): ... offset N"  (byte offset)
 *   binary and gzip'd data (models, .gz streams):   "PATH: offset N: "     (byte offset, decompressed) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "harness/config/config.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "harness/go/history.h"
#include "harness/model/model.h"
#include "harness/features/nnfeatures.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "backends/profile.h"
#include "harness/data/sgfwalk.h"
#include "reports/results.h"
#include "harness/data/selfplay.h"
#include "harness/base/sizes.h"
#include "harness/model/synth.h"

static const char *dir;

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* A record with the given index, square board, rules, komi and initial encore phase. */
static void record(char *buf, size_t n, long index, int size, const char *rules, const char *komi, int encore)
{
    snprintf(buf, n,
             "{\"index\":%ld,\"sgf\":0,\"xSize\":%d,\"ySize\":%d,\"rules\":\"%s\",\"komi\":%s,\"initialBlack\":[],"
             "\"initialWhite\":[],\"initialPla\":\"B\",\"initialEncorePhase\":%d,\"initialTurnNumber\":0,"
             "\"assumeMultipleStartingBlackMovesAreHandicap\":false,\"moves\":[],\"nextPla\":\"B\"}\n",
             index, size, size, rules, komi, encore);
}

static const char *AREA = "koSITUATIONALscoreAREAtaxNONEsui1komi7.5";

/* n good 9x9 records, line `bad` (from 1) replaced by `bad_rec`. */
static int positions_file(const char *path, int n, int bad, const char *bad_rec)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    char line[1024];
    for (int i = 1; i <= n; i++) {
        record(line, sizeof line, i - 1, 9, AREA, "7.5", 0);
        fputs(i == bad ? bad_rec : line, f);
    }
    return fclose(f);
}

/* Loads path with both readers (the threaded bulk loader and the one-record reader); both must
 * refuse it with want (e.g. "PATH:5: ") and what in the message. */
static void refused_positions(const char *name, const char *path, const char *want, const char *what)
{
    hc_err err = {0}, err2 = {0};
    hc_position *ps = NULL;
    size_t n = 0;
    int rc = hc_positions_load(path, &ps, &n, &err);
    hc_positions_free(ps, rc == 0 ? n : 0);
    hc_posreader *r = hc_posreader_open(path, &err2);
    int got = 0;
    if (r) {
        hc_position p;
        while ((got = hc_posreader_next(r, &p, &err2)) == 1)
            hc_position_free(&p);
        hc_posreader_close(r);
    }
    hc_check(name,
             rc == -1 && err.code == HC_EFORMAT && strncmp(err.msg, want, strlen(want)) == 0 && strstr(err.msg, what) &&
                 got == -1 && strcmp(err.msg, err2.msg) == 0,
             "want \"%s...%s\" from both readers, got \"%s\" (rc %d) and \"%s\" (%d)", want, what, err.msg, rc, err2.msg,
             got);
}

static void test_positions(void)
{
    char rec[1024], want[800];
    const char *p = hc_path(dir, "rules.jsonl");
    record(rec, sizeof rec, 4, 9, "koFOOscoreAREA", "7.5", 0);
    positions_file(p, 6, 5, rec);
    snprintf(want, sizeof want, "%s:5: field \"rules\": ", p);
    refused_positions("refusals-1.1", p, want, "koFOOscoreAREA");

    p = hc_path(dir, "big.jsonl");
    record(rec, sizeof rec, 4, 60, AREA, "7.5", 0);
    positions_file(p, 6, 5, rec);
    snprintf(want, sizeof want, "%s:5: ", p);
    refused_positions("refusals-1.2", p, want, "board (xSize x ySize) 60x60 is outside the supported sizes 1x1..19x19");

    p = hc_path(dir, "zero.jsonl");
    record(rec, sizeof rec, 4, 9, AREA, "7.5", 0);
    char *xs = strstr(rec, "\"xSize\":9");
    memcpy(xs, "\"xSize\":0", 9);
    positions_file(p, 6, 5, rec);
    refused_positions("refusals-1.3", p, (snprintf(want, sizeof want, "%s:5: ", p), want), "0x9 is outside");

    p = hc_path(dir, "komi.jsonl");
    record(rec, sizeof rec, 4, 9, AREA, "7.0", 0);
    positions_file(p, 6, 5, rec);
    refused_positions("refusals-1.4", p, (snprintf(want, sizeof want, "%s:5: field \"komi\"", p), want), "disagrees");

    p = hc_path(dir, "encore.jsonl");
    record(rec, sizeof rec, 4, 9, AREA, "7.5", 1);
    positions_file(p, 6, 5, rec);
    refused_positions("refusals-1.5", p, (snprintf(want, sizeof want, "%s:5: field \"initialEncorePhase\"", p), want),
                      "territory scoring");

    /* Enough lines for the bulk loader's threads; the bad one in the last thread's share. */
    p = hc_path(dir, "many.jsonl");
    record(rec, sizeof rec, 1399, 20, AREA, "7.5", 0);
    positions_file(p, 1500, 1400, rec);
    refused_positions("refusals-1.6", p, (snprintf(want, sizeof want, "%s:1400: ", p), want), "20x20");

    /* A gzip'd file cut short: the offset in the decompressed stream. */
    const char *gz = hc_path(dir, "cut.jsonl.gz");
    hc_err err = {0};
    hc_poswriter *w = hc_poswriter_open(gz, &err);
    hc_position pos;
    int ok = w != NULL;
    for (int i = 0; ok && i < 400; i++) {
        record(rec, sizeof rec, i, 9, AREA, "7.5", 0);
        ok = hc_position_parse(rec, "t", &pos, &err) == 0 && hc_poswriter_write(w, &pos, &err) == 0;
        hc_position_free(&pos);
    }
    struct stat st;
    ok = ok && hc_poswriter_commit(w, &err) == 0 && stat(gz, &st) == 0 && st.st_size > 100 &&
         truncate(gz, st.st_size / 2) == 0;
    hc_position *ps = NULL;
    size_t n = 0;
    int rc = ok ? hc_positions_load(gz, &ps, &n, &err) : 0;
    /* A gzip'd file's offset is in its decompressed bytes, and says so. */
    snprintf(want, sizeof want, "%s: uncompressed offset ", gz);
    hc_check("refusals-1.7", ok && rc == -1 && strncmp(err.msg, want, strlen(want)) == 0, "want \"%s...\", got \"%s\"",
             want, err.msg);
    if (rc == 0)
        hc_positions_free(ps, n);
}

static void test_sgf(void)
{
    hc_err err = {0};
    const char *p = hc_path(dir, "b60.sgfs");
    write_text(p, "(;GM[1]SZ[9]RU[tromp-taylor]KM[7.5]\n;B[ee]\n)\n(;GM[1]SZ[60]\n;B[ee])\n");
    int rc = hc_record_file(p, hc_path(dir, "b60.jsonl"), NULL, &err);
    char want[800];
    snprintf(want, sizeof want, "%s: game 1 (line 4): node at offset ", p);
    hc_check("refusals-2.1", rc == -1 && strncmp(err.msg, want, strlen(want)) == 0 && strstr(err.msg, "SZ[60]"),
             "want \"%s...SZ[60]...\", got \"%s\"", want, err.msg);
    p = hc_path(dir, "cut.sgfs");
    write_text(p, "(;GM[1]SZ[9]\n;B[ee];W[");
    rc = hc_record_file(p, hc_path(dir, "cut.jsonl"), NULL, &err);
    snprintf(want, sizeof want, "%s: game 0 (line 1): offset ", p);
    hc_check("refusals-2.2", rc == -1 && strncmp(err.msg, want, strlen(want)) == 0 && strstr(err.msg, "(line 2)"),
             "want \"%s...(line 2)...\", got \"%s\"", want, err.msg);
}

static void test_model(void)
{
    hc_err err = {0};
    hc_synth_spec s;
    hc_synth_spec_default(&s);
    const char *p = hc_path(dir, "cut.bin");
    int ok = hc_synth_write(&s, p, 1, &err) == 0 && truncate(p, 3000) == 0;
    hc_net *net = ok ? hc_net_load(p, &err) : NULL;
    char want[800];
    snprintf(want, sizeof want, "%s: offset ", p);
    hc_check("refusals-3.1", ok && !net && strncmp(err.msg, want, strlen(want)) == 0 && strstr(err.msg, "layer "),
             "want \"%s...layer...\", got \"%s\"", want, err.msg);
    hc_net_free(net);
    p = hc_path(dir, "garbage.bin");
    write_text(p, "not a model\n");
    net = hc_net_load(p, &err);
    snprintf(want, sizeof want, "%s: offset ", p);
    hc_check("refusals-3.2", !net && strncmp(err.msg, want, strlen(want)) == 0,
             "want \"%s...\", got \"%s\"", want, err.msg);
    hc_net_free(net);
}

static void test_yaml(void)
{
    hc_err err = {0};
    const char *p = hc_path(dir, "suite.yaml");
    const char *text = "name: t\nnets:\n  - {name: n, model: m}\nboards:\n"
                       "  - {name: b, positions: p, nnBuffer: 9, maxBatchSize: [1]}\n";
    hc_suite *s = hc_suite_parse(text, strlen(text), p, &err);
    char want[800];
    snprintf(want, sizeof want, "%s:5:", p);
    hc_check("refusals-4.1", !s && err.code == HC_ECONFIG && strncmp(err.msg, want, strlen(want)) == 0 &&
                                 strstr(err.msg, "maxBatchSize"),
             "want \"%s...maxBatchSize...\", got \"%s\"", want, err.msg);
    hc_suite_free(s);
    p = hc_path(dir, "prof.yaml");
    text = "name: p\nstorage: [fp16]\n";
    hc_profile *pr = hc_profile_parse(text, strlen(text), p, &err);
    snprintf(want, sizeof want, "%s:2:", p);
    hc_check("refusals-4.2", !pr && strncmp(err.msg, want, strlen(want)) == 0 && strstr(err.msg, "storage"),
             "want \"%s...storage...\", got \"%s\"", want, err.msg);
    hc_profile_free(pr);
}

static void test_outputs(void)
{
    hc_err err = {0};
    hc_nnoutput o;
    hc_nnoutput_init(&o, 3, 2, 1, &err);
    char *good = hc_nnoutput_format(&o, HC_NNOUT_GOLDEN, NULL, &err);
    hc_nnoutput_free(&o);
    const char *p = hc_path(dir, "outs.jsonl");
    char text[8192], want[800];
    snprintf(text, sizeof text, "%s\n%s\n{\"nnXLen\":\"a\"}\n", good ? good : "", good ? good : "");
    write_text(p, text);
    hc_nnoutput *os = NULL;
    size_t n = 0;
    int rc = hc_nnoutputs_load(p, &os, &n, &err);
    snprintf(want, sizeof want, "%s:3: ", p);
    hc_check("refusals-5.1", good && rc == -1 && strncmp(err.msg, want, strlen(want)) == 0, "want \"%s...\", got \"%s\"",
             want, err.msg);
    if (rc == 0)
        hc_nnoutputs_free(os, n);
    snprintf(text, sizeof text, "%s\n{\"nnXLen\": 3,\n", good ? good : "");
    write_text(p, text);
    rc = hc_nnoutputs_load(p, &os, &n, &err);
    snprintf(want, sizeof want, "%s:2: ", p);
    hc_check("refusals-5.2", good && rc == -1 && strncmp(err.msg, want, strlen(want)) == 0, "want \"%s...\", got \"%s\"",
             want, err.msg);
    if (rc == 0)
        hc_nnoutputs_free(os, n);
    free(good);
}

static void test_results(void)
{
    hc_err err = {0};
    const char *p = hc_path(dir, "results.json");
    write_text(p, "{\n  \"format\": 1,\n  \"results\": [\n    oops\n");
    hc_results_doc *d = hc_results_read_json(p, &err);
    char want[800];
    snprintf(want, sizeof want, "%s:4:", p);
    hc_check("refusals-6.1", !d && strncmp(err.msg, want, strlen(want)) == 0, "want \"%s...\", got \"%s\"", want, err.msg);
    hc_results_doc_free(d);
    write_text(p, "{\"format\": 1, \"suite\": \"s\", \"timestamp\": \"t\", \"version\": \"v\", \"results\": [7]}\n");
    d = hc_results_read_json(p, &err);
    snprintf(want, sizeof want, "%s: results[0]", p);
    hc_check("refusals-6.2", !d && strncmp(err.msg, want, strlen(want)) == 0, "want \"%s...\", got \"%s\"", want, err.msg);
    hc_results_doc_free(d);
}

/* ---- the one range ---------------------------------------------------------------------------- */

static const int ACCEPTED[][2] = {{1, 1}, {19, 19}, {1, 19}};
static const int REFUSED[][2] = {{0, 5}, {20, 20}, {19, 20}, {60, 60}};
enum { N_ACCEPTED = 3, N_REFUSED = 4 };

static void test_range_function(void)
{
    for (int i = 0; i < N_ACCEPTED; i++) {
        hc_err err = {0};
        char name[64];
        snprintf(name, sizeof name, "refusals-7.%d", i + 1);
        hc_check(name, hc_check_board_size(ACCEPTED[i][0], ACCEPTED[i][1], "board", &err) == 0, "%dx%d refused: %s",
                 ACCEPTED[i][0], ACCEPTED[i][1], err.msg);
    }
    for (int i = 0; i < N_REFUSED; i++) {
        hc_err err = {0};
        char name[64], want[64];
        snprintf(name, sizeof name, "refusals-7.%d", N_ACCEPTED + i + 1);
        snprintf(want, sizeof want, "board %dx%d is outside the supported sizes 1x1..19x19", REFUSED[i][0], REFUSED[i][1]);
        hc_check(name, hc_check_board_size(REFUSED[i][0], REFUSED[i][1], "board", &err) == -1 && !strcmp(err.msg, want),
                 "%dx%d: got \"%s\"", REFUSED[i][0], REFUSED[i][1], err.msg);
    }
}

static void test_range_config(void)
{
    for (int i = 0; i < N_ACCEPTED + N_REFUSED; i++) {
        const int *sz = i < N_ACCEPTED ? ACCEPTED[i] : REFUSED[i - N_ACCEPTED];
        char text[400], name[64], want[200];
        snprintf(text, sizeof text, "nets: [{name: n, model: m}]\nboards:\n  - {name: b, positions: p, nnBuffer: %dx%d}\n"
                 "backends: [{backend: ref32, tiers: [fp32]}]\n",
                 sz[0], sz[1]);
        hc_err err = {0};
        const char *p = hc_path(dir, "range.yaml");
        hc_suite *s = hc_suite_parse(text, strlen(text), p, &err);
        snprintf(name, sizeof name, "refusals-8.%d", i + 1);
        snprintf(want, sizeof want, "%s:3:", p);
        if (i < N_ACCEPTED)
            hc_check(name, s && s->boards[0].nn_x_len == sz[0] && s->boards[0].nn_y_len == sz[1], "nnBuffer %dx%d: %s",
                     sz[0], sz[1], err.msg);
        else
            hc_check(name, !s && strncmp(err.msg, want, strlen(want)) == 0 && strstr(err.msg, "outside the supported sizes"),
                     "nnBuffer %dx%d: got \"%s\"", sz[0], sz[1], err.msg);
        hc_suite_free(s);
    }
}

/* The features and evaluation of one square board in a buffer of its size. */
static int features_at(int board, int nn, hc_err *err)
{
    char rec[1024];
    record(rec, sizeof rec, 0, board, AREA, "7.5", 0);
    hc_position p;
    if (hc_position_parse(rec, "t", &p, err))
        return -1;
    hc_history *h = hc_history_from_position(&p, err);
    hc_position_free(&p);
    if (!h)
        return -1;
    int side = nn > 0 && nn < 64 ? nn : 1;
    float *spatial = malloc(sizeof(float) * HC_FEATURES_V7_SPATIAL * (size_t)side * (size_t)side);
    float global[HC_FEATURES_V7_GLOBAL];
    hc_nninput_params params = hc_nninput_params_default();
    int rc = spatial ? hc_features_fill(7, h, hc_history_next_pla(h), &params, nn, nn, spatial, global, err) : -1;
    free(spatial);
    hc_history_free(h);
    return rc;
}

static int eval_at(const hc_net *net, int board, int nn, hc_err *err)
{
    char rec[1024];
    record(rec, sizeof rec, 0, board, AREA, "7.5", 0);
    hc_position p;
    if (hc_position_parse(rec, "t", &p, err))
        return -1;
    hc_backend b;
    /* opened at a size the backend takes, so that the evaluation's own check is what refuses */
    int bn = nn >= 1 && nn <= 19 ? nn : 19;
    int rc = hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = bn, .ny = bn,
                                                              .max_batch = 1, .threads = 1}, err);
    if (rc == 0) {
        hc_eval_settings s = hc_eval_settings_default(nn, nn);
        hc_nnoutput out;
        rc = hc_eval_positions(&b, net, &p, 1, NULL, 1, &s, &out, NULL, NULL, NULL, NULL, err);
        if (rc == 0)
            hc_nnoutput_free(&out);
        hc_backend_close(&b);
    }
    hc_position_free(&p);
    return rc;
}

static int selfplay_count(const hc_position *p, void *user, hc_err *err)
{
    (void)p, (void)err;
    ++*(long *)user;
    return 0;
}

static void test_range_everywhere(const hc_net *net)
{
    /* 1x1 and 19x19 boards in buffers of their size, and a 20x20 buffer: features, evaluation,
     * self-play (library), then the CLI's --nn and --size. */
    static const int sides[3] = {1, 19, 20};
    for (int i = 0; i < 3; i++) {
        int n = sides[i], ok = n <= HC_MAX_BOARD_LEN;
        char name[64];
        hc_err err = {0};
        int rc = features_at(ok ? n : 19, n, &err);
        snprintf(name, sizeof name, "refusals-9.%d", i + 1);
        hc_check(name, ok ? rc == 0 : rc == -1 && strstr(err.msg, "NN buffer 20x20 is outside the supported sizes"),
                 "features at %dx%d: rc %d: %s", n, n, rc, err.msg);
        hc_err_clear(&err);
        rc = net ? eval_at(net, ok ? n : 19, n, &err) : -2;
        snprintf(name, sizeof name, "refusals-10.%d", i + 1);
        hc_check(name, ok ? rc == 0 : rc == -1 && strstr(err.msg, "NN buffer 20x20 is outside the supported sizes"),
                 "eval at %dx%d: rc %d: %s", n, n, rc, err.msg);
        hc_selfplay_opts o;
        hc_selfplay_opts_default(&o);
        o.x_size = o.y_size = n;
        o.max_moves = 6;
        long count = 0;
        hc_err_clear(&err);
        rc = hc_selfplay_run(&o, selfplay_count, &count, &err);
        snprintf(name, sizeof name, "refusals-11.%d", i + 1);
        hc_check(name, ok ? rc == 0 && count > 0 : rc == -1 && strstr(err.msg, "20x20 is outside the supported sizes"),
                 "selfplay at %dx%d: rc %d, %ld positions: %s", n, n, rc, count, err.msg);
    }
    const char *hc = hc_halfcheck_bin();
    char cmd[4096], rec[1024];
    const char *pos1 = hc_path(dir, "one1.jsonl"), *pos19 = hc_path(dir, "one19.jsonl");
    record(rec, sizeof rec, 0, 1, AREA, "7.5", 0);
    write_text(pos1, rec);
    record(rec, sizeof rec, 0, 19, AREA, "7.5", 0);
    write_text(pos19, rec);
    const char *log = hc_path(dir, "cli.err");
    static const char *const nns[] = {"1x1", "19", "19x19", "20x20", "0x5", "19x", "x"};
    for (int i = 0; i < 7; i++) {
        snprintf(cmd, sizeof cmd, "%s features --positions %s --nn %s --out %s 2>%s", hc, i == 0 ? pos1 : pos19, nns[i],
                 hc_path(dir, "f.f32"), log);
        int rc = hc_sh(cmd);
        snprintf(cmd, sizeof cmd, "grep -q 'halfcheck features: %s' %s",
                 i < 5 ? "size .* is outside the supported sizes 1x1\\.\\.19x19" : "bad size", log);
        int said = i < 3 || hc_sh(cmd) == 0;
        char name[64];
        snprintf(name, sizeof name, "refusals-12.%d", i + 1);
        hc_check(name, (i < 3 ? rc == 0 : rc == 2) && said, "--nn %s: exit %d (message as expected: %d)", nns[i], rc,
                 said);
    }
    snprintf(cmd, sizeof cmd, "%s selfplay --size 20 --games 1 --out %s 2>%s && exit 9; grep -q 'size 20x20 is outside' %s",
             hc, hc_path(dir, "sp.jsonl"), log, log);
    hc_check("refusals-12.8", hc_sh(cmd) == 0, "selfplay --size 20 not refused with the range's message");
}

/* A record whose game the replay refuses (line 3 plays on an occupied point): eval and features
 * name the positions file and the line, not only the position. */
static void test_replay_refusal(void)
{
    const char *hc = hc_halfcheck_bin();
    char pos[700], net[700], log[700], out[700], feat[700]; /* path_of's buffers rotate */
    snprintf(pos, sizeof pos, "%s", hc_path(dir, "illegal.jsonl"));
    snprintf(net, sizeof net, "%s", hc_path(dir, "synth.bin.gz"));
    snprintf(log, sizeof log, "%s", hc_path(dir, "replay.err"));
    snprintf(out, sizeof out, "%s", hc_path(dir, "o.jsonl"));
    snprintf(feat, sizeof feat, "%s", hc_path(dir, "o.f32"));
    FILE *f = fopen(pos, "w");
    char rec[1024];
    for (int i = 0; f && i < 4; i++) {
        record(rec, sizeof rec, i, 9, AREA, "7.5", 0);
        if (i == 2) {
            char *m = strstr(rec, "\"moves\":[]");
            char tail[512];
            snprintf(tail, sizeof tail, "%s", m + strlen("\"moves\":[]"));
            snprintf(m, sizeof rec - (size_t)(m - rec), "\"moves\":[\"B:4,4\",\"W:3,3\",\"B:4,4\"]%s", tail);
            char *np = strstr(rec, "\"nextPla\":\"B\"");
            if (np)
                np[11] = 'W';
        }
        fputs(rec, f);
    }
    if (f)
        fclose(f);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s synth-net --arch b6c96 --out %s >/dev/null 2>&1 && %s eval --net %s --positions %s --nn 9x9 --out %s 2>%s; "
             "test $? = 2 && grep -q 'halfcheck eval: %s:3: .*occupied' %s",
             hc, net, hc, net, pos, out, log, pos, log);
    hc_check("refusals-13.1", hc_sh(cmd) == 0, "eval did not name %s:3 for the illegal move (see %s)", pos, log);
    snprintf(cmd, sizeof cmd,
             "%s features --positions %s --nn 9x9 --out %s 2>%s; test $? = 2 && grep -q 'halfcheck features: %s:3: .*occupied' %s",
             hc, pos, feat, log, pos, log);
    hc_check("refusals-13.2", hc_sh(cmd) == 0, "features did not name %s:3 for the illegal move (see %s)", pos, log);
    /* run: the suite's reference refuses the board's positions, naming the file and line. */
    char suite[700];
    snprintf(suite, sizeof suite, "%s", hc_path(dir, "replay.yaml"));
    f = fopen(suite, "w");
    if (f) {
        fprintf(f, "name: replay\nnets: [{name: n, model: synth.bin.gz}]\n"
                   "boards: [{name: b, positions: illegal.jsonl, nnBuffer: 9x9}]\n"
                   "backends: [{name: r, backend: ref32, tiers: [exact]}]\n");
        fclose(f);
    }
    snprintf(cmd, sizeof cmd,
             "%s run %s --no-cache --quiet --out %s 2>%s; test $? = 2 && grep -q 'reference: %s:3: .*occupied' %s", hc,
             suite, hc_path(dir, "replay-out"), log, pos, log);
    hc_check("refusals-13.3", hc_sh(cmd) == 0, "run did not name %s:3 for the illegal move (see %s)", pos, log);
}

int main(void)
{
    dir = hc_tmpdir("test_refusals");
    hc_plan(7 + 2 + 2 + 2 + 2 + 2);
    test_positions();
    test_sgf();
    test_model();
    test_yaml();
    test_outputs();
    test_results();
    hc_plan(N_ACCEPTED + N_REFUSED + N_ACCEPTED + N_REFUSED + 3 * 3 + 8);
    test_range_function();
    test_range_config();
    hc_err err = {0};
    hc_synth_spec s;
    hc_synth_spec_default(&s);
    hc_net *net = hc_synth_net(&s, &err);
    if (!net)
        printf("INFO no synthetic net: %s\n", err.msg);
    test_range_everywhere(net);
    hc_net_free(net);
    hc_plan(3);
    test_replay_refusal();
    return hc_test_exit();
}
