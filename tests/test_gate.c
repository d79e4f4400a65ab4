/* The gate never lies (issue 21, items 1, 2 and 4): a batched case deals the same batches under
 * `run`, `run --only` and ci/sweep, and its rerun command (ending every failure and error
 * message) reproduces it; a run that checks nothing, or skips a backend everywhere, exits 4
 * unless skips are allowed, and the final line counts the checks; without a terminal, run
 * prints a line as each case starts and ends, with real rates. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hc_test.h"
#include "reports/results.h"
#include "harness/base/stream.h"

static char hc[1024], root[1024], dir[1024];

static hc_results_doc *readr(const char *sub)
{
    return hc_results_in(dir, sub);
}

static const hc_result *find(const hc_results_doc *d, const char *backend, const char *mode)
{
    if (!d)
        return NULL;
    const hc_results *rs = hc_results_doc_results(d);
    for (size_t i = 0; i < rs->n; i++)
        if (!strcmp(rs->items[i].backend, backend) && !strcmp(rs->items[i].mode, mode))
            return &rs->items[i];
    return NULL;
}

/* Every figure of two checked results equal, bit for bit (worst positions included). */
static int same_stats(const hc_result *a, const hc_result *b, char *why, size_t len)
{
    if (!a || !b || !a->stats || !b->stats)
        return snprintf(why, len, "a result or its stats is missing"), 0;
    for (int m = 0; m < HC_M_COUNT; m++) {
        const hc_metric_stats *p = &a->stats->m[m], *q = &b->stats->m[m];
        if (memcmp(p->v, q->v, sizeof p->v) || p->max_pos != q->max_pos || p->max_cell != q->max_cell)
            return snprintf(why, len, "%s differs: p99 %.9g vs %.9g, worst position %zu vs %zu", hc_metric_infos[m].name,
                            p->v[HC_P_99], q->v[HC_P_99], p->max_pos, q->max_pos), 0;
    }
    return 1;
}

/* The message of an error result up to its rerun command (what happened, where). */
static int same_error(const hc_result *a, const hc_result *b, char *why, size_t len)
{
    if (!a || !b || a->outcome != HC_OUT_ERROR || b->outcome != HC_OUT_ERROR || !a->message || !b->message)
        return snprintf(why, len, "an error result is missing"), 0;
    const char *ea = strstr(a->message, "; rerun: "), *eb = strstr(b->message, "; rerun: ");
    size_t la = ea ? (size_t)(ea - a->message) : strlen(a->message);
    size_t lb = eb ? (size_t)(eb - b->message) : strlen(b->message);
    if (la != lb || strncmp(a->message, b->message, la))
        return snprintf(why, len, "\"%.*s\" vs \"%.*s\"", (int)la, a->message, (int)lb, b->message), 0;
    return 1;
}

/* The rerun command a message ends with, or NULL. */
static const char *rerun_of(const char *msg)
{
    const char *r = msg ? strstr(msg, "rerun: ") : NULL;
    return r ? r + 7 : NULL;
}

/* The last line of a file. */
static char *last_line(const char *rel)
{
    char *t = hc_slurp(hc_path(dir, rel));
    if (!t)
        return NULL;
    size_t n = strlen(t);
    while (n && t[n - 1] == '\n')
        t[--n] = 0;
    char *l = strrchr(t, '\n');
    char *out = strdup(l ? l + 1 : t);
    free(t);
    return out;
}

/* "N checks: P passed, F failed, E errored, S skipped" on the line equals the results' counts. */
static int counts_match(const char *line, const hc_results_doc *d, char *why, size_t len)
{
    size_t n, p, f, e, s;
    const char *at = line ? strstr(line, " checks: ") : NULL;
    while (at && at > line && at[-1] >= '0' && at[-1] <= '9')
        at--;
    if (!at || sscanf(at, "%zu checks: %zu passed, %zu failed, %zu errored, %zu skipped", &n, &p, &f, &e, &s) != 5)
        return snprintf(why, len, "no counts in \"%s\"", line ? line : ""), 0;
    hc_check_counts c;
    hc_results_count(hc_results_doc_results(d), &c);
    if (n != c.checks || p != c.passed || f != c.failed || e != c.errored || s != c.skipped || n != p + f + e + s)
        return snprintf(why, len, "line says %zu/%zu/%zu/%zu/%zu, results %zu/%zu/%zu/%zu/%zu", n, p, f, e, s, c.checks,
                        c.passed, c.failed, c.errored, c.skipped), 0;
    return 1;
}

