/* SGF collections: structure, values and escapes, KataGo's move quirks, root property readers,
 * placements, Fox handicap stones, and a table of garbled and truncated inputs that must all fail
 * cleanly with an error that says where. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/data/sgf.h"
#include "harness/base/stream.h"

static hc_sgf_collection *parse(const char *s, hc_err *err)
{
    hc_err_clear(err);
    return hc_sgf_parse(s, strlen(s), "mem.sgf", err);
}

static const char *val(const hc_sgf_node *n, const char *key, int i)
{
    const hc_sgf_prop *p = hc_sgf_node_prop(n, key);
    return p && i < p->n_vals ? p->vals[i] : NULL;
}

static void test_structure(void)
{
    hc_err err;
    /* Two games over three lines; a BOM; variations. */
    const char *text = "\xEF\xBB\xBF(;GM[1]SZ[9];B[aa](;W[bb];B[cc])(;W[dd]))\n\n  (;SZ[5:7]C[x\\]y\\\\z];W[])\n";
    hc_sgf_collection *c = parse(text, &err);
    if (!hc_check("sgf-1.1", c != NULL, "parse: %s", err.msg))
        return;
    hc_check("sgf-1.2", c->n_games == 2, "%zu games", c->n_games);
    const hc_sgf_game *g = &c->games[0];
    hc_check("sgf-1.3", g->line == 0 && g->index == 0 && g->offset == 3, "line %ld offset %llu", g->line,
             (unsigned long long)g->offset);
    hc_check("sgf-1.4", g->tree.n_nodes == 2 && g->tree.n_children == 2 && g->tree.children[0].n_nodes == 2 &&
                            g->tree.children[1].n_nodes == 1 && g->tree.children[0].n_children == 0,
             "tree shape");
    hc_check("sgf-1.5", g->tree.nodes[1].move_pla == HC_BLACK && g->tree.nodes[1].move_x == 0 && g->tree.nodes[1].move_y == 0 &&
                            g->tree.children[1].nodes[0].move_pla == HC_WHITE && g->tree.children[1].nodes[0].move_x == 3,
             "moves");
    const hc_sgf_game *g2 = &c->games[1];
    hc_check("sgf-1.6", g2->line == 2 && g2->index == 1, "second game line %ld", g2->line);
    const char *cv = val(&g2->tree.nodes[0], "C", 0);
    hc_check("sgf-1.7", cv && strcmp(cv, "x]y\\z") == 0, "escaped value \"%s\"", cv ? cv : "(null)");
    hc_check("sgf-1.8", g2->tree.nodes[1].move_pla == HC_WHITE && g2->tree.nodes[1].move_x == HC_SGF_PASS_COORD,
             "pass move");
    int xs = 0, ys = 0;
    hc_check("sgf-1.9", hc_sgf_size(&g2->tree.nodes[0], 19, &xs, &ys, &err) == 0 && xs == 5 && ys == 7, "size %dx%d %s",
             xs, ys, err.msg);
    hc_sgf_free(c);

    /* Value whitespace: CR/LF runs collapse to one newline, an escaped newline vanishes, tabs
     * become spaces; whitespace inside a property name is skipped. */
    c = parse("(;C[a\r\n\r\nb\\\nc\td]G N[x][y])", &err);
    if (hc_check("sgf-1.10", c != NULL, "parse: %s", err.msg)) {
        const hc_sgf_node *n = &c->games[0].tree.nodes[0];
        cv = val(n, "C", 0);
        hc_check("sgf-1.11", cv && strcmp(cv, "a\nbc d") == 0, "value \"%s\"", cv ? cv : "(null)");
        const hc_sgf_prop *gn = hc_sgf_node_prop(n, "GN");
        hc_check("sgf-1.12", gn && gn->n_vals == 2 && strcmp(gn->vals[1], "y") == 0, "GN values");
        const char *s = NULL;
        hc_check("sgf-1.13", hc_sgf_node_single(n, "GN", &s, &err) < 0 && err.code == HC_EFORMAT, "two values refused");
        hc_sgf_free(c);
    } else {
        hc_fail_n("sgf-1.11", 3, "not run: the text-value game did not parse (sgf-1.10)");
    }

    /* KataGo's move quirk: the first B/W value is the node's move; "W[aa]B[bb]" lists B first. */
    c = parse("(;SZ[19];W[aa]B[bb]W[cc][tt];B[][tt]W[ss])", &err);
    if (hc_check("sgf-1.14", c != NULL, "parse: %s", err.msg)) {
        hc_sgf_moves m = {0};
        const hc_sgf_tree *t = &c->games[0].tree;
        int ok = hc_sgf_node_moves(&t->nodes[1], 19, 19, &m, &err) == 0;
        ok = ok && m.n == 4 && m.v[0].pla == HC_BLACK && m.v[0].x == 1 && m.v[1].pla == HC_WHITE && m.v[1].x == 0 &&
             m.v[2].x == 2 && m.v[3].x == -1 && m.v[3].y == -1;
        hc_check("sgf-1.15", ok, "order of moves in a mixed node (%zu moves) %s", m.n, err.msg);
        m.n = 0;
        ok = hc_sgf_node_moves(&t->nodes[2], 19, 19, &m, &err) == 0 && m.n == 3 && m.v[0].x == -1 && m.v[1].x == -1 &&
             m.v[2].pla == HC_WHITE && m.v[2].x == 18;
        hc_check("sgf-1.16", ok, "passes [] and tt");
        /* tt is a move on a board larger than 19 in both directions, off-board otherwise */
        m.n = 0;
        hc_check("sgf-1.17", hc_sgf_node_moves(&t->nodes[2], 20, 20, &m, &err) == 0 && m.n == 3 && m.v[1].x == 19,
                 "tt on 20x20: %s", err.msg);
        m.n = 0;
        hc_check("sgf-1.18", hc_sgf_node_moves(&t->nodes[2], 9, 9, &m, &err) < 0 && err.code == HC_EFORMAT,
                 "ss off a 9x9 board");
        hc_sgf_moves_free(&m);
        hc_sgf_free(c);
    } else {
        hc_fail_n("sgf-1.15", 4, "not run: the mixed-move game did not parse (sgf-1.14)");
    }
}

