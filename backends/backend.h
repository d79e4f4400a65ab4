/* Backends: what halfcheck tests. A backend is a table of function pointers (hc_backend_vtbl)
 * plus an opaque instance it opens. Two shapes:
 *  - tensor backends (ref32, emulate, cuda, pipe, ...) take featurized, symmetrized rows and
 *    return raw heads (refs/engine.h: logits, no softmax or scaling);
 *  - position backends (a KataGo engine, a recorded outputs file) take positions and return
 *    post-processed outputs (harness/data/nnoutput.h).
 * The registry (backends/registry.c) holds one line per backend kind and finds a kind by the
 * prefix of a spec: "emulate:fp16-tc" opens the `emulate` backend with params "fp16-tc";
 * "ref32" opens ref32 with params "". Only the backend itself parses its params.
 *
 * Lifetimes: the net passed to open outlives the instance; the instance outlives every call
 * made on it; close frees it. An instance is used by one thread at a time. */
#ifndef HC_BACKEND_H
#define HC_BACKEND_H

#include "harness/base/err.h"
#include "harness/model/heads.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/go/position.h"
#include "backends/settings.h"

enum hc_backend_shape { HC_BACKEND_TENSOR = 0, HC_BACKEND_POSITION = 1 };

struct hc_profile; /* backends/profile.h */

/* How to open a backend (hc_backend_open_with): the spec and the sizes, plus options only
 * some kinds take (zero: none). */
typedef struct hc_backend_open_opts {
    const char *spec; /* "name" or "name:params" */
    const hc_net *net;
    int nx, ny;
    int max_batch; /* rows per eval call */
    int threads;
    /* emulate: a parsed profile used instead of the spec's params (copied; stays the
     * caller's), and the layers it applies to (active[i] != 0, i indexing hc_net_layers's
     * order, i == n_layers the input rows; NULL: every layer). */
    const struct hc_profile *profile;
    const unsigned char *active;
    int n_active;
} hc_backend_open_opts;

/* hc_resolution (harness/data/nnoutput.h): what a backend declares of its outputs. */

/* A backend that cannot run a case at all (an environment variable its spec names is unset, a
 * setting its engine cannot take, a position it cannot express) fails with HC_EBACKEND and a
 * message that starts with HC_BACKEND_SKIP followed by the reason; the runner should record
 * such a case as skipped (HC_OUT_SKIPPED) rather than as an error. Prefixes added on the way
 * up ("backend X: ", "position N ...: ") come before it, so look for it with strstr. */
#define HC_BACKEND_SKIP "skipped: "

/* What an external engine cost (hc_backend_vtbl.finish): measured by halfcheck (positions,
 * seconds, the operating system's peak resident memory of the engine processes) and, where the
 * engine batches, its own count of rows and batches from its log. A negative figure (or 0
 * engines) is unknown. */
typedef struct hc_engine_stats {
    long positions;      /* positions the engine answered */
    double eval_seconds; /* wall time inside eval_positions */
    double peak_rss_kib; /* the largest engine process's peak resident set, KiB (getrusage) */
    int engines;         /* engine processes that ran (one per symmetry for analysis:) */
    long nn_rows, nn_batches; /* summed over the engines' logs ("NN rows", "NN batches") */
    double avg_batch;    /* nn_rows / nn_batches */
    long max_batch;      /* the largest batch the engine will form (an analysis engine's own
                          * maxBatchSize, the batch pipe: was sent), -1 unknown */
    char version[64];    /* the engine's own version (analysis: query_version), "" unknown */
    int batching;        /* 1: this instance was to evaluate in batches (its rows per batch decide
                          * whether the case is a batched check at all) */
    int engine_batches;  /* 1: the engine formed the batches itself from concurrent queries, by
                          * timing (KataGo's analysis engine): its batched figures depend on how
                          * it formed them, and a rerun may form others (the reports say so) */
} hc_engine_stats;

/* Every figure unknown. */
hc_engine_stats hc_engine_stats_unknown(void);

/* hc_backend_vtbl.lanes */
enum { HC_LANES_ALWAYS = 1, HC_LANES_WHOLE_BATCH = 2 };

