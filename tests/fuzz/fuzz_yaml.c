/* YAML configs: the first byte picks the reader (suite, net, board, tier, precision profile),
 * the rest is the document. Paths resolve under a directory that does not exist, so references
 * to other files fail as missing files. A suite that reads is written (hc_suite_write's text),
 * which must read back and write again to the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/config/config.h"
#include "fuzz_util.h"
#include "backends/profile.h"

static void need_name(const hc_err *err, const char *name)
{
    if (err->code == HC_OK || !strstr(err->msg, name)) {
        fprintf(stderr, "yaml: failure without a message naming the file %s: %s\n", name, err->msg);
        abort();
    }
}

/* The cases of a suite and of its written copy: the same nets, boards, backends, settings and tier counts. */
static int same_cases(const hc_suite *a, const hc_suite *b)
{
    if (a->n_cases != b->n_cases || a->n_nets != b->n_nets || a->n_boards != b->n_boards ||
        a->n_backends != b->n_backends || a->modes != b->modes)
        return 0;
    for (size_t i = 0; i < a->n_cases; i++) {
        const hc_case *x = &a->cases[i], *y = &b->cases[i];
        const hc_board_cfg *u = &x->settings, *v = &y->settings;
        if (x->net != y->net || x->board != y->board || x->backend != y->backend || x->n_tiers != y->n_tiers ||
            u->nn_x_len != v->nn_x_len || u->nn_y_len != v->nn_y_len || u->policy_optimism != v->policy_optimism ||
            u->pda != v->pda || u->policy_temperature != v->policy_temperature ||
            u->max_batch_size != v->max_batch_size || u->require_exact_nn_len != v->require_exact_nn_len)
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *yaml = (const char *)data + 1;
    size_t len = size - 1;
    hc_err err = {0};
    switch (data[0] % 5) {
    case 0: {
        const char *name = "/nonexistent-fuzz/suite.yaml";
        hc_suite *s = hc_suite_parse(yaml, len, name, &err);
        if (!s) {
            need_name(&err, "suite.yaml");
            break;
        }
        hc_suite_check_backends(s, NULL, &err);
        size_t l1 = 0, l2 = 0;
        char *t1 = hc_suite_format(s, name, NULL, &l1, &err);
        hc_suite *r = t1 ? hc_suite_parse(t1, l1, name, &err) : NULL;
        char *t2 = r ? hc_suite_format(r, name, NULL, &l2, &err) : NULL;
        if (!t2 || l1 != l2 || memcmp(t1, t2, l1) != 0 || !same_cases(s, r)) {
            fprintf(stderr, "yaml: a suite that reads does not round-trip through its writer: %s\n%s\n---\n%s\n",
                    err.msg, t1 ? t1 : "(not written)", t2 ? t2 : "(not written again)");
            abort();
        }
        free(t1);
        free(t2);
        hc_suite_free(r);
        hc_suite_free(s);
        break;
    }
    case 1:
    case 2: {
        const char *name = data[0] % 5 == 1 ? "/nonexistent-fuzz/net.yaml" : "/nonexistent-fuzz/board.yaml";
        hc_config_holder holder = {0};
        int rc;
        if (data[0] % 5 == 1) {
            hc_net_cfg cfg;
            rc = hc_net_cfg_parse(yaml, len, name, &cfg, &holder, &err);
        } else {
            hc_board_cfg cfg;
            rc = hc_board_cfg_parse(yaml, len, name, &cfg, &holder, &err);
        }
        if (rc)
            need_name(&err, strrchr(name, '/') + 1);
        hc_config_holder_free(&holder);
        break;
    }
    case 3: {
        hc_tier t;
        if (hc_tier_cfg_parse(yaml, len, "/nonexistent-fuzz/tier.yaml", &t, &err))
            need_name(&err, "tier.yaml");
        break;
    }
    default: {
        hc_profile *p = hc_profile_parse(yaml, len, "/nonexistent-fuzz/profile.yaml", &err);
        if (!p) {
            need_name(&err, "profile.yaml");
            break;
        }
        hc_profile_free(p);
        break;
    }
    }
    return 0;
}
