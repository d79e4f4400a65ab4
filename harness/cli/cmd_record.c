/* halfcheck record: the positions KataGo's testgpuerror visits in an SGF collection, written as a
 * positions file. */
#include <stdio.h>
#include <string.h>

#include "harness/cli/cli.h"
#include "harness/data/sgfwalk.h"

static const cli_opt opts[] = {
    {"sgf", 1, 0, "SGF collection: one game per line (.sgfs) or a multi-game .sgf, gzip'd or not", "PATH"},
    {"out", 1, 0, "positions file to write (JSON Lines, gzip'd when it ends in .gz)", "PATH"},
    {"help", 0, 0, "show this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

int cmd_record(int argc, char **argv)
{
    hc_err err = {0};
    cli_args a;
    static const cli_cmd usage = {"record", opts,
        "usage: halfcheck record --sgf FILE --out POS.jsonl.gz\n\n"
        "Visits every game's positions as KataGo's testgpuerror does (Sgf::iterAllUniquePositions:\n"
        "all variations, unique positions per game, Tromp-Taylor rules with situational superko\n"
        "and komi 7.5 whatever the SGF says) and writes them with every field.\n\noptions:\n",
        0, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    const char *sgf = cli_require(&a, "sgf", &err);
    const char *out = sgf ? cli_require(&a, "out", &err) : NULL;
    if (!sgf || !out)
        return cli_fail("record", &err);
    if (a.n_pos > 0) {
        hc_err_set(&err, HC_EUSAGE, "unexpected argument \"%s\"", a.pos[0]);
        return cli_fail("record", &err);
    }
    long n = 0;
    if (hc_record_file(sgf, out, &n, &err) != 0)
        return cli_fail("record", &err);
    fprintf(stderr, "halfcheck record: %ld positions written to %s\n", n, out);
    return HC_EXIT_OK;
}
