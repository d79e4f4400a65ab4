/* The name map's patterns (the tensors: backend's @map=, docs/TAPS.md "Taps from files"): a tool's name
 * pattern and the tap name it gives.
 *
 * In the pattern, '*' matches any run of at least one character and {NAME} a run of decimal digits, an
 * index (NAME: letters, digits and '_', each captured once); both shortest first. In the tap name, each
 * '*' takes the pattern's '*' matches in order and each {EXPR} an index computed from the pattern's:
 * {NAME}, {NAME+K}, {NAME-K}, {K*NAME}, {K*NAME+K2}, {K*NAME-K2} with K, K2 decimal integers, written in
 * decimal. So "blocks.{i}.conv1" -> "rconv{i+1}/w1" maps a 0-based tool's blocks.0.conv1 to rconv1/w1,
 * and "layers.{j}.attn.q" -> "model.blocks.{2*j}.q_proj" numbers interleaved attention/FFN blocks. */
#ifndef HC_TAPNAMES_H
#define HC_TAPNAMES_H

#include <stddef.h>

#include "harness/base/err.h"

/* Whether a map key is a pattern ('*' or '{' in it) rather than an exact name. */
int hc_tapname_is_pattern(const char *tool);

/* Checks a pattern and its tap name: 0, or -1 with why (one sentence saying what is wrong, quoting the
 * piece) filled. */
int hc_tapname_check(const char *tool, const char *tap, char *why, size_t len);

/* name against a checked pattern: 1 with *out (malloc'd) the tap name, 0 when it does not match, -1 with
 * err when an index comes out below 0 ("{i-1} is -1 for i = 0") or memory runs out. */
int hc_tapname_apply(const char *tool, const char *tap, const char *name, char **out, hc_err *err);

#endif
