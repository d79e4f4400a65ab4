/* Precision bisect: see precbisect.h. */
#include "harness/run/precbisect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/data/nnoutput.h"
#include "backends/profile.h"

typedef struct ctx {
    const hc_net *net;
    const hc_position *ps;
    size_t n;
    const hc_eval_settings *s;
    const hc_tier *tier;
    int batch, threads;
    int cuda; /* cuda:emulate and cuda:ref32 instead of emulate and ref32 */
    int nl; /* layers + input */
    hc_nnoutput *ref;
    int n_evals;
} ctx;

/* The tier's worst ratio: > 1 fails; infinite for a non-finite output. */
static double ratio_of(const hc_tier_check *c)
{
    if (c->nonfinite)
        return INFINITY;
    return c->worst_all_ratio > 0 ? c->worst_all_ratio : 0.0;
}

/* Evaluates prof applied where active says (NULL: everywhere) over the positions; a run that
 * stops on a non-finite output (emulate reports overflow as HC_EBACKEND) is a failing verdict,
 * not an error. */
static int eval_set(ctx *c, const hc_profile *prof, const unsigned char *active, hc_stats *st, hc_tier_check *chk,
                    double *ratio, hc_err *err)
{
    hc_evaluator_opts eo = {.spec = c->cuda ? "cuda:emulate" : "emulate", .net = c->net, .settings = *c->s, .batch = c->batch,
                            .threads = c->threads, .profile = prof, .active = active, .n_active = active ? c->nl : 0};
    hc_evaluator *ev = hc_evaluator_open(&eo, err);
    if (!ev)
        return -1;
    hc_nnoutput *outs = hc_calloc(c->n, sizeof *outs, err, "outputs");
    int rc = -1;
    c->n_evals++;
    if (outs) {
        hc_err e2 = {0};
        hc_eval_request req = {.ps = c->ps, .n = c->n, .outs = outs};
        if (hc_evaluator_run(ev, &req, &e2)) {
            if (e2.code != HC_EBACKEND) {
                *err = e2;
            } else {
                memset(st, 0, sizeof *st);
                memset(chk, 0, sizeof *chk);
                chk->nonfinite = 1;
                chk->first_fail_metric = chk->first_fail_pct = -1;
                *ratio = INFINITY;
                rc = 0;
            }
        } else if (hc_stats_compute(c->ref, outs, c->n, st, err) == 0) {
            hc_tier_check_stats(c->tier, st, chk);
            *ratio = ratio_of(chk);
            rc = 0;
        }
        hc_nnoutputs_free(outs, c->n);
    }
    hc_evaluator_close(ev);
    return rc;
}

static int pass_of(const hc_tier_check *c) { return c->pass && !c->nonfinite; }

/* active for "every reduced layer except those in esc" */
static void fill_active(unsigned char *active, const hc_pbisect_layer *ls, int nl, const unsigned char *esc)
{
    for (int i = 0; i < nl; i++)
        active[i] = ls[i].reduced && !esc[i];
}

static int eval_esc(ctx *c, const hc_profile *prof, const hc_pbisect_layer *ls, const unsigned char *esc,
                    unsigned char *active, int *pass, hc_err *err)
{
    hc_stats st;
    hc_tier_check chk;
    double r;
    fill_active(active, ls, c->nl, esc);
    if (eval_set(c, prof, active, &st, &chk, &r, err))
        return -1;
    *pass = pass_of(&chk);
    return 0;
}

static int is_reduced(const hc_prof_choice *ch)
{
    return ch->storage != HC_FMT_FP32 || ch->weights != HC_FMT_FP32 || ch->accum != HC_FMT_FP32 ||
           ch->tiles != HC_FMT_FP32 || ch->pool != HC_FMT_FP32 || ch->scores != HC_FMT_FP32 ||
           ch->probs != HC_FMT_FP32 || ch->pool_sum != HC_FMT_FP32 || ch->norm_sum != HC_FMT_FP32;
}

