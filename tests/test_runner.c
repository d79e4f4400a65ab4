/* The suite runner: a passing suite, reports on disk, the reference cache (reused when valid,
 * recomputed when a setting changes or the entry is damaged) and inputs that fail to load. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/config/config.h"
#include "hc_test.h"
#include "harness/data/positions.h"
#include "harness/run/runner.h"

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static hc_err last_err; /* of the last run_yaml that returned NULL */

static hc_run *run_yaml(const char *yaml, const char *name, const char *cache, hc_suite **suite_out)
{
    hc_err err = {0};
    last_err = err;
    hc_suite *s = hc_suite_parse(yaml, strlen(yaml), name, &err);
    if (!s) {
        printf("# suite error: %s\n", err.msg);
        *suite_out = NULL;
        return NULL;
    }
    hc_run *r = hc_test_run_suite(s, cache, NULL, &err);
    if (!r) {
        printf("# run error: %s\n", err.msg);
        last_err = err;
    }
    *suite_out = s;
    return r;
}

int main(void)
{
    hc_plan(14);
    const char *net = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz");
    char net_path[512];
    if (!net) {
        hc_skip_rest("runner-1", "../shared absent: runner tests need the shared g170 net");
        return hc_test_exit();
    }
    snprintf(net_path, sizeof net_path, "%s", net);
    const char *dir = hc_tmpdir("test_runner");
    char pos_path[600], cache[600], reports[600], cmd[1400];
    snprintf(pos_path, sizeof pos_path, "%s/pos.jsonl", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(reports, sizeof reports, "%s/reports", dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", cache, reports);
    if (system(cmd) != 0)
        return 1;

    /* 24 positions of the 10x14 set keep this fast. */
    hc_position *ps;
    size_t n;
    hc_err err = {0};
    if (!hc_check("runner-1.1", hc_positions_load(hc_shared("positions/size10x14.jsonl.gz"), &ps, &n, &err) == 0,
                  "%s", err.msg))
        return hc_fail_rest("runner-1.1.rest", "not run: %s failed", "runner-1.1"), hc_test_exit();
    hc_poswriter *w = hc_poswriter_open(pos_path, &err);
    for (size_t i = 0; i < 24; i++)
        hc_poswriter_write(w, &ps[i], &err);
    hc_poswriter_commit(w, &err);
    hc_positions_free(ps, n);

    char yaml[4096];
    const char *fmt = "name: t\n"
                      "nets:\n  - {name: g170, model: %s, modelVersion: 8}\n"
                      "boards:\n  - {name: b, positions: %s, nnBuffer: 10x14, maxBatchSize: 5, policyTemperature: %s}\n"
                      "backends:\n  - {name: ref32, backend: ref32, tiers: [fp32, fp32-strict]}\n";
    snprintf(yaml, sizeof yaml, fmt, net_path, pos_path, "1.0");
    hc_suite *s;
    hc_run *r = run_yaml(yaml, "t.yaml", cache, &s);
    if (!hc_check("runner-1.2", r != NULL, "run failed"))
        return hc_fail_rest("runner-1.2.rest", "not run: %s failed", "runner-1.2"), hc_test_exit();
    const hc_results *rs = hc_run_results(r);
    hc_check("runner-1.3", rs->n == 2 && rs->items[0].outcome == HC_OUT_CHECKED && rs->items[1].outcome == HC_OUT_CHECKED &&
                               strcmp(rs->items[0].mode, "unbatched") == 0 && strcmp(rs->items[1].mode, "batched") == 0,
             "%zu results", rs->n);
    hc_check("runner-1.4", hc_run_status(r) == 0, "status %d", hc_run_status(r));
    /* ref32 against its own reference: fp32 rounding at most. */
    double wr_max = rs->items[1].stats ? rs->items[1].stats->m[HC_M_WINRATE].v[HC_P_MAX] : 1;
    hc_check("runner-1.5", wr_max < 1e-6, "ref32 batched vs reference winrate max %g", wr_max);
    printf("# ref32 vs reference: unbatched winrate max %g, batched %g\n",
           rs->items[0].stats ? rs->items[0].stats->m[HC_M_WINRATE].v[HC_P_MAX] : -1, wr_max);
    hc_check("runner-1.6", hc_run_cache_misses(r) == 1 && hc_run_cache_hits(r) == 0 && count_files(cache) == 1,
             "misses %d hits %d files %d", hc_run_cache_misses(r), hc_run_cache_hits(r), count_files(cache));
    hc_check("runner-1.7", hc_run_write_reports(r, reports, &err) == 0 && count_files(reports) == 6,
             "%s (junit.xml, results.json, report.md, summary.md, report.csv, report.html)", err.msg);
    double first = wr_max;
    hc_run_free(r);
    hc_suite_free(s);

    /* The same suite again: the reference comes from the cache, with the same figures. */
    r = run_yaml(yaml, "t.yaml", cache, &s);
    rs = r ? hc_run_results(r) : NULL;
    hc_check("runner-2.1", r && hc_run_cache_hits(r) == 1 && hc_run_cache_misses(r) == 0 && rs->n == 2 &&
                               rs->items[1].stats->m[HC_M_WINRATE].v[HC_P_MAX] == first,
             "cache not reused");
    hc_run_free(r);
    hc_suite_free(s);

    /* A damaged entry is recomputed, never served. */
    char entry[900];
    DIR *d = opendir(cache);
    struct dirent *e;
    entry[0] = '\0';
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            snprintf(entry, sizeof entry, "%s/%s", cache, e->d_name);
    if (d)
        closedir(d);
    struct stat st;
    stat(entry, &st);
    hc_check("runner-2.2", truncate(entry, st.st_size / 2) == 0, "truncate %s", entry);
    r = run_yaml(yaml, "t.yaml", cache, &s);
    hc_check("runner-2.3", r && hc_run_cache_misses(r) == 1 && hc_run_status(r) == 0, "damaged entry served");
    hc_run_free(r);
    hc_suite_free(s);

    /* A changed setting is a different reference. */
    snprintf(yaml, sizeof yaml, fmt, net_path, pos_path, "0.5");
    r = run_yaml(yaml, "t.yaml", cache, &s);
    hc_check("runner-2.4", r && hc_run_cache_misses(r) == 1 && count_files(cache) == 2, "temperature change reused");
    hc_run_free(r);
    hc_suite_free(s);

    /* A net that does not load: refused before any work (no run, no results), as one config
     * error naming the net, its place in the suite and the file. */
    snprintf(yaml, sizeof yaml, fmt, "/nonexistent/net.bin.gz", pos_path, "1.0");
    r = run_yaml(yaml, "t.yaml", cache, &s);
    hc_check("runner-3.1", !r && strstr(last_err.msg, "/nonexistent/net.bin.gz") && strstr(last_err.msg, "t.yaml:3"),
             "missing net: %s", r ? "a run" : last_err.msg);
    hc_check("runner-3.2", !r && last_err.code != HC_EBACKEND && last_err.code != HC_EINTERRUPTED && last_err.code != HC_OK, "missing net: code %d", last_err.code);
    hc_run_free(r);
    hc_suite_free(s);

    /* A wrong expected version is a config error naming the line. */
    snprintf(yaml, sizeof yaml, fmt, net_path, pos_path, "1.0");
    char *v = strstr(yaml, "modelVersion: 8");
    v[14] = '9';
    r = run_yaml(yaml, "t.yaml", cache, &s);
    hc_check("runner-3.3", !r && strstr(last_err.msg, "t.yaml:3") && strstr(last_err.msg, "version 8"),
             "version mismatch: %s", r ? "a run" : last_err.msg);
    hc_run_free(r);
    hc_suite_free(s);
    return hc_test_exit();
}
