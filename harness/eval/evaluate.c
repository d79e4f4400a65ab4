/* The evaluation core: featurize, evaluate (one instance or lanes), post-process; the evaluator object. */
#include "harness/eval/evaluate.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/go/history.h"
#include "harness/features/nnfeatures.h"
#include "harness/eval/postprocess.h"
#include "harness/go/rules.h"
#include "harness/base/sizes.h"
#include "harness/data/sgfmeta.h"
#include "harness/base/stream.h"
#include "harness/go/symmetry.h"
#include "harness/base/thread.h"

/* Per-batch scratch: input rows, raw heads and the post-processing facts of each row. */
typedef struct batch_buf {
    int max_batch, area, c_spatial, c_global, c_meta;
    float *spatial, *global, *meta, *unsym, *scratch;
    unsigned char *legal;   /* [max_batch][area+1] */
    hc_pp_position *pp;     /* [max_batch] */
    hc_raw_heads *raw;
    hc_sgfmeta meta_profile;
    hc_history_cache *histories; /* consecutive positions of a game continue one history */
    size_t *idx;            /* [max_batch]: the positions of the batch's rows */
    hc_pp_model m;          /* the net's post-processing facts */
} batch_buf;

static void batch_free(batch_buf *bb)
{
    free(bb->spatial);
    free(bb->global);
    free(bb->meta);
    free(bb->unsym);
    free(bb->scratch);
    free(bb->legal);
    free(bb->pp);
    hc_raw_heads_free(bb->raw);
    hc_history_cache_free(bb->histories);
    free(bb->idx);
    memset(bb, 0, sizeof *bb);
}

static hc_pp_model pp_model_of(const hc_net *net)
{
    hc_pp_model m = {
        .model_version = net->model_version,
        .policy_channels = net->num_policy_c,
        .score_channels = net->num_score_value_c,
        .has_meta = net->num_input_meta_c > 0,
        .score_mean_multiplier = net->post.score_mean_multiplier,
        .score_stdev_multiplier = net->post.score_stdev_multiplier,
        .lead_multiplier = net->post.lead_multiplier,
        .variance_time_multiplier = net->post.variance_time_multiplier,
        .shortterm_value_error_multiplier = net->post.shortterm_value_error_multiplier,
        .shortterm_score_error_multiplier = net->post.shortterm_score_error_multiplier,
        .output_scale_multiplier = net->post.output_scale_multiplier,
    };
    return m;
}

static int batch_init(batch_buf *bb, const hc_net *net, int max_batch, const hc_eval_settings *s, hc_err *err)
{
    memset(bb, 0, sizeof *bb);
    bb->max_batch = max_batch;
    bb->area = s->nn_x * s->nn_y;
    bb->c_spatial = net->num_input_c;
    bb->c_global = net->num_input_global_c;
    bb->c_meta = net->num_input_meta_c;
    size_t rows = (size_t)max_batch;
    bb->spatial = hc_malloc(sizeof(float) * rows * (size_t)bb->c_spatial * (size_t)bb->area, err, "input rows");
    bb->global = hc_malloc(sizeof(float) * rows * (size_t)(bb->c_global ? bb->c_global : 1), err, "global rows");
    bb->unsym = hc_malloc(sizeof(float) * (size_t)bb->c_spatial * (size_t)bb->area, err, "feature scratch");
    bb->scratch = hc_malloc(sizeof(float) * (size_t)(bb->area + 1), err, "policy scratch");
    bb->legal = hc_malloc(rows * (size_t)(bb->area + 1), err, "legal maps");
    bb->pp = hc_calloc(rows, sizeof(hc_pp_position), err, "row facts");
    bb->histories = hc_history_cache_new(err);
    bb->idx = hc_malloc(sizeof(size_t) * rows, err, "batch indices");
    bb->m = pp_model_of(net);
    if (bb->c_meta > 0) {
        bb->meta = hc_malloc(sizeof(float) * rows * (size_t)bb->c_meta, err, "metadata rows");
        if (bb->meta && hc_sgfmeta_profile(s->meta_profile, &bb->meta_profile, err))
            goto fail;
    }
    if (!bb->spatial || !bb->global || !bb->unsym || !bb->scratch || !bb->legal || !bb->pp || !bb->histories ||
        !bb->idx || (bb->c_meta > 0 && !bb->meta))
        goto fail;
    bb->raw = hc_raw_heads_new(max_batch, s->nn_x, s->nn_y, net->num_policy_c, net->num_score_value_c, err);
    if (!bb->raw)
        goto fail;
    return 0;
fail:
    batch_free(bb);
    return -1;
}

