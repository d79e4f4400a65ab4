/* Positions files: one JSON object per line (gzip'd when the name ends in .gz), the format of
 * ../shared/golden/README.md. One reader and one writer, side by side. */
#ifndef HC_POSITIONS_H
#define HC_POSITIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

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

/* Parses one JSON line. where names the place for errors ("file.jsonl:12"). Besides the fields'
 * types, what needs no game replay is checked here, where the file and line are known: the
 * board size (sizes.h's range), that the rules string parses, that komi agrees with it, and
 * that an initial encore phase comes with territory scoring. */
int hc_position_parse(const char *json, const char *where, hc_position *out, hc_err *err);
/* Formats one position as a JSON line (without '\n'); returns a malloc'd string. */
char *hc_position_format(const hc_position *p, hc_err *err);

typedef struct hc_posreader hc_posreader;
hc_posreader *hc_posreader_open(const char *path, hc_err *err);
/* Returns 1 with *out filled (caller frees with hc_position_free), 0 at EOF, -1 on error
 * (err names the file and line). */
int hc_posreader_next(hc_posreader *r, hc_position *out, hc_err *err);
void hc_posreader_close(hc_posreader *r);

/* Reads a whole positions file. *out is a malloc'd array the caller frees with
 * hc_positions_free. */
int hc_positions_load(const char *path, hc_position **out, size_t *n, hc_err *err);
void hc_positions_free(hc_position *ps, size_t n);

typedef struct hc_poswriter hc_poswriter;
hc_poswriter *hc_poswriter_open(const char *path, hc_err *err);
int hc_poswriter_write(hc_poswriter *w, const hc_position *p, hc_err *err);
/* Atomically puts the file in place and frees w. */
int hc_poswriter_commit(hc_poswriter *w, hc_err *err);
void hc_poswriter_abort(hc_poswriter *w);

#endif
