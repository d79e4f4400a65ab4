/* file:PATH — outputs recorded elsewhere (another machine, KataGo's own testgpuerror
 * -reference-file, an earlier run) played back as a position backend. The file is an outputs
 * file in the golden format or KataGo's reference-file format (harness/data/nnoutput.h reads both);
 * its i-th record belongs to the position whose `index` field is i, so a file written in
 * KataGo's visiting order serves any subset or order of the positions it was written for.
 *
 * The whole file is read at open, where every record's buffer size is checked against the
 * board config's; a position whose index has no record fails at evaluation, naming the file.
 *
 * file:@resolution=W,S,P,O PATH declares that the file holds values rounded to that resolution
 * (winrate, score, policy, ownership; harness/data/nnoutput.h hc_resolution), e.g. outputs printed by
 * an engine; @resolution=kata-raw-nn is KataGo's kata-raw-nn printing (the gtp: backend's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"

typedef struct file_backend {
    char *path;
    hc_resolution res;
    hc_nnoutput *recs;
    size_t n;
    int nx, ny;
} file_backend;

static void file_close(void *inst)
{
    file_backend *f = inst;
    if (!f)
        return;
    hc_nnoutputs_free(f->recs, f->n);
    free(f->path);
    free(f);
}

typedef struct file_opts {
    hc_resolution res;
    char *path;
} file_opts;

static void file_free_opts(void *opts)
{
    file_opts *fo = opts;
    if (fo)
        free(fo->path);
    free(fo);
}

/* [@resolution=W,S,P,O|kata-raw-nn] PATH; the path must name a readable file: found before any work. */
static void *file_parse(const char *params, hc_err *err)
{
    const char *p = params ? params : "";
    file_opts *fo = hc_calloc(1, sizeof *fo, err, "file options");
    if (!fo)
        return NULL;
    if (strncmp(p, "@resolution=", 12) == 0) {
        const char *v = p + 12;
        size_t len = strcspn(v, " \t");
        hc_resolution *r = &fo->res;
        char extra;
        if (len == 11 && strncmp(v, "kata-raw-nn", 11) == 0) {
            *r = (hc_resolution){.winrate = 5e-7, .score = 5e-4, .policy = 5e-7, .ownership = 5e-8};
        } else {
            char buf[200];
            snprintf(buf, sizeof buf, "%.*s", (int)(len < 199 ? len : 199), v);
            if (sscanf(buf, "%lf,%lf,%lf,%lf%c", &r->winrate, &r->score, &r->policy, &r->ownership, &extra) != 4 ||
                !(r->winrate >= 0 && r->score >= 0 && r->policy >= 0 && r->ownership >= 0)) {
                hc_err_set(err, HC_ECONFIG, "file: @resolution=%s: expected W,S,P,O (four numbers >= 0) or kata-raw-nn",
                           buf);
                file_free_opts(fo);
                return NULL;
            }
        }
        p = v + len;
        while (*p == ' ' || *p == '\t')
            p++;
    }
    if (!*p) {
        hc_err_set(err, HC_ECONFIG, "file: needs a path (file:[@resolution=...] PATH to an outputs file)");
        file_free_opts(fo);
        return NULL;
    }
    if (access(p, R_OK) != 0) {
        hc_err_set(err, HC_ECONFIG, "file: %s: %s", p, strerror(errno));
        file_free_opts(fo);
        return NULL;
    }
    if (!(fo->path = strdup(p))) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        file_free_opts(fo);
        return NULL;
    }
    return fo;
}

static void *file_open(const void *opts, const hc_backend_open_opts *o, hc_err *err)
{
    const file_opts *fo = opts;
    int nx = o->nx, ny = o->ny;
    file_backend *f = hc_calloc(1, sizeof *f, err, "file backend");
    if (!f)
        return NULL;
    f->nx = nx;
    f->ny = ny;
    f->res = fo->res;
    f->path = strdup(fo->path);
    if (!f->path) {
        hc_err_set(err, HC_ENOMEM, "out of memory");
        file_close(f);
        return NULL;
    }
    if (hc_nnoutputs_load(f->path, &f->recs, &f->n, err)) {
        file_close(f);
        return NULL;
    }
    if (f->n == 0) {
        hc_err_set(err, HC_EFORMAT, "%s: no outputs in the file", f->path);
        file_close(f);
        return NULL;
    }
    for (size_t i = 0; i < f->n; i++) {
        const hc_nnoutput *r = &f->recs[i];
        if (r->nn_x_len != nx || r->nn_y_len != ny) {
            hc_err_set(err, HC_EFORMAT,
                       "%s: record %zu is for a %dx%d NN buffer (nnXLen x nnYLen), the board config's is %dx%d",
                       f->path, i, r->nn_x_len, r->nn_y_len, nx, ny);
            file_close(f);
            return NULL;
        }
    }
    return f;
}

static int file_eval_positions(void *inst, int n, const hc_position *pos, hc_nnoutput *outs, hc_err *err)
{
    file_backend *f = inst;
    const size_t area = (size_t)f->nx * (size_t)f->ny;
    for (int i = 0; i < n; i++) {
        long idx = pos[i].index;
        if (idx < 0 || (size_t)idx >= f->n)
            return hc_err_set(err, HC_EFORMAT,
                              "%s has %zu outputs; the position with index %ld needs at least %ld (are the file and "
                              "the positions from the same set?)",
                              f->path, f->n, idx, idx + 1);
        const hc_nnoutput *r = &f->recs[idx];
        hc_nnoutput *o = &outs[i];
        if (o->nn_x_len != f->nx || o->nn_y_len != f->ny || !o->policy_probs)
            return hc_err_set(err, HC_EINTERNAL, "file: output %d was not initialised for the %dx%d buffer", i,
                              f->nx, f->ny);
        o->white_win_prob = r->white_win_prob;
        o->white_loss_prob = r->white_loss_prob;
        o->white_no_result_prob = r->white_no_result_prob;
        o->white_score_mean = r->white_score_mean;
        o->white_score_mean_sq = r->white_score_mean_sq;
        o->white_lead = r->white_lead;
        o->var_time_left = r->var_time_left;
        o->shortterm_winloss_error = r->shortterm_winloss_error;
        o->shortterm_score_error = r->shortterm_score_error;
        o->policy_optimism_used = r->policy_optimism_used;
        memcpy(o->policy_probs, r->policy_probs, sizeof(float) * (area + 1));
        if (r->white_owner_map && o->white_owner_map) {
            memcpy(o->white_owner_map, r->white_owner_map, sizeof(float) * area);
        } else if (o->white_owner_map) {
            /* A file without ownership: say so, rather than hand back the zeros of init. */
            free(o->white_owner_map);
            o->white_owner_map = NULL;
        }
    }
    return 0;
}

static const hc_resolution *file_resolution(void *inst)
{
    file_backend *f = inst;
    return &f->res;
}

static const hc_backend_ops file_ops = {
    .eval_positions = file_eval_positions,
    .resolution = file_resolution,
    .close = file_close,
};

const hc_backend_kind hc_backend_file = {
    .name = "file",
    .syntax = "file:[@resolution=W,S,P,O|kata-raw-nn] PATH",
    .summary = "plays back recorded outputs (golden or KataGo reference-file JSONL); record i is position i",
    .caps = {.shape = HC_BACKEND_POSITION, .resolution = 1},
    .parse = file_parse,
    .free_opts = file_free_opts,
    .open = file_open,
    .ops = &file_ops,
};
