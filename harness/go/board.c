/* KataGo's Board in C. The chain bookkeeping (heads, circular next-links, merge order, undo) follows
 * game/board.cpp step by step, because the ladder search explores moves in the order these lists
 * produce and gives up after a node budget: another order could change a ladder feature. */
#include "board.h"

#include "md5.h"
#include "sha256.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * KataGo's seeded generator (core/rand.cpp: MD5 + SHA-256 seeding of xorshift1024* and PCG32), used
 * only to rebuild its Zobrist tables bit for bit. */

typedef struct kg_rand {
    uint64_t xa[16];
    uint64_t xidx;
    uint64_t pcg;
} kg_rand;

static void kg_rand_init(kg_rand *r, const char *seed)
{
    uint32_t md[4];
    hc_md5_words(seed, strlen(seed), md);
    size_t slen = strlen(seed) + 32;
    char *s = malloc(slen);
    char *tmp = malloc(slen + 32);
    if (!s || !tmp)
        abort();
    snprintf(s, slen, "|%u|%s", (unsigned)md[0], seed);
    int counter = 0, next_idx = 4;
    uint64_t hash[4] = {0, 0, 0, 0};
    uint64_t vals[17];
    for (int k = 0; k < 17; k++) {
        uint64_t v;
        do {
            if (next_idx >= 4) {
                snprintf(tmp, slen + 32, "%d%s", counter, s);
                counter += 37;
                unsigned char dg[32];
                hc_sha256_digest(tmp, strlen(tmp), dg);
                for (int i = 0; i < 4; i++) {
                    uint64_t x = 0;
                    for (int j = 0; j < 8; j++)
                        x = (x << 8) | dg[8 * i + j];
                    hash[i] = x;
                }
                next_idx = 0;
            }
            v = hash[next_idx++];
        } while (v == 0);
        vals[k] = v;
    }
    memcpy(r->xa, vals, sizeof r->xa);
    r->xidx = 0;
    r->pcg = vals[16];
    free(s);
    free(tmp);
}

static uint32_t kg_next_u32(kg_rand *r)
{
    r->pcg = r->pcg * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t x = (uint32_t)(((r->pcg >> 18) ^ r->pcg) >> 27);
    int rot = (int)(r->pcg >> 59);
    uint32_t p = rot == 0 ? x : ((x >> rot) | (x << (32 - rot)));

    uint64_t a0 = r->xa[r->xidx];
    r->xidx = (r->xidx + 1) & 15;
    uint64_t a1 = r->xa[r->xidx];
    a1 ^= a1 << 31;
    a1 ^= a1 >> 11;
    a0 ^= a0 >> 30;
    r->xa[r->xidx] = a0 ^ a1;
    uint64_t res = r->xa[r->xidx] * 1181783497276652981ULL;
    return p + (uint32_t)(res >> 32);
}

static uint64_t kg_next_u64(kg_rand *r)
{
    uint64_t lo = kg_next_u32(r);
    uint64_t hi = (uint64_t)kg_next_u32(r) << 32;
    return lo | hi;
}

static hc_hash128 kg_next_hash(kg_rand *r)
{
    hc_hash128 h;
    h.hash0 = kg_next_u64(r);
    h.hash1 = kg_next_u64(r);
    return h;
}

