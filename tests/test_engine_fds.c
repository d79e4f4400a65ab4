/* An engine halfcheck starts gets its stdin, stdout and stderr and no other descriptor of
 * halfcheck's (a case's records and side files, its progress pipe, other pipes): one held by an
 * engine, or by a daemon it leaves behind, would keep halfcheck waiting for an EOF.
 * tests/helper_fds lists the descriptors it was started with, then runs the real engine. */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/extproc.h"
#include "hc_test.h"

/* Whether every line of the helper's list is "fds:" alone (nothing above stderr); *lines counts them. */
static int only_std(const char *text, int *lines, char *bad, size_t cap)
{
    *lines = 0;
    bad[0] = '\0';
    int ok = 1;
    for (const char *l = text; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        (*lines)++;
        if (n != 4 || strncmp(l, "fds:", 4) != 0) {
            if (ok)
                snprintf(bad, cap, "%.*s", (int)(n < 200 ? n : 200), l);
            ok = 0;
        }
        l = e ? e + 1 : l + n;
    }
    return ok;
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_plan(5);
    char self[4096], bindir[4096], fds[4096], pipe_helper[4096], cwd[2048], list[2400], bad[256];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(bindir, sizeof bindir, "%s", dirname(self));
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    snprintf(fds, sizeof fds, "%s%s%s/helper_fds", bindir[0] == '/' ? "" : cwd, bindir[0] == '/' ? "" : "/", bindir);
    snprintf(pipe_helper, sizeof pipe_helper, "%s%s%s/helper_pipe_ref32", bindir[0] == '/' ? "" : cwd,
             bindir[0] == '/' ? "" : "/", bindir);
    const char *dir = hc_tmpdir("test_engine_fds");
    char adir[2400];
    hc_abspath(dir, adir, sizeof adir);
    snprintf(list, sizeof list, "%s/fds.txt", adir);

    /* Descriptors this process holds without close-on-exec, as a library or an embedding
     * program may leave them: a pipe and a file. */
    int p[2];
    int planted = pipe(p) == 0 ? open("/dev/null", O_RDONLY) : -1;
    int lines = 0;

    /* 1. The helper sees them when nothing closes them (a shell passes them on): the check
     * below can fail. */
    unlink(list);
    int rc = hc_shf("'%s' '%s'", fds, list);
    char want[64];
    snprintf(want, sizeof want, " %d", planted);
    const char *t = hc_text(list);
    hc_check("engine-fds-1.1", planted > 2 && rc == 0 && strstr(t, want) && !only_std(t, &lines, bad, sizeof bad),
             "helper_fds under a shell did not list the planted descriptor %d: rc %d, \"%s\"", planted, rc, t);

    /* 2. hc_extproc_start (every engine: gtp, analysis, pipe) passes on none of them. */
    unlink(list);
    hc_extproc proc;
    hc_err err = {0};
    char *av[] = {fds, list, NULL};
    rc = hc_extproc_start(&proc, av, &err);
    if (rc == 0)
        hc_extproc_finish(&proc, 10);
    t = hc_text(list);
    hc_check("engine-fds-2.1", rc == 0 && only_std(t, &lines, bad, sizeof bad) && lines == 1,
             "the engine got descriptors beyond 0, 1, 2: \"%s\" (%d starts; %s)", bad, lines, err.msg);
    close(p[0]);
    close(p[1]);
    close(planted);

    /* 3. Through `halfcheck run`: the engine of a backend case (in the case's child process,
     * which holds its records and side files, its progress pipe and its lifeline) gets none of
     * them, unbatched and batched. */
    unlink(list);
    const char *hc = hc_halfcheck_bin();
    rc = hc_shf("cd %s && rm -rf out && %s synth-net --arch v7 --seed 5 --out net.bin.gz 2>/dev/null && "
                "%s selfplay --size 9 --games 2 --seed 3 --moves 20 --stride 4 --out p9.jsonl.gz 2>/dev/null && "
                "printf '%%s\\n' 'name: fds' 'nets: [{name: synth, model: net.bin.gz}]' "
                "'boards: [{name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}]' 'backends:' "
                "'  - {name: eng, backend: \"pipe:@model={model} %s %s %s\", tiers: [fp32]}' > fds.yaml",
                adir, hc, hc, fds, list, pipe_helper);
    if (!hc_check("engine-fds-3.1", rc == 0, "could not make the test data in %s", adir)) {
        hc_fail_rest("engine-fds-3.rest", "not run: no test data");
        return hc_test_exit();
    }
    rc = hc_shf("cd %s && %s run fds.yaml --out out --no-cache --quiet 2>run.err", adir, hc);
    hc_check("engine-fds-3.2", rc == 0, "halfcheck run exited %d (want 0): %s", rc, hc_text(hc_path(adir, "run.err")));
    t = hc_text(list);
    hc_check("engine-fds-3.3", only_std(t, &lines, bad, sizeof bad) && lines >= 2,
             "an engine of halfcheck run got descriptors beyond 0, 1, 2: \"%s\" (%d engines started)", bad, lines);
    return hc_test_exit();
}
