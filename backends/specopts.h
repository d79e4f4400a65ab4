/* The leading @NAME=VALUE options of a backend spec (gtp:, pipe:): one parser, one message style.
 * Internal to backends/. */
#ifndef HC_SPECOPTS_H
#define HC_SPECOPTS_H

#include <stddef.h>

#include "harness/base/err.h"

typedef enum {
    HC_SPECOPT_POSITIVE, /* a number > 0 into *num */
    HC_SPECOPT_01,       /* 0 or 1 into *flag */
    HC_SPECOPT_STRING,   /* any text (to the next blank) into *str, malloc'd; a previous value is freed */
} hc_specopt_kind;

typedef struct hc_specopt {
    const char *name; /* without the '@' */
    const char *hint; /* what the value looks like in the known-options list: "S", "0|1", "PATH" */
    hc_specopt_kind kind;
    double *num;
    int *flag;
    char **str;
} hc_specopt;

/* Reads the @NAME=VALUE tokens at the start of spec (blanks around them skipped) into the
 * destinations of opts[0..n), later tokens overriding earlier ones. Returns where the command
 * begins (never NULL on success; it may be the empty string), or NULL with err (HC_ECONFIG)
 * naming the backend, the token and every known option. */
const char *hc_specopts_parse(const char *backend, const char *spec, const hc_specopt *opts, size_t n, hc_err *err);

/* hc_specopts_parse for the kinds that run a command (gtp:, pipe:, analysis:): the command after
 * the options must not be empty; returns it malloc'd, or NULL with err. */
char *hc_specopts_command(const char *backend, const char *spec, const hc_specopt *opts, size_t n, hc_err *err);

#endif