static void describe(const hc_position *p, long i, hc_eval_failure *fail, hc_err *err)
{
    if (fail) {
        fail->position = i;
        fail->position_index = p->index;
        fail->sgf_line = p->sgf_line;
        fail->move_number = p->initial_turn_number + p->n_moves;
    }
    hc_err_prefix(err, "position %ld (index %ld, SGF line %ld, move %d): ", i, p->index, p->sgf_line,
                  p->initial_turn_number + p->n_moves);
}

/* Builds row r of the batch for position p: features at its symmetry, metadata, legal map. */
static int prepare_row(batch_buf *bb, int r, const hc_net *net, const hc_position *p, const hc_eval_settings *s,
                       hc_err *err)
{
    if (p->x_size > s->nn_x || p->y_size > s->nn_y)
        return hc_err_set(err, HC_EUSAGE, "board %dx%d does not fit the %dx%d NN buffer", p->x_size, p->y_size,
                          s->nn_x, s->nn_y);
    const hc_history *h = hc_history_cache_get(bb->histories, p, err);
    if (!h)
        return -1;
    int pla = hc_history_next_pla(h);
    hc_nninput_params params = hc_nninput_params_default();
    params.playout_doubling_advantage = s->playout_doubling_advantage;
    params.policy_optimism = s->policy_optimism;
    params.nn_policy_temperature = s->policy_temperature;
    params.pass_alive_suicide_rules_override = net->prefer_pass_alive_under_suicide ? 1 : 0;
    float *spatial = bb->spatial + (size_t)r * (size_t)bb->c_spatial * (size_t)bb->area;
    float *global = bb->global + (size_t)r * (size_t)bb->c_global;
    int rc = hc_features_fill(net->input_version, h, pla, &params, s->nn_x, s->nn_y, bb->unsym, global, err);
    if (rc == 0) {
        hc_sym_apply_planes(bb->unsym, spatial, bb->c_spatial, s->nn_y, s->nn_x, p->symmetry);
        unsigned char *legal = bb->legal + (size_t)r * (size_t)(bb->area + 1);
        hc_history_legal_map(h, s->nn_x, s->nn_y, legal);
        const hc_rules *rules = hc_history_rules(h);
        bb->pp[r] = (hc_pp_position){
            .x_size = p->x_size,
            .y_size = p->y_size,
            .next_pla_white = pla == HC_WHITE,
            .suppress_no_result = rules->ko_rule != HC_KO_SIMPLE && rules->scoring_rule != HC_SCORING_TERRITORY,
            .symmetry = p->symmetry,
            .legal = legal,
        };
        if (bb->c_meta > 0)
            rc = hc_sgfmeta_fill_row(&bb->meta_profile, pla == HC_WHITE, p->x_size * p->y_size,
                                     bb->meta + (size_t)r * (size_t)bb->c_meta, err);
    }
    return rc;
}

static int all_finite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

/* Post-processes row r of bb->raw into out (initialised here). */
static int finish_row(batch_buf *bb, int r, const hc_eval_settings *s, hc_nnoutput *out, hc_err *err)
{
    const hc_pp_model *m = &bb->m;
    const hc_raw_heads *raw = bb->raw;
    int area = bb->area;
    hc_raw_row row = {
        .policy = raw->policy + (size_t)r * (size_t)raw->policy_channels * (size_t)area,
        .policy_pass = raw->policy_pass + (size_t)r * (size_t)raw->policy_channels,
        .value = raw->value + (size_t)r * 3,
        .score = raw->score + (size_t)r * (size_t)raw->score_channels,
        .ownership = raw->ownership + (size_t)r * (size_t)area,
    };
    /* KataGo would throw on these in post-processing too; name the raw head that went bad. */
    if (!all_finite(row.value, 3))
        return hc_err_set(err, HC_EBACKEND, "non-finite value head output");
    if (!all_finite(row.score, (size_t)raw->score_channels))
        return hc_err_set(err, HC_EBACKEND, "non-finite score head output");
    if (!all_finite(row.policy_pass, (size_t)raw->policy_channels))
        return hc_err_set(err, HC_EBACKEND, "non-finite pass logit");
    if (hc_nnoutput_init(out, s->nn_x, s->nn_y, 1, err))
        return -1;
    hc_pp_settings pps = {
        .policy_optimism = s->policy_optimism,
        .policy_temperature = s->policy_temperature,
        .enable_passing_hacks = 0,
    };
    if (hc_postprocess_row(m, &pps, &bb->pp[r], s->nn_x, s->nn_y, &row, bb->scratch, out, err)) {
        hc_nnoutput_free(out);
        return -1;
    }
    return 0;
}

