/* Nondeterminism as a check (repeat.h): N isolated evaluations of a case in other batch compositions and
 * orders, compared bit for bit. */
#include "harness/run/repeat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/run/isolate.h"

void hc_repeat_shuffle(size_t *order, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = n; i > 1; i--) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        size_t j = (size_t)((x * 0x2545F4914F6CDD1Dull) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

void hc_repeat_plan(int k, size_t n, int batch, uint64_t seed, size_t *order, int *batch_k)
{
    *batch_k = k % 2 == 1 ? 1 : (batch > 0 ? batch : 1);
    if (k == 0) {
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        return;
    }
    /* seeded by the case and the evaluation */
    hc_repeat_shuffle(order, n, seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)k));
}

/* The outputs compared, by group (hc_nnoutput's fields in order). */
enum { G_VALUE, G_SCORE, G_VARTIME, G_SHORTTERM, G_POLICY, G_OWNERSHIP, G_N };
static const char *const group_names[G_N] = {"value", "score", "varTimeLeft", "shortterm errors", "policy",
                                              "ownership"};

/* |a - b| when a and b are other bits (infinite when either is not finite), else -1. */
static double delta(float a, float b)
{
    if (memcmp(&a, &b, sizeof a) == 0)
        return -1;
    if (!isfinite(a) || !isfinite(b))
        return INFINITY;
    return fabs((double)a - (double)b);
}

static void note(double d, int g, double *max, unsigned *groups)
{
    if (d < 0)
        return;
    *groups |= 1u << g;
    if (d > *max)
        *max = d;
}

/* The groups of a and b that differ (bits), and the largest difference. */
static unsigned compare(const hc_nnoutput *a, const hc_nnoutput *b, double *max)
{
    unsigned g = 0;
    *max = 0;
    note(delta(a->white_win_prob, b->white_win_prob), G_VALUE, max, &g);
    note(delta(a->white_loss_prob, b->white_loss_prob), G_VALUE, max, &g);
    note(delta(a->white_no_result_prob, b->white_no_result_prob), G_VALUE, max, &g);
    note(delta(a->white_score_mean, b->white_score_mean), G_SCORE, max, &g);
    note(delta(a->white_score_mean_sq, b->white_score_mean_sq), G_SCORE, max, &g);
    note(delta(a->white_lead, b->white_lead), G_SCORE, max, &g);
    note(delta(a->var_time_left, b->var_time_left), G_VARTIME, max, &g);
    note(delta(a->shortterm_winloss_error, b->shortterm_winloss_error), G_SHORTTERM, max, &g);
    note(delta(a->shortterm_score_error, b->shortterm_score_error), G_SHORTTERM, max, &g);
    size_t area = (size_t)a->nn_x_len * (size_t)a->nn_y_len;
    if (a->nn_x_len != b->nn_x_len || a->nn_y_len != b->nn_y_len || !a->policy_probs != !b->policy_probs ||
        !a->white_owner_map != !b->white_owner_map) {
        note(INFINITY, G_POLICY, max, &g);
        return g;
    }
    for (size_t i = 0; a->policy_probs && i <= area; i++)
        note(delta(a->policy_probs[i], b->policy_probs[i]), G_POLICY, max, &g);
    for (size_t i = 0; a->white_owner_map && i < area; i++)
        note(delta(a->white_owner_map[i], b->white_owner_map[i]), G_OWNERSHIP, max, &g);
    return g;
}

int hc_repeat_add(hc_repeat *r, int k, const hc_nnoutput *base, const hc_nnoutput *outs, const unsigned char *skip,
                  hc_err *err)
{
    int count = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (skip && skip[i])
            continue;
        double m;
        unsigned g = compare(&base[i], &outs[i], &m);
        if (!g)
            continue;
        count++;
        if (m > r->max_abs)
            r->max_abs = m;
        hc_repeat_diff *d = NULL;
        for (size_t j = 0; j < r->n_diff && !d; j++)
            if (r->diff[j].position == i)
                d = &r->diff[j];
        if (!d) {
            hc_repeat_diff *nd = realloc(r->diff, (r->n_diff + 1) * sizeof *nd);
            if (!nd)
                return hc_err_set(err, HC_ENOMEM, "out of memory comparing evaluations");
            r->diff = nd;
            /* kept in position order */
            size_t at = r->n_diff;
            while (at > 0 && r->diff[at - 1].position > i)
                at--;
            memmove(&r->diff[at + 1], &r->diff[at], (r->n_diff - at) * sizeof *nd);
            r->n_diff++;
            d = &r->diff[at];
            memset(d, 0, sizeof *d);
            d->position = i;
            d->evaluation = k;
        }
        if (m > d->max_abs)
            d->max_abs = m;
        for (int q = 0; q < G_N; q++)
            if ((g >> q) & 1u && !strstr(d->outputs, group_names[q])) {
                size_t l = strlen(d->outputs);
                snprintf(d->outputs + l, sizeof d->outputs - l, "%s%s", l ? ", " : "", group_names[q]);
            }
    }
    return count;
}

void hc_repeat_clear(hc_repeat *r)
{
    free(r->diff);
    memset(r, 0, sizeof *r);
}

