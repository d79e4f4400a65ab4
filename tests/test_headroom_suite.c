/* A suite's headroom (suite keys headroom and headroom_positions; docs/EMULATION.md "Headroom"): on a
 * synthetic net and 9x9 selfplay positions, `headroom: fp16` gives report.md a Headroom section of
 * three rows for the net x board, the exact figures of smallest margin on the first headroom_positions
 * positions, as hc_headroom_measure gives them and as `halfcheck headroom` prints its smallest; the
 * rows survive results.json and `halfcheck merge` of the suite split over two jobs (kept once); `headroom: fp8` exits 2 naming file:line:col; a
 * suite without the key has no section and the same figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_test.h"
#include "harness/run/headroom.h"
#include "harness/model/heads.h"
#include "harness/model/model.h"
#include "harness/data/positions.h"
#include "reports/results.h"

static char dir[1200];

enum { NPOS = 6, ROWS = 3 };

/* The expected rows: the ROWS exact figures of smallest margin (the first in forward order among
 * equals), from the library directly. */
typedef struct want_row {
    char layer[256];
    const char *what;
    double value, margin;
    long position;
} want_row;

static int expected(want_row *w, hc_err *err)
{
    hc_net *net = hc_net_load(hc_path(dir, "net.bin.gz"), err);
    hc_position *ps = NULL;
    size_t n = 0;
    if (net)
        hc_net_reduce_activations(net); /* as the runner's reference and `halfcheck headroom` use it */
    if (!net || hc_positions_load(hc_path(dir, "p9.jsonl.gz"), &ps, &n, err)) {
        hc_net_free(net);
        return -1;
    }
    hc_eval_settings s = hc_eval_settings_default(9, 9);
    hc_headroom_opts o = {.settings = &s, .batch = 1};
    hc_headroom *h = hc_headroom_measure(net, ps, n < NPOS ? n : NPOS, &o, err);
    int k = 0;
    if (h) {
        double lim = hc_headroom_limit(HC_TAPFMT_F16);
        char used[4096] = {0};
        for (; k < ROWS; k++) {
            int best = -1;
            double bm = INFINITY;
            for (int i = 0; i < hc_headroom_count(h) && i < (int)sizeof used; i++) {
                const hc_headroom_fig *f = hc_headroom_at(h, i);
                double m = hc_headroom_margin(f->value, lim);
                if (!f->bound && !used[i] && (best < 0 || m < bm)) {
                    best = i;
                    bm = m;
                }
            }
            if (best < 0)
                break;
            used[best] = 1;
            const hc_headroom_fig *f = hc_headroom_at(h, best);
            snprintf(w[k].layer, sizeof w[k].layer, "%s", f->layer);
            w[k].what = f->what;
            w[k].value = f->value;
            w[k].margin = bm;
            w[k].position = f->position;
        }
    }
    hc_headroom_free(h);
    hc_positions_free(ps, n);
    hc_net_free(net);
    return h ? k : -1;
}

/* The report's Headroom (fp16) section, from its heading to the blank line after its table,
 * malloc'd; NULL when absent. */
static char *section(const char *report)
{
    const char *s = strstr(report, "## Headroom (fp16)");
    if (!s)
        return NULL;
    const char *t = strstr(s, "\n|---");
    const char *e = t ? strstr(t + 1, "\n\n") : NULL;
    e = e ? e : s + strlen(s);
    return strndup(s, (size_t)(e - s));
}

