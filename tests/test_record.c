/* Recording positions from SGF collections: each shared collection reproduces KataGo's own
 * positions file field by field; hand-worked games check variations, uniqueness, setup nodes,
 * player changes, moves out of turn, double passes and illegal moves; the written file reads
 * back equal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "hc_test.h"
#include "harness/data/positions.h"
#include "harness/data/sgfwalk.h"
#include "harness/data/sgf.h"

/* Describes the first field where a and b differ into buf; returns 0 when equal. */
static int position_diff(const hc_position *a, const hc_position *b, char *buf, size_t n)
{
#define DIFF_INT(f, name)                                                                                             \
    if (a->f != b->f)                                                                                                  \
        return snprintf(buf, n, "%s: %ld vs %ld", name, (long)a->f, (long)b->f), 1;
#define DIFF_FLT(f, name)                                                                                             \
    if (a->f != b->f)                                                                                                  \
        return snprintf(buf, n, "%s: %.9g vs %.9g", name, (double)a->f, (double)b->f), 1;
    DIFF_INT(index, "index")
    DIFF_INT(sgf_line, "sgf")
    DIFF_INT(x_size, "xSize")
    DIFF_INT(y_size, "ySize")
    if (strcmp(a->rules, b->rules) != 0)
        return snprintf(buf, n, "rules: %s vs %s", a->rules, b->rules), 1;
    DIFF_FLT(komi, "komi")
    DIFF_INT(n_initial_black, "initialBlack count")
    for (int i = 0; i < a->n_initial_black; i++)
        if (a->initial_black[i].x != b->initial_black[i].x || a->initial_black[i].y != b->initial_black[i].y)
            return snprintf(buf, n, "initialBlack[%d]: %d,%d vs %d,%d", i, a->initial_black[i].x, a->initial_black[i].y,
                            b->initial_black[i].x, b->initial_black[i].y), 1;
    DIFF_INT(n_initial_white, "initialWhite count")
    for (int i = 0; i < a->n_initial_white; i++)
        if (a->initial_white[i].x != b->initial_white[i].x || a->initial_white[i].y != b->initial_white[i].y)
            return snprintf(buf, n, "initialWhite[%d]: %d,%d vs %d,%d", i, a->initial_white[i].x, a->initial_white[i].y,
                            b->initial_white[i].x, b->initial_white[i].y), 1;
    DIFF_INT(initial_pla, "initialPla")
    DIFF_INT(initial_encore_phase, "initialEncorePhase")
    DIFF_INT(initial_turn_number, "initialTurnNumber")
    DIFF_INT(assume_multiple_starting_black_moves_are_handicap, "assumeMultipleStartingBlackMovesAreHandicap")
    DIFF_INT(n_moves, "moves count")
    for (int i = 0; i < a->n_moves; i++)
        if (a->moves[i].pla != b->moves[i].pla || a->moves[i].x != b->moves[i].x || a->moves[i].y != b->moves[i].y)
            return snprintf(buf, n, "moves[%d]: %d:%d,%d vs %d:%d,%d", i, a->moves[i].pla, a->moves[i].x, a->moves[i].y,
                            b->moves[i].pla, b->moves[i].x, b->moves[i].y), 1;
    DIFF_INT(next_pla, "nextPla")
    DIFF_FLT(white_handicap_bonus_score, "whiteHandicapBonusScore")
    DIFF_INT(encore_phase, "encorePhase")
    DIFF_INT(symmetry, "symmetry")
#undef DIFF_INT
#undef DIFF_FLT
    return 0;
}

/* ---------------------------------------------------------------- collecting positions */

typedef struct collected {
    hc_position *v;
    size_t n, cap;
} collected;

static int collect(const hc_position *p, const hc_history *h, void *user, hc_err *err)
{
    (void)h;
    collected *c = user;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        hc_position *nv = realloc(c->v, cap * sizeof *nv);
        if (!nv)
            return hc_err_set(err, HC_ENOMEM, "oom");
        c->v = nv;
        c->cap = cap;
    }
    if (hc_position_copy(&c->v[c->n], p, err) != 0)
        return -1;
    c->n++;
    return 0;
}

static void collected_free(collected *c)
{
    hc_positions_free(c->v, c->n);
    memset(c, 0, sizeof *c);
}