static uint64_t murmur_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t split_mix64(uint64_t x)
{
    x = x + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static hc_zobrist zobrist_tables;
static pthread_once_t zobrist_once = PTHREAD_ONCE_INIT;

static void zobrist_build(void)
{
    hc_zobrist *z = &zobrist_tables;
    kg_rand r;
    kg_rand_init(&r, "Board::initHash()");
    for (int i = 0; i < 4; i++)
        z->player[i] = kg_next_hash(&r);
    for (int i = 0; i < 3; i++)
        z->encore[i] = kg_next_hash(&r);
    hc_hash128 zero = {0, 0};
    for (int i = 0; i < HC_BOARD_ARR; i++) {
        for (int j = 0; j < 4; j++) {
            bool blank = (j == HC_C_EMPTY || j == HC_C_WALL);
            z->board[i][j] = blank ? zero : kg_next_hash(&r);
            z->ko_mark[i][j] = blank ? zero : kg_next_hash(&r);
        }
        z->ko_loc[i] = kg_next_hash(&r);
    }
    kg_rand_init(&r, "Board::initHash() for ZOBRIST_SECOND_ENCORE_START hashes");
    for (int i = 0; i < HC_BOARD_ARR; i++)
        for (int j = 0; j < 4; j++)
            z->second_encore_start[i][j] = (j == HC_C_EMPTY || j == HC_C_WALL) ? zero : kg_next_hash(&r);
    kg_rand_init(&r, "Board::initHash() for ZOBRIST_SIZE hashes");
    for (int i = 0; i < HC_BOARD_MAX_LEN + 1; i++) {
        z->size_x[i] = kg_next_hash(&r);
        z->size_y[i] = kg_next_hash(&r);
    }
    kg_rand_init(&r, "Board::initHash() for second set of ZOBRIST hashes");
    for (int i = 0; i < HC_BOARD_ARR; i++)
        for (int j = 0; j < 4; j++) {
            hc_hash128 h = kg_next_hash(&r);
            h.hash0 = murmur_mix(h.hash0);
            h.hash1 = split_mix64(h.hash1);
            z->board2[i][j] = h;
        }
}

/* The hot paths (every stone played or removed in a ladder search) check an atomic flag, a plain
 * load on x86, instead of calling pthread_once each time. */
static _Atomic int zobrist_ready;

const hc_zobrist *hc_zobrist_get(void)
{
    if (!atomic_load_explicit(&zobrist_ready, memory_order_acquire)) {
        pthread_once(&zobrist_once, zobrist_build);
        atomic_store_explicit(&zobrist_ready, 1, memory_order_release);
    }
    return &zobrist_tables;
}

const hc_hash128 HC_ZOBRIST_PASS_ENDS_PHASE = {0x853E097C279EBF4EULL, 0xE3153DEF9E14A62CULL};
const hc_hash128 HC_ZOBRIST_GAME_IS_OVER = {0xb6f9e465597a77eeULL, 0xf1d583d960a4ce7fULL};

/* --------------------------------------------------------------------------------------------- */

#define ZB (hc_zobrist_get()->board)

int hc_board_init(hc_board *b, int x_size, int y_size, hc_err *err)
{
    if (hc_check_board_size(x_size, y_size, "board", err)) {
        if (err)
            err->code = HC_EFORMAT;
        return -1;
    }
    const hc_zobrist *z = hc_zobrist_get();
    memset(b, 0, sizeof *b);
    b->x_size = x_size;
    b->y_size = y_size;
    for (int i = 0; i < HC_BOARD_ARR; i++)
        b->colors[i] = HC_C_WALL;
    for (int y = 0; y < y_size; y++)
        for (int x = 0; x < x_size; x++)
            b->colors[hc_loc_of(x, y, x_size)] = HC_C_EMPTY;
    b->ko_loc = HC_NULL_LOC;
    b->pos_hash = hc_hash_xor(z->size_x[x_size], z->size_y[y_size]);
    b->adj[0] = (int16_t)(-(x_size + 1));
    b->adj[1] = -1;
    b->adj[2] = 1;
    b->adj[3] = (int16_t)(x_size + 1);
    b->adj[4] = (int16_t)(-(x_size + 1) - 1);
    b->adj[5] = (int16_t)(-(x_size + 1) + 1);
    b->adj[6] = (int16_t)((x_size + 1) - 1);
    b->adj[7] = (int16_t)((x_size + 1) + 1);
    return 0;
}

static inline int libs_at(const hc_board *b, hc_loc loc)
{
    return b->chain_data[b->chain_head[loc]].num_liberties;
}

bool hc_board_on_board(const hc_board *b, hc_loc loc)
{
    return loc >= 0 && loc < HC_BOARD_ARR && b->colors[loc] != HC_C_WALL;
}
int hc_board_chain_size(const hc_board *b, hc_loc loc) { return b->chain_data[b->chain_head[loc]].num_locs; }
int hc_board_liberties(const hc_board *b, hc_loc loc) { return libs_at(b, loc); }

int hc_board_immediate_liberties(const hc_board *b, hc_loc loc)
{
    int n = 0;
    for (int i = 0; i < 4; i++)
        if (b->colors[loc + b->adj[i]] == HC_C_EMPTY)
            n++;
    return n;
}

bool hc_board_is_suicide(const hc_board *b, hc_loc loc, int pla)
{
    if (loc == HC_PASS_LOC)
        return false;
    int opp = hc_opp(pla);
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        int c = b->colors[a];
        if (c == HC_C_EMPTY)
            return false;
        if (c == pla) {
            if (libs_at(b, a) > 1)
                return false;
        } else if (c == opp) {
            if (libs_at(b, a) == 1)
                return false;
        }
    }
    return true;
}