static void part1(void)
{
    char why[1024] = "";
    /* The mutated and the crashing backends come after two others, so that their index in the
     * suite differs from their index under --only. */
    int rc = hc_shf("cd %s && %s run g.yaml --out full --cache cache >full.md 2>full.err", dir, hc);
    hc_results_doc *full = readr("full");
    hc_check("gate-1.1", rc == 3 && full && hc_results_doc_results(full)->n == 8,
             "the whole suite exited %d (want 3, the crash) with %zu results", rc, full ? hc_results_doc_results(full)->n : 0);
    hc_check("gate-1.2", find(full, "stale", "batched") && find(full, "stale", "batched")->outcome == HC_OUT_CHECKED &&
                             !find(full, "stale", "batched")->checks[0].pass,
             "the stale-row mutation was not caught batched: the test proves nothing");

    rc = hc_shf("cd %s && %s run g.yaml --only backend=stale --out only-stale --cache cache --quiet 2>/dev/null", dir, hc);
    hc_results_doc *os = readr("only-stale");
    hc_check("gate-1.3", rc == 1 && same_stats(find(full, "stale", "batched"), find(os, "stale", "batched"), why, sizeof why),
             "run --only backend=stale (exit %d) differs from the whole run: %s", rc, why);
    rc = hc_shf("cd %s && %s run g.yaml --only net=synth,board=b9,backend=crash --out only-crash --cache cache --quiet 2>/dev/null",
            dir, hc);
    hc_results_doc *oc = readr("only-crash");
    hc_check("gate-1.4", rc == 3 && same_error(find(full, "crash", "batched"), find(oc, "crash", "batched"), why, sizeof why),
             "the crash lands elsewhere under --only (exit %d): %s", rc, why);

    rc = hc_shf("cd %s && rm -rf sw && %s/ci/sweep g.yaml -j 2 --out sw --halfcheck %s >sw.out 2>sw.err", dir, root, hc);
    hc_results_doc *sw = readr("sw/merged");
    hc_check("gate-1.5", rc == 3 && same_stats(find(full, "stale", "batched"), find(sw, "stale", "batched"), why, sizeof why),
             "ci/sweep (exit %d) differs from the whole run on the stale-row case: %s", rc, why);
    hc_check("gate-1.6", same_error(find(full, "crash", "batched"), find(sw, "crash", "batched"), why, sizeof why),
             "the crash lands elsewhere under ci/sweep: %s", why);

    /* Every failure and error ends with the command that reruns just its case. */
    int ok = full != NULL, n_bad = 0;
    const hc_results *rs = full ? hc_results_doc_results(full) : NULL;
    for (size_t i = 0; ok && i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        int bad = r->outcome == HC_OUT_ERROR || hc_result_is_error(r);
        for (size_t t = 0; r->outcome == HC_OUT_CHECKED && t < r->n_tiers; t++)
            bad |= !r->checks[t].pass;
        if (!bad)
            continue;
        n_bad++;
        char want[600];
        snprintf(want, sizeof want, "halfcheck run g.yaml --only net=%s,board=%s,backend=%s", r->net, r->board, r->backend);
        const char *got = rerun_of(r->message);
        if (!got || strcmp(got, want)) {
            ok = 0;
            snprintf(why, sizeof why, "%s %s: message \"%s\", want it to end with \"rerun: %s\"", r->backend, r->mode,
                     r->message ? r->message : "(none)", want);
        }
    }
    hc_check("gate-1.7", ok && n_bad == 3, "%d failures and errors; %s", n_bad, why);
    char *junit = hc_slurp(hc_path(dir, "full/junit.xml")), *md = hc_slurp(hc_path(dir, "full/report.md")), *err = hc_slurp(hc_path(dir, "full.err"));
    const char *stale_cmd = "rerun: halfcheck run g.yaml --only net=synth,board=b9,backend=stale";
    const char *crash_cmd = "rerun: halfcheck run g.yaml --only net=synth,board=b9,backend=crash";
    char *fail_tag = junit ? strstr(junit, "<failure message=") : NULL;
    char *fail_end = fail_tag ? strchr(fail_tag, '>') : NULL;
    if (fail_end)
        *fail_end = 0;
    hc_check("gate-1.8", fail_tag && strstr(fail_tag, stale_cmd) && fail_end && strstr(fail_end + 1, crash_cmd),
             "junit.xml's failure or error message lacks the rerun command");
    hc_check("gate-1.9", md && strstr(md, stale_cmd) && strstr(md, crash_cmd), "report.md lacks the rerun commands");
    hc_check("gate-1.10", err && strstr(err, stale_cmd) && strstr(err, crash_cmd), "stderr lacks the rerun commands");
    free(junit);
    free(md);
    free(err);

    /* The printed command, run as printed (halfcheck being this build), gives the same figures. */
    const hc_result *st = find(full, "stale", "batched");
    const char *cmd = st ? rerun_of(st->message) : NULL;
    rc = cmd ? hc_shf("cd %s && rm -rf rerun && %s%s --out rerun --cache cache --quiet 2>/dev/null", dir, hc,
                  cmd + strlen("halfcheck"))
             : -1;
    hc_results_doc *rr = readr("rerun");
    hc_check("gate-1.11", rc == 1 && same_stats(st, find(rr, "stale", "batched"), why, sizeof why),
             "the printed rerun command (exit %d) gives other figures: %s", rc, why);

    /* The seed: the suite's seed: and --seed give the same batches; a rerun names --seed when
     * the command line's differs from the suite's; another seed deals other batches. */
    rc = hc_shf("cd %s && %s run g-seed.yaml --only backend=stale --out seed-suite --cache cache --quiet 2>/dev/null; "
            "%s run g.yaml --only backend=stale --seed 5 --out seed-cli --cache cache --quiet 2>/dev/null; "
            "test $? = 1",
            dir, hc, hc);
    hc_results_doc *ss = readr("seed-suite"), *sc = readr("seed-cli");
    hc_check("gate-1.12", same_stats(find(ss, "stale", "batched"), find(sc, "stale", "batched"), why, sizeof why) &&
                              !same_stats(find(full, "stale", "batched"), find(sc, "stale", "batched"), why, sizeof why),
             "seed: 5 and --seed 5 differ, or seed 5 deals the batches of seed 1");
    const hc_result *scr = find(sc, "stale", "batched");
    hc_check("gate-1.13", scr && rerun_of(scr->message) &&
                              !strcmp(rerun_of(scr->message),
                                      "halfcheck run g.yaml --only net=synth,board=b9,backend=stale --seed 5") &&
                              find(ss, "stale", "batched") && !strstr(find(ss, "stale", "batched")->message, "--seed"),
             "the rerun command does not carry --seed exactly when it must: \"%s\"",
             scr && scr->message ? scr->message : "");
    /* A suite path the shell would split: the printed command quotes it, and runs as printed. */
    rc = hc_shf("cd %s && cp g.yaml 'g two.yaml' && %s run 'g two.yaml' --only backend=stale --out two --cache cache --quiet "
            "2>/dev/null",
            dir, hc);
    hc_results_doc *two = readr("two");
    const hc_result *tr = find(two, "stale", "batched");
    const char *tcmd = tr ? rerun_of(tr->message) : NULL;
    int rc2 = tcmd && !strncmp(tcmd, "halfcheck run 'g two.yaml' --only ", 34)
                  ? hc_shf("cd %s && rm -rf two-rerun && %s%s --out two-rerun --cache cache --quiet 2>/dev/null", dir, hc,
                       tcmd + strlen("halfcheck"))
                  : -1;
    hc_results_doc *tworr = readr("two-rerun");
    hc_check("gate-1.14", rc == 1 && rc2 == 1 && same_stats(tr, find(tworr, "stale", "batched"), why, sizeof why),
             "a suite path with a space: \"%s\", rerun exit %d: %s", tcmd ? tcmd : "", rc2, why);
    hc_results_doc_free(two);
    hc_results_doc_free(tworr);
    hc_results_doc_free(ss);
    hc_results_doc_free(sc);
    hc_results_doc_free(rr);
    hc_results_doc_free(full);
    hc_results_doc_free(os);
    hc_results_doc_free(oc);
    hc_results_doc_free(sw);
}

