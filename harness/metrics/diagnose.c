/* Names the outputs of a failing case that belong to another position (diagnose.h). */
#include "harness/metrics/diagnose.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/strbuf.h"

const char *const hc_diag_kind_names[HC_DIAG_COUNT] = {"swapped", "stale", "foreign", "legal"};

/* Below this distance to its own reference a position is not examined: an honest reduced
 * precision error is far smaller (fp16 builds stay under 0.01 on the shared nets), and no
 * other position's reference can be much closer than its own. */
#define FAR_FROM_OWN 0.02
/* A match must be this much closer than the own reference, and this close in absolute terms:
 * another position's outputs reproduce its reference up to the backend's own error (exactly,
 * up to the printed digits, for the planted bugs). Unrelated positions of a small board in a
 * larger buffer come within 0.04 to 0.1 of each other at some frame (the shared net's
 * mutations on the rectangular set), so the bound stays below that. */
#define MUCH_CLOSER 4.0
#define CLOSE_ENOUGH 0.02
/* The scalar heads alone: eight figures within this of another position's, and this much
 * closer than to the own reference's (fp16 moves them by about 1e-3). */
#define SCALARS_CLOSE 0.005
#define SCALARS_MUCH_CLOSER 20.0
/* A reference that more positions than this match is not reported (a constant output is not
 * another position's). */
#define MAX_CLAIMS 2

/* sign -1 reads b from the other player's side (white's win and loss exchanged, lead and
 * ownership negated): a tensor backend's row post-processed for a position with the other
 * player to move. */
static double scalar_dist(const hc_nnoutput *a, const hc_nnoutput *b, double sign)
{
    double wl_a = 0.5 * ((double)a->white_win_prob - (double)a->white_loss_prob);
    double wl_b = sign * 0.5 * ((double)b->white_win_prob - (double)b->white_loss_prob);
    double lead = fabs((double)a->white_lead - sign * (double)b->white_lead) / 10.0;
    return fabs(wl_a - wl_b) + fabs((double)a->white_no_result_prob - (double)b->white_no_result_prob) +
           (lead < 1 ? lead : 1);
}

static double capped(double x) { return x < 1 ? x : 1; }

/* Every scalar head (winrate, no result, lead, score mean and stdev, the short-term errors,
 * the time left; scores over 10, each at most 1), b read from sign's side: a row's values do
 * not depend on the frame its policy and ownership were put in. */
static double scalars_dist(const hc_nnoutput *a, const hc_nnoutput *b, double sign)
{
    double va = (double)a->white_score_mean_sq - (double)a->white_score_mean * a->white_score_mean;
    double vb = (double)b->white_score_mean_sq - (double)b->white_score_mean * b->white_score_mean;
    double d = scalar_dist(a, b, sign) +
               capped(fabs((double)a->white_score_mean - sign * (double)b->white_score_mean) / 10.0) +
               capped(fabs(sqrt(va > 0 ? va : 0) - sqrt(vb > 0 ? vb : 0)) / 10.0) +
               fabs((double)a->shortterm_winloss_error - (double)b->shortterm_winloss_error) +
               capped(fabs((double)a->shortterm_score_error - (double)b->shortterm_score_error) / 10.0) +
               capped(fabs((double)a->var_time_left - (double)b->var_time_left) / 10.0);
    return isfinite(d) ? d : 8.0;
}

/* Cell c of an nx x ny buffer under dihedral transform g (bit 2 transposes, square buffers
 * only; bits 0 and 1 flip x and y); the pass (c == nx*ny) stays. */
static int map_cell(int g, int nx, int ny, int c)
{
    if (c >= nx * ny)
        return c;
    int x = c % nx, y = c / nx;
    if ((g & 4) && nx == ny) {
        int t = x;
        x = y;
        y = t;
    }
    if (g & 1)
        x = nx - 1 - x;
    if (g & 2)
        y = ny - 1 - y;
    return y * nx + x;
}

/* The policy and ownership part of the distance with b's planes read through transform g. */
static double planes_dist(const hc_nnoutput *a, const hc_nnoutput *b, int g, double sign)
{
    int nx = a->nn_x_len, ny = a->nn_y_len, cells = nx * ny;
    /* The policies over the moves legal in both, each renormalised there: a backend that applies
     * the position's own legal mask to another position's logits gives that position's policy
     * restricted to the common moves. A legal-mask mismatch is counted apart (legal_*). */
    double sa = 0, sb = 0;
    for (int c = 0; c <= cells; c++) {
        float pa = a->policy_probs[c], pb = b->policy_probs[map_cell(g, nx, ny, c)];
        if (pa >= 0 && pb >= 0) {
            sa += pa;
            sb += pb;
        }
    }
    double tv = 0;
    if (sa > 0 && sb > 0) {
        for (int c = 0; c <= cells; c++) {
            float pa = a->policy_probs[c], pb = b->policy_probs[map_cell(g, nx, ny, c)];
            if (pa >= 0 && pb >= 0)
                tv += fabs((double)pa / sa - (double)pb / sb);
        }
        tv *= 0.5;
    } else {
        tv = 1;
    }
    double own = 0;
    if (a->white_owner_map && b->white_owner_map && cells > 0) {
        for (int c = 0; c < cells; c++)
            own += fabs((double)a->white_owner_map[c] - sign * (double)b->white_owner_map[map_cell(g, nx, ny, c)]);
        own = 0.5 * own / cells;
    }
    double d = tv + own;
    return isfinite(d) ? d : 3.0;
}