bool hc_board_is_illegal_suicide(const hc_board *b, hc_loc loc, int pla, bool multi_ok)
{
    int opp = hc_opp(pla);
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        int c = b->colors[a];
        if (c == HC_C_EMPTY)
            return false;
        if (c == pla) {
            if (multi_ok || libs_at(b, a) > 1)
                return false;
        } else if (c == opp) {
            if (libs_at(b, a) == 1)
                return false;
        }
    }
    return true;
}

bool hc_board_is_ko_banned(const hc_board *b, hc_loc loc) { return loc == b->ko_loc; }

bool hc_board_is_legal(const hc_board *b, hc_loc loc, int pla, bool multi_ok)
{
    if (pla != HC_C_BLACK && pla != HC_C_WHITE)
        return false;
    return loc == HC_PASS_LOC || (loc >= 0 && loc < HC_BOARD_ARR && b->colors[loc] == HC_C_EMPTY &&
                                  !hc_board_is_ko_banned(b, loc) && !hc_board_is_illegal_suicide(b, loc, pla, multi_ok));
}

bool hc_board_is_legal_ignoring_ko(const hc_board *b, hc_loc loc, int pla, bool multi_ok)
{
    if (pla != HC_C_BLACK && pla != HC_C_WHITE)
        return false;
    return loc == HC_PASS_LOC ||
           (loc >= 0 && loc < HC_BOARD_ARR && b->colors[loc] == HC_C_EMPTY && !hc_board_is_illegal_suicide(b, loc, pla, multi_ok));
}

static bool would_be_capture(const hc_board *b, hc_loc loc, int pla)
{
    if (b->colors[loc] != HC_C_EMPTY)
        return false;
    int opp = hc_opp(pla);
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == opp && libs_at(b, a) == 1)
            return true;
    }
    return false;
}

hc_loc hc_board_ko_capture_loc(const hc_board *b, hc_loc loc, int pla)
{
    if (b->colors[loc] != HC_C_EMPTY)
        return HC_NULL_LOC;
    int opp = hc_opp(pla);
    hc_loc cap = HC_NULL_LOC;
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] != HC_C_WALL && b->colors[a] != opp)
            return HC_NULL_LOC;
        if (b->colors[a] == opp && libs_at(b, a) == 1) {
            if (cap != HC_NULL_LOC)
                return HC_NULL_LOC;
            cap = a;
        }
    }
    if (cap == HC_NULL_LOC)
        return HC_NULL_LOC;
    if (b->chain_data[b->chain_head[cap]].num_locs != 1)
        return HC_NULL_LOC;
    return cap;
}

bool hc_board_would_be_ko_capture(const hc_board *b, hc_loc loc, int pla)
{
    return hc_board_ko_capture_loc(b, loc, pla) != HC_NULL_LOC;
}

int hc_board_num_stones(const hc_board *b)
{
    int n = 0;
    for (int y = 0; y < b->y_size; y++)
        for (int x = 0; x < b->x_size; x++) {
            int c = b->colors[hc_loc_of(x, y, b->x_size)];
            if (c == HC_C_BLACK || c == HC_C_WHITE)
                n++;
        }
    return n;
}

bool hc_board_is_empty(const hc_board *b) { return hc_board_num_stones(b) == 0; }

void hc_board_clear_ko_loc(hc_board *b) { b->ko_loc = HC_NULL_LOC; }

/* ---- chain bookkeeping ------------------------------------------------------------------------ */

static bool is_liberty_of(const hc_board *b, hc_loc loc, hc_loc head)
{
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == b->colors[head] && b->chain_head[a] == head)
            return true;
    }
    return false;
}

