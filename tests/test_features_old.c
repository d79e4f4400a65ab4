/* Input features V3-V6 (fillRowV3..V6, model versions 3-7). KataGo's golden data has no feature
 * rows for them (its outputs for a v5 and a v7 net are checked end to end by test_golden_eval), so
 * this checks:
 * 1. hand-built positions (a ko, a rules violation, a ladder, pass-alive and unsafe area, the
 *    encore under territory scoring, a finished game, clipped komi, tax and ko rules) at specific
 *    planes and points whose values follow from nninputs.cpp;
 * 2. on every position of two golden sets, under several rule sets and with passes appended to
 *    reach game end and the encore, the planes the specification shares with V7 (whose rows are
 *    bit-identical to KataGo's, test_features) are equal, the ones it changes relate as it says,
 *    and the padding of a larger buffer is zero;
 * 3. halfcheck features --inputs-version / --net. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hc_test.h"
#include "harness/go/history.h"
#include "harness/features/nnfeatures.h"
#include "harness/data/positions.h"
#include "harness/base/stream.h"

enum { MAXP = 22 * 19 * 19 };

typedef struct feat {
    int nx, ny, ns, ng;
    float sp[MAXP];
    float gl[19];
} feat;

static float P(const feat *f, int c, int x, int y) { return f->sp[(c * f->ny + y) * f->nx + x]; }

static float plane_sum(const feat *f, int c)
{
    float s = 0;
    for (int i = 0; i < f->nx * f->ny; i++)
        s += f->sp[c * f->nx * f->ny + i];
    return s;
}

static int fill(feat *f, int v, const hc_history *h, const hc_nninput_params *p, int nx, int ny)
{
    hc_err err = {0};
    f->nx = nx;
    f->ny = ny;
    f->ns = hc_features_num_spatial(v);
    f->ng = hc_features_num_global(v);
    /* poison: every value must be written */
    for (int i = 0; i < MAXP; i++)
        f->sp[i] = NAN;
    for (int i = 0; i < 19; i++)
        f->gl[i] = NAN;
    int rc = hc_features_fill(v, h, hc_history_next_pla(h), p, nx, ny, f->sp, f->gl, &err);
    if (rc)
        printf("# fill v%d failed: %s\n", v, err.msg);
    return rc;
}

/* rows: 'x' black, 'o' white, '.' empty, from the top. */
static hc_history *mk(const char *rules, float komi, int xs, int ys, const char *const *rows, int pla)
{
    hc_err err = {0};
    hc_board b;
    hc_rules r;
    if (hc_board_init(&b, xs, ys, &err) || hc_rules_parse(rules, &r, &err)) {
        printf("# setup: %s\n", err.msg);
        return NULL;
    }
    if (!isnan(komi))
        r.komi = komi;
    for (int y = 0; rows && y < ys; y++)
        for (int x = 0; x < xs; x++) {
            int c = rows[y][x] == 'x' ? HC_C_BLACK : rows[y][x] == 'o' ? HC_C_WHITE : HC_C_EMPTY;
            if (c != HC_C_EMPTY && !hc_board_set_stone_fail_if_no_libs(&b, hc_loc_of(x, y, xs), c))
                printf("# setup stone %d,%d failed\n", x, y);
        }
    hc_history *h = hc_history_new(&b, pla, &r, 0, false, &err);
    if (!h)
        printf("# setup: %s\n", err.msg);
    return h;
}

static int play(hc_history *h, int x, int y)
{
    hc_err err = {0};
    int rc = hc_history_play(h, x, y, hc_history_next_pla(h), &err);
    if (rc)
        printf("# play %d,%d: %s\n", x, y, err.msg);
    return rc;
}

static feat F3, F4, F5, F6, F7;

static int fill_all(const hc_history *h, const hc_nninput_params *p, int nx, int ny)
{
    return fill(&F3, 3, h, p, nx, ny) | fill(&F4, 4, h, p, nx, ny) | fill(&F5, 5, h, p, nx, ny) |
           fill(&F6, 6, h, p, nx, ny) | fill(&F7, 7, h, p, nx, ny);
}

static void check_api(void)
{
    int ns[] = {0, 22, 22, 13, 22, 22, 0}, ng[] = {0, 14, 14, 12, 16, 19, 0};
    int ok = 1;
    for (int v = 2; v <= 8; v++)
        ok &= hc_features_num_spatial(v) == ns[v - 2] && hc_features_num_global(v) == ng[v - 2];
    hc_check("features-old-1.1", ok, "channel counts differ from NNInputs::NUM_FEATURES_*_V3..V7");
    hc_history *h = mk("chinese", NAN, 5, 5, NULL, HC_C_BLACK);
    hc_nninput_params p = hc_nninput_params_default();
    hc_err err = {0};
    int bad = 0;
    for (int v = 3; v <= 6; v++) {
        bad += hc_features_fill(v, h, HC_C_BLACK, &p, 4, 5, F3.sp, F3.gl, &err) == 0;
        bad += hc_features_fill(v, h, HC_C_BLACK, &p, 20, 20, F3.sp, F3.gl, &err) == 0;
        bad += hc_features_fill(v, h, HC_C_EMPTY, &p, 5, 5, F3.sp, F3.gl, &err) == 0;
    }
    bad += hc_features_fill(2, h, HC_C_BLACK, &p, 5, 5, F3.sp, F3.gl, &err) == 0;
    bad += hc_features_fill(8, h, HC_C_BLACK, &p, 5, 5, F3.sp, F3.gl, &err) == 0;
    hc_check("features-old-1.2", bad == 0, "%d bad buffers/players/versions accepted", bad);
    hc_history_free(h);
}

