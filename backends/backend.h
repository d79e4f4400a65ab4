/* Backends: what halfcheck tests. A backend kind (hc_backend_kind) is registered once: its name,
 * its help (syntax and summary: the one source `halfcheck backends` and the registry's messages
 * read), what it can do (hc_backend_caps), a parser of its params into a typed options object
 * and an open; an open instance does what its ops table (hc_backend_ops) says. Two shapes:
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
struct hc_backend_registry;

/* How to open a backend (hc_backend_open_with): the spec and the sizes, plus options only
 * some kinds take (zero: none; profile and active only where the kind's caps.profile). */
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
    /* Where spec (and a wrapper's inner spec) is looked up; NULL: the user registry. */
    const struct hc_backend_registry *registry;
} hc_backend_open_opts;

/* hc_resolution (harness/data/nnoutput.h): what a backend declares of its outputs. */

/* A backend that cannot run a case at all (an environment variable its spec names is unset, a
 * setting its engine cannot take, a position it cannot express) fails with HC_EBACKEND and a
 * message that starts with HC_BACKEND_SKIP followed by the reason; the runner should record
 * such a case as skipped (HC_OUT_SKIPPED) rather than as an error. Prefixes added on the way
 * up ("backend X: ", "position N ...: ") come before it, so look for it with strstr. */
#define HC_BACKEND_SKIP "skipped: "

/* What an external engine cost (hc_backend_ops.finish): measured by halfcheck (positions,
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

/* hc_backend_caps.lanes */
enum { HC_LANES_ALWAYS = 1, HC_LANES_WHOLE_BATCH = 2 };
/* hc_backend_caps.taps, bits */
enum { HC_TAPS_HOOK = 1, HC_TAPS_RETURNED = 2 };

/* What a kind declares it can do, the same for every instance (an instance says more through
 * its ops: whether it does hand back taps, its resolution). */
typedef struct hc_backend_caps {
    int shape; /* enum hc_backend_shape */
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
    /* 1: the kind evaluates one position at a time whatever it is given (GTP's kata-raw-nn), so
     * a batched case of it checks no batch: the runner skips it as such instead of running it. */
    int never_batches;
    /* Bits: HC_TAPS_HOOK, instances take a layer hook (ops.set_taps); HC_TAPS_RETURNED,
     * instances may hand back taps (ops.taps says whether one does). 0: no taps. */
    int taps;
    int resolution; /* 1: an instance declares the resolution of its outputs (ops.resolution) */
    int engine;     /* 1: runs external engine processes; ops.finish reports hc_engine_stats */
    int profile;    /* 1: open takes hc_backend_open_opts.profile / .active / .n_active (emulate) */
} hc_backend_caps;

/* What an open instance does. close is required; eval for tensor kinds, eval_positions for
 * position kinds; every other member optional (NULL) as the caps say. Callers outside
 * backends/ use the hc_backend_* wrappers below, never these members. */
