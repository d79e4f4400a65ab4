/* The reference cache as `halfcheck run` tells it: a reference read from the cache is said to
 * come from the cache (no time, no speed: "0.0 s, 1830125.1 pos/s" was nonsense), and a cache
 * directory that cannot be used (a file where it should be, a directory that cannot be made or
 * written) is a warning naming it and why, while the run goes on with the same verdict. Runs
 * sharing a cache compute a reference once: one that misses while another computes it waits for
 * the other's entry (a sweep's jobs of one net and board), and can be interrupted while it waits. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hc_test.h"

static char dir[1200];

int main(void)
{
    hc_plan(15);
    char root[1024];
    if (!getcwd(root, sizeof root - 64))
        return 1;
    const char *hc = hc_halfcheck_bin();
    snprintf(dir, sizeof dir, "%s/%s", root, hc_tmpdir("test_refcache_cli"));
    int rc = hc_shf("cd %s && rm -rf -- * && %s synth-net --arch v7 --seed 5 --out net.bin.gz 2>/dev/null && "
                    "%s selfplay --size 7 --games 2 --seed 3 --moves 20 --stride 3 --out p7.jsonl.gz 2>/dev/null && "
                    "printf '%%s\\n' 'name: cache' 'nets: [{name: small, model: net.bin.gz}]' "
                    "'boards: [{name: b7, positions: p7.jsonl.gz, nnBuffer: 7x7, maxBatchSize: 3}]' 'backends:' "
                    "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' > suite.yaml",
                    dir, hc, hc);
    if (!hc_check("refcache-cli-0.1", rc == 0, "could not make the test data in %s", dir))
        return hc_fail_rest("refcache-cli-rest", "not run: no test data"), hc_test_exit();

    /* 1. A cold cache computes the reference (a time and a rate); a warm one reads it. */
    int rc1 = hc_shf("cd %s && %s run suite.yaml --out o1 --cache cache >/dev/null 2>cold.txt", dir, hc);
    int rc2 = hc_shf("cd %s && %s run suite.yaml --out o2 --cache cache >/dev/null 2>warm.txt", dir, hc);
    const char *cold = hc_text(hc_path(dir, "cold.txt"));
    char warm[8192];
    snprintf(warm, sizeof warm, "%s", hc_text(hc_path(dir, "warm.txt")));
    hc_check("refcache-cli-1.1", rc1 == 0 && strstr(cold, "small b7 reference: ") && strstr(cold, " pos/s: done"),
             "the cold run (exit %d) did not time its reference: %s", rc1, cold);
    const char *line = strstr(warm, "small b7 reference: ");
    const char *eol = line ? strchr(line, '\n') : NULL;
    const char *rate = line ? strstr(line, "pos/s") : NULL;
    hc_check("refcache-cli-1.2",
             rc2 == 0 && line && strstr(line, "positions from the reference cache") && (!rate || (eol && rate > eol)),
             "the warm run (exit %d) reported its cached reference as a computation: %s", rc2, warm);

    /* 2. A file where the cache directory should be. */
    rc = hc_shf("cd %s && echo x > afile && %s run suite.yaml --out o3 --cache afile --quiet >/dev/null 2>file.txt", dir, hc);
    const char *t = hc_text(hc_path(dir, "file.txt"));
    hc_check("refcache-cli-2.1", rc == 0 && strstr(t, "warning: reference cache afile not used: afile: not a directory"),
             "a file as the cache: exit %d (want 0), stderr: %s", rc, t);
    /* 3. Below a file: the directory cannot be made. */
    rc = hc_shf("cd %s && %s run suite.yaml --out o4 --cache afile/sub --quiet >/dev/null 2>sub.txt", dir, hc);
    t = hc_text(hc_path(dir, "sub.txt"));
    hc_check("refcache-cli-3.1", rc == 0 && strstr(t, "warning: reference cache afile/sub not used: ") &&
                                     strstr(t, "cannot create the directory"),
             "a cache below a file: exit %d (want 0), stderr: %s", rc, t);
    /* 4. A directory that cannot be written (root writes anyway: nothing to show then). */
    if (geteuid() == 0) {
        hc_skip("refcache-cli-4.1", "running as root, who may write in any directory: no unwritable cache to show");
    } else {
        rc = hc_shf("cd %s && rm -rf ro && mkdir ro && chmod 555 ro && %s run suite.yaml --out o5 --cache ro --quiet "
                    ">/dev/null 2>ro.txt; r=$?; chmod 755 ro; exit $r", dir, hc);
        t = hc_text(hc_path(dir, "ro.txt"));
        hc_check("refcache-cli-4.1", rc == 0 && strstr(t, "warning: reference cache ro not used: ro: cannot write in it"),
                 "an unwritable cache: exit %d (want 0), stderr: %s", rc, t);
    }
    /* 5. A usable cache says nothing. */
    t = hc_text(hc_path(dir, "warm.txt"));
    hc_check("refcache-cli-5.1", !strstr(cold, "warning") && !strstr(t, "warning"), "a usable cache warned: %s", t);
    /* The warning comes once, before the work: not once per reference. */
    t = hc_text(hc_path(dir, "file.txt"));
    const char *w = strstr(t, "warning");
    hc_check("refcache-cli-5.2", w && !strstr(w + 1, "warning"), "the warning is not said exactly once: %s", t);

    /* 6. A run that misses while another process holds the cache's locks (as a run computing the
     * reference does) waits; given the entry the other would write, it reads it, computing nothing. */
    rc = hc_shf("cd %s && rm -rf c6 c7 c8 && mkdir c6 c7", dir);
    int lk = open(hc_path(dir, "c6/.locks"), O_RDWR | O_CREAT, 0644);
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET; /* l_start 0, l_len 0: every byte, every key's lock */
    int held = rc == 0 && lk >= 0 && fcntl(lk, F_SETLK, &fl) == 0;
    char cmd[4000];
    snprintf(cmd, sizeof cmd, "cd %s && exec %s run suite.yaml --out o6 --cache c6 >/dev/null 2>wait.txt", dir, hc);
    pid_t pid = held ? hc_start_session(cmd, 1) : -1;
    int st = 0, running = 0;
    if (pid > 0) {
        nanosleep(&(struct timespec){1, 500 * 1000 * 1000}, NULL); /* a run that did not wait computes this reference in far less */
        running = waitpid(pid, &st, WNOHANG) == 0;
    }
    hc_check("refcache-cli-6.1", running, "a run did not wait while the reference's lock was held (lock %d, pid %d)", held,
             (int)pid);
    hc_shf("cd %s && cp cache/ref-*.bin c6/", dir);
    if (lk >= 0)
        close(lk); /* releases the lock */
    if (running)
        waitpid(pid, &st, 0);
    t = hc_text(hc_path(dir, "wait.txt"));
    hc_check("refcache-cli-6.2",
             running && WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(t, "positions from the reference cache"),
             "after the lock was released the run did not read the entry written meanwhile (exit %d): %s",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1, t);

    /* 7. Interrupted while it waits: it stops at once (exit 130), leaving no process behind. */
    lk = open(hc_path(dir, "c7/.locks"), O_RDWR | O_CREAT, 0644);
    held = lk >= 0 && fcntl(lk, F_SETLK, &fl) == 0;
    snprintf(cmd, sizeof cmd, "cd %s && exec %s run suite.yaml --out o7 --cache c7 >/dev/null 2>int.txt", dir, hc);
    pid = held ? hc_start_session(cmd, 1) : -1;
    running = 0;
    double took = -1;
    if (pid > 0) {
        nanosleep(&(struct timespec){0, 800 * 1000 * 1000}, NULL);
        running = waitpid(pid, &st, WNOHANG) == 0;
        double t0 = hc_now_s();
        kill(pid, SIGTERM);
        waitpid(pid, &st, 0);
        took = hc_now_s() - t0;
    }
    if (lk >= 0)
        close(lk);
    hc_check("refcache-cli-7.1", running && WIFEXITED(st) && WEXITSTATUS(st) == 130 && took < 2.0,
             "a waiting run given TERM: running %d, exit %d, in %.2f s (want 130, at once)", running,
             WIFEXITED(st) ? WEXITSTATUS(st) : -1, took);
    hc_check("refcache-cli-7.2", pid > 0 && hc_session_count(pid) <= 0, "the interrupted run left %d processes",
             pid > 0 ? hc_session_count(pid) : -1);
    if (pid > 0)
        hc_session_kill(pid);
    hc_check("refcache-cli-7.3", hc_shf("cd %s && ls c7 | grep -q '^ref-'", dir) != 0,
             "the interrupted run left a reference entry");

    /* 8. Two runs started together on a cold cache: one computes the reference, the other reads it. */
    rc = hc_shf("cd %s && (%s run suite.yaml --out o8a --cache c8 >/dev/null 2>a.txt & "
                "%s run suite.yaml --out o8b --cache c8 >/dev/null 2>b.txt & wait)", dir, hc, hc);
    char a[8192];
    snprintf(a, sizeof a, "%s", hc_text(hc_path(dir, "a.txt")));
    t = hc_text(hc_path(dir, "b.txt"));
    int computed = (strstr(a, " pos/s: done") != NULL) + (strstr(t, " pos/s: done") != NULL);
    int read = (strstr(a, "positions from the reference cache") != NULL) +
               (strstr(t, "positions from the reference cache") != NULL);
    hc_check("refcache-cli-8.1", rc == 0 && computed == 1 && read == 1,
             "two runs on one cold cache: %d computed the reference, %d read it (want 1 and 1):\n%s\n---\n%s", computed,
             read, a, t);
    hc_check("refcache-cli-8.2", rc == 0 && hc_shf("cd %s && cmp -s o8a/report.csv o8b/report.csv", dir) == 0,
             "the two runs' figures differ (o8a/report.csv, o8b/report.csv in %s)", dir);
    return hc_test_exit();
}
