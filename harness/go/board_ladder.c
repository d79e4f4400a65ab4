/* KataGo's ladder search on hc_board (game/board.cpp searchIsLadderCaptured), with its node budget. */
#include "harness/go/board.h"

#include <stdlib.h>
#include <string.h>

/* ---- ladders ---------------------------------------------------------------------------------- */

void hc_locbuf_free(hc_locbuf *lb)
{
    free(lb->v);
    lb->v = NULL;
    lb->cap = 0;
}

static bool locbuf_reserve(hc_locbuf *lb, int idx)
{
    if (idx < lb->cap)
        return true;
    int ncap = lb->cap * 3 / 2 + 64;
    while (ncap <= idx)
        ncap = ncap * 3 / 2 + 64;
    hc_loc *nv = realloc(lb->v, (size_t)ncap * sizeof *nv);
    if (!nv) {
        lb->oom = true;
        return false;
    }
    lb->v = nv;
    lb->cap = ncap;
    return true;
}

static int find_liberties(const hc_board *b, hc_loc loc, hc_locbuf *buf, int start, int idx)
{
    int found = 0;
    hc_loc cur = loc;
    do {
        for (int i = 0; i < 4; i++) {
            hc_loc lib = (hc_loc)(cur + b->adj[i]);
            /* buf->v is NULL until the first reservation: no pointer arithmetic on it then */
            if (b->colors[lib] == HC_C_EMPTY && !(buf->v && hc_locs_have(buf->v + start, idx + found - start, lib))) {
                if (!locbuf_reserve(buf, idx + found))
                    return found;
                buf->v[idx + found] = lib;
                found++;
            }
        }
        cur = b->next_in_chain[cur];
    } while (cur != loc);
    return found;
}

static int find_liberty_gaining_captures(const hc_board *b, hc_loc loc, hc_locbuf *buf, int start, int idx)
{
    int opp = hc_opp(b->colors[loc]);
    hc_loc checked[HC_BOARD_MAX_PLAY];
    int n_checked = 0;
    int found = 0;
    hc_loc cur = loc;
    do {
        for (int i = 0; i < 4; i++) {
            hc_loc a = (hc_loc)(cur + b->adj[i]);
            if (b->colors[a] == opp) {
                hc_loc head = b->chain_head[a];
                if (b->chain_data[head].num_liberties == 1) {
                    if (!hc_locs_have(checked, n_checked, head)) {
                        found += find_liberties(b, a, buf, start, idx + found);
                        checked[n_checked++] = head;
                    }
                }
            }
        }
        cur = b->next_in_chain[cur];
    } while (cur != loc);
    return found;
}

static bool has_liberty_gaining_captures(const hc_board *b, hc_loc loc)
{
    int opp = hc_opp(b->colors[loc]);
    hc_loc cur = loc;
    do {
        for (int i = 0; i < 4; i++) {
            hc_loc a = (hc_loc)(cur + b->adj[i]);
            if (b->colors[a] == opp && b->chain_data[b->chain_head[a]].num_liberties == 1)
                return true;
        }
        cur = b->next_in_chain[cur];
    } while (cur != loc);
    return false;
}

static void bound_libs_after_play(const hc_board *b, hc_loc loc, int pla, int *lower, int *upper)
{
    int opp = hc_opp(pla);
    int imm = 0, caps = 0, cap_libs = 0, conn = 0, max_conn = 0;
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == HC_C_EMPTY)
            imm++;
        else if (b->colors[a] == opp) {
            hc_loc h = b->chain_head[a];
            if (b->chain_data[h].num_liberties == 1) {
                caps++;
                cap_libs += b->chain_data[h].num_locs;
            }
        } else if (b->colors[a] == pla) {
            int c = b->chain_data[b->chain_head[a]].num_liberties - 1;
            conn += c;
            if (c > max_conn)
                max_conn = c;
        }
    }
    *lower = caps + (max_conn > imm ? max_conn : imm);
    *upper = imm + cap_libs + conn;
}