static void test_root_readers(void)
{
    hc_err err;
    struct {
        const char *sz;
        int ok, x, y;
    } sizes[] = {
        {"(;SZ[19])", 1, 19, 19},  {"(;SZ[ 13 ])", 1, 13, 13}, {"(;SZ[10:14])", 1, 10, 14}, {"(;SZ[13:19:])", 1, 13, 19},
        {"(;GM[1])", 1, 19, 19},   {"(;SZ[1])", 0, 0, 0},      {"(;SZ[20])", 0, 0, 0},      {"(;SZ[9x9])", 0, 0, 0},
        {"(;SZ[9:])", 0, 0, 0},    {"(;SZ[:9])", 0, 0, 0},     {"(;SZ[9:9:9])", 0, 0, 0},   {"(;SZ[])", 0, 0, 0},
        {"(;SZ[9][9])", 0, 0, 0},  {"(;SZ[+9])", 1, 9, 9},     {"(;SZ[0x9])", 0, 0, 0},     {"(;SZ[99999999999])", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        hc_sgf_collection *c = parse(sizes[i].sz, &err);
        int x = 0, y = 0;
        int r = c ? hc_sgf_size(&c->games[0].tree.nodes[0], 19, &x, &y, &err) : -1;
        char name[32];
        snprintf(name, sizeof name, "sgf-2.%zu", i + 1);
        if (sizes[i].ok)
            hc_check(name, r == 0 && x == sizes[i].x && y == sizes[i].y, "%s: got %d %dx%d %s", sizes[i].sz, r, x, y, err.msg);
        else
            hc_check(name, r < 0 && err.code == HC_EFORMAT && strstr(err.msg, "SZ"), "%s: accepted (%dx%d)", sizes[i].sz, x, y);
        hc_sgf_free(c);
    }

    struct {
        const char *s;
        int ok;
        float komi;
    } komis[] = {
        {"(;KM[6.5])", 1, 6.5f},
        {"(;KM[-7])", 1, -7.0f},
        {"(;KM[ 7.50 ])", 1, 7.5f},
        {"(;GM[1])", 1, 1.25f}, /* default */
        {"(;KM[6.25])", 0, 0},
        {"(;KM[3.25]US[GoGoD95]RU[Chinese])", 1, 6.5f},
        {"(;KM[3.25]US[Other]RU[Chinese])", 0, 0},
        {"(;KM[375]AP[foxwq])", 1, 7.5f},
        {"(;KM[650]AP[SGFC:2.0])", 1, 6.5f},
        {"(;KM[12]AP[foxwq])", 0, 0},
        {"(;KM[abc])", 0, 0},
        {"(;KM[inf])", 0, 0},
        {"(;KM[nan])", 0, 0},
        {"(;KM[1e])", 0, 0},
        {"(;KM[.5])", 1, 0.5f},
        {"(;KM[5.])", 1, 5.0f},
        {"(;KM[1e1])", 1, 10.0f},
        {"(;KM[1e40])", 0, 0},
        {"(;KM[0x10])", 0, 0},
    };
    for (size_t i = 0; i < sizeof komis / sizeof komis[0]; i++) {
        hc_sgf_collection *c = parse(komis[i].s, &err);
        float k = -999;
        int r = c ? hc_sgf_komi(&c->games[0].tree.nodes[0], 1.25f, &k, &err) : -1;
        char name[32];
        snprintf(name, sizeof name, "sgf-3.%zu", i + 1);
        if (komis[i].ok)
            hc_check(name, r == 0 && k == komis[i].komi, "%s: got %d %g %s", komis[i].s, r, k, err.msg);
        else
            hc_check(name, r < 0 && err.code == HC_EFORMAT, "%s: accepted (%g)", komis[i].s, k);
        hc_sgf_free(c);
    }

    struct {
        const char *s;
        int r, value;
    } ints[] = {
        {"(;HA[2]PL[W])", 0, 2}, {"(;HA[x]PL[b])", -1, 0}, {"(;PL[Black])", 0, 0}, {"(;PL[white]HA[ 9 ])", 0, 9},
    };
    int pls[] = {HC_WHITE, HC_BLACK, HC_BLACK, HC_WHITE};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        hc_sgf_collection *c = parse(ints[i].s, &err);
        int ha = -1, pl = -1;
        int r = c ? hc_sgf_handicap(&c->games[0].tree.nodes[0], &ha, &err) : -2;
        int r2 = c ? hc_sgf_pl(&c->games[0].tree.nodes[0], &pl, &err) : -2;
        char name[32];
        snprintf(name, sizeof name, "sgf-4.%zu", i + 1);
        hc_check(name, r == ints[i].r && (r < 0 || ha == ints[i].value) && r2 == 0 && pl == pls[i], "%s: %d %d %d %d",
                 ints[i].s, r, ha, r2, pl);
        hc_sgf_free(c);
    }
    struct {
        const char *s;
        int ok, ko, scoring, tax;
        bool sui;
        float komi;
    } rules[] = {
        {"(;RU[Japanese]KM[6.5])", 1, HC_KO_SIMPLE, HC_SCORING_TERRITORY, HC_TAX_SEKI, false, 6.5f},
        {"(;RU[koSIMPLEscoreTERRITORYtaxNONEsui1]KM[7])", 1, HC_KO_SIMPLE, HC_SCORING_TERRITORY, HC_TAX_NONE, true, 7.0f},
        {"(;RU[Chinese]KM[7.5])", 1, HC_KO_SIMPLE, HC_SCORING_AREA, HC_TAX_NONE, false, 7.5f},
        {"(;RU[tromp-taylor]KM[-3])", 1, HC_KO_POSITIONAL, HC_SCORING_AREA, HC_TAX_NONE, true, -3.0f},
        {"(;KM[7.5])", 0, 0, 0, 0, false, 0},
        {"(;RU[Japanese])", 0, 0, 0, 0, false, 0},
        {"(;RU[no such rules]KM[7])", 0, 0, 0, 0, false, 0},
        {"(;RU[Japanese]KM[7.25])", 0, 0, 0, 0, false, 0},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        hc_sgf_collection *c = parse(rules[i].s, &err);
        hc_rules r;
        memset(&r, 0, sizeof r);
        int rc = c ? hc_sgf_rules(&c->games[0].tree.nodes[0], &r, &err) : -2;
        char name[32];
        snprintf(name, sizeof name, "sgf-4.%zu", i + 10);
        if (rules[i].ok)
            hc_check(name, rc == 0 && r.ko_rule == rules[i].ko && r.scoring_rule == rules[i].scoring && r.tax_rule == rules[i].tax &&
                               r.multi_stone_suicide_legal == rules[i].sui && r.komi == rules[i].komi,
                     "%s: %d ko %d score %d tax %d sui %d komi %g %s", rules[i].s, rc, r.ko_rule, r.scoring_rule, r.tax_rule,
                     r.multi_stone_suicide_legal, r.komi, err.msg);
        else
            hc_check(name, rc == -1 && err.code == HC_EFORMAT, "%s: accepted", rules[i].s);
        hc_sgf_free(c);
    }

    hc_sgf_collection *c = parse("(;PL[x])", &err);
    int pl = -1;
    hc_check("sgf-4.5", c && hc_sgf_pl(&c->games[0].tree.nodes[0], &pl, &err) == 0 && pl == HC_EMPTY, "unknown PL");
    hc_sgf_free(c);
}

