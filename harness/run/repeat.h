/* Nondeterminism as a check: a backend evaluates every position of a case N times, each time in another
 * batch composition and order, and the positions whose outputs differ in any bit between evaluations
 * are named, with by how much and which outputs. A backend whose answer depends on what else is in the
 * batch, on the order, on a race or on uninitialized memory shows here even when each answer alone is
 * within its tier.
 *
 * Evaluation k (0 .. N-1) runs in its own child process (harness/run/isolate.h): k = 0 in the positions'
 * order at the case's batch size; odd k one position per call, even k > 0 the case's batch size, each in
 * its own shuffled order (seeded from the case and k), so that every position meets other neighbours. */
#ifndef HC_REPEAT_H
#define HC_REPEAT_H

#include <stddef.h>
#include <stdint.h>

#include "harness/base/err.h"
#include "harness/eval/evaluate.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "harness/metrics/stats.h"

/* One position whose outputs differ between evaluations. */
typedef struct hc_repeat_diff {
    size_t position;    /* index into the case's positions */
    int evaluation;     /* the first evaluation whose outputs differ from evaluation 0's */
    double max_abs;     /* the largest |difference| of one output value over every evaluation */
    char outputs[200];  /* which outputs differed: "value, policy", in the order of hc_nnoutput's fields */
} hc_repeat_diff;

typedef struct hc_repeat {
    int evaluations;    /* N */
    size_t n;           /* positions */
    size_t n_diff;      /* positions that differ */
    hc_repeat_diff *diff; /* [n_diff], in position order */
    double max_abs;     /* the largest difference over every position */
} hc_repeat;

/* The order and batch size of evaluation k (above) of n positions: order[0..n) filled. */
void hc_repeat_plan(int k, size_t n, int batch, uint64_t seed, size_t *order, int *batch_k);
/* order[0..n) = a permutation of 0..n-1 drawn from seed (Fisher-Yates on xorshift64*): the one
 * shuffle of a case's positions, for a batched case's order (the runner) and for the repeated
 * evaluations' orders here, so that a seed gives the same order everywhere. */
void hc_repeat_shuffle(size_t *order, size_t n, uint64_t seed);

/* Adds evaluation k's outputs against evaluation 0's (base): each position whose outputs differ in any bit
 * (skip: positions either evaluation left out, or NULL) is recorded once, its largest difference kept
 * over later evaluations. 0, or -1 with err when out of memory. */
int hc_repeat_add(hc_repeat *r, int k, const hc_nnoutput *base, const hc_nnoutput *outs, const unsigned char *skip,
                  hc_err *err);

enum { HC_REPEAT_SAME = 0, HC_REPEAT_WITHIN = 1, HC_REPEAT_DIFFERS = 2 };

/* The verdict against limit (the largest |difference| of any output value allowed; 0: none):
 * HC_REPEAT_SAME "deterministic: N evaluations of n positions (...) gave the same bits",
 * HC_REPEAT_WITHIN "differs within LIMIT: ...", or HC_REPEAT_DIFFERS "nondeterministic: ... positions
 * P (value by X in evaluation K), ..." naming at most 8 positions, into buf. */
int hc_repeat_verdict(const hc_repeat *r, double limit, int batch, char *buf, size_t len);

void hc_repeat_clear(hc_repeat *r);

/* A case evaluated N times: the backend, its positions and how to watch it (as hc_isolate_case). */
typedef struct hc_repeat_opts {
    const char *spec;
    const hc_net *net;
    const hc_position *ps;
    size_t n;
    const hc_eval_settings *settings;
    int batch, threads, evaluations;
    const struct hc_backend_registry *registry; /* where spec is looked up; NULL: the user registry */
    uint64_t seed;
    double timeout_s;
    const char *scratch_prefix; /* the children's files: PREFIX-K.* */
    int (*stopped)(void *user);
    void (*progress)(void *user, size_t done, size_t total); /* done over every evaluation: N * n */
    void *user;
    int no_pdeathsig;
} hc_repeat_opts;

/* Runs the N evaluations and compares them into *r (cleared first). 0; -1 with *message (malloc'd) when
 * an evaluation failed (which one, and why); -2 when stopped. *st (malloc'd, may be NULL on failure):
 * KataGo's statistics of the evaluation that differs most against evaluation 0 (all zero when
 * deterministic). */
int hc_repeat_run(const hc_repeat_opts *o, hc_repeat *r, hc_stats **st, char **message, hc_err *err);

#endif
