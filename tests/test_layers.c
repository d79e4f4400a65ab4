/* The library's folders stay layers: ci/layers-check passes on the tree, and fails on a copy given
 * an upward include, a file-level include cycle or an include by bare name (so the check can fail). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "hc_test.h"

/* Runs cmd with its output into out; returns its exit status (-1 when it did not exit). */
static int run(const char *cmd, const char *out)
{
    char full[2048];
    snprintf(full, sizeof full, "%s > %s 2>&1", cmd, out);
    int st = system(full);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 1 when the file contains needle. */
static int contains(const char *path, const char *needle)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "grep -qF '%s' %s", needle, path);
    return system(cmd) == 0;
}

/* ci/layers-check on a copy of the library (tmp/name) changed by the shell command change, run in
 * the copy: its exit status, its output into out; -1 when the copy could not be made. */
static int check_copy(const char *tmp, const char *name, const char *change, const char *out)
{
    char copy[600], cmd[1600];
    snprintf(copy, sizeof copy, "%s/%s", tmp, name);
    if (hc_shf("rm -rf %s && mkdir -p %s && cp -R harness refs backends reports %s/ && cd %s && %s", copy, copy, copy,
               copy, change) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "sh ci/layers-check %s", copy);
    return run(cmd, out);
}

int main(void)
{
    hc_plan(4);
    const char *tmp = hc_tmpdir("test_layers");
    if (!tmp) {
        hc_fail_rest("layers-1", "no scratch directory");
        return hc_test_exit();
    }
    char out[600], cmd[1600];
    snprintf(out, sizeof out, "%s/out.txt", tmp);
    int rc = run("sh ci/layers-check .", out);
    hc_check("layers-1.1", rc == 0 && contains(out, "layers: ok"), "ci/layers-check exits %d on the tree (%s)", rc, out);

    /* A copy of the library with a Go-layer file including the evaluator (an upward include). */
    rc = check_copy(tmp, "up", "echo '#include \"harness/eval/evaluate.h\"' >> harness/go/board.c", out);
    hc_check("layers-1.2", rc == 1 && contains(out, "harness/go/board.c includes harness/eval/evaluate.h"),
             "an upward include: exit %d, want 1 naming it (%s)", rc, out);

    /* A file-level cycle inside one folder (allowed by the order, refused as a cycle). */
    rc = check_copy(tmp, "cycle",
                    "echo '#include \"harness/go/rules.h\"' >> harness/go/err_cycle_a.h && "
                    "echo '#include \"harness/go/err_cycle_a.h\"' >> harness/go/rules.h",
                    out);
    hc_check("layers-1.3", rc == 1 && contains(out, "file-level include cycle"),
             "a file-level include cycle: exit %d, want 1 naming it (%s)", rc, out);
    /* An include by bare name: the line does not say which layer it reaches, so it is refused. */
    rc = check_copy(tmp, "bare", "echo '#include \"err.h\"' >> harness/go/rules.h", out);
    hc_check("layers-1.4", rc == 1 && contains(out, "harness/go/rules.h:") && contains(out, "\"err.h\""),
             "an include by bare name: exit %d, want 1 naming the file and line (%s)", rc, out);
    snprintf(cmd, sizeof cmd, "rm -rf %s/up %s/cycle %s/bare", tmp, tmp, tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "test_layers: could not remove the copies under %s\n", tmp);
    return hc_test_exit();
}