typedef struct hc_backend_vtbl {
    const char *name; /* the registry key, e.g. "ref32" */
    int shape;        /* enum hc_backend_shape */
    const char *help; /* one line: what it is and what its params mean */

    /* Opens an instance. params: what follows "name:" in the spec ("" when absent). net may
     * be NULL for position backends that carry their own net. Returns the instance or NULL
     * with err set. */
    void *(*open)(const char *params, const hc_net *net, int nx, int ny, int max_batch,
                  int threads, hc_err *err);

    /* Tensor backends: evaluates `batch` rows (refs/engine.h for the layouts) into out.
     * NULL for position backends. */
    int (*eval)(void *inst, int batch, const float *spatial, const float *global,
                const float *meta, hc_raw_heads *out, hc_err *err);

    /* Position backends: evaluates n positions (at each position's symmetry) into outs
     * (initialised by the caller for the buffer size). NULL for tensor backends. */
    int (*eval_positions)(void *inst, int n, const hc_position *pos, hc_nnoutput *outs,
                          hc_err *err);

    void (*close)(void *inst);

    /* Optional (NULL = "not supported"): installs a layer hook (refs/engine.h: hc_tap,
     * hc_engine_hook_fn) that later evals call after every layer, on worker threads; fn NULL
     * removes it. The hook reads (or, for storage emulation, modifies) each layer's output,
     * so a caller can record the layers it wants for bisect-precision. Callers use
     * hc_backend_set_taps, which reports "not supported" for NULL. */
    int (*set_taps)(void *inst, hc_engine_hook_fn fn, void *user, hc_err *err);

    /* Optional (NULL = never taps): nonzero when this instance hands back taps. Such a
     * backend's eval, given out->taps non-NULL (harness/model/heads.h: hc_tapset), resets
     * that tapset and fills it with the batch's intermediate tensors, named as docs/TAPS.md
     * says, in its forward order, each with the element format it was stored in; with
     * out->taps NULL it does nothing more than without taps. How to tap a new backend: fill
     * the list with hc_tapset_entry_get in eval. ref32 and emulate fill it from their engine
     * hook (not together with a set_taps hook), pipe from its program's replies. */
    int (*taps)(void *inst);

    /* Optional (NULL = exact floats): the resolution of the outputs (see hc_resolution),
     * owned by the instance. */
    const hc_resolution *(*resolution)(void *inst);

    /* Optional, position backends: the board config's evaluation settings (policy optimism,
     * PDA, temperature, human-SL profile), given before the positions they apply to. A
     * backend that never gets them assumes hc_eval_settings_default's. Fails (e.g. with
     * HC_BACKEND_SKIP) when its engine cannot take a setting. */
    int (*configure)(void *inst, const struct hc_eval_settings *s, hc_err *err);

    /* HC_LANES_ALWAYS: instances are independent CPU computations (ref32, emulate) whose rows'
     * bits do not depend on the rows sharing a call: an evaluation given T threads runs T
     * single-threaded instances side by side, each taking its own run of positions
     * (hc_eval_positions_lanes), so featurization and post-processing run in parallel too and
     * no thread waits for the slowest at the end of every batch. HC_LANES_WHOLE_BATCH: T
     * instances side by side as well, but each call still takes the evaluation's whole batch
     * (the same consecutive runs of positions as one instance would take), so that a batched
     * check sees the batches it asked for: a GPU kind, whose instances run their passes on their
     * own threads' streams, so that T passes are on the GPU at once. 0: one instance (an
     * external engine). */
    int lanes;

    /* Optional, with lanes: opens another instance like `base` (an open instance of this
     * backend) for max_batch rows and `threads` threads that borrows base's read-only state
     * (weights, prepared convolutions), so that lanes do not each hold a copy. base must
     * outlive it. NULL: lanes are opened independently. */
    void *(*open_sharing)(void *base, int max_batch, int threads, hc_err *err);

    /* Optional: opens an instance with the extra options of hc_backend_open_opts (an
     * in-memory profile, a layer subset). NULL: the kind takes none of them. */
    void *(*open_opts)(const char *params, const struct hc_backend_open_opts *o, hc_err *err);
    /* Optional: checks params without opening anything (no net needed, no engine started): the
     * kind's syntax, the names it takes (profiles, fault and mutation kinds, @options) and the
     * files it reads, so that a suite's mistake is refused before any work starts
     * (hc_backend_check). NULL: open is the first check. */
    int (*check)(const char *params, hc_err *err);
    /* Optional (NULL or "": none): what the instance runs, as the engine itself reports it
     * (a GTP engine's `name` and `version`, KataGo's model and fp16 mode...), owned by the
     * instance. Reports carry it as the backend's engine in their provenance (results.h). */
    const char *(*identity)(void *inst);

    /* Optional, position backends: how many positions one eval_positions call takes when the
     * evaluator's batch is `batch` (NULL: `batch`, and a shuffled order one at a time). The
     * evaluator then gathers that many positions of its order into each call, wherever they
     * are: an engine that batches concurrent queries itself gets enough of them at once. */
    int (*positions_per_call)(void *inst, int batch);

    /* Optional, external engines: ends the engine processes (as close would), then fills st
     * with what they cost (hc_engine_stats). Called once, after the last evaluation; close
     * still follows. */
    int (*finish)(void *inst, hc_engine_stats *st, hc_err *err);

    /* 1: the kind evaluates one position at a time whatever it is given (GTP's kata-raw-nn), so
     * a batched case of it checks no batch: the runner skips it as such instead of running it. */
    int never_batches;
} hc_backend_vtbl;

