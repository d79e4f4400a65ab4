/* Features: every position of every golden feature set (configs.json) featurized with fillRowV7
 * and compared bit for bit with KataGo's own rows; also the derived history state the positions
 * files record (symmetry from the situation hash, white handicap bonus, encore phase). */
#include <jansson.h>
#include <stdint.h>
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

static const char *chan_name(int c) { return c < HC_FEATURES_V7_SPATIAL ? "spatial" : "global"; }

static void check_set(const char *id, const char *pos_rel, const char *feat_rel, int nn_x, int nn_y, long expect_count)
{
    const unsigned long mark = hc_test_reported; /* 8 checks a set, whatever stops it */
    char name[96];
    char pos_path[4096], feat_path[4096];
    const char *p = hc_shared(pos_rel);
    if (!p) {
        snprintf(name, sizeof name, "%s.0", id);
        hc_skip_n(name, hc_test_left(mark, 8), "../shared/%s absent", pos_rel);
        return;
    }
    snprintf(pos_path, sizeof pos_path, "%s", p);
    p = hc_shared(feat_rel);
    if (!p) {
        snprintf(name, sizeof name, "%s.0", id);
        hc_skip_n(name, hc_test_left(mark, 8), "../shared/%s absent", feat_rel);
        return;
    }
    snprintf(feat_path, sizeof feat_path, "%s", p);

    hc_err err = {0};
    hc_position *ps = NULL;
    size_t n = 0;
    snprintf(name, sizeof name, "%s.1", id);
    if (!hc_check(name, hc_positions_load(pos_path, &ps, &n, &err) == 0, "%s", err.msg)) {
        snprintf(name, sizeof name, "%s.2", id);
        hc_fail_n(name, hc_test_left(mark, 8), "not run: the positions did not load");
        return;
    }
    snprintf(name, sizeof name, "%s.2", id);
    hc_check(name, (long)n == expect_count, "%zu positions, configs.json says %ld", n, expect_count);

    hc_istream *in = hc_istream_open(feat_path, &err);
    snprintf(name, sizeof name, "%s.3", id);
    if (!hc_check(name, in != NULL, "%s", err.msg)) {
        hc_positions_free(ps, n);
        snprintf(name, sizeof name, "%s.4", id);
        hc_fail_n(name, hc_test_left(mark, 8), "not run: the features file did not open");
        return;
    }
    size_t ns = (size_t)HC_FEATURES_V7_SPATIAL * nn_x * nn_y, rec = ns + HC_FEATURES_V7_GLOBAL;
    float *want = malloc(rec * sizeof(float));
    float *got = malloc(rec * sizeof(float));
    hc_nninput_params params = hc_nninput_params_default();
    long n_build_fail = 0, n_identical = 0, n_sym_bad = 0, n_derived_bad = 0;
    char first_diff[512] = "", first_build[1100] = "", first_sym[256] = "", first_derived[256] = "";
    for (size_t i = 0; i < n; i++) {
        if (hc_istream_read(in, want, rec * sizeof(float), &err)) {
            snprintf(first_diff, sizeof first_diff, "features file ends early: %s", err.msg);
            break;
        }
        hc_history *h = hc_history_from_position(&ps[i], &err);
        if (!h) {
            if (!n_build_fail++)
                snprintf(first_build, sizeof first_build, "%s", err.msg);
            continue;
        }
        int pla = hc_history_next_pla(h);
        int sym = (int)(hc_history_situation_hash(h, pla, 0.5).hash0 & 7);
        if (sym != ps[i].symmetry && !n_sym_bad++)
            snprintf(first_sym, sizeof first_sym, "position %ld: symmetry %d, file says %d", ps[i].index, sym, ps[i].symmetry);
        if ((hc_history_white_handicap_bonus_score(h) != ps[i].white_handicap_bonus_score ||
             hc_history_encore_phase(h) != ps[i].encore_phase) &&
            !n_derived_bad++)
            snprintf(first_derived, sizeof first_derived, "position %ld: whb %g encore %d, file says %g %d", ps[i].index,
                     (double)hc_history_white_handicap_bonus_score(h), hc_history_encore_phase(h),
                     (double)ps[i].white_handicap_bonus_score, ps[i].encore_phase);
        params.pass_alive_suicide_rules_override = 0;
        if (hc_features_fill_v7(h, pla, &params, nn_x, nn_y, got, got + ns, &err)) {
            if (!n_build_fail++)
                snprintf(first_build, sizeof first_build, "%s", err.msg);
            hc_history_free(h);
            continue;
        }
        hc_history_free(h);
        if (memcmp(want, got, rec * sizeof(float)) == 0) {
            n_identical++;
            continue;
        }
        if (first_diff[0] == 0) {
            size_t k = 0;
            while (k < rec && memcmp(&want[k], &got[k], sizeof(float)) == 0)
                k++;
            if (k < ns) {
                int ch = (int)(k / ((size_t)nn_x * nn_y)), rem = (int)(k % ((size_t)nn_x * nn_y));
                snprintf(first_diff, sizeof first_diff, "first difference: position %ld, channel %d (%s), x %d, y %d: KataGo %g, ours %g",
                         ps[i].index, ch, chan_name(ch), rem % nn_x, rem / nn_x, (double)want[k], (double)got[k]);
            } else {
                snprintf(first_diff, sizeof first_diff, "first difference: position %ld, global %d: KataGo %.9g, ours %.9g", ps[i].index,
                         (int)(k - ns), (double)want[k], (double)got[k]);
            }
        }
    }
    snprintf(name, sizeof name, "%s.4", id);
    hc_check(name, n_build_fail == 0, "%ld positions failed to build or featurize; first: %s", n_build_fail, first_build);
    snprintf(name, sizeof name, "%s.5", id);
    hc_check(name, n_sym_bad == 0, "%ld positions with another symmetry; first: %s", n_sym_bad, first_sym);
    snprintf(name, sizeof name, "%s.6", id);
    hc_check(name, n_derived_bad == 0, "%ld positions with other derived state; first: %s", n_derived_bad, first_derived);
    snprintf(name, sizeof name, "%s.7", id);
    hc_check(name, n_identical == (long)n, "%ld of %zu positions bit-identical; %s", n_identical, n, first_diff);
    char extra;
    snprintf(name, sizeof name, "%s.8", id);
    hc_check(name, hc_istream_read(in, &extra, 1, &err) != 0, "features file has more records than positions");
    printf("# %s: %ld/%zu positions bit-identical (%s, %dx%d)\n", id, n_identical, n, feat_rel, nn_x, nn_y);
    free(want);
    free(got);
    hc_istream_close(in);
    hc_positions_free(ps, n);
}