static int check_settings(const hc_eval_settings *s, int batch, hc_err *err)
{
    if (hc_check_board_size(s->nn_x, s->nn_y, "NN buffer", err))
        return -1;
    if (batch < 1)
        return hc_err_set(err, HC_EUSAGE, "batch size %d: must be at least 1", batch);
    if (!(s->policy_temperature > 0) || !isfinite(s->policy_temperature))
        return hc_err_set(err, HC_EUSAGE, "policy temperature %g: must be positive", s->policy_temperature);
    return 0;
}


static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void timing_add(hc_eval_timing *to, const hc_eval_timing *t)
{
    if (!to)
        return;
    to->featurize += t->featurize;
    to->backend += t->backend;
    to->postprocess += t->postprocess;
    to->progress += t->progress;
    to->calls += t->calls;
}

/* The caller's progress call, timed. */
static int call_progress(const hc_eval_request *q, size_t done, size_t n, hc_eval_timing *t)
{
    double t0 = now_s();
    int stop = q->progress(q->user, done, n);
    t->progress += now_s() - t0;
    return stop;
}

/* What every call of one evaluation shares: the net, its settings, the positions per call
 * and the request (positions, order, outputs, callbacks). */
typedef struct eval_job {
    const hc_net *net;
    const hc_eval_settings *s;
    int batch;
    const hc_eval_request *req;
} eval_job;

/* One batch of a tensor backend: rows ps[bb->idx[0..k)] featurized, evaluated in one call,
 * post-processed into outs (done_mask set per finished row). On failure err and *fail name
 * the position, and *finished says how many rows, a prefix of idx, were finished before it (the
 * failing row is idx[*finished]): a position that cannot be featurized does not cost the rows
 * before it, which are evaluated first. */
static int eval_rows(batch_buf *bb, hc_backend *b, const eval_job *j, int k, hc_eval_failure *fail, hc_err *err,
                     int *finished, hc_eval_timing *t)
{
    const hc_position *ps = j->req->ps;
    const size_t *idx = bb->idx;
    hc_nnoutput *outs = j->req->outs;
    unsigned char *done_mask = j->req->done_mask;
    *finished = 0;
    int ready = 0;
    hc_err prep_err = {0};
    double t0 = now_s();
    while (ready < k && prepare_row(bb, ready, j->net, &ps[idx[ready]], j->s, &prep_err) == 0)
        ready++;
    double t1 = now_s();
    t->featurize += t1 - t0;
    if (ready > 0) {
        int erc = hc_backend_eval(b, ready, bb->spatial, bb->global, bb->c_meta > 0 ? bb->meta : NULL, bb->raw, err);
        double t2 = now_s();
        t->backend += t2 - t1;
        t->calls++;
        if (erc) {
            hc_err_prefix(err, "batch of %d: ", ready);
            describe(&ps[idx[0]], (long)idx[0], fail, err);
            return -1;
        }
        for (int r = 0; r < ready; r++) {
            if (finish_row(bb, r, j->s, &outs[idx[r]], err)) {
                describe(&ps[idx[r]], (long)idx[r], fail, err);
                return -1;
            }
            if (done_mask)
                done_mask[idx[r]] = 1;
            *finished = r + 1;
        }
        t->postprocess += now_s() - t2;
    }
    if (ready < k) {
        *err = prep_err;
        describe(&ps[idx[ready]], (long)idx[ready], fail, err);
        return -1;
    }
    return 0;
}

/* A position backend's calls (it post-processes itself: it gets the settings, then positions).
 * A call takes the next positions of the order: when the backend takes its own number per call
 * (hc_backend_ops.positions_per_call: an engine that batches concurrent queries), gathered into
 * one call whatever their indices, so that a shuffled batched case is evaluated in batches too;
 * otherwise up to batch positions that follow each other in ps (one when the order's do not).
 * A call refused with a skip (req->skip set) is retried in smaller calls until the refused
 * position is alone, and skipped: gathered calls in halves, so that one position the engine
 * cannot take costs a few calls, not a call per position of a large call (which would leave the
 * engine's batches empty), and full calls again after it; other calls one position at a time. */
