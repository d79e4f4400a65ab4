/* Positions files: the JSON Lines reader (hc_positions_load over a file, plain or gzip'd), then
 * for each position the history KataGo's loader would build and its V7 features, and the writer
 * (what it formats must parse back to the same text). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "harness/go/history.h"
#include "harness/features/nnfeatures.h"
#include "harness/data/positions.h"

static float spatial[HC_FEATURES_V7_SPATIAL * 19 * 19], global[HC_FEATURES_V7_GLOBAL];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    hc_err err = {0};
    hc_position *ps = NULL;
    size_t n = 0;
    if (hc_positions_load(path, &ps, &n, &err)) {
        if (err.code == HC_OK || !strstr(err.msg, path)) {
            fprintf(stderr, "positions: failure without a message naming the file: %s\n", err.msg);
            abort();
        }
        close(fd);
        return 0;
    }
    close(fd);
    hc_nninput_params params = hc_nninput_params_default();
    for (size_t i = 0; i < n && i < 64; i++) {
        hc_err e = {0};
        char *text = hc_position_format(&ps[i], &e);
        if (!text)
            continue;
        hc_position back;
        if (hc_position_parse(text, "fuzz-roundtrip", &back, &e)) {
            fprintf(stderr, "positions: the writer's line does not parse back: %s\n%s\n", e.msg, text);
            abort();
        }
        char *again = hc_position_format(&back, &e);
        if (!again || strcmp(again, text) != 0) {
            fprintf(stderr, "positions: round trip differs:\n%s\n%s\n", text, again ? again : e.msg);
            abort();
        }
        free(again);
        free(text);
        hc_position_free(&back);
        hc_history *h = hc_history_from_position(&ps[i], &e);
        if (h) {
            if (ps[i].x_size <= 19 && ps[i].y_size <= 19)
                hc_features_fill_v7(h, ps[i].next_pla, &params, 19, 19, spatial, global, &e);
            hc_history_free(h);
        }
    }
    hc_positions_free(ps, n);
    return 0;
}