/* A ko, then a tolerated ko violation (which resets numConsecValidTurnsThisGame, V6 only). */
static void check_ko(void)
{
    const char *rows[] = {".xo....", "xo.o...", ".xo....", ".......", ".......", ".......", "......."};
    hc_history *h = mk("chinese", NAN, 7, 7, rows, HC_C_BLACK);
    hc_nninput_params p = hc_nninput_params_default();
    if (!h || play(h, 2, 1) || fill_all(h, &p, 7, 7)) {
        hc_check("features-old-2.0", 0, "setup failed");
        hc_history_free(h);
        return;
    }
    /* white to move; black's capture at (2,1) left a ko at (1,1), black (2,1) in atari */
    hc_check("features-old-2.1",
             P(&F3, 6, 1, 1) == 1 && plane_sum(&F3, 6) == 1 && P(&F4, 6, 1, 1) == 1 && P(&F6, 6, 1, 1) == 1 &&
                 P(&F5, 3, 1, 1) == 1 && plane_sum(&F5, 3) == 1 && plane_sum(&F5, 4) == 0,
             "ko point: v3 %g v4 %g v6 %g v5 %g", (double)P(&F3, 6, 1, 1), (double)P(&F4, 6, 1, 1), (double)P(&F6, 6, 1, 1),
             (double)P(&F5, 3, 1, 1));
    hc_check("features-old-2.2",
             P(&F3, 3, 2, 1) == 1 && P(&F4, 3, 2, 1) == 1 && P(&F6, 3, 2, 1) == 1 && P(&F5, 3, 2, 1) == 0 &&
                 plane_sum(&F5, 5) == 0,
             "1-liberty plane at the capturing stone (v3 %g), absent in v5 (ko plane %g, plane 5 sum %g)",
             (double)P(&F3, 3, 2, 1), (double)P(&F5, 3, 2, 1), (double)plane_sum(&F5, 5));
    hc_check("features-old-2.3",
             P(&F3, 2, 2, 1) == 1 && P(&F3, 1, 2, 0) == 1 && P(&F5, 2, 2, 1) == 1 && P(&F5, 1, 2, 0) == 1 &&
                 P(&F3, 9, 2, 1) == 1 && plane_sum(&F3, 9) == 1 && P(&F5, 6, 2, 1) == 1 && plane_sum(&F5, 6) == 1 &&
                 P(&F6, 9, 2, 1) == 1,
             "stones from white's view / last move plane");
    /* komi 7.5 for white on a 49-point board: /15 (v3-v5), /20 (v6); wave: floor 7, delta 0.5 -> 0.5 */
    hc_check("features-old-2.4",
             F3.gl[5] == 7.5f / 15.0f && F4.gl[5] == 7.5f / 15.0f && F5.gl[5] == 7.5f / 15.0f && F6.gl[5] == 7.5f / 20.0f &&
                 F3.gl[13] == 0.5f && F4.gl[13] == 0.5f && F6.gl[15] == 0.5f,
             "komi %g %g %g wave %g %g", (double)F3.gl[5], (double)F5.gl[5], (double)F6.gl[5], (double)F3.gl[13],
             (double)F6.gl[15]);
    int zero = 1;
    for (int i = 0; i < 14; i++)
        zero &= i == 5 || i == 13 || F3.gl[i] == 0;
    for (int i = 0; i < 12; i++)
        zero &= i == 5 || F5.gl[i] == 0;
    for (int i = 0; i < 16; i++)
        zero &= i == 5 || i == 15 || F6.gl[i] == 0;
    hc_check("features-old-2.5", zero, "chinese rules, no passes: other globals must be 0");

    /* white retakes at once (tolerated ko violation), then two ordinary moves; black to move */
    hc_err err = {0};
    int rc = hc_history_play_tolerant(h, 1, 1, HC_C_WHITE, &err);
    rc |= play(h, 5, 5) | play(h, 5, 4);
    hc_check("features-old-2.6", rc == 0 && hc_history_num_consec_valid_turns_this_game(h) == 2 &&
                                     hc_history_num_approx_valid_turns_this_phase(h) == 4,
             "consec %d approx %d", hc_history_num_consec_valid_turns_this_game(h),
             hc_history_num_approx_valid_turns_this_phase(h));
    fill_all(h, &p, 7, 7);
    hc_check("features-old-2.7",
             P(&F6, 9, 5, 4) == 1 && P(&F6, 10, 5, 5) == 1 && plane_sum(&F6, 11) == 0 && plane_sum(&F6, 12) == 0 &&
                 P(&F7, 11, 1, 1) == 1 && P(&F7, 12, 2, 1) == 1,
             "V6 must stop at the violation (v6 plane 11 sum %g), V7 not (v7 %g)", (double)plane_sum(&F6, 11),
             (double)P(&F7, 11, 1, 1));
    hc_check("features-old-2.8",
             P(&F3, 9, 5, 4) == 1 && P(&F3, 10, 5, 5) == 1 && P(&F3, 11, 1, 1) == 1 && P(&F3, 12, 2, 1) == 1 &&
                 plane_sum(&F3, 13) == 0 && P(&F5, 8, 1, 1) == 1 && P(&F5, 9, 2, 1) == 1,
             "V3/V5 show every alternating move");
    p.max_history = 0;
    fill_all(h, &p, 7, 7);
    hc_check("features-old-2.9",
             P(&F3, 9, 5, 4) == 1 && P(&F4, 9, 5, 4) == 1 && P(&F5, 6, 5, 4) == 1 && plane_sum(&F6, 9) == 0 &&
                 plane_sum(&F7, 9) == 0,
             "maxHistory 0 hides moves in V6/V7 only");
    hc_history_free(h);
}

