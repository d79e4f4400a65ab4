/* The run's checks before any work: backend specs, nets, positions and NN buffers. */
#include "harness/run/preflight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/base/sha256.h"
#include "harness/data/positions.h"
#include "harness/data/sgf.h"
#include "harness/data/sgfwalk.h"
#include "harness/go/history.h"

typedef struct collect_ctx {
    hc_position *ps;
    size_t n, cap;
} collect_ctx;

static int collect_position(const hc_position *p, const hc_history *h, void *user, hc_err *err)
{
    (void)h;
    collect_ctx *cc = user;
    if (cc->n == cc->cap) {
        size_t cap = cc->cap ? cc->cap * 2 : 256;
        hc_position *np = realloc(cc->ps, cap * sizeof *np);
        if (!np)
            return hc_err_set(err, HC_ENOMEM, "out of memory recording positions");
        cc->ps = np;
        cc->cap = cap;
    }
    if (hc_position_copy(&cc->ps[cc->n], p, err))
        return -1;
    cc->n++;
    return 0;
}

/* The positions of a board config, and a digest of their source for the cache key. */
static int load_positions(const hc_board_cfg *b, hc_position **ps, size_t *n, char digest[65], hc_err *err)
{
    const char *src = b->positions ? b->positions : b->sgf;
    if (hc_sha256_file(src, digest, err))
        return -1;
    if (b->positions)
        return hc_positions_load(b->positions, ps, n, err);
    hc_sgf_collection *c = hc_sgf_load(b->sgf, err);
    if (!c)
        return -1;
    collect_ctx cc = {0};
    int rc = hc_record_collection(c, collect_position, &cc, err);
    hc_sgf_free(c);
    if (rc) {
        hc_positions_free(cc.ps, cc.n);
        return -1;
    }
    *ps = cc.ps;
    *n = cc.n;
    return 0;
}

/* Checks a loaded net against its config: digest and expected version. */
static int check_net(const hc_net_cfg *nc, const hc_net *net, const char *digest, hc_err *err)
{
    if (nc->sha256 && strcmp(nc->sha256, digest) != 0)
        return hc_err_set(err, HC_ECONFIG, "%s: %s has sha256 %s, the config says %s", nc->where, nc->model, digest,
                          nc->sha256);
    if (nc->model_version >= 0 && nc->model_version != net->model_version)
        return hc_err_set(err, HC_ECONFIG, "%s: %s is model version %d, the config says %d", nc->where, nc->model,
                          net->model_version, nc->model_version);
    return 0;
}

struct hc_preflight {
    const hc_suite *suite;
    /* Each net a selected case needs (NULL: none), its digest; each board's positions (NULL: no
     * case needs it) and their digest. */
    hc_net **nets;
    char (*net_digest)[65];
    hc_position **pos;
    size_t *n_pos;
    char (*pos_digest)[65];
};

