/* YAML configs (libyaml): nets, board configs, user tiers and suites, read into plain structs.
 * Every error names file:line:col (one-based) and where in the document, e.g.
 *   suites/x.yaml:12:5: unknown key "polcyTemperature" (in boards[2])
 * An unknown key is always an error. Relative paths resolve against the directory of the
 * file they are written in. Keys are camelCase, as KataGo's own config keys.
 *
 * Net file (nets/NAME.yaml), or a mapping inline in a suite's nets list:
 *   name: b7c96h3            required
 *   model: ../../shared/nets/b7c96h3tfrs-test5-cnorm.bin.gz   required
 *   sha256: e0c1...          optional, 64 hex digits
 *   modelVersion: 17         optional, checked by the runner against the model file
 *   notes: free text         optional
 *
 * Board config (a mapping in boards, or a file path to one):
 *   name: size19                  required
 *   positions: PATH | sgf: PATH   exactly one (positions file, or SGF collection)
 *   nnBuffer: 19x19               required: NN buffer WxH (or N for NxN), each side in sizes.h's range
 *   policyOptimism: 0.0           default 0, in [0, 1]
 *   playoutDoublingAdvantage: 0   default 0
 *   policyTemperature: 1.0        default 1, > 0
 *   maxBatchSize: 16              default 16 (testgpuerror's default), 1..65536
 *   requireExactNNLen: false      default false (KataGo's requireMaxBoardSize)
 *
 * Tier (a mapping in tiers, or a file path to one):
 *   name: fp16-tight              required, not a built-in's name
 *   base: fp16                    optional: start from a built-in tier's limits
 *   limits:                       metric key -> percentile -> limit
 *     winrate: {p99: 1.0%, max: 2.5%}   "x%" compares 100*value <= x, as KataGo does
 *     ownership: {max: 0.01}            a bare number compares value <= x (raw units)
 *     lead: {max: none}                 removes a limit taken from base
 *   metric keys: winrate lead scoreMean scoreStdev topPolicy policyKL stWinloss stScore
 *   ownership; percentiles: avg p90 p99 max.
 *   maxBias: {winrate: 0.2%, lead: 0.05}   optional: fails where the mean signed error is
 *                                 flagged systematic (harness/metrics/bias.h) and exceeds this;
 *                                 winrate lead scoreMean scoreStdev topPolicy stWinloss stScore
 *
 * Suite:
 *   name: testgpuerror            optional (default: file name)
 *   nets: [PATH | mapping, ...]   required
 *   boards: [PATH | mapping, ...] required
 *   backends:                     required: a spec string, or a mapping
 *     - ref32                     {name: label, backend: spec, tiers: [..]}
 *   defaultTiers: [fp32]          tiers of backends that name none
 *   tiers: [PATH | mapping, ...]  user tiers
 *   modes: [unbatched, batched]   default both
 *   seed: 7                       optional: seeds every batched case's shuffle (default 1)
 *   allow_skips: true             optional: a run that checks nothing, or skips a backend in
 *                                 every case, may pass (exit 0 instead of 4)
 *   reference: cuda:ref32         optional: where the fp32 reference is computed, ref32 (the
 *                                 CPU, default) or cuda:ref32 (an NVIDIA GPU, the same bits)
 *   headroom: fp16                optional (fp16 or bf16; absent: off): per net x board, the
 *                                 reference's layers measured against the format's largest
 *                                 finite value (harness/run/headroom.h), informational only
 *   headroom_positions: 64        default 64: the first N of the board's positions measured
 *   matrix:                       optional; default: every net x board x backend
 *     - nets: [NAME..]            required
 *       boards: [NAME..]          default all; backends: [NAME..] default all
 *       tiers: [NAME..]           replaces the backends' tiers for these cases
 *       overrides: {maxBatchSize: 3, ...}   board keys except name/positions/sgf/nnBuffer
 */
#ifndef HC_CONFIG_H
#define HC_CONFIG_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/metrics/tiers.h"

typedef struct hc_net_cfg {
    const char *name;
    const char *model;      /* resolved path */
    const char *sha256;     /* lowercase hex, or NULL */
    int model_version;      /* -1 when not given */
    const char *notes;      /* or NULL */
    const char *where;      /* "file:line:col" of its definition */
    const char *file;       /* the net file a suite names for it (resolved), or NULL when inline */
} hc_net_cfg;

typedef struct hc_board_cfg {
    const char *name;
    const char *positions;  /* resolved path, or NULL when sgf is set */
    const char *sgf;        /* resolved path, or NULL */
    int nn_x_len, nn_y_len;
    double policy_optimism;
    double pda;
    double policy_temperature;
    int max_batch_size;
    int require_exact_nn_len;
    const char *where;
    const char *file;       /* the board file a suite names for it (resolved), or NULL when inline */
} hc_board_cfg;