static void change_surrounding_liberties(hc_board *b, hc_loc loc, int pla, int delta)
{
    hc_loc a0 = (hc_loc)(loc + b->adj[0]), a1 = (hc_loc)(loc + b->adj[1]);
    hc_loc a2 = (hc_loc)(loc + b->adj[2]), a3 = (hc_loc)(loc + b->adj[3]);
    const int8_t *c = b->colors;
    const hc_loc *h = b->chain_head;
    if (c[a0] == pla)
        b->chain_data[h[a0]].num_liberties += delta;
    if (c[a1] == pla && !(c[a0] == pla && h[a0] == h[a1]))
        b->chain_data[h[a1]].num_liberties += delta;
    if (c[a2] == pla && !(c[a0] == pla && h[a0] == h[a2]) && !(c[a1] == pla && h[a1] == h[a2]))
        b->chain_data[h[a2]].num_liberties += delta;
    if (c[a3] == pla && !(c[a0] == pla && h[a0] == h[a3]) && !(c[a1] == pla && h[a1] == h[a3]) &&
        !(c[a2] == pla && h[a2] == h[a3]))
        b->chain_data[h[a3]].num_liberties += delta;
}

static void merge_chains(hc_board *b, hc_loc loc1, hc_loc loc2)
{
    hc_loc head1 = b->chain_head[loc1], head2 = b->chain_head[loc2];
    if (b->chain_data[head1].num_locs < b->chain_data[head2].num_locs) {
        hc_loc t = head1;
        head1 = head2;
        head2 = t;
    }
    b->chain_data[head1].num_locs += b->chain_data[head2].num_locs;
    int new_libs = 0;
    hc_loc loc = head2;
    for (;;) {
        for (int i = 0; i < 4; i++) {
            hc_loc a = (hc_loc)(loc + b->adj[i]);
            if (b->colors[a] == HC_C_EMPTY && !is_liberty_of(b, a, head1))
                new_libs++;
        }
        b->chain_head[loc] = head1;
        if (b->next_in_chain[loc] != head2)
            loc = b->next_in_chain[loc];
        else
            break;
    }
    b->chain_data[head1].num_liberties += new_libs;
    b->next_in_chain[loc] = b->next_in_chain[head1];
    b->next_in_chain[head1] = head2;
}

static int remove_chain(hc_board *b, hc_loc loc)
{
    const hc_zobrist *z = hc_zobrist_get();
    int removed = 0;
    int opp = hc_opp(b->colors[loc]);
    hc_loc cur = loc;
    do {
        b->pos_hash = hc_hash_xor(b->pos_hash, z->board[cur][b->colors[cur]]);
        b->colors[cur] = HC_C_EMPTY;
        removed++;
        change_surrounding_liberties(b, cur, opp, +1);
        cur = b->next_in_chain[cur];
    } while (cur != loc);
    return removed;
}

static void remove_single_stone(hc_board *b, hc_loc loc)
{
    int pla = b->colors[loc];
    int n = b->chain_data[b->chain_head[loc]].num_locs;
    hc_loc locs[HC_BOARD_MAX_PLAY];
    int idx = 0;
    hc_loc cur = loc;
    do {
        locs[idx++] = cur;
        cur = b->next_in_chain[cur];
    } while (cur != loc);
    remove_chain(b, loc);
    for (int i = 0; i < n; i++)
        if (locs[i] != loc)
            hc_board_play_assume_legal(b, locs[i], pla);
}

static hc_loc add_chain_helper(hc_board *b, hc_loc head, hc_loc tail, hc_loc loc, int pla)
{
    const hc_zobrist *z = hc_zobrist_get();
    b->colors[loc] = (int8_t)pla;
    b->pos_hash = hc_hash_xor(b->pos_hash, z->board[loc][pla]);
    b->chain_head[loc] = head;
    b->chain_data[head].num_locs++;
    b->next_in_chain[loc] = tail;
    change_surrounding_liberties(b, loc, hc_opp(pla), -1);
    hc_loc next_tail = loc;
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == HC_C_EMPTY)
            next_tail = add_chain_helper(b, head, next_tail, a, pla);
    }
    return next_tail;
}

static void add_chain(hc_board *b, hc_loc loc, int pla)
{
    b->chain_data[loc].num_liberties = 0;
    b->chain_data[loc].num_locs = 0;
    b->chain_data[loc].owner = (int8_t)pla;
    hc_loc front = add_chain_helper(b, loc, loc, loc, pla);
    b->next_in_chain[loc] = front;
}

