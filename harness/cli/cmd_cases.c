/* halfcheck cases SUITE.yaml: the suite's net x board x backend cases, one per line as the
 * --only filter of `halfcheck run` reads them ("net=N,board=B,backend=K"), for ci/sweep. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/cli/cli.h"
#include "harness/config/config.h"

static const cli_opt opts[] = {
    {"net", 1, 1, "as halfcheck run's --net (the cases are the same; a net file a case needs must exist)", "PATH|NAME=PATH|DIR"},
    {"work", 0, 0, "prefix each case with an estimate of its work and a tab (its positions file's size times its model's; "
                   "ci/sweep starts the biggest first)", NULL},
    {"files", 0, 0, "print the files the cases read instead (KIND<TAB>PATH: suite, include, model, positions, sgf)", NULL},
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

/* One KIND<TAB>PATH line; a path that a line cannot hold is refused by name. */
static int print_file(const char *kind, const char *path, hc_err *err)
{
    if (strpbrk(path, "\t\n"))
        return hc_err_set(err, HC_ECONFIG, "%s file \"%s\" holds a tab or a newline", kind, path);
    printf("%s\t%s\n", kind, path);
    return 0;
}

/* Every file the cases read: the suite, the files it includes, and the nets' and boards' data
 * of the nets and boards that some case uses (--net applied), each once. */
static int print_files(const hc_suite *s, hc_err *err)
{
    int rc = print_file("suite", s->path, err);
    for (size_t i = 0; !rc && i < s->n_includes; i++)
        rc = print_file("include", s->includes[i], err);
    for (size_t i = 0; !rc && i < s->n_nets; i++)
        for (size_t c = 0; c < s->n_cases; c++)
            if (s->cases[c].net == i) {
                rc = print_file("model", s->nets[i].model, err);
                break;
            }
    for (size_t i = 0; !rc && i < s->n_boards; i++)
        for (size_t c = 0; c < s->n_cases; c++)
            if (s->cases[c].board == i) {
                const hc_board_cfg *b = &s->boards[i];
                rc = b->positions ? print_file("positions", b->positions, err) : print_file("sgf", b->sgf, err);
                break;
            }
    return rc;
}

/* A file's size in bytes, 0 when it cannot be stat'ed (the case's run says why). */
static double file_bytes(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 ? (double)st.st_size : 0.0;
}

/* The estimate --work prints: the positions' bytes (more positions, longer games, bigger boards)
 * times the model's (more weights). Only an order for starting the jobs, not a prediction. */
static double case_work(const hc_suite *s, const hc_case *c)
{
    const hc_board_cfg *b = &s->boards[c->board];
    return file_bytes(b->positions ? b->positions : b->sgf) * file_bytes(s->nets[c->net].model);
}

int cmd_cases(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"cases", opts,
        "usage: halfcheck cases SUITE.yaml [--net ...] [--work | --files]\n"
        "prints one line per net x board x backend: net=N,board=B,backend=K (halfcheck run --only);\n"
        "--files: the files those cases read, one KIND<TAB>PATH line each (ci/sweep sends them)\n",
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
    if (cli_has(&a, "files")) {
        int rc = print_files(s, &err);
        hc_suite_free(s);
        return rc ? cli_fail("cases", &err) : HC_EXIT_OK;
    }
    int work = cli_has(&a, "work");
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
        if (work)
            printf("%.0f\t", case_work(s, &s->cases[i]));
        printf("net=%s,board=%s,backend=%s\n", names[0], names[1], names[2]);
    }
    hc_suite_free(s);
    return HC_EXIT_OK;
}
