/* Helpers the test programs share (files, shell commands, the halfcheck binary, scratch paths). */
#ifndef HC_TESTLIB_H
#define HC_TESTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness/eval/evaluate.h"
#include "harness/metrics/stats.h"
#include "harness/run/runner.h"
#include "harness/model/heads.h"
#include "reports/results.h"

/* The whole file as a malloc'd NUL-terminated string (binary content kept; *len, when len is
 * not NULL, gets its size), or NULL when it cannot be read. */
char *hc_slurp(const char *path);
char *hc_slurp_len(const char *path, size_t *len);

/* The file's text for a quick look (strstr on a report): valid for the next 7 calls (a ring of
 * 8, freed in turn), "" when the file cannot be read, so a missing file fails the check that reads it rather than crashing. */
const char *hc_text(const char *path);

/* The reports a run writes into its results directory (reports/reports.c), and whether dir holds
 * every one of them. */
#define HC_N_REPORT_FILES 5
extern const char *const hc_report_files[HC_N_REPORT_FILES];
int hc_reports_written(const char *dir);

/* A report file (results.json, junit.xml, report.md, report.csv) as a malloc'd string without
 * what differs between two runs of the same cases: the lines that name a time (results.json's
 * "timestamp" and "seconds"), junit.xml's time= and timestamp= attributes, and the provenance's
 * command and job lines (another --out, another sweep directory). NULL when it cannot be read. */
char *hc_report_normalized(const char *path);

/* The exit status of a shell command, -1 when it died of a signal (or could not run). */
int hc_sh(const char *cmd);
int hc_shf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The whole number a shell command (printf-style) prints first, e.g. of `grep -c` or `wc -l`; -1
 * when it prints none or cannot run. */
