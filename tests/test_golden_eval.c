/* The fp32 reference against KataGo's own fp32 (Eigen) outputs: every config of
 * ../shared/golden/configs.json and synth_configs.json, every position, within the bounds of
 * golden/README.md. Prints the max error per config and metric. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "harness/eval/evaluate.h"
#include "hc_test.h"
#include "harness/model/model.h"

typedef struct maxes {
    double winrate, policy, ownership, lead, score_mean, score_stdev, stwl, stsc;
    long at_winrate, at_policy;
    int policy_sign_mismatch;
} maxes;

static double stdev_of(const hc_nnoutput *o)
{
    double v = (double)o->white_score_mean_sq - (double)o->white_score_mean * o->white_score_mean;
    return sqrt(v > 0 ? v : 0);
}

/* Raises *m to d; a NaN, once seen, stays (hc_max_nan). Returns whether *m changed, to note where. */
static int raise_max(double *m, double d)
{
    if (*m != *m || d <= *m)
        return 0;
    *m = hc_max_nan(*m, d);
    return 1;
}

static void compare(const hc_nnoutput *ref, const hc_nnoutput *got, long i, maxes *m)
{
    double wr = fabs(0.5 * ((double)got->white_win_prob - got->white_loss_prob) -
                     0.5 * ((double)ref->white_win_prob - ref->white_loss_prob)) +
                fabs((double)got->white_no_result_prob - ref->white_no_result_prob);
    if (raise_max(&m->winrate, wr))
        m->at_winrate = i;
    size_t area = (size_t)ref->nn_x_len * (size_t)ref->nn_y_len;
    for (size_t k = 0; k <= area; k++) {
        float a = ref->policy_probs[k], b = got->policy_probs[k];
        if ((a < 0) != (b < 0))
            m->policy_sign_mismatch++;
        double d = fabs((double)a - b);
        if (raise_max(&m->policy, d))
            m->at_policy = i;
    }
    for (size_t k = 0; k < area; k++) {
        double d = fabs((double)ref->white_owner_map[k] - got->white_owner_map[k]);
        raise_max(&m->ownership, d);
    }
#define UPD(field, expr) raise_max(&m->field, (expr))
    UPD(lead, fabs((double)ref->white_lead - got->white_lead));
    UPD(score_mean, fabs((double)ref->white_score_mean - got->white_score_mean));
    UPD(score_stdev, fabs(stdev_of(ref) - stdev_of(got)));
    UPD(stwl, fabs((double)ref->shortterm_winloss_error - got->shortterm_winloss_error));
    UPD(stsc, fabs((double)ref->shortterm_score_error - got->shortterm_score_error));
#undef UPD
}

/* Fails the metrics of a config that passed its load check (id) but cannot be evaluated: under
 * their own name, as id is taken. */
static void fail_metrics(const char *id, unsigned long mark, const char *name, const char *why)
{
    char rest[96];
    snprintf(rest, sizeof rest, "%s.metrics", id);
    hc_fail_n(rest, hc_test_left(mark, 5), "%s: %s", name, why);
}

