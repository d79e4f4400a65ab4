/* The standard suites on a clean clone: a copy of suites/ and nets/ with no ../shared beside it
 * runs testgpuerror.yaml from the shipped datasets given the user's net (--net PATH, NAME=PATH,
 * DIR), and without --net a missing net file stops the run with exit 2 and a hint to pass --net.
 * Nets come from halfcheck synth-net; --only keeps it to the 140 positions of size10x14. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hc_test.h"

static const char *hc;
static char dir[512];

/* halfcheck run on the clone's testgpuerror suite with args; stderr to dir/err.txt. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd %s && HC_SHARED=/nonexistent %s run clone/suites/testgpuerror.yaml --cache cache --quiet %s "
             ">out.txt 2>err.txt",
             dir, hc, args);
    return hc_sh(cmd);
}

int main(void)
{
    hc_plan(17);
    char self[1024];
    /* The runs happen inside the test's directory: halfcheck by its absolute path. */
    hc = hc_halfcheck_bin();
    if (!getcwd(self, sizeof self))
        snprintf(self, sizeof self, ".");
    const char *t = hc_tmpdir("test_clean_clone");
    snprintf(dir, sizeof dir, "%s", t ? t : "build/tmp/test_clean_clone");
    char cmd[4096];
    /* The clone: suites and nets as the repository has them; nothing named shared beside. */
    snprintf(cmd, sizeof cmd,
             "cd %s && rm -rf clone shared out* cache nets-dir && mkdir clone nets-dir && cp -r %s/suites %s/nets clone/ "
             "&& %s synth-net --arch v17tf --out v17.bin.gz 2>/dev/null && %s synth-net --arch v7 --version 8 --out "
             "v8.bin.gz 2>/dev/null",
             dir, self, self, hc, hc);
    if (!hc_check("clone-0.1", hc_sh(cmd) == 0, "cannot set up the clone in %s", dir)) {
        hc_fail_rest("clone-1..5", "not run: no clone (clone-0.1 failed)");
        return hc_test_exit();
    }

    /* Without --net: exit 2 before anything runs, naming the net and --net. */
    int rc = run("--only board=size10x14 --out out1");
    const char *e = hc_text(hc_path(dir, "err.txt"));
    hc_check("clone-1.1", rc == 2, "missing net without --net: exit %d (want 2): %s", rc, e);
    hc_check("clone-1.2", strstr(e, "g170-b6c96") && strstr(e, "--net PATH") && strstr(e, "--net g170-b6c96=PATH"),
             "the message does not say to pass --net: %s", e);
    hc_check("clone-1.3", !hc_file_exists(hc_path(dir, "out1/junit.xml")), "reports written for a run that could not start");

    /* --net PATH: every net replaced; a v17 net in place of the v8 one runs (pins dropped). */
    rc = run("--net v17.bin.gz --only board=size10x14 --out out2");
    e = hc_text(hc_path(dir, "err.txt"));
    hc_check("clone-2.1", rc == 0, "--net PATH: exit %d: %s", rc, e);
    hc_check("clone-2.2", hc_reports_written(hc_path(dir, "out2")), "--net PATH: reports missing in %s/out2", dir);
    hc_check("clone-2.3", strstr(e, "net g170-b6c96: v17.bin.gz") && strstr(e, "net b7c96h6kv3: v17.bin.gz"),
             "does not say which file each net uses: %s", e);
    const char *res = hc_text(hc_path(dir, "out2/results.json"));
    hc_check("clone-2.4", strstr(res, "\"net\": \"g170-b6c96\"") && strstr(res, "\"modelVersion\": 17") &&
                              strstr(res, "\"board\": \"size10x14\"") && !strstr(res, "\"outcome\": \"error\""),
             "results.json is not the v17 net's run on size10x14: %.400s", res);

    /* --net NAME=PATH: one net; the others keep their (missing) files, fine for --only net=. */
    rc = run("--net g170-b6c96=v8.bin.gz --only net=g170-b6c96,board=size10x14,backend=ref32-batch-invariance --out out3");
    e = hc_text(hc_path(dir, "err.txt"));
    hc_check("clone-3.1", rc == 0, "--net NAME=PATH: exit %d: %s", rc, e);
    hc_check("clone-3.2", strstr(e, "net g170-b6c96: v8.bin.gz") && strstr(e, "net b7c96h3tfrs: not replaced"),
             "does not say which net was replaced: %s", e);
    res = hc_text(hc_path(dir, "out3/results.json"));
    hc_check("clone-3.3", strstr(res, "\"modelVersion\": 8") && strstr(res, "\"outcome\": \"checked\""),
             "results.json is not the v8 net's run: %.400s", res);
    rc = run("--net g170=v8.bin.gz --only board=size10x14 --out out4");
    e = hc_text(hc_path(dir, "err.txt"));
    hc_check("clone-3.4", rc == 2 && strstr(e, "no net named \"g170\"") && strstr(e, "g170-b6c96"),
             "an unknown net name: exit %d: %s", rc, e);
    /* rect is in the transformer nets' rows too: their files are needed and missing. */
    rc = run("--net g170-b6c96=v8.bin.gz --only board=rect --out out4");
    e = hc_text(hc_path(dir, "err.txt"));
    hc_check("clone-3.5", rc == 2 && strstr(e, "net b7c96h3tfrs: clone/") && strstr(e, "--net b7c96h3tfrs=PATH"),
             "a needed net still missing after NAME=PATH: exit %d: %s", rc, e);

    /* --net DIR: matched by file name (a KataGo checkout's cpp/tests/models); the version pin of
     * a file-name match still holds. */
    snprintf(cmd, sizeof cmd, "cd %s && cp v8.bin.gz nets-dir/g170-b6c96-s175395328-d26788732.bin.gz", dir);
    int cp_ok = hc_sh(cmd) == 0;
    rc = run("--net nets-dir --only board=size10x14 --out out5");
    e = hc_text(hc_path(dir, "err.txt"));
    hc_check("clone-4.1", cp_ok && rc == 0, "--net DIR: exit %d: %s", rc, e);
    hc_check("clone-4.2",
             strstr(e, "net g170-b6c96: nets-dir/g170-b6c96-s175395328-d26788732.bin.gz") &&
                 strstr(e, "net b7c96h3tfrs: not replaced"),
             "does not say which nets matched: %s", e);
    snprintf(cmd, sizeof cmd, "cd %s && cp v17.bin.gz nets-dir/g170-b6c96-s175395328-d26788732.bin.gz", dir);
    cp_ok = hc_sh(cmd) == 0;
    rc = run("--net nets-dir --only board=size10x14 --out out6");
    e = hc_text(hc_path(dir, "err.txt"));
    /* Refused before any work: one error on stderr, no reports. */
    int wrong = strstr(e, "is model version 17, the config says 8") != NULL && !hc_file_exists(hc_path(dir, "out6/results.json"));
    hc_check("clone-4.3", cp_ok && rc == 2 && wrong, "a DIR match of the wrong version: exit %d: %s", rc, e);
    snprintf(cmd, sizeof cmd, "cd %s && rm -f nets-dir/*", dir);
    hc_sh(cmd);
    rc = run("--net nets-dir --only board=size10x14 --out out7");
    e = hc_text(hc_path(dir, "err.txt"));
    hc_check("clone-4.4", rc == 2 && strstr(e, "holds none of the suite's net files"), "an empty DIR: exit %d: %s", rc, e);
    return hc_test_exit();
}