long hc_shf_count(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The halfcheck binary: $HALFCHECK (set by make test) or build/halfcheck, absolute so that a
 * command run from another directory still finds it. */
const char *hc_halfcheck_bin(void);

/* The shared test data: $HC_SHARED or ../shared (tests run from the repository root). The path to
 * rel inside it, in one of 8 rotating static buffers (a few calls' results can be held at once),
 * or NULL when it is absent. */
const char *hc_shared(const char *rel);

/* The shared net net_rel (activations reduced, as at load) and positions pos_rel, loaded into *net
 * and *ps (*n of them). 0; 1 where ../shared lacks either, -1 where either does not load (nothing
 * left allocated); why (len bytes) says which. */
int hc_shared_net_positions(const char *net_rel, const char *pos_rel, hc_net **net, hc_position **ps, size_t *n,
                            char *why, size_t len);

/* For a GPU test's group of checks on the shared net rel: the net loaded (activations reduced, as
 * at load) into *net once spec opens on it (nx x ny, batch 1, then closed). 0 with *net; 1 where
 * the group is to be skipped (../shared lacks rel; no CUDA device; a build without cuda), -1
 * where it fails (the net does not load; spec refuses it otherwise); why (len bytes) says which. */
int hc_gpu_shared_net(const char *rel, const char *spec, int nx, int ny, hc_net **net, char *why, size_t len);

/* The GPU tests' comparisons of raw heads and taps on random rows. The rows: B of an nx x ny buffer
 * (*sp, *gl and *meta calloc'd, *meta NULL for a net without metadata inputs); even rows on the
 * whole buffer, odd rows on a 13x13 board in its corner (0 elsewhere); spatial channel 0 is 1 on
 * the board, the others 0 or 1 at random; global inputs k * gl_step - 0.5 with k random below
 * gl_levels, metadata k * meta_step with k random below meta_levels; the values from seed (a
 * 32-bit linear congruential generator). */
typedef struct hc_rows_spec {
    unsigned seed, gl_levels, meta_levels;
    float gl_step, meta_step;
} hc_rows_spec;
void hc_random_rows(const hc_net *net, int B, int nx, int ny, const hc_rows_spec *rs, float **sp, float **gl,
                    float **meta);

/* The rows of rs (B on an nx x ny buffer) evaluated by specs[0] (with threads) and specs[1], and
 * with plant (not NULL) by a third instance, specs[1]'s cuda with those planted faults
 * (tests/lib/cudalib.h), each compared with specs[0]'s. An eval that fails is printed as an INFO
 * line; so is each tap of specs[0] that specs[1] lacks or holds with another shape, format or any
 * other bit (how many floats, the first by row, channel and point, and whether it lies on the
 * board), prefixed by label. */
typedef struct hc_rows_cmp {
    int ok[3];              /* whether specs[0], specs[1] and the planted instance evaluated */
    int same[3];            /* whether their raw heads are specs[0]'s bits (both evaluated) */
    int n_taps, n_bad;      /* specs[0]'s taps, and how many of them differ in specs[1] (both evaluated) */
    char first[160];        /* the first that differs */
} hc_rows_cmp;
struct hc_cuda_faults;
void hc_compare_rows(const hc_net *net, const hc_rows_spec *rs, int B, int nx, int ny, const char *const specs[2],
                     const struct hc_cuda_faults *plant, int threads, const char *label, hc_rows_cmp *c);

/* tests/helper_halfcheck beside the test program argv0 names, absolute: halfcheck's command line
 * with the test registry (tests/lib/testkinds.h), for the CLI tests whose suites name fault:. */
const char *hc_test_halfcheck_bin(const char *argv0);

/* dir/name in one of 8 rotating static buffers: enough for the paths of one call. */
const char *hc_path(const char *dir, const char *name);

/* An absolute form of rel (relative to the working directory) into buf. */
void hc_abspath(const char *rel, char *buf, size_t len);

int hc_file_exists(const char *path);

/* Writes an executable shell script at path: "#!/bin/sh", then the body (printf-style). 0, or -1
 * when it cannot be written. */
int hc_write_script(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The live (not zombie) processes of session sid, and killing them all (with a wait for them to
 * go, up to 3 s): the programs that start a run with setsid check it leaves nothing behind.
 * Linux only (/proc): elsewhere the count is -1 and the kill only signals the process group. */
int hc_session_count(pid_t sid);
void hc_session_kill(pid_t sid);

/* Seconds on the monotonic clock. */
double hc_now_s(void);

/* Starts `sh -c cmd` in a session of its own (so that every process it leaves can be counted
 * with hc_session_count); returns its pid, the session's id. default_signals: SIGINT, SIGTERM
 * and SIGQUIT back to their default dispositions in it first (a program started in the
 * background inherits SIGINT ignored, and a test that sends it stands for a user's ^C). */
pid_t hc_start_session(const char *cmd, int default_signals);

/* The fake engines' -misbehave ... [-once FILE]: whether to misbehave now (misbehave set; with
 * once, only while the file once does not exist, which it creates then, so that a restarted
 * engine behaves). */
int hc_misbehave_now(const char *misbehave, const char *once);

/* The test's side of that: args (len bytes) gets "-misbehave MODE -once ONCE" for a fake engine,
 * ONCE a path under /tmp named by tag, this process and mode, not there yet; *once (cap bytes) gets
 * it, for the test to remove when done. */
void hc_misbehave_args(const char *tag, const char *mode, char *args, size_t len, char *once, size_t cap);

/* Waits until the file dir/rel holds text (or up to limit seconds); returns whether it did. */
int hc_wait_for_text(const char *dir, const char *rel, const char *text, double limit);

/* An integer from the environment: name's value when set and within lo..hi, else dflt. */
int hc_env_int(const char *name, int dflt, int lo, int hi);

/* ps[0..n) evaluated by spec through the evaluator (settings s, batch, threads) into *outs
 * (calloc'd, n entries; free with hc_nnoutputs_free); *secs (NULL: not wanted) the wall time of
 * opening and evaluating. 0, or -1 with err. */
int hc_eval_spec(const char *spec, const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s,
                 int batch, int threads, hc_nnoutput **outs, double *secs, hc_err *err);

/* A hostile model in the reader's text format whose every field is within its limit: trunk
 * channels 8192, backed by the data of a 1x1 initial conv and the global inputs' matmul, then an
 * ordinary block whose first layer after its norm is a k x k 8192 -> 8192 conv declared without
 * its weights. malloc'd (*len its length), NULL when out of memory. */
char *hc_hostile_model_text(int k, size_t *len);

/* A record of n moves (borrowed) on a 9x9 board from the empty board, black first, under area
 * scoring with situational superko and komi 7.5; the player after the last move to play. */
hc_position hc_test_position9(hc_move *moves, int n);

/* The precision-bisect tests' data, small enough to search in seconds: a synthetic net (16
 * channels; blocks res, gpool, res) written to path, and self-play positions written to path: 2
 * games on 9x9 from seed, at most max_moves moves each, every 5th position, 16 at most. 0, or -1
 * with err. */
int hc_write_small_net(const char *path, hc_err *err);
int hc_write_small_selfplay(const char *path, uint64_t seed, int max_moves, hc_err *err);

/* The error statistics of spec against ref32 (KataGo's metrics) on ps[0..n), both evaluated at
 * batch 4 with one thread, into st. 0, or -1 with err. */
int hc_errors_vs_ref32(const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s, const char *spec,
                       hc_stats *st, hc_err *err);

/* A hand-made output of a 2x2 buffer: policy pol[0..5) (pass last), ownership of 4 zeros, winrate
 * 0.5 and loss 0.5, every other field 0; hc_test_outs_free frees n of them. */
void hc_test_out2x2(hc_nnoutput *o, const float pol[5]);
void hc_test_outs_free(hc_nnoutput *o, size_t n);

/* Whether two outputs are the same bits (hc_nnoutput_first_diff finds nothing). */
int hc_outputs_same(const hc_nnoutput *a, const hc_nnoutput *b);

/* The first i < n whose outputs differ in any bit (hc_nnoutput_first_diff), or -1. */
long hc_outputs_first_diff(const hc_nnoutput *a, const hc_nnoutput *b, size_t n);

/* Writes every stride-th position of src, n at most, into dst with the positions module's reader
 * and writer. 0, or -1 with err (dst not left behind). */
int hc_write_positions(const char *src, const char *dst, int n, int stride, hc_err *err);

/* Whether rows 0..B-1 of two raw heads of the same shape are the same bits. */
int hc_raw_heads_equal(const hc_raw_heads *a, const hc_raw_heads *b, int B);

/* suite run as the suite tests run one: 2 threads, 120 s per case, the reference cache in cache
 * and scratch files in tmp (NULL: the defaults). NULL with err when it cannot run. */
hc_run *hc_test_run_suite(const hc_suite *suite, const char *cache, const char *tmp, hc_err *err);

/* dir/sub/results.json read back, or NULL (the reader's message printed, indented). */
hc_results_doc *hc_results_in(const char *dir, const char *sub);

/* Whether a and b hold the same results, whatever their order, each with the same outcome,
 * tiers and figures (bitwise); why gets the first difference. */
int hc_same_figures(const hc_results *a, const hc_results *b, char *why, size_t len);
/* The tests' reproducible random numbers: a 64-bit linear congruential generator (Knuth's MMIX
 * constants) whose state each program seeds and keeps (`static hc_rng rng = {SEED};`), so that
 * its values do not depend on what another program draws. */
typedef struct {
    uint64_t s;
} hc_rng;

/* Steps the state and returns it (its high bits are the random ones). */
uint64_t hc_rng_next(hc_rng *r);

/* Uniform in [0, 1) (53 bits of the state), and in [-1, 1). */
double hc_rand01(hc_rng *r);
double hc_urand(hc_rng *r);

/* n floats uniform in [-scale, scale) (malloc'd, one byte more so that n = 0 is not NULL). */
float *hc_rvec(hc_rng *r, size_t n, double scale);

/* Board masks of batch rows on an nx x ny buffer (calloc'd): row b's board in the top-left
 * corner, (nx - b % 3) x (ny - (b + 1) % 3) points but at least 1x1, so that rows differ and the
 * board is smaller than the buffer; mask_sum[b] gets row b's number of points. */
float *hc_board_mask(int batch, int nx, int ny, float *mask_sum);
#endif
