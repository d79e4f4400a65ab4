/* The command line's conventions (issue 23 item 4): --version/-V, -h/--help on every command
 * never running it, "did you mean" for a mistyped command or option, `halfcheck backends`
 * listing the registry's kinds and the built-in profiles, placeholders that name the value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "hc_test.h"
#include "backends/profile.h"

enum { MAX_CMDS = 64 };

/* The command names from `halfcheck --help` (its "commands:" section), so that a command added
 * to main.c is covered without editing this test. */
static int read_commands(const char *help, char names[][32])
{
    const char *p = strstr(help, "commands:\n");
    int n = 0;
    if (!p)
        return 0;
    p += strlen("commands:\n");
    while (*p == ' ' && n < MAX_CMDS) {
        if (sscanf(p, " %31s", names[n]) == 1)
            n++;
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    return n;
}

int main(void)
{
    const char *hc = hc_halfcheck_bin();
    const char *dir = hc_tmpdir("test_cli_conv");
    char cmd[4096], top[600], out[600], err[600], work[600];
    snprintf(top, sizeof top, "%s", hc_path(dir, "top.txt"));
    snprintf(out, sizeof out, "%s", hc_path(dir, "out.txt"));
    snprintf(err, sizeof err, "%s", hc_path(dir, "err.txt"));
    snprintf(work, sizeof work, "%s", hc_path(dir, "work"));

    hc_plan(9);
    /* --version, -V and the version command print the same line. */
    int r1 = hc_shf("%s --version > %s", hc, out);
    char *v1 = hc_slurp(out);
    int r2 = hc_shf("%s -V > %s", hc, out);
    char *v2 = hc_slurp(out);
    int r3 = hc_shf("%s version > %s", hc, out);
    char *v3 = hc_slurp(out);
    hc_check("cliconv-1.1", r1 == 0 && r2 == 0 && r3 == 0 && v1 && v2 && v3 && strncmp(v1, "halfcheck ", 10) == 0 &&
                                !strcmp(v1, v2) && !strcmp(v1, v3),
             "--version %d, -V %d, version %d: \"%s\" \"%s\"", r1, r2, r3, v1 ? v1 : "", v2 ? v2 : "");
    free(v1);
    free(v2);
    free(v3);

    /* did you mean: a command one letter off, an option one letter off, and nothing for garbage. */
    int rc = hc_shf("%s evl 2> %s", hc, err);
    hc_check("cliconv-2.1", rc == 2 && strstr(hc_text(err), "did you mean \"eval\""), "rc %d: %s", rc, hc_text(err));
    rc = hc_shf("%s eval --nett x 2> %s", hc, err);
    hc_check("cliconv-2.2", rc == 2 && strstr(hc_text(err), "did you mean --net?"), "rc %d: %s", rc, hc_text(err));
    rc = hc_shf("%s run --thread 2 x.yaml 2> %s", hc, err);
    hc_check("cliconv-2.3", rc == 2 && strstr(hc_text(err), "did you mean --threads?"), "rc %d: %s", rc, hc_text(err));
    rc = hc_shf("%s zzzzqqq 2> %s", hc, err);
    hc_check("cliconv-2.4", rc == 2 && !strstr(hc_text(err), "did you mean"), "rc %d: %s", rc, hc_text(err));

    /* halfcheck backends: every kind of the user registry, with its syntax and summary, and every
     * built-in profile, straight from the tables the code uses; no test kind. */
    rc = hc_shf("%s backends > %s", hc, out);
    const char *bl = hc_text(out);
    int kinds = 0, missing = 0;
    char what[256] = "";
    const hc_backend_kind *const *uk = hc_backend_registry_user()->kinds;
    for (int i = 0; uk[i]; i++, kinds++) {
        if (!strstr(bl, uk[i]->syntax) || !strstr(bl, uk[i]->summary)) {
            missing++;
            snprintf(what, sizeof what, "%s", uk[i]->name);
        }
    }
    hc_check("cliconv-3.1", rc == 0 && kinds > 0 && missing == 0 && !strstr(bl, "fault:"),
             "rc %d, %d of %d kinds missing (last %s), or a test kind listed", rc, missing, kinds, what);
    int profs = 0;
    missing = 0;
    for (const char *const *n = hc_profile_builtin_names(); *n; n++, profs++) {
        char line[64];
        snprintf(line, sizeof line, "\n  %s ", *n);
        if (!strstr(bl, line)) {
            missing++;
            snprintf(what, sizeof what, "%s", *n);
        }
    }
    hc_check("cliconv-3.2", profs > 0 && missing == 0, "%d of %d profiles missing (last %s)", missing, profs, what);
    /* eval --help points to the command that now exists */
    hc_shf("%s eval --help > %s", hc, out);
    hc_check("cliconv-3.3", strstr(hc_text(out), "halfcheck backends") != NULL, "eval --help lacks the pointer");

    /* Every command: -h and --help (even after other arguments that would do something) print
     * its usage on stdout, exit 0 and write nothing; its options name what they take. */
    rc = hc_shf("%s --help > %s", hc, top);
    char names[MAX_CMDS][32];
    int n = read_commands(hc_text(top), names);
    hc_check("cliconv-4.0", rc == 0 && n >= 10, "rc %d, %d commands in halfcheck --help", rc, n);
    hc_plan(3 * (unsigned)n);
    for (int i = 0; i < n; i++) {
        const char *forms[2] = {"-h", "--help"};
        for (int k = 0; k < 2; k++) {
            hc_shf("rm -rf %s && mkdir -p %s", work, work);
            /* --out is what most commands write to; the positional is what run reads */
            snprintf(cmd, sizeof cmd, "cd %s && %s %s --out made %s x.yaml > ../out.txt 2> ../err.txt", work, hc,
                     names[i], forms[k]);
            rc = hc_sh(cmd);
            const char *o = hc_text(out);
            int empty = hc_shf("test -z \"$(ls -A %s)\"", work) == 0;
            char name[64];
            snprintf(name, sizeof name, "cliconv-4.%d.%d", i + 1, k + 1);
            hc_check(name, rc == 0 && strncmp(o, "usage: halfcheck ", 17) == 0 && empty,
                     "%s %s: rc %d, directory %s, stdout \"%.60s\", stderr \"%.200s\"", names[i], forms[k], rc,
                     empty ? "untouched" : "written", o, hc_text(err));
        }
        hc_shf("%s %s --help > %s", hc, names[i], out);
        const char *o = hc_text(out);
        char name[64];
        snprintf(name, sizeof name, "cliconv-4.%d.3", i + 1);
        hc_check(name, !strstr(o, " VALUE"), "%s --help has a VALUE placeholder", names[i]);
    }
    return hc_test_exit();
}
