/* Errors that say where: a stable code for programs, a message with context for people.
 * Library code fills an hc_err and returns -1 (or NULL); only main.c prints and exits. */
#ifndef HC_ERR_H
#define HC_ERR_H

#include <stddef.h>

enum hc_code {
    HC_OK = 0,
    HC_EUSAGE,    /* bad command line */
    HC_EIO,       /* a file could not be opened, read or written */
    HC_EFORMAT,   /* a file's content is malformed (SGF, JSON, model, features) */
    HC_ECONFIG,   /* a YAML config is malformed or inconsistent */
    HC_ELIMIT,    /* an input exceeds an explicit resource limit */
    HC_ENOMEM,    /* allocation failed */
    HC_EBACKEND,  /* a backend failed, crashed, hung or produced non-finite output */
    HC_EINTERNAL, /* a bug in halfcheck */
    HC_EINTERRUPTED /* stopped on request (a progress or skip callback said stop: a signal) */
};

typedef struct hc_err {
    int code;
    char msg[1024];
} hc_err;

/* Sets code and a printf-style message; returns -1 so callers can `return hc_err_set(...)`.
 * err may be NULL. */
int hc_err_set(hc_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prepends context ("file: ") to an existing message, keeping its code; returns -1. */
int hc_err_prefix(hc_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void hc_err_clear(hc_err *err);

const char *hc_code_str(int code);

/* malloc/calloc that fill err on failure (with what was being allocated). */
void *hc_malloc(size_t n, hc_err *err, const char *what);
void *hc_calloc(size_t count, size_t size, hc_err *err, const char *what);

#endif
