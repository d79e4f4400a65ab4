/* The one evaluation core and its one-of-each helpers (issue 22, items 2-4):
 *  - hc_mkdir_p makes nested directories, accepts one that exists, and names the path it
 *    cannot make;
 *  - hc_reports_write_dir writes the five reports of a results set into a new directory;
 *  - the evaluator opens through the registry, decides lanes vs one instance (threads on a CPU
 *    tensor backend: lanes; one_instance or one thread: none), and its lanes and one instance
 *    give the same bits;
 *  - the registry opens emulate from an in-memory profile with the bits of emulate:NAME, and
 *    refuses a profile for a kind that takes none;
 *  - a progress callback that asks to stop ends the evaluation with HC_EINTERRUPTED, not a
 *    usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "harness/base/files.h"
#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/data/nnoutput.h"
#include "harness/data/positions.h"
#include "backends/profile.h"
#include "reports/reports.h"

enum { NX = 9, NY = 9, N_POS = 12 };

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void test_files(const char *tmp)
{
    char d[600], f[700];
    hc_err err = {0};
    snprintf(d, sizeof d, "%s/a/b/c", tmp);
    hc_check("evaluator-files.1", hc_mkdir_p(d, &err) == 0 && is_dir(d), "mkdir -p %s: %s", d, err.msg);
    hc_check("evaluator-files.2", hc_mkdir_p(d, &err) == 0, "an existing directory: %s", err.msg);
    snprintf(f, sizeof f, "%s/a/plain", tmp);
    FILE *fp = fopen(f, "w");
    if (fp)
        fclose(fp);
    snprintf(d, sizeof d, "%s/a/plain/sub", tmp);
    hc_err_clear(&err);
    int rc = hc_mkdir_p(d, &err);
    hc_check("evaluator-files.3", rc == -1 && err.code == HC_EIO && strstr(err.msg, "a/plain"),
             "a file in the way: rc %d, code %d: %s", rc, err.code, err.msg);

    hc_results rs;
    memset(&rs, 0, sizeof rs);
    snprintf(d, sizeof d, "%s/reports/x", tmp);
    hc_err_clear(&err);
    rc = hc_reports_write_dir(&rs, d, &err);
    const char *names[] = {"junit.xml", "results.json", "report.md", "report.csv", "report.html"};
    int found = 0;
    for (int i = 0; i < 5; i++) {
        snprintf(f, sizeof f, "%s/%s", d, names[i]);
        found += is_file(f);
    }
    hc_check("evaluator-reports.1", rc == 0 && found == 5, "rc %d (%s), %d of the 5 reports written", rc, err.msg,
             found);
}

/* Evaluates ps with o; outs[n] allocated here (NULL with err on failure). */
static hc_nnoutput *eval_with(const hc_evaluator_opts *o, const hc_position *ps, size_t n, int *lanes, hc_err *err)
{
    hc_evaluator *ev = hc_evaluator_open(o, err);
    hc_nnoutput *outs = calloc(n, sizeof *outs);
    hc_eval_request req = {.ps = ps, .n = n, .outs = outs};
    if (lanes)
        *lanes = ev ? hc_evaluator_lanes(ev) : -1;
    int rc = ev && outs ? hc_evaluator_run(ev, &req, err) : -1;
    hc_evaluator_close(ev);
    if (rc) {
        hc_nnoutputs_free(outs, n);
        return NULL;
    }
    return outs;
}

static size_t count_same(const hc_nnoutput *a, const hc_nnoutput *b, size_t n)
{
    size_t same = 0;
    for (size_t i = 0; a && b && i < n; i++)
        same += hc_outputs_same(&a[i], &b[i]);
    return same;
}

static int stop_now(void *user, size_t done, size_t total)
{
    (void)user, (void)done, (void)total;
    return 1;
}

