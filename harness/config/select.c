/* --only: selecting a suite's cases by net, board and backend name (hc_suite_select), shared by
 * the runner, `halfcheck run`'s net check and `halfcheck katago`'s check before it writes. */
#include "harness/config/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/suggest.h"

static const char *const keys[3] = {"net", "board", "backend"};
static const char *const plural[3] = {"nets", "boards", "backends"};

/* One parsed filter: for each key, the wanted name (NULL: any). */
typedef struct filter {
    char buf[1024];
    const char *want[3];
} filter;

static int parse(const char *text, filter *f, hc_err *err)
{
    memset(f, 0, sizeof *f);
    if (strlen(text) >= sizeof f->buf)
        return hc_err_set(err, HC_EUSAGE, "--only %.60s...: filter too long", text);
    strcpy(f->buf, text);
    if (!*text)
        return hc_err_set(err, HC_EUSAGE, "--only \"\": an empty filter (expected net=NAME,board=NAME,backend=NAME, "
                          "any of them)");
    for (char *p = f->buf; p;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        char *eq = strchr(p, '=');
        int k = -1;
        if (eq) {
            *eq = '\0';
            for (int i = 0; i < 3; i++)
                if (strcmp(p, keys[i]) == 0)
                    k = i;
        }
        if (k < 0) {
            char hint[96] = "";
            if (eq)
                hc_suggest_text(hint, sizeof hint, p, strlen(p), keys, 3);
            return hc_err_set(err, HC_EUSAGE, "--only %s: %s%s%s%s (the keys are net=, board= and backend=)", text,
                              eq ? "unknown key \"" : "\"", p, eq ? "\"" : "\" is not KEY=NAME", hint);
        }
        if (f->want[k])
            return hc_err_set(err, HC_EUSAGE, "--only %s: %s= given twice (give several --only for several %s)", text,
                              keys[k], plural[k]);
        f->want[k] = eq + 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static void case_names(const hc_suite *s, const hc_case *c, const char *names[3])
{
    names[0] = s->nets[c->net].name;
    names[1] = s->boards[c->board].name;
    names[2] = s->backends[c->backend].name;
}

/* Whether c matches f on every key but skip (-1: none). */
static int matches(const hc_suite *s, const hc_case *c, const filter *f, int skip)
{
    const char *names[3];
    case_names(s, c, names);
    for (int k = 0; k < 3; k++)
        if (k != skip && f->want[k] && strcmp(f->want[k], names[k]) != 0)
            return 0;
    return 1;
}

/* The error for f's key k, whose name no case has (combo: no case the other keys select): the
 * names for k among the cases f's other keys select (all cases when they select none). */
static int unknown_name(const hc_suite *s, const char *text, const filter *f, int k, int combo, hc_err *err)
{
    const char **cands = malloc((s->n_cases ? s->n_cases : 1) * sizeof *cands);
    if (!cands)
        return hc_err_set(err, HC_ENOMEM, "out of memory");
    int n = 0, narrowed = 0;
    for (int pass = 0; pass < 2 && n == 0; pass++)
        for (size_t i = 0; i < s->n_cases; i++) {
            const char *names[3];
            case_names(s, &s->cases[i], names);
            if (pass == 0 && !matches(s, &s->cases[i], f, k))
                continue;
            int dup = 0;
            for (int j = 0; j < n && !dup; j++)
                dup = strcmp(cands[j], names[k]) == 0;
            if (!dup)
                cands[n++] = names[k];
            narrowed = pass == 0;
        }
    char with[300] = "";
    for (int j = 0, o = 0; j < 3; j++)
        if (j != k && f->want[j] && o < (int)sizeof with)
            o += snprintf(with + o, sizeof with - (size_t)o, "%s%s=%s", o ? "," : "", keys[j], f->want[j]);
    char hint[200], list[600];
    hc_suggest_text(hint, sizeof hint, f->want[k], strlen(f->want[k]), cands, n);
    size_t o = 0;
    list[0] = '\0';
    for (int j = 0; j < n && o < sizeof list; j++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", j ? ", " : "", cands[j]);
    free(cands);
    if (combo)
        return hc_err_set(err, HC_EUSAGE, "--only %s: no case with %s has %s \"%s\"; the %s there: %s", text, with,
                          keys[k], f->want[k], plural[k], list);
    return hc_err_set(err, HC_EUSAGE, "--only %s: no case with %s \"%s\"%s; the %s%s%s: %s", text, keys[k],
                      f->want[k], hint, plural[k], narrowed && with[0] ? " of the cases with " : "",
                      narrowed && with[0] ? with : "", list);
}

int hc_suite_select(const hc_suite *s, const char *const *filters, size_t n, unsigned char *sel, hc_err *err)
{
    memset(sel, n ? 0 : 1, s->n_cases);
    filter *f = malloc(sizeof *f);
    if (!f)
        return hc_err_set(err, HC_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if ((rc = parse(filters[i], f, err)) != 0)
            break;
        /* Each name must be one some case has (a typo is named as such, not as "selects nothing"). */
        for (int k = 0; k < 3 && rc == 0; k++) {
            if (!f->want[k])
                continue;
            int seen = 0;
            for (size_t c = 0; c < s->n_cases && !seen; c++) {
                const char *names[3];
                case_names(s, &s->cases[c], names);
                seen = strcmp(names[k], f->want[k]) == 0;
            }
            if (!seen)
                rc = unknown_name(s, filters[i], f, k, 0, err);
        }
        int any = 0;
        for (size_t c = 0; c < s->n_cases && rc == 0; c++)
            if (matches(s, &s->cases[c], f, -1))
                sel[c] = 1, any = 1;
        if (rc == 0 && !any) {
            /* Every name exists, but not together: name the key whose value the others exclude. */
            int k = f->want[1] ? 1 : f->want[2] ? 2 : 0;
            rc = unknown_name(s, filters[i], f, k, 1, err);
        }
    }
    free(f);
    return rc;
}