int main(void)
{
    hc_plan(4 + 3 + 3 + 2 + 2);
    const char *h = hc_halfcheck_bin();
    char cwd[1024];
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    snprintf(dir, sizeof dir, "%s/%s", cwd, hc_tmpdir("test_headroom_suite"));
    int rc = hc_shf("cd %s && rm -rf out* merged && %s synth-net --arch v7 --seed 5 --out net.bin.gz >/dev/null 2>&1 && "
                    "%s selfplay --size 9 --games 2 --seed 8 --moves 40 --stride 4 --out p9.jsonl.gz >/dev/null 2>&1 && "
                    "printf '%%s\\n' 'name: hs' 'nets: [{name: synth, model: net.bin.gz}]' "
                    "'boards: [{name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}]' "
                    "'backends: [{name: backend, backend: ref32, tiers: [fp32]}, {name: other, backend: ref32, tiers: [fp32]}]' 'modes: [unbatched]' > plain.yaml && "
                    "cp plain.yaml head.yaml && printf '%%s\\n' 'headroom: fp16' 'headroom_positions: %d' >> head.yaml && "
                    "cp plain.yaml bad.yaml && printf '%%s\\n' 'headroom: fp8' >> bad.yaml",
                    dir, h, h, NPOS);
    if (!hc_check("hsuite-0.1", rc == 0, "could not make the net, positions and suites in %s", dir))
        return hc_fail_rest("hsuite-0.2", "not run: no inputs"), hc_test_exit();

    /* 1: the suite with headroom: the section, its rows as the library measures them. */
    int r1 = hc_shf("cd %s && %s run head.yaml --out out1 >out1.log 2>&1", dir, h);
    hc_check("hsuite-0.2", r1 == 0, "run with headroom: exit %d (want 0: headroom changes no status; %s/out1.log)", r1,
             dir);
    hc_check("hsuite-0.3", strstr(hc_text(hc_path(dir, "out1.log")), "synth b9 headroom") != NULL,
             "no \"synth b9 headroom\" progress line in %s/out1.log", dir);
    hc_err err = {0};
    want_row w[ROWS];
    int nw = expected(w, &err);
    hc_check("hsuite-0.4", nw == ROWS, "the library's measurement: %d figures (%s)", nw, err.msg);
    char *sec = section(hc_text(hc_path(dir, "out1/report.md")));
    int rows = 0, match = 0;
    char why[600] = "";
    for (const char *p = sec ? strstr(sec, "\n|---") : NULL; p && (p = strstr(p + 1, "\n| ")); rows++) {
        if (rows >= nw)
            continue;
        char want[800], v[64], m[64];
        hc_num_format(v, sizeof v, "%.6g", w[rows].value);
        hc_num_format(m, sizeof m, "%.2f", w[rows].margin);
        snprintf(want, sizeof want, "\n| synth | b9 | `%s` | %s | %s | %s | %ld | %s |", w[rows].layer, w[rows].what, v,
                 m, w[rows].position, w[rows].margin < 0 ? "OVERFLOW" : "");
        if (!strncmp(p, want, strlen(want)))
            match++;
        else if (!*why)
            snprintf(why, sizeof why, "row %d is not%s", rows, want);
    }
    hc_check("hsuite-1.1", sec && rows == ROWS, "report.md: %s, %d rows (want %d)",
             sec ? "a Headroom (fp16) section" : "no Headroom (fp16) section", rows, ROWS);
    hc_check("hsuite-1.2", match == ROWS && nw == ROWS, "%d of %d rows as the library measures them; %s", match, ROWS,
             why);
    /* `halfcheck headroom` on the same net, positions and buffer: its smallest margin is the first row. */
    int rh = hc_shf("cd %s && %s headroom --net net.bin.gz --positions p9.jsonl.gz --nn 9x9 --limit %d > cli.txt 2>&1",
                    dir, h, NPOS);
    /* the exact figures' line (the line before it is the bounds'): "fp16 headroom: ... smallest margin M: ..." */
    const char *cli = strstr(hc_text(hc_path(dir, "cli.txt")), "\nfp16 headroom: ");
    cli = cli ? strstr(cli, "smallest margin ") : NULL;
    char cli_want[800] = "";
    if (nw > 0)
        snprintf(cli_want, sizeof cli_want, "smallest margin %.2f: %s (%s %.6g, position %ld", w[0].margin, w[0].layer,
                 w[0].what, w[0].value, w[0].position);
    hc_check("hsuite-1.3", rh == 0 && cli && nw > 0 && !strncmp(cli, cli_want, strlen(cli_want)),
             "halfcheck headroom (exit %d) prints \"%.120s\", the suite's first row is \"%s\"", rh, cli ? cli : "?",
             cli_want);

    /* 2: results.json holds the rows bit for bit; merge keeps them and the section. */
    hc_results_doc *d1 = hc_results_in(dir, "out1");
    const hc_results *rs1 = d1 ? hc_results_doc_results(d1) : NULL;
    int same = rs1 && rs1->n_headroom == ROWS && nw == ROWS;
    for (size_t i = 0; same && i < ROWS; i++)
        same = !strcmp(rs1->headroom[i].layer, w[i].layer) && !strcmp(rs1->headroom[i].what, w[i].what) &&
               rs1->headroom[i].value == w[i].value && rs1->headroom[i].margin == w[i].margin &&
               rs1->headroom[i].position == w[i].position && !strcmp(rs1->headroom[i].format, "fp16") &&
               !strcmp(rs1->headroom[i].net, "synth") && !strcmp(rs1->headroom[i].board, "b9");
    hc_check("hsuite-2.1", same, "results.json: %zu headroom rows, not the library's figures bit for bit",
             rs1 ? rs1->n_headroom : 0);
    /* the suite split over two jobs (one backend each), as ci/sweep splits it: each job measures
     * the net x board; the merge keeps its rows once */
    int rm = hc_shf("cd %s && %s run head.yaml --only backend=backend --out outA >outA.log 2>&1 && "
                    "%s run head.yaml --only backend=other --out outB >outB.log 2>&1 && "
                    "%s merge outA outB --out merged >merge.log 2>&1",
                    dir, h, h, h);
    char *msec = section(hc_text(hc_path(dir, "merged/report.md")));
    hc_check("hsuite-2.2", rm == 0 && sec && msec && !strcmp(sec, msec),
             "two jobs merged (exit %d): the merged report.md's Headroom section %s", rm,
             msec ? "differs from the run's" : "is missing");
    hc_results_doc *dm = hc_results_in(dir, "merged");
    hc_check("hsuite-2.3", dm && hc_results_doc_results(dm)->n_headroom == ROWS,
             "merged results.json: %zu headroom rows (want %d)", dm ? hc_results_doc_results(dm)->n_headroom : 0, ROWS);

    /* 3: a bad value is bad input, named by place, before any work. */
    int rb = hc_shf("cd %s && %s run bad.yaml --out out_bad > bad.log 2>&1", dir, h);
    const char *bad = hc_text(hc_path(dir, "bad.log"));
    hc_check("hsuite-3.1", rb == 2 && strstr(bad, "bad.yaml:6:11") && strstr(bad, "fp8"),
             "headroom: fp8: exit %d (want 2), message \"%.200s\" (want bad.yaml:6:11 and fp8)", rb, bad);
    hc_check("hsuite-3.2", !hc_file_exists(hc_path(dir, "out_bad/report.md")), "a report was written for a bad suite");

    /* 4: without the key: no section, no results.json member, the same figures. */
    int r0 = hc_shf("cd %s && %s run plain.yaml --out out0 >out0.log 2>&1", dir, h);
    hc_check("hsuite-4.1", r0 == 0 && !strstr(hc_text(hc_path(dir, "out0/report.md")), "Headroom") &&
                               !strstr(hc_text(hc_path(dir, "out0/results.json")), "\"headroom\""),
             "run without headroom: exit %d, or a Headroom section / \"headroom\" member", r0);
    hc_results_doc *d0 = hc_results_in(dir, "out0");
    char why2[300] = "";
    hc_check("hsuite-4.2", d0 && rs1 && hc_results_doc_results(d0)->n_headroom == 0 &&
                               hc_same_figures(hc_results_doc_results(d0), rs1, why2, sizeof why2),
             "the figures with and without headroom differ: %s", why2);
    hc_results_doc_free(d0);
    hc_results_doc_free(dm);
    hc_results_doc_free(d1);
    free(sec);
    free(msec);
    return hc_test_exit();
}