/* The command writes the same bytes as KataGo's golden file, and refuses a buffer too small. */
static void check_cli(void)
{
    const char *bin = getenv("HALFCHECK");
    const char *pos = hc_shared("positions/size10x14.jsonl.gz");
    char pos_path[4096], gold[4096];
    if (!bin || !pos) {
        hc_skip_n("features-9.0", 3, "HALFCHECK unset or ../shared/positions absent");
        return;
    }
    snprintf(pos_path, sizeof pos_path, "%s", pos);
    const char *g = hc_shared("golden/features/size10x14_10x14.f32.gz");
    if (!g) {
        hc_skip_n("features-9.0", 3, "golden 10x14 features absent");
        return;
    }
    snprintf(gold, sizeof gold, "%s", g);
    const char *dir = hc_tmpdir("test_features");
    char out[600], cmd[10000];
    snprintf(out, sizeof out, "%s/f10x14.f32.gz", dir);
    snprintf(cmd, sizeof cmd, "%s features --positions %s --nn 10x14 --out %s 2>/dev/null", bin, pos_path, out);
    int rc = system(cmd);
    if (!hc_check("features-9.1", rc == 0, "%s exited with %d", cmd, rc)) {
        hc_fail_n("features-9.2", 2, "not run: halfcheck features failed");
        return;
    }
    hc_err err = {0};
    hc_istream *a = hc_istream_open(out, &err), *b = hc_istream_open(gold, &err);
    int same = a && b;
    char ba[4096], bb[4096];
    while (same) {
        long na = hc_istream_read_some(a, ba, sizeof ba, &err);
        long nb = na > 0 ? (long)(hc_istream_read(b, bb, (size_t)na, &err) == 0 ? na : -1) : hc_istream_read_some(b, bb, 1, &err);
        if (na <= 0) {
            same = nb == 0;
            break;
        }
        if (nb != na || memcmp(ba, bb, (size_t)na) != 0)
            same = 0;
    }
    hc_check("features-9.2", same, "halfcheck features output differs from %s", gold);
    if (a)
        hc_istream_close(a);
    if (b)
        hc_istream_close(b);
    snprintf(cmd, sizeof cmd, "%s features --positions %s --nn 9x9 --out %s.small 2>/dev/null", bin, pos_path, out);
    rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s.small", out);
    hc_check("features-9.3", rc != -1 && WEXITSTATUS(rc) == 2 && access(cmd, F_OK) != 0,
             "a 9x9 buffer for 10x14 boards: exit %d, output left behind %d", WEXITSTATUS(rc), access(cmd, F_OK) == 0);
}

