/* Reruns reproduce (issue 29): the rerun line of a failing case, as stderr, report.md and
 * report.html print it, carries every option that changes what is evaluated or how it is judged
 * (--net PATH, --net NAME=PATH, --net DIR, --seed, --allow-skips), and running it exactly as
 * printed (from the same directory, `halfcheck` on PATH) gives the same figures. The same for a
 * ci/sweep job's line. Data made by halfcheck (synth-net, selfplay). */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_test.h"
#include "reports/results.h"

static char hc[1024], root[1024], dir[1024], bindir[1100];

/* The first "rerun: ..." command in file (the rest of its line), malloc'd, or NULL. */
static char *rerun_line(const char *file)
{
    char *t = hc_slurp(hc_path(dir, file));
    char *p = t ? strstr(t, "rerun: halfcheck") : NULL;
    char *out = NULL;
    if (p) {
        p += strlen("rerun: ");
        size_t n = strcspn(p, "\n<");
        out = malloc(n + 1);
        memcpy(out, p, n);
        out[n] = 0;
    }
    free(t);
    return out;
}

/* Whether results.json in sub and in sub2 hold the same figures for their common results (the
 * rerun holds one case, the first run maybe more). */
static int same_figures(const char *sub, const char *sub2, char *why, size_t len)
{
    char pa[2048], pb[2048];
    hc_err err = {0};
    snprintf(pa, sizeof pa, "%s/%s/results.json", dir, sub);
    snprintf(pb, sizeof pb, "%s/%s/results.json", dir, sub2);
    hc_results_doc *da = hc_results_read_json(pa, &err), *db = da ? hc_results_read_json(pb, &err) : NULL;
    int ok = da && db, common = 0;
    if (!ok)
        snprintf(why, len, "%s", err.msg);
    const hc_results *a = da ? hc_results_doc_results(da) : NULL, *b = db ? hc_results_doc_results(db) : NULL;
    for (size_t i = 0; ok && i < b->n; i++) {
        const hc_result *y = &b->items[i];
        for (size_t k = 0; k < a->n; k++) {
            const hc_result *x = &a->items[k];
            if (strcmp(x->net, y->net) || strcmp(x->board, y->board) || strcmp(x->backend, y->backend) ||
                strcmp(x->mode, y->mode))
                continue;
            common++;
            if (!x->stats || !y->stats || x->stats->n_positions != y->stats->n_positions) {
                ok = 0;
                snprintf(why, len, "%s %s: no stats or other positions", y->backend, y->mode);
            }
            for (int m = 0; ok && m < HC_M_COUNT; m++)
                if (memcmp(x->stats->m[m].v, y->stats->m[m].v, sizeof x->stats->m[m].v)) {
                    ok = 0;
                    snprintf(why, len, "%s %s: %s differs", y->backend, y->mode, hc_metric_infos[m].name);
                }
        }
    }
    if (ok && common == 0) {
        ok = 0;
        snprintf(why, len, "no result in common");
    }
    hc_results_doc_free(da);
    hc_results_doc_free(db);
    return ok;
}

/* Whether every batched result of sub2 has a twin in sub with the same figures (every metric,
 * every percentile, bit for bit) and, when an engine reported them, the same batch counts:
 * batches that halfcheck deals (a seeded shuffle) reproduce exactly. *n_batched counts them. */
