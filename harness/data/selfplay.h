/* Seeded random self-play: legal games played by choosing uniformly among the legal non-pass
 * moves (passing with a small probability, or when nothing else is legal), recorded as
 * positions-file records with every field KataGo derives (white handicap bonus, encore phase,
 * and testgpuerror's symmetry: situation hash (draw-equivalent wins 0.5) hash0 & 7). For small
 * embedded position sets that need nothing outside the repository. Deterministic for a seed. */
#ifndef HC_SELFPLAY_H
#define HC_SELFPLAY_H

#include <stdint.h>

#include "harness/base/err.h"
#include "harness/data/positions.h"

typedef struct hc_selfplay_opts {
    int x_size, y_size;              /* board, 1..19 each */
    int games;                       /* number of games */
    uint64_t seed;
    int max_moves;                   /* moves per game at most (a game also ends when the rules end it) */
    double pass_prob;                /* chance of passing when other moves are legal */
    int stride;                      /* record every stride-th position of a game (random phase per game) */
    long max_positions;              /* stop after this many positions (0: no limit) */
    double handicap_prob;            /* chance that a game starts from 2..4 black setup stones, white to move */
    char rules[HC_RULES_STR_MAX];    /* any rules string KataGo parses */
} hc_selfplay_opts;

/* 9x9, 1 game, seed 1, 200 moves, pass 0.02, stride 1, no limit, no handicap,
 * "koSITUATIONALscoreAREAtaxNONEsui1komi7.5". */
void hc_selfplay_opts_default(hc_selfplay_opts *o);

/* Called for each recorded position (borrowed for the call). Return 0 to go on, -1 with err. */
typedef int (*hc_selfplay_fn)(const hc_position *p, void *user, hc_err *err);

/* Plays the games and hands each recorded position to fn: index counts from 0, sgf_line is the
 * game number. Positions of finished games are not recorded. */
int hc_selfplay_run(const hc_selfplay_opts *o, hc_selfplay_fn fn, void *user, hc_err *err);

/* hc_selfplay_run into a positions file (atomically); *n_out (may be NULL) gets the count. */
int hc_selfplay_write(const hc_selfplay_opts *o, const char *path, long *n_out, hc_err *err);

#endif
