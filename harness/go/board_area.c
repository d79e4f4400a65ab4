/* KataGo's area scoring on hc_board: pass-alive (Benson) regions and independent life (game/board.cpp calculateArea). */
#include "harness/go/board.h"

#include <stdlib.h>
#include <string.h>

/* ---- area ------------------------------------------------------------------------------------- */

static bool is_adjacent_to_pla_head(const hc_board *b, int pla, hc_loc loc, hc_loc head)
{
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == pla && b->chain_head[a] == head)
            return true;
    }
    return false;
}

enum { AREA_MAX_REGIONS = (HC_BOARD_MAX_LEN * HC_BOARD_MAX_LEN + 1) / 2 + 1 };

static void area_for_pla(const hc_board *b, int pla, bool safe_big, bool unsafe_big, bool multi_ok, int8_t *result)
{
    int opp = hc_opp(pla);
    const int8_t *restrict colors = b->colors;
    const int d0 = b->adj[0], d1 = b->adj[1], d2 = b->adj[2], d3 = b->adj[3];
    const int dirs[4] = {d0, d1, d2, d3};
    int16_t region_of[HC_BOARD_ARR];
    hc_loc next_eo[HC_BOARD_ARR];
    bool borders_dead[HC_BOARD_ARR];
    for (int i = 0; i < HC_BOARD_ARR; i++) {
        region_of[i] = -1;
        next_eo[i] = HC_NULL_LOC;
        borders_dead[i] = false;
    }
    hc_loc vital_lists[AREA_MAX_REGIONS * 4];
    int vital_total = 0;
    int n_regions = 0;
    hc_loc region_heads[AREA_MAX_REGIONS];
    uint16_t vstart[AREA_MAX_REGIONS], vlen[AREA_MAX_REGIONS];
    uint8_t internal2[AREA_MAX_REGIONS];
    bool contains_opp[AREA_MAX_REGIONS];
    hc_loc queue[HC_BOARD_ARR];

    bool any_pla = false;
    for (int y = 0; y < b->y_size; y++)
        for (int x = 0; x < b->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, b->x_size);
            if (region_of[loc] != -1)
                continue;
            if (b->colors[loc] != HC_C_EMPTY) {
                any_pla |= (b->colors[loc] == pla);
                continue;
            }
            int r = n_regions++;
            region_heads[r] = loc;
            vstart[r] = (uint16_t)vital_total;
            vlen[r] = 0;
            internal2[r] = 0;
            contains_opp[r] = false;
            {
                uint16_t vs = vstart[r], n = 0;
                for (int i = 0; i < 4; i++) {
                    hc_loc a = (hc_loc)(loc + b->adj[i]);
                    if (b->colors[a] == pla) {
                        hc_loc ph = b->chain_head[a];
                        if (!hc_locs_have(vital_lists + vs, n, ph))
                            vital_lists[vs + n++] = ph;
                    }
                }
                vlen[r] = n;
            }
            /* breadth-first build of the region, linking its points through next_eo */
            hc_loc tail = loc;
            bool vnz = vlen[r] > 0;
            int qh = 0, qt = 1;
            queue[0] = loc;
            region_of[loc] = (int16_t)r;
            while (qh != qt) {
                hc_loc l = queue[qh++];
                if (vnz && (multi_ok || b->colors[l] == HC_C_EMPTY)) {
                    uint16_t vs = vstart[r], old = vlen[r], nl = 0;
                    for (uint16_t i = 0; i < old; i++)
                        if (is_adjacent_to_pla_head(b, pla, l, vital_lists[vs + i]))
                            vital_lists[vs + nl++] = vital_lists[vs + i];
                    vlen[r] = nl;
                    vnz = nl > 0;
                }
                if (internal2[r] < 2 && colors[l + d0] != pla && colors[l + d1] != pla && colors[l + d2] != pla &&
                    colors[l + d3] != pla)
                    internal2[r]++;
                if (colors[l] == opp)
                    contains_opp[r] = true;
                next_eo[l] = tail;
                tail = l;
                /* branch-free: whether a neighbour joins the region is unpredictable */
                for (int i = 0; i < 4; i++) {
                    int a = l + dirs[i];
                    int ca = colors[a];
                    int join = (ca == HC_C_EMPTY || ca == opp) & (region_of[a] == -1);
                    queue[qt] = (hc_loc)a;
                    qt += join;
                    region_of[a] = join ? (int16_t)r : region_of[a];
                }
            }
            next_eo[loc] = tail;
            vital_total += vlen[r];
        }

    int n_heads = 0;
    hc_loc heads[HC_BOARD_MAX_PLAY];
    for (hc_loc loc = 0; loc < HC_BOARD_ARR; loc++)
        if (b->colors[loc] == pla && b->chain_head[loc] == loc)
            heads[n_heads++] = loc;
    bool killed[HC_BOARD_MAX_PLAY];
    memset(killed, 0, sizeof killed);
    uint16_t vital_count[HC_BOARD_ARR];
    for (int i = 0; i < n_heads; i++)
        vital_count[heads[i]] = 0;
    for (int i = 0; i < n_regions; i++)
        for (int j = 0; j < vlen[i]; j++)
            vital_count[vital_lists[vstart[i] + j]] += 1;

    for (;;) {
        bool any_killed = false;
        for (int i = 0; i < n_heads; i++) {
            if (killed[i])
                continue;
            hc_loc ph = heads[i];
            if (vital_count[ph] < 2) {
                killed[i] = true;
                any_killed = true;
                hc_loc cur = ph;
                do {
                    for (int j = 0; j < 4; j++) {
                        hc_loc a = (hc_loc)(cur + b->adj[j]);
                        int16_t r = region_of[a];
                        if (r >= 0 && !borders_dead[region_heads[r]] &&
                            (b->colors[a] == HC_C_EMPTY || b->colors[a] == opp)) {
                            borders_dead[region_heads[r]] = true;
                            for (int k = 0; k < vlen[r]; k++)
                                vital_count[vital_lists[vstart[r] + k]] -= 1;
                        }
                    }
                    cur = b->next_in_chain[cur];
                } while (cur != ph);
            }
        }
        if (!any_killed)
            break;
    }

    for (int i = 0; i < n_heads; i++)
        if (!killed[i]) {
            hc_loc cur = heads[i];
            do {
                result[cur] = (int8_t)pla;
                cur = b->next_in_chain[cur];
            } while (cur != heads[i]);
        }

    for (int i = 0; i < n_regions; i++) {
        hc_loc head = region_heads[i];
        bool mark = internal2[i] <= 1 && !borders_dead[head] && any_pla;
        mark = mark || (safe_big && !contains_opp[i] && !borders_dead[head] && any_pla);
        if (mark) {
            hc_loc cur = head;
            do {
                result[cur] = (int8_t)pla;
                cur = next_eo[cur];
            } while (cur != head);
        } else if (unsafe_big && !contains_opp[i] && any_pla) {
            hc_loc cur = head;
            do {
                if (result[cur] == HC_C_EMPTY)
                    result[cur] = (int8_t)pla;
                cur = next_eo[cur];
            } while (cur != head);
        }
    }
}

