/* The one expander of {NAME} placeholders in command templates: the runner's case values in a
 * backend spec ({model}, {net_name}, {nnX}, ...) and the analysis backend's per-engine values
 * ({symmetry}, {batch}, {threads}). */
#ifndef HC_TEMPLATE_H
#define HC_TEMPLATE_H

#include <stddef.h>

#include "harness/base/err.h"

/* One placeholder: key without its braces ("symmetry"), and the text that replaces "{symmetry}". */
typedef struct hc_template_var {
    const char *key;
    const char *value;
} hc_template_var;

/* tmpl with every "{key}" of vars replaced by its value, left to right, in one pass (a value is
 * never expanded again); a brace that starts no key of vars stays as it is, so that a later
 * expander can fill its own keys. Returns a string the caller frees, or NULL (HC_ENOMEM). */
char *hc_template_expand(const char *tmpl, const hc_template_var *vars, size_t n_vars, hc_err *err);

#endif