/* The result profile: prof plus an fp32 rule per escalated layer. */
static hc_profile *result_profile(const hc_profile *prof, const hc_net *net, const hc_pbisect *r,
                                  const hc_tier *tier, hc_err *err)
{
    hc_profile *p = hc_profile_clone(prof, err);
    if (!p || r->n_escalated == 0)
        return p; /* unchanged */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s-fp32-%s", prof->name, tier->name);
    char *name = malloc(strlen(buf) + 1), *desc = NULL;
    if (name)
        strcpy(name, buf);
    snprintf(buf, sizeof buf, "%s%sbisect-precision for tier %s: %d layer(s) escalated to fp32.",
             prof->description ? prof->description : "", prof->description ? " " : "", tier->name, r->n_escalated);
    desc = malloc(strlen(buf) + 1);
    if (desc)
        strcpy(desc, buf);
    free(p->name);
    free(p->description);
    p->name = name;
    p->description = desc;
    if (!name || !desc) {
        hc_err_set(err, HC_ENOMEM, "out of memory building the result profile");
        hc_profile_free(p);
        return NULL;
    }
    for (int i = 0; i < r->n_layers; i++) {
        const hc_pbisect_layer *l = &r->layers[i];
        if (!l->escalated)
            continue;
        hc_prof_rule rule;
        memset(&rule, 0, sizeof rule);
        /* fp32 for what the profile reduces in this layer, the rest left alone */
        hc_prof_choice ch = hc_profile_resolve(prof, net, l->name, l->kinds);
        int *set[9] = {&rule.storage, &rule.weights, &rule.accum,    &rule.tiles,   &rule.pool,
                       &rule.scores,  &rule.probs,   &rule.pool_sum, &rule.norm_sum};
        const int had[9] = {ch.storage, ch.weights, ch.accum, ch.tiles, ch.pool, ch.scores, ch.probs, ch.pool_sum,
                            ch.norm_sum};
        for (int k = 0; k < 9; k++)
            *set[k] = had[k] != HC_FMT_FP32 ? HC_FMT_FP32 : -1;
        rule.transformer = -1;
        rule.min_trunk_c = 0;
        rule.max_trunk_c = 0x7fffffff;
        snprintf(rule.where, sizeof rule.where, "bisect-precision");
        if (l->kinds == HC_LK_INPUT) {
            rule.kinds = HC_LK_INPUT;
        } else if (!(rule.pattern = hc_profile_glob_literal(l->name, err))) {
            hc_profile_free(p);
            return NULL;
        }
        int rc = hc_profile_add_rule(p, &rule, err);
        free(rule.pattern);
        if (rc) {
            hc_profile_free(p);
            return NULL;
        }
    }
    return p;
}

/* ref32's outputs over ps[0..n) into outs (the caller's, n entries). */
static int ref_outputs(const ctx *c, const hc_position *ps, size_t n, hc_nnoutput *outs, hc_err *err)
{
    hc_evaluator_opts eo = {.spec = c->cuda ? "cuda:ref32" : "ref32", .net = c->net, .settings = *c->s, .batch = c->batch,
                            .threads = c->threads};
    hc_evaluator *ev = hc_evaluator_open(&eo, err);
    hc_eval_request req = {.ps = ps, .n = n, .outs = outs};
    int rc = ev ? hc_evaluator_run(ev, &req, err) : -1;
    hc_evaluator_close(ev);
    return rc;
}

/* The result profile as YAML, parsed back from that text and evaluated on the verification
 * positions (vs[0..nv), which the search never saw). */
