/* The libyaml helpers every YAML reader shares (suite configs, tiers, emulate profiles): load a
 * document, walk its nodes, read typed scalars, check keys, all with file:line:col errors.
 * Named yamlcfg, not yaml, so that it cannot shadow libyaml's own <yaml.h>. */
#ifndef HC_YAMLCFG_H
#define HC_YAMLCFG_H

#include <stddef.h>
#include <yaml.h>

#include "harness/base/err.h"

typedef struct hc_ydoc {
    const char *file; /* as named to the user (borrowed: must outlive the document) */
    char *dir;        /* the file's directory with a trailing '/', for relative paths ("" for the current one) */
    yaml_document_t d;
    int loaded;
} hc_ydoc;

/* Parses len bytes of YAML. A syntax error reads "FILE:LINE:COL: PROBLEM (CONTEXT at line N)";
 * a document without a root node reads "FILE:1:1: empty EMPTY_WHAT" (e.g. "document"). */
int hc_ydoc_load_mem(hc_ydoc *d, const char *text, size_t len, const char *file, const char *empty_what, hc_err *err);
/* The same from a file of at most max_bytes. */
int hc_ydoc_load_file(hc_ydoc *d, const char *path, size_t max_bytes, const char *empty_what, hc_err *err);
/* Safe on a document that failed to load or was freed already. */
void hc_ydoc_free(hc_ydoc *d);

yaml_node_t *hc_ydoc_root(hc_ydoc *d);
yaml_node_t *hc_ydoc_node(hc_ydoc *d, int id);
/* "a scalar", "a sequence", "a mapping" (for messages). */
const char *hc_ynode_type_name(const yaml_node_t *n);
/* A scalar node's text (the node must be a scalar). */
const char *hc_ynode_str(const yaml_node_t *n);
size_t hc_ynode_seq_len(const yaml_node_t *n);
yaml_node_t *hc_ydoc_seq_at(hc_ydoc *d, const yaml_node_t *n, size_t i);

/* Fills err (HC_ECONFIG) with "FILE:LINE:COL: MESSAGE", plus " (in CTX)" when ctx is not empty;
 * returns -1. */
int hc_ydoc_err(const hc_ydoc *d, const yaml_mark_t *mk, const char *ctx, hc_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* 0 when n is of type t, else -1 with "WHAT: expected a T, got a U". */
int hc_ydoc_expect(const hc_ydoc *d, const yaml_node_t *n, yaml_node_type_t t, const char *what, const char *ctx,
                   hc_err *err);
/* Checks that m is a mapping whose keys are scalars, distinct and in allowed (NULL-terminated).
 * Unknown and duplicate keys name ctx; a NULL ctx names what instead ("unknown key "K" (in WHAT)"),
 * an empty one nothing. */
int hc_ydoc_check_keys(hc_ydoc *d, yaml_node_t *m, const char *what, const char *ctx, const char *const *allowed,
                       hc_err *err);
/* The value of key in mapping m (keys checked as scalars first), or NULL. */
yaml_node_t *hc_ydoc_get(hc_ydoc *d, yaml_node_t *m, const char *key);
/* The same, or NULL with "missing key "K"" at the mapping. */
yaml_node_t *hc_ydoc_require(hc_ydoc *d, yaml_node_t *m, const char *key, const char *ctx, hc_err *err);

/* 0 and *out when all of s is a finite number (strtod's syntax), else -1 (for scalars that mix a
 * number with other text, which the caller takes apart). */
int hc_yparse_double(const char *s, double *out);

/* Typed scalars; key names the value in messages, which carry the value's place. */
int hc_ydoc_double(const hc_ydoc *d, const yaml_node_t *v, const char *key, const char *ctx, double lo, double hi,
                   double *out, hc_err *err);
int hc_ydoc_int(const hc_ydoc *d, const yaml_node_t *v, const char *key, const char *ctx, long lo, long hi, int *out,
                hc_err *err);
/* true/True/yes or false/False/no. */
int hc_ydoc_bool(const hc_ydoc *d, const yaml_node_t *v, const char *key, const char *ctx, int *out, hc_err *err);

#endif
