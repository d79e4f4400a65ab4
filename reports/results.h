/* The record of a run that every report formats, and its JSON form (results.json).
 * One hc_result per net x board x backend x mode: either checked (stats, then one tier check
 * per tier), or an error (the backend crashed, hung, failed to load...), or skipped (with a
 * reason). Reports never compute a figure: they read hc_stats and hc_tier_check. A checked
 * result whose stats hold a non-finite value is reported as an error by every writer.
 * Every writer goes through hc_ostream: the file appears whole at commit, or not at all. */
#ifndef HC_RESULTS_H
#define HC_RESULTS_H

#include <stddef.h>

#include "backends/backend.h"
#include "harness/metrics/diagnose.h"
#include "harness/base/err.h"
#include "harness/metrics/stats.h"
#include "harness/metrics/tiers.h"

enum hc_outcome { HC_OUT_CHECKED = 0, HC_OUT_ERROR, HC_OUT_SKIPPED };

/* A position a report draws (report.html): the worst position of a checked result, and for a
 * failing one the position behind the failing percentile. The runner fills it from the
 * position record (replayed), the reference's and the backend's outputs; reports only read it. */
enum { HC_SHOW_TOP = 4, HC_SHOW_MAX = 3, HC_SHOW_CELLS = 361, HC_SHOW_CMD = 1536 };

typedef struct hc_shown_move {
    int x, y;    /* board point; both -1 for pass */
    double prob; /* policy probability */
} hc_shown_move;

typedef struct hc_shown_pos {
    int metric;          /* enum hc_metric the position stands for */
    int pct;             /* enum hc_pct: HC_P_MAX for the worst position, else the failing percentile */
    double error;        /* that metric's raw error here (ownership: at `cell`) */
    int cell;            /* ownership: the point x + y*x_size of that error; -1 otherwise */
    long index;          /* the position's index in its board config */
    long file_line;      /* its line in the positions file (from 1); 0 when not from one (SGF) */
    int x_size, y_size;
    char stones[HC_SHOW_CELLS + 1]; /* after the replay, row by row: '.' empty, 'X' black, 'O' white */
    int last_pla;        /* colour of the last move played (HC_BLACK/HC_WHITE); 0 when none */
    int last_x, last_y;  /* its point; -1 -1 for a pass */
    int next_pla;
    char rules[128];
    double komi;
    int symmetry;
    int n_top;           /* moves in ref_top and test_top (each sorted by its own probabilities) */
    hc_shown_move ref_top[HC_SHOW_TOP], test_top[HC_SHOW_TOP];
    int has_own;         /* own_diff holds the backend's minus the reference's white ownership */
    float own_diff[HC_SHOW_CELLS];
    char rerun_case[HC_SHOW_CMD];     /* halfcheck run SUITE --only ... ("" unknown) */
    char rerun_position[HC_SHOW_CMD]; /* a shell line that evaluates just this position ("" none) */
} hc_shown_pos;

/* The per-layer taps of a failing case (a suite backend's `taps: on-failure`,
 * harness/run/casetaps.h): the backend against ref32 on a few of the case's positions, layer by
 * layer, as `halfcheck taps` compares them (docs/TAPS.md). */
typedef struct hc_result_taplayer {
    char *name;
    char fmt[8];  /* the backend's element format: "f32", "f16", "bf16" */
    int compared; /* 0: absent in the backend, or of another shape */
    double max_abs, mean_abs, max_rel, mean_rel, stor_rel, explained;
} hc_result_taplayer;

typedef struct hc_result_taps {
    char *first;  /* the first divergent layer; NULL: none */
    char *error;  /* why no layers were compared (the backend has no taps, ...), or NULL */
    size_t n_positions;
    size_t *positions; /* the case's positions compared */
    size_t n_layers;
    hc_result_taplayer *layers; /* in the reference's forward order */
} hc_result_taps;
void hc_result_taps_free(hc_result_taps *t);

