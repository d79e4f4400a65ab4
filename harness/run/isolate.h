/* One backend case in a child process: a crash, a hang or an exit of the backend cannot take
 * the run down, and what the child finished before it is kept. */
#ifndef HC_ISOLATE_H
#define HC_ISOLATE_H

#include <stddef.h>

#include "harness/eval/evaluate.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/go/position.h"

/* What a backend case brings back besides its outputs (the child's side file). */
typedef struct hc_isolate_side {
    int has_res;
    hc_resolution res;
    unsigned char *skipped; /* n flags, the positions the backend could not express */
    size_t n_skipped;
    char *skip_text;        /* malloc'd description of the skipped positions, or NULL */
    char *engine;           /* malloc'd: the backend's identity as its engine reports it, or NULL */
    int has_cost;           /* an external engine's cost (hc_backend_ops.finish) came back */
    hc_engine_stats cost;
} hc_isolate_side;

/* A case: the backend, its positions and how to watch it. */
typedef struct hc_isolate_case {
    const char *spec;
    const hc_net *net;
    const hc_position *ps;
    size_t n;
    const size_t *order; /* or NULL */
    int batch, threads;
    const hc_eval_settings *settings;
    const struct hc_backend_registry *registry; /* where spec is looked up; NULL: the user registry */
    double timeout_s;           /* no progress for this long: killed as hung */
    const char *scratch_prefix; /* the child's files: PREFIX.records, PREFIX.err, PREFIX.side */
    int (*stopped)(void *user); /* polled; nonzero: kill the child, return -2. Or NULL */
    void (*progress)(void *user, size_t done, size_t total); /* or NULL */
    void *user;
    /* The child follows its parent out through a pipe on every system; on Linux also through
     * PR_SET_PDEATHSIG, unless this is set (tests check the portable way alone). */
    int no_pdeathsig;
} hc_isolate_case;

/* Runs the case's backend over its positions in a child process (its own process group, killed
 * whole on a hang or a stop, and by itself when this process dies, however it dies). Returns 0 with outs filled (but for the positions cs->skipped
 * flags) and cs's resolution; -1 with *message (malloc'd) saying what went wrong; -2 when
 * stopped. cs->skipped must hold n zeroed flags. */
int hc_isolate_run(const hc_isolate_case *c, hc_nnoutput *outs, hc_isolate_side *cs, char **message);

#endif
