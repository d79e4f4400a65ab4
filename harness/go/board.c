/* KataGo's Board in C. The chain bookkeeping (heads, circular next-links, merge order, undo) follows
 * game/board.cpp step by step, because the ladder search explores moves in the order these lists
 * produce and gives up after a node budget: another order could change a ladder feature. */
#include "harness/go/board.h"

#include "harness/base/md5.h"
#include "harness/base/sha256.h"

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
    /* A suicide is a move that multi-stone-suicide rules would forbid. */
    return loc != HC_PASS_LOC && hc_board_is_illegal_suicide(b, loc, pla, false);
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

/* Makes loc the head of a new chain of pla and lets walk (one of the two helpers above) link its
 * stones: add_chain_helper when they are being put back, rebuild_chain_helper when they stayed. */
static void start_chain(hc_board *b, hc_loc loc, int pla, hc_loc (*walk)(hc_board *, hc_loc, hc_loc, hc_loc, int))
{
    b->chain_data[loc].num_liberties = 0;
    b->chain_data[loc].num_locs = 0;
    b->chain_data[loc].owner = (int8_t)pla;
    hc_loc front = walk(b, loc, loc, loc, pla); /* the walk sets next_in_chain[loc] too: close the ring after it */
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
            if (hc_locs_have(opp_heads, n_opps, oh))
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
            start_chain(b, a, opp, add_chain_helper);
            int n = b->chain_data[b->chain_head[a]].num_locs;
            if (rec.pla == HC_C_BLACK)
                b->num_white_captures -= n;
            else
                b->num_black_captures -= n;
        }
    }
    if (rec.cap_dirs == 0x10) {
        start_chain(b, loc, rec.pla, add_chain_helper);
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
                    start_chain(b, a, rec.pla, rebuild_chain_helper);
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
            if (!hc_locs_have(heads, n, head)) {
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
                if (!hc_locs_have(heads, n, head)) {
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
