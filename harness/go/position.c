/* The position record's memory: freeing and deep copying what it owns. */
#include "harness/go/position.h"

#include <stdlib.h>
#include <string.h>

void hc_position_free(hc_position *p)
{
    if (!p)
        return;
    free(p->initial_black);
    free(p->initial_white);
    free(p->moves);
    memset(p, 0, sizeof *p);
}

int hc_position_copy(hc_position *dst, const hc_position *src, hc_err *err)
{
    *dst = *src;
    dst->initial_black = NULL;
    dst->initial_white = NULL;
    dst->moves = NULL;
    dst->initial_black = hc_malloc(sizeof(hc_xy) * (size_t)src->n_initial_black, err, "setup stones");
    dst->initial_white = hc_malloc(sizeof(hc_xy) * (size_t)src->n_initial_white, err, "setup stones");
    dst->moves = hc_malloc(sizeof(hc_move) * (size_t)src->n_moves, err, "moves");
    if (!dst->initial_black || !dst->initial_white || !dst->moves) {
        hc_position_free(dst);
        return -1;
    }
    /* memcpy from a NULL source is undefined even for 0 bytes */
    if (src->n_initial_black)
        memcpy(dst->initial_black, src->initial_black, sizeof(hc_xy) * (size_t)src->n_initial_black);
    if (src->n_initial_white)
        memcpy(dst->initial_white, src->initial_white, sizeof(hc_xy) * (size_t)src->n_initial_white);
    if (src->n_moves)
        memcpy(dst->moves, src->moves, sizeof(hc_move) * (size_t)src->n_moves);
    return 0;
}