static hc_loc rebuild_chain_helper(hc_board *b, hc_loc head, hc_loc tail, hc_loc loc, int pla)
{
    hc_loc a[4];
    int add = 0;
    for (int i = 0; i < 4; i++) {
        a[i] = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a[i]] == HC_C_EMPTY && !is_liberty_of(b, a[i], head))
            add++;
    }
    b->chain_data[head].num_liberties += add;
    b->chain_head[loc] = head;
    b->chain_data[head].num_locs++;
    b->next_in_chain[loc] = tail;
    hc_loc next_tail = loc;
    for (int i = 0; i < 4; i++)
        if (b->colors[a[i]] == pla && b->chain_head[a[i]] != head)
            next_tail = rebuild_chain_helper(b, head, next_tail, a[i], pla);
    return next_tail;
}

static void rebuild_chain(hc_board *b, hc_loc loc, int pla)
{
    b->chain_data[loc].num_liberties = 0;
    b->chain_data[loc].num_locs = 0;
    b->chain_data[loc].owner = (int8_t)pla;
    hc_loc front = rebuild_chain_helper(b, loc, loc, loc, pla);
    b->next_in_chain[loc] = front;
}

void hc_board_play_assume_legal(hc_board *b, hc_loc loc, int pla)
{
    if (loc == HC_PASS_LOC) {
        b->ko_loc = HC_NULL_LOC;
        return;
    }
    const hc_zobrist *z = hc_zobrist_get();
    int opp = hc_opp(pla);
    b->colors[loc] = (int8_t)pla;
    b->pos_hash = hc_hash_xor(b->pos_hash, z->board[loc][pla]);
    b->chain_data[loc].owner = (int8_t)pla;
    b->chain_data[loc].num_locs = 1;
    b->chain_data[loc].num_liberties = (int16_t)hc_board_immediate_liberties(b, loc);
    b->chain_head[loc] = loc;
    b->next_in_chain[loc] = loc;

    int captured = 0;
    hc_loc possible_ko = HC_NULL_LOC;
    int n_opps = 0;
    hc_loc opp_heads[4];
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == pla) {
            if (b->chain_head[a] == b->chain_head[loc])
                continue;
            b->chain_data[b->chain_head[a]].num_liberties--;
            merge_chains(b, a, loc);
        } else if (b->colors[a] == opp) {
            hc_loc oh = b->chain_head[a];
            bool seen = false;
            for (int j = 0; j < n_opps; j++)
                if (opp_heads[j] == oh) {
                    seen = true;
                    break;
                }
            if (seen)
                continue;
            b->chain_data[oh].num_liberties--;
            opp_heads[n_opps++] = oh;
            if (libs_at(b, a) == 0) {
                captured += remove_chain(b, a);
                possible_ko = a;
            }
        }
    }
    hc_loc h = b->chain_head[loc];
    if (captured == 1 && b->chain_data[h].num_locs == 1 && b->chain_data[h].num_liberties == 1)
        b->ko_loc = possible_ko;
    else
        b->ko_loc = HC_NULL_LOC;
    if (pla == HC_C_BLACK)
        b->num_white_captures += captured;
    else
        b->num_black_captures += captured;
    if (libs_at(b, loc) == 0) {
        int n = b->chain_data[b->chain_head[loc]].num_locs;
        remove_chain(b, loc);
        if (pla == HC_C_BLACK)
            b->num_black_captures += n;
        else
            b->num_white_captures += n;
    }
}

bool hc_board_play(hc_board *b, hc_loc loc, int pla, bool multi_ok)
{
    if (!hc_board_is_legal(b, loc, pla, multi_ok))
        return false;
    hc_board_play_assume_legal(b, loc, pla);
    return true;
}

hc_move_record hc_board_play_recorded(hc_board *b, hc_loc loc, int pla)
{
    hc_move_record r;
    r.loc = loc;
    r.pla = (int8_t)pla;
    r.ko_loc = b->ko_loc;
    r.cap_dirs = 0;
    if (loc != HC_PASS_LOC) {
        int opp = hc_opp(pla);
        for (int i = 0; i < 4; i++) {
            hc_loc a = (hc_loc)(loc + b->adj[i]);
            if (b->colors[a] == opp && libs_at(b, a) == 1)
                r.cap_dirs |= (uint8_t)(1u << i);
        }
        if (r.cap_dirs == 0 && hc_board_is_suicide(b, loc, pla))
            r.cap_dirs = 0x10;
    }
    hc_board_play_assume_legal(b, loc, pla);
    return r;
}