double hc_diag_distance(const hc_nnoutput *a, const hc_nnoutput *b)
{
    double d = scalar_dist(a, b, 1);
    return (isfinite(d) ? d : 1.0) + planes_dist(a, b, 0, 1);
}

/* hc_diag_distance at the closest of the eight symmetries (four on a rectangular buffer) and
 * of the two players' sides: a tensor backend's row post-processed as another row holds that
 * row's policy and ownership in another frame, and its values from the other side when the
 * other player is to move. */
static double distance_any_frame(const hc_nnoutput *a, const hc_nnoutput *b)
{
    double best = 4;
    int n = a->nn_x_len == a->nn_y_len ? 8 : 4;
    for (int k = 0; k < 2; k++) {
        double sign = k ? -1 : 1, s = scalar_dist(a, b, sign);
        s = isfinite(s) ? s : 1.0;
        for (int g = 0; g < n && s < best; g++) {
            double d = s + planes_dist(a, b, g, sign);
            best = d < best ? d : best;
        }
    }
    return best;
}

static void legal_diff(const hc_nnoutput *ref, const hc_nnoutput *test, int *missing, int *extra)
{
    int cells = ref->nn_x_len * ref->nn_y_len;
    *missing = *extra = 0;
    for (int c = 0; c <= cells; c++) {
        int lr = ref->policy_probs[c] >= 0, lt = test->policy_probs[c] >= 0;
        *missing += lr && !lt;
        *extra += !lr && lt;
    }
}

static int same_buffer(const hc_nnoutput *a, const hc_nnoutput *b)
{
    return a->nn_x_len == b->nn_x_len && a->nn_y_len == b->nn_y_len && a->policy_probs && b->policy_probs;
}

typedef struct match {
    size_t other;     /* SIZE_MAX: none */
    double own, dist;
    double own_scalars; /* scalars_dist to the own reference */
    double own_frame; /* own reference at its closest frame: a match must beat it too */
    int missing, extra;
} match;

/* The best other reference for test[i] among candidates j (in_group: only j of i's batch). */
static void best_match(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, const hc_diag_opts *o,
                       const size_t *rank, size_t i, int in_group, match *m)
{
    size_t batch = o->batch > 1 ? o->batch : 1;
    /* The own outputs in another frame (a symmetry not inverted, the other player's side) are
     * still the own position's: another position must be closer than those too. */
    double own = m->own_frame < m->own ? m->own_frame : m->own;
    double bound = own / MUCH_CLOSER < CLOSE_ENOUGH ? own / MUCH_CLOSER : CLOSE_ENOUGH;
    size_t lo = 0, hi = n;
    if (in_group) {
        /* The group's positions are order[g*batch .. (g+1)*batch). */
        size_t g = rank[i] / batch;
        lo = g * batch;
        hi = lo + batch < n ? lo + batch : n;
    }
    for (size_t k = lo; k < hi; k++) {
        size_t j = in_group ? (o->order ? o->order[k] : k) : k;
        if (j == i || (o->skip && o->skip[j]) || !same_buffer(&ref[j], &test[i]))
            continue;
        if (!in_group && rank[j] / batch == rank[i] / batch)
            continue; /* seen in the group pass */
        double pre = bound > SCALARS_CLOSE ? bound : SCALARS_CLOSE;
        if (!(scalar_dist(&ref[j], &test[i], 1) <= pre) && !(scalar_dist(&ref[j], &test[i], -1) <= pre))
            continue;
        double d = distance_any_frame(&ref[j], &test[i]);
        if (!(d < bound)) {
            /* A row post-processed as a position of another board size or placement has its
             * policy and ownership where no frame of the buffer puts them back; every scalar
             * head still matching (to within SCALARS_CLOSE, far closer than the own) names it. */
            double sd = scalars_dist(&ref[j], &test[i], 1), sd2 = scalars_dist(&ref[j], &test[i], -1);
            sd = sd2 < sd ? sd2 : sd;
            d = sd <= SCALARS_CLOSE && sd * SCALARS_MUCH_CLOSER < m->own_scalars ? sd : INFINITY;
        }
        if (!(d < INFINITY))
            continue;
        if (m->other != SIZE_MAX && d == m->dist) {
            /* Identical references (one position in several games): the one whose outputs
             * are i's is the partner of a swap. */
            if (distance_any_frame(&ref[i], &test[j]) < distance_any_frame(&ref[i], &test[m->other]))
                m->other = j;
        } else if (m->other == SIZE_MAX || d < m->dist) {
            m->other = j;
            m->dist = d;
        }
    }
}

