/* The checks and the replay the gtp: and analysis: backends share: can an external KataGo engine
 * be given this position record, and would its replay be the record (engine_replay.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/engine_replay.h"
#include "harness/features/nnfeatures.h"

struct hc_replay_cmp {
    const hc_net *net;
    int nx, ny;
    float *feat_a, *feat_b, *glob_a, *glob_b; /* a: the record, b: the replay */
    unsigned char *legal_a, *legal_b;
};

void hc_replay_vertex(int x, int y, int y_size, char *buf, size_t len)
{
    static const char cols[] = "ABCDEFGHJKLMNOPQRSTUVWXYZ";
    if (x < 0)
        snprintf(buf, len, "pass");
    else
        snprintf(buf, len, "%c%d", cols[x], y_size - y);
}

int hc_replay_start(const hc_position *p, const hc_replay_words *w, hc_rules *rules, hc_board *b, char *why,
                    size_t len, hc_err *err)
{
    why[0] = '\0';
    if (p->initial_encore_phase > 0) {
        snprintf(why, len, "initial encore phase %d: %s", p->initial_encore_phase, w->encore);
        return 0;
    }
    if (p->x_size > 19 || p->y_size > 19 || p->x_size < 2 || p->y_size < 2) {
        snprintf(why, len, "board %dx%d: %s 2..19", p->x_size, p->y_size, w->board);
        return 0;
    }
    if (!(p->komi * 2 == floorf(p->komi * 2)) || p->komi < -150 || p->komi > 150) {
        snprintf(why, len, "komi %g: %s integers and half-integers in [-150, 150]", (double)p->komi, w->komi);
        return 0;
    }
    if (hc_rules_parse(p->rules, rules, err))
        return -1;
    if (hc_board_init(b, p->x_size, p->y_size, err))
        return -1;
    int nst = p->n_initial_black + p->n_initial_white;
    hc_placement *pl = hc_malloc(sizeof *pl * (size_t)(nst ? nst : 1), err, "stones");
    if (!pl)
        return -1;
    for (int i = 0; i < p->n_initial_black; i++)
        pl[i] = (hc_placement){hc_loc_of(p->initial_black[i].x, p->initial_black[i].y, p->x_size), HC_BLACK};
    for (int i = 0; i < p->n_initial_white; i++)
        pl[p->n_initial_black + i] =
            (hc_placement){hc_loc_of(p->initial_white[i].x, p->initial_white[i].y, p->x_size), HC_WHITE};
    int ok = hc_board_set_stones_fail_if_no_libs(b, pl, nst);
    free(pl);
    if (!ok)
        snprintf(why, len, "setup stones that overlap or have no liberties%s", w->stones);
    return 0;
}

int hc_replay_restart_history(hc_history *h, int pla, int handicap, hc_err *err)
{
    hc_board b = *hc_history_board(h);
    hc_board_clear_ko_loc(&b);
    if (hc_history_reset(h, &b, pla, hc_history_encore_phase(h), err))
        return -1;
    hc_history_set_assume_multiple_starting_black_moves_are_handicap(h, handicap);
    return 0;
}

hc_replay_cmp *hc_replay_cmp_new(const hc_net *net, int nx, int ny, hc_err *err)
{
    hc_replay_cmp *c = hc_malloc(sizeof *c, err, "replay check");
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->net = net;
    c->nx = nx;
    c->ny = ny;
    size_t area = (size_t)nx * (size_t)ny;
    c->feat_a = hc_malloc(sizeof(float) * area * (size_t)net->num_input_c, err, "features");
    c->feat_b = hc_malloc(sizeof(float) * area * (size_t)net->num_input_c, err, "features");
    c->glob_a = hc_malloc(sizeof(float) * (size_t)(net->num_input_global_c + 1), err, "features");
    c->glob_b = hc_malloc(sizeof(float) * (size_t)(net->num_input_global_c + 1), err, "features");
    c->legal_a = hc_malloc(area + 1, err, "legal map");
    c->legal_b = hc_malloc(area + 1, err, "legal map");
    if (!c->feat_a || !c->feat_b || !c->glob_a || !c->glob_b || !c->legal_a || !c->legal_b) {
        hc_replay_cmp_free(c);
        return NULL;
    }
    return c;
}

void hc_replay_cmp_free(hc_replay_cmp *c)
{
    if (!c)
        return;
    free(c->feat_a);
    free(c->feat_b);
    free(c->glob_a);
    free(c->glob_b);
    free(c->legal_a);
    free(c->legal_b);
    free(c);
}

int hc_replay_compare(hc_replay_cmp *c, const hc_eval_settings *s, const hc_position *p, const hc_history *gh,
                      hc_replay_diff *d, hc_err *err)
{
    memset(d, 0, sizeof *d);
    hc_history *rh = hc_history_from_position(p, err);
    if (!rh)
        return -1;
    const hc_net *net = c->net;
    hc_nninput_params prm = hc_nninput_params_default();
    prm.playout_doubling_advantage = s->playout_doubling_advantage;
    prm.policy_optimism = s->policy_optimism;
    prm.nn_policy_temperature = s->policy_temperature;
    prm.pass_alive_suicide_rules_override = net->prefer_pass_alive_under_suicide ? 1 : 0;
    size_t area = (size_t)c->nx * (size_t)c->ny;
    size_t ns = area * (size_t)net->num_input_c;
    size_t ng = (size_t)net->num_input_global_c;
    int rc = 0;
    if (hc_features_fill(net->input_version, rh, p->next_pla, &prm, c->nx, c->ny, c->feat_a, c->glob_a, err) ||
        hc_features_fill(net->input_version, gh, p->next_pla, &prm, c->nx, c->ny, c->feat_b, c->glob_b, err)) {
        rc = -1;
    } else {
        hc_history_legal_map(rh, c->nx, c->ny, c->legal_a);
        hc_history_legal_map(gh, c->nx, c->ny, c->legal_b);
        /* bit patterns, not values: -0 and NaN count as differences too */
        for (size_t k = 0; k < ns && !d->kind; k++)
            if (memcmp(&c->feat_a[k], &c->feat_b[k], sizeof(float)) != 0)
                *d = (hc_replay_diff){HC_REPLAY_SPATIAL, k / area, 0, 0};
        for (size_t k = 0; k < ng && !d->kind; k++)
            if (memcmp(&c->glob_a[k], &c->glob_b[k], sizeof(float)) != 0)
                *d = (hc_replay_diff){HC_REPLAY_GLOBAL, k, (double)c->glob_a[k], (double)c->glob_b[k]};
        if (!d->kind && memcmp(c->legal_a, c->legal_b, area + 1) != 0)
            d->kind = HC_REPLAY_LEGAL;
    }
    hc_history_free(rh);
    return rc;
}