static int finish(ctx *c, const hc_profile *prof, const hc_position *vs, size_t nv, hc_pbisect *r, hc_err *err)
{
    hc_profile *p = result_profile(prof, c->net, r, c->tier, err);
    if (!p)
        return -1;
    char head[512];
    snprintf(head, sizeof head,
             "written by halfcheck bisect-precision: profile %s, tier %s at %dx%d, searched on %zu positions,\n"
             "checked against the tier on %zu positions the search did not use;\n"
             "%d layer(s) escalated to fp32 (the rules at the end)",
             prof->name, c->tier->name, c->s->nn_x, c->s->nn_y, c->n, nv, r->n_escalated);
    int rc = hc_profile_format(p, head, &r->yaml, &r->yaml_len, err);
    hc_profile_free(p);
    if (rc)
        return -1;
    hc_profile *back = hc_profile_parse(r->yaml, r->yaml_len, "bisect-precision result", err);
    if (!back) {
        hc_err_prefix(err, "the written profile does not read back: ");
        return -1;
    }
    ctx v = *c;
    v.ps = vs;
    v.n = nv;
    v.ref = hc_calloc(nv, sizeof *v.ref, err, "verification outputs");
    rc = -1;
    if (v.ref) {
        double ratio;
        if (ref_outputs(&v, vs, nv, v.ref, err))
            hc_err_prefix(err, "verification positions: ");
        else
            rc = eval_set(&v, back, NULL, &r->result_stats, &r->result_check, &ratio, err);
        hc_nnoutputs_free(v.ref, nv);
    }
    c->n_evals = v.n_evals;
    hc_profile_free(back);
    if (rc)
        return -1;
    if ((r->outcome == HC_PB_FOUND || r->outcome == HC_PB_PASSES) && !pass_of(&r->result_check))
        r->outcome = HC_PB_UNVERIFIED;
    return 0;
}

typedef struct ord {
    int i;
    double score;
} ord;

static int by_score_desc(const void *a, const void *b)
{
    const ord *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->i - y->i;
}

int hc_pbisect_run(const hc_net *net, const hc_pbisect_opts *o, hc_pbisect **out, hc_err *err)
{
    *out = NULL;
    const hc_position *ps = o->search;
    size_t n = o->n_search;
    if (n == 0)
        return hc_err_set(err, HC_EUSAGE, "bisect-precision: no positions to search on");
    if (o->n_verify == 0)
        return hc_err_set(err, HC_EUSAGE, "bisect-precision: no positions to verify the result on");
    ctx c = {.net = net, .ps = ps, .n = n, .s = o->settings, .tier = o->tier, .batch = o->batch,
             .threads = o->threads, .cuda = o->cuda};
    hc_profile *prof = hc_profile_load(o->profile, err);
    hc_layer_ref *ls = NULL;
    int nl = 0, rc = -1;
    hc_pbisect *r = NULL;
    unsigned char *esc = NULL, *active = NULL;
    ord *order = NULL;
    /* hc_net_layers hands out mutable pointers; only names and kinds are read here */
    if (!prof || hc_net_layers((hc_net *)net, &ls, &nl, err))
        goto done;
    c.nl = nl + 1;
    r = hc_calloc(1, sizeof *r, err, "bisect result");
    if (!r || !(r->layers = hc_calloc((size_t)c.nl, sizeof *r->layers, err, "bisect layers")) ||
        !(esc = hc_calloc((size_t)c.nl, 1, err, "bisect flags")) ||
        !(active = hc_calloc((size_t)c.nl, 1, err, "bisect flags")) ||
        !(order = hc_calloc((size_t)c.nl, sizeof *order, err, "bisect order")) ||
        !(c.ref = hc_calloc(n, sizeof *c.ref, err, "outputs")))
        goto done;
    r->n_layers = c.nl;
    r->n_search = n;
    r->n_verify = o->n_verify;
    for (int i = 0; i < c.nl; i++) {
        hc_pbisect_layer *l = &r->layers[i];
        const char *name = i < nl ? ls[i].name : "input";
        l->kinds = i < nl ? ls[i].kinds : HC_LK_INPUT;
        snprintf(l->name, sizeof l->name, "%s", name ? name : "?");
        hc_prof_choice ch = hc_profile_resolve(prof, net, name, l->kinds);
        l->reduced = is_reduced(&ch);
    }
    if (ref_outputs(&c, ps, n, c.ref, err))
        goto done;

    double ratio;
    if (eval_set(&c, prof, NULL, &r->full_stats, &r->full_check, &ratio, err))
        goto done;
    if (pass_of(&r->full_check)) {
        r->outcome = HC_PB_PASSES;
        rc = finish(&c, prof, o->verify, o->n_verify, r, err);
        goto done;
    }
    /* every layer escalated: ref32's arithmetic, which must pass */
    int pass;
    memset(esc, 1, (size_t)c.nl);
    if (eval_esc(&c, prof, r->layers, esc, active, &pass, err))
        goto done;
    if (!pass) {
        r->outcome = HC_PB_IMPOSSIBLE;
        rc = 0;
        goto done;
    }
    /* sensitivity: one layer at a time */
    int m = 0, n_inf = 0;
    double sum = 0;
    for (int i = 0; i < c.nl; i++) {
        hc_pbisect_layer *l = &r->layers[i];
        if (!l->reduced)
            continue;
        hc_stats st;
        hc_tier_check chk;
        memset(active, 0, (size_t)c.nl);
        active[i] = 1;
        if (eval_set(&c, prof, active, &st, &chk, &l->score, err)) {
            hc_err_prefix(err, "layer %s: ", l->name);
            goto done;
        }
        if (isinf(l->score))
            n_inf++;
        else
            sum += l->score;
        order[m].i = i;
        order[m++].score = l->score;
    }
    for (int i = 0; i < c.nl; i++) {
        hc_pbisect_layer *l = &r->layers[i];
        l->share = n_inf ? (isinf(l->score) ? 1.0 / n_inf : 0.0) : sum > 0 ? l->score / sum : 0.0;
    }
    qsort(order, (size_t)m, sizeof *order, by_score_desc);
    /* the shortest passing prefix: lo fails (0: the whole profile), hi passes (m: all fp32) */
    int lo = 0, hi = m;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        memset(esc, 0, (size_t)c.nl);
        for (int k = 0; k < mid; k++)
            esc[order[k].i] = 1;
        if (eval_esc(&c, prof, r->layers, esc, active, &pass, err))
            goto done;
        if (pass)
            hi = mid;
        else
            lo = mid;
    }
    memset(esc, 0, (size_t)c.nl);
    for (int k = 0; k < hi; k++)
        esc[order[k].i] = 1;
    /* pruning, smallest share first, repeated until a sweep drops nothing: errors can cancel,
     * so a layer kept in one sweep may become unneeded after a later drop */
    for (int dropped = 1; dropped && hi > 0;) {
        dropped = 0;
        for (int k = hi - 1; k >= 0; k--) {
            if (!esc[order[k].i])
                continue;
            esc[order[k].i] = 0;
            if (eval_esc(&c, prof, r->layers, esc, active, &pass, err))
                goto done;
            if (!pass)
                esc[order[k].i] = 1;
            else
                dropped++;
        }
    }
    for (int i = 0; i < c.nl; i++) {
        r->layers[i].escalated = esc[i];
        r->n_escalated += esc[i];
    }
    r->outcome = HC_PB_FOUND;
    rc = finish(&c, prof, o->verify, o->n_verify, r, err);
