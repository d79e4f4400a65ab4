/* report.html's positions (issue 23 item 5): a run with a failing case draws the worst position
 * (and the failing percentile's) as an SVG Go board whose stones match a replay of the record,
 * with both top moves, rules, komi, symmetry and rerun commands that run; results.json keeps
 * those positions (round trip, old files still load); each heat map states its scale; tier
 * labels never overlap; plots without data say why. */
#include <jansson.h>
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/go/history.h"
#include "reports/html.h"
#include "harness/data/positions.h"
#include "reports/results.h"

static xmlXPathObjectPtr query(xmlDocPtr doc, const char *xpath)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = ctx ? xmlXPathEvalExpression((const xmlChar *)xpath, ctx) : NULL;
    xmlXPathFreeContext(ctx);
    return o;
}

static int count_in(xmlDocPtr doc, xmlNodePtr node, const char *xpath)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    if (!ctx)
        return -1;
    ctx->node = node;
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)xpath, ctx);
    int n = o && o->nodesetval ? o->nodesetval->nodeNr : -1;
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return n;
}

static void point_name(int x, int y, int ys, char *buf, size_t len)
{
    if (x < 0)
        snprintf(buf, len, "pass");
    else
        snprintf(buf, len, "%c%d", "ABCDEFGHJKLMNOPQRST"[x], ys - y);
}

