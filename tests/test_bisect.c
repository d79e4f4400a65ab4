/* ci/bisect under `git bisect run`: a throwaway repository (build/tmp/test_bisect/repo) whose
 * history holds a suite over a synthetic net, a build script that breaks at one commit, and
 * one commit that plants a precision bug (the backend becomes mutate:policy-transposed:ref32,
 * checked against the fp32 tier). Single steps give 0 good / 1 bad / 125 skip and log their
 * figures; the bisection names the planted commit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hc_test.h"
#include "harness/base/stream.h"

static char hc[1024], root[1024], dir[1024];

/* The commit id of the repository's revision rev (e.g. "HEAD~2"), into out. */
static int rev(const char *r, char *out, size_t len)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s/repo && git rev-parse %s", dir, r);
    FILE *p = popen(cmd, "r");
    int ok = p && fgets(out, (int)len, p) != NULL;
    if (p)
        pclose(p);
    if (ok)
        out[strcspn(out, "\n")] = 0;
    return ok ? 0 : -1;
}

int main(void)
{
    hc_plan(1 + 3 + 2 + 2); /* the repository; 1.1-1.3 single steps, 1.4-1.5 the log; 2.x git bisect run */
    const char *h = hc_halfcheck_bin();
    if (!getcwd(root, sizeof root - 64))
        return 1;
    snprintf(hc, sizeof hc, "%s", h); /* absolute already */
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_bisect"));
    if (hc_shf("command -v git >/dev/null 2>&1") != 0) {
        hc_skip_rest("bisect-0.1", "git is not installed");
        return hc_test_exit();
    }
    /* The history: c1 good, c2 notes, c3 build broken, c4 build fixed, c5 the planted bug,
     * c6 and c7 unrelated. */
    const char *g = "unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE; git -c user.name=test -c user.email=test@example.org "
                    "-c commit.gpgsign=false";
    int rc = hc_shf("cd %s && rm -rf repo bisect.log cache out* && mkdir repo && cd repo && "
                "unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE; git init -q . && "
                "%s synth-net --arch v7 --seed 5 --out net.bin.gz 2>/dev/null && "
                "%s selfplay --size 9 --games 2 --seed 8 --moves 40 --stride 4 --out p9.jsonl.gz 2>/dev/null && "
                "printf '%%s\\n' 'name: bisect-test' 'nets: [{name: synth, model: net.bin.gz}]' "
                "'boards: [{name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}]' "
                "'backends: [{name: backend, backend: ref32, tiers: [fp32]}]' > suite.yaml && "
                "echo 'exit 0' > build.sh && git add -A && %s commit -qm c1-initial && "
                "echo notes > NOTES && git add -A && %s commit -qm c2-notes && "
                "echo 'echo compiler error >&2; exit 1' > build.sh && git add -A && %s commit -qm c3-build-broken && "
                "echo 'exit 0' > build.sh && git add -A && %s commit -qm c4-build-fixed && "
                "sed 's/backend: ref32/backend: \"mutate:policy-transposed:ref32\"/' suite.yaml > suite.new && "
                "mv suite.new suite.yaml && git add -A && "
                "%s commit -qm c5-faster-policy-head && "
                "echo more >> NOTES && git add -A && %s commit -qm c6-notes && "
                "echo more >> NOTES && git add -A && %s commit -qm c7-notes",
                dir, hc, hc, g, g, g, g, g, g, g);
    if (!hc_check("bisect-0.1", rc == 0, "could not build the throwaway repository in %s/repo", dir))
        return hc_fail_rest("bisect-0.2", "not run: no repository to bisect"), hc_test_exit();
    char c1[64], c3[64], c5[64];
    if (rev("HEAD~6", c1, sizeof c1) || rev("HEAD~4", c3, sizeof c3) || rev("HEAD~2", c5, sizeof c5))
        return hc_fail_rest("bisect-0.2", "not run: git rev-parse failed"), hc_test_exit();

    char step[4096];
    snprintf(step, sizeof step,
             "%s/ci/bisect --build 'sh build.sh' --suite suite.yaml --log %s/bisect.log --cache %s/cache --out %s/out "
             "--halfcheck %s",
             root, dir, dir, dir, hc);
    /* Single steps: good, skipped (broken build), bad. */
    const struct {
        const char *at;
        int want;
        const char *what;
    } steps[] = {{c1, 0, "good"}, {c3, 125, "skip"}, {NULL, 1, "bad"}};
    for (int i = 0; i < 3; i++) {
        char name[32];
        if (i < 2)
            rc = hc_shf("cd %s/repo && unset GIT_DIR GIT_WORK_TREE; git checkout -q %s && %s 2>/dev/null", dir, steps[i].at, step);
        else /* the branch tip, whatever git names the default branch */
            rc = hc_shf("cd %s/repo && unset GIT_DIR GIT_WORK_TREE; git checkout -q $(git for-each-ref --format='%%(refname:short)' "
                    "refs/heads | head -1) && %s 2>/dev/null",
                    dir, step);
        snprintf(name, sizeof name, "bisect-1.%d", i + 1);
        hc_check(name, rc == steps[i].want, "ci/bisect at the %s commit exited %d, want %d", steps[i].what, rc,
                 steps[i].want);
    }
    char *log = hc_slurp(hc_path(dir, "bisect.log"));
    hc_check("bisect-1.4", log && strstr(log, "build failed") && strstr(log, "compiler error"),
             "the log does not record the failed build and its output");
    hc_check("bisect-1.5", log && strstr(log, "winrate p99") && strstr(log, "=> good") && strstr(log, "=> bad") &&
                               strstr(log, "FAIL fp32:topPolicyDelta"),
             "the log lacks the figures or verdicts of the steps:\n%s", log ? log : "");
    free(log);

    /* The whole bisection. */
    hc_shf("rm -f %s/bisect.log", dir);
    rc = hc_shf("cd %s/repo && unset GIT_DIR GIT_WORK_TREE; git checkout -q $(git for-each-ref --format='%%(refname:short)' "
            "refs/heads | head -1) && git bisect start HEAD %s >/dev/null && git bisect run %s > %s/bisect-run.txt 2>&1; "
            "r=$?; git bisect reset -q >/dev/null 2>&1; exit $r",
            dir, c1, step, dir);
    char *out = hc_slurp(hc_path(dir, "bisect-run.txt"));
    char want[128];
    snprintf(want, sizeof want, "%s is the first bad commit", c5);
    hc_check("bisect-2.1", rc == 0 && out && strstr(out, want), "git bisect run exited %d and did not name %s:\n%s", rc, c5,
             out ? out : "");
    log = hc_slurp(hc_path(dir, "bisect.log"));
    int steps_logged = 0;
    for (const char *p = log; p && (p = strstr(p, "\n   => ")); p++)
        steps_logged++;
    hc_check("bisect-2.2", log && steps_logged >= 2 && strstr(log, "c5-faster-policy-head"),
             "the bisection's log holds %d verdicts and not the planted commit", steps_logged);
    free(out);
    free(log);
    return hc_test_exit();
}