done:
    if (c.ref)
        hc_nnoutputs_free(c.ref, n);
    if (r)
        r->n_evals = c.n_evals;
    free(order);
    free(esc);
    free(active);
    free(ls);
    hc_profile_free(prof);
    if (rc) {
        hc_pbisect_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

void hc_pbisect_free(hc_pbisect *r)
{
    if (!r)
        return;
    free(r->layers);
    free(r->yaml);
    free(r);
}

int hc_pbisect_split_positions(const hc_position *ps, size_t n, hc_pbisect_split *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    size_t nv = n / HC_PBISECT_HOLDOUT_EVERY;
    if (nv < HC_PBISECT_MIN_VERIFY)
        return hc_err_set(err, HC_EUSAGE,
                          "%zu positions: holding every %dth out for the verification needs at least %d",
                          n, HC_PBISECT_HOLDOUT_EVERY, HC_PBISECT_HOLDOUT_EVERY * HC_PBISECT_MIN_VERIFY);
    if (!(out->search = hc_calloc(n - nv, sizeof *out->search, err, "search positions")) ||
        !(out->verify = hc_calloc(nv, sizeof *out->verify, err, "verification positions"))) {
        hc_pbisect_split_free(out);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (i % HC_PBISECT_HOLDOUT_EVERY == HC_PBISECT_HOLDOUT_EVERY - 1)
            out->verify[out->n_verify++] = ps[i];
        else
            out->search[out->n_search++] = ps[i];
    }
    return 0;
}

void hc_pbisect_split_free(hc_pbisect_split *sp)
{
    free(sp->search);
    free(sp->verify);
    memset(sp, 0, sizeof *sp);
}
