/* halfcheck selfplay: positions from seeded random legal games. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cli.h"
#include "harness/data/selfplay.h"

static const cli_opt opts[] = {
    {"size", 1, 0, "board size WxH or N (default 9)", "WxH"},
    {"games", 1, 0, "number of games (default 1)", "N"},
    {"seed", 1, 0, "random seed (default 1)", "N"},
    {"moves", 1, 0, "moves per game at most (default 200)", "N"},
    {"pass-prob", 1, 0, "chance of passing when another move is legal (default 0.02)", "P"},
    {"stride", 1, 0, "record every N-th position of a game (default 1: all)", "N"},
    {"max-positions", 1, 0, "stop after this many positions (default: no limit)", "N"},
    {"handicap-prob", 1, 0, "chance a game starts from 2-4 black setup stones, white to move (default 0)", "P"},
    {"rules", 1, 0, "KataGo rules string (default koSITUATIONALscoreAREAtaxNONEsui1komi7.5)", "RULES"},
    {"out", 1, 0, "positions file to write (JSON Lines, gzip'd when it ends in .gz)", "PATH"},
    {"help", 0, 0, "show this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

int cmd_selfplay(int argc, char **argv)
{
    hc_err err = {0};
    cli_args a;
    static const cli_cmd usage = {"selfplay", opts,
        "usage: halfcheck selfplay --size WxH --games N --seed S --moves M --out POS.jsonl.gz\n\n"
        "Plays seeded random legal games (uniform over legal non-pass moves, passing with a small\n"
        "probability) and writes their positions with every field, the symmetry as testgpuerror\n"
        "derives it. The same options give the same bytes.\n\noptions:\n",
        0, -1};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    if (a.n_pos > 0) {
        hc_err_set(&err, HC_EUSAGE, "unexpected argument \"%s\"", a.pos[0]);
        return cli_fail("selfplay", &err);
    }
    const char *out = cli_require(&a, "out", &err);
    if (!out)
        return cli_fail("selfplay", &err);
    hc_selfplay_opts o;
    hc_selfplay_opts_default(&o);
    const char *v;
    if ((v = cli_get(&a, "size", NULL)) && cli_parse_size(v, &o.x_size, &o.y_size, &err))
        return cli_fail("selfplay", &err);
    int max_pos = 0;
    if (cli_get_int(&a, "games", o.games, &o.games, &err) || cli_get_int(&a, "moves", o.max_moves, &o.max_moves, &err) ||
        cli_get_int(&a, "stride", o.stride, &o.stride, &err) ||
        cli_get_int(&a, "max-positions", 0, &max_pos, &err) ||
        cli_get_double(&a, "pass-prob", o.pass_prob, &o.pass_prob, &err) ||
        cli_get_double(&a, "handicap-prob", o.handicap_prob, &o.handicap_prob, &err))
        return cli_fail("selfplay", &err);
    o.max_positions = max_pos;
    if ((v = cli_get(&a, "seed", NULL))) {
        char *end;
        unsigned long long seed = strtoull(v, &end, 0);
        if (end == v || *end) {
            hc_err_set(&err, HC_EUSAGE, "--seed: \"%s\" is not an integer", v);
            return cli_fail("selfplay", &err);
        }
        o.seed = seed;
    }
    if ((v = cli_get(&a, "rules", NULL))) {
        if (strlen(v) >= sizeof o.rules) {
            hc_err_set(&err, HC_EUSAGE, "--rules: too long");
            return cli_fail("selfplay", &err);
        }
        snprintf(o.rules, sizeof o.rules, "%s", v);
    }
    long n = 0;
    if (hc_selfplay_write(&o, out, &n, &err) != 0)
        return cli_fail("selfplay", &err);
    fprintf(stderr, "halfcheck selfplay: %ld positions from %d games written to %s\n", n, o.games, out);
    return HC_EXIT_OK;
}
