/* The analysis: backend (KataGo's JSON analysis engine) against its stand-in,
 * tests/helper_fake_analysis (ref32's outputs in the engine's format, batched as its NN server
 * batches, batch-only bugs and misbehaviour on demand), through `halfcheck run` and
 * `halfcheck katago`: agreement in both modes with the engine's cost reported; a planted
 * batch-only bug fails the batched check and passes the unbatched one; a "batched" case that
 * never batched (or whose batch counts are unknown) is not a pass; every error path names the
 * case and the position while the rest of the suite runs; the per-net summary. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hc_test.h"

static char dir[1024], hc[2048], helper[2048], suites[1100];

/* Runs halfcheck run on suite.yaml (written from yaml) into OUT; the exit status. */
static int run_suite(const char *yaml, const char *out, const char *env)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/suite.yaml", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -100;
    fputs(yaml, f);
    if (fclose(f))
        return -100;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s run suite.yaml --out %s --cache cache --quiet >%s.stdout 2>%s.stderr",
             dir, env, hc, out, out, out);
    return hc_sh(cmd);
}

/* The suite: the synthetic net on the 10x14 boards (140 positions), the fake engine with
 * -misbehave $FAKE_MISBEHAVE and EXTRA, plus a well-behaved second backend when good. */
static void suite_text(char *buf, size_t len, const char *extra, int good, const char *timeout)
{
    snprintf(buf, len,
             "name: analysis-test\n"
             "nets:\n  - {name: net, model: net.bin.gz}\n"
             "boards:\n  - %s/boards/size10x14.yaml\n"
             "backends:\n"
             "  - name: fake\n"
             "    backend: \"analysis:@timeout=%s %s {model} -nn {nnX} {nnY} -symmetry {symmetry} -batch {batch} "
             "-misbehave $FAKE_MISBEHAVE %s\"\n"
             "    tiers: [fp32]\n"
             "%s"
             "modes: [unbatched, batched]\n",
             suites, timeout, helper, extra,
             good ? "  - name: good\n    backend: \"analysis:@timeout=60 HELPER {model} -nn {nnX} {nnY} -symmetry "
                    "{symmetry} -batch {batch} -misbehave none\"\n    tiers: [fp32]\n"
                  : "");
    char *h = strstr(buf, "HELPER");
    if (h) {
        char tail[4096];
        snprintf(tail, sizeof tail, "%s", h + 6);
        snprintf(h, len - (size_t)(h - buf), "%s%s", helper, tail);
    }
}

/* The JSON text of the result for backend and mode in results.json (from its "backend" to the
 * next result), or "" — enough for strstr checks on one result. */