typedef struct hc_backend_ops {
    /* Tensor kinds: evaluates `batch` rows (refs/engine.h for the layouts) into out. */
    int (*eval)(void *inst, int batch, const float *spatial, const float *global, const float *meta,
                hc_raw_heads *out, hc_err *err);
    /* Position kinds: evaluates n positions (at each position's symmetry) into outs
     * (initialised by the caller for the buffer size). */
    int (*eval_positions)(void *inst, int n, const hc_position *pos, hc_nnoutput *outs, hc_err *err);
    /* caps.taps & HC_TAPS_HOOK: installs a layer hook (refs/engine.h: hc_tap, hc_engine_hook_fn)
     * that later evals call after every layer, on worker threads; fn NULL removes it. The hook
     * reads (or, for storage emulation, modifies) each layer's output, so a caller can record
     * the layers it wants for bisect-precision. */
    int (*set_taps)(void *inst, hc_engine_hook_fn fn, void *user, hc_err *err);
    /* caps.taps & HC_TAPS_RETURNED: nonzero when this instance hands back taps. Such an
     * instance's eval, given out->taps non-NULL (harness/model/heads.h: hc_tapset), resets that
     * tapset and fills it with the batch's intermediate tensors, named as docs/TAPS.md says, in
     * its forward order, each with the element format it was stored in; with out->taps NULL it
     * does nothing more than without taps. How to tap a new kind: fill the list with
     * hc_tapset_entry_get in eval. ref32 and emulate fill it from their engine hook (not
     * together with a set_taps hook), pipe from its program's replies. */
    int (*taps)(void *inst);
    /* caps.resolution: the resolution of the outputs (see hc_resolution), owned by the
     * instance; NULL (or caps.resolution 0): exact floats. */
    const hc_resolution *(*resolution)(void *inst);
    /* Position kinds: the board config's evaluation settings (policy optimism, PDA,
     * temperature, human-SL profile), given before the positions they apply to. An instance
     * that never gets them assumes hc_eval_settings_default's. Fails (e.g. with
     * HC_BACKEND_SKIP) when its engine cannot take a setting. */
    int (*configure)(void *inst, const struct hc_eval_settings *s, hc_err *err);
    /* What the instance runs, as the engine itself reports it (a GTP engine's `name` and
     * `version`, KataGo's model and fp16 mode...), owned by the instance; NULL or "": none.
     * Reports carry it as the backend's engine in their provenance (results.h). */
    const char *(*identity)(void *inst);
    /* Position kinds: how many positions one eval_positions call takes when the evaluator's
     * batch is `batch` (NULL: `batch`, and a shuffled order one at a time). The evaluator then
     * gathers that many positions of its order into each call, wherever they are: an engine
     * that batches concurrent queries itself gets enough of them at once. */
    int (*positions_per_call)(void *inst, int batch);
    /* With lanes: opens another instance like `base` (an open instance of this kind) for
     * max_batch rows and `threads` threads that borrows base's read-only state (weights,
     * prepared convolutions), so that lanes do not each hold a copy. base must outlive it.
     * NULL: lanes are opened independently. */
    void *(*open_sharing)(void *base, int max_batch, int threads, hc_err *err);
    /* caps.engine: ends the engine processes (as close would), then fills st with what they
     * cost (hc_engine_stats). Called once, after the last evaluation; close still follows. */
    int (*finish)(void *inst, hc_engine_stats *st, hc_err *err);
    void (*close)(void *inst);
} hc_backend_ops;

/* A backend kind, registered once: the one source of its help, its options and what it can do. */
typedef struct hc_backend_kind {
    const char *name;    /* the registry key: "ref32" */
    const char *syntax;  /* the spec's syntax: "emulate:PROFILE|PATH.yaml" (halfcheck backends) */
    const char *summary; /* one line: what it is */
    /* Non-NULL: this binary cannot open the kind, and why (cuda without nvcc); it is still
     * registered, so that its specs parse and `halfcheck backends` lists it. */
    const char *missing;
    hc_backend_caps caps;
    /* Parses params (what follows "name:"; "" when absent) into a typed options object, with
     * no net and no engine started: the syntax, the names it takes (profiles, @options,
     * mutation kinds) and the files it reads, so that a suite's mistake is refused before any
     * work starts (hc_backend_check). Errors (HC_ECONFIG) name the option. A wrapper's inner
     * spec is checked in the user registry. Returns the options (free with free_opts; a kind
     * with nothing to free may return hc_backend_no_opts() and leave free_opts NULL), or NULL
     * with err. */
    void *(*parse)(const char *params, hc_err *err);
    void (*free_opts)(void *opts);
    /* Opens an instance from parsed options and o (net, sizes, threads, registry; profile and
     * layer subset where caps.profile). opts is NULL only for a caps.profile kind given
     * o->profile: the profile in memory stands for the params (which are not parsed; the
     * callers name "emulate" or "cuda:emulate"). The instance does not keep opts. Returns the
     * instance or NULL with err. */
    void *(*open)(const void *opts, const hc_backend_open_opts *o, hc_err *err);
    const hc_backend_ops *ops;
    /* Or NULL. Starts what every open of the kind needs and neither the net nor the options
     * decide (a GPU's driver and context: a few tenths of a second), so that it overlaps
     * loading the net (hc_backend_warm, on a thread of its own). Idempotent; its failures are
     * left for the open to report. */
    void (*warm)(void);
} hc_backend_kind;

/* A parsed options object for kinds that take none (never freed). */
void *hc_backend_no_opts(void);

