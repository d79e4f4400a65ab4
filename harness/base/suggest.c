/* "Did you mean": edit distance over a few candidates (suggest.h). */
#include "harness/base/suggest.h"

#include <stdio.h>
#include <string.h>

/* Edit distance of a[0..la) and b (insertions, deletions, substitutions and swaps of two
 * neighbours: "fp61" is one edit from "fp16"), capped: typos worth a suggestion are short. */
static int edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int prev2[64], prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = prev2[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            int d = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
        }
        memcpy(prev2, prev, sizeof prev);
        memcpy(prev, cur, sizeof cur);
    }
    return prev[lb];
}

const char *hc_suggest(const char *word, size_t len, const char *const *cands, int n)
{
    int limit = (int)len / 3;
    limit = limit < 1 ? 1 : limit > 3 ? 3 : limit;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int i = 0; i < n; i++) {
        int d = edit_distance(word, len, cands[i]);
        /* a prefix ("--thread" for "--threads") is as likely a typo as one wrong letter */
        if (d > 1 && strlen(cands[i]) > len && strncmp(cands[i], word, len) == 0 && len >= 3)
            d = 1;
        if (d < best_d && (size_t)d < len) { /* every letter replaced is no typo */
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}

const char *hc_suggest_text(char *buf, size_t buflen, const char *word, size_t len, const char *const *cands, int n)
{
    const char *near = hc_suggest(word, len, cands, n);
    if (near)
        snprintf(buf, buflen, " (did you mean \"%s\"?)", near);
    else if (buflen)
        buf[0] = '\0';
    return buf;
}