static void test_placements(void)
{
    hc_err err;
    hc_sgf_collection *c = parse("(;SZ[9]AE[ii]AW[ab:bc]AB[aa][ca];AB[jj])", &err);
    if (!hc_check("sgf-5.1", c != NULL, "parse: %s", err.msg))
        return;
    hc_sgf_moves m = {0};
    const hc_sgf_tree *t = &c->games[0].tree;
    int r = hc_sgf_node_placements(&t->nodes[0], 9, 9, &m, &err);
    /* AB first, then AW column by column (x outer), then AE */
    int want[][3] = {{HC_BLACK, 0, 0}, {HC_BLACK, 2, 0}, {HC_WHITE, 0, 1}, {HC_WHITE, 0, 2},
                     {HC_WHITE, 1, 1}, {HC_WHITE, 1, 2}, {HC_EMPTY, 8, 8}};
    int ok = r == 0 && m.n == 7;
    for (size_t i = 0; ok && i < 7; i++)
        ok = m.v[i].pla == want[i][0] && m.v[i].x == want[i][1] && m.v[i].y == want[i][2];
    hc_check("sgf-5.2", ok, "placements (%zu) %s", m.n, err.msg);
    hc_check("sgf-5.3", hc_sgf_node_has_placements(&t->nodes[0]) && hc_sgf_node_has_placements(&t->nodes[1]),
             "has placements");
    m.n = 0;
    hc_check("sgf-5.4", hc_sgf_node_placements(&t->nodes[1], 9, 9, &m, &err) < 0 && err.code == HC_EFORMAT, "off-board AB");
    hc_sgf_free(c);

    const char *bad[] = {"(;AB[bb:aa])", "(;AB[a])", "(;AB[aa:b])", "(;AB[aa-bb])", "(;AB[])", "(;AW[a1])"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = parse(bad[i], &err);
        m.n = 0;
        char name[32];
        snprintf(name, sizeof name, "sgf-5.%zu", i + 5);
        hc_check(name, c && hc_sgf_node_placements(&c->games[0].tree.nodes[0], 19, 19, &m, &err) < 0 && err.code == HC_EFORMAT,
                 "%s accepted", bad[i]);
        hc_sgf_free(c);
    }
    hc_sgf_moves_free(&m);
}

