/* SGF collections: the parser (hc_sgf_parse), every root getter, every node's placements and
 * moves, and KataGo's iterAllUniquePositions walk (hc_record_collection) over what parsed. */
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "harness/data/sgfwalk.h"
#include "harness/data/sgf.h"

static int count_position(const hc_position *p, const hc_history *h, void *user, hc_err *err)
{
    (void)p, (void)h, (void)err;
    long *n = user;
    /* A bounded walk: a tiny input with many variations must not make one run take long. */
    return ++*n > 2000 ? hc_err_set(err, HC_ELIMIT, "fuzz: enough positions") : 0;
}

static void walk(const hc_sgf_tree *t, int x_size, int y_size, int depth)
{
    for (int i = 0; i < t->n_nodes; i++) {
        hc_err err = {0};
        hc_sgf_moves m = {0};
        hc_sgf_node_placements(&t->nodes[i], x_size, y_size, &m, &err);
        hc_sgf_node_moves(&t->nodes[i], x_size, y_size, &m, &err);
        int pl;
        hc_sgf_pl(&t->nodes[i], &pl, &err);
        hc_sgf_moves_free(&m);
    }
    if (depth < 64)
        for (int i = 0; i < t->n_children; i++)
            walk(&t->children[i], x_size, y_size, depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hc_err err = {0};
    hc_sgf_collection *c = hc_sgf_parse((const char *)data, size, "fuzz.sgf", &err);
    if (!c) {
        if (err.code == HC_OK || !strstr(err.msg, "fuzz.sgf")) {
            fprintf(stderr, "sgf: failure without a message naming the file: %s\n", err.msg);
            abort();
        }
        return 0;
    }
    for (size_t g = 0; g < c->n_games; g++) {
        const hc_sgf_node *root = &c->games[g].tree.nodes[0];
        int xs = 19, ys = 19, ha;
        float komi;
        hc_rules rules;
        hc_err e = {0};
        if (hc_sgf_size(root, 52, &xs, &ys, &e))
            xs = ys = 19;
        hc_sgf_komi(root, 7.5f, &komi, &e);
        hc_sgf_handicap(root, &ha, &e);
        hc_sgf_rules(root, &rules, &e);
        walk(&c->games[g].tree, xs, ys, 0);
    }
    long n = 0;
    hc_record_collection(c, count_position, &n, &err);
    hc_sgf_free(c);
    return 0;
}