/* hc_preflight_run: the first mistake is the error (see preflight.h). */
static int check(hc_preflight *pf, const hc_suite *s, const hc_backend_registry *reg, hc_preflight_expand expand_spec,
                 hc_err *err)
{
    pf->nets = hc_calloc(s->n_nets ? s->n_nets : 1, sizeof *pf->nets, err, "nets");
    pf->net_digest = hc_calloc(s->n_nets ? s->n_nets : 1, sizeof *pf->net_digest, err, "nets");
    pf->pos = hc_calloc(s->n_boards ? s->n_boards : 1, sizeof *pf->pos, err, "positions");
    pf->n_pos = hc_calloc(s->n_boards ? s->n_boards : 1, sizeof *pf->n_pos, err, "positions");
    pf->pos_digest = hc_calloc(s->n_boards ? s->n_boards : 1, sizeof *pf->pos_digest, err, "positions");
    if (!pf->nets || !pf->net_digest || !pf->pos || !pf->n_pos || !pf->pos_digest)
        return -1;
    for (size_t k = 0; k < s->n_cases; k++) {
        const hc_case *c = &s->cases[k];
        const hc_backend_cfg *bc = &s->backends[c->backend];
        char spec[2048];
        hc_err e = {0};
        if (expand_spec(s, c, bc->spec, spec, sizeof spec, &e) || hc_backend_check(reg, spec, &e))
            return hc_err_set(err, HC_ECONFIG, "%s: %s (in backend \"%s\")", bc->spec_where ? bc->spec_where : bc->where,
                              e.msg, bc->name);
    }
    for (size_t ni = 0; ni < s->n_nets; ni++) {
        int used = 0;
        for (size_t k = 0; k < s->n_cases; k++)
            used |= s->cases[k].net == ni;
        if (!used)
            continue;
        const hc_net_cfg *nc = &s->nets[ni];
        hc_err e = {0};
        if (hc_sha256_file(nc->model, pf->net_digest[ni], &e) || !(pf->nets[ni] = hc_net_load(nc->model, &e)) ||
            check_net(nc, pf->nets[ni], pf->net_digest[ni], &e)) {
            int code = e.code;
            if (strncmp(e.msg, nc->where, strlen(nc->where)) == 0) /* check_net names the place already */
                hc_err_set(err, code, "%s (net %s)", e.msg, nc->name);
            else
                hc_err_set(err, code, "%s: net %s: %s", nc->where, nc->name, e.msg);
            return -1;
        }
        hc_net_reduce_activations(pf->nets[ni]);
    }
    for (size_t bi = 0; bi < s->n_boards; bi++) {
        int used = 0;
        for (size_t k = 0; k < s->n_cases; k++)
            used |= s->cases[k].board == bi;
        if (!used)
            continue;
        const hc_board_cfg *b = &s->boards[bi];
        const char *src = b->positions ? b->positions : b->sgf;
        hc_err e = {0};
        if (load_positions(b, &pf->pos[bi], &pf->n_pos[bi], pf->pos_digest[bi], &e) ||
            (pf->n_pos[bi] == 0 && hc_err_set(&e, HC_EFORMAT, "%s: no positions", src))) {
            int code = e.code;
            hc_err_set(err, code, "%s: board %s: %s", b->where, b->name, e.msg);
            return -1;
        }
        /* Each case's NN buffer (a matrix entry may override the board's) must hold every record. */
        for (size_t k = 0; k < s->n_cases; k++) {
            const hc_case *c = &s->cases[k];
            const hc_board_cfg *cs = &c->settings;
            if (c->board != bi)
                continue;
            for (size_t i = 0; i < pf->n_pos[bi]; i++) {
                const hc_position *p = &pf->pos[bi][i];
                if (p->x_size <= cs->nn_x_len && p->y_size <= cs->nn_y_len &&
                    (!cs->require_exact_nn_len || (p->x_size == cs->nn_x_len && p->y_size == cs->nn_y_len)))
                    continue;
                char at[1200];
                if (p->file_line > 0)
                    snprintf(at, sizeof at, "%s:%ld: position %zu", src, p->file_line, i);
                else
                    snprintf(at, sizeof at, "%s: position %zu", src, i);
                return hc_err_set(err, HC_ECONFIG, "%s: %s is %dx%d, which %s the %dx%d NN buffer of board %s", cs->where,
                                  at, p->x_size, p->y_size,
                                  cs->require_exact_nn_len ? "must exactly fill" : "does not fit", cs->nn_x_len,
                                  cs->nn_y_len, b->name);
            }
        }
    }
    return 0;
}

hc_preflight *hc_preflight_run(const hc_suite *s, const hc_backend_registry *reg, hc_preflight_expand expand,
                               hc_err *err)
{
    hc_preflight *p = hc_calloc(1, sizeof *p, err, "preflight");
    if (!p)
        return NULL;
    p->suite = s;
    if (check(p, s, reg, expand, err)) {
        hc_preflight_free(p);
        return NULL;
    }
    return p;
}

hc_net *hc_preflight_net(const hc_preflight *p, size_t ni)
{
    return p->nets[ni];
}

const char *hc_preflight_net_digest(const hc_preflight *p, size_t ni)
{
    return p->net_digest[ni];
}

void hc_preflight_release_net(hc_preflight *p, size_t ni)
{
    hc_net_free(p->nets[ni]);
    p->nets[ni] = NULL;
}

const hc_position *hc_preflight_positions(const hc_preflight *p, size_t bi, size_t *n)
{
    *n = p->n_pos[bi];
    return p->pos[bi];
}

const char *hc_preflight_positions_digest(const hc_preflight *p, size_t bi)
{
    return p->pos_digest[bi];
}

void hc_preflight_free(hc_preflight *p)
{
    if (!p)
        return;
    const hc_suite *s = p->suite;
    for (size_t i = 0; p->nets && i < s->n_nets; i++)
        hc_net_free(p->nets[i]);
    for (size_t i = 0; p->pos && i < s->n_boards; i++)
        hc_positions_free(p->pos[i], p->n_pos[i]);
    free(p->nets);
    free(p->net_digest);
    free(p->pos);
    free(p->n_pos);
    free(p->pos_digest);
    free(p);
}