void hc_board_calculate_area(const hc_board *b, int8_t *result, bool non_pass_alive_stones, bool safe_big,
                             bool unsafe_big, bool multi_ok)
{
    memset(result, HC_C_EMPTY, HC_BOARD_ARR);
    area_for_pla(b, HC_C_BLACK, safe_big, unsafe_big, multi_ok, result);
    area_for_pla(b, HC_C_WHITE, safe_big, unsafe_big, multi_ok, result);
    if (non_pass_alive_stones)
        for (int y = 0; y < b->y_size; y++)
            for (int x = 0; x < b->x_size; x++) {
                hc_loc loc = hc_loc_of(x, y, b->x_size);
                if (result[loc] == HC_C_EMPTY)
                    result[loc] = b->colors[loc];
            }
}

static void independent_life_helper(const hc_board *b, const int8_t *basic, int8_t *result, int *count)
{
    hc_loc queue[HC_BOARD_ARR];
    bool seki[HC_BOARD_ARR];
    memset(seki, 0, sizeof seki);
    *count = 0;
    int qh = 0, qt = 0;
    const int8_t *c = b->colors;
    for (int y = 0; y < b->y_size; y++)
        for (int x = 0; x < b->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, b->x_size);
            if (basic[loc] == HC_C_EMPTY || seki[loc])
                continue;
            bool touches_dame = false;
            for (int i = 0; i < 4; i++) {
                hc_loc a = (hc_loc)(loc + b->adj[i]);
                if (c[a] == HC_C_EMPTY && basic[a] == HC_C_EMPTY)
                    touches_dame = true;
            }
            if ((c[loc] == basic[loc] && b->chain_data[b->chain_head[loc]].num_liberties == 1) || touches_dame) {
                int pla = basic[loc];
                seki[loc] = true;
                queue[qt++] = loc;
                while (qh != qt) {
                    hc_loc n = queue[qh++];
                    for (int i = 0; i < 4; i++) {
                        hc_loc a = (hc_loc)(n + b->adj[i]);
                        if (basic[a] == pla && !seki[a]) {
                            seki[a] = true;
                            queue[qt++] = a;
                        }
                    }
                }
            }
        }
    qh = qt = 0;
    for (int y = 0; y < b->y_size; y++)
        for (int x = 0; x < b->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, b->x_size);
            if (basic[loc] != HC_C_EMPTY && !seki[loc] && result[loc] != basic[loc]) {
                int pla = basic[loc];
                *count += (pla == HC_C_WHITE ? 1 : -1);
                result[loc] = basic[loc];
                queue[qt++] = loc;
                while (qh != qt) {
                    hc_loc n = queue[qh++];
                    for (int i = 0; i < 4; i++) {
                        hc_loc a = (hc_loc)(n + b->adj[i]);
                        if (basic[a] == pla && result[a] != basic[a]) {
                            result[a] = basic[a];
                            queue[qt++] = a;
                        }
                    }
                }
            }
        }
}