static int eval_position_calls(hc_backend *b, const eval_job *j, hc_err *err)
{
    const hc_eval_request *q = j->req;
    const hc_eval_settings *s = j->s;
    size_t n = q->n;
    if (hc_backend_configure(b, s, err))
        return -1;
    int per = hc_backend_positions_per_call(b, j->batch);
    int gather = per > 0;
    if (!gather)
        per = j->batch;
    if (per < 1)
        per = 1;
    hc_position *gp = hc_malloc(sizeof *gp * (size_t)per, err, "gathered positions");
    hc_nnoutput *go = hc_malloc(sizeof *go * (size_t)per, err, "gathered outputs");
    size_t *gi = hc_malloc(sizeof *gi * (size_t)per, err, "gathered indices");
    int rc = gp && go && gi ? 0 : -1;
    hc_eval_timing t = {0};
    int limit = per;        /* the call size while a refused call's positions are retried */
    size_t limit_until = 0; /* ... up to this many positions done */
    for (size_t done = 0; rc == 0 && done < n;) {
        int k = (int)(n - done < (size_t)per ? n - done : (size_t)per);
        if (done < limit_until && (size_t)k > limit_until - done)
            k = (int)(limit_until - done);
        if (k > limit)
            k = limit;
        for (int r = 1; r < k && !gather && q->order; r++)
            if (q->order[done + (size_t)r] != q->order[done] + (size_t)r)
                k = 1; /* not consecutive in ps */
        for (int r = 0; r < k && rc == 0; r++) {
            gi[r] = q->order ? q->order[done + (size_t)r] : done + (size_t)r;
            if (hc_nnoutput_init(&q->outs[gi[r]], s->nn_x, s->nn_y, 1, err))
                rc = -1;
            gp[r] = q->ps[gi[r]];
            go[r] = q->outs[gi[r]];
        }
        if (rc)
            break;
        double t0 = now_s();
        int erc = hc_backend_eval_positions(b, k, gp, go, err);
        t.backend += now_s() - t0;
        t.calls++;
        for (int r = 0; r < k; r++)
            q->outs[gi[r]] = go[r]; /* the same buffers; the scalars were filled in the copy */
        if (erc) {
            const char *why = q->skip ? strstr(err->msg, HC_BACKEND_SKIP) : NULL;
            if (!why) {
                describe(&q->ps[gi[0]], (long)gi[0], q->fail, err);
                rc = -1;
                break;
            }
            for (int r = 0; r < k; r++) {
                hc_nnoutput_free(&q->outs[gi[r]]);
                memset(&q->outs[gi[r]], 0, sizeof q->outs[0]);
            }
            if (k > 1) {
                limit = gather ? (k + 1) / 2 : 1;
                limit_until = done + (size_t)k;
                continue;
            }
            if (gather) {
                limit = per;
                limit_until = 0;
            }
            char reason[sizeof err->msg];
            snprintf(reason, sizeof reason, "%s", why + strlen(HC_BACKEND_SKIP));
            err->code = 0;
            err->msg[0] = '\0';
            if (q->done_mask)
                q->done_mask[gi[0]] = 0;
            if (q->skip(q->user, gi[0], reason)) {
                rc = hc_err_set(err, HC_EINTERRUPTED, "interrupted");
                break;
            }
        } else {
            for (int r = 0; r < k && q->done_mask; r++)
                q->done_mask[gi[r]] = 1;
        }
        done += (size_t)k;
        if (done >= limit_until)
            limit = per;
        if (q->progress && call_progress(q, done, n, &t)) {
            rc = hc_err_set(err, HC_EINTERRUPTED, "interrupted");
            break;
        }
    }
    timing_add(q->timing, &t);
    free(gp);
    free(go);
    free(gi);
    return rc;
}

/* The evaluation on one instance, j->batch positions per call. */
static int eval_one(hc_backend *b, const eval_job *j, hc_err *err)
{
    const hc_eval_request *q = j->req;
    size_t n = q->n;
    if (q->fail)
        memset(q->fail, 0, sizeof *q->fail), q->fail->position = -1;
    if (check_settings(j->s, j->batch, err))
        return -1;
    if (hc_backend_caps_of(b)->shape == HC_BACKEND_POSITION)
        return eval_position_calls(b, j, err);

    batch_buf bb;
    if (batch_init(&bb, j->net, j->batch, j->s, err))
        return -1;
    int rc = 0;
    hc_eval_timing t = {0};
    for (size_t done = 0; rc == 0 && done < n;) {
        int k = (int)(n - done < (size_t)j->batch ? n - done : (size_t)j->batch);
        for (int r = 0; r < k; r++)
            bb.idx[r] = q->order ? q->order[done + (size_t)r] : done + (size_t)r;
        int finished;
        rc = eval_rows(&bb, b, j, k, q->fail, err, &finished, &t);
        if (rc) {
            /* the rows before the failing one are done: let a streaming caller have them */
            if (finished > 0 && q->progress)
                call_progress(q, done + (size_t)finished, n, &t);
            break;
        }
        done += (size_t)k;
        if (rc == 0 && q->progress && call_progress(q, done, n, &t))
            rc = hc_err_set(err, HC_EINTERRUPTED, "interrupted");
    }
    timing_add(q->timing, &t);
    batch_free(&bb);
    return rc;
}

