/* Nondeterminism as a check (harness/run/repeat.h; run --repeat N, a backend's repeat: and repeat_limit:):
 * the evaluation plans are permutations in other orders and batch sizes; a difference in any bit of any
 * output is found, named by position and output, and judged against a limit; through `halfcheck run`,
 * ref32 and emulate:fp16 are deterministic over 3 evaluations while fault:flaky@200 (1 evaluation in 200
 * answered slightly off) is caught with the positions named (exit 3), within a limit passes as "differs
 * within", and bad values are refused. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_test.h"
#include "harness/data/nnoutput.h"
#include "harness/run/repeat.h"

static const char *dir;
static char fake_engine[1200]; /* tests/helper_fake_analysis, absolute */
static char hc[4096];           /* tests/helper_halfcheck, absolute: the CLI with fault: */

static int is_perm(const size_t *o, size_t n)
{
    unsigned char *seen = calloc(n, 1);
    int ok = seen != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        ok = o[i] < n && !seen[o[i]];
        if (ok)
            seen[o[i]] = 1;
    }
    free(seen);
    return ok;
}

static void plans(void)
{
    enum { N = 50 };
    size_t o0[N], o1[N], o2[N];
    int b0, b1, b2;
    hc_repeat_plan(0, N, 8, 42, o0, &b0);
    hc_repeat_plan(1, N, 8, 42, o1, &b1);
    hc_repeat_plan(2, N, 8, 42, o2, &b2);
    int ident = 1, same12 = 1, ident1 = 1;
    for (size_t i = 0; i < N; i++) {
        ident &= o0[i] == i;
        ident1 &= o1[i] == i;
        same12 &= o1[i] == o2[i];
    }
    hc_check("rep-1.1", ident && b0 == 8 && b1 == 1 && b2 == 8 && is_perm(o1, N) && is_perm(o2, N) && !ident1 &&
                            !same12,
             "plans: batches %d %d %d, identity %d, k1 identity %d, k1 == k2 %d", b0, b1, b2, ident, ident1, same12);
}

static void outputs(hc_nnoutput *o, size_t n)
{
    hc_err err = {0};
    for (size_t i = 0; i < n; i++) {
        hc_nnoutput_init(&o[i], 3, 3, 1, &err);
        o[i].white_win_prob = 0.25f + 0.1f * (float)i;
        o[i].white_loss_prob = 0.7f - 0.1f * (float)i;
        for (int p = 0; p < 10; p++)
            o[i].policy_probs[p] = 0.1f;
        for (int p = 0; p < 9; p++)
            o[i].white_owner_map[p] = 0.5f;
    }
}

static void verdicts(void)
{
    hc_nnoutput a[3], b[3];
    outputs(a, 3);
    outputs(b, 3);
    hc_repeat r = {0};
    r.evaluations = 3;
    r.n = 3;
    hc_err err = {0};
    char v[2000];
    int n0 = hc_repeat_add(&r, 1, a, b, NULL, &err);
    int s = hc_repeat_verdict(&r, 0, 4, v, sizeof v);
    hc_check("rep-2.1", n0 == 0 && s == HC_REPEAT_SAME && !strncmp(v, "deterministic: 3 evaluations of 3 positions", 43),
             "%d %d %s", n0, s, v);
    b[1].policy_probs[4] = nextafterf(0.1f, 1.0f); /* one bit of one output of position 1 */
    b[2].white_owner_map[0] = 0.5f + 1e-3f;
    int n1 = hc_repeat_add(&r, 2, a, b, NULL, &err);
    s = hc_repeat_verdict(&r, 0, 4, v, sizeof v);
    hc_check("rep-2.2", n1 == 2 && s == HC_REPEAT_DIFFERS && r.n_diff == 2 && strstr(v, "nondeterministic") &&
                            strstr(v, "position 1 (policy by 7.45e-09, first in evaluation 2)") &&
                            strstr(v, "position 2 (ownership by 0.001"),
             "%d %d %s", n1, s, v);
    s = hc_repeat_verdict(&r, 2e-3, 4, v, sizeof v);
    hc_check("rep-2.3", s == HC_REPEAT_WITHIN && !strncmp(v, "differs within 0.002: ", 22), "%d %s", s, v);
    s = hc_repeat_verdict(&r, 1e-4, 4, v, sizeof v);
    hc_check("rep-2.4", s == HC_REPEAT_DIFFERS && strstr(v, "(beyond the limit)"), "%d %s", s, v);
    unsigned char skip[3] = {0, 0, 1}; /* a position either evaluation left out is not compared */
    hc_repeat q = {0};
    q.n = 3;
    int n2 = hc_repeat_add(&q, 1, a, b, skip, &err);
    hc_check("rep-2.5", n2 == 1 && q.n_diff == 1 && q.diff[0].position == 1, "%d %zu", n2, q.n_diff);
    hc_repeat_clear(&q);
    hc_repeat_clear(&r);
    for (int i = 0; i < 3; i++) {
        hc_nnoutput_free(&a[i]);
        hc_nnoutput_free(&b[i]);
    }
}