typedef struct hc_result {
    const char *net, *board, *backend;  /* names, as in the suite */
    const char *mode;                   /* "unbatched" or "batched" */
    int outcome;                        /* HC_OUT_* */
    const char *message;                /* error or skip reason; NULL when checked */
    const hc_stats *stats;              /* when checked; may be set for an error too */
    size_t n_tiers;
    const hc_tier *tiers;               /* n_tiers tiers ... */
    const hc_tier_check *checks;        /* ... and their checks, when checked */
    /* Settings shown as properties (optional: nn_x_len 0 means absent). */
    int nn_x_len, nn_y_len, max_batch_size;
    double policy_optimism, pda, policy_temperature;
    double seconds;                     /* wall time of the evaluations */
    int model_version;                  /* the net's model version; 0 when unknown (not loaded) */
    /* Positions of a checked result that the backend could not express (a GTP engine cannot
     * replay an encore phase, ...): left out of the stats, counted here, and described by
     * skip_message ("3 positions: 12 (reason), 40 (reason), ..."); 0 and NULL when none. */
    size_t n_skipped;
    const char *skip_message;
    /* Positions drawn in report.html (checked results; 0 and NULL when none or not captured,
     * as in results.json files written before they existed). */
    size_t n_shown;
    const hc_shown_pos *shown;
    /* Per-layer taps of a failing case, or NULL (results.json "taps", written only when set). */
    const hc_result_taps *taps;
    /* What an external engine cost (gtp, analysis, pipe: hc_engine_stats, measured from the
     * operating system and the engine's log); has_engine 0 for other backends (results.json
     * "engine", written only when set). */
    int has_engine;
    hc_engine_stats engine;
    /* Positions of a failing case whose outputs are another position's (rows swapped or
     * repeated, a foreign legal mask: harness/metrics/diagnose.h); 0 and NULL when none. Their
     * text also leads the message (results.json "diagnosis", written only when set). */
    size_t n_diag;
    const hc_diag_finding *diag;
    /* The reference checking itself (backend ref32: batch invariance, thread lanes), not a
     * backend under test: report.md lists it apart (results.json "selfCheck", only when set). */
    int self_check;
} hc_result;

/* Positions per second of a result's engine, or -1 when unknown. */
double hc_result_engine_pos_per_s(const hc_result *r);
/* A result's engine cost as one line ("peak RSS 412.3 MiB, 35.2 positions/s, 1.93 rows per
 * batch (40 rows in 21 batches), 8 processes, version 1.17.2") into buf; its length, 0 when the
 * result has no engine figures. */
int hc_engine_text(const hc_result *r, char *buf, size_t len);
/* When a batching engine's batches averaged under half the largest batch it will form
 * (hc_engine_stats.max_batch): "batches averaged 1.30 of 6 rows: rows 4-6 rarely exercised"
 * (the upper half of a batch, where a stride bug shows, seldom ran) into buf, its length;
 * otherwise 0 and buf "". rows/batches are the engine's counts (a summary passes its sums). */
int hc_engine_batch_note(int batching, long rows, long batches, long max_batch, char *buf, size_t len);
/* For a result whose engine formed its own batches (hc_engine_stats.engine_batches: KataGo's
 * analysis engine batches concurrent queries by timing), what a rerun can reproduce: "batched
 * figures depend on how the engine formed its batches (2493 batches of at most 6 rows this run);
 * a rerun may differ slightly" into buf; its length, 0 (buf "") for any other result (their
 * figures are the same bits on a rerun). */
int hc_engine_batches_note(const hc_result *r, char *buf, size_t len);
/* Whether a batched case checked the batched path at all, judged by its engine's own rows per
 * batch (e: the case's engine figures, NULL when none came back): HC_BATCHED_CHECKED when it did
 * or nothing says otherwise; else why into buf (600 bytes hold it), HC_BATCHED_SKIP for an
 * engine that never batches (its unbatched case is its check), HC_BATCHED_ERROR for one meant to
 * batch that averaged at most 1.05 rows per batch or whose counts are unknown (the KataGo
 * settings that make it batch in the text). */
enum { HC_BATCHED_CHECKED = 0, HC_BATCHED_SKIP, HC_BATCHED_ERROR };
int hc_engine_batched_check(const hc_engine_stats *e, char *buf, size_t len);