/* ---- lanes: one instance per thread ----------------------------------------------- */

typedef struct lanes_ctx {
    const eval_job *j;     /* j->batch: rows per call on each lane */
    size_t n;              /* j->req->n */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next;           /* the next place in the order to hand out */
    unsigned char *done;   /* [n] by place in the order */
    size_t fail_seq;       /* the first failed place in the order, n when none */
    hc_err fail_err;
    hc_eval_failure fail;
    int stop;
    int running;           /* lanes still working */
    hc_eval_timing timing; /* the lanes' work, added as each ends */
} lanes_ctx;

typedef struct lane_arg {
    lanes_ctx *c;
    hc_backend *b;
} lane_arg;

static void *lane_main(void *arg)
{
    lane_arg *la = arg;
    lanes_ctx *c = la->c;
    const eval_job *j = c->j;
    hc_err err = {0};
    hc_eval_timing t = {0};
    batch_buf bb;
    int ok = batch_init(&bb, j->net, j->batch, j->s, &err) == 0;
    pthread_mutex_lock(&c->mu);
    if (!ok && c->next < c->fail_seq) {
        /* No scratch for this lane: fail at the place it would have taken next. */
        c->fail_seq = c->next;
        c->fail_err = err;
        c->stop = 1;
    }
    while (ok && !c->stop && c->next < c->n) {
        /* a run of consecutive places in the order, so that the finished prefix grows evenly */
        size_t seq = c->next;
        int k = c->n - seq < (size_t)j->batch ? (int)(c->n - seq) : j->batch;
        c->next += (size_t)k;
        pthread_mutex_unlock(&c->mu);
        for (int r = 0; r < k; r++)
            bb.idx[r] = j->req->order ? j->req->order[seq + (size_t)r] : seq + (size_t)r;
        hc_eval_failure f = {.position = -1};
        hc_err e = {0};
        int finished = 0;
        int rc = eval_rows(&bb, la->b, j, k, &f, &e, &finished, &t);
        pthread_mutex_lock(&c->mu);
        for (int r = 0; r < finished; r++)
            c->done[seq + (size_t)r] = 1;
        if (rc != 0 && seq + (size_t)finished < c->fail_seq) {
            c->fail_seq = seq + (size_t)finished;
            c->fail_err = e;
            c->fail = f;
            c->stop = 1;
        }
        pthread_cond_signal(&c->cv);
    }
    c->running--;
    timing_add(&c->timing, &t);
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (ok)
        batch_free(&bb);
    return NULL;
}

