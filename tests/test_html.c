/* report.html: a self-contained page (no script, no URL), one CDF plot per metric and net from
 * the quantile sketch, a table row per result, a summary row per net x backend; parsed with
 * libxml2's HTML parser, and, where chromium is installed, rendered headless. The data is made
 * by halfcheck itself (synth-net, selfplay, run) so the test needs nothing outside the repo. */
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "hc_test.h"
#include "reports/html.h"
#include "reports/results.h"
#include "harness/base/stream.h"

static int count(xmlDocPtr doc, const char *xpath)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = ctx ? xmlXPathEvalExpression((const xmlChar *)xpath, ctx) : NULL;
    int n = o && o->nodesetval ? o->nodesetval->nodeNr : -1;
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return n;
}

int main(void)
{
    hc_plan(3 + 4 + 4 + 5 + 9 + 2); /* 1.x results, 2.x quantile sketches, 3.x the page, 4.x-5.x its content, 6.x in a browser */
    const char *hc = hc_halfcheck_bin();
    const char *dir = hc_tmpdir("test_html");
    char cmd[4096], path[1024];
    snprintf(cmd, sizeof cmd,
             "cd %s && rm -rf run && %s synth-net --arch v7 --seed 3 --out net.bin.gz 2>/dev/null && "
             "%s selfplay --size 9 --games 2 --seed 5 --moves 40 --stride 4 --out p9.jsonl.gz 2>/dev/null && "
             "%s selfplay --size 7 --games 2 --seed 6 --moves 30 --stride 4 --out p7.jsonl.gz 2>/dev/null && "
             "printf '%%s\\n' 'name: html-test' 'nets: [{name: synth, model: net.bin.gz}]' 'boards:' "
             "'  - {name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}' "
             "'  - {name: b7, positions: p7.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}' 'backends:' "
             "'  - {name: ref32, backend: ref32, tiers: [fp32]}' '  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16]}' "
             "'  - {name: transposed, backend: \"mutate:policy-transposed:ref32\", tiers: [fp32]}' "
             "'modes: [unbatched]' > suite.yaml && %s run suite.yaml --out run --no-cache --quiet 2>run.log",
             dir, hc[0] == '/' ? hc : "../../../build/halfcheck", hc[0] == '/' ? hc : "../../../build/halfcheck",
             hc[0] == '/' ? hc : "../../../build/halfcheck", hc[0] == '/' ? hc : "../../../build/halfcheck");
    int rc = hc_sh(cmd);
    hc_check("html-1.1", rc == 1, "the run (one backend with a planted bug) exited %d, want 1 (see %s/run.log)", rc, dir);

    hc_err err = {0};
    snprintf(path, sizeof path, "%s/run/results.json", dir);
    hc_results_doc *d = hc_results_read_json(path, &err);
    if (!hc_check("html-1.2", d != NULL, "%s", err.msg))
        return hc_fail_rest("html-1.3", "not run: no results"), hc_test_exit();
    const hc_results *rs = hc_results_doc_results(d);
    hc_check("html-1.3", rs->n == 6, "%zu results, want 2 boards x 3 backends", rs->n);

    /* The quantile sketch the plots draw: ascending, from the min to the max. */
    int mono = 1, ends = 1;
    for (size_t i = 0; i < rs->n; i++) {
        for (int m = 0; m < HC_M_COUNT; m++) {
            const hc_metric_stats *ms = &rs->items[i].stats->m[m];
            for (int k = 1; k < HC_STATS_NQ; k++)
                mono &= ms->q[k] >= ms->q[k - 1];
            ends &= ms->q[HC_STATS_NQ - 1] == ms->v[HC_P_MAX] && ms->q[0] <= ms->v[HC_P_90];
        }
    }
    hc_check("html-2.1", mono, "a quantile sketch is not ascending");
    /* The per-point means behind the heat maps: zero for ref32, policy-only for the transposed
     * policy bug (its ownership equals the reference's). */
    int ok_ref = 1, ok_tr = 1, seen_tr = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_stats *st = rs->items[i].stats;
        double own = 0, pol = 0;
        for (int c = 0; c < st->cells_x * st->cells_y; c++) {
            own = st->own_cell[c] > own ? st->own_cell[c] : own;
            pol = st->pol_cell[c] > pol ? st->pol_cell[c] : pol;
        }
        if (st->cells_x != 9 || st->cells_y != 9)
            ok_ref = 0;
        if (!strcmp(rs->items[i].backend, "ref32"))
            ok_ref &= own == 0 && pol == 0;
        if (!strcmp(rs->items[i].backend, "transposed")) {
            seen_tr = 1;
            ok_tr &= own == 0 && pol > 1e-4;
        }
    }
    hc_check("html-2.3", ok_ref, "ref32's per-point errors are not all zero on a 9x9 buffer");
    hc_check("html-2.4", ok_tr && seen_tr, "the transposed policy's per-point errors are not policy-only");
    hc_check("html-2.2", ends, "a sketch's last quantile is not the max, or its first exceeds the 90%%");

    snprintf(path, sizeof path, "%s/report.html", dir);
    remove(path);
    hc_check("html-3.1", hc_html_write(rs, path, &err) == 0, "%s", err.msg);
    size_t len = 0;
    char *text = hc_read_file(path, 64u << 20, &len, &err);
    if (!hc_check("html-3.2", text && len > 1000, "no page: %s", err.msg)) {
        hc_results_doc_free(d);
        return hc_fail_rest("html-3.3", "not run: no page"), hc_test_exit();
    }
    hc_check("html-3.3", !strstr(text, "http") && !strstr(text, "<script") && !strstr(text, "src=") &&
                             !strstr(text, "<link") && !strstr(text, "url("),
             "the page refers to something outside itself (http, script, src=, link or url()");
    hc_check("html-3.4", strncmp(text, "<!DOCTYPE html>", 15) == 0, "no doctype");

    xmlDocPtr doc = htmlReadMemory(text, (int)len, path, "utf-8", HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET);
    if (hc_check("html-4.1", doc != NULL, "libxml2 could not parse the page")) {
        /* One net: a CDF plot per metric (figure > svg), plus a legend swatch per curve; a model
         * version 7 net has no short-term heads, so those two metrics are a note instead. */
        int plots = count(doc, "//figure[@class='cdf']/svg");
        int empty = count(doc, "//figure[@class='empty']");
        hc_check("html-4.2", plots == HC_M_COUNT - 2 && empty == 2, "%d plots and %d notes, want %d and 2", plots, empty,
                 HC_M_COUNT - 2);
        int curves = count(doc, "//figure[@class='cdf']/svg/polyline");
        hc_check("html-4.3", curves == (int)rs->n * (HC_M_COUNT - 2), "%d curves, want %zu", curves,
                 rs->n * (HC_M_COUNT - 2));
        int swatches = count(doc, "//p[@class='legend']//svg");
        hc_check("html-4.4", swatches == (int)rs->n, "%d legend entries, want %zu", swatches, rs->n);
        /* fp32 and fp16 limits at 99% (dashed) and max (solid) on the winrate plot. */
        int lims = count(doc, "//figure[1]/svg/line[@stroke='#555']");
        hc_check("html-4.5", lims == 4, "%d limit lines on the winrate plot, want 4 (fp32, fp16 x p99, max)", lims);
        /* Tables: a summary row per backend, a row per result; the planted bug fails both of its rows. */
        int summ = count(doc, "//h2[.='Summary across nets']/following-sibling::table[1]/tr[td]");
        hc_check("html-5.1", summ == 3, "%d summary rows, want 3 (one net x three backends)", summ);
        int rows = count(doc, "//h2[starts-with(., 'Net ')]/following-sibling::div[1]/table/tr[td]");
        hc_check("html-5.2", rows == (int)rs->n, "%d result rows, want %zu", rows, rs->n);
        int fails = count(doc, "//tr[@class='fail']");
        hc_check("html-5.3", fails == 3, "%d failing rows, want 3 (two results, one summary)", fails);
        int details = count(doc, "//details/table/tr[td]");
        hc_check("html-5.4", details == (int)rs->n * HC_M_COUNT, "%d metric rows in the details, want %zu", details,
                 rs->n * HC_M_COUNT);
        /* Heat maps: ownership and policy per result, 81 points each, plus a scale per row. */
        int heat = count(doc, "//svg[@class='heat']");
        hc_check("html-5.5", heat == 2 * (int)rs->n, "%d heat maps, want %zu", heat, 2 * rs->n);
        int cells = count(doc, "//svg[@class='heat']/rect[@fill!='none']");
        hc_check("html-5.6", cells == 2 * (int)rs->n * 81, "%d heat map cells, want %zu", cells, 2 * rs->n * 81);
        int white = count(doc, "//svg[@class='heat']/rect[@fill='#ffffff']");
        hc_check("html-5.7", white >= 2 * 2 * 81 && white < cells, "%d of %d cells white: want ref32's all white, some not",
                 white, cells);
        int mv = count(doc, "//h2[.='Net synth (model version 7)']");
        hc_check("html-5.9", mv == 1 && rs->items[0].model_version == 7, "the net's heading does not give model version 7");
        int scales = count(doc, "//svg[@class='scale']");
        hc_check("html-5.8", scales == 2 * (int)rs->n, "%d colour scales, want one per heat map", scales);
        xmlFreeDoc(doc);
    }

    /* The same page in a real browser: its DOM holds every SVG, and a screenshot renders. */
    if (hc_sh("command -v chromium >/dev/null 2>&1") != 0) {
        hc_skip_n("html-6", 2, "chromium is not installed (apt-get install -y chromium); browser checks skipped");
    } else {
        snprintf(cmd, sizeof cmd,
                 "cd %s && timeout 60 chromium --headless --no-sandbox --disable-gpu --window-size=1400,2400 "
                 "--screenshot=page.png \"file://$PWD/report.html\" >chromium.log 2>&1 && "
                 "timeout 60 chromium --headless --no-sandbox --disable-gpu --dump-dom \"file://$PWD/report.html\" "
                 "2>>chromium.log | grep -o '<svg' | wc -l > svgs.txt",
                 dir);
        rc = hc_sh(cmd);
        snprintf(path, sizeof path, "%s/svgs.txt", dir);
        FILE *f = fopen(path, "r");
        int n = -1;
        if (f) {
            if (fscanf(f, "%d", &n) != 1)
                n = -1;
            fclose(f);
        }
        /* the CDF plots, a legend swatch, two heat maps and their scales per result, the boards */
        size_t want = HC_M_COUNT - 2 + 5 * rs->n;
        for (size_t i = 0; i < rs->n; i++)
            want += rs->items[i].n_shown;
        hc_check("html-6.1", rc == 0 && n == (int)want, "chromium exit %d, %d <svg> in its DOM, want %zu", rc, n, want);
        snprintf(path, sizeof path, "%s/page.png", dir);
        f = fopen(path, "rb");
        unsigned char sig[8] = {0};
        int png = f && fread(sig, 1, 8, f) == 8 && memcmp(sig, "\x89PNG", 4) == 0;
        if (f)
            fclose(f);
        hc_check("html-6.2", png, "no screenshot at %s", path);
    }
    free(text);
    hc_results_doc_free(d);
    return hc_test_exit();
}
