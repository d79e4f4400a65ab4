/* Config: a full inline suite (defaults, relative paths, user tiers, matrix expansion with
 * overrides), the shipped suites/testgpuerror.yaml and the nets/ files, and a table of malformed
 * documents, each checked for its file:line:col and message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/config/config.h"
#include "backends/profile.h"
#include "hc_test.h"

static hc_suite *parse(const char *text, hc_err *err)
{
    return hc_suite_parse(text, strlen(text), "cfg/t.yaml", err);
}

static const char *good =
    "name: demo\n"
    "nets:\n"
    "  - {name: n1, model: m1.bin.gz, sha256: F5D32604E3675C480C7C8F6AA579A1EA857135628A0AFCCC8FA56330FBACD38D}\n"
    "  - name: n2\n"
    "    model: /abs/m2.bin.gz\n"
    "    modelVersion: 17\n"
    "    notes: a transformer\n"
    "boards:\n"
    "  - name: b9\n"
    "    positions: ../pos/size9.jsonl.gz\n"
    "    nnBuffer: 9\n"
    "  - name: rect\n"
    "    sgf: sgf/rect.sgfs\n"
    "    nnBuffer: 18x19\n"
    "    policyOptimism: 0.65\n"
    "    playoutDoublingAdvantage: 0.3\n"
    "    policyTemperature: 1.1\n"
    "    maxBatchSize: 11\n"
    "    requireExactNNLen: true\n"
    "tiers:\n"
    "  - name: tight\n"
    "    base: fp16\n"
    "    limits:\n"
    "      winrate: {p99: 1.0%, avg: 0.001}\n"
    "      lead: {max: none}\n"
    "defaultTiers: [fp32]\n"
    "backends:\n"
    "  - ref32\n"
    "  - {name: half, backend: 'emulate:fp16', tiers: [fp16, tight]}\n"
    "modes: [batched]\n"
    "matrix:\n"
    "  - nets: [n1]\n"
    "    overrides: {maxBatchSize: 3, policyOptimism: 0.5}\n"
    "  - nets: n2\n"
    "    boards: [rect]\n"
    "    backends: [half]\n"
    "    tiers: [fp32-strict]\n";

enum { GOOD_CHECKS = 14 }; /* config-1.1 to 1.14 */
static void test_good(void)
{
    hc_err err = {0};
    hc_suite *s = parse(good, &err);
    if (!hc_check("config-1.1", s != NULL, "parse: %s", err.msg)) {
        hc_fail_n("config-1.rest", GOOD_CHECKS - 1, "not run: the suite did not parse");
        return;
    }
    hc_check("config-1.2", !strcmp(s->name, "demo") && s->n_nets == 2 && s->n_boards == 2 && s->n_backends == 2,
             "counts %zu %zu %zu", s->n_nets, s->n_boards, s->n_backends);
    hc_check("config-1.3", !strcmp(s->nets[0].model, "cfg/m1.bin.gz") && !strcmp(s->nets[1].model, "/abs/m2.bin.gz"),
             "model paths %s %s", s->nets[0].model, s->nets[1].model);
    hc_check("config-1.4", !strcmp(s->nets[0].sha256, "f5d32604e3675c480c7c8f6aa579a1ea857135628a0afccc8fa56330fbacd38d") &&
             s->nets[0].model_version == -1 && s->nets[1].model_version == 17 && !strcmp(s->nets[1].notes, "a transformer") &&
             !strcmp(s->nets[1].where, "cfg/t.yaml:4:5"), "net fields (where %s)", s->nets[1].where);
    hc_board_cfg *b = &s->boards[0];
    hc_check("config-1.5", !strcmp(b->positions, "cfg/../pos/size9.jsonl.gz") && !b->sgf && b->nn_x_len == 9 &&
             b->nn_y_len == 9 && b->policy_optimism == 0 && b->pda == 0 && b->policy_temperature == 1.0 &&
             b->max_batch_size == 16 && !b->require_exact_nn_len, "board defaults");
    b = &s->boards[1];
    hc_check("config-1.6", !strcmp(b->sgf, "cfg/sgf/rect.sgfs") && !b->positions && b->nn_x_len == 18 &&
             b->nn_y_len == 19 && b->policy_optimism == 0.65 && b->pda == 0.3 && b->policy_temperature == 1.1 &&
             b->max_batch_size == 11 && b->require_exact_nn_len, "board settings");
    int tight = hc_suite_find_tier(s, "tight"), fp32 = hc_suite_find_tier(s, "fp32");
    hc_check("config-1.7", tight >= 0 && fp32 >= 0 && hc_suite_find_tier(s, "fp32-strict") >= 0, "tiers missing");
    if (tight >= 0) {
        hc_tier *t = &s->tiers[tight];
        hc_check("config-1.8", t->limit[HC_M_WINRATE][HC_P_99] == 1.0 && t->scale[HC_M_WINRATE][HC_P_99] == 100 &&
                 t->limit[HC_M_WINRATE][HC_P_AVG] == 0.001 && t->scale[HC_M_WINRATE][HC_P_AVG] == 1 &&
                 !t->set[HC_M_LEAD][HC_P_MAX] && t->limit[HC_M_OWNERSHIP][HC_P_MAX] == 20.0,
                 "user tier limits");
    } else {
        hc_check("config-1.8", 0, "no tier \"tight\"");
    }
    hc_check("config-1.9", !strcmp(s->backends[0].spec, "ref32") && !strcmp(s->backends[0].name, "ref32") &&
             s->backends[0].n_tiers == 1 && s->backends[0].tiers[0] == fp32 && !strcmp(s->backends[1].spec, "emulate:fp16") &&
             s->backends[1].n_tiers == 2 && s->backends[1].tiers[1] == tight, "backends");
    hc_check("config-1.10", s->modes == HC_MODE_BATCHED, "modes %d", s->modes);
    /* Entry 0: n1 x {b9, rect} x {ref32, half} = 4; entry 1: n2 x rect x half = 1. */
    hc_check("config-1.11", s->n_cases == 5, "cases %zu", s->n_cases);
    if (s->n_cases == 5) {
        hc_case *c = &s->cases[3]; /* n1, rect, half */
        hc_check("config-1.12", c->net == 0 && c->board == 1 && c->backend == 1 && c->settings.max_batch_size == 3 &&
                 c->settings.policy_optimism == 0.5 && c->settings.pda == 0.3 && c->settings.nn_x_len == 18 &&
                 c->n_tiers == 2, "case 3: net %zu board %zu backend %zu batch %d", c->net, c->board, c->backend,
                 c->settings.max_batch_size);
        c = &s->cases[4];
        hc_check("config-1.13", c->net == 1 && c->board == 1 && c->backend == 1 && c->settings.max_batch_size == 11 &&
                 c->n_tiers == 1 && !strcmp(s->tiers[c->tiers[0]].name, "fp32-strict"), "case 4");
        hc_check("config-1.14", s->boards[1].max_batch_size == 11, "override leaked into the board");
    } else {
        hc_fail_n("config-1.12", 3, "not run: %zu cases, not 5", s->n_cases);
    }
    hc_suite_free(s);
}