/* Provenance: what produced a run's figures, so that a reader can tell what was evaluated and
 * rerun it elsewhere with the same figures. One per run; a merge keeps one per job (its input). */
typedef struct hc_prov_net {
    const char *name;    /* the suite's net name */
    const char *file;    /* the file actually evaluated (after --net) */
    const char *sha256;  /* its digest, lowercase hex */
    int model_version;   /* the model version loaded */
} hc_prov_net;

typedef struct hc_prov_backend {
    const char *name;    /* the suite's backend name */
    const char *engine;  /* its identity as the engine reports it (a GTP engine's name and version,
                          * KataGo's model and fp16 mode), or NULL: a backend of halfcheck's own */
} hc_prov_backend;

typedef struct hc_provenance {
    const char *job;       /* merge: the input it came from; NULL for a run's own */
    const char *host;      /* merge: the host that ran the job (ci/sweep's DIR/host), or NULL */
    const char *device;    /* its device ("GPU 0: ...", "cpu"), or NULL */
    const char *halfcheck; /* halfcheck's version */
    int engine_version;    /* the reference engine's version (part of the cache key) */
    const char *kernels;   /* the reference's kernel forms ("gemm avx2, winograd avx2, ...") */
    int cuda;              /* 1: the cuda backend is built in */
    const char *command;   /* the command line, shell-quoted */
    size_t n_nets;
    const hc_prov_net *nets;
    size_t n_backends;
    const hc_prov_backend *backends;
} hc_provenance;

/* One headroom figure of a net x board: an exact figure (a value the reference forms) and its
 * margin, log2(limit / value) powers of two below the format's largest finite value (negative:
 * the format overflows there). */
typedef struct hc_result_headroom {
    const char *net, *board;
    const char *format;     /* "fp16" or "bf16" */
    const char *layer;      /* the tap name (docs/TAPS.md) */
    const char *what;       /* "stored", "sum", ... (harness/run/headroom.h) */
    double value;
    long position;          /* index into the board's positions where it peaks */
    double margin;
} hc_result_headroom;

typedef struct hc_results {
    const char *suite;                  /* suite name */
    const char *timestamp;              /* "YYYY-MM-DDThh:mm:ss" (xs:dateTime, JUnit's), or NULL */
    const char *version;                /* halfcheck version, or NULL */
    const hc_result *items;
    size_t n;
    /* The run was stopped (SIGINT/SIGTERM) before every case ran: the results are of the cases
     * that finished. Written to results.json as "interrupted": true, only when set. */
    int interrupted;
    /* The suite (allow_skips: true) or the command line (--allow-skips) lets a run in which
     * nothing was checked, or a backend was skipped in every case, pass. Written as
     * "allowSkips": true, only when set, so that halfcheck merge applies the same rule. */
    int allow_skips;
    /* What produced the figures (results.json "provenance", report.md and report.html's
     * Provenance, JUnit properties): one for a run, one per job for a merge; 0 and NULL in
     * files written before it existed. */
    size_t n_prov;
    const hc_provenance *prov;
    /* The suite's headroom (harness/run/headroom.h; suite key headroom: fp16|bf16): per net x
     * board, the exact figures of smallest margin to the format's largest finite value.
     * Informational: no verdict or exit status reads them. results.json "headroom" (only when
     * n_headroom > 0), report.md's Headroom section; 0 and NULL: none. */
    size_t n_headroom;
    const hc_result_headroom *headroom;
} hc_results;

/* Checks, as the final line of `halfcheck run` and `halfcheck merge` counts them: one per
 * result x tier (one per result that has no tier); a checked result's tier check passed or
 * failed, every check of an error result (or a checked one with non-finite figures) errored,
 * every check of a skipped result skipped. */
typedef struct hc_check_counts {
    size_t checks, passed, failed, errored, skipped;
    int nothing_checked;      /* no check passed or failed */
    int backend_all_skipped;  /* a backend (by name) was skipped in every result of it */
    const char *skipped_backend; /* the first such backend, or NULL */
} hc_check_counts;
void hc_results_count(const hc_results *rs, hc_check_counts *c);

