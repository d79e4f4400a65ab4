/* The pieces every input version's filler builds its planes from (KataGo's neuralnet/nninputs.cpp helpers). */
#include "harness/features/planes.h"

#include <math.h>
#include <string.h>

#include "harness/base/sizes.h"

bool hc_feat_suicide_legal_for_pass_alive(const hc_history *h, const hc_nninput_params *p)
{
    bool always = p->pass_alive_suicide_rules_override >= 0 ? p->pass_alive_suicide_rules_override != 0
                                                            : hc_history_always_pass_alive_under_suicide(h);
    return hc_history_rules(h)->multi_stone_suicide_legal || always;
}

/* iterLadders: marks feature on every stone in (or puttable into) an inescapable atari; for the
 * current board also the attacker's working moves (feature 17) against opp stones. */
static int iter_ladders(const hc_feat_ctx *c, const hc_board *board, int feature, int opp_for_working, hc_locbuf *buf,
                        hc_err *err)
{
    hc_loc solved_heads[HC_BOARD_MAX_PLAY];
    bool solved_value[HC_BOARD_MAX_PLAY];
    int n_solved = 0;
    hc_board copy = *board;
    for (int y = 0; y < board->y_size; y++)
        for (int x = 0; x < board->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, board->x_size);
            int stone = board->colors[loc];
            if (stone != HC_C_BLACK && stone != HC_C_WHITE)
                continue;
            int libs = hc_board_liberties(board, loc);
            if (libs != 1 && libs != 2)
                continue;
            int pos = y * c->nn_x + x;
            hc_loc head = board->chain_head[loc];
            bool already = false;
            for (int i = 0; i < n_solved; i++)
                if (solved_heads[i] == head) {
                    already = true;
                    if (solved_value[i])
                        hc_feat_set(c, pos, feature);
                    break;
                }
            if (already)
                continue;
            hc_loc working[2];
            int n_working = 0;
            bool laddered = libs == 1 ? hc_board_ladder_captured(&copy, loc, true, buf)
                                      : hc_board_ladder_captured_attacker_first_2libs(&copy, loc, buf, working, &n_working);
            if (buf->oom)
                return hc_err_set(err, HC_ENOMEM, "out of memory in the ladder search");
            solved_heads[n_solved] = head;
            solved_value[n_solved] = laddered;
            n_solved++;
            if (laddered) {
                hc_feat_set(c, pos, feature);
                if (opp_for_working && stone == opp_for_working && libs > 1)
                    for (int j = 0; j < n_working; j++)
                        hc_feat_set(c, hc_feat_pos(c, working[j]), 17);
            }
        }
    return 0;
}