static void test_backends(void)
{
    const char *text = "nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\n"
                       "defaultTiers: [fp16]\nbackends:\n  - ref32\n  - backend: emu\n";
    hc_err err = {0};
    hc_suite *s = parse(text, &err);
    hc_check("config-5.1", s && hc_suite_check_backends(s, NULL, &err) == -1 && err.code == HC_ECONFIG &&
             strstr(err.msg, "cfg/t.yaml:6:5: unknown backend kind \"emu\"") && strstr(err.msg, "(in backends[1])"),
             "got \"%s\"", err.msg);
    hc_suite_free(s);
    s = parse("nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\n"
              "backends: [{backend: 'ref32', tiers: [fp32-strict]}]\n", &err);
    hc_check("config-5.2", s && hc_suite_check_backends(s, NULL, &err) == 0, "ref32 refused: %s", err.msg);
    hc_suite_free(s);
}

/* suites/profiles.yaml: every shipped profile on the three nets at 19x19 (docs/EMULATION.md's table). */
static void test_profiles_suite(void)
{
    hc_err err = {0};
    hc_suite *s = hc_suite_load("suites/profiles.yaml", &err);
    if (!hc_check("config-2.8", s != NULL, "load: %s", err.msg)) {
        hc_check("config-2.9", 0, "not run: suites/profiles.yaml did not load");
        return;
    }
    size_t listed = 0, missing = 0;
    const char *absent = "";
    for (const char *const *p = hc_profile_builtin_names(); *p; p++, listed++) {
        int found = 0;
        for (size_t b = 0; b < s->n_backends; b++)
            found |= strncmp(s->backends[b].spec, "emulate:", 8) == 0 && strcmp(s->backends[b].spec + 8, *p) == 0;
        if (!found && !missing++)
            absent = *p;
    }
    hc_check("config-2.9", s->n_nets == 3 && missing == 0 && s->n_cases == 3 * s->n_backends,
             "%zu nets, %zu cases for %zu backends; %zu of %zu shipped profiles missing (first %s)", s->n_nets,
             s->n_cases, s->n_backends, missing, listed, absent);
    hc_suite_free(s);
}