static void check_ladder(void)
{
    const char *rows[] = {".......", ".x.....", ".......", ".......", ".......", ".......", "......."};
    hc_history *h = mk("chinese", NAN, 7, 7, rows, HC_C_BLACK);
    hc_nninput_params p = hc_nninput_params_default();
    if (!h || play(h, 5, 5) || play(h, 0, 0) || fill_all(h, &p, 7, 7)) {
        hc_check("features-old-3.0", 0, "setup failed");
        hc_history_free(h);
        return;
    }
    /* black to move: white's new corner stone (2 liberties) is caught by black at (1,0) or (0,1) */
    int ok = 1;
    const feat *fs[] = {&F3, &F4, &F6};
    for (int i = 0; i < 3; i++)
        ok &= P(fs[i], 14, 0, 0) == 1 && plane_sum(fs[i], 14) == 1 && P(fs[i], 17, 1, 0) == 1 && P(fs[i], 17, 0, 1) == 1 &&
              plane_sum(fs[i], 17) == 2 && plane_sum(fs[i], 15) == 0 && plane_sum(fs[i], 16) == 0 && P(fs[i], 4, 0, 0) == 1;
    hc_check("features-old-3.1", ok, "ladder planes 14/17 at the corner stone, none on the earlier boards");
    play(h, 5, 3);
    play(h, 3, 5);
    fill_all(h, &p, 7, 7);
    ok = 1;
    for (int i = 0; i < 3; i++)
        ok &= P(fs[i], 15, 0, 0) == 1 && P(fs[i], 16, 0, 0) == 1 && P(fs[i], 14, 0, 0) == 1;
    hc_check("features-old-3.2", ok, "two moves later the stone is laddered on the earlier boards too");
    /* hiding the history (V3/V4: conservative pass when a pass ends the game) makes them the current board's */
    hc_history_free(h);
}

static void check_area(void)
{
    hc_nninput_params p = hc_nninput_params_default();
    const char *lone[] = {".....", ".....", "..x..", ".....", "....."};
    hc_history *h = mk("chinese", NAN, 5, 5, lone, HC_C_WHITE);
    fill_all(h, &p, 5, 5);
    /* area scoring: V3 (and V6, tax none) count the whole board for black's lone stone, V4 only pass-alive area */
    hc_check("features-old-4.1",
             plane_sum(&F3, 19) == 25 && plane_sum(&F3, 18) == 0 && plane_sum(&F6, 19) == 25 && plane_sum(&F4, 18) == 0 &&
                 plane_sum(&F4, 19) == 0,
             "lone stone, area scoring: v3 %g v6 %g v4 %g", (double)plane_sum(&F3, 19), (double)plane_sum(&F6, 19),
             (double)plane_sum(&F4, 19));
    hc_history_free(h);
    h = mk("japanese", NAN, 5, 5, lone, HC_C_WHITE);
    fill_all(h, &p, 5, 5);
    hc_check("features-old-4.2",
             plane_sum(&F3, 19) == 0 && plane_sum(&F4, 19) == 0 && plane_sum(&F6, 19) == 0 && F3.gl[9] == 1 && F5.gl[9] == 1 &&
                 F6.gl[9] == 1 && F3.gl[13] == 0 && F6.gl[15] == 0,
             "lone stone, territory scoring: no area planes, no komi wave before the second encore");
    hc_history_free(h);

    const char *alive[] = {".x.x.", "xxxxx", ".....", "..o..", "....."};
    const char *rules[] = {"chinese", "japanese"};
    for (int r = 0; r < 2; r++) {
        h = mk(rules[r], NAN, 5, 5, alive, HC_C_BLACK);
        fill_all(h, &p, 5, 5);
        char name[64];
        snprintf(name, sizeof name, "features-old-4.%d", 3 + r);
        /* pass-alive black group: 7 stones and 3 eyes; the big region holds a white stone */
        hc_check(name,
                 plane_sum(&F4, 18) == 10 && P(&F4, 18, 0, 0) == 1 && P(&F4, 18, 2, 1) == 1 && P(&F4, 18, 0, 2) == 0 &&
                     plane_sum(&F4, 19) == 0 && P(&F3, 18, 4, 0) == 1 && plane_sum(&F3, 18) == 10 &&
                     P(&F3, 19, 2, 3) == (r == 0 ? 1.0f : 0.0f) && plane_sum(&F3, 19) == (r == 0 ? 1.0f : 0.0f),
                 "%s: v4 18 sum %g, v3 18 sum %g, v3 white stone %g", rules[r], (double)plane_sum(&F4, 18),
                 (double)plane_sum(&F3, 18), (double)P(&F3, 19, 2, 3));
        hc_history_free(h);
    }
}