/* Records an in-memory collection; returns the result code and fills out. */
static int record_text(const char *text, collected *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    hc_err_clear(err);
    hc_sgf_collection *c = hc_sgf_parse(text, strlen(text), "t.sgfs", err);
    if (!c)
        return -1;
    int r = hc_record_collection(c, collect, out, err);
    hc_sgf_free(c);
    return r;
}

/* "B:x,y W:pass ..." of a position's moves. */
static void moves_str(const hc_position *p, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < p->n_moves; i++) {
        size_t l = strlen(buf);
        if (p->moves[i].x < 0)
            snprintf(buf + l, n - l, "%s%c:pass", i ? " " : "", p->moves[i].pla == HC_BLACK ? 'B' : 'W');
        else
            snprintf(buf + l, n - l, "%s%c:%d,%d", i ? " " : "", p->moves[i].pla == HC_BLACK ? 'B' : 'W', p->moves[i].x,
                     p->moves[i].y);
    }
}

/* ---------------------------------------------------------------- hand-worked games */

typedef struct expect {
    const char *moves; /* moves_str of the position */
    int initial_pla, next_pla, turn, n_black, n_white;
} expect;

static void check_game(const char *id, const char *sgf, const expect *want, size_t n_want)
{
    collected got;
    hc_err err;
    int r = record_text(sgf, &got, &err);
    char name[48];
    snprintf(name, sizeof name, "%s.1", id);
    if (!hc_check(name, r == 0 && got.n == n_want, "%s: %d, %zu positions (want %zu) %s", sgf, r, got.n, n_want, err.msg)) {
        collected_free(&got);
        return;
    }
    int ok = 1;
    char ms[512] = "", why[700] = "";
    for (size_t i = 0; ok && i < n_want; i++) {
        const hc_position *p = &got.v[i];
        moves_str(p, ms, sizeof ms);
        ok = strcmp(ms, want[i].moves) == 0 && p->initial_pla == want[i].initial_pla && p->next_pla == want[i].next_pla &&
             p->initial_turn_number == want[i].turn && p->n_initial_black == want[i].n_black &&
             p->n_initial_white == want[i].n_white && p->index == (long)i &&
             strcmp(p->rules, "koSITUATIONALscoreAREAtaxNONEsui1komi7.5") == 0;
        if (!ok)
            snprintf(why, sizeof why, "position %zu: moves \"%s\" (want \"%s\") initialPla %d nextPla %d turn %d stones %d/%d rules %s",
                     i, ms, want[i].moves, p->initial_pla, p->next_pla, p->initial_turn_number, p->n_initial_black,
                     p->n_initial_white, p->rules);
    }
    snprintf(name, sizeof name, "%s.2", id);
    hc_check(name, ok, "%s", why);
    collected_free(&got);
}

enum { B = HC_BLACK, W = HC_WHITE };

