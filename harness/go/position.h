/* A Go position as halfcheck tests it: setup stones, rules, the moves played, the symmetry to
 * evaluate at. The record type every layer passes around; data/positions.h reads and writes files of them. */
#ifndef HC_POSITION_H
#define HC_POSITION_H

#include <stdbool.h>

#include "harness/base/err.h"

/* Colors as KataGo numbers them. */
enum { HC_EMPTY = 0, HC_BLACK = 1, HC_WHITE = 2 };

typedef struct hc_xy {
    int x, y; /* 0-based from the top-left */
} hc_xy;

typedef struct hc_move {
    int pla;  /* HC_BLACK or HC_WHITE */
    int x, y; /* both -1 for a pass */
} hc_move;

enum { HC_RULES_STR_MAX = 128 };

typedef struct hc_position {
    long index;
    long sgf_line; /* line of the game in its SGF collection, from 0 */
    long file_line; /* line of the record in the positions file it was read from, from 1; 0 when
                     * it was not read from one: lets a caller that knows the path name the place
                     * of an error found later, when the game is replayed */
    int x_size, y_size;
    char rules[HC_RULES_STR_MAX]; /* KataGo rules string, komi included */
    float komi;
    hc_xy *initial_black; /* owned */
    int n_initial_black;
    hc_xy *initial_white; /* owned */
    int n_initial_white;
    int initial_pla;
    int initial_encore_phase;
    int initial_turn_number;
    bool assume_multiple_starting_black_moves_are_handicap;
    hc_move *moves; /* owned */
    int n_moves;
    int next_pla;
    /* Derived by KataGo; a featurizer reproduces them. */
    float white_handicap_bonus_score;
    int encore_phase;
    int symmetry; /* 0-7: bit 0 flip y, bit 1 flip x, bit 2 transpose */
} hc_position;

/* Frees the arrays a position owns and zeroes it. */
void hc_position_free(hc_position *p);
/* Deep copy; dst is overwritten (not freed first). */
int hc_position_copy(hc_position *dst, const hc_position *src, hc_err *err);

#endif
