/* The growable printf string (strbuf.h). */
#include "harness/base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hc_strbuf_vprintf(hc_strbuf *b, const char *fmt, va_list ap)
{
    if (b->failed)
        return;
    for (;;) {
        va_list aq;
        va_copy(aq, ap);
        int k = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, aq);
        va_end(aq);
        if (k < 0) {
            /* vsnprintf may have written part of it: the text stays what the earlier appends made. */
            if (b->s)
                b->s[b->len] = 0;
            b->failed = 1;
            return;
        }
        if (b->s && b->len + (size_t)k < b->cap) {
            b->len += (size_t)k;
            return;
        }
        /* Doubling keeps a page of many small appends linear; the loop then prints again in place. */
        size_t need = b->len + (size_t)k + 1, cap = b->cap ? b->cap * 2 : 4096;
        while (cap < need)
            cap *= 2;
        char *t = realloc(b->s, cap);
        if (!t) {
            b->failed = 1;
            return;
        }
        b->s = t;
        b->cap = cap;
    }
}

void hc_strbuf_printf(hc_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hc_strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

int hc_strbuf_failed(const hc_strbuf *b)
{
    return b->failed;
}

const char *hc_strbuf_str(const hc_strbuf *b)
{
    return b->s ? b->s : "";
}

size_t hc_strbuf_len(const hc_strbuf *b)
{
    return b->len;
}

char *hc_strbuf_take(hc_strbuf *b, size_t *len)
{
    char *s = b->failed ? NULL : b->s ? b->s : calloc(1, 1);
    size_t n = s ? b->len : 0;
    if (b->failed)
        free(b->s);
    *b = (hc_strbuf)HC_STRBUF_INIT;
    if (len)
        *len = n;
    return s;
}

void hc_strbuf_free(hc_strbuf *b)
{
    free(b->s);
    *b = (hc_strbuf)HC_STRBUF_INIT;
}
