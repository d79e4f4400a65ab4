/* What the gtp: and analysis: backends share about giving a position record to an external
 * KataGo engine: whether the engine can take it at all (encore phase, board size, komi, setup
 * stones), the history it starts from, and whether its replay gives the record's NN inputs and
 * legal moves. Each engine's wording of a skip reason is passed in, so that the reasons stay
 * the backend's own. Internal to backends/. */
#ifndef HC_ENGINE_REPLAY_H
#define HC_ENGINE_REPLAY_H

#include <stddef.h>

#include "harness/go/board.h"
#include "harness/base/err.h"
#include "harness/go/history.h"
#include "harness/model/model.h"
#include "harness/go/position.h"
#include "harness/go/rules.h"
#include "backends/settings.h"

/* The engine's words in the skip reasons of hc_replay_start. */
typedef struct hc_replay_words {
    const char *encore; /* after "initial encore phase N: " */
    const char *board;  /* between "board XxY: " and " 2..19" */
    const char *komi;   /* between "komi K: " and " integers and half-integers in [-150, 150]" */
    const char *stones; /* after "setup stones that overlap or have no liberties" ("" for none) */
} hc_replay_words;

/* The board of a GTP vertex ("pass" for x < 0) into buf. */
void hc_replay_vertex(int x, int y, int y_size, char *buf, size_t len);

/* Whether the engine can take p at all: why not into why ("" when it can); when it can, its
 * rules into *rules and the board with the setup stones placed into *b. -1 with err on an
 * internal failure. */
int hc_replay_start(const hc_position *p, const hc_replay_words *w, hc_rules *rules, hc_board *b, char *why,
                    size_t len, hc_err *err);

/* The engine clearing its history for a move by pla (KataGo's setPlayerAndClearHistory). */
int hc_replay_restart_history(hc_history *h, int pla, int handicap, hc_err *err);

/* Comparing the record's NN inputs and legal moves with the engine's replay; holds the buffers. */
typedef struct hc_replay_cmp hc_replay_cmp;

enum { HC_REPLAY_SAME = 0, HC_REPLAY_SPATIAL, HC_REPLAY_GLOBAL, HC_REPLAY_LEGAL };

/* The first difference found: kind (HC_REPLAY_*), the channel, and for a global one its values
 * in the record and in the replay. */
typedef struct hc_replay_diff {
    int kind;
    size_t channel;
    double record, replay;
} hc_replay_diff;

hc_replay_cmp *hc_replay_cmp_new(const hc_net *net, int nx, int ny, hc_err *err);
void hc_replay_cmp_free(hc_replay_cmp *c);

/* The NN inputs (under settings s) and legal moves of the record p and of the replay gh, to
 * move p->next_pla; the first difference into *d (kind HC_REPLAY_SAME when none). -1 with err. */
int hc_replay_compare(hc_replay_cmp *c, const hc_eval_settings *s, const hc_position *p, const hc_history *gh,
                      hc_replay_diff *d, hc_err *err);

#endif
