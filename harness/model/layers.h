/* The layers of a net: kinds (what an emulate profile's rules and the taps name, see backends/profile.h
 * for their meaning), the forward-order layer list, and the block-stack walk order. */
#ifndef HC_LAYERS_H
#define HC_LAYERS_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/model/model.h"

enum hc_layer_kind {
    HC_LK_INPUT = 1u << 0,
    HC_LK_CONV = 1u << 1,
    HC_LK_BATCHNORM = 1u << 2,
    HC_LK_RESIDUAL = 1u << 3,
    HC_LK_GPOOL = 1u << 4,
    HC_LK_MATMUL = 1u << 5,
    HC_LK_RMSNORM = 1u << 6,
    HC_LK_ATTN_Q = 1u << 7,
    HC_LK_ATTN_K = 1u << 8,
    HC_LK_ATTN_V = 1u << 9,
    HC_LK_ATTN_OUT = 1u << 10,
    HC_LK_FFN = 1u << 11,
    HC_LK_TRUNK_TIP = 1u << 12,
    HC_LK_TRUNK = 1u << 13,
    HC_LK_POLICY_HEAD = 1u << 14,
    HC_LK_VALUE_HEAD = 1u << 15,
    HC_LK_META_ENCODER = 1u << 16,
    HC_LK_TRANSFORMER = 1u << 17,
    HC_LK_ALL = (1u << 18) - 1
};

/* The i-th kind name in documentation order ("all" first), NULL past the last. */
const char *hc_layer_kind_name_at(size_t i);
/* The name of exactly these bits, NULL when no single kind has them. */
const char *hc_layer_kind_name(unsigned bits);
/* Kind bits by name ("conv"); 0 when unknown. */
unsigned hc_layer_kind_by_name(const char *name);
/* Space-separated names of the bits set, into buf. */
const char *hc_layer_kinds_str(unsigned kinds, char *buf, size_t size);

/* A layer as the engine taps it, with the weight arrays it computes with. */
enum { HC_LAYER_MAX_ARRAYS = 4 };
typedef struct hc_layer_ref {
    const char *name; /* borrowed from the net: the pointer the engine's tap->layer carries */
    unsigned kinds;
    int n_arrays;
    float *arrays[HC_LAYER_MAX_ARRAYS]; /* borrowed, mutable */
    size_t lens[HC_LAYER_MAX_ARRAYS];
} hc_layer_ref;

/* Lists net's layers in forward order (malloc'd array, *n entries; free()). Every weight array
 * the engine reads belongs to exactly one layer (BN: the merged arrays). */
int hc_net_layers(hc_net *net, hc_layer_ref **out, int *n, hc_err *err);

/* Visits the blocks of a stack in forward order, descending into nested bottlenecks (whose
 * own pre/post convolutions are not blocks: the bottleneck itself is not visited). Stops at and
 * returns the first nonzero value visit returns. */
int hc_blocks_walk(const hc_block *blocks, int n, int (*visit)(const hc_block *b, void *ctx), void *ctx);

#endif
