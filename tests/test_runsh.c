/* tests/run.sh holds each test program to its plan: fake programs (tiny shell scripts) that
 * lose a check, have no plan, repeat a name or report more than planned fail the run; a
 * correct one with grouped skips passes. A deleted check fails run.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "hc_test.h"

static char dir[512];

/* Writes an executable script named name whose body prints lines. */
static int script(const char *name, const char *lines)
{
    return hc_write_script(hc_path(dir, name), "%s", lines);
}

/* Runs sh tests/run.sh on the named scripts; out gets its output (never echoed, not even on a
 * failure: its PASS and FAIL lines would count as this program's). Returns the exit status, -1 on error. */
static int run(const char *progs, char *out, size_t cap)
{
    char cmd[2048], list[1200] = "";
    char copy[600];
    snprintf(copy, sizeof copy, "%s", progs);
    for (char *t = strtok(copy, " "); t; t = strtok(NULL, " ")) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, " %s/%s", dir, t);
    }
    snprintf(cmd, sizeof cmd, "sh tests/run.sh%s 2>&1", list);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last line of text. */
static const char *last_line(const char *text)
{
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n')
        n--;
    while (n && text[n - 1] != '\n')
        n--;
    return text + n;
}

int main(void)
{
    hc_plan(7);
    const char *t = hc_tmpdir("test_runsh");
    if (!t || snprintf(dir, sizeof dir, "%s", t) < 0 ||
        script("good", "echo PLAN 4\necho PASS fake-good.1\necho 'SKIP fake-good.2 [2 checks]: no data'\n"
                       "echo 'SKIP fake-good.3: one'\n") ||
        script("lost", "echo PLAN 3\necho PASS fake-lost.1\necho PASS fake-lost.2\n") ||
        script("noplan", "echo PASS fake-noplan.1\n") ||
        script("repeat", "echo PLAN 2\necho PASS fake-repeat.1\necho PASS fake-repeat.1\n") ||
        script("more", "echo PLAN 1\necho PASS fake-more.1\necho 'SKIP fake-more.2: extra'\n") ||
        script("again", "echo PLAN 1\necho PASS fake-good.1\n") ||
        script("crash", "echo PLAN 1\necho PASS fake-crash.1\nexit 3\n")) {
        hc_fail_rest("runsh-0", "cannot write the fake programs in %s", t ? t : "build/tmp");
        return hc_test_exit();
    }
    static char out[16384];
    int rc = run("good", out, sizeof out);
    hc_check("runsh-1.1", rc == 0 && strcmp(last_line(out), "1 passed, 0 failed\n") == 0 &&
                              strstr(out, "\n3 skipped (see the SKIP lines above)\n"),
             "a correct program with grouped skips: exit %d, last line %s", rc, last_line(out));
    /* Each breaks one of run.sh's rules: the programs run, what run.sh must say, its last line. */
    static const struct {
        const char *name, *progs, *says, *last, *what;
    } bad[] = {
        {"runsh-1.2", "lost", "lost: planned 3 checks, reported 2 (1 lost)\n", "2 passed, 1 failed\n", "a lost check"},
        {"runsh-1.3", "noplan", "noplan: no PLAN line", "1 passed, 1 failed\n", "no plan"},
        {"runsh-1.4", "repeat", "check name fake-repeat.1 reported again", "2 passed, 1 failed\n", "a repeated name"},
        {"runsh-1.5", "more", "more: planned 1 checks, reported 2 (1 more than planned)", "1 passed, 1 failed\n",
         "more than planned"},
        /* Names are unique across the run: another program repeating one fails too. */
        {"runsh-1.6", "good again", "check name fake-good.1 reported again (first by ", "2 passed, 1 failed\n",
         "a name repeated across programs"},
        /* The old rule stays: a non-zero exit without a FAIL line is a failure. */
        {"runsh-1.7", "crash good", "crash: exited with status 3 without reporting a failure", "2 passed, 1 failed\n",
         "a crash"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = run(bad[i].progs, out, sizeof out);
        hc_check(bad[i].name, rc != 0 && strstr(out, bad[i].says) && strcmp(last_line(out), bad[i].last) == 0,
                 "%s: exit %d, last line %s", bad[i].what, rc, last_line(out));
    }
    return hc_test_exit();
}
