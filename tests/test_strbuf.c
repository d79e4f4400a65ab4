/* The growable printf string (harness/base/strbuf): growth, empty, take/free, and the failed flag. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/base/strbuf.h"

int main(void)
{
    hc_plan(12);

    /* Empty: "" and 0, and take hands back an allocated "" (the caller frees it like any other). */
    hc_strbuf b = HC_STRBUF_INIT;
    hc_check("empty-str", strcmp(hc_strbuf_str(&b), "") == 0 && hc_strbuf_len(&b) == 0 && !hc_strbuf_failed(&b),
             "str \"%s\" len %zu failed %d", hc_strbuf_str(&b), hc_strbuf_len(&b), hc_strbuf_failed(&b));
    size_t n = 99;
    char *s = hc_strbuf_take(&b, &n);
    hc_check("empty-take", s && !*s && n == 0, "take gave %s, len %zu", s ? "a string" : "NULL", n);
    free(s);

    /* An empty format appends nothing. */
    hc_strbuf_printf(&b, "%s", "");
    hc_check("empty-append", hc_strbuf_len(&b) == 0 && !strcmp(hc_strbuf_str(&b), ""), "len %zu", hc_strbuf_len(&b));
    hc_strbuf_free(&b);

    /* Growth past several capacities: appends of varied sizes, checked against the text built by hand. */
    size_t want_cap = 1 << 20;
    char *want = malloc(want_cap);
    size_t wn = 0;
    int ok = want != NULL;
    for (int i = 0; ok && i < 20000; i++) {
        char piece[64];
        int k = snprintf(piece, sizeof piece, "%d:%.*s|", i, i % 37, "abcdefghijklmnopqrstuvwxyz0123456789");
        hc_strbuf_printf(&b, "%d:%.*s|", i, i % 37, "abcdefghijklmnopqrstuvwxyz0123456789");
        if (wn + (size_t)k + 1 > want_cap)
            ok = 0;
        else {
            memcpy(want + wn, piece, (size_t)k + 1);
            wn += (size_t)k;
        }
    }
    hc_check("grow-len", ok && hc_strbuf_len(&b) == wn, "len %zu, want %zu", hc_strbuf_len(&b), wn);
    hc_check("grow-text", ok && wn > 8 * 4096 && !memcmp(hc_strbuf_str(&b), want, wn + 1),
             "%zu bytes (past 4096 several doublings) differ from the expected text", wn);
    hc_check("grow-not-failed", !hc_strbuf_failed(&b), "failed flag set while growing");

    /* One append larger than a doubling of the current capacity. */
    hc_strbuf c = HC_STRBUF_INIT;
    hc_strbuf_printf(&c, "x");
    hc_strbuf_printf(&c, "%*d", 100000, 7);
    hc_check("big-append", hc_strbuf_len(&c) == 100001 && hc_strbuf_str(&c)[100000] == '7' &&
             hc_strbuf_str(&c)[100001] == 0 && hc_strbuf_str(&c)[1] == ' ',
             "len %zu", hc_strbuf_len(&c));
    hc_strbuf_free(&c);
    hc_check("free-empties", hc_strbuf_len(&c) == 0 && !strcmp(hc_strbuf_str(&c), ""), "len %zu after free",
             hc_strbuf_len(&c));

    /* take hands over the whole text and leaves the buffer empty and usable. */
    s = hc_strbuf_take(&b, &n);
    hc_check("take", s && n == wn && !memcmp(s, want, wn + 1) && hc_strbuf_len(&b) == 0,
             "took %zu bytes, want %zu; buffer len %zu after", n, wn, hc_strbuf_len(&b));
    free(s);
    free(want);
    hc_strbuf_printf(&b, "again %d", 2);
    hc_check("reuse", !strcmp(hc_strbuf_str(&b), "again 2"), "after take: \"%s\"", hc_strbuf_str(&b));

    /* The failed flag: an append vsnprintf refuses (a result longer than INT_MAX: it only counts, it
       allocates nothing) sets it, later appends are no-ops, and take gives NULL and frees the text. The
       same path a failed realloc takes. */
    volatile int wide = INT_MAX; /* volatile: the compiler would refuse the constant width at build time */
    hc_strbuf_printf(&b, "x%*d", wide, 1);
    hc_strbuf_printf(&b, "more");
    hc_check("failed-flag", hc_strbuf_failed(&b) && !strcmp(hc_strbuf_str(&b), "again 2"),
             "failed %d, text \"%s\"", hc_strbuf_failed(&b), hc_strbuf_str(&b));
    s = hc_strbuf_take(&b, &n);
    hc_check("failed-take", !s && n == 0 && !hc_strbuf_failed(&b) && hc_strbuf_len(&b) == 0,
             "take after failure gave %s, len %zu; buffer failed %d", s ? "text" : "NULL", n, hc_strbuf_failed(&b));
    free(s);
    return hc_test_exit();
}