static void test_evaluator(const hc_net *net, const hc_position *ps, size_t n)
{
    hc_err err = {0};
    hc_evaluator_opts o = {.spec = "ref32", .net = net, .settings = hc_eval_settings_default(NX, NY), .batch = 4};
    int l1 = -1, l2 = -1, l3 = -1;
    hc_nnoutput *one = eval_with(&o, ps, n, &l1, &err);
    o.threads = 2;
    hc_nnoutput *lanes = eval_with(&o, ps, n, &l2, &err);
    o.one_instance = 1;
    hc_nnoutput *threaded = eval_with(&o, ps, n, &l3, &err);
    hc_check("evaluator-open.1", l1 == 0 && l2 == 2 && l3 == 0,
             "ref32: 1 thread %d lanes, 2 threads %d lanes, 2 threads one_instance %d lanes (want 0, 2, 0)", l1, l2,
             l3);
    size_t s1 = count_same(one, lanes, n), s2 = count_same(one, threaded, n);
    hc_check("evaluator-bits.1", one && s1 == n && s2 == n,
             "ref32 one instance vs 2 lanes: %zu of %zu identical; vs one instance of 2 threads: %zu (%s)", s1, n, s2,
             err.msg);

    /* emulate from an in-memory profile, through the registry */
    hc_err_clear(&err);
    hc_evaluator_opts e = {.spec = "emulate:fp16", .net = net, .settings = o.settings, .batch = 4};
    hc_nnoutput *by_name = eval_with(&e, ps, n, NULL, &err);
    hc_profile *prof = hc_profile_load("fp16", &err);
    e.spec = "emulate";
    e.profile = prof;
    hc_nnoutput *by_prof = prof ? eval_with(&e, ps, n, NULL, &err) : NULL;
    size_t s3 = count_same(by_name, by_prof, n);
    hc_check("evaluator-profile.1", by_name && by_prof && s3 == n && count_same(one, by_prof, n) < n,
             "emulate:fp16 vs emulate with the fp16 profile in memory: %zu of %zu identical (%s)", s3, n, err.msg);
    hc_err_clear(&err);
    hc_backend b = {0};
    hc_backend_open_opts bo = {.spec = "ref32", .net = net, .nx = NX, .ny = NY, .max_batch = 1, .threads = 1,
                               .profile = prof};
    int rc = prof ? hc_backend_open_with(&b, &bo, &err) : 0;
    hc_check("evaluator-profile.2", rc == -1 && strstr(err.msg, "ref32") && strstr(err.msg, "profile"),
             "ref32 given a profile: rc %d: %s", rc, err.msg);
    hc_backend_close(&b);
    hc_profile_free(prof);

    /* interrupted: on one instance and on lanes */
    for (int threads = 1; threads <= 2; threads++) {
        hc_err_clear(&err);
        o.one_instance = 0;
        o.threads = threads;
        o.batch = 1;
        hc_evaluator *ev = hc_evaluator_open(&o, &err);
        hc_nnoutput *outs = calloc(n, sizeof *outs);
        hc_eval_request req = {.ps = ps, .n = n, .outs = outs, .progress = stop_now};
        rc = ev && outs ? hc_evaluator_run(ev, &req, &err) : 0;
        char name[48];
        snprintf(name, sizeof name, "evaluator-interrupt.%d", threads);
        hc_check(name, rc == -1 && err.code == HC_EINTERRUPTED && strcmp(hc_code_str(err.code), "interrupted") == 0,
                 "%d thread(s): rc %d, code %d (%s): %s", threads, rc, err.code, hc_code_str(err.code), err.msg);
        hc_evaluator_close(ev);
        for (size_t i = 0; outs && i < n; i++)
            hc_nnoutput_free(&outs[i]);
        free(outs);
    }
    hc_nnoutputs_free(one, n);
    hc_nnoutputs_free(lanes, n);
    hc_nnoutputs_free(threaded, n);
    hc_nnoutputs_free(by_name, n);
    hc_nnoutputs_free(by_prof, n);
}

int main(void)
{
    hc_plan(4);
    const char *tmp = hc_tmpdir("test_evaluator");
    if (!tmp) {
        hc_fail_rest("evaluator-files", "no scratch directory");
        return hc_test_exit();
    }
    char t[512];
    snprintf(t, sizeof t, "%s", tmp);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s/a %s/reports", t, t);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not clean %s\n", t);
    test_files(t);

    hc_plan(6);
    hc_net *net;
    hc_position *ps;
    size_t n;
    char why[1200];
    int st = hc_shared_net_positions("nets/g170-b6c96-s175395328-d26788732.bin.gz", "positions/size9.jsonl.gz", &net, &ps,
                                     &n, why, sizeof why);
    if (st == 0 && n < N_POS) {
        snprintf(why, sizeof why, "%zu positions, %d wanted", n, N_POS);
        st = -1;
    }
    if (hc_unrun_n("evaluator-shared", 6, st, why)) {
        hc_net_free(net);
        hc_positions_free(ps, n);
        return hc_test_exit();
    }
    test_evaluator(net, ps, N_POS);
    hc_positions_free(ps, n);
    hc_net_free(net);
    return hc_test_exit();
}