void hc_board_undo(hc_board *b, hc_move_record rec)
{
    const hc_zobrist *z = hc_zobrist_get();
    b->ko_loc = rec.ko_loc;
    hc_loc loc = rec.loc;
    if (loc == HC_PASS_LOC)
        return;
    int opp = hc_opp(rec.pla);
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if ((rec.cap_dirs & (1 << i)) && b->colors[a] == HC_C_EMPTY) {
            add_chain(b, a, opp);
            int n = b->chain_data[b->chain_head[a]].num_locs;
            if (rec.pla == HC_C_BLACK)
                b->num_white_captures -= n;
            else
                b->num_black_captures -= n;
        }
    }
    if (rec.cap_dirs == 0x10) {
        add_chain(b, loc, rec.pla);
        int n = b->chain_data[b->chain_head[loc]].num_locs;
        if (rec.pla == HC_C_BLACK)
            b->num_black_captures -= n;
        else
            b->num_white_captures -= n;
    }
    b->pos_hash = hc_hash_xor(b->pos_hash, z->board[loc][b->colors[loc]]);
    b->colors[loc] = HC_C_EMPTY;
    change_surrounding_liberties(b, loc, opp, +1);

    if (b->chain_data[b->chain_head[loc]].num_locs > 1) {
        int neighbors = 0;
        for (int i = 0; i < 4; i++)
            if (b->colors[loc + b->adj[i]] == rec.pla)
                neighbors++;
        if (neighbors <= 1) {
            hc_loc head = b->chain_head[loc];
            if (head == loc) {
                hc_loc nh = b->next_in_chain[loc];
                hc_loc cur = loc;
                do {
                    b->chain_head[cur] = nh;
                    cur = b->next_in_chain[cur];
                } while (cur != loc);
                b->chain_data[nh] = b->chain_data[head];
                head = nh;
            }
            hc_loc cur = head;
            while (b->next_in_chain[cur] != loc)
                cur = b->next_in_chain[cur];
            b->next_in_chain[cur] = b->next_in_chain[loc];
            int delta = 0;
            for (int i = 0; i < 4; i++) {
                hc_loc a = (hc_loc)(loc + b->adj[i]);
                if (b->colors[a] == HC_C_EMPTY && !is_liberty_of(b, a, head))
                    delta--;
            }
            delta++;
            b->chain_data[head].num_liberties += delta;
            b->chain_data[head].num_locs--;
        } else {
            hc_loc cur = loc;
            do {
                b->chain_head[cur] = HC_NULL_LOC;
                cur = b->next_in_chain[cur];
            } while (cur != loc);
            for (int i = 0; i < 4; i++) {
                hc_loc a = (hc_loc)(loc + b->adj[i]);
                if (b->colors[a] == rec.pla && b->chain_head[a] == HC_NULL_LOC)
                    rebuild_chain(b, a, rec.pla);
            }
        }
    }
}

hc_hash128 hc_board_pos_hash_after_move(const hc_board *b, hc_loc loc, int pla)
{
    if (loc == HC_PASS_LOC)
        return b->pos_hash;
    const hc_zobrist *z = hc_zobrist_get();
    hc_hash128 h = hc_hash_xor(b->pos_hash, z->board[loc][pla]);
    int opp = hc_opp(pla);
    bool suicide = true;
    int n = 0;
    hc_loc heads[4];
    for (int i = 0; i < 4; i++) {
        hc_loc a = (hc_loc)(loc + b->adj[i]);
        if (b->colors[a] == HC_C_EMPTY)
            suicide = false;
        else if (b->colors[a] == pla && libs_at(b, a) > 1)
            suicide = false;
        else if (b->colors[a] == opp && libs_at(b, a) == 1) {
            hc_loc head = b->chain_head[a];
            bool found = false;
            for (int j = 0; j < n; j++)
                if (heads[j] == head)
                    found = true;
            if (!found) {
                heads[n++] = head;
                suicide = false;
                hc_loc cur = a;
                do {
                    h = hc_hash_xor(h, z->board[cur][opp]);
                    cur = b->next_in_chain[cur];
                } while (cur != a);
            }
        }
    }
    if (suicide) {
        for (int i = 0; i < 4; i++) {
            hc_loc a = (hc_loc)(loc + b->adj[i]);
            if (b->colors[a] == pla && libs_at(b, a) == 1) {
                hc_loc head = b->chain_head[a];
                bool found = false;
                for (int j = 0; j < n; j++)
                    if (heads[j] == head)
                        found = true;
                if (!found) {
                    heads[n++] = head;
                    hc_loc cur = a;
                    do {
                        h = hc_hash_xor(h, z->board[cur][pla]);
                        cur = b->next_in_chain[cur];
                    } while (cur != a);
                }
            }
        }
        h = hc_hash_xor(h, z->board[loc][pla]);
    }
    return h;
}