/* A 5x5 board with one black and one white stone. */
static const char *const two_stones[] = {".....", ".x...", ".....", "...o.", "....."};

/* two_stones under rules, black to move, after two passes; every version's features filled by p. */
static hc_history *after_two_passes(const char *rules, const hc_nninput_params *p)
{
    hc_history *h = mk(rules, NAN, 5, 5, two_stones, HC_C_BLACK);
    play(h, -1, -1);
    play(h, -1, -1);
    fill_all(h, p, 5, 5);
    return h;
}

static void check_encore(void)
{
    hc_nninput_params p = hc_nninput_params_default();
    hc_history *h = after_two_passes("japanese", &p);
    hc_check("features-old-5.1",
             hc_history_encore_phase(h) == 1 && F3.gl[10] == 1 && F3.gl[11] == 0 && F5.gl[10] == 1 && F5.gl[11] == 0 &&
                 F6.gl[12] == 1 && F6.gl[13] == 0 && plane_sum(&F3, 20) == 0 && plane_sum(&F5, 11) == 0 && F3.gl[0] == 1 &&
                 F3.gl[1] == 1 && F5.gl[0] == 1 && F6.gl[0] == 0,
             "first encore: phase %d v3 %g %g v6 %g %g v3 passes %g %g v6 %g", hc_history_encore_phase(h),
             (double)F3.gl[10], (double)F3.gl[11], (double)F6.gl[12], (double)F6.gl[13], (double)F3.gl[0],
             (double)F3.gl[1], (double)F6.gl[0]);
    play(h, -1, -1);
    play(h, -1, -1);
    fill_all(h, &p, 5, 5);
    /* second encore, black to move, komi 6.5 on 25 points: -6.5/15, wave 0.5 */
    hc_check("features-old-5.2",
             hc_history_encore_phase(h) == 2 && hc_history_next_pla(h) == HC_C_BLACK && P(&F3, 20, 1, 1) == 1 &&
                 P(&F3, 21, 3, 3) == 1 && plane_sum(&F3, 20) == 1 && plane_sum(&F3, 21) == 1 && P(&F4, 20, 1, 1) == 1 &&
                 P(&F5, 11, 1, 1) == 1 && P(&F5, 12, 3, 3) == 1 && P(&F6, 20, 1, 1) == 1 && P(&F6, 21, 3, 3) == 1,
             "second encore start stones");
    hc_check("features-old-5.3",
             F3.gl[10] == 1 && F3.gl[11] == 1 && F5.gl[10] == 1 && F5.gl[11] == 1 && F6.gl[12] == 1 && F6.gl[13] == 1 &&
                 F3.gl[5] == -6.5f / 15.0f && F3.gl[13] == 0.5f && F6.gl[5] == -6.5f / 20.0f && F6.gl[15] == 0.5f &&
                 F3.gl[12] == 0 && F6.gl[14] == 0,
             "second encore globals: v3 komi %g wave %g v6 komi %g wave %g", (double)F3.gl[5], (double)F3.gl[13],
             (double)F6.gl[5], (double)F6.gl[15]);
    /* V3-V5 keep the passes of the earlier phases, V6 starts the phase without history */
    hc_check("features-old-5.4",
             F3.gl[0] == 1 && F3.gl[1] == 1 && F3.gl[2] == 1 && F3.gl[3] == 1 && F3.gl[4] == 0 && F5.gl[3] == 1 &&
                 F6.gl[0] == 0 && F6.gl[1] == 0,
             "passes: v3 %g %g %g %g %g v6 %g", (double)F3.gl[0], (double)F3.gl[1], (double)F3.gl[2], (double)F3.gl[3],
             (double)F3.gl[4], (double)F6.gl[0]);
    /* territory planes: V6 counts independent-life area plus the stones there at the second encore's
     * start; V3/V4 only pass-alive area (none here) */
    hc_check("features-old-5.5",
             P(&F6, 18, 1, 1) == 1 && P(&F6, 19, 3, 3) == 1 && plane_sum(&F6, 18) == 1 && plane_sum(&F6, 19) == 1 &&
                 plane_sum(&F3, 18) == 0 && plane_sum(&F3, 19) == 0 && plane_sum(&F4, 18) == 0,
             "second encore area planes: v6 %g %g v3 %g", (double)plane_sum(&F6, 18), (double)plane_sum(&F6, 19),
             (double)plane_sum(&F3, 18));
    play(h, -1, -1);
    fill_all(h, &p, 5, 5);
    hc_check("features-old-5.6", F3.gl[12] == 1 && F3.gl[0] == 1 && F6.gl[14] == 1 && F6.gl[0] == 1,
             "white's pass would end the game: v3 %g v6 %g", (double)F3.gl[12], (double)F6.gl[14]);
    p.conservative_pass_and_is_root = true;
    fill_all(h, &p, 5, 5);
    hc_check("features-old-5.7",
             F3.gl[12] == 0 && F3.gl[0] == 0 && F5.gl[0] == 0 && F6.gl[14] == 0 && F6.gl[0] == 0 && F3.gl[10] == 1,
             "conservative pass at the root hides history and pass-ends-phase: v3 %g %g v6 %g %g", (double)F3.gl[12],
             (double)F3.gl[0], (double)F6.gl[14], (double)F6.gl[0]);
    hc_history_free(h);
}

