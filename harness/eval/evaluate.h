/* The evaluation core: positions → KataGo's input rows at each position's symmetry → a
 * backend opened through the registry → post-processed outputs, exactly as KataGo's
 * NNEvaluator does it for testgpuerror. The evaluator (hc_evaluator) owns the backend's
 * instances, threads, batching and skip handling; every caller (run, eval, taps,
 * bisect-precision, the GPU tests and benchmarks) goes through it. Rows are built batch by
 * batch, so memory does not grow with the number of positions. Tensor backends get rows;
 * position backends get the positions themselves. */
#ifndef HC_EVALUATE_H
#define HC_EVALUATE_H

#include <stddef.h>

#include "backends/backend.h"
#include "harness/base/err.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "backends/settings.h"


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

/* Called for a position that a position backend cannot express (its evaluation failed with
 * HC_BACKEND_SKIP, backend.h): i indexes ps, reason is the text after the marker. Return
 * nonzero to stop (HC_EINTERRUPTED "interrupted"). */
typedef int (*hc_eval_skip_fn)(void *user, size_t i, const char *reason);

/* Where an evaluation's time went (hc_eval_request.timing): seconds summed over the threads
 * that did each kind of work, so that with lanes they can exceed the wall time. */
typedef struct hc_eval_timing {
    double featurize;   /* positions to input rows: replay, features, symmetry, legal maps */
    double backend;     /* the backend's calls (a GPU's: copies in, the pass, copies out, waits) */
    double postprocess; /* raw heads to outputs */
    double progress;    /* the caller's progress calls (eval's: writing the outputs) */
    long calls;         /* backend calls */
} hc_eval_timing;

/* An evaluation: the positions, where the outputs go, and what to tell the caller. Zero
 * fields mean "none". */
typedef struct hc_eval_request {
    const hc_position *ps;
    size_t n;
    const size_t *order;        /* evaluate ps[order[0..n)] in that order; NULL: 0..n-1 */
    hc_nnoutput *outs;          /* [n], outs[i] for position i (initialised here; free with hc_nnoutput_free) */
    unsigned char *done_mask;   /* [n] or NULL: done_mask[i] = 1 once outs[i] is filled */
    hc_eval_failure *fail;      /* or NULL: which position failed */
    hc_eval_progress progress;  /* or NULL */
    /* Or NULL. Non-NULL: a position backend's per-position refusal (HC_BACKEND_SKIP) leaves
     * that position out instead of failing the evaluation: skip is called, outs[i] is left
     * zeroed and done_mask[i] 0, and the rest goes on (a refused batch of several positions is
     * retried one at a time, a refused call of a positions_per_call backend in halves, so only
     * the refused positions are left out). Progress counts
     * skipped positions as done. Tensor backends never skip. */
    hc_eval_skip_fn skip;
    void *user;                 /* for progress and skip */
    hc_eval_timing *timing;     /* or NULL: where the time went, added to what it holds */
} hc_eval_request;

/* How to open an evaluator. Zero fields take their defaults. */
typedef struct hc_evaluator_opts {
    const char *spec;           /* the backend, through the registry ("ref32", "emulate:fp16", ...) */
    const hc_net *net;          /* outlives the evaluator; NULL only for position backends with their own net */
    hc_eval_settings settings;  /* the NN buffer (nn_x, nn_y) and the evaluation settings */
    int batch;                  /* positions per backend call (0: 1) */
    int threads;                /* 0: 1 */
    /* 1: one instance even where the kind runs lanes (feature rows are read as one stream). */
    int one_instance;
    /* emulate: an in-memory profile and a layer subset (backends/backend.h: hc_backend_open_opts). */
    const struct hc_profile *profile;
    const unsigned char *active;
    int n_active;
    /* Where spec is looked up (backends/backend.h: hc_backend_registry); NULL: the user registry. */
    const struct hc_backend_registry *registry;
    /* Instead of spec: an open tensor backend the caller composed of backends it opened through
     * the registry (taps' layer-by-layer pair); borrowed, never closed here, never run as lanes. */
    hc_backend *backend;
} hc_evaluator_opts;

/* Positions → outputs on one backend: it opens the backend through the registry and decides
 * how to run it. A kind whose instances are independent CPU computations (hc_backend_caps.lanes
 * HC_LANES_ALWAYS) given several threads runs as that many single-threaded instances side by side
 * ("lanes"), each taking hc_evaluator_lane_batch rows of the order per call; a GPU kind
 * (HC_LANES_WHOLE_BATCH) runs lanes that each take the whole batch per call; anything else runs
 * on one instance with its own threads, batch positions per call. All give the same bits. */
typedef struct hc_evaluator hc_evaluator;

hc_evaluator *hc_evaluator_open(const hc_evaluator_opts *o, hc_err *err);

/* Evaluates req->ps[order[0..n)] in batches, at each position's own symmetry, into req->outs.
 * On failure the outputs of positions evaluated so far stay filled (done_mask says which), err
 * names the position and *req->fail says which; with lanes, the failure reported is the first in
 * the order and every position before it is done and reported through progress. Progress is
 * called from the calling thread with the longest finished prefix of the order; nonzero from it
 * (or from skip) stops the evaluation with HC_EINTERRUPTED "interrupted". */
int hc_evaluator_run(hc_evaluator *ev, const hc_eval_request *req, hc_err *err);

/* Feature rows as written by `halfcheck features` (input version of the net, before symmetry)
 * evaluated instead of featurizing positions (tensor backends, one instance). ps may be NULL:
 * then every row is taken at symmetry 0, on a board the size of the buffer, with every empty
 * point legal, and the outputs are from the side to move's perspective (no colour is known). */
int hc_evaluator_run_features(hc_evaluator *ev, const char *features_path, const hc_position *ps, size_t n_ps,
                              hc_nnoutput **outs, size_t *n_out, hc_err *err);

/* The backend's declared resolution of its outputs, NULL for exact floats. */
const hc_resolution *hc_evaluator_resolution(const hc_evaluator *ev);
/* What the backend runs, as its engine reports it (hc_backend_identity), or NULL. */
const char *hc_evaluator_identity(const hc_evaluator *ev);
/* The lanes it runs (0: one instance). */
int hc_evaluator_lanes(const hc_evaluator *ev);
/* Ends an external engine and fills st with its cost (hc_backend_ops.finish); st is all
 * unknown (hc_engine_stats_unknown) for a backend without one. 0, or -1 with err. */
int hc_evaluator_finish(hc_evaluator *ev, hc_engine_stats *st, hc_err *err);
void hc_evaluator_close(hc_evaluator *ev);

/* How hc_evaluator_open shares out work: the lanes for spec at batch and threads (threads when
 * the kind has lanes and threads > 1, else 0: one instance), and the rows per call of each of
 * n_lanes lanes, ceil(batch / n_lanes), so that the rows in flight, and the scratch they need,
 * are those of one instance with n_lanes threads. */
int hc_evaluator_lanes_for(const char *spec, int batch, int threads);
int hc_evaluator_lane_batch(int batch, int n_lanes);

/* One evaluation on a backend already open (tests that drive an instance directly): as
 * hc_evaluator_run on one instance at batch positions per call. */
int hc_eval_positions(hc_backend *b, const hc_net *net, const hc_position *ps, size_t n, const size_t *order,
                      int batch, const hc_eval_settings *s, hc_nnoutput *outs, unsigned char *done_mask,
                      hc_eval_failure *fail, hc_eval_progress progress, void *user, hc_err *err);

#endif