static void test_walks(void)
{
    /* Variations are visited depth first, in file order, each from its parent's state. */
    const expect e1[] = {{"", B, B, 0, 0, 0},
                         {"B:0,0", B, W, 0, 0, 0},
                         {"B:0,0 W:1,1", B, B, 0, 0, 0},
                         {"B:0,0 W:1,1 B:2,2", B, W, 0, 0, 0},
                         {"B:0,0 W:1,1 B:3,3", B, W, 0, 0, 0},
                         {"B:0,0 W:2,0", B, B, 0, 0, 0}};
    check_game("record-1", "(;SZ[5];B[aa](;W[bb](;B[cc])(;B[dd]))(;W[ca]))", e1, 6);

    /* A position reached twice in a game (same stones, same player) is visited once, even
     * through another move order; RU/KM/HA are ignored as KataGo ignores them. */
    const expect e2[] = {{"", B, B, 0, 0, 0},
                         {"B:0,0", B, W, 0, 0, 0},
                         {"B:0,0 W:1,1", B, B, 0, 0, 0},
                         {"B:0,0 W:1,1 B:2,2", B, W, 0, 0, 0},
                         {"B:2,2", B, W, 0, 0, 0},
                         {"B:2,2 W:1,1", B, B, 0, 0, 0}};
    check_game("record-2", "(;SZ[5]RU[Japanese]KM[0.5]HA[2](;B[aa];W[bb];B[cc])(;B[aa])(;B[cc];W[bb];B[aa]))", e2, 6);

    /* Positions after two passes in a row are skipped. */
    const expect e3[] = {{"", B, B, 0, 0, 0}, {"B:0,0", B, W, 0, 0, 0}, {"B:0,0 W:pass", B, B, 0, 0, 0}};
    check_game("record-3", "(;SZ[5];B[aa];W[];B[tt])", e3, 3);

    /* A move out of turn restarts the history just before it (the player to move stays the one
     * expected, so the restarted history starts with white to move and black's move in it). */
    const expect e4[] = {{"", B, B, 0, 0, 0},
                         {"B:0,0", B, W, 0, 0, 0},
                         {"B:1,1", W, W, 1, 1, 0},
                         {"B:1,1 W:2,2", W, B, 1, 1, 0}};
    check_game("record-4", "(;SZ[5];B[aa];B[bb];W[cc])", e4, 4);

    /* PL changing the player restarts the history from the board (a new position: same stones,
     * other player); a PL equal to the expected player does nothing. */
    const expect e5[] = {{"", B, B, 0, 0, 0},
                         {"B:0,0", B, W, 0, 0, 0},
                         {"", B, B, 1, 1, 0},
                         {"B:1,1", B, W, 1, 1, 0},
                         {"B:1,1 W:2,2", B, B, 1, 1, 0}};
    check_game("record-5", "(;SZ[5];B[aa];PL[B];B[bb];PL[W]W[cc])", e5, 5);

    /* Root setup: counted as half a turn per stone, at least the stones on the board; a root PL
     * sets the first player; later setup nodes restart from the board. */
    const expect e6[] = {{"", W, W, 3, 2, 1},
                         {"W:3,3", W, B, 3, 2, 1},
                         {"", B, B, 4, 3, 1},
                         {"B:4,4", B, W, 4, 3, 1}};
    check_game("record-6", "(;SZ[5]PL[W]AB[aa][bb]AW[cc];W[dd];AE[dd]AB[ea];B[ee])", e6, 4);

    /* Setup with a rectangle and a 2-stone AE: ten stones, then four net removed. */
    const expect e7[] = {{"", B, B, 10, 10, 0}, {"", B, B, 10, 6, 0}};
    check_game("record-7", "(;SZ[7]AB[aa:eb];AE[aa:bb])", e7, 2);

    /* Triple ko: three kos taken in turn bring back the starting stones with black to move; that
     * sixth move is banned by situational superko (not by simple ko), so KataGo plays it on a
     * history restarted just before it: 21 stones + 5 moves = initial turn 26. */
    const expect e8[] = {{"", B, B, 21, 10, 11},
                         {"B:2,1", B, W, 21, 10, 11},
                         {"B:2,1 W:6,1", B, B, 21, 10, 11},
                         {"B:2,1 W:6,1 B:2,6", B, W, 21, 10, 11},
                         {"B:2,1 W:6,1 B:2,6 W:1,1", B, B, 21, 10, 11},
                         {"B:2,1 W:6,1 B:2,6 W:1,1 B:7,1", B, W, 21, 10, 11},
                         {"W:1,6", W, B, 26, 11, 10}};
    check_game("record-12",
               "(;SZ[9]AB[ba][ab][bc]AW[ca][bb][db][cc]AB[ga][fb][gc][hb]AW[ha][ib][hc]AB[bf][ag][bh]AW[cf][bg][dg][ch]"
               ";B[cb];W[gb];B[cg];W[bb];B[hb];W[bg])",
               e8, 7);
}

