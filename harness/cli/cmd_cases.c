/* halfcheck cases SUITE.yaml: the suite's net x board x backend cases, one per line as the
 * --only filter of `halfcheck run` reads them ("net=N,board=B,backend=K"), for ci/sweep. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"

static const cli_opt opts[] = {
    {"net", 1, 1, "as halfcheck run's --net (the cases are the same; a net file a case needs must exist)", "PATH|NAME=PATH|DIR"},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

int cmd_cases(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"cases", opts,
        "usage: halfcheck cases SUITE.yaml [--net ...]\n"
        "prints one line per net x board x backend: net=N,board=B,backend=K (halfcheck run --only)\n",
        1, 1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    hc_suite *s = hc_suite_load(a.pos[0], &err);
    if (!s)
        return cli_fail("cases", &err);
    if (cli_apply_nets("cases", s, &a, NULL, 0, &err)) {
        hc_suite_free(s);
        return cli_fail("cases", &err);
    }
    for (size_t i = 0; i < s->n_cases; i++) {
        const char *names[3] = {s->nets[s->cases[i].net].name, s->boards[s->cases[i].board].name,
                                s->backends[s->cases[i].backend].name};
        for (int k = 0; k < 3; k++) {
            if (strpbrk(names[k], ",=\n")) {
                hc_err_set(&err, HC_ECONFIG, "%s: the name \"%s\" holds ',' '=' or a newline, which --only cannot select",
                           a.pos[0], names[k]);
                hc_suite_free(s);
                return cli_fail("cases", &err);
            }
        }
        printf("net=%s,board=%s,backend=%s\n", names[0], names[1], names[2]);
    }
    hc_suite_free(s);
    return HC_EXIT_OK;
}