static int same_batched(const char *sub, const char *sub2, int *n_batched, char *why, size_t len)
{
    char pa[2048], pb[2048];
    hc_err err = {0};
    snprintf(pa, sizeof pa, "%s/%s/results.json", dir, sub);
    snprintf(pb, sizeof pb, "%s/%s/results.json", dir, sub2);
    hc_results_doc *da = hc_results_read_json(pa, &err), *db = da ? hc_results_read_json(pb, &err) : NULL;
    int ok = da && db;
    *n_batched = 0;
    if (!ok)
        snprintf(why, len, "%s", err.msg);
    const hc_results *a = da ? hc_results_doc_results(da) : NULL, *b = db ? hc_results_doc_results(db) : NULL;
    for (size_t i = 0; ok && i < b->n; i++) {
        const hc_result *y = &b->items[i];
        if (strcmp(y->mode, "batched"))
            continue;
        const hc_result *x = NULL;
        for (size_t k = 0; k < a->n && !x; k++)
            if (!strcmp(a->items[k].backend, y->backend) && !strcmp(a->items[k].mode, "batched") &&
                !strcmp(a->items[k].board, y->board) && !strcmp(a->items[k].net, y->net))
                x = &a->items[k];
        ok = x && x->stats && y->stats && x->stats->n_positions == y->stats->n_positions;
        for (int m = 0; ok && m < HC_M_COUNT; m++)
            ok = !memcmp(x->stats->m[m].v, y->stats->m[m].v, sizeof x->stats->m[m].v);
        if (ok && (x->has_engine || y->has_engine))
            ok = x->has_engine && y->has_engine && x->engine.nn_batches == y->engine.nn_batches &&
                 x->engine.nn_rows == y->engine.nn_rows && !x->engine.engine_batches;
        if (!ok)
            snprintf(why, len, "%s batched: %s", y->backend, !x ? "not in the first run" : "figures or batches differ");
        (*n_batched)++;
    }
    hc_results_doc_free(da);
    hc_results_doc_free(db);
    return ok;
}

/* Runs run's command (with its outputs in sub), then the rerun line its stderr printed, as
 * printed, from dir with halfcheck on PATH; checks both (N.1 the line carries want, and report.md
 * and report.html print the same line; N.2 the rerun exits as the run did, N.3 same figures). */
