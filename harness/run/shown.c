/* The positions report.html draws for a checked result (hc_shown_pos): each replayed to its
 * board, with both outputs' top moves and the ownership difference. */
#include "harness/run/shown.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/files.h"
#include "harness/go/history.h"
#include "harness/metrics/tiers.h"

/* The k most probable moves of an output on an x_size x y_size board (pass included), most
 * probable first. */
static int top_moves(const hc_nnoutput *o, int xs, int ys, hc_shown_move *top, int k)
{
    int n = 0;
    int cells = o->nn_x_len * o->nn_y_len;
    for (int i = -1; i < xs * ys; i++) {
        int x = i < 0 ? -1 : i % xs, y = i < 0 ? -1 : i / xs;
        double p = i < 0 ? o->policy_probs[cells] : o->policy_probs[y * o->nn_x_len + x];
        if (!(p >= 0))
            continue; /* illegal, or NaN */
        int j = n < k ? n++ : k;
        if (j == k && !(p > top[k - 1].prob))
            continue;
        if (j == k)
            j = k - 1;
        while (j > 0 && top[j - 1].prob < p) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = (hc_shown_move){x, y, p};
    }
    return n;
}

/* The command that evaluates position i alone: its record cut out of the positions file, then
 * halfcheck eval with the case's net, buffer, settings and backend. "" for an SGF board. */
static void position_rerun(const hc_shown_case *sc, const hc_position *p, char *out, size_t len)
{
    const hc_suite *s = sc->suite;
    const hc_case *c = sc->c;
    const char *spec = sc->spec;
    const hc_board_cfg *b = &c->settings;
    out[0] = '\0';
    if (!s->boards[c->board].positions || p->file_line <= 0)
        return;
    char pos[1100], net[1100], sp[2100], extra[200] = "";
    hc_shell_word(pos, sizeof pos, s->boards[c->board].positions);
    hc_shell_word(net, sizeof net, s->nets[c->net].model);
    hc_shell_word(sp, sizeof sp, spec);
    if (b->policy_optimism != 0 || b->pda != 0 || b->policy_temperature != 1)
        snprintf(extra, sizeof extra, " --policy-optimism %.17g --pda %.17g --temperature %.17g", b->policy_optimism,
                 b->pda, b->policy_temperature);
    int w = snprintf(out, len,
                     "gzip -cdf %s | sed -n '%ldp' > pos%ld.jsonl && halfcheck eval --net %s --positions pos%ld.jsonl "
                     "--nn %dx%d --backend %s%s --out pos%ld-out.jsonl",
                     pos, p->file_line, p->index, net, p->index, b->nn_x_len, b->nn_y_len, sp, extra, p->index);
    if (w < 0 || (size_t)w >= len)
        out[0] = '\0'; /* a truncated command would not run: show none */
}

/* Fills one shown position from position i of the case; -1 when its replay fails (then the
 * report shows nothing for it rather than a wrong board). */
static int shown_fill(const hc_shown_case *sc, const hc_position *p, const hc_nnoutput *ref,
                      const hc_nnoutput *test, hc_shown_pos *sp)
{
    if (p->x_size * p->y_size > HC_SHOW_CELLS)
        return -1;
    hc_err err = {0};
    hc_history *h = hc_history_from_position(p, &err);
    if (!h)
        return -1;
    const hc_board *bd = hc_history_board(h);
    sp->index = p->index;
    sp->file_line = p->file_line;
    sp->x_size = p->x_size;
    sp->y_size = p->y_size;
    for (int y = 0; y < p->y_size; y++)
        for (int x = 0; x < p->x_size; x++) {
            int col = bd->colors[(x + 1) + (y + 1) * (p->x_size + 1)];
            sp->stones[y * p->x_size + x] = col == HC_BLACK ? 'X' : col == HC_WHITE ? 'O' : '.';
        }
    sp->stones[p->x_size * p->y_size] = '\0';
    sp->next_pla = hc_history_next_pla(h);
    hc_history_free(h);
    sp->last_pla = 0;
    sp->last_x = sp->last_y = -1;
    if (p->n_moves > 0) {
        const hc_move *m = &p->moves[p->n_moves - 1];
        sp->last_pla = m->pla;
        sp->last_x = m->x;
        sp->last_y = m->y;
    }
    snprintf(sp->rules, sizeof sp->rules, "%s", p->rules);
    sp->komi = p->komi;
    sp->symmetry = p->symmetry;
    int a = top_moves(ref, p->x_size, p->y_size, sp->ref_top, HC_SHOW_TOP);
    int b = top_moves(test, p->x_size, p->y_size, sp->test_top, HC_SHOW_TOP);
    sp->n_top = a < b ? a : b;
    sp->has_own = ref->white_owner_map && test->white_owner_map;
    for (int y = 0; sp->has_own && y < p->y_size; y++)
        for (int x = 0; x < p->x_size; x++)
            sp->own_diff[y * p->x_size + x] =
                test->white_owner_map[y * test->nn_x_len + x] - ref->white_owner_map[y * ref->nn_x_len + x];
    position_rerun(sc, p, sp->rerun_position, sizeof sp->rerun_position);
    snprintf(sp->rerun_case, sizeof sp->rerun_case, "%s", sc->rerun_case ? sc->rerun_case : "");
    return 0;
}

