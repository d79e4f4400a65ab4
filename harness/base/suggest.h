/* "Did you mean": the closest of a few candidates to a mistyped word (options, commands, YAML
 * keys, backend kinds, precision profiles), for messages. */
#ifndef HC_SUGGEST_H
#define HC_SUGGEST_H

#include <stddef.h>

/* The candidate closest to word[0..len) by edit distance, when close enough to be a likely typo
 * (at most a third of its length, at least 1, at most 3; a candidate that word is a prefix of,
 * from 3 characters, counts as one edit); NULL otherwise. */
const char *hc_suggest(const char *word, size_t len, const char *const *cands, int n);

/* " (did you mean \"X\"?)" for hc_suggest's answer into buf, or "" when there is none; buf is
 * returned. */
const char *hc_suggest_text(char *buf, size_t buflen, const char *word, size_t len, const char *const *cands, int n);

#endif
