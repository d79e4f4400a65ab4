/* A case's children die with halfcheck however it dies (issue 32, item 2): `halfcheck run` is
 * killed with SIGKILL while its isolated case child waits on a GTP engine that hangs
 * (tests/helper_fake_gtp -misbehave hang), and neither the child nor the engine may be left.
 * Once with HC_NO_PDEATHSIG=1, so that the portable lifeline (a pipe only the parent holds,
 * harness/run/isolate.c) does it alone, as on macOS; once as Linux runs by default. */
#define _GNU_SOURCE /* usleep */
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hc_test.h"

static char hc[1024], dir[1200], helper[1200];

static void kill_mid_case(const char *tag, const char *env, const char *what)
{
    char cmd[4096], name[64];
    hc_shf("cd %s && rm -rf run-%s run-%s.err tmp-%s && mkdir tmp-%s", dir, tag, tag, tag, tag);
    snprintf(cmd, sizeof cmd,
             "cd %s && TMPDIR=%s/tmp-%s %s exec %s run hang.yaml --out run-%s --no-cache --timeout 300 >/dev/null "
             "2>run-%s.err",
             dir, dir, tag, env, hc, tag, tag);
    pid_t pid = hc_start_session(cmd, 0);
    char errf[64];
    snprintf(errf, sizeof errf, "run-%s.err", tag);
    int started = hc_wait_for_text(dir, errf, "engine unbatched: started", 60);
    /* halfcheck, its case child and the engine the child started, all alive */
    int before = 0;
    double t0 = hc_now_s();
    while (started && hc_now_s() - t0 < 60 && (before = hc_session_count(pid)) >= 0 && before < 3)
        usleep(20000);
    usleep(300000); /* the engine is in its hang: it has answered half a reply */
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    int left = -1;
    t0 = hc_now_s();
    while (hc_now_s() - t0 < 10 && (left = hc_session_count(pid)) > 0)
        usleep(20000);
    snprintf(name, sizeof name, "orphans-%s.1", tag);
    if (before < 0) {
        hc_skip(name, "no /proc: cannot list the processes of the run");
        snprintf(name, sizeof name, "orphans-%s.2", tag);
        hc_skip(name, "no /proc: cannot list the processes of the run");
    } else {
        hc_check(name, started && before >= 3, "%s: the case never ran its engine (%d processes; %s)", what, before,
                 started ? "started" : "never started");
        snprintf(name, sizeof name, "orphans-%s.2", tag);
        hc_check(name, left == 0, "%s: %d processes of the SIGKILLed run left 10 s later (the case child or its engine)",
                 what, left);
    }
    hc_session_kill(pid);
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_plan(1 + 2 + 2);
    char self[1024];
    hc_abspath(argv[0], self, sizeof self);
    snprintf(helper, sizeof helper, "%s/helper_fake_gtp", dirname(self));
    snprintf(hc, sizeof hc, "%s", hc_halfcheck_bin());
    hc_abspath(hc_tmpdir("test_orphans"), dir, sizeof dir);
    int rc = hc_shf("cd %s && rm -rf -- * && %s synth-net --arch v7 --seed 11 --out net.bin.gz 2>/dev/null && "
                    "%s selfplay --size 9 --games 2 --seed 21 --moves 40 --stride 4 --out p9.jsonl.gz 2>/dev/null && "
                    "printf '%%s\\n' 'name: orphans' 'nets: [{name: synth, model: net.bin.gz}]' "
                    "'boards: [{name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}]' 'backends:' "
                    "'  - {name: engine, backend: \"gtp:@timeout=300 %s {model} -misbehave hang\", tiers: [fp32]}' "
                    "'modes: [unbatched]' > hang.yaml",
                    dir, hc, hc, helper);
    if (!hc_check("orphans-0.1", rc == 0, "could not make the test data in %s", dir)) {
        hc_fail_rest("orphans-rest", "not run: no test data (orphans-0.1 failed)");
        return hc_test_exit();
    }
    kill_mid_case("lifeline", "HC_NO_PDEATHSIG=1", "without PR_SET_PDEATHSIG");
    kill_mid_case("default", "", "by default");
    return hc_test_exit();
}
