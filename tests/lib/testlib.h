/* Helpers the test programs share (files, shell commands, the halfcheck binary, scratch paths). */
#ifndef HC_TESTLIB_H
#define HC_TESTLIB_H

#include <stddef.h>
#include <sys/types.h>

#include "harness/eval/evaluate.h"
#include "harness/model/heads.h"
#include "reports/results.h"

/* The whole file as a malloc'd NUL-terminated string (binary content kept; *len, when len is
 * not NULL, gets its size), or NULL when it cannot be read. */
char *hc_slurp(const char *path);
char *hc_slurp_len(const char *path, size_t *len);

/* The file's text for a quick look (strstr on a report): valid for the next 7 calls (a ring of
 * 8, freed in turn), "" when the file cannot be read, so a missing file fails the check that reads it rather than crashing. */
const char *hc_text(const char *path);

/* The exit status of a shell command, -1 when it died of a signal (or could not run). */
int hc_sh(const char *cmd);
int hc_shf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The halfcheck binary: $HALFCHECK (set by make test) or build/halfcheck, absolute so that a
 * command run from another directory still finds it. */
const char *hc_halfcheck_bin(void);

/* tests/helper_halfcheck beside the test program argv0 names, absolute: halfcheck's command line
 * with the test registry (tests/lib/testkinds.h), for the CLI tests whose suites name fault:. */
const char *hc_test_halfcheck_bin(const char *argv0);

/* dir/name in one of 8 rotating static buffers: enough for the paths of one call. */
const char *hc_path(const char *dir, const char *name);

/* An absolute form of rel (relative to the working directory) into buf. */
void hc_abspath(const char *rel, char *buf, size_t len);

int hc_file_exists(const char *path);

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

/* Waits until the file dir/rel holds text (or up to limit seconds); returns whether it did. */
int hc_wait_for_text(const char *dir, const char *rel, const char *text, double limit);

/* An integer from the environment: name's value when set and within lo..hi, else dflt. */
int hc_env_int(const char *name, int dflt, int lo, int hi);

/* ps[0..n) evaluated by spec through the evaluator (settings s, batch, threads) into *outs
 * (calloc'd, n entries; free with hc_nnoutputs_free); *secs (NULL: not wanted) the wall time of
 * opening and evaluating. 0, or -1 with err. */
int hc_eval_spec(const char *spec, const hc_net *net, const hc_position *ps, size_t n, const hc_eval_settings *s,
                 int batch, int threads, hc_nnoutput **outs, double *secs, hc_err *err);

/* A hand-made output of a 2x2 buffer: policy pol[0..5) (pass last), ownership of 4 zeros, winrate
 * 0.5 and loss 0.5, every other field 0; hc_test_outs_free frees n of them. */
void hc_test_out2x2(hc_nnoutput *o, const float pol[5]);
void hc_test_outs_free(hc_nnoutput *o, size_t n);

/* The first i < n whose outputs differ in any bit (hc_nnoutput_first_diff), or -1. */
long hc_outputs_first_diff(const hc_nnoutput *a, const hc_nnoutput *b, size_t n);

/* Whether rows 0..B-1 of two raw heads of the same shape are the same bits. */
int hc_raw_heads_equal(const hc_raw_heads *a, const hc_raw_heads *b, int B);

/* dir/sub/results.json read back, or NULL (the reader's message printed, indented). */
hc_results_doc *hc_results_in(const char *dir, const char *sub);

/* Whether a and b hold the same results, whatever their order, each with the same outcome,
 * tiers and figures (bitwise); why gets the first difference. */
int hc_same_figures(const hc_results *a, const hc_results *b, char *why, size_t len);
#endif
