/* SGF collections: game trees parsed as KataGo's dataio/sgf.cpp parses them, and the root
 * properties read as its getters read them (board size, komi, rules, handicap, player to move,
 * setup stones, moves).
 *
 * A collection is a sequence of game trees separated by whitespace: one game per line (a .sgfs
 * file) or an ordinary multi-game .sgf file; gzip'd files are read transparently. Each game is
 * numbered from 0 and remembers the line (from 0) and byte offset of its opening '('. (KataGo's
 * own .sgfs loader parses each trimmed line with Sgf::parse, which reads one tree and ignores the
 * rest of the line; here anything but whitespace between games is an error, and a game may span
 * lines. For files with one game per line the two read the same games.)
 *
 * KataGo quirks kept on purpose: whitespace may appear inside a property name ("A B" is "AB");
 * the first B or W value of a node is kept apart as the node's move (so "W[aa]B[bb]" lists
 * B bb before W aa); newlines inside values collapse to one '\n' and tabs become spaces; Fox's
 * missing handicap stones are added on 19x19 as KataGo does. */
#ifndef HC_SGF_H
#define HC_SGF_H

#include <stddef.h>
#include <stdint.h>

#include "harness/base/err.h"
#include "harness/data/positions.h"
#include "harness/go/rules.h"

/* Coordinate of an empty move value (a pass) in hc_sgf_node.move_x/move_y. */
enum { HC_SGF_PASS_COORD = 128 };
/* Deepest nesting of variations accepted (HC_ELIMIT beyond). */
enum { HC_SGF_MAX_DEPTH = 4096 };
/* Largest collection file accepted. */
#define HC_SGF_MAX_FILE ((size_t)1 << 30)

typedef struct hc_sgf_prop {
    char *key;
    char **vals; /* unescaped, NUL-terminated */
    int n_vals;
} hc_sgf_prop;

typedef struct hc_sgf_node {
    hc_sgf_prop *props; /* one entry per distinct key, values in order of appearance */
    int n_props;
    int move_pla;       /* HC_EMPTY when the node has no B/W value */
    int move_x, move_y; /* 0-51, or HC_SGF_PASS_COORD both for "[]"; "tt" is kept as 19,19 */
    uint64_t offset;    /* byte offset of the node's ';' in the file */
} hc_sgf_node;

typedef struct hc_sgf_tree {
    hc_sgf_node *nodes;
    int n_nodes;
    struct hc_sgf_tree *children; /* variations, in file order */
    int n_children;
} hc_sgf_tree;

typedef struct hc_sgf_game {
    hc_sgf_tree tree; /* tree.n_nodes >= 1 */
    long index;       /* from 0 in the collection */
    long line;        /* line of the opening '(', from 0 */
    uint64_t offset;  /* byte offset of the opening '(' */
} hc_sgf_game;

typedef struct hc_sgf_collection {
    char *name; /* the file name used in messages */
    hc_sgf_game *games;
    size_t n_games;
} hc_sgf_collection;

/* Parses a collection. Malformed input fails with HC_EFORMAT naming the file, the game (index
 * from 0, and its line) and the byte offset ("f.sgfs: game 3 (line 4): offset 812 (line 4): ...";
 * lines in messages count from 1 as editors do); too deep nesting is HC_ELIMIT. An input without
 * any game is an error. */
hc_sgf_collection *hc_sgf_load(const char *path, hc_err *err);
/* Same over memory (not NUL-terminated necessarily); name is used in messages. */
hc_sgf_collection *hc_sgf_parse(const char *data, size_t len, const char *name, hc_err *err);
void hc_sgf_free(hc_sgf_collection *c);

/* Prefixes err's message with "NAME: game I (line L): " for errors found after parsing. */
int hc_sgf_game_err(hc_err *err, const hc_sgf_collection *c, const hc_sgf_game *g);

/* Property lookup: NULL when absent. */
const hc_sgf_prop *hc_sgf_node_prop(const hc_sgf_node *n, const char *key);
/* The single value of a property: 1 with *val set, 0 when absent, -1 (HC_EFORMAT) when it has
 * several values, as KataGo's getSingleProperty refuses. */
int hc_sgf_node_single(const hc_sgf_node *n, const char *key, const char **val, hc_err *err);
/* True when the node has AB, AW or AE. */
int hc_sgf_node_has_placements(const hc_sgf_node *n);

/* Root properties, read as KataGo's Sgf getters read them. */
/* SZ: "N" or "W:H"; 19x19 when absent; sizes must be 2..max_len. */
int hc_sgf_size(const hc_sgf_node *root, int max_len, int *x_size, int *y_size, hc_err *err);
/* KM: def when absent; an integer or half-integer, with KataGo's GoGoD and Fox fix-ups. */
int hc_sgf_komi(const hc_sgf_node *root, float def, float *komi, hc_err *err);
/* HA: 0 when absent. */
int hc_sgf_handicap(const hc_sgf_node *root, int *handicap, hc_err *err);
/* RU and KM, both required, as Sgf::getRulesOrFail: RU is any string KataGo's rules parser
 * accepts (rule-set names such as "Japanese" or "tromp-taylor", "koSIMPLEscoreTERRITORY...", JSON),
 * and KM (hc_sgf_komi) then sets the komi. (Not what testgpuerror plays under: see sgfwalk.h.) */
int hc_sgf_rules(const hc_sgf_node *root, hc_rules *out, hc_err *err);
/* PL: HC_BLACK, HC_WHITE, or HC_EMPTY when absent or unrecognised ("b", "black", "w",
 * "white", any case). */
int hc_sgf_pl(const hc_sgf_node *n, int *color, hc_err *err);

/* A growable list of moves (pla HC_EMPTY marks an AE point; x = y = -1 is a pass). */
typedef struct hc_sgf_moves {
    hc_move *v;
    size_t n, cap;
} hc_sgf_moves;
void hc_sgf_moves_free(hc_sgf_moves *m);

/* Appends the node's AB, AW, then AE points (point lists and "[aa:cc]" rectangles, column by
 * column), as KataGo's accumPlacements. Off-board points are HC_EFORMAT. */
int hc_sgf_node_placements(const hc_sgf_node *n, int x_size, int y_size, hc_sgf_moves *out, hc_err *err);
/* Appends the node's moves in KataGo's order: the move if black, the other B values, the move
 * if white, the other W values. "[]" is a pass, and so is "tt" when x_size <= 19 or
 * y_size <= 19. Off-board moves are HC_EFORMAT. */
int hc_sgf_node_moves(const hc_sgf_node *n, int x_size, int y_size, hc_sgf_moves *out, hc_err *err);

/* Parses an integer or a float as KataGo's Global::tryStringToInt / tryStringToFloat do
 * (surrounding whitespace allowed, nothing else). Returns 0 or -1 (no err). */
int hc_sgf_parse_int(const char *s, int *out);
int hc_sgf_parse_float(const char *s, float *out);

#endif