static int libs_after_play(const hc_board *b, hc_loc loc, int pla, int max)
{
    int opp = hc_opp(pla);
    int n = 0;
    hc_loc libs[HC_BOARD_MAX_PLAY];
    int n_cap = 0;
    hc_loc cap_heads[4];
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == HC_C_EMPTY) {
            libs[n++] = a;
            if (n >= max)
                return max;
        } else if (b->colors[a] == opp && b->chain_data[b->chain_head[a]].num_liberties == 1) {
            libs[n++] = a;
            if (n >= max)
                return max;
            hc_loc h = b->chain_head[a];
            if (!hc_locs_have(cap_heads, n_cap, h))
                cap_heads[n_cap++] = h;
        }
    }
    int n_conn = 0;
    hc_loc conn_heads[4];
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] != pla)
            continue;
        hc_loc h = b->chain_head[a];
        if (hc_locs_have(conn_heads, n_conn, h))
            continue;
        conn_heads[n_conn++] = h;
        hc_loc cur = a;
        do {
            for (int k = 0; k < 4; k++) {
                hc_loc pl = (hc_loc)(cur + b->adj[k]);
                bool empty_after = b->colors[pl] == HC_C_EMPTY ||
                                   (b->colors[pl] == opp && hc_locs_have(cap_heads, n_cap, b->chain_head[pl]));
                if (pl != loc && empty_after && !hc_locs_have(libs, n, pl)) {
                    libs[n++] = pl;
                    if (n >= max)
                        return max;
                }
            }
            cur = b->next_in_chain[cur];
        } while (cur != a);
    }
    return n;
}

static int heuristic_conn_libs_x2(const hc_board *b, hc_loc loc, int pla)
{
    int n = 0;
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == pla) {
            int l = b->chain_data[b->chain_head[a]].num_liberties;
            if (l > 1)
                n += l * 2 - 3;
        }
    }
    return n;
}

static bool is_adjacent(hc_loc a, hc_loc b, int x_size)
{
    return a == b - (x_size + 1) || a == b - 1 || a == b + 1 || a == b + (x_size + 1);
}

enum { LADDER_ARR = HC_BOARD_MAX_PLAY * 3 / 2 + 1, LADDER_NODE_BUDGET = 25000 };

