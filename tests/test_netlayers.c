/* harness/model/layers: the kind names and the block walk order the engine and the CUDA backend share. */
#include <string.h>

#include "hc_test.h"
#include "harness/model/layers.h"
#include "harness/model/synth.h"

typedef struct seen {
    const hc_block *b[16];
    int n, stop_at;
} seen;

static int record(const hc_block *b, void *ctx)
{
    seen *s = ctx;
    if (s->n < 16)
        s->b[s->n] = b;
    s->n++;
    return s->n == s->stop_at ? 7 : 0;
}

int main(void)
{
    hc_plan(7);
    hc_check("netlayers-1.1", hc_layer_kind_by_name("conv") == HC_LK_CONV && hc_layer_kind_by_name("nope") == 0,
             "by name");
    hc_check("netlayers-1.2",
             hc_layer_kind_name(HC_LK_ATTN_OUT) && strcmp(hc_layer_kind_name(HC_LK_ATTN_OUT), "attn_out") == 0 &&
                 hc_layer_kind_name(HC_LK_CONV | HC_LK_TRUNK) == NULL,
             "name of exact bits");
    size_t nk = 0;
    int round_trip = 1;
    while (hc_layer_kind_name_at(nk)) {
        round_trip &= hc_layer_kind_name(hc_layer_kind_by_name(hc_layer_kind_name_at(nk))) == hc_layer_kind_name_at(nk);
        nk++;
    }
    hc_check("netlayers-1.3", nk == 19 && strcmp(hc_layer_kind_name_at(0), "all") == 0 && round_trip,
             "%zu kind names, round trip %d", nk, round_trip);

    hc_synth_spec sp;
    hc_synth_spec_default(&sp);
    snprintf(sp.blocks, sizeof sp.blocks, "%s", "res,nbt(gpool,attn),ffn");
    sp.rope = HC_SYNTH_ROPE_FIXED;
    hc_err err = {0};
    hc_net *net = hc_synth_net(&sp, &err);
    if (!hc_check("netlayers-2.1", net != NULL, "synth: %s", err.msg)) {
        hc_fail_n("netlayers-2.2", 3, "no net");
        return hc_test_exit();
    }
    const hc_block *t = net->trunk.blocks, *inner = t[1].nbt.blocks;
    seen s = {.stop_at = -1};
    int rc = hc_blocks_walk(t, net->trunk.num_blocks, record, &s);
    hc_check("netlayers-2.2",
             rc == 0 && s.n == 4 && s.b[0] == &t[0] && s.b[1] == &inner[0] && s.b[2] == &inner[1] && s.b[3] == &t[2],
             "forward order, into the bottleneck and not at it: rc %d, %d blocks", rc, s.n);
    seen s2 = {.stop_at = 2};
    rc = hc_blocks_walk(t, net->trunk.num_blocks, record, &s2);
    hc_check("netlayers-2.3", rc == 7 && s2.n == 2, "stops at the first nonzero: rc %d after %d", rc, s2.n);

    /* The layer list visits the same blocks: each walked block's residual layer is listed, in that order. */
    hc_layer_ref *ls = NULL;
    int nl = 0, k = 0;
    if (hc_net_layers(net, &ls, &nl, &err) == 0) {
        for (int i = 0; i < nl && k < s.n; i++)
            if (ls[i].name == s.b[k]->name)
                k++;
    }
    hc_check("netlayers-2.4", k == s.n, "%d of %d walked blocks found in order among %d layers (%s)", k, s.n, nl,
             err.msg);
    free(ls);
    hc_net_free(net);
    return hc_test_exit();
}