/* Planes 18/19 of fillRowV6 and fillRowV7. */
bool hc_feat_area_planes_v6(const hc_feat_ctx *c, const hc_history *h, int pla, const hc_nninput_params *params)
{
    const hc_board *board = hc_history_board(h);
    const hc_rules *rules = hc_history_rules(h);
    int x_size = board->x_size, y_size = board->y_size;
    int opp = hc_opp(pla);
    int encore = hc_history_encore_phase(h);
    int8_t area[HC_BOARD_ARR];
    bool has_area = false;
    int tax_adj_for_pla = 0;
    bool sui_pa = hc_feat_suicide_legal_for_pass_alive(h, params);
    if (rules->scoring_rule == HC_SCORING_AREA && rules->tax_rule == HC_TAX_NONE) {
        has_area = true;
        hc_board_calculate_area(board, area, true, true, true, sui_pa);
    } else {
        bool keep_terr = false, keep_stones = false;
        if (rules->scoring_rule == HC_SCORING_AREA) {
            has_area = true;
            keep_stones = true;
        } else if (rules->tax_rule == HC_TAX_NONE) {
            if (encore >= 2) {
                has_area = true;
                keep_terr = true;
            }
        } else if (encore >= 2) {
            has_area = true;
        }
        if (has_area) {
            int cnt = 0;
            hc_board_calculate_independent_life_area(board, area, &cnt, keep_terr, keep_stones, sui_pa);
            if (rules->tax_rule == HC_TAX_ALL)
                tax_adj_for_pla = pla == HC_C_WHITE ? -2 * cnt : 2 * cnt;
        }
    }
    bool final_not_win = false;
    if (has_area) {
        const int8_t *sec = hc_history_second_encore_start_map(h);
        int score = tax_adj_for_pla;
        for (int y = 0; y < y_size; y++)
            for (int x = 0; x < x_size; x++) {
                hc_loc loc = hc_loc_of(x, y, x_size);
                int pos = y * c->nn_x + x;
                if (area[loc] == pla) {
                    hc_feat_set(c, pos, 18);
                    score += 1;
                } else if (area[loc] == opp) {
                    hc_feat_set(c, pos, 19);
                    score -= 1;
                } else if (rules->scoring_rule == HC_SCORING_TERRITORY) {
                    if (board->colors[loc] == pla && sec[loc] == pla) {
                        hc_feat_set(c, pos, 18);
                        score += 1;
                    } else if (board->colors[loc] == opp && sec[loc] == opp) {
                        hc_feat_set(c, pos, 19);
                        score -= 1;
                    }
                }
            }
        float self_komi = hc_history_current_self_komi(h, pla, params->draw_equivalent_wins_for_white);
        float final_score = (float)score + self_komi;
        if (final_score <= 0.0)
            final_not_win = true;
    }
    return final_not_win;
}

int hc_feat_ladder_planes(const hc_feat_ctx *c, const hc_history *h, int n_included, int opp, hc_err *err)
{
    const hc_board *board = hc_history_board(h);
    hc_locbuf buf = {NULL, 0, false};
    const hc_board *prev = n_included < 1 ? board : hc_history_recent_board(h, 1);
    const hc_board *prev2 = n_included < 2 ? prev : hc_history_recent_board(h, 2);
    /* When a recent board is the very board already searched, its plane is a copy: KataGo searches it
     * again, and the search is deterministic. */
    int rc = iter_ladders(c, board, 14, opp, &buf, err);
    if (!rc && prev == board)
        memcpy(c->spatial + 15 * c->plane, c->spatial + 14 * c->plane, sizeof(float) * c->plane);
    else if (!rc)
        rc = iter_ladders(c, prev, 15, 0, &buf, err);
    if (!rc && prev2 == prev)
        memcpy(c->spatial + 16 * c->plane, c->spatial + 15 * c->plane, sizeof(float) * c->plane);
    else if (!rc)
        rc = iter_ladders(c, prev2, 16, 0, &buf, err);
    hc_locbuf_free(&buf);
    return rc;
}

float hc_feat_komi_wave(float self_komi, int x_size, int y_size)
{
    bool even = (x_size * y_size) % 2 == 0;
    float komi_floor = even ? floorf(self_komi / 2.0f) * 2.0f : floorf((self_komi - 1.0f) / 2.0f) * 2.0f + 1.0f;
    float delta = self_komi - komi_floor;
    if (delta < 0.0f)
        delta = 0.0f;
    if (delta > 2.0f)
        delta = 2.0f;
    float wave = delta < 0.5f ? delta : delta < 1.5f ? 1.0f - delta : delta - 2.0f;
    return wave;
}

int hc_feat_begin(const hc_history *h, int next_pla, int nn_x, int nn_y, int n_spatial, int n_global, float *spatial,
                  float *global, hc_feat_ctx *c, hc_err *err)
{
    const hc_board *board = hc_history_board(h);
    int x_size = board->x_size, y_size = board->y_size;
    if (hc_check_board_size(nn_x, nn_y, "NN buffer", err))
        return -1;
    if (nn_x < x_size || nn_y < y_size)
        return hc_err_set(err, HC_EUSAGE, "NN buffer %dx%d cannot hold a %dx%d board", nn_x, nn_y, x_size, y_size);
    if (next_pla != HC_C_BLACK && next_pla != HC_C_WHITE)
        return hc_err_set(err, HC_EUSAGE, "player to move must be black or white");
    memset(spatial, 0, sizeof(float) * (size_t)n_spatial * (size_t)nn_x * nn_y);
    memset(global, 0, sizeof(float) * (size_t)n_global);
    *c = (hc_feat_ctx){spatial, nn_x * nn_y, nn_x, x_size};
    return 0;
}