/* The evaluation on n_lanes instances side by side, j->batch rows per call each. */
static int eval_lanes(hc_backend *lanes, int n_lanes, const eval_job *j, hc_err *err)
{
    size_t n = j->req->n;
    hc_eval_failure *fail = j->req->fail;
    hc_eval_progress progress = j->req->progress;
    if (fail)
        memset(fail, 0, sizeof *fail), fail->position = -1;
    if (n_lanes < 1)
        return hc_err_set(err, HC_EUSAGE, "no evaluation lanes");
    for (int l = 0; l < n_lanes; l++)
        if (hc_backend_caps_of(&lanes[l])->shape != HC_BACKEND_TENSOR || !hc_backend_caps_of(&lanes[l])->lanes)
            return hc_err_set(err, HC_EUSAGE, "backend %s cannot run as parallel lanes", lanes[l].kind->name);
    if (check_settings(j->s, j->batch, err))
        return -1;
    lanes_ctx c = {.j = j, .n = n, .fail_seq = n};
    c.done = hc_calloc(n ? n : 1, 1, err, "lane flags");
    lane_arg *args = hc_calloc((size_t)n_lanes, sizeof *args, err, "lanes");
    pthread_t *tids = hc_calloc((size_t)n_lanes, sizeof *tids, err, "lane threads");
    if (!c.done || !args || !tids) {
        free(c.done);
        free(args);
        free(tids);
        return -1;
    }
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cv, NULL);
    int started = 0;
    pthread_mutex_lock(&c.mu);
    for (int l = 0; l < n_lanes; l++) {
        args[l] = (lane_arg){&c, &lanes[l]};
        if (hc_thread_start(&tids[l], lane_main, &args[l]) != 0)
            break;
        started++;
        c.running++;
    }
    int interrupted = 0, rc = 0;
    if (started == 0) {
        c.stop = 1;
        rc = hc_err_set(err, HC_ENOMEM, "cannot start an evaluation lane");
    }
    /* Report the finished prefix as it grows; stop handing out on failure or interruption. */
    size_t reported = 0, prefix = 0;
    hc_eval_timing main_t = {0}; /* this thread's, apart from the lanes' (added under the lock) */
    while (started > 0) {
        while (prefix < n && c.done[prefix])
            prefix++;
        if (prefix > reported && progress) {
            reported = prefix;
            pthread_mutex_unlock(&c.mu);
            int stop = call_progress(j->req, prefix, n, &main_t);
            pthread_mutex_lock(&c.mu);
            if (stop && !interrupted) {
                interrupted = 1;
                c.stop = 1;
            }
            continue;
        }
        if (c.running == 0)
            break;
        pthread_cond_wait(&c.cv, &c.mu);
    }
    pthread_mutex_unlock(&c.mu);
    for (int l = 0; l < started; l++)
        pthread_join(tids[l], NULL);
    if (rc == 0 && c.fail_seq < n) {
        *err = c.fail_err;
        if (fail)
            *fail = c.fail;
        rc = -1;
    } else if (rc == 0 && interrupted) {
        rc = hc_err_set(err, HC_EINTERRUPTED, "interrupted");
    }
    timing_add(j->req->timing, &c.timing);
    timing_add(j->req->timing, &main_t);
    pthread_cond_destroy(&c.cv);
    pthread_mutex_destroy(&c.mu);
    free(c.done);
    free(args);
    free(tids);
    return rc;
}