static char *result_of(const char *json, const char *backend, const char *mode)
{
    static char buf[1 << 20];
    buf[0] = '\0';
    char key[128];
    snprintf(key, sizeof key, "\"backend\": \"%s\",\n   \"mode\": \"%s\"", backend, mode);
    const char *p = strstr(json, key);
    if (!p)
        return buf;
    const char *end = strstr(p + 1, "\"backend\": ");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_plan(37);
    char cwd[1024], self[1024];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(hc, sizeof hc, "%s", hc_halfcheck_bin());
    snprintf(helper, sizeof helper, "%s%s%s/helper_fake_analysis", self[0] == '/' ? "" : cwd,
             self[0] == '/' ? "" : "/", dirname(self));
    const char *t = hc_tmpdir("test_analysis");
    snprintf(dir, sizeof dir, "%s/%s", cwd, t ? t : "build/tmp/test_analysis");
    int ok = hc_shf("mkdir -p %s && cd %s && rm -rf out* cache start && %s synth-net --arch b6c96 --seed 3 --out "
                    "net.bin.gz >/dev/null 2>&1 && %s synth-net --arch v17tf --seed 4 --out net2.bin.gz >/dev/null 2>&1",
                    dir, dir, hc, hc) == 0;
    snprintf(suites, sizeof suites, "%s/suites", cwd);
    char data[1200];
    snprintf(data, sizeof data, "%s/boards/size10x14.yaml", suites);
    if (!hc_check("analysis-0.1", ok && access(helper, X_OK) == 0 && access(data, R_OK) == 0,
                  "cannot set up %s (helper %s, boards %s)", dir, helper, data)) {
        hc_fail_rest("analysis-1..6", "not run: no set-up (analysis-0.1 failed)");
        return hc_test_exit();
    }
    static char yaml[8192];

    /* 1. A well-behaved engine: both modes pass, with the engine's cost; batched it batched. */
    suite_text(yaml, sizeof yaml, "", 0, "60");
    int rc = run_suite(yaml, "out1", "FAKE_MISBEHAVE=none");
    char *res = hc_slurp(hc_path(dir, "out1/results.json"));
    const char *js = res ? res : "";
    hc_check("analysis-1.1", rc == 0, "a well-behaved engine: exit %d: %s", rc, hc_text(hc_path(dir, "out1.stdout")));
    char *u = strdup(result_of(js, "fake", "unbatched")), *b = strdup(result_of(js, "fake", "batched"));
    hc_check("analysis-1.2", u && strstr(u, "\"outcome\": \"checked\"") && strstr(u, "\"nnRows\": 140") &&
                                 strstr(u, "\"nnBatches\": 140") && strstr(u, "\"avgBatchSize\": 1.0") &&
                                 strstr(u, "\"version\": \"fake-1.0\"") && strstr(u, "\"processes\": 8"),
             "unbatched: one row per batch, 8 engines (one per symmetry): %.600s", u ? u : "");
    double avg = 0, rss = 0, pps = 0;
    const char *a = b ? strstr(b, "\"avgBatchSize\": ") : NULL;
    if (a)
        avg = atof(a + 16);
    const char *r = b ? strstr(b, "\"peakRssKiB\": ") : NULL;
    if (r)
        rss = atof(r + 14);
    const char *ps = b ? strstr(b, "\"positionsPerSecond\": ") : NULL;
    if (ps)
        pps = atof(ps + 22);
    hc_check("analysis-1.3", b && strstr(b, "\"outcome\": \"checked\"") && strstr(b, "\"nnRows\": 140") && avg > 1.05 &&
                                 strstr(b, "\"batching\": true"),
             "batched: the engine averaged %g rows per batch: %.600s", avg, b ? b : "");
    hc_check("analysis-1.4", rss > 1000 && rss < 4e6 && pps > 0 && strstr(b, "\"positions\": 140"),
             "batched: peak RSS %g KiB, %g positions/s from the OS and halfcheck's clock", rss, pps);
    /* Batches fill: the backend keeps enough queries in flight that the engine's batches
     * average at least 80% of the largest it forms (its maxBatchSize, the board's 6). */
    hc_check("analysis-1.10", b && strstr(b, "\"maxBatchSize\": 6") && avg >= 0.8 * 6 && !strstr(b, "batchFillNote"),
             "batched: %g rows per batch of 6 (at least 4.8 wanted): %.600s", avg, b ? b : "");
    free(u);
    free(b);
    const char *junit = hc_text(hc_path(dir, "out1/junit.xml"));
    hc_check("analysis-1.5", strstr(junit, "engine.peakRssKiB") && strstr(junit, "engine.positionsPerSecond") &&
                                 strstr(junit, "engine.avgBatchSize") && strstr(junit, "outputResolution.policy"),
             "JUnit properties: the engine's cost and the declared resolution");
    const char *md = hc_text(hc_path(dir, "out1/report.md"));
    hc_check("analysis-1.6", strstr(md, "- engine: peak RSS ") && strstr(md, "rows per batch (140 rows in 140 batches)") &&
                                 strstr(md, " of 6 rows per batch (140 rows in ") && !strstr(md, "rarely exercised"),
             "report.md: the engine line");
    const char *sum = hc_text(hc_path(dir, "out1/summary.md"));
    hc_check("analysis-1.7", strstr(sum, "| net | 8 | fake | ") && strstr(sum, "PASS (2 passed)") && strstr(sum, " MiB |") &&
                                 strstr(sum, " of 6 ") && !strstr(sum, "rarely exercised"),
             "summary.md: one row for the net: %s", sum);
    const char *html = hc_text(hc_path(dir, "out1/report.html"));
    hc_check("analysis-1.8", strstr(html, "Engine cost") && strstr(html, "rows per batch"), "report.html: engine cost");
    /* results.json read back by merge: the same summary. */
    rc = hc_shf("cd %s && %s merge out1 --out outm >/dev/null 2>&1", dir, hc);
    char *s1 = hc_slurp(hc_path(dir, "out1/summary.md")), *s2 = hc_slurp(hc_path(dir, "outm/summary.md"));
    hc_check("analysis-1.9", rc == 0 && s1 && s2 && strcmp(s1, s2) == 0, "merge keeps the engine's figures: exit %d",
             rc);
    free(s1);
    free(s2);
    free(res);

    /* 2. Batch-only bugs: the batched check fails a tier (exit 1, not a crash) with the rows
     * named in results.json, the JUnit failure and summary.md; the unbatched one passes. */
    static const char *const bugs[] = {"swap", "stale", "repeat", "mask"};
    static const char *const kinds[] = {"\"kind\": \"swapped\"", "\"kind\": \"stale\"", "\"kind\": \"stale\"",
                                        "\"kind\": \"legal\""};
    static const char *const says[] = {"(rows swapped", "(a stale row", "(a stale row", "illegal move"};
    for (int k = 0; k < 4; k++) {
        char out[16], env[64], name[32];
        snprintf(out, sizeof out, "out-%s", bugs[k]);
        snprintf(env, sizeof env, "FAKE_MISBEHAVE=%s", bugs[k]);
        rc = run_suite(yaml, out, env);
        res = hc_slurp(hc_path(dir, hc_path(out, "results.json")));
        js = res ? res : "";
        u = strdup(result_of(js, "fake", "unbatched"));
        b = strdup(result_of(js, "fake", "batched"));
        int u_pass = u && strstr(u, "\"outcome\": \"checked\"") && strstr(u, "\"pass\": true") &&
                     !strstr(u, "\"pass\": false");
        int b_bad = b && strstr(b, "\"outcome\": \"checked\"") && strstr(b, "\"pass\": false") &&
                    !strstr(b, "\"error\": \"") && strstr(b, "\"diagnosis\": [") && strstr(b, kinds[k]);
        /* Every finding is of the planted kind. */
        const char *kk = b ? strstr(b, "\"kind\": \"") : NULL;
        for (; kk && b_bad; kk = strstr(kk + 1, "\"kind\": \""))
            b_bad = strncmp(kk, kinds[k], strlen(kinds[k])) == 0;
        const char *ju = hc_text(hc_path(dir, hc_path(out, "junit.xml")));
        const char *sm = hc_text(hc_path(dir, hc_path(out, "summary.md")));
        const char *fm = strstr(ju, "type=\"TierExceeded\"") ? strstr(ju, "outputs of other positions: position ") : NULL;
        int named = fm && strstr(fm, says[k]) && strstr(sm, "· batched: outputs of other positions: position ") &&
                    strstr(sm, says[k]);
        snprintf(name, sizeof name, "analysis-2.%d", k + 1);
        hc_check(name, rc == 1 && u_pass && b_bad && named,
                 "-misbehave %s: exit %d, unbatched passes %d, batched fails a tier with only %s findings %d, named in "
                 "junit.xml and summary.md %d: %.500s", bugs[k], rc, u_pass, kinds[k], b_bad, named, b ? b : "");
        free(u);
        free(b);
        free(res);
    }
    /* merge reads the findings back: the same summary, the same diagnosis in results.json. */
    rc = hc_shf("cd %s && %s merge out-swap --out outm-swap >/dev/null 2>&1", dir, hc);
    char *s3 = hc_slurp(hc_path(dir, "out-swap/summary.md")), *s4 = hc_slurp(hc_path(dir, "outm-swap/summary.md"));
    const char *mj = hc_text(hc_path(dir, "outm-swap/results.json"));
    hc_check("analysis-2.5", rc == 1 && s3 && s4 && strcmp(s3, s4) == 0 && strstr(s4, "(rows swapped") &&
                                 strstr(mj, "\"diagnosis\": [") && strstr(mj, "\"kind\": \"swapped\""),
             "merge keeps the diagnosis: exit %d", rc);
    free(s3);
    free(s4);

    /* 3. A "batched" run that never batched, or whose counts are unknown, is no pass. */
    rc = run_suite(yaml, "out-nobatch", "FAKE_MISBEHAVE=nobatch");
    res = hc_slurp(hc_path(dir, "out-nobatch/results.json"));
    b = strdup(result_of(res ? res : "", "fake", "batched"));
    hc_check("analysis-3.1", rc == 3 && b && strstr(b, "\"outcome\": \"error\"") && strstr(b, "not a batched check") &&
                                 strstr(b, "averaged 1.000 rows per batch"),
             "never batched: exit %d: %.300s", rc, b ? b : "");
    free(b);
    free(res);
    /* An engine whose batches stay at two rows of the six it could form: still a batched check,
     * with a note in every report that rows 4-6 were rarely exercised. */
    rc = run_suite(yaml, "out-cap", "FAKE_MISBEHAVE=none HC_FAKE_ANALYSIS_BATCH_CAP=2");
    res = hc_slurp(hc_path(dir, "out-cap/results.json"));
    b = strdup(result_of(res ? res : "", "fake", "batched"));
    const char *note = " of 6 rows: rows 4-6 rarely exercised";
    const char *cmd_ = hc_text(hc_path(dir, "out-cap/report.md")), *csum = hc_text(hc_path(dir, "out-cap/summary.md"));
    hc_check("analysis-3.3", rc == 0 && b && strstr(b, "\"outcome\": \"checked\"") && strstr(b, "\"maxBatchSize\": 6") &&
                                 strstr(b, note) && strstr(cmd_, note) && strstr(csum, "- net, fake, batched: ") &&
                                 strstr(csum, note),
             "batches capped at 2 of 6: exit %d: %.400s\nsummary: %s", rc, b ? b : "", csum);
    free(b);
    free(res);
    /* An engine that stops taking queries while its answers are not read (KataGo's analysis engine
     * does; the stand-in with 4 KiB pipes and reads): the backend feeds and reads each engine side
     * by side, so a call of more queries than the pipes hold neither deadlocks nor times out. */
    rc = run_suite(yaml, "out-pipes", "FAKE_MISBEHAVE=none HC_FAKE_ANALYSIS_SMALL_PIPES=1");
    res = hc_slurp(hc_path(dir, "out-pipes/results.json"));
    b = strdup(result_of(res ? res : "", "fake", "batched"));
    hc_check("analysis-3.5", rc == 0 && b && strstr(b, "\"outcome\": \"checked\"") && strstr(b, "\"pass\": true"),
             "small pipes: exit %d: %.400s", rc, b ? b : "");
    free(b);
    free(res);
    /* A position the engine cannot take (komi 7.3: not a multiple of 0.5) among the 140: it is
     * skipped, the call it was in is retried in halves (not position by position), and no
     * engine is restarted for it, so the batched case still batches and its counts are known. */
    rc = hc_shf("cd %s && zcat %s/data/testgpuerror/size10x14.jsonl.gz | sed '70s/komi7.5/komi7.3/; "
                "70s/\"komi\":7.5/\"komi\":7.3/' | gzip >skip.jsonl.gz && printf 'name: skipboard\\npositions: "
                "skip.jsonl.gz\\nnnBuffer: 10x14\\nmaxBatchSize: 6\\n' >skipboard.yaml", dir, suites);
    snprintf(yaml, sizeof yaml,
             "name: analysis-test\nnets:\n  - {name: net, model: net.bin.gz}\nboards:\n  - skipboard.yaml\n"
             "backends:\n  - name: fake\n    backend: \"analysis:@timeout=60 %s {model} -nn {nnX} {nnY} -symmetry "
             "{symmetry} -batch {batch} -misbehave none\"\n    tiers: [fp32]\nmodes: [unbatched, batched]\n", helper);
    rc = rc ? rc : run_suite(yaml, "out-skip", "");
    res = hc_slurp(hc_path(dir, "out-skip/results.json"));
    b = strdup(result_of(res ? res : "", "fake", "batched"));
    avg = 0;
    a = b ? strstr(b, "\"avgBatchSize\": ") : NULL;
    if (a)
        avg = atof(a + 16);
    hc_check("analysis-3.4", rc == 0 && b && strstr(b, "\"outcome\": \"checked\"") && strstr(b, "\"nnRows\": 139") &&
                                 strstr(b, "komi 7.3: the analysis engine takes") && avg > 2,
             "one position refused: exit %d, %g rows per batch: %.500s", rc, avg, b ? b : "");
    free(b);
    free(res);
    suite_text(yaml, sizeof yaml, "-no-stats", 0, "60");
    rc = run_suite(yaml, "out-nostats", "FAKE_MISBEHAVE=none");
    res = hc_slurp(hc_path(dir, "out-nostats/results.json"));
    u = strdup(result_of(res ? res : "", "fake", "unbatched"));
    b = strdup(result_of(res ? res : "", "fake", "batched"));
    hc_check("analysis-3.2", rc == 3 && b && strstr(b, "\"outcome\": \"error\"") && strstr(b, "are unknown") && u &&
                                 strstr(u, "\"outcome\": \"checked\"") && strstr(u, "\"nnRows\": null"),
             "no batch counts in the log: exit %d: %.300s", rc, b ? b : "");
    free(u);
    free(b);
    free(res);

    /* 4. Error paths: a clear error naming the case and the position; the good backend of the
     * same suite still runs and passes. */
    static const struct {
        const char *what, *want;
    } errs[] = {
        {"die", "exited with status 3"},
        {"garbage", "malformed answer (not a JSON object"},
        {"twice", "answered twice"},
        {"never", "timed out"},
        {"hang", "timed out"},
        {"die-at-start", "cannot load the model (on purpose)"},
    };
    for (size_t k = 0; k < sizeof errs / sizeof errs[0]; k++) {
        char out[32], env[64], name[32];
        /* A short wait only where the engine never answers: a loaded machine must not turn the
         * other failures into timeouts. */
        suite_text(yaml, sizeof yaml, "", 1, strcmp(errs[k].want, "timed out") ? "60" : "3");
        snprintf(out, sizeof out, "out-%s", errs[k].what);
        snprintf(env, sizeof env, "FAKE_MISBEHAVE=%s", errs[k].what);
        rc = run_suite(yaml, out, env);
        res = hc_slurp(hc_path(dir, hc_path(out, "results.json")));
        js = res ? res : "";
        int bad_ok = 1;
        for (int m = 0; m < 2; m++) {
            const char *one = result_of(js, "fake", m ? "batched" : "unbatched");
            bad_ok &= strstr(one, "\"outcome\": \"error\"") && strstr(one, errs[k].want) &&
                      (strstr(one, "position index") || strstr(one, "starting the symmetry")) &&
                      strstr(one, "rerun: halfcheck run suite.yaml --only net=net,board=size10x14,backend=fake");
        }
        int good_ok = 1;
        for (int m = 0; m < 2; m++) {
            const char *one = result_of(js, "good", m ? "batched" : "unbatched");
            good_ok &= strstr(one, "\"outcome\": \"checked\"") && strstr(one, "\"pass\": true");
        }
        snprintf(name, sizeof name, "analysis-4.%zu", k + 1);
        hc_check(name, rc == 3 && bad_ok && good_ok, "-misbehave %s: exit %d, errors named %d, the other backend ran %d: %.400s",
                 errs[k].what, rc, bad_ok, good_ok, result_of(js, "fake", "batched"));
        free(res);
    }
    /* No engine is left behind. */
    /* This test's engines only (their command line names the net in dir): other programs' fake engines
     * may run on the same machine. */
    char pg[1400];
    snprintf(pg, sizeof pg, "! pgrep -f '[h]elper_fake_analysis .*%s/' >/dev/null", dir);
    hc_check("analysis-4.7", hc_sh(pg) == 0, "a fake engine outlived its case");

    /* 5. The spec: {symmetry} is required (the engine takes no symmetry per query). */
    rc = hc_shf("cd %s && %s eval --net net.bin.gz --positions %s/data/testgpuerror/size10x14.jsonl.gz "
                "--nn 10x14 --out e.jsonl --backend 'analysis:%s {model}' >e.out 2>&1",
                dir, hc, suites, helper);
    const char *eo = hc_text(hc_path(dir, "e.out"));
    hc_check("analysis-5.1", rc != 0 && strstr(eo, "must contain {symmetry}"), "no {symmetry}: exit %d: %s", rc, eo);

    /* 6. halfcheck katago: a stand-in katago whose `analysis` is the fake engine; two nets
     * (--model twice), unbatched and batched by default, one report set and the per-net table. */
    char path[1200];
    snprintf(path, sizeof path, "%s/fakekatago", dir);
    ok = hc_write_script(path,
        "[ \"$1\" = analysis ] || { echo \"fakekatago: not an analysis command: $1\" >&2; exit 2; }\n"
        "shift\n"
        "model= cfg= ov=\n"
        "while [ $# -gt 0 ]; do\n"
        "  case $1 in -model) model=$2 ;; -config) cfg=$2 ;; -override-config) ov=\"$ov,$2\" ;;\n"
        "  *) echo \"fakekatago: unknown argument $1\" >&2; exit 2 ;; esac\n"
        "  shift 2\n"
        "done\n"
        "[ -f \"$cfg\" ] && [ -f \"$model\" ] || { echo \"fakekatago: no config or model\" >&2; exit 2; }\n"
        "get() { echo \"$ov\" | tr , '\\n' | sed -n \"s/^$1=//p\" | tail -1; }\n"
        "[ \"$(get nnCacheSizePowerOfTwo)\" = -1 ] || { echo 'fakekatago: the NN cache is on' >&2; exit 2; }\n"
        "[ \"$(get numEigenThreadsPerModel)\" = 1 ] || { echo 'fakekatago: no --override' >&2; exit 2; }\n"
        "exec '%s' \"$model\" -nn \"$(get maxBoardXSizeForNNBuffer)\" \"$(get maxBoardYSizeForNNBuffer)\" "
        "-symmetry \"$(get nnForcedSymmetry)\" -batch \"$(get nnMaxBatchSize)\"\n",
        helper) == 0;
    rc = ok ? hc_shf("cd %s && mkdir -p start && echo 'logDir = logs' >a.cfg && cd start && %s katago --katago "
                     "../fakekatago --config ../a.cfg --model ../net.bin.gz --model ../net2.bin.gz --override "
                     "numEigenThreadsPerModel=1 --tier fp32 --only board=size10x14 --out ../outk --cache ../cache "
                     ">../k.stdout 2>../k.stderr",
                     dir, hc)
            : -100;
    const char *ks = hc_text(hc_path(dir, "k.stdout"));
    hc_check("analysis-6.1", rc == 0, "halfcheck katago with two nets: exit %d: %s", rc,
             hc_text(hc_path(dir, "k.stderr")));
    hc_check("analysis-6.2", strstr(ks, "| net | 8 | katago-analysis | ") && strstr(ks, "| net2 | 17 | katago-analysis | ") &&
                                 strstr(ks, "PASS (2 passed)") && strstr(ks, "rows per batch (batched)"),
             "the per-net table on stdout: %s", ks);
    res = hc_slurp(hc_path(dir, "outk/results.json"));
    b = strdup(result_of(res ? res : "", "katago-analysis", "batched"));
    hc_check("analysis-6.3", b && strstr(b, "\"outcome\": \"checked\"") && strstr(b, "\"batching\": true"),
             "katago's batched case: %.300s", b ? b : "");
    free(b);
    free(res);
    const char *ksuite = hc_text(hc_path(dir, "outk/katago-suite.yaml"));
    hc_check("analysis-6.4", strstr(ksuite, "rect-weirdsettings.yaml") && strstr(ksuite, "size9-rectbuffer-optimism.yaml") &&
                                 strstr(ksuite, "modes: [unbatched, batched]") &&
                                 strstr(ksuite, "{nets: [\"net\"], boards: [\"size9\"], overrides: {requireExactNNLen: true}}"),
             "the suite gives each net its family's boards: %.400s", ksuite);
    /* A directory of nets beside a file named as one that is none (by content): the nets are
     * checked, the file is said to be skipped. */
    rc = hc_shf("cd %s && mkdir -p nets && cp net.bin.gz nets/a.bin.gz && cp net2.bin.gz nets/b.bin.gz && "
                "echo x >nets/notes.txt.gz && cd start && %s katago --katago ../fakekatago --config ../a.cfg --model "
                "../nets --override numEigenThreadsPerModel=1 --tier fp32 --only board=size10x14 --out ../outd "
                "--cache ../cache --quiet >../d.stdout 2>../d.stderr",
                dir, hc);
    const char *de = hc_text(hc_path(dir, "d.stderr"));
    hc_check("analysis-6.5", strstr(de, "skipped notes.txt.gz: not a model") != NULL,
             "a directory with a file that is not a net: exit %d: %s", rc, de);
    const char *ds = hc_text(hc_path(dir, "outd/summary.md"));
    hc_check("analysis-6.6", rc == 0 && strstr(ds, "| a | 8 |") && strstr(ds, "| b | 17 |"),
             "a directory of nets: exit %d: %s", rc, ds);
    rc = hc_shf("cd %s/start && %s katago --katago ../fakekatago --config ../a.cfg --model ../net.bin.gz --path nope "
                ">../p.stdout 2>../p.stderr",
                dir, hc);
    hc_check("analysis-6.7", rc == 2 && strstr(hc_text(hc_path(dir, "p.stderr")), "--path nope"), "--path nope: exit %d",
             rc);
    hc_check("analysis-6.8", hc_shf("[ -z \"$(ls -A %s/start)\" ]", dir) == 0,
             "the start directory is not empty: the engine or halfcheck left files there");
    return hc_test_exit();
}
