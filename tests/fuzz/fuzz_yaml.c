/* YAML configs: the first byte picks the reader (suite, net, board, tier, precision profile),
 * the rest is the document. Paths resolve under a directory that does not exist, so references
 * to other files fail as missing files. */
#include <stdio.h>
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