static int eval_features(hc_backend *b, const hc_evaluator_opts *o, const char *features_path, const hc_position *ps,
                         size_t n_ps, hc_nnoutput **outs_out, size_t *n_out, hc_err *err)
{
    const hc_net *net = o->net;
    int batch = o->batch;
    const hc_eval_settings *s = &o->settings;
    *outs_out = NULL;
    *n_out = 0;
    if (check_settings(s, batch, err))
        return -1;
    if (hc_backend_caps_of(b)->shape != HC_BACKEND_TENSOR)
        return hc_err_set(err, HC_EUSAGE, "--features needs a tensor backend (%s takes positions)", b->kind->name);
    if (net->num_input_meta_c > 0 && !ps)
        return hc_err_set(err, HC_EUSAGE, "a net with SGF-metadata input needs --positions with --features");
    hc_istream *in = hc_istream_open(features_path, err);
    if (!in)
        return -1;
    batch_buf bb;
    if (batch_init(&bb, net, batch, s, err)) {
        hc_istream_close(in);
        return -1;
    }
    size_t cap = 0, n = 0;
    hc_nnoutput *outs = NULL;
    int rc = 0, at_eof = 0;
    const size_t spatial_n = (size_t)bb.c_spatial * (size_t)bb.area;
    while (rc == 0 && !at_eof) {
        int k = 0;
        for (; k < batch; k++) {
            long got = hc_istream_read_some(in, bb.unsym, sizeof(float) * spatial_n, err);
            if (got == 0) {
                at_eof = 1;
                break;
            }
            float *global = bb.global + (size_t)k * (size_t)bb.c_global;
            if (got < 0 || (size_t)got != sizeof(float) * spatial_n ||
                hc_istream_read(in, global, sizeof(float) * (size_t)bb.c_global, err)) {
                rc = hc_err_set(err, HC_EFORMAT, "%s: record %zu is truncated (a record is %d+%d floats of %dx%d)",
                                features_path, n + (size_t)k, bb.c_spatial, bb.c_global, s->nn_x, s->nn_y);
                break;
            }
            size_t i = n + (size_t)k;
            const hc_position *p = ps && i < n_ps ? &ps[i] : NULL;
            if (ps && !p) {
                rc = hc_err_set(err, HC_EUSAGE, "%s has more records than the positions file (%zu)", features_path,
                                n_ps);
                break;
            }
            unsigned char *legal = bb.legal + (size_t)k * (size_t)(bb.area + 1);
            hc_pp_position pp = {.x_size = s->nn_x, .y_size = s->nn_y, .legal = legal};
            if (p) {
                const hc_history *h = hc_history_cache_get(bb.histories, p, err);
                if (!h) {
                    rc = -1;
                    break;
                }
                hc_history_legal_map(h, s->nn_x, s->nn_y, legal);
                const hc_rules *rules = hc_history_rules(h);
                pp.x_size = p->x_size;
                pp.y_size = p->y_size;
                pp.next_pla_white = hc_history_next_pla(h) == HC_WHITE;
                pp.suppress_no_result = rules->ko_rule != HC_KO_SIMPLE && rules->scoring_rule != HC_SCORING_TERRITORY;
                pp.symmetry = p->symmetry;
                if (bb.c_meta > 0 && hc_sgfmeta_fill_row(&bb.meta_profile, pp.next_pla_white, p->x_size * p->y_size,
                                                         bb.meta + (size_t)k * (size_t)bb.c_meta, err))
                    rc = -1;
                if (rc)
                    break;
            } else {
                /* Without positions: empty on-board points (mask set, no stone) and pass. */
                for (int j = 0; j < bb.area; j++)
                    legal[j] = bb.unsym[j] == 1.0f && bb.unsym[bb.area + j] == 0.0f && bb.unsym[2 * bb.area + j] == 0.0f;
                legal[bb.area] = 1;
            }
            bb.pp[k] = pp;
            hc_sym_apply_planes(bb.unsym, bb.spatial + (size_t)k * spatial_n, bb.c_spatial, s->nn_y, s->nn_x,
                                pp.symmetry);
        }
        if (rc || k == 0)
            break;
        if (hc_backend_eval(b, k, bb.spatial, bb.global, bb.c_meta > 0 ? bb.meta : NULL, bb.raw, err)) {
            rc = -1;
            break;
        }
        if (n + (size_t)k > cap) {
            cap = cap ? cap * 2 : 1024;
            hc_nnoutput *no = realloc(outs, cap * sizeof *outs);
            if (!no) {
                rc = hc_err_set(err, HC_ENOMEM, "out of memory for outputs");
                break;
            }
            outs = no;
        }
        for (int r = 0; r < k; r++) {
            if (finish_row(&bb, r, s, &outs[n], err)) {
                hc_err_prefix(err, "record %zu: ", n);
                rc = -1;
                break;
            }
            n++;
        }
    }
    batch_free(&bb);
    hc_istream_close(in);
    if (rc == 0 && ps && n != n_ps)
        rc = hc_err_set(err, HC_EUSAGE, "%s has %zu records but the positions file has %zu", features_path, n, n_ps);
    if (rc) {
        hc_nnoutputs_free(outs, n);
        return -1;
    }
    *outs_out = outs;
    *n_out = n;
    return 0;
}

int hc_eval_positions(hc_backend *b, const hc_net *net, const hc_position *ps, size_t n, const size_t *order,
                      int batch, const hc_eval_settings *s, hc_nnoutput *outs, unsigned char *done_mask,
                      hc_eval_failure *fail, hc_eval_progress progress, void *user, hc_err *err)
{
    hc_eval_request req = {.ps = ps, .n = n, .order = order, .outs = outs, .done_mask = done_mask, .fail = fail,
                           .progress = progress, .user = user};
    eval_job j = {.net = net, .s = s, .batch = batch, .req = &req};
    return eval_one(b, &j, err);
}

/* ---- the evaluator ------------------------------------------------------------------ */

struct hc_evaluator {
    hc_evaluator_opts o;
    hc_backend one;    /* the instance when there are no lanes (unless o.backend) */
    hc_backend *use;   /* o.backend or &one */
    hc_backend *lanes; /* [n_lanes], the first one's state shared by the others where the kind can */
    int n_lanes, lane_batch;
};

/* hc_evaluator_lanes_for with spec looked up in reg (NULL: the user registry). */
static int lanes_in(const hc_backend_registry *reg, const char *spec, int batch, int threads)
{
    const hc_backend_kind *k = hc_backend_find(reg, spec, NULL, NULL);
    return k && k->caps.lanes && k->caps.shape == HC_BACKEND_TENSOR && batch >= 1 && threads > 1 ? threads : 0;
}

int hc_evaluator_lanes_for(const char *spec, int batch, int threads)
{
    return lanes_in(NULL, spec, batch, threads);
}

int hc_evaluator_lane_batch(int batch, int n_lanes)
{
    return n_lanes > 0 && batch > 0 ? (batch + n_lanes - 1) / n_lanes : 1;
}