static void check_finished(void)
{
    hc_nninput_params p = hc_nninput_params_default();
    hc_history *h = after_two_passes("chinese", &p);
    hc_check("features-old-6.1",
             hc_history_is_game_finished(h) && F3.gl[0] == 0 && F3.gl[1] == 0 && F4.gl[0] == 0 && F5.gl[0] == 0 &&
                 F3.gl[12] == 0 && F6.gl[0] == 1 && F6.gl[1] == 0,
             "finished game: v3 hides all (%g %g), v6 shows the last pass (%g %g)", (double)F3.gl[0], (double)F3.gl[12],
             (double)F6.gl[0], (double)F6.gl[1]);
    hc_history_free(h);
}

static void check_rules_globals(void)
{
    hc_nninput_params p = hc_nninput_params_default();
    hc_history *h = mk("chinese", 100.0f, 5, 5, NULL, HC_C_WHITE);
    fill_all(h, &p, 5, 5);
    /* komi 100 clipped to area + 1 = 26 (V3-V6), area + 20 = 45 (V7); wave at 26 on 25 points: 0 */
    hc_check("features-old-7.1",
             F3.gl[5] == 26.0f / 15.0f && F4.gl[5] == 26.0f / 15.0f && F5.gl[5] == 26.0f / 15.0f &&
                 F6.gl[5] == 26.0f / 20.0f && F7.gl[5] == 45.0f / 20.0f && F3.gl[13] == 0 && F6.gl[15] == 0,
             "clipped komi %g %g %g %g", (double)F3.gl[5], (double)F5.gl[5], (double)F6.gl[5], (double)F7.gl[5]);
    hc_history_free(h);
    h = mk("chinese", -100.0f, 5, 5, NULL, HC_C_WHITE);
    fill_all(h, &p, 5, 5);
    hc_check("features-old-7.2", F3.gl[5] == -26.0f / 15.0f && F6.gl[5] == -26.0f / 20.0f, "clipped komi %g %g",
             (double)F3.gl[5], (double)F6.gl[5]);
    hc_history_free(h);

    struct {
        const char *rules;
        float g6, g7, g8, tax10, tax11;
    } cases[] = {
        {"koPOSITIONALscoreAREAtaxALLsui1komi7.5", 1, 0.5f, 1, 1, 1},
        {"koSITUATIONALscoreAREAtaxSEKIsui0komi7.5", 1, -0.5f, 0, 1, 0},
        {"koSPIGHTscoreTERRITORYtaxNONEsui0komi6.5", 1, 0.5f, 0, 0, 0},
    };
    for (int i = 0; i < 3; i++) {
        h = mk(cases[i].rules, NAN, 5, 5, NULL, HC_C_BLACK);
        fill_all(h, &p, 5, 5);
        char name[64];
        snprintf(name, sizeof name, "features-old-7.%d", 3 + i);
        int ok = 1;
        const feat *fs[] = {&F3, &F4, &F5, &F6};
        for (int k = 0; k < 4; k++)
            ok &= fs[k]->gl[6] == cases[i].g6 && fs[k]->gl[7] == cases[i].g7 && fs[k]->gl[8] == cases[i].g8;
        ok &= F6.gl[10] == cases[i].tax10 && F6.gl[11] == cases[i].tax11 && F3.gl[10] == 0 && F3.gl[11] == 0 &&
              F5.gl[10] == 0 && F5.gl[11] == 0;
        hc_check(name, ok, "%s: ko/suicide/tax globals v3 %g %g %g %g %g v6 %g %g", cases[i].rules, (double)F3.gl[6],
                 (double)F3.gl[7], (double)F3.gl[8], (double)F3.gl[10], (double)F3.gl[11], (double)F6.gl[10],
                 (double)F6.gl[11]);
        hc_history_free(h);
    }
}

static int same(const feat *a, const feat *b)
{
    return memcmp(a->sp, b->sp, sizeof(float) * (size_t)a->ns * a->nx * a->ny) == 0 &&
           memcmp(a->gl, b->gl, sizeof(float) * (size_t)a->ng) == 0;
}

/* Settings that V3-V6 do not read: playoutDoublingAdvantage, the passing hack, the button. */
static void check_ignored_settings(void)
{
    /* no friendly pass: a pass would end the game, which black (-6.5 on the board now) would lose */
    hc_history *h = mk("koSIMPLEscoreAREAtaxNONEsui0komi7.5", NAN, 5, 5, two_stones, HC_C_BLACK);
    play(h, 2, 2);
    play(h, -1, -1);
    hc_nninput_params p = hc_nninput_params_default(), q = p;
    q.playout_doubling_advantage = 1.5;
    q.enable_passing_hacks = true;
    static feat a[4], b[4];
    int ok = 1;
    for (int v = 3; v <= 6; v++) {
        fill(&a[v - 3], v, h, &p, 5, 5);
        fill(&b[v - 3], v, h, &q, 5, 5);
        ok &= v == 6 || same(&a[v - 3], &b[v - 3]);
        ok &= v != 6 || (a[3].gl[14] == 1 && a[3].gl[0] == 1 && b[3].gl[14] == 0 && b[3].gl[0] == 0);
    }
    hc_check("features-old-8.1", ok, "pda/passing hacks changed V3-V5, or the passing hack did not hide V6's history");
    hc_history_free(h);
    hc_rules r;
    hc_err err = {0};
    hc_rules_parse("aga-button", &r, &err);
    h = mk("aga-button", NAN, 5, 5, two_stones, HC_C_BLACK);
    fill(&a[0], 6, h, &p, 5, 5);
    fill(&F7, 7, h, &p, 5, 5);
    hc_check("features-old-8.2", r.has_button && F7.gl[17] == 1 && a[0].gl[15] == F7.gl[18] && a[0].gl[14] == F7.gl[14],
             "button rules: v7 button %g, v6 wave %g vs %g", (double)F7.gl[17], (double)a[0].gl[15], (double)F7.gl[18]);
    hc_history_free(h);
}

