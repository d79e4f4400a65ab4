/* The README's first command works on its own: halfcheck demo needs nothing outside the
 * repository, passes, and leaves valid reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "hc_test.h"

/* Looks at the emulate:fp16 results of the demo's results.json: how many there are, how many
 * differ from the reference (winrate and policy KL maxima above zero, all finite), and how many
 * pass every tier they were checked against. */
static void fp16_results(const char *path, int *n, int *differ, int *within)
{
    *n = *differ = *within = 0;
    json_t *root = json_load_file(path, 0, NULL);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(root, "results"), i, r)
    {
        const char *backend = json_string_value(json_object_get(r, "backend"));
        if (!backend || strncmp(backend, "emulate", 7) != 0)
            continue;
        (*n)++;
        json_t *m = json_object_get(json_object_get(r, "stats"), "metrics");
        double wr = json_number_value(json_object_get(json_object_get(m, "winrateError"), "max"));
        double kl = json_number_value(json_object_get(json_object_get(m, "policyKLDiv"), "max"));
        json_t *nf = json_object_get(json_object_get(m, "winrateError"), "nonfinite");
        *differ += wr > 0 && kl > 0 && json_is_integer(nf) && json_integer_value(nf) == 0;
        json_t *tiers = json_object_get(r, "tiers"), *t;
        size_t j;
        int pass = json_array_size(tiers) > 0;
        json_array_foreach(tiers, j, t) pass &= json_is_true(json_object_get(t, "pass"));
        *within += pass;
    }
    json_decref(root);
}

int main(void)
{
    hc_plan(1 + 9 + 5); /* the run; 2.x one per file; 3.x the reports */
    const char *hc = hc_halfcheck_bin();
    const char *dir = hc_tmpdir("test_demo");
    char cmd[2048];
    /* No shared data may be needed: point HC_SHARED somewhere empty. */
    snprintf(cmd, sizeof cmd, "rm -rf %s/demo && HC_SHARED=/nonexistent %s demo --quiet --out %s/demo 2>%s/stderr.txt",
             dir, hc, dir, dir);
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    hc_check("demo-1.1", rc == 0, "halfcheck demo exited %d (see %s/stderr.txt)", rc, dir);
    const char *files[9] = {"net.bin.gz", "selfplay9.jsonl.gz", "selfplay13.jsonl.gz", "demo.yaml",
                           "reports/junit.xml", "reports/results.json", "reports/report.md", "reports/report.csv",
                           "reports/report.html"};
    for (int i = 0; i < 9; i++) {
        char path[1024], name[32];
        snprintf(path, sizeof path, "%s/demo/%s", dir, files[i]);
        snprintf(name, sizeof name, "demo-2.%d", i + 1);
        FILE *f = fopen(path, "rb");
        hc_check(name, f != NULL, "%s missing", path);
        if (f)
            fclose(f);
    }
    /* Both backends were checked in both modes, and the fp16 emulation really differs. */
    long cases = hc_shf_count("grep -c '<testcase' %s/demo/reports/junit.xml", dir);
    /* 2 boards x 2 modes x (ref32 under exact + emulate:fp16 under fp16 and fp32) */
    hc_check("demo-3.1", cases == 12, "%ld testcases (want 2 boards x 2 modes x 3 backend tiers)", cases);
    snprintf(cmd, sizeof cmd, "grep -q '<error' %s/demo/reports/junit.xml", dir);
    hc_check("demo-3.2", system(cmd) != 0, "the demo's JUnit holds errors");
    char json[1024];
    snprintf(json, sizeof json, "%s/demo/reports/results.json", dir);
    int n, differ, within;
    fp16_results(json, &n, &differ, &within);
    hc_check("demo-3.3", n == 4 && differ == n, "%d of %d emulate:fp16 results differ from ref32 (want 2 boards x 2 modes)",
             differ, n);
    hc_check("demo-3.4", n == 4 && within == n, "%d of %d emulate:fp16 results pass all their tiers", within, n);
    /* The ref32 cases check something that can fail: batch invariance, under the exact tier. */
    long exact = hc_shf_count("grep -c '<testcase name=\"[^\"]*backend=ref32-batch-invariance [^\"]*tier=exact\"' "
                              "%s/demo/reports/junit.xml", dir);
    hc_check("demo-3.5", exact == 4, "%ld ref32 testcases under the exact tier (want 2 boards x 2 modes)", exact);
    return hc_test_exit();
}
