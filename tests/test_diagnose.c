/* The diagnosis of outputs that belong to another position (harness/metrics/diagnose.h) on
 * handmade outputs: rows swapped in a batch, a stale row from an earlier batch post-processed
 * at another symmetry and for the other player, a shifted legal mask, and what must give no
 * finding (honest small errors, one output for every position); and the tier verdict of an
 * infinite KL of finite outputs (a failure, not a non-finite output). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/metrics/diagnose.h"
#include "hc_test.h"
#include "harness/metrics/stats.h"
#include "harness/metrics/tiers.h"

enum { NX = 5, NY = 5, CELLS = NX * NY, N = 12 };

/* Position i's own outputs: distinct values, a policy peaked at a point of its own, one illegal
 * point of its own. */
static void mk(hc_nnoutput *o, int i)
{
    hc_err err = {0};
    hc_nnoutput_init(o, NX, NY, 1, &err);
    double v = (i + 1) / (double)(N + 2);
    o->white_win_prob = (float)v;
    o->white_loss_prob = (float)(1 - v);
    o->white_lead = (float)(3.0 * (i - N / 2));
    o->white_score_mean = o->white_lead;
    double sum = 0;
    for (int c = 0; c <= CELLS; c++) {
        double p = c == (i * 7) % CELLS ? 20.0 : 1.0 + ((c * 13 + i * 5) % 7);
        o->policy_probs[c] = (float)p;
        sum += p;
    }
    int illegal = (i * 3 + 11) % CELLS;
    sum -= o->policy_probs[illegal];
    for (int c = 0; c <= CELLS; c++)
        o->policy_probs[c] = c == illegal ? -1.0f : (float)(o->policy_probs[c] / sum);
    for (int c = 0; c < CELLS; c++)
        o->white_owner_map[c] = (float)sin(0.7 * c + i);
}

static void copy(hc_nnoutput *dst, const hc_nnoutput *src)
{
    memcpy(dst->policy_probs, src->policy_probs, sizeof(float) * (CELLS + 1));
    memcpy(dst->white_owner_map, src->white_owner_map, sizeof(float) * CELLS);
    float *p = dst->policy_probs, *w = dst->white_owner_map;
    *dst = *src;
    dst->policy_probs = p;
    dst->white_owner_map = w;
}

static const hc_diag_finding *find(const hc_diag_finding *f, size_t n, size_t pos)
{
    for (size_t i = 0; i < n; i++)
        if (f[i].pos == pos)
            return &f[i];
    return NULL;
}