typedef struct hc_backend_cfg {
    const char *name;       /* label in reports (default: the spec) */
    const char *spec;       /* passed to the backend registry */
    int *tiers;             /* indices into hc_suite.tiers */
    size_t n_tiers;
    const char *where;
    const char *spec_where; /* "file:line:col" of the spec itself (messages about the spec) */
    /* taps: on-failure: a failing case of this backend is run again, on taps_positions of its
     * positions, against ref32 layer by layer (harness/run/casetaps.h; docs/TAPS.md). */
    int taps_on_failure;
    int taps_positions; /* default 4 */
    /* repeat: N (2..100; 0 absent): every case of this backend is evaluated N times more in other
     * batch compositions and orders and the evaluations compared bit for bit (harness/run/repeat.h);
     * repeat_limit: the largest |difference| of an output value that passes (default 0). */
    int repeat;
    double repeat_limit;
} hc_backend_cfg;

enum { HC_MODE_UNBATCHED = 1, HC_MODE_BATCHED = 2 };
enum { HC_SUITE_HEADROOM_OFF = 0, HC_SUITE_HEADROOM_FP16 = 1, HC_SUITE_HEADROOM_BF16 = 2 };

/* One net x board x backend of the matrix, with its effective settings. */
typedef struct hc_case {
    size_t net, board, backend;   /* indices into the suite's arrays */
    hc_board_cfg settings;        /* the board with the matrix entry's overrides applied */
    int *tiers;                   /* indices into hc_suite.tiers */
    size_t n_tiers;
} hc_case;

typedef struct hc_suite {
    const char *path, *name;
    hc_net_cfg *nets;         size_t n_nets;
    hc_board_cfg *boards;     size_t n_boards;
    hc_backend_cfg *backends; size_t n_backends;
    hc_tier *tiers;           size_t n_tiers;   /* every tier referenced or defined: built-ins and user */
    const char **tier_files;                    /* per tier: the tier file a suite names for it, or NULL */
    int modes;                                  /* HC_MODE_* bits */
    int has_seed, seed;                         /* seed: (has_seed 0: absent) */
    int allow_skips;                            /* allow_skips: */
    const char *reference;                      /* reference: (NULL: absent) */
    int headroom;                               /* HC_SUITE_HEADROOM_* (0: absent, off) */
    int headroom_positions;                     /* headroom_positions: (default 64) */
    const char **includes;    size_t n_includes;  /* the net, board and tier files it names, as resolved */
    hc_case *cases;           size_t n_cases;
    void *mem_;                                 /* private: owns every pointer above */
} hc_suite;

/* Loads a suite file. Strings and arrays are owned by the suite. A backend given as a bare spec
 * has the defaults of a mapping naming only that spec (name = spec, taps_positions 4). */
hc_suite *hc_suite_load(const char *path, hc_err *err);
/* The same from memory; path names the document in messages and anchors relative paths. */
hc_suite *hc_suite_parse(const char *yaml, size_t len, const char *path, hc_err *err);
void hc_suite_free(hc_suite *s);
/* Building a suite in memory (halfcheck katago), the same struct hc_suite_load gives, run as it is
 * and written by hc_suite_write. hc_suite_new: an empty suite named name whose file would be path
 * (messages, {suite_dir} and rerun lines name it; nothing is read from it), both modes, no seed,
 * headroom off (headroom_positions 64); the caller sets those plain fields. The adders copy what
 * they are given and set each item's where to "PATH: nets[I]" (boards[I], backends[I]); they may
 * move the arrays they grow, so hold indices across calls. Errors as the reader's: a duplicate
 * name, an unknown tier, a bad board file. */
hc_suite *hc_suite_new(const char *path, const char *name, hc_err *err);
/* net->name and net->model required; net->where is ignored; returns the index, or -1. */
int hc_suite_add_net(hc_suite *s, const hc_net_cfg *net, hc_err *err);
/* A board file read as a suite's boards: entry naming it reads it (listed in includes, its where
 * its own, its file set); returns the index, or -1. */
int hc_suite_add_board_file(hc_suite *s, const char *path, hc_err *err);
/* A backend and its tiers by name (the suite's own or built-in; n_tiers >= 1), taps off;
 * returns the index, or -1. */
int hc_suite_add_backend(hc_suite *s, const char *name, const char *spec, const char *const *tiers, size_t n_tiers,
                         hc_err *err);