static void part2(void)
{
    char why[1024] = "";
    /* Every case skipped (the engine's variable unset). */
    int rc = hc_shf("cd %s && env -u HC_TEST_NO_ENGINE %s run skip.yaml --out skip --cache cache --quiet 2>skip.err", dir, hc);
    char *line = last_line("skip.err");
    hc_results_doc *d = readr("skip");
    hc_check("gate-2.1", rc == 4 && line && strstr(line, "nothing was checked"), "an all-skipped run exited %d: %s", rc,
             line ? line : "");
    hc_check("gate-2.2", d && counts_match(line, d, why, sizeof why) && strstr(line, " 0 passed"), "final line: %s", why);
    free(line);
    hc_results_doc_free(d);
    rc = hc_shf("cd %s && env -u HC_TEST_NO_ENGINE %s run skip.yaml --allow-skips --out skip-ok --cache cache --quiet 2>/dev/null",
            dir, hc);
    hc_check("gate-2.3", rc == 0, "--allow-skips: exit %d, want 0", rc);
    rc = hc_shf("cd %s && env -u HC_TEST_NO_ENGINE %s run skip-allowed.yaml --out skip-allowed --cache cache --quiet 2>/dev/null",
            dir, hc);
    hc_check("gate-2.4", rc == 0, "allow_skips: true: exit %d, want 0", rc);

    /* One backend checked, another skipped in every case. */
    rc = hc_shf("cd %s && env -u HC_TEST_NO_ENGINE %s run mixed.yaml --out mixed --cache cache --quiet 2>mixed.err", dir, hc);
    line = last_line("mixed.err");
    d = readr("mixed");
    hc_check("gate-2.5", rc == 4 && line && strstr(line, "backend engine was skipped in every case") &&
                             d && counts_match(line, d, why, sizeof why),
             "a backend skipped everywhere: exit %d, \"%s\" %s", rc, line ? line : "", why);
    free(line);
    hc_results_doc_free(d);

    /* merge applies the same rule, and keeps what the run allowed. */
    rc = hc_shf("cd %s && %s merge skip --out m-skip --quiet 2>m-skip.err", dir, hc);
    line = last_line("m-skip.err");
    hc_check("gate-2.6", rc == 4 && line && strstr(line, " 0 passed"), "merge of an all-skipped run: exit %d: %s", rc,
             line ? line : "");
    free(line);
    rc = hc_shf("cd %s && %s merge skip --allow-skips --out m-skip2 --quiet 2>/dev/null", dir, hc);
    int rc2 = hc_shf("cd %s && %s merge skip-allowed --out m-skip3 --quiet 2>/dev/null", dir, hc);
    hc_check("gate-2.7", rc == 0 && rc2 == 0, "merge --allow-skips exit %d, merge of an allow_skips run exit %d", rc, rc2);

    /* The gate and the sweep. */
    rc = hc_shf("cd %s && env -u HC_TEST_NO_ENGINE %s/ci/gate skip.yaml --halfcheck %s --out gate-skip --junit-dir gate-junit "
            "--cache cache --threads 1 >/dev/null 2>gate.err",
            dir, root, hc);
    char *ge = hc_slurp(hc_path(dir, "gate.err"));
    hc_check("gate-2.8", rc == 4 && ge && strstr(ge, "nothing was checked"), "ci/gate on an all-skipped suite: exit %d", rc);
    free(ge);
    rc = hc_shf("cd %s && rm -rf sw-skip && env -u HC_TEST_NO_ENGINE %s/ci/sweep skip.yaml -j 2 --out sw-skip --halfcheck %s "
            ">/dev/null 2>&1",
            dir, root, hc);
    rc2 = hc_shf("cd %s && rm -rf sw-skip2 && env -u HC_TEST_NO_ENGINE %s/ci/sweep skip.yaml -j 2 --out sw-skip2 --halfcheck %s "
             "-- --allow-skips >/dev/null 2>&1",
             dir, root, hc);
    hc_check("gate-2.9", rc == 4 && rc2 == 0, "ci/sweep all-skipped: exit %d (want 4), with --allow-skips %d (want 0)", rc,
             rc2);

    /* The counts of a run with passes, a failure and errors. */
    line = last_line("full.err");
    d = readr("full");
    hc_check("gate-2.10", d && counts_match(line, d, why, sizeof why), "%s", why);
    free(line);
    hc_results_doc_free(d);
}

