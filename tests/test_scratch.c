/* Scratch directories (harness/base/files.h hc_scratch_dir): made private under the given
 * directory, named for the tag and this process, and what a process killed outright left of its
 * own (the same tag, a process that no longer exists, untouched for an hour, plain files only)
 * removed first; nothing else touched: a live process's, a recent one's, another tag's, one
 * holding a directory. And `halfcheck run` (an emulate case) leaves no scratch in TMPDIR. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/base/files.h"
#include "hc_test.h"

static char base[512];

/* base/NAME holding one plain file (and a directory too with subdir), both aged by `age` s. */
static int make_old(const char *name, long age, int subdir)
{
    char d[700], f[800];
    snprintf(d, sizeof d, "%s/%s", base, name);
    snprintf(f, sizeof f, "%s/case0.records", d);
    if (mkdir(d, 0700) != 0)
        return -1;
    FILE *fp = fopen(f, "w");
    if (!fp || fputs("x", fp) < 0 || fclose(fp) != 0)
        return -1;
    if (subdir) {
        char s[800];
        snprintf(s, sizeof s, "%s/inner", d);
        if (mkdir(s, 0700) != 0)
            return -1;
    }
    struct timespec t[2];
    t[0].tv_sec = t[1].tv_sec = time(NULL) - age;
    t[0].tv_nsec = t[1].tv_nsec = 0;
    return utimensat(AT_FDCWD, f, t, 0) || utimensat(AT_FDCWD, d, t, 0) ? -1 : 0;
}

static int exists(const char *name)
{
    char d[700];
    snprintf(d, sizeof d, "%s/%s", base, name);
    struct stat st;
    return stat(d, &st) == 0;
}

/* A process id that existed a moment ago and no longer does. */
static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    int st;
    waitpid(p, &st, 0);
    return (long)p;
}

int main(void)
{
    hc_plan(7);
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/hc-scratch-test-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(base)) {
        hc_fail_n("scratch", 7, "cannot make a test directory");
        return hc_test_exit();
    }
    long dead = dead_pid(), live = (long)getppid();
    char stale[96], recent[96], alive[96], other[96], nested[96];
    snprintf(stale, sizeof stale, "halfcheck-t-%ld-abcdef", dead);
    snprintf(recent, sizeof recent, "halfcheck-t-%ld-ghijkl", dead);
    snprintf(alive, sizeof alive, "halfcheck-t-%ld-mnopqr", live);
    snprintf(other, sizeof other, "halfcheck-u-%ld-stuvwx", dead);
    snprintf(nested, sizeof nested, "halfcheck-t-%ld-yzabcd", dead);
    int ok = make_old(stale, 7200, 0) == 0 && make_old(recent, 60, 0) == 0 && make_old(alive, 7200, 0) == 0 &&
             make_old(other, 7200, 0) == 0 && make_old(nested, 7200, 1) == 0;
    char dir[700];
    hc_err err = {0};
    int rc = ok ? hc_scratch_dir(dir, sizeof dir, "t", base, &err) : -1;
    char want[700];
    snprintf(want, sizeof want, "%s/halfcheck-t-%ld-", base, (long)getpid());
    struct stat st;
    hc_check("scratch-1.1", rc == 0 && strncmp(dir, want, strlen(want)) == 0 && strlen(dir) == strlen(want) + 6 &&
                                stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 077) == 0,
             "made %s (want %sXXXXXX, private): %s", rc == 0 ? dir : "nothing", want, err.msg);
    hc_check("scratch-1.2", ok && !exists(stale), "a dead process's scratch, untouched for 2 h, was not removed");
    hc_check("scratch-1.3", ok && exists(recent), "a dead process's scratch touched a minute ago was removed");
    hc_check("scratch-1.4", ok && exists(alive), "a live process's scratch was removed");
    hc_check("scratch-1.5", ok && exists(other) && exists(nested),
             "another tag's scratch, or one holding a directory, was removed");
    rmdir(dir);
    hc_check("scratch-1.6", hc_scratch_dir(dir, sizeof dir, "t", "/nonexistent/dir", &err) != 0 &&
                                strstr(err.msg, "/nonexistent/dir") != NULL,
             "no error naming the directory that cannot hold scratch: %s", err.msg);
    /* a run (its case children, an emulation's private net copy) leaves nothing in TMPDIR */
    char tmp2[700];
    snprintf(tmp2, sizeof tmp2, "%s/tmp-run", base);
    mkdir(tmp2, 0700);
    const char *hc = hc_halfcheck_bin();
    int rrc = hc_shf("cd %s && %s synth-net --arch v7 --seed 11 --out net.bin.gz 2>/dev/null && "
                     "%s selfplay --size 9 --games 2 --seed 21 --moves 30 --stride 5 --out p9.jsonl.gz 2>/dev/null && "
                     "printf '%%s\\n' 'name: s' 'nets: [{name: synth, model: net.bin.gz}]' "
                     "'boards: [{name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}]' 'backends:' "
                     "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' > s.yaml && "
                     "TMPDIR=%s %s run s.yaml --no-cache --out out --quiet >/dev/null 2>&1",
                     base, hc, hc, tmp2, hc);
    long left = hc_shf_count("ls -A %s | wc -l", tmp2);
    hc_check("scratch-2.1", rrc == 0 && left == 0, "halfcheck run (exit %d) left %ld entries in its TMPDIR", rrc, left);
    hc_shf("rm -rf %s", base);
    return hc_test_exit();
}