/* A case of net x board x backend (indices) with the board's settings and the backend's tiers,
 * as a matrix entry without overrides gives; the caller may then change its settings' board
 * keys (policyOptimism ... requireExactNNLen). Returns the case's index, or -1. */
long hc_suite_add_case(hc_suite *s, size_t net, size_t board, size_t backend, hc_err *err);

/* Writes s as a suite file at path that hc_suite_load reads back as the same suite (the fields
 * above but where, spec_where and path): nets, boards and tiers the suite read from files are
 * named by their files again, the others written inline; a relative path is written relative to
 * path's directory (absolute when the suite's is elsewhere); the matrix lists the cases (none
 * when they are every net x board x backend as they stand). comment (may be NULL) heads the file
 * as # lines. Every string is one double-quoted YAML scalar, escaped in one place. Backend specs
 * are written as they are: a {suite_dir} in one names the directory of the file written. Atomic
 * (harness/base/stream's temporary file and rename). Errors: a string that is not UTF-8, a case
 * that differs from its board in what no override can say (its NN buffer, its positions). */
int hc_suite_write(const hc_suite *s, const char *path, const char *comment, hc_err *err);
/* The same text, into a string the caller frees (*len its length). */
char *hc_suite_format(const hc_suite *s, const char *path, const char *comment, size_t *len, hc_err *err);

/* Checks that every backend spec names a registered backend kind (backends/backend.h); the
 * error names the place in the suite, e.g. "suite.yaml:12:5: unknown backend kind "emu"
 * (known: ref32, emulate) (in backends[2])". Separate from loading so that a suite can be
 * read (listed, validated) before every backend exists in the build. */
struct hc_backend_registry;
/* reg: where the specs are looked up; NULL: the user registry. */
int hc_suite_check_backends(const hc_suite *s, const struct hc_backend_registry *reg, hc_err *err);
int hc_suite_find_tier(const hc_suite *s, const char *name);

/* Which cases --only selects. A filter is "net=N,board=B,backend=K", any subset of the keys,
 * each at most once; a case is selected when it matches any of the n filters (n == 0: every
 * case). sel gets s->n_cases flags (1: selected). An unknown key, a name none of the cases has
 * (the message lists the names there are for that key, among the cases the filter's other keys
 * select, with "did you mean"), or a filter that selects no case, is an HC_EUSAGE error quoting
 * the filter, e.g. `--only board=size99: no case with board "size99" (did you mean "size9"?);
 * the boards: size9, size13, size19`. */
int hc_suite_select(const hc_suite *s, const char *const *filters, size_t n, unsigned char *sel, hc_err *err);

/* Replaces nets' model files from the command line (halfcheck run --net, docs: README "--net").
 * Each spec is one of
 *   NAME=PATH   the net named NAME (an error when the suite has none);
 *   PATH        a file: every net not named by a NAME=PATH spec;
 *   DIR         a directory (a KataGo checkout's cpp/tests/models): every net not named by a
 *               NAME=PATH spec whose model file name is in DIR; the others keep their files.
 * At most one PATH or DIR spec. A replaced net keeps its name and place in the matrix; its
 * sha256 pin is dropped (it names the suite's file, not the user's), and so is its
 * modelVersion, except for a net matched by file name in a DIR (the same file name stands for
 * the same net there, so a wrong version still means a wrong file). Paths are kept as given.
 * Errors (HC_EUSAGE): a path that does not exist, a DIR that matches no net, a second PATH/DIR. */
int hc_suite_replace_nets(hc_suite *s, const char *const *specs, size_t n, hc_err *err);

/* A standalone net file. The strings live in *holder until hc_config_holder_free. */
typedef struct hc_config_holder { void *mem_; } hc_config_holder;
int hc_net_cfg_load(const char *path, hc_net_cfg *out, hc_config_holder *holder, hc_err *err);
int hc_board_cfg_load(const char *path, hc_board_cfg *out, hc_config_holder *holder, hc_err *err);
int hc_tier_cfg_load(const char *path, hc_tier *out, hc_err *err);
/* The same from memory; path names the document in messages and anchors relative paths. */
int hc_net_cfg_parse(const char *yaml, size_t len, const char *path, hc_net_cfg *out, hc_config_holder *holder,
                     hc_err *err);
int hc_board_cfg_parse(const char *yaml, size_t len, const char *path, hc_board_cfg *out, hc_config_holder *holder,
                       hc_err *err);
int hc_tier_cfg_parse(const char *yaml, size_t len, const char *path, hc_tier *out, hc_err *err);
void hc_config_holder_free(hc_config_holder *h);

/* Parses "WxH" or "N"; -1 when malformed. The range is checked apart (hc_check_board_size). */
int hc_config_parse_size(const char *s, int *w, int *h);

#endif