int hc_repeat_verdict(const hc_repeat *r, double limit, int batch, char *buf, size_t len)
{
    char how[200];
    snprintf(how, sizeof how, "%d evaluations of %zu positions (batches of %d and 1, %d orders)", r->evaluations, r->n,
             batch, r->evaluations);
    if (r->n_diff == 0) {
        snprintf(buf, len, "deterministic: %s gave the same bits", how);
        return HC_REPEAT_SAME;
    }
    int within = r->max_abs <= limit;
    char head[80];
    if (within)
        snprintf(head, sizeof head, "differs within %g", limit);
    else
        snprintf(head, sizeof head, "nondeterministic");
    size_t o = (size_t)snprintf(buf, len, "%s: %s: %zu position%s differ%s in some bit, by at most %.3g%s:", head,
                                how, r->n_diff, r->n_diff == 1 ? "" : "s", r->n_diff == 1 ? "s" : "", r->max_abs,
                                !within && limit > 0 ? " (beyond the limit)" : "");
    for (size_t i = 0; i < r->n_diff && i < 8 && o < len; i++) {
        const hc_repeat_diff *d = &r->diff[i];
        o += (size_t)snprintf(buf + o, len - o, "%s position %zu (%s by %.3g, first in evaluation %d)", i ? "," : "",
                              d->position, d->outputs, d->max_abs, d->evaluation);
    }
    if (r->n_diff > 8 && o < len)
        snprintf(buf + o, len - o, ", and %zu more", r->n_diff - 8);
    return within ? HC_REPEAT_WITHIN : HC_REPEAT_DIFFERS;
}

/* ---- the evaluations ---- */

typedef struct prog {
    const hc_repeat_opts *o;
    int k;
} prog;

static void progress(void *user, size_t done, size_t total)
{
    prog *p = user;
    (void)total;
    if (p->o->progress)
        p->o->progress(p->o->user, (size_t)p->k * p->o->n + done, (size_t)p->o->evaluations * p->o->n);
}

static int stopped(void *user)
{
    prog *p = user;
    return p->o->stopped ? p->o->stopped(p->o->user) : 0;
}

static void free_outs(hc_nnoutput *o, size_t n)
{
    if (o)
        hc_nnoutputs_free(o, n);
}

int hc_repeat_run(const hc_repeat_opts *o, hc_repeat *r, hc_stats **st, char **message, hc_err *err)
{
    memset(r, 0, sizeof *r);
    *st = NULL;
    *message = NULL;
    size_t n = o->n;
    r->evaluations = o->evaluations;
    r->n = n;
    hc_nnoutput *base = NULL, *worst = NULL;
    unsigned char *skip = calloc(n ? n : 1, 1);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int rc = -1, worst_count = 0;
    if (!skip || !order) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        goto done;
    }
    for (int k = 0; k < o->evaluations; k++) {
        int batch_k;
        hc_repeat_plan(k, n, o->batch, o->seed, order, &batch_k);
        hc_nnoutput *outs = calloc(n ? n : 1, sizeof *outs);
        hc_isolate_side side = {0};
        side.skipped = calloc(n ? n : 1, 1);
        char prefix[1200], *msg = NULL;
        snprintf(prefix, sizeof prefix, "%s-%d", o->scratch_prefix, k);
        prog pg = {o, k};
        hc_isolate_case ic = {.spec = o->spec, .net = o->net, .ps = o->ps, .n = n, .order = k ? order : NULL,
                              .batch = batch_k, .settings = o->settings, .threads = o->threads, .registry = o->registry,
                              .timeout_s = o->timeout_s, .scratch_prefix = prefix, .stopped = stopped,
                              .progress = progress, .user = &pg, .no_pdeathsig = o->no_pdeathsig};
        int ir = outs && side.skipped ? hc_isolate_run(&ic, outs, &side, &msg) : -1;
        free(side.skip_text);
        free(side.engine);
        if (ir) {
            free_outs(outs, n);
            free(side.skipped);
            if (ir == -2) {
                free(msg);
                rc = -2;
                goto done;
            }
            char full[1500];
            snprintf(full, sizeof full, "repeat: evaluation %d of %d (batch %d): %s", k + 1, o->evaluations, batch_k,
                     msg ? msg : "out of memory");
            free(msg);
            *message = strdup(full);
            rc = -1;
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            skip[i] |= side.skipped[i];
        free(side.skipped);
        if (k == 0) {
            base = outs;
            continue;
        }
        int c = hc_repeat_add(r, k, base, outs, skip, err);
        if (c < 0) {
            free_outs(outs, n);
            goto done;
        }
        if (!worst || c > worst_count) {
            free_outs(worst, n);
            worst = outs;
            worst_count = c;
        } else {
            free_outs(outs, n);
        }
    }
    hc_stats *s = calloc(1, sizeof *s);
    if (!s || hc_stats_compute_ex(base, worst ? worst : base, n, skip, NULL, s, err)) {
        free(s);
        if (!err->msg[0])
            hc_err_set(err, HC_ENOMEM, "out of memory");
        goto done;
    }
    *st = s;
    rc = 0;
done:
    free_outs(base, n);
    free_outs(worst, n);
    free(skip);
    free(order);
    if (rc == -1 && !*message && err->msg[0]) {
        *message = strdup(err->msg);
        return -1;
    }
    return rc;
}