static void test_shipped(void)
{
    hc_err err = {0};
    hc_suite *s = hc_suite_load("suites/testgpuerror.yaml", &err);
    if (!hc_check("config-2.1", s != NULL, "load: %s", err.msg)) {
        hc_fail_n("config-2.rest", 4, "not run: suites/testgpuerror.yaml did not load"); /* 2.2-2.4, 2.7 */
        return;
    }
    /* g170: 6 boards; each transformer: rect and 19x19; two backends each. */
    hc_check("config-2.2", s->n_nets == 3 && s->n_boards == 6 && s->n_cases == (6 + 2 * 2) * 2, "cases %zu", s->n_cases);
    int exact = 0, ok = 1;
    for (size_t i = 0; i < s->n_cases; i++) {
        hc_case *c = &s->cases[i];
        exact += c->settings.require_exact_nn_len;
        if (c->settings.max_batch_size != 6 || c->settings.policy_temperature != 1.0 || c->n_tiers != 1)
            ok = 0;
        const char *tier = s->tiers[c->tiers[0]].name;
        if (strcmp(tier, strcmp(s->backends[c->backend].name, "ref32-batch-invariance") ? "fp16" : "exact"))
            ok = 0;
    }
    /* requireMaxBoardSize=True: g170 on 9 and 10x14, both transformers on 19: 4 pairs x 2. */
    hc_check("config-2.3", exact == 8 && ok, "exact %d ok %d", exact, ok);
    int rb = -1;
    for (size_t i = 0; i < s->n_boards; i++)
        if (!strcmp(s->boards[i].name, "size13-rectbuffer"))
            rb = (int)i;
    hc_check("config-2.4", rb >= 0 && s->boards[rb].nn_x_len == 18 && s->boards[rb].nn_y_len == 19, "rect buffer");
    hc_plan((unsigned)(s->n_nets + s->n_boards)); /* 2.5.N and 2.6.N */
    const char *shared = hc_shared("nets/README.md");
    if (!shared) {
        hc_skip_n("config-2.5", (unsigned)(s->n_nets + s->n_boards), "shared nets absent");
    } else {
        /* The nets' paths resolve to the shared files, and their sha256 is right. */
        for (size_t i = 0; i < s->n_nets; i++) {
            char cmd[1200], name[32], line[200] = "";
            /* coreutils' sha256sum, or macOS's shasum */
            snprintf(cmd, sizeof cmd, "sha256sum '%s' 2>/dev/null || shasum -a 256 '%s' 2>/dev/null", s->nets[i].model,
                     s->nets[i].model);
            FILE *p = popen(cmd, "r");
            if (p) {
                if (!fgets(line, sizeof line, p))
                    line[0] = 0;
                pclose(p);
            }
            snprintf(name, sizeof name, "config-2.5.%zu", i + 1);
            hc_check(name, access(s->nets[i].model, R_OK) == 0 && !strncmp(line, s->nets[i].sha256, 64),
                     "%s: sha256 %.64s vs config %s", s->nets[i].model, line, s->nets[i].sha256);
        }
        for (size_t i = 0; i < s->n_boards; i++) {
            char name[32];
            snprintf(name, sizeof name, "config-2.6.%zu", i + 1);
            hc_check(name, access(s->boards[i].positions, R_OK) == 0, "%s missing", s->boards[i].positions);
        }
    }
    hc_suite_free(s);

    hc_net_cfg n;
    hc_config_holder h = {0};
    hc_check("config-2.7", hc_net_cfg_load("nets/b7c96h6kv3.yaml", &n, &h, &err) == 0 && n.model_version == 17 &&
             !strcmp(n.model, "nets/../../shared/nets/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"), "net file: %s", err.msg);
    hc_config_holder_free(&h);
}