int main(void)
{
    hc_plan(12);
    static hc_nnoutput ref[N], test[N];
    for (int i = 0; i < N; i++) {
        mk(&ref[i], i);
        mk(&test[i], i);
        test[i].white_win_prob += 1e-4f; /* an honest small error everywhere */
        test[i].white_loss_prob -= 1e-4f;
    }
    /* Evaluated in the order 0..11 in batches of 4. Rows 1 and 2 (batch 0) swapped; position 9
     * (batch 2) holds position 5's outputs (batch 1) rotated by 180 degrees and seen from the
     * other player, as a tensor backend's stale row post-processed for position 9; position 11's
     * legal mask is shifted by one point. */
    copy(&test[1], &ref[2]);
    copy(&test[2], &ref[1]);
    test[9].white_win_prob = ref[5].white_loss_prob;
    test[9].white_loss_prob = ref[5].white_win_prob;
    test[9].white_lead = -ref[5].white_lead;
    for (int c = 0; c < CELLS; c++) {
        test[9].policy_probs[c] = ref[5].policy_probs[CELLS - 1 - c];
        test[9].white_owner_map[c] = -ref[5].white_owner_map[CELLS - 1 - c];
    }
    test[9].policy_probs[CELLS] = ref[5].policy_probs[CELLS];
    float last = test[11].policy_probs[CELLS - 1];
    memmove(test[11].policy_probs + 1, test[11].policy_probs, sizeof(float) * (CELLS - 1));
    test[11].policy_probs[0] = last;

    hc_diag_opts o = {.batch = 4};
    hc_diag_finding *f = NULL;
    size_t nf = 0;
    hc_err err = {0};
    int rc = hc_diagnose(ref, test, N, &o, &f, &nf, &err);
    hc_check("diagnose-1.1", rc == 0 && nf == 3, "3 findings: rc %d, %zu findings", rc, nf);
    const hc_diag_finding *a = find(f, nf, 1), *b = find(f, nf, 9), *c = find(f, nf, 11);
    hc_check("diagnose-1.2", a && a->kind == HC_DIAG_SWAPPED && a->other == 2 && a->same_batch && !find(f, nf, 2),
             "rows 1 and 2 swapped in a batch, reported once");
    hc_check("diagnose-1.3", b && b->kind == HC_DIAG_STALE && b->other == 5 && !b->same_batch && b->other_dist < 1e-5,
             "position 9 repeats 5's outputs from an earlier batch, at another symmetry and side");
    hc_check("diagnose-1.4", c && c->kind == HC_DIAG_LEGAL && c->legal_missing == 1 && c->legal_extra == 1,
             "position 11: a shifted legal mask, 1 missing and 1 extra: %d %d", c ? c->legal_missing : -1,
             c ? c->legal_extra : -1);
    char buf[300];
    hc_check("diagnose-1.5", a && strcmp(hc_diag_finding_text(a, buf, sizeof buf),
                                         "position 1's outputs are position 2's and 2's are 1's (rows swapped in a "
                                         "batch)") == 0, "text: %s", buf);
    hc_check("diagnose-1.6", b && strcmp(hc_diag_finding_text(b, buf, sizeof buf),
                                         "position 9 repeats position 5's outputs (a stale row from an earlier "
                                         "batch)") == 0, "text: %s", buf);
    char *text = hc_diag_text(f, nf, 2);
    hc_check("diagnose-1.7", text && strncmp(text, "outputs of other positions: position 1's", 40) == 0 &&
                                 strstr(text, "; and 1 more") && !strstr(text, "position 11"), "text: %s",
             text ? text : "(null)");
    free(text);
    free(f);

    /* The evaluation order decides stale (other evaluated before) from foreign (after). */
    size_t order[N] = {9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11};
    o.order = order;
    rc = hc_diagnose(ref, test, N, &o, &f, &nf, &err);
    b = rc == 0 ? find(f, nf, 9) : NULL;
    hc_check("diagnose-2.1", b && b->kind == HC_DIAG_FOREIGN && b->other == 5, "position 9 first: foreign, %s",
             b ? hc_diag_finding_text(b, buf, sizeof buf) : "none");
    free(f);
    o.order = NULL;

    /* Honest errors only: no finding. One output for every position: no owner named. */
    for (int i = 0; i < N; i++)
        copy(&test[i], &ref[i]);
    test[4].white_lead += 0.5f;
    rc = hc_diagnose(ref, test, N, &o, &f, &nf, &err);
    hc_check("diagnose-3.1", rc == 0 && nf == 0 && !f, "honest outputs: %zu findings", nf);
    for (int i = 0; i < N; i++)
        copy(&test[i], &ref[3]);
    rc = hc_diagnose(ref, test, N, &o, &f, &nf, &err);
    int named = 0;
    for (size_t i = 0; i < nf; i++)
        named += f[i].kind != HC_DIAG_LEGAL;
    hc_check("diagnose-3.2", rc == 0 && named == 0, "a constant output names %d owners", named);
    free(f);

    /* An infinite KL of finite outputs: a tier failure with an infinite ratio, not non-finite. */
    for (int i = 0; i < N; i++)
        copy(&test[i], &ref[i]);
    copy(&test[1], &ref[2]);
    copy(&test[2], &ref[1]);
    hc_stats s;
    rc = hc_stats_compute(ref, test, N, &s, &err);
    hc_tier t;
    hc_tier_builtin("fp32", &t, &err);
    hc_tier_check ck;
    hc_tier_check_stats(&t, &s, &ck);
    hc_check("diagnose-4.1", rc == 0 && s.m[HC_M_POLICY_KL].infinite == 2 && !hc_stats_any_nonfinite(&s) &&
                                 isinf(s.m[HC_M_POLICY_KL].v[HC_P_MAX]),
             "KL infinite at %zu positions, nonfinite %d", s.m[HC_M_POLICY_KL].infinite, hc_stats_any_nonfinite(&s));
    hc_check("diagnose-4.2", !ck.pass && !ck.nonfinite && ck.verdict[HC_M_POLICY_KL][HC_P_MAX] == HC_V_FAIL &&
                                 isinf(ck.ratio[HC_M_POLICY_KL][HC_P_MAX]),
             "fp32: pass %d nonfinite %d verdict %d", ck.pass, ck.nonfinite, ck.verdict[HC_M_POLICY_KL][HC_P_MAX]);
    for (int i = 0; i < N; i++) {
        hc_nnoutput_free(&ref[i]);
        hc_nnoutput_free(&test[i]);
    }
    return hc_test_exit();
}