/* Each "R pos/s" on a line that also says "N positions in S s" (an end line) agrees with N/S,
 * and no rate anywhere exceeds what the whole case could do in a second. */
static void part4(const char *net_rel)
{
    if (!net_rel) {
        hc_skip_n("gate-4", 4, "../shared absent: the progress lines need a case that lasts seconds (the g170 net)");
        return;
    }
    char net[2048], shared[2048];
    snprintf(net, sizeof net, "%s%s%s", net_rel[0] == '/' ? "" : root, net_rel[0] == '/' ? "" : "/", net_rel);
    const char *sh_rel = hc_shared("positions");
    snprintf(shared, sizeof shared, "%s%s%s", sh_rel[0] == '/' ? "" : root, sh_rel[0] == '/' ? "" : "/", sh_rel);
    int rc = hc_shf("cd %s && gzip -dc < %s/size19.jsonl.gz | head -600 > p19.jsonl && "
                "printf '%%s\\n' 'name: slow' 'nets: [{name: g170, model: %s}]' "
                "'boards: [{name: b19, positions: p19.jsonl, nnBuffer: 19x19}]' "
                "'backends: [{name: ref32, backend: ref32, tiers: [fp32]}]' 'modes: [unbatched]' > slow.yaml && "
                "%s run slow.yaml --out slow --no-cache --threads 1 >/dev/null 2>slow.err",
                dir, shared, net, hc);
    char *e = hc_slurp(hc_path(dir, "slow.err"));
    int starts = 0, ends = 0, bad_rate = 0, rates = 0;
    for (char *l = e; l && *l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        starts += strstr(l, ": started, 600 positions") != NULL;
        size_t n;
        double secs, rate;
        char *in = strstr(l, " positions in ");
        char *ps = strstr(l, " pos/s");
        if (in) {
            char *num = in;
            while (num > l && num[-1] >= '0' && num[-1] <= '9')
                num--;
            if (sscanf(num, "%zu positions in %lf s", &n, &secs) == 2 && (strstr(l, ": passed") || strstr(l, ": done")))
                ends++;
        }
        if (ps) {
            char *num = ps;
            while (num > l && ((num[-1] >= '0' && num[-1] <= '9') || num[-1] == '.'))
                num--;
            rates++;
            /* A rate is printed only after a second: more than the whole case is absurd. */
            if (sscanf(num, "%lf", &rate) != 1 || rate > 600.0)
                bad_rate++;
        }
        l = nl ? nl + 1 : l + strlen(l);
    }
    hc_check("gate-4.1", rc == 0 && starts == 2 && ends == 2,
             "without a terminal: exit %d, %d start lines and %d end lines (want 2 and 2: the reference and the case):\n%s",
             rc, starts, ends, e ? e : "");
    hc_check("gate-4.2", rates >= 1 && bad_rate == 0, "%d rates printed, %d absurd:\n%s", rates, bad_rate, e ? e : "");
    hc_check("gate-4.3", e && !strchr(e, '\r'), "carriage returns in a log that is not a terminal");
    free(e);
    rc = hc_shf("cd %s && %s run slow.yaml --out slow-q --cache cache-slow --threads 1 --quiet >/dev/null 2>slow-q.err", dir, hc);
    e = hc_slurp(hc_path(dir, "slow-q.err"));
    hc_check("gate-4.4", rc == 0 && e && strchr(e, '\n') == e + strlen(e) - 1 && strstr(e, "checks:"),
             "--quiet printed more than the final line:\n%s", e ? e : "");
    free(e);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *h = hc_test_halfcheck_bin(argv[0]); /* the CLI with fault: */
    if (!getcwd(root, sizeof root - 64))
        return 1;
    snprintf(hc, sizeof hc, "%s", h); /* absolute already */
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_gate"));
    hc_plan(1 + 14 + 10 + 4);
    const char *be = "'  - {name: ref32, backend: ref32, tiers: [fp32]}' "
                     "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' "
                     "'  - {name: stale, backend: \"mutate:stale-row:ref32\", tiers: [fp32]}' "
                     "'  - {name: crash, backend: \"fault:segv@17:ref32\", tiers: [fp32]}' ";
    const char *head = "'nets: [{name: synth, model: net.bin.gz}]' "
                       "'boards: [{name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 8}]' ";
    const char *engine = "'  - {name: engine, backend: \"gtp:\\\"$HC_TEST_NO_ENGINE\\\" gtp\", tiers: [fp32]}' ";
    int rc = hc_shf("cd %s && rm -rf -- * && %s synth-net --arch v7 --seed 11 --out net.bin.gz 2>/dev/null && "
                "%s selfplay --size 9 --games 4 --seed 21 --moves 60 --stride 2 --out p9.jsonl.gz 2>/dev/null && "
                "printf '%%s\\n' 'name: gate' %s 'backends:' %s > g.yaml && "
                "printf '%%s\\n' 'name: gate' 'seed: 5' %s 'backends:' %s > g-seed.yaml && "
                "printf '%%s\\n' 'name: skip' %s 'backends:' %s > skip.yaml && "
                "printf '%%s\\n' 'name: skip' 'allow_skips: true' %s 'backends:' %s > skip-allowed.yaml && "
                "printf '%%s\\n' 'name: mixed' %s 'backends:' '  - {name: ref32, backend: ref32, tiers: [fp32]}' %s "
                "> mixed.yaml",
                dir, hc, hc, head, be, head, be, head, engine, head, engine, head, engine);
    if (!hc_check("gate-0.1", rc == 0, "could not make the test data in %s", dir)) {
        hc_fail_rest("gate-rest", "not run: no test data (gate-0.1 failed)");
        return hc_test_exit();
    }
    part1();
    part2();
    const char *g170 = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    char g170_copy[2048];
    snprintf(g170_copy, sizeof g170_copy, "%s", g170 ? g170 : "");
    part4(g170 ? g170_copy : NULL);
    return hc_test_exit();
}