bool hc_board_set_stone_fail_if_no_libs(hc_board *b, hc_loc loc, int color)
{
    if (loc < 0 || loc >= HC_BOARD_ARR || b->colors[loc] == HC_C_WALL)
        return false;
    if (color != HC_C_BLACK && color != HC_C_WHITE && color != HC_C_EMPTY)
        return false;
    hc_loc old_ko = b->ko_loc;
    if (b->colors[loc] == color) {
    } else if (b->colors[loc] == HC_C_EMPTY) {
        if (hc_board_is_suicide(b, loc, color) || would_be_capture(b, loc, color))
            return false;
        hc_board_play_assume_legal(b, loc, color);
    } else if (color == HC_C_EMPTY) {
        remove_single_stone(b, loc);
    } else {
        remove_single_stone(b, loc);
        if (hc_board_is_suicide(b, loc, color) || would_be_capture(b, loc, color)) {
            hc_board_play_assume_legal(b, loc, hc_opp(color));
            b->ko_loc = old_ko;
            return false;
        }
        hc_board_play_assume_legal(b, loc, color);
    }
    b->ko_loc = HC_NULL_LOC;
    return true;
}

bool hc_board_set_stones_fail_if_no_libs(hc_board *b, const hc_placement *p, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (p[i].loc == p[j].loc)
                return false;
    for (int i = 0; i < n; i++)
        if (!hc_board_set_stone_fail_if_no_libs(b, p[i].loc, HC_C_EMPTY))
            return false;
    for (int i = 0; i < n; i++)
        if (!hc_board_set_stone_fail_if_no_libs(b, p[i].loc, p[i].color))
            return false;
    return true;
}

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
            if (b->colors[lib] == HC_C_EMPTY) {
                bool dup = false;
                for (int j = start; j < idx + found; j++)
                    if (buf->v[j] == lib) {
                        dup = true;
                        break;
                    }
                if (!dup) {
                    if (!locbuf_reserve(buf, idx + found))
                        return found;
                    buf->v[idx + found] = lib;
                    found++;
                }
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
                    bool already = false;
                    for (int j = 0; j < n_checked; j++)
                        if (checked[j] == head) {
                            already = true;
                            break;
                        }
                    if (!already) {
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
        } else if (b->colors[a] == opp && libs_at(b, a) == 1) {
            libs[n++] = a;
            if (n >= max)
                return max;
            hc_loc h = b->chain_head[a];
            bool found = false;
            for (int j = 0; j < n_cap; j++)
                if (cap_heads[j] == h) {
                    found = true;
                    break;
                }
            if (!found)
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
        bool found = false;
        for (int j = 0; j < n_conn; j++)
            if (conn_heads[j] == h) {
                found = true;
                break;
            }
        if (found)
            continue;
        conn_heads[n_conn++] = h;
        hc_loc cur = a;
        do {
            for (int k = 0; k < 4; k++) {
                hc_loc pl = (hc_loc)(cur + b->adj[k]);
                bool empty_after = b->colors[pl] == HC_C_EMPTY;
                if (!empty_after && b->colors[pl] == opp)
                    for (int q = 0; q < n_cap; q++)
                        if (cap_heads[q] == b->chain_head[pl])
                            empty_after = true;
                if (pl != loc && empty_after) {
                    bool counted = false;
                    for (int l = 0; l < n; l++)
                        if (libs[l] == pl) {
                            counted = true;
                            break;
                        }
                    if (!counted) {
                        libs[n++] = pl;
                        if (n >= max)
                            return max;
                    }
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
                        bool present = false;
                        for (int j = 0; j < n; j++)
                            if (vital_lists[vs + j] == ph) {
                                present = true;
                                break;
                            }
                        if (!present)
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
            if ((c[loc] == basic[loc] && libs_at(b, loc) == 1) || touches_dame) {
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