void hc_board_calculate_independent_life_area(const hc_board *b, int8_t *result, int *count, bool keep_territories,
                                              bool keep_stones, bool multi_ok)
{
    int8_t basic[HC_BOARD_ARR];
    memset(result, HC_C_EMPTY, HC_BOARD_ARR);
    memset(basic, HC_C_EMPTY, HC_BOARD_ARR);
    area_for_pla(b, HC_C_BLACK, true, true, multi_ok, basic);
    area_for_pla(b, HC_C_WHITE, true, true, multi_ok, basic);
    for (int y = 0; y < b->y_size; y++)
        for (int x = 0; x < b->x_size; x++) {
            hc_loc loc = hc_loc_of(x, y, b->x_size);
            if (basic[loc] == HC_C_EMPTY)
                basic[loc] = b->colors[loc];
        }
    independent_life_helper(b, basic, result, count);
    if (keep_territories)
        for (int y = 0; y < b->y_size; y++)
            for (int x = 0; x < b->x_size; x++) {
                hc_loc loc = hc_loc_of(x, y, b->x_size);
                if (basic[loc] != HC_C_EMPTY && basic[loc] != b->colors[loc])
                    result[loc] = basic[loc];
            }
    if (keep_stones)
        for (int y = 0; y < b->y_size; y++)
            for (int x = 0; x < b->x_size; x++) {
                hc_loc loc = hc_loc_of(x, y, b->x_size);
                if (basic[loc] != HC_C_EMPTY && basic[loc] == b->colors[loc])
                    result[loc] = basic[loc];
            }
}