int main(void)
{
    hc_plan(3 + 7 + 3 + 4); /* 1.x the run, 2.x the boards and commands, 3.x results.json, 4.x the plots */
    const char *hc = hc_halfcheck_bin();
    const char *dir = hc_tmpdir("test_html_board");
    char path[1024];
    /* fp16 checked against two tiers puts close limits on one plot; the transposed policy fails. */
    int rc = hc_shf("cd %s && rm -rf run && %s synth-net --arch v7 --seed 4 --out net.bin.gz 2>/dev/null && "
                    "%s selfplay --size 9 --games 3 --seed 8 --moves 40 --stride 4 --out p9.jsonl.gz 2>/dev/null && "
                    "printf '%%s\\n' 'name: board-test' 'nets: [{name: synth, model: net.bin.gz}]' 'boards:' "
                    "'  - {name: b9, positions: p9.jsonl.gz, nnBuffer: 9x9, maxBatchSize: 4}' 'backends:' "
                    "'  - {name: fp16, backend: \"emulate:fp16\", tiers: [fp16, fp32]}' "
                    "'  - {name: transposed, backend: \"mutate:policy-transposed:ref32\", tiers: [fp32]}' "
                    "'modes: [unbatched]' > suite.yaml && %s run suite.yaml --out run --no-cache --quiet 2>run.log",
                    dir, hc, hc, hc);
    hc_check("htmlboard-1.1", rc == 1, "the run exited %d, want 1 (see %s/run.log)", rc, dir);
    hc_err err = {0};
    snprintf(path, sizeof path, "%s/run/results.json", dir);
    hc_results_doc *d = hc_results_read_json(path, &err);
    if (!hc_check("htmlboard-1.2", d != NULL, "%s", err.msg)) {
        hc_skip_rest("htmlboard", "no results");
        return hc_test_exit();
    }
    const hc_results *rs = hc_results_doc_results(d);
    const hc_result *bad = NULL;
    size_t n_shown = 0;
    for (size_t i = 0; i < rs->n; i++) {
        n_shown += rs->items[i].n_shown;
        if (!strcmp(rs->items[i].backend, "transposed"))
            bad = &rs->items[i];
    }
    int want2 = bad && bad->checks && (bad->checks[0].first_fail_pct == HC_P_90 || bad->checks[0].first_fail_pct == HC_P_99);
    hc_check("htmlboard-1.3", bad && bad->n_shown == (size_t)(want2 ? 2 : 1) && n_shown == bad->n_shown + 1,
             "%zu positions shown for the failing case (want %d), %zu in all", bad ? bad->n_shown : 0, want2 ? 2 : 1,
             n_shown);

    /* Every board against a replay of its record. */
    hc_position *ps = NULL;
    size_t np = 0;
    snprintf(path, sizeof path, "%s/p9.jsonl.gz", dir);
    int loaded = hc_positions_load(path, &ps, &np, &err) == 0;
    snprintf(path, sizeof path, "%s/run/report.html", dir);
    size_t len = 0;
    char *text = hc_slurp_len(path, &len);
    xmlDocPtr doc = text ? htmlReadMemory(text, (int)len, path, "utf-8",
                                          HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET)
                         : NULL;
    if (!hc_check("htmlboard-2.0", doc && loaded, "page %s, positions %s", doc ? "parsed" : "unreadable", err.msg)) {
        hc_skip_rest("htmlboard", "no page or positions");
        return hc_test_exit();
    }
    xmlXPathObjectPtr boards = query(doc, "//svg[@class='board']");
    int nb = boards && boards->nodesetval ? boards->nodesetval->nodeNr : 0;
    int stones_ok = nb == (int)n_shown, text_ok = 1, cap_ok = 1, k = 0;
    char why[300] = "";
    for (size_t i = 0; i < rs->n && stones_ok; i++)
        for (size_t j = 0; j < rs->items[i].n_shown && k < nb; j++, k++) {
            const hc_shown_pos *sp = &rs->items[i].shown[j];
            hc_history *h = sp->index >= 0 && (size_t)sp->index < np ? hc_history_from_position(&ps[sp->index], &err)
                                                                         : NULL;
            int stones = 0, same = h != NULL;
            for (int y = 0; h && y < 9; y++)
                for (int x = 0; x < 9; x++) {
                    int c = hc_history_board(h)->colors[(x + 1) + (y + 1) * 10];
                    stones += c != 0;
                    same &= sp->stones[y * 9 + x] == (c == 1 ? 'X' : c == 2 ? 'O' : '.');
                }
            hc_history_free(h);
            xmlNodePtr svg = boards->nodesetval->nodeTab[k];
            int drawn = count_in(doc, svg, ".//*[local-name()='circle'][contains(@class,'stone')]");
            if (!same || drawn != stones) {
                stones_ok = 0;
                snprintf(why, sizeof why, "board %d (position %ld): %d stones drawn, %d after the replay, record %s", k,
                         sp->index, drawn, stones, same ? "matches" : "differs");
            }
            /* the caption: both top moves, rules, komi, symmetry, the commands */
            char want[512], nm[16];
            const hc_shown_move *m[2] = {&sp->ref_top[0], &sp->test_top[0]};
            for (int w = 0; w < 2; w++) {
                point_name(m[w]->x, m[w]->y, sp->y_size, nm, sizeof nm);
                snprintf(want, sizeof want, "1. %s %.1f%%", nm, 100 * m[w]->prob);
                if (!strstr(text, want)) {
                    cap_ok = 0;
                    snprintf(why, sizeof why, "no \"%s\"", want);
                }
            }
            snprintf(want, sizeof want, "rules <code>%s</code>, komi %g, symmetry %d", ps[sp->index].rules,
                     ps[sp->index].komi, ps[sp->index].symmetry);
            text_ok &= strstr(text, want) != NULL && !strcmp(sp->rules, ps[sp->index].rules) &&
                       sp->komi == ps[sp->index].komi && sp->symmetry == ps[sp->index].symmetry;
        }
    hc_check("htmlboard-2.1", stones_ok, "%d boards for %zu shown positions; %s", nb, n_shown, why);
    hc_check("htmlboard-2.2", cap_ok && bad && bad->n_shown && strstr(text, "Backend transposed top moves"), "%s", why);
    hc_check("htmlboard-2.3", text_ok, "rules, komi or symmetry missing from a caption or wrong");
    int rings = count_in(doc, xmlDocGetRootElement(doc), "//svg[@class='board']/*[local-name()='circle'][@class='last']");
    int want_rings = 0;
    for (size_t i = 0; i < rs->n; i++)
        for (size_t j = 0; j < rs->items[i].n_shown; j++)
            want_rings += rs->items[i].shown[j].last_pla && rs->items[i].shown[j].last_x >= 0;
    hc_check("htmlboard-2.4", rings == want_rings && want_rings > 0, "%d last-move rings, want %d", rings, want_rings);
    xmlXPathFreeObject(boards);

    /* The commands shown run: the case again (it fails again: exit 1), and the one position,
     * whose output is the backend's: its top move has the probability the board shows. */
    int case_rc = -1, pos_rc = -1, top_ok = 0;
    if (bad && bad->n_shown) {
        const hc_shown_pos *sp = &bad->shown[0];
        const char *c1 = strstr(sp->rerun_case, "halfcheck ");
        const char *c2 = strstr(sp->rerun_position, "halfcheck ");
        if (c1 && c2) {
            case_rc = hc_shf("cd %s && %.*s%s %s --out rerun --no-cache --quiet >/dev/null 2>&1", dir,
                             (int)(c1 - sp->rerun_case), sp->rerun_case, hc, c1 + strlen("halfcheck "));
            pos_rc = hc_shf("cd %s && rm -f pos*.jsonl && %.*s%s %s 2>/dev/null", dir,
                            (int)(c2 - sp->rerun_position), sp->rerun_position, hc, c2 + strlen("halfcheck "));
            hc_nnoutput *o = NULL;
            size_t no = 0;
            snprintf(path, sizeof path, "%s/pos%ld-out.jsonl", dir, sp->index);
            if (pos_rc == 0 && hc_nnoutputs_load(path, &o, &no, &err) == 0 && no == 1) {
                const hc_shown_move *t = &sp->test_top[0];
                double p = t->x < 0 ? o[0].policy_probs[81] : o[0].policy_probs[t->y * 9 + t->x];
                top_ok = p == t->prob;
            }
            for (size_t i = 0; i < no; i++)
                hc_nnoutput_free(&o[i]);
            free(o);
        }
    }
    hc_check("htmlboard-2.5", case_rc == 1, "the case rerun exited %d, want 1", case_rc);
    hc_check("htmlboard-2.6", pos_rc == 0 && top_ok, "the position rerun exited %d; top move probability %s", pos_rc,
             top_ok ? "as shown" : "differs or unread");

    /* results.json: what was read writes the same bytes; a file without the positions (written
     * before they existed) loads with none; a broken one is refused by field. */
    snprintf(path, sizeof path, "%s/again.json", dir);
    int wrote = hc_results_write_json(rs, path, &err) == 0;
    char a[1024];
    snprintf(a, sizeof a, "%s/run/results.json", dir);
    hc_check("htmlboard-3.1", wrote && hc_shf("cmp -s %s %s", a, path) == 0, "round trip differs: %s", err.msg);
    json_error_t je;
    json_t *root = json_load_file(a, 0, &je);
    json_t *items = json_object_get(root, "results");
    for (size_t i = 0; i < json_array_size(items); i++)
        json_object_del(json_array_get(items, i), "shownPositions");
    char *old = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    hc_results_doc *od = old ? hc_results_parse_json(old, strlen(old), "old.json", &err) : NULL;
    size_t old_shown = 0;
    for (size_t i = 0; od && i < hc_results_doc_results(od)->n; i++)
        old_shown += hc_results_doc_results(od)->items[i].n_shown;
    snprintf(path, sizeof path, "%s/old.html", dir);
    hc_check("htmlboard-3.2", od && old_shown == 0 && hc_html_write(hc_results_doc_results(od), path, &err) == 0 &&
                              !strstr(hc_text(path), "class=\"board\""),
             "an old results.json: %s", err.msg);
    hc_results_doc_free(od);
    free(old);
    json_t *sp0 = NULL;
    json_decref(root);
    root = json_load_file(a, 0, &je);
    items = json_object_get(root, "results");
    sp0 = NULL;
    for (size_t i = 0; i < json_array_size(items) && !sp0; i++)
        sp0 = json_array_get(json_object_get(json_array_get(items, i), "shownPositions"), 0);
    if (sp0)
        json_array_set_new(json_object_get(sp0, "stones"), 0, json_string("XO"));
    char *broken = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    hc_err berr = {0};
    hc_results_doc *bd = broken ? hc_results_parse_json(broken, strlen(broken), "broken.json", &berr) : NULL;
    hc_check("htmlboard-3.3", sp0 && !bd && strstr(berr.msg, "shownPositions[0].stones"), "broken stones: %s",
             bd ? "accepted" : berr.msg);
    hc_results_doc_free(bd);
    free(broken);
    json_decref(root);

    /* The plots: each heat map states its own scale; no two limit labels of a plot overlap;
     * the short-term plots of a version 7 net (no such heads) say so; axes in the tables' units. */
    int maps = 0, titled = 0;
    xmlXPathObjectPtr sc = query(doc, "//svg[@class='scale']/title");
    titled = sc && sc->nodesetval ? sc->nodesetval->nodeNr : 0;
    for (int i = 0; i < titled; i++) {
        xmlChar *t = xmlNodeGetContent(sc->nodesetval->nodeTab[i]);
        maps += t && strstr((const char *)t, "linear colour scale from 0 to ") != NULL;
        xmlFree(t);
    }
    xmlXPathFreeObject(sc);
    int heat = count_in(doc, xmlDocGetRootElement(doc), "//svg[@class='heat']");
    hc_check("htmlboard-4.1", heat > 0 && maps == heat, "%d heat maps, %d with a stated scale", heat, maps);
    xmlXPathObjectPtr plots = query(doc, "//figure[@class='cdf']/svg");
    int np2 = plots && plots->nodesetval ? plots->nodesetval->nodeNr : 0, overlap = 0, labels = 0;
    for (int i = 0; i < np2; i++) {
        xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
        ctx->node = plots->nodesetval->nodeTab[i];
        xmlXPathObjectPtr l = xmlXPathEvalExpression((const xmlChar *)".//*[@class='lim']", ctx);
        int nl = l && l->nodesetval ? l->nodesetval->nodeNr : 0;
        double xs[64];
        for (int j = 0; j < nl && j < 64; j++) {
            xmlChar *x = xmlGetProp(l->nodesetval->nodeTab[j], (const xmlChar *)"x");
            xs[j] = x ? atof((const char *)x) : NAN;
            xmlFree(x);
            for (int q = 0; q < j; q++)
                overlap += !(fabs(xs[j] - xs[q]) >= 10.0); /* a 9px font's line: 10px apart at least */
        }
        labels += nl;
        xmlXPathFreeObject(l);
        xmlXPathFreeContext(ctx);
    }
    xmlXPathFreeObject(plots);
    hc_check("htmlboard-4.2", labels >= 4 && overlap == 0, "%d limit labels on %d plots, %d overlapping pairs", labels, np2,
             overlap);
    int empty = count_in(doc, xmlDocGetRootElement(doc), "//figure[@class='empty']");
    hc_check("htmlboard-4.3", empty == 2 && strstr(text, "has no short-term error heads"), "%d plots explained, want 2",
             empty);
    hc_check("htmlboard-4.4", strstr(text, "text-anchor=\"middle\">1%</text>") && strstr(text, "error in % (log"),
             "the winrate axis is not in %%");
    xmlFreeDoc(doc);
    free(text);
    hc_positions_free(ps, np);
    hc_results_doc_free(d);
    return hc_test_exit();
}