/* The repeat result of backend NAME in dir/OUT/results.json: its outcome and message ("" when absent). */
static void repeat_result(const char *out, const char *name, char *outcome, char *message, size_t len)
{
    outcome[0] = message[0] = 0;
    char path[700];
    snprintf(path, sizeof path, "%s/%s/results.json", dir, out);
    json_t *root = json_load_file(path, 0, NULL);
    json_t *rs = root ? json_object_get(root, "results") : NULL;
    for (size_t i = 0; rs && i < json_array_size(rs); i++) {
        json_t *r = json_array_get(rs, i);
        const char *b = json_string_value(json_object_get(r, "backend"));
        const char *m = json_string_value(json_object_get(r, "mode"));
        if (b && m && !strcmp(b, name) && !strcmp(m, "repeat")) {
            const char *o = json_string_value(json_object_get(r, "outcome"));
            const char *msg = json_string_value(json_object_get(r, "message"));
            snprintf(outcome, 32, "%s", o ? o : "?");
            snprintf(message, len, "%s", msg ? msg : "");
        }
    }
    json_decref(root);
}

static int suite(const char *name, const char *flaky_extra)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "name: rep\nnets:\n  - {name: n, model: net.bin.gz}\nboards:\n"
               "  - {name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9}\nbackends:\n"
               "  - {name: ref, backend: ref32, tiers: [fp32]}\n"
               "  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}\n"
               "  - {name: flaky, backend: \"fault:flaky@200:ref32\", tiers: [fp32]%s}\n"
               "  - {name: engine, backend: \"analysis:@timeout=120 %s {model} -nn {nnX} {nnY} -symmetry {symmetry} "
               "-batch {batch} -misbehave flaky\", tiers: [fp32]}\n",
            flaky_extra, fake_engine);
    return fclose(f);
}

static int run(const char *suite_name, const char *args, const char *out)
{
    return hc_shf("cd %s && rm -rf %s && %s run %s --no-cache --threads 1 --quiet --out %s %s > %s.txt 2>&1", dir, out,
                  hc, suite_name, out, args, out);
}

