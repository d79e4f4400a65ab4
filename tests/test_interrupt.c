/* Interrupts (issue 21, item 3): SIGINT or SIGTERM on `halfcheck run` while a backend hangs
 * stops the backend's process group, removes the scratch directory, writes the finished
 * cases' reports whole and marked interrupted, and exits 130; an interrupted ci/sweep exits
 * 130 without merging, leaves no process or scratch behind, and --resume completes it. */
#define _GNU_SOURCE /* usleep */
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hc_test.h"
#include "reports/results.h"
#include "harness/base/stream.h"

static char hc[1024], root[1024], dir[1024];

static int empty_dir(const char *rel)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n == 0;
}

/* Commands start with hc_start_session(cmd, 1): with the default dispositions of the signals
 * the test sends: started in the background (sh -c 'make test &', nohup, a CI runner), this
 * program inherits SIGINT ignored, and halfcheck, as a shell's background job should, keeps
 * ignoring a SIGINT ignored on entry; the test stands for a user's ^C at a terminal. */

/* Waits for pid (up to limit seconds, then kills its session); returns its exit status,
 * 1000 + the signal that killed it, or -1 when it did not end by itself. */
static int wait_exit(pid_t pid, double limit)
{
    double t0 = hc_now_s();
    int st;
    while (hc_now_s() - t0 < limit) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st); /* killed: not an exit 130 */
        usleep(20000);
    }
    hc_session_kill(pid);
    waitpid(pid, &st, 0);
    return -1;
}

static void run_case(int sig, const char *tag, const char *name)
{
    char cmd[4096], out[64], errf[64], tmp[64], nm[64];
    snprintf(out, sizeof out, "run-%s", name);
    snprintf(errf, sizeof errf, "run-%s.err", name);
    snprintf(tmp, sizeof tmp, "tmp-%s", name);
    hc_shf("cd %s && rm -rf %s %s %s && mkdir %s", dir, out, errf, tmp, tmp);
    snprintf(cmd, sizeof cmd, "cd %s && TMPDIR=%s/%s exec %s run hang.yaml --out %s --cache cache >/dev/null 2>%s", dir, dir,
             tmp, hc, out, errf);
    pid_t pid = hc_start_session(cmd, 1);
    /* The hanging case has started: the two before it finished. */
    int started = hc_wait_for_text(dir, errf, "hang unbatched: started", 60);
    usleep(300000);
    kill(pid, sig);
    int rc = wait_exit(pid, 30);
    int left = hc_session_count(pid);
    snprintf(nm, sizeof nm, "%s.1", tag);
    hc_check(nm, started && rc == 130, "%s: the hanging case %s; exit %d, want 130", name, started ? "started" : "never started",
             rc);
    snprintf(nm, sizeof nm, "%s.2", tag);
    if (left < 0)
        hc_skip(nm, "no /proc: cannot list the processes left");
    else
        hc_check(nm, left == 0, "%s: %d processes of the run left (the hanging backend?)", name, left);
    hc_session_kill(pid);
    snprintf(nm, sizeof nm, "%s.3", tag);
    hc_check(nm, empty_dir(tmp), "%s: the scratch directory was left in %s/%s", name, dir, tmp);
    char path[2048];
    snprintf(path, sizeof path, "%s/%s/results.json", dir, out);
    hc_err err = {0};
    hc_results_doc *d = hc_results_read_json(path, &err);
    const hc_results *rs = d ? hc_results_doc_results(d) : NULL;
    int ok = rs && rs->interrupted && rs->n == 4;
    for (size_t i = 0; ok && i < rs->n; i++)
        ok = rs->items[i].outcome == HC_OUT_CHECKED && strcmp(rs->items[i].backend, "hang") != 0;
    snprintf(nm, sizeof nm, "%s.4", tag);
    hc_check(nm, ok, "%s: results.json: %s", name,
             !rs ? err.msg : !rs->interrupted ? "not marked interrupted" : "not the 4 finished results");
    hc_results_doc_free(d);
    snprintf(path, sizeof path, "%s/junit.xml", out);
    char *junit = hc_slurp(hc_path(dir, path));
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = hc_slurp(hc_path(dir, path));
    snprintf(nm, sizeof nm, "%s.5", tag);
    hc_check(nm, junit && strstr(junit, "type=\"Interrupted\"") && strstr(junit, "</testsuites>") && md &&
                     strstr(md, "**Interrupted**"),
             "%s: junit.xml or report.md missing, cut, or not marked interrupted", name);
    /* summary.md (a CI job's summary, posted alone), report.md and report.html say it and name
     * the cases that finished, and not the one cut short. */
    snprintf(path, sizeof path, "%s/summary.md", out);
    char *sum = hc_slurp(hc_path(dir, path));
    snprintf(path, sizeof path, "%s/report.html", out);
    const char *html = hc_text(hc_path(dir, path));
    static const char *const finished = "only the 4 cases that finished are reported: `synth b9 ref32 unbatched`, "
                                        "`synth b9 ref32 batched`, `synth b9 fp16 unbatched`, `synth b9 fp16 batched`.";
    snprintf(nm, sizeof nm, "%s.6", tag);
    hc_check(nm, sum && strncmp(sum, "## ", 3) == 0 && strstr(sum, "**Interrupted**: the run was stopped") &&
                     strstr(sum, finished) && md && strstr(md, finished) && !strstr(sum, "b9 hang") && !strstr(sum, "| hang |") &&
                     strstr(html, "<b>Interrupted</b>: the run was stopped") && strstr(html, "synth b9 fp16 batched."),
             "%s: summary.md, report.md or report.html do not say the run was interrupted and which cases "
             "finished: summary.md: %s", name, sum ? sum : "(missing)");
    free(sum);
    free(junit);
    free(md);
}