/* The exit status the results call for: 3 if a result is an error, else 1 if a tier failed,
 * else 4 if nothing was checked or a backend was skipped in every result (unless
 * rs->allow_skips), else 0. (A run also knows about inputs that failed to load: 2 first.) */
int hc_results_status(const hc_results *rs);

/* The sentence every report of an interrupted run (rs->interrupted) opens with, malloc'd: that
 * the run was stopped before every case ran, and which cases finished (the results it holds,
 * each "net board backend mode" between quote and unquote: "`" and "`" for Markdown), so that
 * a report read alone (summary.md as a CI job's summary) cannot pass for a whole run. NULL when
 * the run was not interrupted, or out of memory. */
char *hc_results_interrupted_text(const hc_results *rs, const char *quote, const char *unquote);

/* Whether a checked result counts as an error for reports (non-finite anywhere). */
int hc_result_is_error(const hc_result *r);
/* Whether a result passed: checked, not an error, and every tier's check passed. */
int hc_result_passed(const hc_result *r);
/* A one-line description of the first non-finite value, e.g. "non-finite whiteLead = nan
 * at position 12 (test outputs)"; buf is returned. */
const char *hc_result_nonfinite_text(const hc_result *r, char *buf, size_t len);

/* A raw error as testgpuerror prints it ("0.12345%", "0.000123", "1.23456c"; "nan", "inf"). */
const char *hc_metric_format(int metric, double raw, char *buf, size_t len);
/* One number v printed by fmt (a printf conversion of one double, with any text around it) into
 * buf, the one way reports print a figure: a value that prints as zero prints without a sign
 * ("0.000000", never "-0.000000": a tiny negative average, or -0, is no negative figure).
 * Returns buf. */
const char *hc_num_format(char *buf, size_t len, const char *fmt, double v);
/* A tier limit in the same display units as hc_metric_format ("0.45%", "0.34", "5.4c"). */
const char *hc_limit_format(const hc_tier *t, int metric, int pct, char *buf, size_t len);
/* The tier failures of a checked result as text, one line per failing limit, e.g.
 * "winrateError p99: 0.61234% > limit 0.45% (worst position 123)"; malloc'd. */
char *hc_result_failure_text(const hc_result *r, size_t tier);

/* A signed value in hc_metric_format's units, its sign always written ("+0.30000%"). */
const char *hc_metric_format_signed(int metric, double raw, char *buf, size_t len);
/* One bias limit's figure of a checked result, the failure line's text: "winrateError bias:
 * mean +0.30000% > limit 0.2% (systematic: 31.0 standard errors)" (">" when it failed,
 * "<=" otherwise). */
const char *hc_bias_limit_text(const hc_result *r, size_t tier, int metric, char *buf, size_t len);
/* A metric's signed figures as one line: "mean +0.30000% ± 0.00970% (s.e.), p1 ... p99 ...;
 * systematic" ("" for a metric without them). */
const char *hc_bias_text(const hc_stats *s, int metric, char *buf, size_t len);

/* Writes results.json atomically (results_write.c). */
int hc_results_write_json(const hc_results *rs, const char *path, hc_err *err);

/* results.json read back (halfcheck merge; results_read.c): every figure as written (17 significant digits,
 * so doubles round-trip), the tiers' limits, and the tier checks recomputed from the stats
 * with hc_tier_check_stats; a stored verdict that disagrees with the recomputed one is an
 * HC_EFORMAT error, as is any missing or mistyped field (named: "results[3].stats.metrics.
 * winrateError.p99"). Writing what was read gives the same file, byte for byte. */
typedef struct hc_results_doc hc_results_doc;
hc_results_doc *hc_results_read_json(const char *path, hc_err *err);
/* The same from memory; name labels messages. */
hc_results_doc *hc_results_parse_json(const char *text, size_t len, const char *name, hc_err *err);
/* The results (owned by the document). */
const hc_results *hc_results_doc_results(const hc_results_doc *d);
void hc_results_doc_free(hc_results_doc *d);

#endif