static void runs(void)
{
    char oc[32], msg[4000];
    int rc = hc_shf("cd %s && %s synth-net --arch res,gpool --channels 16 --seed 5 --out net.bin.gz > /dev/null 2>&1 && "
                    "%s selfplay --size 9 --games 5 --seed 3 --moves 80 --out p9.jsonl.gz > /dev/null 2>&1",
                    dir, hc, hc);
    if (rc || suite("suite.yaml", "") || suite("suite-key.yaml", ", repeat: 3") ||
        suite("suite-limit.yaml", ", repeat: 3, repeat_limit: 0.001") || suite("suite-bad.yaml", ", repeat: 1")) {
        hc_fail_n("rep-3", 9, "setup: exit %d", rc);
        return;
    }
    rc = run("suite.yaml", "--repeat 3", "out");
    repeat_result("out", "ref", oc, msg, sizeof msg);
    hc_check("rep-3.1", !strcmp(oc, "checked") && !strncmp(msg, "deterministic: 3 evaluations of 405 positions", 44),
             "ref32: %s %s", oc, msg);
    repeat_result("out", "fp16", oc, msg, sizeof msg);
    hc_check("rep-3.2", !strcmp(oc, "checked") && !strncmp(msg, "deterministic: ", 15), "emulate:fp16: %s %s", oc, msg);
    repeat_result("out", "flaky", oc, msg, sizeof msg);
    /* 3 evaluations of 405 rows, rows 199 and 399 of each off: positions 199 and 399 of the first, and
     * those two evaluations' own shuffled ones */
    hc_check("rep-3.3", rc == 3 && !strcmp(oc, "error") && !strncmp(msg, "nondeterministic: ", 18) &&
                            strstr(msg, "position 199 (value by") && strstr(msg, "position 399 (value by") &&
                            strstr(msg, "--repeat 3"),
             "fault:flaky@200: exit %d, %s %s", rc, oc, msg);
    const char *t = hc_text(hc_path(dir, "out.txt"));
    hc_check("rep-3.4", strstr(t, "n b9 flaky repeat: nondeterministic") != NULL, "console: %s", t);
    /* The stand-in analysis engine (an external engine) answering 1 evaluation in 200 slightly off:
     * each evaluation in fresh engine processes, its queries in another order, so other positions
     * are off each time and named. */
    repeat_result("out", "engine", oc, msg, sizeof msg);
    hc_check("rep-3.10", !strcmp(oc, "error") && !strncmp(msg, "nondeterministic: ", 18) &&
                             strstr(msg, "position 199 (value by") && strstr(msg, "position 399 (value by"),
             "the stand-in engine, flaky: %s %s", oc, msg);
    /* the suite key on one backend */
    rc = run("suite-key.yaml", "", "out-key");
    repeat_result("out-key", "flaky", oc, msg, sizeof msg);
    char oc2[32], msg2[4000];
    repeat_result("out-key", "ref", oc2, msg2, sizeof msg2);
    hc_check("rep-3.5", rc == 3 && !strcmp(oc, "error") && !oc2[0], "repeat: 3 on flaky: exit %d, %s; ref: %s", rc, oc,
             oc2);
    rc = run("suite-limit.yaml", "", "out-limit");
    repeat_result("out-limit", "flaky", oc, msg, sizeof msg);
    hc_check("rep-3.6", rc == 0 && !strcmp(oc, "checked") && !strncmp(msg, "differs within 0.001: ", 22),
             "repeat_limit: 0.001: exit %d, %s %s", rc, oc, msg);
    /* bad values, before anything runs */
    rc = run("suite-bad.yaml", "", "out-bad");
    t = hc_text(hc_path(dir, "out-bad.txt"));
    hc_check("rep-3.7", rc == 2 && strstr(t, "suite-bad.yaml:") && strstr(t, "repeat"), "repeat: 1: exit %d: %s", rc, t);
    rc = run("suite.yaml", "--repeat 1", "out-bad2");
    t = hc_text(hc_path(dir, "out-bad2.txt"));
    hc_check("rep-3.8", rc == 2 && strstr(t, "--repeat must be 2..100"), "--repeat 1: exit %d: %s", rc, t);
    rc = run("suite.yaml", "--repeat-limit 0.1", "out-bad3");
    t = hc_text(hc_path(dir, "out-bad3.txt"));
    hc_check("rep-3.9", rc == 2 && strstr(t, "given with --repeat"), "--repeat-limit alone: exit %d: %s", rc, t);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[1024], cwd[1024] = ".";
    snprintf(self, sizeof self, "%s", argv[0]);
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    snprintf(fake_engine, sizeof fake_engine, "%s%s%s/helper_fake_analysis", self[0] == '/' ? "" : cwd,
             self[0] == '/' ? "" : "/", slash ? self : ".");
    snprintf(hc, sizeof hc, "%s", hc_test_halfcheck_bin(argv[0])); /* the CLI with fault: */
    hc_plan(1 + 5 + 10);
    dir = hc_tmpdir("test_repeat");
    plans();
    verdicts();
    runs();
    return hc_test_exit();
}
