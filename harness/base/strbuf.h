/* A growable string built by printf-style appends: the one buffer reports and the CLI assemble text in. */
#ifndef HC_STRBUF_H
#define HC_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Small and on the stack (HC_STRBUF_INIT); its fields are private, read through the functions below.
   An append that cannot grow the buffer (out of memory, or a format vsnprintf refuses) sets the
   failed flag and makes every later append a no-op, so a caller appends freely and checks once. */
typedef struct hc_strbuf {
    char *s;
    size_t len, cap;
    int failed;
} hc_strbuf;

#define HC_STRBUF_INIT {0}

void hc_strbuf_printf(hc_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hc_strbuf_vprintf(hc_strbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* 1 once an append failed: the text is then what the appends before it made, incomplete, not to be used. */
int hc_strbuf_failed(const hc_strbuf *b);
/* The text so far ("" when empty, never NULL) and its length in bytes. */
const char *hc_strbuf_str(const hc_strbuf *b);
size_t hc_strbuf_len(const hc_strbuf *b);
/* The text, now the caller's to free (an allocated "" when empty), the buffer left empty; NULL when an
   append failed or that "" cannot be allocated (the buffer is freed either way). */
char *hc_strbuf_take(hc_strbuf *b, size_t *len);
/* Frees the text; the buffer is empty (and not failed) again. */
void hc_strbuf_free(hc_strbuf *b);

#endif