int main(int argc, char **argv)
{
    (void)argc;
    /* As if started in the background (sh -c 'make test &', nohup, a CI runner without a
     * terminal): SIGINT ignored on entry, inherited by whatever the test starts unless it says
     * otherwise. The checks below must pass all the same (hc_start_session gives its commands the default
     * dispositions, as a user's terminal would). */
    signal(SIGINT, SIG_IGN);
    const char *h = hc_test_halfcheck_bin(argv[0]); /* the CLI with fault: */
    if (!getcwd(root, sizeof root - 64))
        return 1;
    snprintf(hc, sizeof hc, "%s", h); /* absolute already */
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_interrupt"));
    hc_plan(1 + 6 + 6 + 1 + 6);
    int rc = hc_shf("cd %s && rm -rf -- * && %s synth-net --arch v7 --seed 11 --out net.bin.gz 2>/dev/null && "
                "%s selfplay --size 9 --games 3 --seed 21 --moves 60 --stride 3 --out p9.jsonl.gz 2>/dev/null && "
                "printf '%%s\\n' 'name: hang' 'nets: [{name: synth, model: net.bin.gz}]' "
                "'boards: [{name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}]' 'backends:' "
                "'  - {name: ref32, backend: ref32, tiers: [fp32]}' "
                "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' "
                "'  - {name: hang, backend: \"fault:hang@3:ref32\", tiers: [fp32]}' "
                "'  - {name: stale, backend: \"mutate:stale-row:ref32\", tiers: [fp32]}' > hang.yaml",
                dir, hc, hc);
    if (!hc_check("interrupt-0.1", rc == 0, "could not make the test data in %s", dir)) {
        hc_fail_rest("interrupt-rest", "not run: no test data (interrupt-0.1 failed)");
        return hc_test_exit();
    }
    run_case(SIGINT, "interrupt-1", "sigint");
    run_case(SIGTERM, "interrupt-2", "sigterm");
    /* halfcheck merge keeps the mark, and does not call a partial set complete. */
    rc = hc_shf("cd %s && rm -rf m-int && %s merge run-sigint --out m-int --quiet 2>/dev/null", dir, hc);
    char mpath[2048];
    snprintf(mpath, sizeof mpath, "%s/m-int/results.json", dir);
    hc_err merr = {0};
    hc_results_doc *md = hc_results_read_json(mpath, &merr);
    hc_check("interrupt-4.1", rc == 130 && md && hc_results_doc_results(md)->interrupted,
             "merge of an interrupted run: exit %d (want 130), %s", rc, md ? "merged results not marked" : merr.msg);
    hc_results_doc_free(md);

    /* ci/sweep: the hanging job is running when the sweep is interrupted. */
    hc_shf("cd %s && rm -rf sw sw.err tmp-sw && mkdir tmp-sw", dir);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && TMPDIR=%s/tmp-sw exec %s/ci/sweep hang.yaml -j 2 --out sw --halfcheck %s >/dev/null 2>sw.err",
             dir, dir, root, hc);
    pid_t pid = hc_start_session(cmd, 1);
    int started = hc_wait_for_text(dir, "sw.err", "job 4/4", 60) && hc_wait_for_text(dir, "sw.err", "job 2/4", 60);
    usleep(300000);
    kill(pid, SIGINT);
    rc = wait_exit(pid, 30);
    int left = hc_session_count(pid);
    hc_session_kill(pid);
    struct stat st;
    char path[2048];
    snprintf(path, sizeof path, "%s/sw/merged", dir);
    hc_check("interrupt-3.1", started && rc == 130 && stat(path, &st) != 0,
             "the interrupted sweep (%s) exited %d (want 130) %s a merged directory", started ? "hang running" : "never got there",
             rc, stat(path, &st) == 0 ? "and wrote" : "without");
    if (left < 0)
        hc_skip("interrupt-3.2", "no /proc: cannot list the processes left");
    else
        hc_check("interrupt-3.2", left == 0, "%d processes of the sweep left", left);
    rc = hc_shf("ls -d %s/sw/jobs/*.tmp.* >/dev/null 2>&1", dir);
    hc_check("interrupt-3.3", rc != 0 && empty_dir("tmp-sw"), "the interrupted sweep left job or halfcheck scratch directories");
    snprintf(path, sizeof path, "%s/sw/jobs/job-0003", dir);
    hc_check("interrupt-3.4", stat(path, &st) != 0, "the interrupted job was kept as if it had finished");
    /* --resume finishes it (the hang now times out quickly: an error result, exit 3). */
    rc = hc_shf("cd %s && TMPDIR=%s/tmp-sw %s/ci/sweep hang.yaml -j 2 --out sw --resume --halfcheck %s -- --timeout 1 "
            ">/dev/null 2>sw2.err",
            dir, dir, root, hc);
    snprintf(path, sizeof path, "%s/sw/merged/results.json", dir);
    hc_err err = {0};
    hc_results_doc *d = hc_results_read_json(path, &err);
    const hc_results *rs = d ? hc_results_doc_results(d) : NULL;
    hc_check("interrupt-3.5", rc == 3 && rs && rs->n == 8 && !rs->interrupted,
             "the resumed sweep exited %d (want 3: the hang timed out) with %zu results (want 8): %s", rc, rs ? rs->n : 0,
             err.msg);
    hc_results_doc_free(d);
    hc_check("interrupt-3.6", empty_dir("tmp-sw"), "scratch directories left after the resume");
    return hc_test_exit();
}