/* --- the planes each version shares with V7, on real positions ------------------------------ */

typedef struct agg {
    long n, bad[12];
    char first[12][200];
} agg;

static void fail_once(agg *g, int k, const char *what, long idx)
{
    if (!g->bad[k]++)
        snprintf(g->first[k], sizeof g->first[k], "%s (position %ld)", what, idx);
}

static int planes_eq(const feat *a, int ca, const feat *b, int cb)
{
    size_t n = (size_t)a->nx * a->ny;
    return memcmp(a->sp + ca * n, b->sp + cb * n, n * sizeof(float)) == 0;
}

static int plane_zero(const feat *a, int c)
{
    size_t n = (size_t)a->nx * a->ny;
    for (size_t i = 0; i < n; i++)
        if (a->sp[c * n + i] != 0)
            return 0;
    return 1;
}

static void compare_one(agg *g, const hc_history *h, long idx, int nx, int ny)
{
    hc_nninput_params p = hc_nninput_params_default();
    if (fill_all(h, &p, nx, ny)) {
        fail_once(g, 0, "fill failed", idx);
        return;
    }
    g->n++;
    const hc_board *bd = hc_history_board(h);
    const hc_rules *r = hc_history_rules(h);
    int pla = hc_history_next_pla(h);
    /* every float written; 0 outside the board; the on-board mask */
    const feat *fs[] = {&F3, &F4, &F5, &F6, &F7};
    for (int k = 0; k < 5; k++) {
        const feat *f = fs[k];
        int ok = 1;
        for (int c = 0; c < f->ns; c++)
            for (int y = 0; y < ny; y++)
                for (int x = 0; x < nx; x++) {
                    float v = P(f, c, x, y);
                    ok &= v == v && (x < bd->x_size && y < bd->y_size ? (c != 0 || v == 1) : v == 0);
                }
        for (int i = 0; i < f->ng; i++)
            ok &= f->gl[i] == f->gl[i];
        if (!ok)
            fail_once(g, 1, "unwritten value, nonzero padding or bad mask", idx);
    }
    /* always shared: stones, liberties, ko, current ladders, second encore; rules and encore globals */
    int ok = 1;
    for (int c = 0; c <= 8; c++)
        ok &= planes_eq(&F3, c, &F7, c) && planes_eq(&F4, c, &F7, c) && planes_eq(&F6, c, &F7, c);
    int always[] = {14, 17, 20, 21};
    for (int i = 0; i < 4; i++)
        ok &= planes_eq(&F3, always[i], &F7, always[i]) && planes_eq(&F4, always[i], &F7, always[i]) &&
              planes_eq(&F6, always[i], &F7, always[i]);
    ok &= planes_eq(&F6, 18, &F7, 18) && planes_eq(&F6, 19, &F7, 19);
    ok &= planes_eq(&F5, 0, &F7, 0) && planes_eq(&F5, 1, &F7, 1) && planes_eq(&F5, 2, &F7, 2) &&
          planes_eq(&F5, 3, &F7, 6) && planes_eq(&F5, 4, &F7, 7) && plane_zero(&F5, 5) && planes_eq(&F5, 11, &F7, 20) &&
          planes_eq(&F5, 12, &F7, 21);
    if (!ok)
        fail_once(g, 2, "a plane the spec shares with V7 differs", idx);
    ok = 1;
    for (int i = 6; i <= 9; i++)
        ok &= F3.gl[i] == F7.gl[i] && F4.gl[i] == F7.gl[i] && F5.gl[i] == F7.gl[i] && F6.gl[i] == F7.gl[i];
    for (int i = 10; i <= 14; i++)
        ok &= F6.gl[i] == F7.gl[i];
    ok &= F3.gl[10] == F7.gl[12] && F3.gl[11] == F7.gl[13] && F5.gl[10] == F7.gl[12] && F5.gl[11] == F7.gl[13];
    if (!ok)
        fail_once(g, 3, "rules/encore globals differ from V7's", idx);
    /* V3, V4, V5 show the same history; V4 only differs from V3 in the area planes */
    ok = 1;
    for (int c = 0; c < 22; c++)
        ok &= c == 18 || c == 19 || planes_eq(&F3, c, &F4, c);
    for (int i = 0; i < 14; i++)
        ok &= F3.gl[i] == F4.gl[i];
    for (int k = 0; k < 5; k++)
        ok &= planes_eq(&F5, 6 + k, &F3, 9 + k);
    for (int i = 0; i < 12; i++)
        ok &= F5.gl[i] == F3.gl[i];
    if (!ok)
        fail_once(g, 4, "V3/V4/V5 differ beyond area planes", idx);
    /* history: equal to V7's when neither side caps it */
    bool finished = hc_history_is_game_finished(h) || hc_history_is_past_normal_phase_end(h);
    bool suppress = hc_history_pass_would_end_game(h, pla) && hc_history_should_suppress_end_game_from_friendly_pass(h, pla);
    int approx = hc_history_num_approx_valid_turns_this_phase(h), consec = hc_history_num_consec_valid_turns_this_game(h);
    int nm = hc_history_num_moves(h);
    if (!finished && !suppress && approx >= 5) {
        ok = 1;
        for (int c = 9; c <= 16; c++)
            ok &= planes_eq(&F3, c, &F7, c);
        for (int i = 0; i < 5; i++)
            ok &= F3.gl[i] == F7.gl[i];
        ok &= F3.gl[12] == F7.gl[14];
        if (!ok)
            fail_once(g, 5, "V3 history differs from V7's where neither is capped", idx);
    }
    if (!finished && !suppress && approx < 5 && approx < nm) {
        /* V3 ignores the phase: it may show moves V7 hides, never fewer */
        ok = 1;
        for (int c = 9; c <= 13; c++)
            for (int i = 0; i < nx * ny; i++)
                ok &= F3.sp[c * nx * ny + i] >= F7.sp[c * nx * ny + i];
        if (!ok)
            fail_once(g, 6, "V3 shows less history than V7 in a new phase", idx);
    }
    if (finished) {
        ok = F3.gl[0] == 0 && F3.gl[12] == 0 && plane_zero(&F3, 9) && planes_eq(&F3, 15, &F3, 14);
        if (!ok)
            fail_once(g, 7, "V3 shows history in a finished game", idx);
    }
    if (consec >= approx || consec >= 5) {
        ok = 1;
        for (int c = 9; c <= 16; c++)
            ok &= planes_eq(&F6, c, &F7, c);
        for (int i = 0; i < 5; i++)
            ok &= F6.gl[i] == F7.gl[i];
        if (!ok)
            fail_once(g, 8, "V6 history differs from V7's without a rules violation", idx);
    }
    /* komi: same wave as V7 while neither clip applies */
    float area = (float)(bd->x_size * bd->y_size);
    float sk = hc_history_current_self_komi(h, pla, 0.5);
    if (sk <= area + 1 && sk >= -area - 1) {
        ok = F3.gl[5] == sk / 15.0f && F5.gl[5] == sk / 15.0f && F6.gl[5] == F7.gl[5] && F3.gl[13] == F7.gl[18] &&
             F6.gl[15] == F7.gl[18];
        if (!ok)
            fail_once(g, 9, "komi or komi wave differs", idx);
    }
    /* area planes: V3 is V7's under area scoring without tax; V4's pass-alive area is within V3's */
    ok = 1;
    if (r->scoring_rule == HC_SCORING_AREA && r->tax_rule == HC_TAX_NONE)
        ok &= planes_eq(&F3, 18, &F7, 18) && planes_eq(&F3, 19, &F7, 19);
    if (r->scoring_rule == HC_SCORING_TERRITORY)
        ok &= planes_eq(&F3, 18, &F4, 18) && planes_eq(&F3, 19, &F4, 19);
    for (int c = 18; c <= 19; c++)
        for (int i = 0; i < nx * ny; i++)
            ok &= F4.sp[c * nx * ny + i] <= F3.sp[c * nx * ny + i];
    if (!ok)
        fail_once(g, 10, "area planes inconsistent", idx);
}