int hc_diagnose(const hc_nnoutput *ref, const hc_nnoutput *test, size_t n, const hc_diag_opts *o,
                hc_diag_finding **out, size_t *n_out, hc_err *err)
{
    static const hc_diag_opts none = {0};
    if (!o)
        o = &none;
    *out = NULL;
    *n_out = 0;
    if (n == 0)
        return 0;
    size_t *rank = hc_malloc(sizeof(size_t) * n, err, "diagnosis ranks");
    match *ms = hc_malloc(sizeof(match) * n, err, "diagnosis matches");
    size_t *claims = calloc(n, sizeof(size_t));
    if (!rank || !ms || !claims) {
        free(rank);
        free(ms);
        free(claims);
        return hc_err_set(err, HC_ENOMEM, "out of memory for the diagnosis");
    }
    for (size_t k = 0; k < n; k++)
        rank[o->order ? o->order[k] : k] = k;
    for (size_t i = 0; i < n; i++) {
        match *m = &ms[i];
        m->other = SIZE_MAX;
        m->own = 0;
        m->missing = m->extra = 0;
        m->own_frame = 4;
        if ((o->skip && o->skip[i]) || !same_buffer(&ref[i], &test[i]))
            continue;
        legal_diff(&ref[i], &test[i], &m->missing, &m->extra);
        m->own = hc_diag_distance(&ref[i], &test[i]);
        if (!(m->own > FAR_FROM_OWN))
            continue;
        m->own_frame = distance_any_frame(&ref[i], &test[i]);
        m->own_scalars = scalars_dist(&ref[i], &test[i], 1);
        best_match(ref, test, n, o, rank, i, 1, m);
        if (m->other == SIZE_MAX)
            best_match(ref, test, n, o, rank, i, 0, m);
        if (m->other != SIZE_MAX)
            claims[m->other]++;
    }
    size_t cap = o->max_findings ? o->max_findings : 64, cnt = 0;
    hc_diag_finding *f = calloc(cap, sizeof *f);
    if (!f) {
        free(rank);
        free(ms);
        free(claims);
        return hc_err_set(err, HC_ENOMEM, "out of memory for the diagnosis");
    }
    size_t batch = o->batch > 1 ? o->batch : 1;
    for (size_t i = 0; i < n && cnt < cap; i++) {
        const match *m = &ms[i];
        size_t j = m->other;
        hc_diag_finding d = {.pos = i, .other = i, .legal_missing = m->missing, .legal_extra = m->extra,
                             .own_dist = m->own, .other_dist = m->own};
        if (j != SIZE_MAX && claims[j] <= MAX_CLAIMS) {
            if (ms[j].other == i && j < i)
                continue; /* the pair was reported at j */
            d.other = j;
            d.other_dist = m->dist;
            d.same_batch = rank[j] / batch == rank[i] / batch;
            d.kind = ms[j].other == i ? HC_DIAG_SWAPPED : rank[j] < rank[i] ? HC_DIAG_STALE : HC_DIAG_FOREIGN;
        } else if (m->missing || m->extra) {
            d.kind = HC_DIAG_LEGAL;
        } else {
            continue;
        }
        f[cnt++] = d;
    }
    free(rank);
    free(ms);
    free(claims);
    if (cnt == 0)
        free(f);
    else {
        *out = f;
        *n_out = cnt;
    }
    return 0;
}

const char *hc_diag_finding_text(const hc_diag_finding *f, char *buf, size_t len)
{
    /* "In a batch" only when halfcheck put both in one call; an engine that batches concurrent
     * queries may have put them together anyway, so otherwise the text does not say. */
    switch (f->kind) {
    case HC_DIAG_SWAPPED:
        snprintf(buf, len, "position %zu's outputs are position %zu's and %zu's are %zu's (rows swapped%s)", f->pos,
                 f->other, f->other, f->pos, f->same_batch ? " in a batch" : "");
        break;
    case HC_DIAG_STALE:
        snprintf(buf, len, "position %zu repeats position %zu's outputs (a stale row%s)", f->pos, f->other,
                 f->same_batch ? "" : " from an earlier batch");
        break;
    case HC_DIAG_FOREIGN:
        snprintf(buf, len, "position %zu's outputs are position %zu's, evaluated after it (rows shifted%s)", f->pos,
                 f->other, f->same_batch ? " in a batch" : "");
        break;
    default:
        snprintf(buf, len, "position %zu's policy marks %d legal move%s illegal and %d illegal move%s legal: these "
                 "outputs are not this position's", f->pos, f->legal_missing, f->legal_missing == 1 ? "" : "s",
                 f->legal_extra, f->legal_extra == 1 ? "" : "s");
        break;
    }
    return buf;
}

char *hc_diag_text(const hc_diag_finding *f, size_t n, size_t shown)
{
    if (n == 0)
        return NULL;
    hc_strbuf b = HC_STRBUF_INIT;
    hc_strbuf_printf(&b, "outputs of other positions: ");
    for (size_t i = 0; i < n && i < shown; i++) {
        char line[300];
        hc_strbuf_printf(&b, "%s%s", i ? "; " : "", hc_diag_finding_text(&f[i], line, sizeof line));
    }
    if (n > shown)
        hc_strbuf_printf(&b, "; and %zu more", n - shown);
    return hc_strbuf_take(&b, NULL);
}