/* A set of kinds (NULL-terminated) and the registry searched after it (NULL: none). */
typedef struct hc_backend_registry {
    const hc_backend_kind *const *kinds;
    const struct hc_backend_registry *next;
} hc_backend_registry;

/* The kinds built into halfcheck (what `halfcheck backends` lists); the object itself too, for
 * a registry chained in front of it in a static initializer. */
const hc_backend_registry *hc_backend_registry_user(void);
extern const hc_backend_registry hc_backend_registry_builtin;

/* Finds the kind a spec names ("name" or "name:params") in reg and the registries after it
 * (reg NULL: the user registry); *params points into spec after the colon (or to ""). NULL
 * with err (HC_ECONFIG) when none (listing the known names, "did you mean" for a near one) or
 * when the kind is missing from this binary ("not built into this halfcheck"). */
const hc_backend_kind *hc_backend_find(const hc_backend_registry *reg, const char *spec, const char **params,
                                       hc_err *err);

/* Checks a spec before any work (preflight): a kind found as hc_backend_find does whose params
 * parse (a missing kind's params are parsed first, then it is refused as not built). 0, or -1
 * with err (HC_ECONFIG) naming the spec. */
int hc_backend_check(const hc_backend_registry *reg, const char *spec, hc_err *err);

/* The kind's warm where spec names one that has it (nothing otherwise, errors included: the
 * open reports them). Safe on any thread, before or beside loading the net. */
void hc_backend_warm(const hc_backend_registry *reg, const char *spec);

/* An opened backend: its kind and its instance. */
typedef struct hc_backend {
    const hc_backend_kind *kind;
    void *inst;
} hc_backend;

/* Finds o->spec in o->registry, parses it, opens it, frees the options. Returns 0 or -1 with
 * err (prefixed with the spec). The one way to open a backend; evaluations open theirs
 * through the evaluator (harness/eval/evaluate.h). */
int hc_backend_open_with(hc_backend *b, const hc_backend_open_opts *o, hc_err *err);
/* Opens kind from options already parsed by kind->parse (tests that set typed fields after
 * parsing); opts stays the caller's. o->spec names the backend in errors. */
int hc_backend_open_parsed(hc_backend *b, const hc_backend_kind *kind, const void *opts,
                           const hc_backend_open_opts *o, hc_err *err);
/* Another instance like the open instance base (ops.open_sharing where the kind has it, else
 * opened afresh from o). */
int hc_backend_open_like(hc_backend *b, const hc_backend *base, const hc_backend_open_opts *o, hc_err *err);
void hc_backend_close(hc_backend *b);

/* The open backend's kind's caps (never NULL for an open backend). */
const hc_backend_caps *hc_backend_caps_of(const hc_backend *b);
/* ops.eval: HC_EUSAGE when the backend is not a tensor kind. */
int hc_backend_eval(hc_backend *b, int batch, const float *spatial, const float *global, const float *meta,
                    hc_raw_heads *out, hc_err *err);
/* ops.eval_positions: HC_EUSAGE when the backend is not a position kind. */
int hc_backend_eval_positions(hc_backend *b, int n, const hc_position *pos, hc_nnoutput *outs, hc_err *err);
/* ops.configure where the kind has it, else 0 (the settings need nothing of it). */
int hc_backend_configure(hc_backend *b, const struct hc_eval_settings *s, hc_err *err);
/* ops.positions_per_call where the kind has it (the evaluator then gathers that many positions
 * of its order into each call), else 0. */
int hc_backend_positions_per_call(hc_backend *b, int batch);
/* ops.finish: 0 and st untouched for a kind without one (callers start from
 * hc_engine_stats_unknown). */
int hc_backend_finish(hc_backend *b, hc_engine_stats *st, hc_err *err);
/* The declared resolution of the outputs, or NULL (exact floats). */
const hc_resolution *hc_backend_resolution(const hc_backend *b);
/* What the engine says it is (ops.identity), or NULL. */
const char *hc_backend_identity(const hc_backend *b);
/* Installs a layer hook; HC_EBACKEND "... taps not supported" when the kind takes none. */
int hc_backend_set_taps(hc_backend *b, hc_engine_hook_fn fn, void *user, hc_err *err);
/* Whether the open backend hands back taps (a tensor kind whose ops.taps says so). */
int hc_backend_taps(const hc_backend *b);

#endif