void hc_feat_stone_planes(const hc_feat_ctx *c, const hc_board *board, int pla, bool liberties)
{
    int opp = hc_opp(pla);
    for (int y = 0; y < board->y_size; y++)
        for (int x = 0; x < board->x_size; x++) {
            int pos = y * c->nn_x + x;
            hc_loc loc = hc_loc_of(x, y, board->x_size);
            hc_feat_set(c, pos, 0);
            int stone = board->colors[loc];
            if (stone == pla)
                hc_feat_set(c, pos, 1);
            else if (stone == opp)
                hc_feat_set(c, pos, 2);
            if (liberties && (stone == pla || stone == opp)) {
                int libs = hc_board_liberties(board, loc);
                if (libs == 1)
                    hc_feat_set(c, pos, 3);
                else if (libs == 2)
                    hc_feat_set(c, pos, 4);
                else if (libs == 3)
                    hc_feat_set(c, pos, 5);
            }
        }
}

void hc_feat_ko_planes(const hc_feat_ctx *c, const hc_history *h, int feature)
{
    const hc_board *board = hc_history_board(h);
    const bool *skb = hc_history_super_ko_banned_map(h);
    if (hc_history_encore_phase(h) == 0) {
        if (board->ko_loc != HC_NULL_LOC)
            hc_feat_set(c, hc_feat_pos(c, board->ko_loc), feature);
        for (int y = 0; y < board->y_size; y++)
            for (int x = 0; x < board->x_size; x++) {
                hc_loc loc = hc_loc_of(x, y, board->x_size);
                if (skb[loc] && loc != board->ko_loc)
                    hc_feat_set(c, y * c->nn_x + x, feature);
            }
    } else {
        const bool *krb = hc_history_ko_recap_blocked_map(h);
        for (int y = 0; y < board->y_size; y++)
            for (int x = 0; x < board->x_size; x++) {
                hc_loc loc = hc_loc_of(x, y, board->x_size);
                if (skb[loc])
                    hc_feat_set(c, y * c->nn_x + x, feature);
                if (krb[loc])
                    hc_feat_set(c, y * c->nn_x + x, feature + 1);
            }
    }
}

int hc_feat_history_planes(const hc_feat_ctx *c, const hc_history *h, int pla, int use, int feature, float *global)
{
    int opp = hc_opp(pla);
    int len = hc_history_num_moves(h);
    int n_included = 0;
    for (int k = 1; k <= 5 && k <= use && k <= len; k++) {
        hc_loc loc;
        int mp;
        hc_history_move_loc(h, len - k, &loc, &mp);
        if (mp != (k % 2 == 1 ? opp : pla))
            break;
        n_included = k;
        if (loc == HC_PASS_LOC)
            global[k - 1] = 1.0f;
        else if (loc != HC_NULL_LOC)
            hc_feat_set(c, hc_feat_pos(c, loc), feature + k - 1);
    }
    return n_included;
}

void hc_feat_second_encore_planes(const hc_feat_ctx *c, const hc_history *h, int pla, int feature)
{
    if (hc_history_encore_phase(h) < 2)
        return;
    const hc_board *board = hc_history_board(h);
    const int8_t *sec = hc_history_second_encore_start_map(h);
    for (int y = 0; y < board->y_size; y++)
        for (int x = 0; x < board->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, board->x_size);
            if (sec[loc] == pla)
                hc_feat_set(c, y * c->nn_x + x, feature);
            else if (sec[loc] == hc_opp(pla))
                hc_feat_set(c, y * c->nn_x + x, feature + 1);
        }
}