static void test_failures(void)
{
    struct {
        const char *sgf;
        const char *needle; /* must appear in the error */
    } bad[] = {
        {"(;SZ[5];B[aa];W[aa])", "illegal move W 0,0"},
        /* W captures a ko at bb; black retaking at once is refused as KataGo refuses it */
        {"(;SZ[5]AB[ba][ab][cb][bc]AW[ca][db][cc];W[bb];B[cb])", "ko"},
        /* single-stone suicide */
        {"(;SZ[5]AB[ba][ab];W[aa])", "illegal move W 0,0"},
        {"(;SZ[5]C[a][b])", "C has 2 values"},
        {"(;SZ[25])", "larger than the maximum 19"},
        {"(;SZ[5];B[ff])", "off the 5x5 board"},
        {"(;SZ[5]AB[aa]AW[aa])", "illegal placements"},
        {"(;SZ[5]AB[ab][ba]AW[aa])", "illegal placements"},
        {"(;SZ[5]PL[B][W])", "PL has 2 values"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[256], name[32];
        /* as the second game, on the third line, to see that the error names it */
        snprintf(text, sizeof text, "(;SZ[9];B[ee])\n\n%s\n", bad[i].sgf);
        collected got;
        hc_err err;
        int r = record_text(text, &got, &err);
        snprintf(name, sizeof name, "record-8.%zu", i + 1);
        hc_check(name, r < 0 && err.code == HC_EFORMAT && strstr(err.msg, bad[i].needle) && strstr(err.msg, "t.sgfs: game 1 (line 3)"),
                 "%s: %s", bad[i].sgf, r < 0 ? err.msg : "accepted");
        collected_free(&got);
    }
}

/* ---------------------------------------------------------------- shared collections */

static void test_shared(const char *dir)
{
    static const char *sets[] = {"size9", "size13", "size19", "size10x14", "sizerect"};
    for (size_t s = 0; s < 5; s++) {
        char rel_sgf[64], rel_pos[64], name[32], out[512];
        snprintf(rel_sgf, sizeof rel_sgf, "sgf/%s.sgfs", sets[s]);
        snprintf(rel_pos, sizeof rel_pos, "positions/%s.jsonl.gz", sets[s]);
        snprintf(name, sizeof name, "record-9.%zu", s + 1);
        char sgf_path[512], pos_path[512];
        const char *p1 = hc_shared(rel_sgf);
        if (!p1) {
            hc_skip_n(name, 2, "../shared/%s absent", rel_sgf);
            continue;
        }
        snprintf(sgf_path, sizeof sgf_path, "%s", p1);
        const char *p2 = hc_shared(rel_pos);
        if (!p2) {
            hc_skip_n(name, 2, "../shared/%s absent", rel_pos);
            continue;
        }
        snprintf(pos_path, sizeof pos_path, "%s", p2);
        snprintf(out, sizeof out, "%s/%s.jsonl.gz", dir, sets[s]);
        hc_err err;
        hc_err_clear(&err);
        long n = -1;
        char rec_name[80];
        snprintf(rec_name, sizeof rec_name, "%s.record", name);
        if (!hc_check(rec_name, hc_record_file(sgf_path, out, &n, &err) == 0, "%s: %s", rel_sgf, err.msg))
            continue;
        hc_position *got = NULL, *want = NULL;
        size_t n_got = 0, n_want = 0;
        int r1 = hc_positions_load(out, &got, &n_got, &err);
        int r2 = r1 == 0 ? hc_positions_load(pos_path, &want, &n_want, &err) : -1;
        char why[800] = "";
        int ok = r1 == 0 && r2 == 0 && n_got == n_want && (long)n_got == n;
        if (r1 != 0 || r2 != 0)
            snprintf(why, sizeof why, "%s", err.msg);
        else if (!ok)
            snprintf(why, sizeof why, "%zu positions recorded, %zu in KataGo's file", n_got, n_want);
        for (size_t i = 0; ok && i < n_got; i++) {
            char d[400];
            if (position_diff(&got[i], &want[i], d, sizeof d) != 0) {
                ok = 0;
                snprintf(why, sizeof why, "position %zu (sgf line %ld): %s (recorded vs KataGo)", i, want[i].sgf_line, d);
            }
        }
        hc_check(name, ok, "%s: %s", sets[s], why);
        hc_positions_free(got, n_got);
        hc_positions_free(want, n_want);
    }
}

/* The written file reads back equal to what the walk handed out, for plain and gzip'd names. */
static void test_roundtrip(const char *dir)
{
    const char *text = "(;SZ[7:5]PL[W]AB[aa:bb]AW[dd];W[ee];B[](;W[fa];B[ga])(;W[ca];B[cb]))\n"
                       "(;SZ[5];B[aa];B[bb];PL[B];B[cc])\n";
    char in[512];
    snprintf(in, sizeof in, "%s/rt.sgf", dir);
    FILE *f = fopen(in, "w");
    fputs(text, f);
    fclose(f);
    collected want;
    hc_err err;
    int r = record_text(text, &want, &err);
    hc_check("record-10.1", r == 0 && want.n >= 8, "%d %zu %s", r, want.n, err.msg);
    const char *outs[] = {"rt.jsonl", "rt.jsonl.gz"};
    for (int k = 0; k < 2; k++) {
        char out[512], name[32];
        snprintf(out, sizeof out, "%s/%s", dir, outs[k]);
        long n = 0;
        hc_err_clear(&err);
        int w = hc_record_file(in, out, &n, &err);
        hc_position *got = NULL;
        size_t n_got = 0;
        int l = w == 0 ? hc_positions_load(out, &got, &n_got, &err) : -1;
        int ok = w == 0 && l == 0 && n_got == want.n && n == (long)want.n;
        char why[400] = "";
        for (size_t i = 0; ok && i < n_got; i++)
            if (position_diff(&got[i], &want.v[i], why, sizeof why) != 0)
                ok = 0;
        snprintf(name, sizeof name, "record-10.%d", k + 2);
        hc_check(name, ok, "%s: %d %d %zu/%zu %s %s", outs[k], w, l, n_got, want.n, why, err.msg);
        hc_positions_free(got, n_got);
    }
    /* A failing game leaves no output file behind. */
    char out[512];
    snprintf(out, sizeof out, "%s/none.jsonl.gz", dir);
    remove(out);
    f = fopen(in, "w");
    fputs("(;SZ[5];B[aa])\n(;SZ[5];B[aa];W[aa])\n", f);
    fclose(f);
    hc_err_clear(&err);
    int w = hc_record_file(in, out, NULL, &err);
    f = fopen(out, "r");
    hc_check("record-10.4", w < 0 && err.code == HC_EFORMAT && f == NULL, "%d %s", w, err.msg);
    if (f)
        fclose(f);
    collected_free(&want);
}

/* The command line: writes the file and says how many; bad usage and bad input exit with 2. */
static void test_cli(const char *dir)
{
    const char *bin = getenv("HALFCHECK");
    if (!bin) {
        hc_skip("record-11", "HALFCHECK (the binary) not set; run through make test");
        return;
    }
    char in[512], out[512], cmd[2048];
    snprintf(in, sizeof in, "%s/cli.sgfs", dir);
    snprintf(out, sizeof out, "%s/cli.jsonl.gz", dir);
    FILE *f = fopen(in, "w");
    fputs("(;SZ[9];B[ee];W[cc])\n(;SZ[9];B[ee];W[dd])\n", f);
    fclose(f);
    remove(out);
    snprintf(cmd, sizeof cmd, "%s record --sgf %s --out %s 2>/dev/null", bin, in, out);
    int rc = system(cmd);
    hc_position *ps = NULL;
    size_t n = 0;
    hc_err err;
    hc_err_clear(&err);
    int l = rc == 0 ? hc_positions_load(out, &ps, &n, &err) : -1;
    /* root, ee, ee+cc; then ee+dd only (root and ee are new again: one set of hashes per game) */
    hc_check("record-11.1", rc == 0 && l == 0 && n == 6 && ps[5].sgf_line == 1 && ps[5].index == 5, "rc %d load %d n %zu %s", rc,
             l, n, err.msg);
    hc_positions_free(ps, n);
    snprintf(cmd, sizeof cmd, "%s record --sgf %s 2>/dev/null", bin, in);
    rc = system(cmd);
    hc_check("record-11.2", WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "missing --out: status %d", rc);
    f = fopen(in, "w");
    fputs("(;SZ[9];B[ee];W[ee])\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s record --sgf %s --out %s 2>/dev/null", bin, in, out);
    rc = system(cmd);
    hc_check("record-11.3", WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "illegal move: status %d", rc);
}

int main(void)
{
    hc_plan(8 * 2 + 9 + 4 + 5 * 2 + 3);
    const char *dir = hc_tmpdir("test_record");
    test_walks();
    test_failures();
    test_roundtrip(dir);
    test_shared(dir);
    test_cli(dir);
    return hc_test_exit();
}