/* A buffer cell (y*nn_x_len+x) as a board point (x + y*x_size); -1 off the board. */
static int board_cell(int cell, int nn_x_len, const hc_position *p)
{
    if (cell < 0 || nn_x_len <= 0)
        return -1;
    int x = cell % nn_x_len, y = cell / nn_x_len;
    return x < p->x_size && y < p->y_size ? y * p->x_size + x : -1;
}

typedef struct ranked {
    double e;
    size_t pos;
    int cell;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    double x = ((const ranked *)a)->e, y = ((const ranked *)b)->e;
    /* non-finite errors sort last, as the statistics sort them */
    int fx = isfinite(x), fy = isfinite(y);
    if (fx != fy)
        return fx ? -1 : 1;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* The sample at percentile pct of metric m, with its position (and cell for ownership), ranked
 * as the statistics rank them; 0, or -1 when it cannot be found. */
static int pct_sample(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, const unsigned char *skip, int m,
                      int pct, ranked *out)
{
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        if (!skip || !skip[i])
            cap += m == HC_M_OWNERSHIP ? (size_t)ref[i].nn_x_len * (size_t)ref[i].nn_y_len : 1;
    if (cap == 0)
        return -1;
    ranked *r = malloc(cap * sizeof *r);
    if (!r)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        if (m == HC_M_OWNERSHIP) {
            int cells = ref[i].nn_x_len * ref[i].nn_y_len;
            for (int j = 0; j < cells && k < cap; j++)
                r[k++] = (ranked){ref[i].white_owner_map && test[i].white_owner_map
                                      ? fabs((double)(test[i].white_owner_map[j] - ref[i].white_owner_map[j]))
                                      : 0,
                                  i, j};
        } else {
            double e[HC_M_COUNT];
            hc_stats_position(&ref[i], &test[i], e);
            r[k++] = (ranked){e[m], i, -1};
        }
    }
    qsort(r, k, sizeof *r, ranked_cmp);
    unsigned num = pct == HC_P_90 ? 9 : 99, den = pct == HC_P_90 ? 10 : 100;
    *out = r[hc_stats_pct_index(k, num, den)];
    free(r);
    return 0;
}

/* The positions a checked result shows: the worst position of the metric that failed first (or,
 * when every tier passed, of the closest margin), and for a failing percentile (p90, p99) the
 * position holding that percentile's sample. Malloc'd array in *out; 0 entries on any trouble,
 * which only leaves the report without a board. */
size_t hc_shown_capture(const hc_shown_case *sc, const hc_position *ps, size_t n, const hc_nnoutput *ref,
                        const hc_nnoutput *outs, const unsigned char *skip, const hc_stats *st, hc_shown_pos **out)
{
    const hc_case *c = sc->c;
    *out = NULL;
    int metric = -1, pct = -1, close_metric = -1;
    for (size_t t = 0; t < c->n_tiers; t++) {
        hc_tier_check ck;
        hc_tier_check_stats(&sc->suite->tiers[c->tiers[t]], st, &ck);
        if (metric < 0 && ck.first_fail_metric >= 0) {
            metric = ck.first_fail_metric;
            pct = ck.first_fail_pct;
        }
        if (close_metric < 0)
            close_metric = ck.worst_all_metric;
    }
    int worst = metric >= 0 ? metric : close_metric >= 0 ? close_metric : HC_M_WINRATE;
    hc_shown_pos *sp = calloc(HC_SHOW_MAX, sizeof *sp);
    if (!sp)
        return 0;
    size_t k = 0;
    const hc_metric_stats *ms = &st->m[worst];
    if (ms->max_pos < n) {
        size_t i = ms->max_pos;
        sp[k].metric = worst;
        sp[k].pct = HC_P_MAX;
        sp[k].error = ms->v[HC_P_MAX];
        sp[k].cell = -1;
        if (worst == HC_M_OWNERSHIP)
            sp[k].cell = board_cell(ms->max_cell, ref[i].nn_x_len, &ps[i]);
        if (shown_fill(sc, &ps[i], &ref[i], &outs[i], &sp[k]) == 0)
            k++;
    }
    ranked r;
    if (metric >= 0 && (pct == HC_P_90 || pct == HC_P_99) && pct_sample(ref, outs, n, skip, metric, pct, &r) == 0) {
        size_t i = r.pos;
        memset(&sp[k], 0, sizeof sp[k]);
        sp[k].metric = metric;
        sp[k].pct = pct;
        sp[k].error = r.e;
        sp[k].cell = board_cell(r.cell, ref[i].nn_x_len, &ps[i]);
        if (shown_fill(sc, &ps[i], &ref[i], &outs[i], &sp[k]) == 0)
            k++;
    }
    if (k == 0) {
        free(sp);
        return 0;
    }
    *out = sp;
    return k;
}