/* Settings the golden sets do not vary, checked against fillRowV7's definition on small games. */
static void check_settings(void)
{
    hc_board b;
    hc_err err = {0};
    hc_board_init(&b, 5, 5, &err);
    hc_rules r;
    hc_rules_parse("japanese", &r, &err);
    hc_history *h = hc_history_new(&b, HC_BLACK, &r, 0, false, &err);
    hc_history_play(h, 1, 1, HC_BLACK, &err);
    hc_history_play(h, 3, 3, HC_WHITE, &err);
    float sp[HC_FEATURES_V7_SPATIAL * 25], gl[HC_FEATURES_V7_GLOBAL];
    hc_nninput_params p = hc_nninput_params_default();
    p.playout_doubling_advantage = -1.5;
    hc_features_fill_v7(h, HC_BLACK, &p, 5, 5, sp, gl, &err);
    /* territory rules: no area planes before the second encore; komi 6.5 + 0 chilling (1 stone each) */
    float area_sum = 0;
    for (int i = 0; i < 50; i++)
        area_sum += sp[18 * 25 + i];
    hc_check("features-10.1", gl[15] == 1.0f && gl[16] == -0.75f && gl[9] == 1.0f && gl[10] == 1.0f && area_sum == 0 &&
                                  gl[5] == -6.5f / 20.0f && gl[18] == 0.0f,
             "pda/territory globals: %g %g %g %g area %g komi %g wave %g", (double)gl[15], (double)gl[16], (double)gl[9],
             (double)gl[10], (double)area_sum, (double)gl[5], (double)gl[18]);
    hc_check("features-10.2", sp[9 * 25 + 3 * 5 + 3] == 1.0f && sp[10 * 25 + 1 * 5 + 1] == 1.0f && sp[1 * 25 + 6] == 1.0f &&
                                  sp[2 * 25 + 18] == 1.0f,
             "last moves / own and opponent stones misplaced");
    for (int i = 0; i < 4; i++)
        hc_history_play(h, -1, -1, hc_history_next_pla(h), &err);
    hc_check("features-10.3", hc_history_encore_phase(h) == 2, "not in the second encore: %d", hc_history_encore_phase(h));
    int pla = hc_history_next_pla(h);
    hc_features_fill_v7(h, pla, &p, 5, 5, sp, gl, &err);
    int own = pla == HC_BLACK ? 1 * 5 + 1 : 3 * 5 + 3, theirs = pla == HC_BLACK ? 3 * 5 + 3 : 1 * 5 + 1;
    hc_check("features-10.4", gl[12] == 1.0f && gl[13] == 1.0f && sp[20 * 25 + own] == 1.0f && sp[21 * 25 + theirs] == 1.0f &&
                                  gl[0] == 0.0f,
             "second encore planes/globals wrong; phase change must hide earlier passes (global0 %g)", (double)gl[0]);
    /* a pass now ends the game: conservativePassAndIsRoot hides the history and the pass-ends flag */
    hc_history_play(h, -1, -1, pla, &err);
    pla = hc_history_next_pla(h);
    hc_features_fill_v7(h, pla, &p, 5, 5, sp, gl, &err);
    hc_check("features-10.5", gl[0] == 1.0f && gl[14] == 1.0f, "last pass and pass-ends-phase not flagged: %g %g", (double)gl[0],
             (double)gl[14]);
    p.conservative_pass_and_is_root = true;
    hc_features_fill_v7(h, pla, &p, 5, 5, sp, gl, &err);
    hc_check("features-10.6", gl[0] == 0.0f && gl[14] == 0.0f, "conservative pass did not hide history: %g %g", (double)gl[0],
             (double)gl[14]);
    p.conservative_pass_and_is_root = false;
    p.max_history = 0;
    hc_features_fill_v7(h, pla, &p, 5, 5, sp, gl, &err);
    hc_check("features-10.7", gl[0] == 0.0f && gl[14] == 1.0f, "maxHistory 0 should hide moves only");
    hc_check("features-10.8", hc_features_fill(8, h, pla, &p, 5, 5, sp, gl, &err) == -1 &&
                                  hc_features_fill_v7(h, pla, &p, 4, 5, sp, gl, &err) == -1,
             "unsupported version or small buffer accepted");
    hc_history_free(h);
}

int main(void)
{
    hc_plan(8 + 3 + 2); /* settings, cli, the count of golden sets; each golden set adds its 8 */
    check_settings();
    check_cli();
    const char *cfg = hc_shared("golden/configs.json");
    if (!cfg) {
        hc_skip_rest("features-1.0", "../shared/golden/configs.json absent");
        return hc_test_exit();
    }
    json_error_t jerr;
    json_t *root = json_load_file(cfg, 0, &jerr);
    if (!hc_check("features-1.1", root && json_is_array(root), "configs.json: %s", jerr.text))
        return hc_fail_rest("features-1.2", "not run: no configs"), hc_test_exit();
    /* each distinct (features file, buffer) once */
    char seen[16][256];
    int n_seen = 0;
    size_t i;
    json_t *c;
    json_array_foreach(root, i, c)
    {
        const char *feat = json_string_value(json_object_get(c, "features"));
        const char *pos = json_string_value(json_object_get(c, "positions"));
        if (!feat || !pos)
            continue;
        bool dup = false;
        for (int k = 0; k < n_seen; k++)
            if (strcmp(seen[k], feat) == 0)
                dup = true;
        if (dup || n_seen >= 16)
            continue;
        snprintf(seen[n_seen++], sizeof seen[0], "%s", feat);
        char id[32];
        snprintf(id, sizeof id, "features-%d", n_seen + 1);
        hc_plan(8);
        check_set(id, pos, feat, (int)json_integer_value(json_object_get(c, "nnXLen")),
                  (int)json_integer_value(json_object_get(c, "nnYLen")), (long)json_integer_value(json_object_get(c, "count")));
    }
    hc_check("features-1.2", n_seen == 6, "%d distinct golden feature sets, expected 6", n_seen);
    json_decref(root);
    return hc_test_exit();
}