static void close_lanes(hc_backend *lanes, int n_lanes)
{
    /* The first lane last: the others may borrow from it. */
    for (int l = n_lanes - 1; lanes && l >= 0; l--)
        hc_backend_close(&lanes[l]);
    free(lanes);
}

/* n_lanes instances of lane_batch rows and one thread each. */
static hc_backend *open_lanes(const hc_backend_open_opts *bo, int n_lanes, hc_err *err)
{
    hc_backend *lanes = hc_calloc((size_t)n_lanes, sizeof *lanes, err, "backend lanes");
    for (int l = 0; lanes && l < n_lanes; l++) {
        int rc = l == 0 ? hc_backend_open_with(&lanes[0], bo, err) : hc_backend_open_like(&lanes[l], &lanes[0], bo, err);
        if (rc) {
            if (l > 0)
                hc_err_prefix(err, "lane %d: ", l);
            close_lanes(lanes, l);
            return NULL;
        }
    }
    return lanes;
}

hc_evaluator *hc_evaluator_open(const hc_evaluator_opts *o, hc_err *err)
{
    hc_evaluator *ev = hc_calloc(1, sizeof *ev, err, "evaluator");
    if (!ev)
        return NULL;
    ev->o = *o;
    if (ev->o.batch < 1)
        ev->o.batch = 1;
    if (ev->o.threads < 1)
        ev->o.threads = 1;
    if (o->backend) {
        ev->use = o->backend;
        return ev;
    }
    const hc_eval_settings *s = &ev->o.settings;
    hc_backend_open_opts bo = {.spec = o->spec, .net = o->net, .nx = s->nn_x, .ny = s->nn_y,
                               .max_batch = ev->o.batch, .threads = ev->o.threads, .profile = o->profile,
                               .active = o->active, .n_active = o->n_active, .registry = o->registry};
    ev->n_lanes = o->one_instance ? 0 : lanes_in(o->registry, o->spec, ev->o.batch, ev->o.threads);
    if (ev->n_lanes > 0) {
        const hc_backend_kind *kind = hc_backend_find(o->registry, o->spec, NULL, NULL);
        ev->lane_batch = kind->caps.lanes == HC_LANES_WHOLE_BATCH ? ev->o.batch : hc_evaluator_lane_batch(ev->o.batch, ev->n_lanes);
        bo.max_batch = ev->lane_batch;
        bo.threads = 1;
        ev->lanes = open_lanes(&bo, ev->n_lanes, err);
        if (!ev->lanes) {
            free(ev);
            return NULL;
        }
        ev->use = &ev->lanes[0];
        return ev;
    }
    if (hc_backend_open_with(&ev->one, &bo, err)) {
        free(ev);
        return NULL;
    }
    ev->use = &ev->one;
    return ev;
}

int hc_evaluator_run(hc_evaluator *ev, const hc_eval_request *req, hc_err *err)
{
    const hc_evaluator_opts *o = &ev->o;
    eval_job j = {.net = o->net, .s = &o->settings, .batch = ev->n_lanes > 0 ? ev->lane_batch : o->batch, .req = req};
    if (ev->n_lanes > 0)
        return eval_lanes(ev->lanes, ev->n_lanes, &j, err);
    return eval_one(ev->use, &j, err);
}

int hc_evaluator_run_features(hc_evaluator *ev, const char *features_path, const hc_position *ps, size_t n_ps,
                              hc_nnoutput **outs, size_t *n_out, hc_err *err)
{
    *outs = NULL;
    *n_out = 0;
    if (ev->n_lanes > 0)
        return hc_err_set(err, HC_EINTERNAL, "feature rows need an evaluator of one instance (one_instance)");
    return eval_features(ev->use, &ev->o, features_path, ps, n_ps, outs, n_out, err);
}

const hc_resolution *hc_evaluator_resolution(const hc_evaluator *ev)
{
    return hc_backend_resolution(ev->use);
}

const char *hc_evaluator_identity(const hc_evaluator *ev)
{
    return hc_backend_identity(ev->use);
}

int hc_evaluator_finish(hc_evaluator *ev, hc_engine_stats *st, hc_err *err)
{
    *st = hc_engine_stats_unknown();
    return hc_backend_finish(ev->use, st, err);
}

int hc_evaluator_lanes(const hc_evaluator *ev)
{
    return ev->n_lanes;
}

void hc_evaluator_close(hc_evaluator *ev)
{
    if (!ev)
        return;
    close_lanes(ev->lanes, ev->n_lanes);
    hc_backend_close(&ev->one);
    free(ev);
}