static void test_fox(void)
{
    hc_err err;
    struct {
        const char *s;
        const char *ab; /* expected AB values in order, "" for none */
    } cases[] = {
        {"(;AP[foxwq]SZ[19]HA[2];W[aa])", "pd dp"},
        {"(;AP[foxwq]SZ[19]HA[5];W[aa])", "dd pd jj dp pp"},
        {"(;AP[foxwq]SZ[19]HA[6]DT[2019-05-01];W[aa])", "dd pd dj pj dp pp"},
        {"(;AP[foxwq]SZ[19]HA[6]DT[2017-05-01];W[aa])", "dd jd pd dp jp pp"},
        {"(;AP[foxwq]SZ[19]HA[6]DT[2017-02-30];W[aa])", "dd pd dj pj dp pp"},
        {"(;AP[GNU Go:3.8]GN[]SZ[19]HA[3];W[aa])", "dd pd dp"},
        {"(;AP[GNU Go:3.8]GN[x]SZ[19]HA[3];W[aa])", ""},
        {"(;AP[foxwq]SZ[19]HA[2];B[aa])", ""},
        {"(;AP[foxwq]SZ[13]HA[2];W[aa])", ""},
        {"(;AP[foxwq]SZ[19]HA[1];W[aa])", ""},
        {"(;AP[foxwq]SZ[19]HA[2])", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hc_sgf_collection *c = parse(cases[i].s, &err);
        char got[128] = "";
        if (c) {
            const hc_sgf_prop *ab = hc_sgf_node_prop(&c->games[0].tree.nodes[0], "AB");
            for (int j = 0; ab && j < ab->n_vals; j++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", j ? " " : "", ab->vals[j]);
        }
        char name[32];
        snprintf(name, sizeof name, "sgf-6.%zu", i + 1);
        hc_check(name, c && strcmp(got, cases[i].ab) == 0, "%s: AB \"%s\", want \"%s\" %s", cases[i].s, got, cases[i].ab,
                 c ? "" : err.msg);
        hc_sgf_free(c);
    }
}

/* Inputs that must fail with HC_EFORMAT (or HC_ELIMIT), the error naming the file, the game and
 * an offset. */
static void test_garbled(void)
{
    struct {
        const char *s;
        long offset; /* expected offset in the message, -1 to not check */
        long game;
    } bad[] = {
        {"", -1, -1},
        {"   \n\t ", -1, -1},
        {"x(;B[aa])", 0, 0},
        {"(", 1, 0},
        {"(;", 2, 0},
        {"(;B", 3, 0},
        {"(;B[", 4, 0},
        {"(;B[aa", 6, 0},
        {"(;B[aa]", 7, 0},
        {"(;B[aa])(", 9, 1},
        {"(;B[aa]) junk", 9, 1},
        {"()", 0, 0},
        {"(())", 0, 0},
        {"(;B[aa]1)", 7, 0},
        {"(;B[aa](;W[bb]);B[cc])", 15, 0},
        {"(;B[aaa])", 4, 0},
        {"(;B[a])", 4, 0},
        {"(;B[1a])", 4, 0},
        {"(;B)", 3, 0},
        {"(;B aa)", 6, 0},
        {"(;C[unterminated \\])", 20, 0},
        {"(;GM[1]\n)\n(;B[aa]\n", 18, 1},
        {"(;B[aa]))", 8, 1},
        {"(;B[aa]\x01)", 7, 0},
        {"(;W[%%])", 4, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hc_err err;
        hc_sgf_collection *c = parse(bad[i].s, &err);
        char name[32], off[48], game[48];
        snprintf(name, sizeof name, "sgf-7.%zu", i + 1);
        snprintf(off, sizeof off, "offset %ld ", bad[i].offset);
        snprintf(game, sizeof game, "game %ld", bad[i].game);
        int ok = c == NULL && err.code == HC_EFORMAT && strstr(err.msg, "mem.sgf") &&
                 (bad[i].offset < 0 || strstr(err.msg, off)) && (bad[i].game < 0 || strstr(err.msg, game));
        hc_check(name, ok, "input \"%s\": %s", bad[i].s, c ? "accepted" : err.msg);
        hc_sgf_free(c);
    }

    /* A NUL byte inside a value is refused where it is. */
    {
        hc_err err;
        hc_err_clear(&err);
        hc_sgf_collection *c = hc_sgf_parse("(;C[a\0b])", 9, "mem.sgf", &err);
        hc_check("sgf-7.49", c == NULL && err.code == HC_EFORMAT && strstr(err.msg, "NUL") && strstr(err.msg, "offset 5 "),
                 "%s", c ? "accepted" : err.msg);
        hc_sgf_free(c);
    }

    /* Deep nesting is refused with HC_ELIMIT, not a crash. */
    size_t n = HC_SGF_MAX_DEPTH + 10;
    char *deep = malloc(4 * n + 16);
    size_t k = 0;
    deep[k++] = '(';
    deep[k++] = ';';
    for (size_t i = 0; i < n; i++)
        deep[k++] = '(';
    for (size_t i = 0; i < n + 1; i++)
        deep[k++] = ')';
    deep[k] = '\0';
    hc_err err;
    hc_sgf_collection *c = parse(deep, &err);
    hc_check("sgf-7.50", c == NULL && err.code == HC_ELIMIT, "deep nesting: %s", c ? "accepted" : err.msg);
    hc_sgf_free(c);
    /* Just under the limit is fine. */
    k = 0;
    deep[k++] = '(';
    deep[k++] = ';';
    for (size_t i = 0; i + 1 < HC_SGF_MAX_DEPTH; i++)
        deep[k++] = '(', deep[k++] = ';';
    for (size_t i = 0; i < HC_SGF_MAX_DEPTH; i++)
        deep[k++] = ')';
    deep[k] = '\0';
    c = parse(deep, &err);
    hc_check("sgf-7.51", c != NULL, "nesting at the limit: %s", err.msg);
    hc_sgf_free(c);
    free(deep);
}

/* Every prefix of a real game and every single-byte corruption of a small one: no crash, no leak,
 * and either a parse or an error naming the place. */
static void test_truncations(void)
{
    const char *sample =
        "(;FF[4]GM[1]SZ[9]KM[7.5]C[comment with \\] and\nnewline]AB[aa][bb:cc]AW[ee];B[dd]C[x]"
        "(;W[ef];B[fg](;W[])(;W[tt]))(;W[gh]PL[B];B[hi]))\n(;SZ[5];B[aa];W[bb])\n";
    size_t len = strlen(sample);
    int bad = 0, accepted = 0;
    for (size_t cut = 0; cut < len; cut++) {
        hc_err err;
        hc_err_clear(&err);
        hc_sgf_collection *c = hc_sgf_parse(sample, cut, "cut.sgf", &err);
        if (c) {
            accepted++;
            hc_sgf_free(c);
        } else if (!(err.code == HC_EFORMAT && strstr(err.msg, "cut.sgf") && (strstr(err.msg, "offset") || cut < 3))) {
            bad++;
            if (bad < 3)
                printf("  cut at %zu: %s\n", cut, err.msg);
        }
    }
    /* Complete only when cut just after the first game, after its newline, or before the last newline. */
    hc_check("sgf-8.1", bad == 0 && accepted == 3, "%d truncations with a bad error, %d accepted", bad, accepted);

    static const char repl[] = {'(', ')', ';', '[', ']', '\\', 'Z', '\0', '\n', ':'};
    char *buf = malloc(len);
    int crashes = 0, n = 0;
    for (size_t i = 0; i < len; i++) {
        for (size_t r = 0; r < sizeof repl; r++) {
            memcpy(buf, sample, len);
            buf[i] = repl[r];
            hc_err err;
            hc_err_clear(&err);
            hc_sgf_collection *c = hc_sgf_parse(buf, len, "mut.sgf", &err);
            n++;
            if (c) {
                /* Reading every property of an accepted mutation must not crash either. */
                for (size_t g = 0; g < c->n_games; g++) {
                    const hc_sgf_node *root = &c->games[g].tree.nodes[0];
                    int x, y, ha, pl;
                    float k;
                    hc_sgf_moves m = {0};
                    if (hc_sgf_size(root, 19, &x, &y, &err) == 0) {
                        hc_sgf_node_placements(root, x, y, &m, &err);
                        hc_sgf_node_moves(root, x, y, &m, &err);
                    }
                    hc_sgf_komi(root, 7.5f, &k, &err);
                    hc_sgf_handicap(root, &ha, &err);
                    hc_sgf_pl(root, &pl, &err);
                    hc_sgf_moves_free(&m);
                }
                hc_sgf_free(c);
            } else if (err.code != HC_EFORMAT || !strstr(err.msg, "mut.sgf")) {
                crashes++;
            }
        }
    }
    free(buf);
    hc_check("sgf-8.2", crashes == 0, "%d of %d mutations gave an unexpected error", crashes, n);
}

static void test_shared(void)
{
    static const char *sets[] = {"size9", "size13", "size19", "size10x14", "sizerect"};
    static const size_t want[] = {40, 20, 10, 1, 10};
    for (size_t i = 0; i < 5; i++) {
        char rel[64], name[32];
        snprintf(rel, sizeof rel, "sgf/%s.sgfs", sets[i]);
        snprintf(name, sizeof name, "sgf-9.%zu", i + 1);
        const char *path = hc_shared(rel);
        if (!path) {
            hc_skip(name, "../shared/%s absent", rel);
            continue;
        }
        hc_err err;
        hc_err_clear(&err);
        hc_sgf_collection *c = hc_sgf_load(path, &err);
        int ok = c && c->n_games == want[i];
        for (size_t g = 0; ok && g < c->n_games; g++) {
            int x, y;
            hc_rules r;
            ok = c->games[g].line == (long)g && hc_sgf_size(&c->games[g].tree.nodes[0], 19, &x, &y, &err) == 0 &&
                 hc_sgf_rules(&c->games[g].tree.nodes[0], &r, &err) == 0;
        }
        hc_check(name, ok, "%s: %s", rel, c ? "wrong games or lines" : err.msg);
        hc_sgf_free(c);
    }
}

/* A gzip'd collection reads like the plain one; a missing file is an I/O error. */
static void test_files(void)
{
    const char *dir = hc_tmpdir("test_sgf");
    char path[512];
    snprintf(path, sizeof path, "%s/c.sgf.gz", dir);
    hc_err err;
    hc_err_clear(&err);
    hc_ostream *o = hc_ostream_open(path, &err);
    hc_ostream_printf(o, &err, "(;SZ[9]\nC[multi\nline];B[aa]\n)\n(;SZ[13];W[bb])\n");
    hc_ostream_commit(o, &err);
    hc_sgf_collection *c = hc_sgf_load(path, &err);
    hc_check("sgf-10.1", c && c->n_games == 2 && c->games[1].line == 4 && strcmp(c->name, path) == 0, "%s",
             c ? "wrong games" : err.msg);
    hc_sgf_free(c);
    hc_err_clear(&err);
    c = hc_sgf_load("build/tmp/test_sgf/no-such-file.sgf", &err);
    hc_check("sgf-10.2", c == NULL && err.code == HC_EIO, "missing file: %s", err.msg);
    hc_sgf_free(c);
}

int main(void)
{
    hc_plan(124);
    test_files();
    test_structure();
    test_root_readers();
    test_placements();
    test_fox();
    test_garbled();
    test_truncations();
    test_shared();
    return hc_test_exit();
}