static void check_rerun(int n, const char *sub, const char *args, const char *const *want, int n_want)
{
    char name[32], why[512] = "";
    int rc = hc_shf("cd %s && rm -rf %s halfcheck-out && %s run suite.yaml %s --out %s --cache cache --quiet "
                    ">/dev/null 2>%s.err", dir, sub, hc, args, sub, sub);
    char errf[64], md[64], html[64];
    snprintf(errf, sizeof errf, "%s.err", sub);
    snprintf(md, sizeof md, "%s/report.md", sub);
    snprintf(html, sizeof html, "%s/report.html", sub);
    char *line = rerun_line(errf), *mdl = rerun_line(md);
    int ok = rc == 1 && line;
    for (int i = 0; ok && i < n_want; i++)
        if (!strstr(line, want[i]))
            ok = 0;
    const char *ht = hc_text(hc_path(dir, html));
    snprintf(name, sizeof name, "rerun-%d.1", n);
    hc_check(name, ok && mdl && !strcmp(line, mdl) && strstr(ht, line),
             "%s: exit %d (want 1); rerun line \"%s\" (want %s), report.md's \"%s\"; stderr: %s", args, rc,
             line ? line : "", want[0], mdl ? mdl : "", hc_text(hc_path(dir, errf)));
    char rsub[64];
    snprintf(rsub, sizeof rsub, "%s-rerun", sub);
    int rc2 = line ? hc_shf("cd %s && rm -rf halfcheck-out %s && PATH=%s:$PATH %s >/dev/null 2>%s.err; r=$?; "
                            "mv halfcheck-out %s 2>/dev/null; exit $r", dir, rsub, bindir, line, rsub, rsub) : -2;
    snprintf(name, sizeof name, "rerun-%d.2", n);
    hc_check(name, rc2 == rc, "the rerun line \"%s\" exited %d, the run %d: %s", line ? line : "", rc2, rc,
             hc_text(hc_path(dir, errf)));
    snprintf(name, sizeof name, "rerun-%d.3", n);
    hc_check(name, rc2 == rc && same_figures(sub, rsub, why, sizeof why), "the rerun's figures differ: %s", why);
    free(line);
    free(mdl);
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_plan(1 + 5 * 3 + 3 + 4 + 2);
    if (!getcwd(root, sizeof root - 64))
        return 1;
    snprintf(hc, sizeof hc, "%s", hc_halfcheck_bin());
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_rerun"));
    snprintf(bindir, sizeof bindir, "%s/bin", dir);
    /* The suite names a net file that does not exist (nets/small.bin.gz): every run gives it with
     * --net. emulate:fp16 against the exact tier fails, so every run has a failing case. */
    int rc = hc_shf("cd %s && rm -rf bin mine nets cache sw* && mkdir -p bin mine && ln -s %s bin/halfcheck && "
                    "%s synth-net --arch v7 --seed 5 --out mine/small.bin.gz 2>/dev/null && "
                    "cp mine/small.bin.gz other.bin.gz && "
                    "%s selfplay --size 7 --games 2 --seed 3 --moves 30 --stride 3 --out p7.jsonl.gz 2>/dev/null && "
                    "printf '%%s\\n' 'name: rerun-test' 'nets: [{name: small, model: nets/small.bin.gz}]' "
                    "'boards: [{name: b7, positions: p7.jsonl.gz, nnBuffer: 7x7, maxBatchSize: 3}]' 'backends:' "
                    "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [exact]}' "
                    "'  - {name: gone, backend: \"gtp:$HC_RERUN_UNSET_ENGINE\", tiers: [fp32]}' > suite.yaml",
                    dir, hc, hc, hc);
    if (!hc_check("rerun-0.1", rc == 0, "could not make the test data in %s", dir))
        return hc_fail_rest("rerun-1", "not run: no test data"), hc_test_exit();

    static const char *const w1[] = {"--net small=", "other.bin.gz", "--only"};
    check_rerun(1, "r1", "--net small=other.bin.gz", w1, 3);
    static const char *const w2[] = {"--net other.bin.gz"};
    check_rerun(2, "r2", "--net other.bin.gz", w2, 1);
    static const char *const w3[] = {"--net mine"};
    check_rerun(3, "r3", "--net mine", w3, 1);
    static const char *const w4[] = {"--seed 7", "--net other.bin.gz"};
    check_rerun(4, "r4", "--net other.bin.gz --seed 7", w4, 2);
    static const char *const w5[] = {"--allow-skips", "--net other.bin.gz"};
    check_rerun(5, "r5", "--net other.bin.gz --allow-skips", w5, 2);

    /* A sweep's jobs: the merged report.md's line carries the --net given after --, and reruns. */
    rc = hc_shf("cd %s && HALFCHECK=%s %s/ci/sweep suite.yaml -j 1 --out sw --cache cache -- --net small=other.bin.gz "
                ">/dev/null 2>sw.err", dir, hc, root);
    char *line = rerun_line("sw/merged/report.md");
    hc_check("rerun-6.1", rc == 1 && line && strstr(line, "--net small=other.bin.gz"),
             "ci/sweep exited %d (want 1); merged report.md's rerun line: %s", rc, line ? line : "(none)");
    int rc2 = line ? hc_shf("cd %s && rm -rf halfcheck-out sw-rerun && PATH=%s:$PATH %s >/dev/null 2>sw-rerun.err; "
                            "r=$?; mv halfcheck-out sw-rerun; exit $r", dir, bindir, line) : -2;
    hc_check("rerun-6.2", rc2 == 1, "the sweep's rerun line exited %d: %s", rc2, hc_text(hc_path(dir, "sw-rerun.err")));
    char why[512] = "";
    hc_check("rerun-6.3", rc2 == 1 && same_figures("sw/merged", "sw-rerun", why, sizeof why),
             "the sweep's rerun figures differ: %s", why);
    free(line);

    /* The final line is the last of the combined output, whatever the buffering (a pipe). */
    rc = hc_shf("cd %s && %s run suite.yaml --net other.bin.gz --out r7 --cache cache 2>&1 | cat > r7.txt && "
                "tail -n 1 r7.txt | grep -q '^halfcheck run: 4 checks: '", dir, hc);
    hc_check("rerun-7.1", rc == 0, "run's final line is not the last of stdout and stderr in one pipe: %s",
             hc_text(hc_path(dir, "r7.txt")));
    rc = hc_shf("cd %s && %s run suite.yaml --net other.bin.gz --only backend=fp16 --out ra --cache cache --quiet "
                "2>/dev/null; %s run suite.yaml --net other.bin.gz --only backend=gone --out rb --cache cache --quiet "
                "2>/dev/null; %s merge ra rb --out m7 2>&1 | cat > m7.txt; grep -q '^| b7 | fp16 ' m7.txt && "
                "tail -n 1 m7.txt | grep -q '^halfcheck merge: 4 results from 2 inputs: '", dir, hc, hc, hc);
    hc_check("rerun-7.2", rc == 0, "merge's final line is not the last in one pipe: %s", hc_text(hc_path(dir, "m7.txt")));
    /* Without a terminal: every case's end line has its rate, and --out DIR/ is not said DIR//. */
    rc = hc_shf("cd %s && %s run suite.yaml --net other.bin.gz --out r9/ --cache cache >/dev/null 2>r9.txt; "
                "grep -q 'positions in' r9.txt && ! grep 'positions in' r9.txt | grep -v ': 0 positions in' | grep -v -q 'pos/s' && "
                "tail -n 1 r9.txt | grep -q 'reports in r9/$'", dir, hc);
    hc_check("rerun-7.3", rc == 0, "progress lines without a rate, or reports in r9//: %s", hc_text(hc_path(dir, "r9.txt")));
    /* cases takes --net as run does (ci/sweep passes it). */
    rc = hc_shf("cd %s && %s cases suite.yaml --net other.bin.gz 2>/dev/null | grep -c . | grep -q '^2$'", dir, hc);
    hc_check("rerun-8.1", rc == 0, "halfcheck cases refuses --net");

    /* Halfcheck's own engines give the same figures on a rerun, batched too: the whole suite,
     * then each backend alone with --only; emulate:fp16 and pipe: (a program halfcheck deals
     * its batches to: the same batch counts too). */
    char self[4096], helper[4300];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(helper, sizeof helper, "%s%s%s/helper_pipe_ref32", self[0] == '/' ? "" : root, self[0] == '/' ? "" : "/",
             dirname(self));
    rc = hc_shf("cd %s && printf '%%s\\n' 'name: own' 'nets: [{name: small, model: mine/small.bin.gz}]' "
                "'boards: [{name: b7, positions: p7.jsonl.gz, nnBuffer: 7x7, maxBatchSize: 3}]' 'backends:' "
                "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' "
                "'  - {name: eng, backend: \"pipe:@model={model} %s\", tiers: [exact]}' > own.yaml && "
                "%s run own.yaml --out o9 --cache cache --quiet 2>o9.err && "
                "%s run own.yaml --only backend=fp16 --out o9a --cache cache --quiet 2>>o9.err && "
                "%s run own.yaml --only net=small,board=b7,backend=eng --out o9b --cache cache --quiet 2>>o9.err",
                dir, helper, hc, hc, hc);
    int na = 0, nb = 0;
    int same = rc == 0 && same_batched("o9", "o9a", &na, why, sizeof why) && same_batched("o9", "o9b", &nb, why, sizeof why);
    hc_check("rerun-9.1", rc == 0, "the own-engine suite or its --only reruns failed: %s", hc_text(hc_path(dir, "o9.err")));
    hc_check("rerun-9.2", same && na == 1 && nb == 1, "a batched case rerun with --only: %s (%d, %d batched results)", why,
             na, nb);
    return hc_test_exit();
}
