/* hc_err: setting, prefixing and naming error codes with their context. */
#include "harness/base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hc_err_set(hc_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return -1;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int hc_err_prefix(hc_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[sizeof err->msg];
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s%s", prefix, old);
    if (err->code == HC_OK)
        err->code = HC_EINTERNAL;
    return -1;
}

void hc_err_clear(hc_err *err)
{
    if (err) {
        err->code = HC_OK;
        err->msg[0] = '\0';
    }
}

const char *hc_code_str(int code)
{
    switch (code) {
    case HC_OK: return "ok";
    case HC_EUSAGE: return "usage";
    case HC_EIO: return "io";
    case HC_EFORMAT: return "format";
    case HC_ECONFIG: return "config";
    case HC_ELIMIT: return "limit";
    case HC_ENOMEM: return "out of memory";
    case HC_EBACKEND: return "backend";
    case HC_EINTERNAL: return "internal";
    case HC_EINTERRUPTED: return "interrupted";
    }
    return "unknown";
}

void *hc_malloc(size_t n, hc_err *err, const char *what)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        hc_err_set(err, HC_ENOMEM, "out of memory allocating %zu bytes for %s", n, what);
    return p;
}

void *hc_calloc(size_t count, size_t size, hc_err *err, const char *what)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        hc_err_set(err, HC_ENOMEM, "out of memory allocating %zu x %zu bytes for %s", count, size, what);
    return p;
}
