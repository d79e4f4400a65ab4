/* Sweeps: run --only and halfcheck cases; the results.json reader (round trip, refusals);
 * halfcheck merge; ci/sweep -j 2 equal, figure by figure, to one `halfcheck run`; a sweep
 * killed after its first job and resumed redoes no finished job and merges to the same JUnit
 * and results.json as an uninterrupted sweep. Data made by halfcheck (synth-net, selfplay). */
#define _GNU_SOURCE /* setsid, kill of a process group */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hc_test.h"
#include "harness/run/merge.h"
#include "reports/results.h"
#include "harness/base/stream.h"

static char hc[1024], root[1024], dir[1024];

static char *slurp(const char *fmt, const char *arg)
{
    char path[2048];
    snprintf(path, sizeof path, fmt, dir, arg);
    return hc_slurp(path);
}


static hc_results_doc *readr(const char *sub)
{
    return hc_results_in(dir, sub);
}

static int job_done(const char *sw, int i)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s/jobs/job-%04d/results.json", dir, sw, i);
    struct stat st;
    return stat(path, &st) == 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_plan(1 + 5 + 9 + 8 + 11); /* the test data; 1.x --only; 2.x single runs and faults; 3.x sweep and merge; 4.x a killed sweep resumed */
    const char *h = hc_test_halfcheck_bin(argv[0]); /* the CLI with fault: */
    if (!getcwd(root, sizeof root - 64))
        return 1;
    snprintf(hc, sizeof hc, "%s", h); /* absolute already */
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_sweep"));
    /* The runs this test kills outright (SIGKILL) cannot remove their scratch: it goes to a
     * directory of the test's own, emptied here, not to the machine's TMPDIR. */
    {
        char scratch[1200];
        snprintf(scratch, sizeof scratch, "%s/scratch", dir);
        hc_shf("rm -rf %s && mkdir -p %s", scratch, scratch);
        setenv("TMPDIR", scratch, 1);
    }
    int rc = hc_shf("cd %s && rm -rf run* sw* m* bad* cache && %s synth-net --arch v7 --seed 11 --out net.bin.gz 2>/dev/null && "
                "%s selfplay --size 9 --games 3 --seed 21 --moves 60 --stride 3 --out p9.jsonl.gz 2>/dev/null && "
                "%s selfplay --size 7 --games 3 --seed 22 --moves 40 --stride 3 --out p7.jsonl.gz 2>/dev/null && "
                "printf '%%s\\n' 'name: sweep-test' 'nets: [{name: synth, model: net.bin.gz}]' 'boards:' "
                "'  - {name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}' "
                "'  - {name: b7, positions: p7.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}' 'backends:' "
                "'  - {name: ref32, backend: ref32, tiers: [fp32, fp32-strict]}' "
                "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' > suite.yaml && "
                "printf '%%s\\n' 'name: nan' 'nets: [{name: synth, model: net.bin.gz}]' "
                "'boards: [{name: b7, positions: p7.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}]' "
                "'backends: [{name: nan, backend: \"fault:nan-ownership@2:ref32\", tiers: [fp32]}, "
                "{name: crash, backend: \"fault:segv@1:ref32\", tiers: [fp32]}]' 'modes: [unbatched]' > nan.yaml",
                dir, hc, hc, hc);
    if (!hc_check("sweep-0.1", rc == 0, "could not make the test data in %s", dir))
        return hc_fail_rest("sweep-1", "not run: no test data"), hc_test_exit();

    /* 1. The case list and the filter. */
    rc = hc_shf("cd %s && %s cases suite.yaml > cases.txt", dir, hc);
    char *cases = slurp("%s/cases.txt", "");
    hc_check("sweep-1.1", rc == 0 && cases &&
                              !strcmp(cases, "net=synth,board=b9,backend=ref32\nnet=synth,board=b9,backend=fp16\n"
                                             "net=synth,board=b7,backend=ref32\nnet=synth,board=b7,backend=fp16\n"),
             "halfcheck cases exited %d and printed:\n%s", rc, cases ? cases : "");
    free(cases);
    rc = hc_shf("cd %s && %s run suite.yaml --only board=b7,backend=fp16 --out run-one --cache cache --quiet 2>/dev/null", dir, hc);
    hc_results_doc *one = readr("run-one");
    hc_check("sweep-1.2", rc == 0 && one && hc_results_doc_results(one)->n == 2 &&
                              !strcmp(hc_results_doc_results(one)->items[0].board, "b7") &&
                              !strcmp(hc_results_doc_results(one)->items[1].backend, "fp16"),
             "run --only: exit %d, want the two modes of b7 x fp16", rc);
    hc_results_doc_free(one);
    rc = hc_shf("cd %s && %s run suite.yaml --only board=b8 --out bad1 --quiet 2>bad1.txt && exit 9; grep -q 'no case with board' bad1.txt",
            dir, hc);
    hc_check("sweep-1.3", rc == 0, "an unknown board in --only is not refused by name");
    rc = hc_shf("cd %s && %s run suite.yaml --only size=9 --out bad2 --quiet 2>/dev/null", dir, hc);
    hc_check("sweep-1.4", rc == 2, "a malformed --only exited %d, want 2", rc);
    /* --work: the same cases in the same order, each after its estimate and a tab; b9's games are
     * longer (60 moves, not 40), so its positions file and its estimate are bigger than b7's. */
    rc = hc_shf("cd %s && %s cases suite.yaml --work > work.txt && cut -f2 work.txt | cmp -s - cases.txt && "
                "test \"$(cut -f1 work.txt | sed -n 1p)\" = \"$(cut -f1 work.txt | sed -n 2p)\" && "
                "awk -F '\t' 'NR == 1 { a = $1 } NR == 3 { b = $1 } END { exit !(a > b && b > 0) }' work.txt",
                dir, hc);
    hc_check("sweep-1.5", rc == 0, "halfcheck cases --work: exit %d, see %s/work.txt", rc, dir);

    /* 2. The reader: write, read, write gives the same bytes, non-finite values included. */
    rc = hc_shf("cd %s && %s run suite.yaml --out run --cache cache --quiet 2>/dev/null", dir, hc);
    hc_check("sweep-2.1", rc == 0, "the single run exited %d", rc);
    rc = hc_shf("cd %s && %s run nan.yaml --out run-nan --cache cache --quiet 2>/dev/null", dir, hc);
    hc_check("sweep-2.2", rc == 3, "the faulty run exited %d, want 3", rc);
    const char *rt[] = {"run", "run-nan"};
    for (int i = 0; i < 2; i++) {
        hc_results_doc *d = readr(rt[i]);
        char path[2048], name[32];
        hc_err err = {0};
        snprintf(path, sizeof path, "%s/%s/again.json", dir, rt[i]);
        int ok = d && hc_results_write_json(hc_results_doc_results(d), path, &err) == 0;
        char *x = slurp("%s/%s/results.json", rt[i]), *y = slurp("%s/%s/again.json", rt[i]);
        snprintf(name, sizeof name, "sweep-2.%d", 3 + i);
        hc_check(name, ok && x && y && !strcmp(x, y), "%s/results.json does not round-trip (%s)", rt[i], err.msg);
        if (i == 1)
            hc_check("sweep-2.5", d && hc_results_doc_results(d)->n == 2 && hc_results_doc_results(d)->items[1].outcome == HC_OUT_ERROR &&
                                      strstr(hc_results_doc_results(d)->items[1].message, "SIGSEGV"),
                     "the crash's error result was not read back");
        if (i == 0 && d) {
            /* Non-finite figures (written as "nan"/"inf" strings) round-trip too: a checked
             * result whose stats hold them, its tier check recomputed as the runner would. */
            hc_result r = hc_results_doc_results(d)->items[0];
            hc_stats s = *r.stats;
            hc_tier_check chk[4];
            s.m[HC_M_LEAD].v[HC_P_MAX] = NAN;
            s.m[HC_M_LEAD].q[HC_STATS_NQ - 1] = NAN;
            s.m[HC_M_LEAD].nonfinite = 1;
            s.m[HC_M_LEAD].first_nonfinite_pos = 3;
            s.m[HC_M_SCORE_MEAN].q[HC_STATS_NQ - 1] = INFINITY;
            s.m[HC_M_SCORE_MEAN].v[HC_P_MAX] = INFINITY;
            s.test_nonfinite.count = 1;
            s.test_nonfinite.pos = 3;
            s.test_nonfinite.index = -1;
            s.test_nonfinite.value = NAN;
            snprintf(s.test_nonfinite.field, sizeof s.test_nonfinite.field, "whiteLead");
            for (size_t t = 0; t < r.n_tiers && t < 4; t++)
                hc_tier_check_stats(&r.tiers[t], &s, &chk[t]);
            r.stats = &s;
            r.checks = chk;
            hc_results one_r = *hc_results_doc_results(d);
            one_r.items = &r;
            one_r.n = 1;
            snprintf(path, sizeof path, "%s/nonfinite.json", dir);
            int w1 = hc_results_write_json(&one_r, path, &err);
            hc_results_doc *d2 = w1 ? NULL : hc_results_read_json(path, &err);
            snprintf(path, sizeof path, "%s/nonfinite2.json", dir);
            int w2 = d2 ? hc_results_write_json(hc_results_doc_results(d2), path, &err) : -1;
            char *p1 = slurp("%s/nonfinite%s.json", ""), *p2 = slurp("%s/nonfinite%s.json", "2");
            hc_check("sweep-2.6", !w1 && !w2 && p1 && p2 && !strcmp(p1, p2) && strstr(p1, "\"nan\"") && strstr(p1, "\"inf\"") &&
                                      hc_result_is_error(&hc_results_doc_results(d2)->items[0]) &&
                                      hc_results_doc_results(d2)->items[0].stats->m[HC_M_LEAD].first_nonfinite_pos == 3,
                     "non-finite figures do not round-trip: %s", err.msg);
            free(p1);
            free(p2);
            hc_results_doc_free(d2);
        }
        free(x);
        free(y);
        hc_results_doc_free(d);
    }
    /* Refusals: a verdict that the stats contradict, a truncated file, a missing figure. */
    char *orig = slurp("%s/%s/results.json", "run");
    if (orig) {
        struct {
            const char *from, *to, *want;
        } tamper[] = {{"\"verdict\": \"pass\"", "\"verdict\": \"fail\"", "disagrees"},
                      {"\"p99\": ", "\"p98\": ", "p99: missing"},
                      {NULL, NULL, ""}};
        for (int i = 0; i < 3; i++) {
            char *t = strdup(orig);
            size_t len = strlen(t);
            if (tamper[i].from) {
                char *p = strstr(t, tamper[i].from);
                memcpy(p, tamper[i].to, strlen(tamper[i].to));
            } else {
                len /= 2;
            }
            hc_err err = {0};
            hc_results_doc *d = hc_results_parse_json(t, len, "tampered.json", &err);
            char name[32];
            snprintf(name, sizeof name, "sweep-2.%d", 7 + i);
            hc_check(name, !d && err.code == HC_EFORMAT && strstr(err.msg, tamper[i].want) && strstr(err.msg, "tampered.json"),
                     "tampered file %d: %s", i, d ? "accepted" : err.msg);
            hc_results_doc_free(d);
            free(t);
        }
        free(orig);
    }

    /* 3. An uninterrupted sweep, merged: the same figures as the single run. */
    rc = hc_shf("cd %s && %s/ci/sweep suite.yaml -j 2 --out sw-a --halfcheck %s >sw-a.txt 2>&1", dir, root, hc);
    hc_check("sweep-3.1", rc == 0, "ci/sweep exited %d (see %s/sw-a.txt)", rc, dir);
    hc_results_doc *a = readr("run"), *b = readr("sw-a/merged");
    char why[512] = "unreadable";
    hc_check("sweep-3.2", a && b && hc_same_figures(hc_results_doc_results(a), hc_results_doc_results(b), why, sizeof why),
             "sweep and single run differ: %s", why);
    hc_check("sweep-3.3", b && hc_results_doc_results(b)->n == 8, "the merge holds %zu results, want 8",
             b ? hc_results_doc_results(b)->n : 0);
    hc_results_doc_free(b);
    /* Merging in another order changes the order, not the figures; a duplicate is refused. */
    rc = hc_shf("cd %s && %s merge sw-a/jobs/job-0004 sw-a/jobs/job-0002 sw-a/jobs/job-0003 sw-a/jobs/job-0001 --out m-rev --quiet 2>/dev/null",
            dir, hc);
    b = readr("m-rev");
    hc_check("sweep-3.4", rc == 0 && a && b && hc_same_figures(hc_results_doc_results(a), hc_results_doc_results(b), why, sizeof why) &&
                              !strcmp(hc_results_doc_results(b)->items[0].board, "b7"),
             "a merge in reverse order: exit %d, %s", rc, why);
    hc_results_doc_free(b);
    rc = hc_shf("cd %s && %s merge sw-a/jobs/job-0001 sw-a/jobs/job-0001 --out m-dup --quiet 2>/dev/null", dir, hc);
    hc_check("sweep-3.5", rc == 2, "merging a job twice exited %d, want 2", rc);
    rc = hc_shf("cd %s && %s/ci/sweep suite.yaml --out sw-a --halfcheck %s >/dev/null 2>&1", dir, root, hc);
    hc_check("sweep-3.6", rc == 2, "a second sweep into a used directory exited %d, want 2", rc);
    /* --first: the matching cases start first (one job at a time: the first verdict printed is
     * theirs), the merge keeps the suite's order and the figures. */
    rc = hc_shf("cd %s && %s/ci/sweep suite.yaml -j 1 --first 'board=b7' --out sw-f --halfcheck %s >sw-f.txt 2>&1 && "
                "grep '^ci/sweep: job ' sw-f.txt | head -n 1 | grep -q 'board=b7,'",
                dir, root, hc);
    b = readr("sw-f/merged");
    hc_check("sweep-3.7",
             rc == 0 && a && b && hc_same_figures(hc_results_doc_results(a), hc_results_doc_results(b), why, sizeof why) &&
                 !strcmp(hc_results_doc_results(b)->items[0].board, hc_results_doc_results(a)->items[0].board),
             "a sweep with --first: exit %d (see %s/sw-f.txt), %s", rc, dir, why);
    hc_results_doc_free(b);
    /* Without --first the biggest cases start first (b9's, listed last in this suite), and the
     * merge keeps the suite's order. */
    rc = hc_shf("cd %s && printf '%%s\\n' 'name: sweep-test' 'nets: [{name: synth, model: net.bin.gz}]' 'boards:' "
                "'  - {name: b7, positions: p7.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}' "
                "'  - {name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}' 'backends:' "
                "'  - {name: ref32, backend: ref32, tiers: [fp32, fp32-strict]}' "
                "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' > order.yaml && "
                "%s/ci/sweep order.yaml -j 1 --out sw-o --halfcheck %s >sw-o.txt 2>&1 && "
                "grep '^ci/sweep: job ' sw-o.txt | head -n 1 | grep -q 'board=b9,'",
                dir, root, hc);
    b = readr("sw-o/merged");
    hc_check("sweep-3.8",
             rc == 0 && b && hc_results_doc_results(b)->n > 0 && !strcmp(hc_results_doc_results(b)->items[0].board, "b7"),
             "a sweep of a suite listing b7 first: exit %d (b9's jobs should start first, b7's results come first; see "
             "%s/sw-o.txt)", rc, dir);
    hc_results_doc_free(b);
    hc_results_doc_free(a);

    /* 4. Killed after its first job, then resumed. */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && exec %s/ci/sweep suite.yaml -j 2 --out sw-b --halfcheck %s >sw-b1.txt 2>&1", dir,
             root, hc);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int first = 0;
    for (;;) {
        for (int i = 1; i <= 4 && !first; i++)
            first = job_done("sw-b", i) ? i : 0;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (first || (double)(t.tv_sec - t0.tv_sec) > 60)
            break;
        usleep(2000);
    }
    hc_session_kill(pid);
    waitpid(pid, NULL, 0);
    hc_check("sweep-4.1", first > 0, "no job finished within 60 s");
    int done = 0, whole = 1;
    ino_t ino[5] = {0};
    for (int i = 1; i <= 4; i++) {
        char path[2048];
        struct stat st;
        snprintf(path, sizeof path, "%s/sw-b/jobs/job-%04d", dir, i);
        if (stat(path, &st) == 0) {
            snprintf(path, sizeof path, "%s/sw-b/jobs/job-%04d/status", dir, i);
            whole &= job_done("sw-b", i) && stat(path, &st) == 0;
            snprintf(path, sizeof path, "%s/sw-b/jobs/job-%04d/results.json", dir, i);
            if (stat(path, &st) == 0)
                ino[i] = st.st_ino;
            done++;
        }
    }
    hc_check("sweep-4.2", whole, "a job directory of the killed sweep is not whole");
    struct stat st;
    char mpath[2048];
    snprintf(mpath, sizeof mpath, "%s/sw-b/merged", dir);
    hc_check("sweep-4.3", stat(mpath, &st) != 0, "the killed sweep left a merged directory");
    if (done == 4)
        hc_skip("sweep-4.4", "every job had finished before the kill landed; the resume has nothing left to run");
    else
        hc_check("sweep-4.4", done >= 1 && done < 4, "%d jobs finished before the kill", done);
    rc = hc_shf("cd %s && %s/ci/sweep suite.yaml -j 2 --out sw-b --resume --halfcheck %s >sw-b2.txt 2>&1", dir, root, hc);
    hc_check("sweep-4.5", rc == 0, "the resumed sweep exited %d (see %s/sw-b2.txt)", rc, dir);
    int kept = 1;
    for (int i = 1; i <= 4; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/sw-b/jobs/job-%04d/results.json", dir, i);
        if (ino[i])
            kept &= stat(path, &st) == 0 && st.st_ino == ino[i];
    }
    hc_check("sweep-4.6", kept, "the resume redid a job that had finished");
    rc = hc_shf("ls -d %s/sw-b/jobs/*.tmp.* >/dev/null 2>&1", dir);
    hc_check("sweep-4.7", rc != 0, "scratch job directories left after the resume");
    const char *files[] = {"junit.xml", "results.json", "report.md", "report.csv"};
    for (int i = 0; i < 4; i++) {
        char fa[256], fb[256], name[32];
        snprintf(fa, sizeof fa, "sw-a/merged/%s", files[i]);
        snprintf(fb, sizeof fb, "sw-b/merged/%s", files[i]);
        char *x = hc_report_normalized(hc_path(dir, fa)), *y = hc_report_normalized(hc_path(dir, fb));
        snprintf(name, sizeof name, "sweep-4.%d", 8 + i);
        /* report.md/csv hold timings in no column, so they compare whole. */
        hc_check(name, x && y && strlen(x) > 100 && !strcmp(x, y), "%s of the resumed sweep differs from the uninterrupted one",
                 files[i]);
        free(x);
        free(y);
    }
    return hc_test_exit();
}