/* The registered backends, in table order, NULL-terminated. */
extern const hc_backend_vtbl *const hc_backends[];

/* Each kind's spec syntax and one-line description (halfcheck backends), NULL-terminated; it
 * also names kinds this binary may lack (cuda). */
typedef struct hc_backend_doc {
    const char *name, *syntax, *summary;
} hc_backend_doc;
extern const hc_backend_doc hc_backend_docs[];
/* The doc of a kind, or NULL. */
const hc_backend_doc *hc_backend_doc_find(const char *name);

/* Finds the backend a spec names ("name" or "name:params"); *params points into spec after
 * the colon (or to ""). NULL with err (HC_ECONFIG, listing the known names) when none. */
const hc_backend_vtbl *hc_backend_find(const char *spec, const char **params, hc_err *err);

/* Checks a spec before any work: a known kind ("did you mean" for a near one) whose params
 * pass its check entry. 0, or -1 with err (HC_ECONFIG) naming the spec. */
int hc_backend_check(const char *spec, hc_err *err);
/* The identity of an open backend (hc_backend_vtbl.identity), or NULL. */
struct hc_backend;
const char *hc_backend_identity(const struct hc_backend *b);
/* An opened backend: the vtable and its instance. */
typedef struct hc_backend {
    const hc_backend_vtbl *vt;
    void *inst;
} hc_backend;

/* hc_backend_find + open. Returns 0 or -1 with err (prefixed with the spec). The one way to
 * open a backend; evaluations open theirs through the evaluator (harness/eval/evaluate.h). */
int hc_backend_open_with(hc_backend *b, const hc_backend_open_opts *o, hc_err *err);
/* hc_backend_open_with with the sizes only. */
int hc_backend_open(hc_backend *b, const char *spec, const hc_net *net, int nx, int ny,
                    int max_batch, int threads, hc_err *err);
/* Another instance like the open instance base (hc_backend_vtbl.open_sharing where the kind
 * has it, else opened afresh from spec with o's options). */
int hc_backend_open_like(hc_backend *b, const hc_backend *base, const hc_backend_open_opts *o, hc_err *err);
void hc_backend_close(hc_backend *b);

/* Installs a layer hook through the vtable; HC_EBACKEND "... taps not supported" when the
 * backend has none. */
int hc_backend_set_taps(hc_backend *b, hc_engine_hook_fn fn, void *user, hc_err *err);

/* Whether the open backend hands back taps (hc_backend_vtbl.taps). */
int hc_backend_taps(const hc_backend *b);

#endif