static void check_positions(const char *id, const char *rel, int nx, int ny)
{
    char name[64];
    const char *path = hc_shared(rel);
    if (!path) {
        snprintf(name, sizeof name, "%s.0", id);
        hc_skip_n(name, 12, "../shared/%s absent", rel);
        return;
    }
    hc_err err = {0};
    hc_position *ps = NULL;
    size_t n = 0;
    snprintf(name, sizeof name, "%s.1", id);
    if (!hc_check(name, hc_positions_load(path, &ps, &n, &err) == 0 && n > 0, "%s", err.msg)) {
        snprintf(name, sizeof name, "%s.rest", id);
        hc_fail_n(name, 11, "not run: the positions did not load"); /* 12 checks a file */
        return;
    }
    const char *variants[] = {NULL, "koSIMPLEscoreTERRITORYtaxSEKIsui0", "koPOSITIONALscoreAREAtaxALLsui0",
                              "koSIMPLEscoreTERRITORYtaxNONEsui0"};
    agg g;
    memset(&g, 0, sizeof g);
    long n_build = 0, n_encore2 = 0, n_finished = 0, n_viol = 0;
    for (size_t i = 0; i < n; i++)
        for (int v = 0; v < 4; v++) {
            hc_position q = ps[i];
            if (variants[v]) {
                if (i % 3 != 0)
                    continue;
                snprintf(q.rules, sizeof q.rules, "%skomi%g", variants[v], (double)q.komi);
            }
            hc_history *h = hc_history_from_position(&q, &err);
            if (!h) {
                n_build++;
                continue;
            }
            compare_one(&g, h, ps[i].index, nx, ny);
            if (hc_history_num_consec_valid_turns_this_game(h) < hc_history_num_approx_valid_turns_this_phase(h))
                n_viol++;
            /* then 1 to 5 passes: game end (area), encore phases (territory) */
            int passes = 1 + (int)(i % 5);
            for (int k = 0; k < passes && !hc_history_is_game_finished(h); k++) {
                if (hc_history_play_tolerant(h, -1, -1, hc_history_next_pla(h), &err))
                    break;
                compare_one(&g, h, ps[i].index, nx, ny);
                n_encore2 += hc_history_encore_phase(h) == 2;
            }
            n_finished += hc_history_is_game_finished(h);
            hc_history_free(h);
        }
    const char *what[] = {"fill",         "padding/mask",       "shared planes",   "rules globals",
                          "V3/V4/V5",     "V3 history",         "V3 new phase",    "V3 finished",
                          "V6 history",   "komi",               "area"};
    for (int k = 0; k < 11; k++) {
        snprintf(name, sizeof name, "%s.%d", id, k + 2);
        hc_check(name, g.bad[k] == 0, "%s: %ld of %ld rows, first: %s", what[k], g.bad[k], g.n, g.first[k]);
    }
    printf("# %s: %ld rows (%s, %dx%d buffer), %ld in the second encore, %ld games finished, %ld with a rules "
           "violation in the last turns, %ld not built\n",
           id, g.n, rel, nx, ny, n_encore2, n_finished, n_viol, n_build);
    hc_positions_free(ps, n);
}