bool hc_board_ladder_captured(hc_board *b, hc_loc loc, bool defender_first, hc_locbuf *buf)
{
    if (loc < 0 || loc >= HC_BOARD_ARR)
        return false;
    if (b->colors[loc] != HC_C_BLACK && b->colors[loc] != HC_C_WHITE)
        return false;
    int root_libs = b->chain_data[b->chain_head[loc]].num_liberties;
    if (root_libs > 2 || (defender_first && root_libs > 1))
        return false;
    int pla = b->colors[loc], opp = hc_opp(pla);
    hc_loc ko_saved = b->ko_loc;
    if (defender_first)
        b->ko_loc = HC_NULL_LOC;

    int stack_size = b->x_size * b->y_size * 3 / 2 + 1;
    int list_start[LADDER_ARR], list_len[LADDER_ARR], list_cur[LADDER_ARR];
    hc_move_record records[LADDER_ARR];
    int sidx = 0, nodes = 0;
    list_cur[0] = -1;
    list_start[0] = 0;
    list_len[0] = 0;
    bool ret = false, from_deeper = false;

    for (;;) {
        if (sidx <= -1) {
            b->ko_loc = ko_saved;
            return ret;
        }
        if (sidx >= stack_size - 1) {
            ret = true;
            from_deeper = true;
            sidx--;
            continue;
        }
        if (nodes >= LADDER_NODE_BUDGET || buf->oom) {
            /* As KataGo: undo every move; ko_loc ends as it was before the first move (cleared when
             * defender_first), not as saved. */
            sidx -= 1;
            while (sidx >= 0) {
                hc_board_undo(b, records[sidx]);
                sidx -= 1;
            }
            return false;
        }
        bool defender = (defender_first && sidx % 2 == 0) || (!defender_first && sidx % 2 == 1);

        if (list_cur[sidx] == -1) {
            int libs = b->chain_data[b->chain_head[loc]].num_liberties;
            if (!defender && libs <= 1) { ret = true; from_deeper = true; sidx--; continue; }
            if (!defender && libs >= 3) { ret = false; from_deeper = true; sidx--; continue; }
            if (defender && libs >= 2) { ret = false; from_deeper = true; sidx--; continue; }
            if (defender && b->ko_loc != HC_NULL_LOC) { ret = false; from_deeper = true; sidx--; continue; }

            int start = list_start[sidx];
            int len = 0;
            if (defender) {
                len = find_liberty_gaining_captures(b, loc, buf, start, start);
                len += find_liberties(b, loc, buf, start, start + len);
                if (buf->oom)
                    continue;
                int lo, hi;
                bound_libs_after_play(b, buf->v[start + len - 1], pla, &lo, &hi);
                if (lo >= 3) { ret = false; from_deeper = true; sidx--; continue; }
                if (len == 1 && hi <= 1) { ret = true; from_deeper = true; sidx--; continue; }
            } else {
                len += find_liberties(b, loc, buf, start, start);
                if (buf->oom)
                    continue;
                hc_loc *v = buf->v;
                int libs0 = hc_board_immediate_liberties(b, v[start]);
                int libs1 = hc_board_immediate_liberties(b, v[start + 1]);
                if (libs0 == 0 && libs1 == 0 && hc_board_would_be_ko_capture(b, v[start], opp) &&
                    hc_board_would_be_ko_capture(b, v[start + 1], opp)) {
                    if (libs_after_play(b, v[start], pla, 3) <= 2 && libs_after_play(b, v[start + 1], pla, 3) <= 2) {
                        if (!has_liberty_gaining_captures(b, loc)) { ret = true; from_deeper = true; sidx--; continue; }
                    }
                }
                if (!is_adjacent(v[start], v[start + 1], b->x_size)) {
                    if (libs0 >= 3 && libs1 >= 3) { ret = false; from_deeper = true; sidx--; continue; }
                    else if (libs0 >= 3)
                        len = 1;
                    else if (libs1 >= 3) {
                        v[start] = v[start + 1];
                        len = 1;
                    }
                }
                if (len > 1) {
                    libs0 = libs0 * 2 + heuristic_conn_libs_x2(b, v[start], pla);
                    libs1 = libs1 * 2 + heuristic_conn_libs_x2(b, v[start + 1], pla);
                    if (libs1 > libs0) {
                        hc_loc t = v[start];
                        v[start] = v[start + 1];
                        v[start + 1] = t;
                    }
                }
            }
            list_len[sidx] = len;
            list_cur[sidx] = 0;
        } else {
            if (from_deeper)
                hc_board_undo(b, records[sidx]);
            if (defender && !ret) { from_deeper = true; sidx--; continue; }
            if (!defender && ret) { from_deeper = true; sidx--; continue; }
            list_cur[sidx]++;
        }

        if (list_cur[sidx] >= list_len[sidx]) {
            ret = defender;
            from_deeper = true;
            sidx--;
            continue;
        }
        hc_loc move = buf->v[list_start[sidx] + list_cur[sidx]];
        int p = defender ? pla : opp;
        if (!hc_board_is_legal(b, move, p, false)) {
            ret = defender;
            from_deeper = false;
            continue;
        }
        records[sidx] = hc_board_play_recorded(b, move, p);
        nodes++;
        sidx++;
        list_cur[sidx] = -1;
        list_start[sidx] = list_start[sidx - 1] + list_len[sidx - 1];
        list_len[sidx] = 0;
    }
}

bool hc_board_ladder_captured_attacker_first_2libs(hc_board *b, hc_loc loc, hc_locbuf *buf, hc_loc working[2], int *n_working)
{
    if (loc < 0 || loc >= HC_BOARD_ARR)
        return false;
    if (b->colors[loc] != HC_C_BLACK && b->colors[loc] != HC_C_WHITE)
        return false;
    if (b->chain_data[b->chain_head[loc]].num_liberties != 2)
        return false;
    int pla = b->colors[loc], opp = hc_opp(pla);
    find_liberties(b, loc, buf, 0, 0);
    if (buf->oom)
        return false;
    hc_loc m0 = buf->v[0], m1 = buf->v[1];
    bool w0 = false, w1 = false;
    if (hc_board_is_legal(b, m0, opp, false)) {
        hc_move_record r = hc_board_play_recorded(b, m0, opp);
        w0 = hc_board_ladder_captured(b, loc, true, buf);
        hc_board_undo(b, r);
    }
    if (hc_board_is_legal(b, m1, opp, false)) {
        hc_move_record r = hc_board_play_recorded(b, m1, opp);
        w1 = hc_board_ladder_captured(b, loc, true, buf);
        hc_board_undo(b, r);
    }
    if (w0 || w1) {
        *n_working = 0;
        if (w0)
            working[(*n_working)++] = m0;
        if (w1)
            working[(*n_working)++] = m1;
        return true;
    }
    return false;
}