static void run_config(json_t *c, const char *id)
{
    const unsigned long mark = hc_test_reported; /* 5 checks: the load and 4 metrics */
    const char *name = json_string_value(json_object_get(c, "name"));
    char net_path[512], pos_path[512], out_path[512];
    const char *p;
    if (!(p = hc_shared(json_string_value(json_object_get(c, "net"))))) {
        hc_skip_n(id, 5, "%s: net absent", name);
        return;
    }
    /* HC_GOLDEN_CONFIGS (names, comma-separated) picks a subset: `make test-qemu` runs a few
     * configs under emulation, where all of them would take too long. */
    const char *only = getenv("HC_GOLDEN_CONFIGS");
    if (only && *only) {
        size_t len = strlen(name ? name : "");
        const char *at = only;
        int picked = 0;
        while (!picked && (at = strstr(at, name ? name : "")) != NULL) {
            picked = (at == only || at[-1] == ',') && (at[len] == ',' || at[len] == '\0');
            at++;
        }
        if (!picked) {
            hc_skip_n(id, 5, "%s: not in HC_GOLDEN_CONFIGS=%s", name, only);
            return;
        }
    }
    snprintf(net_path, sizeof net_path, "%s", p);
    snprintf(pos_path, sizeof pos_path, "%s", hc_shared(json_string_value(json_object_get(c, "positions"))));
    snprintf(out_path, sizeof out_path, "%s", hc_shared(json_string_value(json_object_get(c, "outputs"))));
    int nx = (int)json_integer_value(json_object_get(c, "nnXLen"));
    int ny = (int)json_integer_value(json_object_get(c, "nnYLen"));
    hc_eval_settings s = hc_eval_settings_default(nx, ny);
    s.policy_optimism = json_number_value(json_object_get(c, "policyOptimism"));
    s.playout_doubling_advantage = json_number_value(json_object_get(c, "playoutDoublingAdvantage"));
    s.policy_temperature = (float)json_number_value(json_object_get(c, "nnPolicyTemperature"));

    hc_err err = {0};
    hc_net *net = hc_net_load(net_path, &err);
    hc_position *ps = NULL;
    hc_nnoutput *golden = NULL, *outs = NULL;
    size_t n = 0, ng = 0;
    hc_backend b = {0};
    hc_position *sub_ps = NULL;
    hc_nnoutput *sub_golden = NULL;
    size_t nsub = 0;
    if (!net || hc_positions_load(pos_path, &ps, &n, &err) || hc_nnoutputs_load(out_path, &golden, &ng, &err)) {
        hc_check(id, 0, "%s: loading: %s", name, err.msg);
        goto done;
    }
    hc_net_reduce_activations(net);
    if (!hc_check(id, ng == n && (long)n == json_integer_value(json_object_get(c, "count")), "%s: %zu positions, %zu golden",
                  name, n, ng))
        goto done;
    /* Under the sanitizers the engine's instrumented GEMM is ~50x slower: every SAN_STRIDE-th
     * position runs the same code paths for memory checking; the release build checks the
     * numerics on every position. Shallow copies: the originals own the memory. */
    size_t stride = 1;
#if defined(__SANITIZE_ADDRESS__)
    stride = 16;
#endif
    nsub = (n + stride - 1) / stride;
    sub_ps = calloc(nsub ? nsub : 1, sizeof *sub_ps);
    sub_golden = calloc(nsub ? nsub : 1, sizeof *sub_golden);
    if (!sub_ps || !sub_golden) {
        fail_metrics(id, mark, name, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nsub; i++) {
        sub_ps[i] = ps[i * stride];
        sub_golden[i] = golden[i * stride];
    }
    outs = calloc(nsub ? nsub : 1, sizeof *outs);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (hc_backend_open_with(&b, &(hc_backend_open_opts){.spec = "ref32", .net = net, .nx = nx, .ny = ny,
                                                         .max_batch = 16, .threads = 2}, &err) ||
        hc_eval_positions(&b, net, sub_ps, nsub, NULL, 16, &s, outs, NULL, NULL, NULL, NULL, &err)) {
        fail_metrics(id, mark, name, err.msg);
        goto done;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    maxes m = {0};
    for (size_t i = 0; i < nsub; i++)
        compare(&sub_golden[i], &outs[i], (long)(i * stride), &m);
    printf("INFO %s: %zu positions in %.1fs: max |err| winrate %.2e (pos %ld) policy %.2e (pos %ld) ownership %.2e "
           "lead %.2e scoreMean %.2e scoreStdev %.2e stWinloss %.2e stScore %.2e\n",
           name, nsub, secs, m.winrate, m.at_winrate, m.policy, m.at_policy, m.ownership, m.lead, m.score_mean,
           m.score_stdev, m.stwl, m.stsc);
    char sub[128];
    snprintf(sub, sizeof sub, "%s.winrate", id);
    hc_check(sub, m.winrate <= 1e-5, "%s: max winrate error %.3g > 1e-5 at position %ld", name, m.winrate, m.at_winrate);
    snprintf(sub, sizeof sub, "%s.policy", id);
    hc_check(sub, m.policy <= 2e-5 && m.policy_sign_mismatch == 0,
             "%s: max policy error %.3g > 2e-5 at position %ld, %d legality mismatches", name, m.policy, m.at_policy,
             m.policy_sign_mismatch);
    snprintf(sub, sizeof sub, "%s.ownership", id);
    hc_check(sub, m.ownership <= 1e-4, "%s: max ownership error %.3g > 1e-4", name, m.ownership);
    snprintf(sub, sizeof sub, "%s.scores", id);
    hc_check(sub, m.lead <= 1e-3 && m.score_mean <= 1e-3 && m.score_stdev <= 1e-3 && m.stwl <= 1e-3 && m.stsc <= 1e-3,
             "%s: lead %.3g scoreMean %.3g scoreStdev %.3g stWinloss %.3g stScore %.3g (bound 1e-3)", name, m.lead,
             m.score_mean, m.score_stdev, m.stwl, m.stsc);
done:
    if (hc_test_left(mark, 5)) { /* a failed load leaves the metrics unrun */
        char rest[96];
        snprintf(rest, sizeof rest, "%s.rest", id);
        hc_fail_n(rest, hc_test_left(mark, 5), "not run: %s did not load", name);
    }
    hc_backend_close(&b);
    hc_nnoutputs_free(outs, outs ? nsub : 0);
    free(sub_ps);
    free(sub_golden);
    hc_nnoutputs_free(golden, ng);
    hc_positions_free(ps, n);
    hc_net_free(net);
}

static void run_file(const char *rel, const char *prefix)
{
    hc_plan(1); /* the file; its configs add 5 checks each once it is read */
    const char *path = hc_shared(rel);
    if (!path) {
        hc_skip(prefix, "../shared/%s absent: golden comparison skipped", rel);
        return;
    }
    json_error_t je;
    json_t *arr = json_load_file(path, 0, &je);
    if (!hc_check(prefix, json_is_array(arr), "%s: %s", rel, je.text))
        return;
    hc_plan(5 * (unsigned)json_array_size(arr));
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char id[64];
        snprintf(id, sizeof id, "%s.%zu", prefix, i + 1);
        run_config(json_array_get(arr, i), id);
    }
    json_decref(arr);
}

int main(int argc, char **argv)
{
    /* An argument restricts the run to one file's configs ("golden" or "synth"). */
    if (argc < 2 || strcmp(argv[1], "golden") == 0)
        run_file("golden/configs.json", "golden-eval-1");
    if (argc < 2 || strcmp(argv[1], "synth") == 0)
        run_file("golden/synth_configs.json", "golden-eval-2");
    return hc_test_exit();
}