/* A valid skeleton; each case replaces the text between the markers. */
static const char *bad_cases[][3] = {
    /* yaml, expected substring, id */
    {"name: t\nnets:\n  - {name: n1, model: m}\nboards:\n  - name: b0\n    positions: p\n    nnBuffer: 9x9\n"
     "  - name: b1\n    positions: p\n    nnBuffer: 9\n  - name: b2\n    polcyTemperature: 1.1\n"
     "backends: [{backend: x, tiers: [fp16]}]\n",
     "cfg/t.yaml:12:5: unknown key \"polcyTemperature\" (did you mean \"policyTemperature\"?) (in boards[2])", "unknown key"},
    {"nets: [{name: n, model: m}]\nboards:\n  - name: b\n    positions: p\n    nnBuffer: [9, 9]\n"
     "backends: [{backend: x, tiers: [fp16]}]\n",
     "cfg/t.yaml:5:15: nnBuffer: expected a scalar, got a sequence (in boards[0])", "wrong type"},
    {"nets: [{name: n, model: m}]\nboards:\n  - name: b\n    positions: p\n    nnBuffer: 19y19\n"
     "backends: [{backend: x, tiers: [fp16]}]\n",
     "cfg/t.yaml:5:15: nnBuffer: expected WxH with W and H from 1 to 19, got \"19y19\" (in boards[0])", "bad size"},
    {"nets: [{name: n, model: m}]\nboards:\n  - name: b\n    positions: p\n    nnBuffer: 30x19\n"
     "backends: [{backend: x, tiers: [fp16]}]\n",
     "cfg/t.yaml:5:15: nnBuffer: NN buffer 30x19 is outside the supported sizes 1x1..19x19", "size too big"},
    {"nets: [{name: n, model: m}]\nboards:\n  - name: b\n    positions: p\n"
     "backends: [{backend: x, tiers: [fp16]}]\n",
     "cfg/t.yaml:3:5: missing key \"nnBuffer\" (in boards[0])", "missing field"},
    {"boards: []\nbackends: [x]\n", "cfg/t.yaml:1:1: missing key \"nets\"", "missing nets"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\n"
     "backends: [{backend: x, tiers: [fp8]}]\n",
     "cfg/t.yaml:3:33: unknown tier \"fp8\" (in backends[0])", "unknown tier"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\n"
     "backends: [{backend: x, tiers: [fp16]}]\nmatrix:\n  - nets: [n, q]\n",
     "cfg/t.yaml:5:15: nets: no such name \"q\" (in matrix[0])", "unknown net"},
    {"nets: [{name: n, model: m}\nboards: []\n", "cfg/t.yaml:2:1: did not find expected", "syntax error"},
    {"nets: [{name: n, model: m, name: o}]\n", "cfg/t.yaml:1:28: duplicate key \"name\" (in nets[0])", "duplicate key"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9, maxBatchSize: many}]\n",
     "cfg/t.yaml:2:61: maxBatchSize: expected an integer, got \"many\" (in boards[0])", "not an integer"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9, policyOptimism: 1.5}]\n",
     "policyOptimism: 1.5 is out of range [0, 1] (in boards[0])", "out of range"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\n"
     "backends: [{backend: x, tiers: [fp16]}]\nmatrix:\n  - nets: [n]\n    overrides: {nnBuffer: 9x9}\n",
     "cfg/t.yaml:6:17: unknown key \"nnBuffer\" (in matrix[0].overrides)", "override key"},
    {"tiers:\n  - name: mine\n    limits:\n      winrat: {max: 1}\n",
     "cfg/t.yaml:4:7: unknown key \"winrat\" (did you mean \"winrate\"?) (in tiers[0].limits)", "unknown metric"},
    {"tiers:\n  - name: mine\n    limits:\n      winrate: {max: -1%}\n",
     "cfg/t.yaml:4:22: max: expected a limit >= 0", "negative limit"},
    {"tiers:\n  - name: fp16\n    limits: {}\n", "cfg/t.yaml:2:11: tier name \"fp16\" is a built-in", "builtin name"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, sgf: s, nnBuffer: 9}]\n",
     "cfg/t.yaml:2:39: give either positions or sgf, not both (in boards[0])", "positions and sgf"},
    {"nets: [{name: n, model: m, sha256: abc}]\n", "cfg/t.yaml:1:36: sha256: expected 64 hex digits", "bad sha"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\nbackends: [x]\n",
     "cfg/t.yaml:3:12: backend \"x\" names no tiers and the suite has no defaultTiers (in backends[0])", "no tiers"},
    {"- a\n- b\n", "cfg/t.yaml:1:1: suite: expected a mapping, got a sequence", "root type"},
    {"nets: [no-such-file.yaml]\n", "cfg/t.yaml:1:8: cannot read \"cfg/no-such-file.yaml\"", "missing include"},
    {"nets: [{name: n, model: m}, {name: n, model: m2}]\n", "cfg/t.yaml:1:36: duplicate name \"n\"", "duplicate name"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\n"
     "backends: [{backend: x, tiers: [fp16]}]\nmodes: [unbatched, async]\n",
     "cfg/t.yaml:4:20: unknown mode \"async\"", "unknown mode"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9, requireExactNNLen: maybe}]\n",
     "requireExactNNLen: expected true or false, got \"maybe\"", "bad bool"},
    {"", "cfg/t.yaml:1:1: empty document", "empty"},
    {"nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\n"
     "backends: [{backend: x, tiers: [fp16]}]\nreference: cuda:fp16\n",
     "cfg/t.yaml:4:12: must be ref32 or cuda:ref32 (got \"cuda:fp16\")", "reference not the fp32 reference"},
};
enum { N_BAD_CASES = sizeof bad_cases / sizeof bad_cases[0] };

