/* Raw heads' memory: one allocation per head, sized for a batch. */
#include "heads.h"

#include <stdlib.h>

hc_raw_heads *hc_raw_heads_new(int max_batch, int nx, int ny, int policy_channels,
                               int score_channels, hc_err *err)
{
    if (max_batch < 1 || nx < 1 || ny < 1 || policy_channels < 1 || score_channels < 1) {
        hc_err_set(err, HC_EINTERNAL, "raw heads: bad sizes (batch %d, %dx%d, %d policy, %d score)",
                   max_batch, nx, ny, policy_channels, score_channels);
        return NULL;
    }
    hc_raw_heads *h = hc_calloc(1, sizeof *h, err, "raw heads");
    if (!h)
        return NULL;
    size_t hw = (size_t)nx * ny;
    h->batch = h->max_batch = max_batch;
    h->nx = nx;
    h->ny = ny;
    h->policy_channels = policy_channels;
    h->score_channels = score_channels;
    h->policy = hc_calloc((size_t)max_batch * policy_channels * hw, sizeof(float), err, "policy");
    h->policy_pass = hc_calloc((size_t)max_batch * policy_channels, sizeof(float), err, "pass");
    h->value = hc_calloc((size_t)max_batch * 3, sizeof(float), err, "value");
    h->score = hc_calloc((size_t)max_batch * score_channels, sizeof(float), err, "score");
    h->ownership = hc_calloc((size_t)max_batch * hw, sizeof(float), err, "ownership");
    if (!h->policy || !h->policy_pass || !h->value || !h->score || !h->ownership) {
        hc_raw_heads_free(h);
        return NULL;
    }
    return h;
}

void hc_raw_heads_free(hc_raw_heads *h)
{
    if (!h)
        return;
    free(h->policy);
    free(h->policy_pass);
    free(h->value);
    free(h->score);
    free(h->ownership);
    free(h);
}