/* --- CLI ------------------------------------------------------------------------------------- */

static void check_cli(void)
{
    const char *bin = getenv("HALFCHECK");
    const char *pos = hc_shared("positions/size10x14.jsonl.gz");
    if (!bin || !pos) {
        hc_skip_n("features-old-9.0", 6, "HALFCHECK unset or ../shared/positions absent");
        return;
    }
    char pos_path[4096], net[4096], cmd[10000], out[600];
    snprintf(pos_path, sizeof pos_path, "%s", pos);
    const char *nt = hc_shared("nets/synth/pub_v7.bin.gz");
    snprintf(net, sizeof net, "%s", nt ? nt : "");
    const char *dir = hc_tmpdir("test_features_old");
    hc_err err = {0};
    hc_position *ps = NULL;
    size_t n = 0;
    if (!dir || hc_positions_load(pos_path, &ps, &n, &err)) {
        hc_check("features-old-9.0", 0, "setup: %s", err.msg);
        return;
    }
    static feat f;
    for (int v = 3; v <= 7; v++) {
        char name[64];
        snprintf(out, sizeof out, "%s/v%d.f32", dir, v);
        if (v == 6 && nt)
            snprintf(cmd, sizeof cmd, "%s features --positions %s --nn 10x14 --net %s --out %s 2>/dev/null", bin, pos_path,
                     net, out);
        else
            snprintf(cmd, sizeof cmd, "%s features --positions %s --nn 10x14 --inputs-version %d --out %s 2>/dev/null", bin,
                     pos_path, v, out);
        int rc = system(cmd);
        hc_istream *in = rc == 0 ? hc_istream_open(out, &err) : NULL;
        long bad = in ? 0 : -1;
        size_t rec = (size_t)hc_features_num_spatial(v) * 140 + (size_t)hc_features_num_global(v);
        static float row[MAXP + 19];
        hc_nninput_params p = hc_nninput_params_default();
        if (v == 6)
            p.pass_alive_suicide_rules_override = 0;
        for (size_t i = 0; in && i < n; i++) {
            hc_history *h = hc_history_from_position(&ps[i], &err);
            if (!h || hc_istream_read(in, row, rec * sizeof(float), &err) || fill(&f, v, h, &p, 10, 14) ||
                memcmp(row, f.sp, (size_t)f.ns * 140 * sizeof(float)) || memcmp(row + f.ns * 140, f.gl, (size_t)f.ng * sizeof(float)))
                bad++;
            hc_history_free(h);
        }
        if (in) {
            char extra;
            bad += hc_istream_read_some(in, &extra, 1, &err) != 0;
            hc_istream_close(in);
        }
        snprintf(name, sizeof name, "features-old-9.%d", v);
        hc_check(name, bad == 0, "%s: exit %d, %ld records differ from hc_features_fill(%d)", cmd, rc, bad, v);
    }
    snprintf(cmd, sizeof cmd, "%s features --positions %s --nn 10x14 --inputs-version 8 --out %s/bad.f32 2>/dev/null", bin,
             pos_path, dir);
    int rc = system(cmd);
    hc_check("features-old-9.8", rc != -1 && WEXITSTATUS(rc) == 2, "--inputs-version 8 accepted: exit %d", WEXITSTATUS(rc));
    hc_positions_free(ps, n);
}

int main(void)
{
    hc_plan(2 + 9 + 2 + 4 + 7 + 1 + 5 + 2 + 2 * 12 + 6); /* 1-8 the API and rules; 10, 11 two position files (12 each); 9 the cli */
    check_api();
    check_ko();
    check_ladder();
    check_area();
    check_encore();
    check_finished();
    check_rules_globals();
    check_ignored_settings();
    check_positions("features-old-10", "positions/size9.jsonl.gz", 9, 9);
    check_positions("features-old-11", "positions/sizerect.jsonl.gz", 19, 19);
    check_cli();
    return hc_test_exit();
}
