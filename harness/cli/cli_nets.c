/* --net for `halfcheck run` and `halfcheck katago`: the user's model files in place of a suite's. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/cli/cli.h"
#include "harness/config/config.h"
#include "harness/base/files.h"

enum { MAX_NET_SPECS = 16 };

int cli_apply_nets(const char *cmd, hc_suite *s, const cli_args *a, const char *const *only, size_t n_only,
                   hc_err *err)
{
    const char *specs[MAX_NET_SPECS];
    int n = cli_get_all(a, "net", specs, MAX_NET_SPECS);
    if (n > MAX_NET_SPECS)
        return hc_err_set(err, HC_EUSAGE, "at most %d --net options", MAX_NET_SPECS);
    if (n > 0) {
        /* Which file each net had, to say which ones changed (the suite owns both strings). */
        const char *before[64];
        size_t nb = s->n_nets < 64 ? s->n_nets : 64;
        for (size_t i = 0; i < nb; i++)
            before[i] = s->nets[i].model;
        if (hc_suite_replace_nets(s, specs, (size_t)n, err))
            return -1;
        for (size_t i = 0; i < nb; i++) {
            if (s->nets[i].model != before[i])
                fprintf(stderr, "halfcheck %s: net %s: %s\n", cmd, s->nets[i].name, s->nets[i].model);
            else
                fprintf(stderr, "halfcheck %s: net %s: not replaced, keeps %s\n", cmd, s->nets[i].name,
                        s->nets[i].model);
        }
    }
    unsigned char *sel = hc_calloc(s->n_cases ? s->n_cases : 1, 1, err, "cases");
    if (!sel || hc_suite_select(s, only, n_only, sel, err)) {
        free(sel);
        return -1;
    }
    for (size_t i = 0; i < s->n_nets; i++) {
        int used = 0;
        for (size_t k = 0; k < s->n_cases && !used; k++)
            used = sel[k] && s->cases[k].net == i;
        if (!used)
            continue;
        struct stat st;
        if (stat(s->nets[i].model, &st) != 0) {
            free(sel);
            return hc_err_set(err, HC_EUSAGE,
                              "net %s: %s: %s; give your model file with --net PATH (every net), --net %s=PATH "
                              "(this one) or --net DIR (a directory of nets, matched by file name)",
                              s->nets[i].name, s->nets[i].model, strerror(errno), s->nets[i].name);
        }
    }
    free(sel);
    return 0;
}

char *cli_rerun_args(const cli_args *a)
{
    const char *specs[MAX_NET_SPECS + 1];
    int n = cli_get_all(a, "net", specs, MAX_NET_SPECS + 1);
    if (n > MAX_NET_SPECS)
        n = MAX_NET_SPECS;
    size_t cap = 64 + 4 * strlen(cli_get(a, "timeout", "")) + 4 * strlen(cli_get(a, "ref", ""));
    for (int i = 0; i < n; i++)
        cap += 4 * strlen(specs[i]) + 16; /* quoting at most quadruples a word */
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n && o < cap; i++) {
        o += (size_t)snprintf(out + o, cap - o, " --net ");
        if (o < cap)
            o += hc_shell_word(out + o, cap - o, specs[i]);
    }
    /* --timeout decides what counts as hung, --ref where the reference is computed. */
    static const char *const valued[] = {"timeout", "ref"};
    for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++) {
        const char *v = cli_get(a, valued[i], NULL);
        if (v && o < cap)
            o += (size_t)snprintf(out + o, cap - o, " --%s ", valued[i]);
        if (v && o < cap)
            o += hc_shell_word(out + o, cap - o, v);
    }
    if (cli_has(a, "allow-skips") && o < cap)
        o += (size_t)snprintf(out + o, cap - o, " --allow-skips");
    /* --repeat changes what a case checks (its "repeat" result); numbers need no quoting */
    if (cli_has(a, "repeat") && o < cap)
        o += (size_t)snprintf(out + o, cap - o, " --repeat %.8s", cli_get(a, "repeat", ""));
    if (cli_has(a, "repeat-limit") && o < cap)
        snprintf(out + o, cap - o, " --repeat-limit %.24s", cli_get(a, "repeat-limit", ""));
    return out;
}

char *cli_command_line(const char *cmd, int argc, char **argv)
{
    size_t cap = 32 + strlen(cmd);
    for (int i = 1; i < argc; i++)
        cap += 4 * strlen(argv[i]) + 4;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = (size_t)snprintf(out, cap, "halfcheck %s", cmd);
    for (int i = 1; i < argc && o < cap; i++) {
        out[o++] = ' ';
        o += hc_shell_word(out + o, cap - o, argv[i]);
    }
    return out;
}