float hc_feat_clipped_self_komi(const hc_history *h, int pla, const hc_nninput_params *params, float radius)
{
    const hc_board *board = hc_history_board(h);
    float self_komi = hc_history_current_self_komi(h, pla, params->draw_equivalent_wins_for_white);
    float b_area = (float)(board->x_size * board->y_size);
    if (self_komi > b_area + radius)
        self_komi = b_area + radius;
    if (self_komi < -b_area - radius)
        self_komi = -b_area - radius;
    return self_komi;
}

void hc_feat_rules_globals(float *global, const hc_rules *rules, bool tax)
{
    if (rules->ko_rule == HC_KO_POSITIONAL || rules->ko_rule == HC_KO_SPIGHT) {
        global[6] = 1.0f;
        global[7] = 0.5f;
    } else if (rules->ko_rule == HC_KO_SITUATIONAL) {
        global[6] = 1.0f;
        global[7] = -0.5f;
    }
    if (rules->multi_stone_suicide_legal)
        global[8] = 1.0f;
    if (rules->scoring_rule == HC_SCORING_TERRITORY)
        global[9] = 1.0f;
    if (tax && rules->tax_rule == HC_TAX_SEKI)
        global[10] = 1.0f;
    else if (tax && rules->tax_rule == HC_TAX_ALL) {
        global[10] = 1.0f;
        global[11] = 1.0f;
    }
}

int hc_feat_max_history_turns_v6(const hc_history *h, int pla, const hc_nninput_params *params, bool final_not_win,
                                 bool *suppress_pass_ends_phase)
{
    int max_turns = 5;
    *suppress_pass_ends_phase = false;
    if (hc_history_pass_would_end_game(h, pla) &&
        (params->conservative_pass_and_is_root || hc_history_should_suppress_end_game_from_friendly_pass(h, pla) ||
         (params->enable_passing_hacks && final_not_win))) {
        max_turns = 0;
        *suppress_pass_ends_phase = true;
    } else if (hc_history_is_game_finished(h) || hc_history_is_past_normal_phase_end(h)) {
        max_turns = 1;
    }
    if (params->max_history < max_turns)
        max_turns = params->max_history;
    return max_turns;
}

void hc_feat_komi_wave_global(float *g, const hc_history *h, float self_komi)
{
    const hc_board *board = hc_history_board(h);
    if (hc_history_rules(h)->scoring_rule == HC_SCORING_AREA || hc_history_encore_phase(h) >= 2)
        *g = hc_feat_komi_wave(self_komi, board->x_size, board->y_size);
}

void hc_feat_encore_globals(float *global, int encore, int first)
{
    if (encore > 0)
        global[first] = 1.0f;
    if (encore > 1)
        global[first + 1] = 1.0f;
}

int hc_feat_planes_v6_v7(const hc_feat_ctx *c, const hc_history *h, int pla, const hc_nninput_params *params,
                         bool cap_by_game_turns, bool *suppress_pass_ends_phase, float *global, hc_err *err)
{
    hc_feat_stone_planes(c, hc_history_board(h), pla, true);
    hc_feat_ko_planes(c, h, 6);
    bool final_not_win = hc_feat_area_planes_v6(c, h, pla, params);
    int max_turns = hc_feat_max_history_turns_v6(h, pla, params, final_not_win, suppress_pass_ends_phase);
    int n_included = 0;
    if (max_turns > 0) {
        int use = max_turns;
        int approx = hc_history_num_approx_valid_turns_this_phase(h);
        if (approx < use)
            use = approx;
        if (cap_by_game_turns) {
            int consec = hc_history_num_consec_valid_turns_this_game(h);
            if (consec < use)
                use = consec;
        }
        n_included = hc_feat_history_planes(c, h, pla, use, 9, global);
    }
    if (hc_feat_ladder_planes(c, h, n_included, hc_opp(pla), err))
        return -1;
    hc_feat_second_encore_planes(c, h, pla, 20);
    return 0;
}
