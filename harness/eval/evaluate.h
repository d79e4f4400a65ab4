/* The evaluation pipeline: positions → KataGo's input rows at each position's symmetry →
 * a backend → post-processed outputs, exactly as KataGo's NNEvaluator does it for
 * testgpuerror. Rows are built batch by batch, so memory does not grow with the number of
 * positions. Tensor backends get rows; position backends get the positions themselves. */
#ifndef HC_EVALUATE_H
#define HC_EVALUATE_H

#include <stddef.h>

#include "backend.h"
#include "err.h"
#include "model.h"
#include "nnoutput.h"
#include "positions.h"
#include "settings.h"


/* Where an evaluation failed, for reports: the position (index into the array, its index and
 * SGF line fields, its move count) and the message. */
typedef struct hc_eval_failure {
    long position;       /* index into ps, -1 when not about one position */
    long position_index; /* the record's "index" field */
    long sgf_line;
    int move_number;
} hc_eval_failure;

/* Called after each batch with the count done so far; return nonzero to stop (HC_EINTERRUPTED
 * "interrupted"). May be NULL. */
typedef int (*hc_eval_progress)(void *user, size_t done, size_t total);

/* Evaluates ps[order[0..n)] (order NULL: 0..n-1) in batches of at most `batch` positions, in
 * that order, at each position's own symmetry, into outs[i] for position i (outs initialised
 * here; free with hc_nnoutput_free). On failure outs of positions evaluated so far stay
 * filled (done_mask[i] = 1 when given), err names the position, and *fail says which. */
int hc_eval_positions(hc_backend *b, const hc_net *net, const hc_position *ps, size_t n, const size_t *order,
                      int batch, const hc_eval_settings *s, hc_nnoutput *outs, unsigned char *done_mask,
                      hc_eval_failure *fail, hc_eval_progress progress, void *user, hc_err *err);

/* Called for a position that a position backend cannot express (its evaluation failed with
 * HC_BACKEND_SKIP, backend.h): i indexes ps, reason is the text after the marker. Return
 * nonzero to stop (HC_EINTERRUPTED "interrupted"). */
typedef int (*hc_eval_skip_fn)(void *user, size_t i, const char *reason);

/* hc_eval_positions, but with skip non-NULL a position backend's per-position refusal leaves
 * that position out instead of failing the evaluation: skip is called, outs[i] is left
 * uninitialised (zeroed) and done_mask[i] 0, and the rest goes on (a refused batch of several
 * positions is retried one at a time, so only the refused positions are left out). Progress
 * counts skipped positions as done. Tensor backends never skip. */
int hc_eval_positions_skip(hc_backend *b, const hc_net *net, const hc_position *ps, size_t n, const size_t *order,
                           int batch, const hc_eval_settings *s, hc_nnoutput *outs, unsigned char *done_mask,
                           hc_eval_failure *fail, hc_eval_progress progress, hc_eval_skip_fn skip, void *user,
                           hc_err *err);

/* Evaluation on several instances at once. lanes[0..n_lanes) are opened instances of one
 * tensor backend (hc_backend_vtbl.lanes, each opened with max_batch >= lane_batch and one
 * thread), each on its own thread: a free lane takes the next lane_batch positions of the order
 * and evaluates them in one call (lane_batch 1: every position alone, as an unbatched
 * evaluation). outs, done_mask and *fail as hc_eval_positions; progress is called from the
 * calling thread with the longest finished prefix of the order, so a caller that streams
 * outputs in order sees what hc_eval_positions would show it. On a failure the lanes finish
 * the positions they hold and take no more; the failure reported is the first in the order,
 * and every position before it is done and reported through progress. */
int hc_eval_positions_lanes(hc_backend *lanes, int n_lanes, int lane_batch, const hc_net *net, const hc_position *ps,
                            size_t n, const size_t *order, const hc_eval_settings *s, hc_nnoutput *outs,
                            unsigned char *done_mask, hc_eval_failure *fail, hc_eval_progress progress, void *user,
                            hc_err *err);

/* Feature rows as written by `halfcheck features` (input version of the net, before symmetry)
 * evaluated instead of featurizing positions. ps may be NULL: then every row is taken at
 * symmetry 0, on a board the size of the buffer, with every empty point legal, and the
 * outputs are from the side to move's perspective (no colour is known). */
int hc_eval_feature_rows(hc_backend *b, const hc_net *net, const char *features_path, const hc_position *ps,
                         size_t n_ps, int batch, const hc_eval_settings *s, hc_nnoutput **outs, size_t *n_out,
                         hc_err *err);

#endif