static void test_bad(void)
{
    for (size_t i = 0; i < N_BAD_CASES; i++) {
        hc_err err = {0};
        hc_suite *s = parse(bad_cases[i][0], &err);
        char name[32];
        snprintf(name, sizeof name, "config-3.%zu", i + 1);
        hc_check(name, !s && err.code == HC_ECONFIG && strstr(err.msg, bad_cases[i][1]), "%s: got \"%s\" (code %d), want \"%s\"",
                 bad_cases[i][2], err.msg, err.code, bad_cases[i][1]);
        hc_suite_free(s);
    }
}

/* Included files report their own file and line. */
static void test_include(void)
{
    const char *dir = hc_tmpdir("test_config");
    if (!hc_check("config-4.1", dir != NULL, "no tmpdir")) {
        hc_fail_n("config-4.rest", 3, "not run: no scratch directory");
        return;
    }
    char path[600], suite[600];
    snprintf(path, sizeof path, "%s/board.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs("name: b\npositions: p.jsonl.gz\nnnBuffer: 9\npda: 0.5\n", f);
    fclose(f);
    snprintf(suite, sizeof suite, "%s/suite.yaml", dir);
    f = fopen(suite, "w");
    fputs("nets: [{name: n, model: m}]\nboards: [board.yaml]\nbackends: [{backend: x, tiers: [fp16]}]\n", f);
    fclose(f);
    hc_err err = {0};
    hc_suite *s = hc_suite_load(suite, &err);
    char want[700];
    snprintf(want, sizeof want, "%s:4:1: unknown key \"pda\"", path);
    hc_check("config-4.2", !s && strstr(err.msg, want), "got \"%s\" want \"%s\"", err.msg, want);
    hc_suite_free(s);
    f = fopen(path, "w");
    fputs("name: b\npositions: p.jsonl.gz\nnnBuffer: 9\nplayoutDoublingAdvantage: 0.5\n", f);
    fclose(f);
    s = hc_suite_load(suite, &err);
    snprintf(want, sizeof want, "%s/p.jsonl.gz", dir);
    hc_check("config-4.3", s && !strcmp(s->boards[0].positions, want) && s->boards[0].pda == 0.5, "include: %s",
             s ? s->boards[0].positions : err.msg);
    hc_suite_free(s);

    snprintf(path, sizeof path, "%s/tier.yaml", dir);
    f = fopen(path, "w");
    fputs("name: t\nlimits:\n  policyKL: {p90: 0.001}\n  stScore: {avg: 2%}\n", f);
    fclose(f);
    hc_tier t;
    hc_check("config-4.4", hc_tier_cfg_load(path, &t, &err) == 0 && t.set[HC_M_POLICY_KL][HC_P_90] &&
             t.limit[HC_M_POLICY_KL][HC_P_90] == 0.001 && t.scale[HC_M_ST_SCORE][HC_P_AVG] == 100 &&
             !t.set[HC_M_WINRATE][HC_P_MAX], "tier file: %s", err.msg);
}

/* The standalone readers: a missing file is an error naming it (the reader once freed an
 * unloaded document's fields then), and the same documents parse from memory. */
static void test_standalone(void)
{
    hc_err err = {0};
    hc_net_cfg n;
    hc_board_cfg b;
    hc_tier t;
    hc_config_holder h = {0};
    hc_check("config-7.1", hc_net_cfg_load("no/such/net.yaml", &n, &h, &err) == -1 && strstr(err.msg, "no/such/net.yaml"),
             "%s", err.msg);
    hc_check("config-7.2", hc_board_cfg_load("no/such/board.yaml", &b, &h, &err) == -1 &&
             strstr(err.msg, "no/such/board.yaml"), "%s", err.msg);
    hc_check("config-5.3", hc_tier_cfg_load("no/such/tier.yaml", &t, &err) == -1 && strstr(err.msg, "no/such/tier.yaml"),
             "%s", err.msg);
    const char *net = "name: x\nmodel: x.bin.gz\nmodelVersion: 8\n";
    hc_check("config-5.4", hc_net_cfg_parse(net, strlen(net), "mem/net.yaml", &n, &h, &err) == 0 && n.model_version == 8,
             "%s", err.msg);
    const char *bad = "name: x\nmodel: x.bin.gz\nmodelVersion: 8\nextra: 1\n";
    hc_check("config-5.5", hc_net_cfg_parse(bad, strlen(bad), "mem/net.yaml", &n, &h, &err) == -1 &&
             strstr(err.msg, "mem/net.yaml:4"), "%s", err.msg);
    const char *tier = "name: mine\nbase: fp16\nlimits:\n  winrate: {max: 1%}\n";
    hc_check("config-5.6", hc_tier_cfg_parse(tier, strlen(tier), "mem/tier.yaml", &t, &err) == 0 &&
             t.set[HC_M_WINRATE][HC_P_MAX], "%s", err.msg);
    hc_config_holder_free(&h);
    /* reference: where the fp32 reference is computed (absent: NULL, the runner's ref32) */
    const char *ref = "nets: [{name: n, model: m}]\nboards: [{name: b, positions: p, nnBuffer: 9}]\n"
                      "backends: [{backend: x, tiers: [fp16]}]\nreference: cuda:ref32\n";
    hc_suite *rs = hc_suite_parse(ref, strlen(ref), "mem/suite.yaml", &err);
    hc_check("config-5.7", rs && rs->reference && !strcmp(rs->reference, "cuda:ref32"), "%s", err.msg);
    hc_suite_free(rs);
}

int main(void)
{
    /* fixed sequences (test_good, 2.1-2.4 and 2.7-2.9, 4.x, 5.x, 7.x) and one per bad case;
     * test_shipped adds one per net and board of the shipped suite */
    hc_plan(GOOD_CHECKS + 8 + N_BAD_CASES + 4 + 6 + 2);
    test_standalone();
    test_good();
    test_shipped();
    test_profiles_suite();
    test_bad();
    test_include();
    test_backends();
    return hc_test_exit();
}
