/* The suite runner behind `halfcheck run`: for every net x board of a suite it loads the net
 * and the positions, computes (or takes from the cache) the fp32 reference, runs each
 * backend unbatched and batched, each in a child process with a time limit, computes
 * KataGo's statistics and checks them against the tiers. A backend that crashes, hangs,
 * fails or returns non-finite output becomes an error result naming the backend and the
 * position; every other case still runs. */
#ifndef HC_RUNNER_H
#define HC_RUNNER_H

#include <signal.h>

#include "harness/config/config.h"
#include "harness/base/err.h"
#include "reports/results.h"

typedef struct hc_run_options {
    const char *cache_dir; /* reference cache directory, created if absent; NULL: no cache */
    const char *tmp_dir;   /* parent of this run's private scratch directory; NULL: $TMPDIR or /tmp */
    int threads;           /* evaluation threads per backend (>= 1) */
    double timeout_s;      /* a backend case with no progress for this long is killed as hung */
    /* Called as evaluations advance (what: "net board backend mode", or "net board reference"),
     * first with done = 0 when the case starts; may be NULL. */
    void (*progress)(void *user, const char *what, size_t done, size_t total);
    /* Called when a case ends with its result (NULL for a reference computation), not for a
     * case cut short by stop; seconds: its wall time, or HC_RUN_FROM_CACHE for a reference read
     * from the cache (nothing evaluated: no time or speed to tell); may be NULL. Shares
     * progress_user. */
    void (*case_end)(void *user, const char *what, size_t total, double seconds, const hc_result *r);
    void *progress_user;
    /* Called with each warning as the run finds it (a reference cache that cannot be used: the
     * directory and why; the run goes on without it); may be NULL. Shares progress_user. */
    void (*warn)(void *user, const char *message);
    /* The batched cases' shuffle is a function of the case alone (net, board, backend and mode
     * names, and the seed), so that every entry point (the whole suite, --only, a sweep) deals
     * the same batches. seed_given 0: the suite's seed: (default 1). */
    unsigned seed;
    int seed_given;
    int allow_skips;       /* skips may pass (as the suite's allow_skips:); see hc_run_status */
    /* Polled while the run goes on (the CLI's signal handler sets it): once non-zero, the case
     * under way is stopped (its process group killed), no further case starts, and the run
     * returns what finished, marked interrupted. NULL: never stops. */
    const volatile sig_atomic_t *stop;
    /* Case filters "net=N,board=B,backend=K" (any subset of the keys), so that a sweep can run
     * one case per process: a case runs when it matches any of the n_only filters (0: every
     * case). A name the suite lacks, or a filter that selects nothing, is an HC_EUSAGE error of
     * hc_run_suite (hc_suite_select). */
    const char *const *only;
    size_t n_only;
    /* Where the fp32 reference is computed: "ref32" (the CPU) or "cuda:ref32" (an NVIDIA GPU,
     * the same bits); NULL: the suite's reference:, else ref32. A reference computed by another
     * spec than ref32 is checked against ref32 on the CPU at a few of its positions
     * (ref_check, 0: HC_RUN_REF_CHECK) before it is used or cached: a difference in any bit
     * fails the reference (its cases become errors naming it) and caches nothing. */
    const char *ref_spec;
    int ref_check;
    /* What a command that reruns one case needs beyond the suite and --only: every option of the
     * command line that changes what is evaluated or how it is judged (" --net 'g170=/nets/x.bin.gz'
     * --allow-skips"), shell-quoted, each with a leading space; NULL: none. The runner adds
     * " --seed N" itself when the effective seed is not the suite's. */
    const char *rerun_args;
    /* The command line that started the run, shell-quoted, for the reports' provenance; NULL:
     * unknown. */
    const char *command;
    /* Leave out Linux's PR_SET_PDEATHSIG in the case children (harness/run/isolate.h): their
     * portable lifeline alone then ends them when this process dies (tests/test_orphans). */
    int no_pdeathsig;
    /* run --repeat N (0: each backend's repeat:, see config.h): every case's positions evaluated N
     * times more in other batch compositions and orders, compared bit for bit (harness/run/repeat.h),
     * one more result per case (mode "repeat"); repeat_limit: the largest difference that passes. */
    int repeat;
    double repeat_limit;
    /* Where the suite's backend specs are looked up (backends/backend.h); NULL: the user registry. */
    const struct hc_backend_registry *registry;
} hc_run_options;

enum { HC_RUN_REF_CHECK = 3 };
#define HC_RUN_FROM_CACHE (-1.0)

/* Whether spec may compute the reference (ref32, cuda:ref32 with or without params). */
int hc_run_ref_spec_ok(const char *spec);

hc_run_options hc_run_options_default(void);

typedef struct hc_run hc_run;

/* Runs every case of the suite (which must outlive the run). Returns the run, or NULL with
 * err only when nothing could be run at all (e.g. no scratch directory); inputs that fail to
 * load (a net, a positions file) become error results of the cases that need them. */
hc_run *hc_run_suite(const hc_suite *suite, const hc_run_options *opts, hc_err *err);

/* The results, for the reports (owned by the run). */
const hc_results *hc_run_results(const hc_run *run);

/* Exit status of the run: 2 if an input (net, positions) failed to load, else 3 if a backend
 * crashed, hung, failed or produced non-finite output, else 1 if a tier failed, else 4 if no
 * check ran or a backend was skipped in every case (unless skips are allowed: the suite's
 * allow_skips: or hc_run_options.allow_skips), else 0. An interrupted run has the status of
 * what finished; the CLI exits 130 for it. */
int hc_run_status(const hc_run *run);
/* Whether the run was stopped through hc_run_options.stop before every case ran. */
int hc_run_interrupted(const hc_run *run);

/* Writes junit.xml, results.json, report.md, report.csv and report.html into dir (created if absent),
 * each atomically. */
int hc_run_write_reports(const hc_run *run, const char *dir, hc_err *err);

/* Reference computations served from the cache, and computed afresh. */
int hc_run_cache_hits(const hc_run *run);
int hc_run_cache_misses(const hc_run *run);

void hc_run_free(hc_run *run);

#endif
