/* KataGo's Rules: parser and formatter (game/rules.cpp). */
#include "harness/go/rules.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hc_rules hc_rules_default(void)
{
    hc_rules r;
    r.ko_rule = HC_KO_POSITIONAL;
    r.scoring_rule = HC_SCORING_AREA;
    r.tax_rule = HC_TAX_NONE;
    r.multi_stone_suicide_legal = true;
    r.has_button = false;
    r.white_handicap_bonus_rule = HC_WHB_ZERO;
    r.friendly_pass_ok = false;
    r.komi = 7.5f;
    return r;
}

bool hc_rules_equal(const hc_rules *a, const hc_rules *b)
{
    return a->ko_rule == b->ko_rule && a->scoring_rule == b->scoring_rule && a->tax_rule == b->tax_rule &&
           a->multi_stone_suicide_legal == b->multi_stone_suicide_legal && a->has_button == b->has_button &&
           a->white_handicap_bonus_rule == b->white_handicap_bonus_rule && a->friendly_pass_ok == b->friendly_pass_ok &&
           a->komi == b->komi;
}

bool hc_rules_result_is_integer(const hc_rules *r)
{
    bool komi_int = ((int)r->komi) == r->komi;
    return komi_int != r->has_button;
}

static const char *ko_names[] = {"SIMPLE", "POSITIONAL", "SITUATIONAL", "SPIGHT"};
static const char *scoring_names[] = {"AREA", "TERRITORY"};
static const char *tax_names[] = {"NONE", "SEKI", "ALL"};
static const char *whb_names[] = {"0", "N", "N-1"};

static const char *name_or_unknown(const char **names, int n, int v)
{
    return (v >= 0 && v < n) ? names[v] : "UNKNOWN";
}

int hc_rules_format_no_komi(const hc_rules *r, char *buf, size_t n)
{
    int len = snprintf(buf, n, "ko%sscore%stax%ssui%d%s%s%s%s", name_or_unknown(ko_names, 4, r->ko_rule),
                       name_or_unknown(scoring_names, 2, r->scoring_rule), name_or_unknown(tax_names, 3, r->tax_rule),
                       r->multi_stone_suicide_legal ? 1 : 0, r->has_button ? "button1" : "",
                       r->white_handicap_bonus_rule != HC_WHB_ZERO ? "whb" : "",
                       r->white_handicap_bonus_rule != HC_WHB_ZERO ? name_or_unknown(whb_names, 3, r->white_handicap_bonus_rule) : "",
                       r->friendly_pass_ok ? "fpok1" : "");
    return (len < 0 || (size_t)len >= n) ? -1 : len;
}

int hc_rules_format(const hc_rules *r, char *buf, size_t n)
{
    int len = hc_rules_format_no_komi(r, buf, n);
    if (len < 0)
        return -1;
    /* std::ostream's default float output is %g with 6 significant digits */
    int more = snprintf(buf + len, n - (size_t)len, "komi%g", (double)r->komi);
    return (more < 0 || (size_t)(len + more) >= n) ? -1 : len + more;
}

/* ---- parsing ---------------------------------------------------------------------------------- */

static bool is_ws(char c) { return c && strchr(" \t\r\n\v\f", c) != NULL; }
static bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

/* Trims in place inside [*s, end): advances *s, returns the new end. */
static void trim_span(const char **s, const char **e)
{
    while (*s < *e && is_ws(**s))
        (*s)++;
    while (*e > *s && is_ws((*e)[-1]))
        (*e)--;
}

static bool name_is(const char *lower, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(lower, *names) == 0)
            return true;
    return false;
}

/* KataGo's named rule sets (Rules::parseRulesHelper), by their accepted lower-case spellings. */
typedef struct named_rules {
    const char *const *names;
    int scoring, ko, tax;
    bool sui, button;
    int whb;
    bool fpok;
    float komi;
} named_rules;

static const char *const jp[] = {"japanese", "korean", NULL};
static const char *const cn[] = {"chinese", NULL};
static const char *const cn_ogs[] = {"chineseogs", "chinese_ogs", "chinese-ogs", "chinesekgs", "chinese_kgs", "chinese-kgs", NULL};
static const char *const anc_area[] = {"ancientarea", "ancient-area", "ancient_area", "ancient area",
                                       "stonescoring", "stone-scoring", "stone_scoring", "stone scoring", NULL};
static const char *const anc_terr[] = {"ancientterritory", "ancient-territory", "ancient_territory", "ancient territory", NULL};
static const char *const aga_button[] = {"agabutton", "aga-button", "aga_button", "aga button", NULL};
static const char *const aga[] = {"aga", "bga", "french", NULL};
static const char *const nz[] = {"nz", "newzealand", "new zealand", "new-zealand", "new_zealand", NULL};
static const char *const tt[] = {"tromp-taylor", "tromp_taylor", "tromp taylor", "tromptaylor", NULL};
static const char *const goe[] = {"goe", "ing", NULL};

static const named_rules named[] = {
    {jp, HC_SCORING_TERRITORY, HC_KO_SIMPLE, HC_TAX_SEKI, false, false, HC_WHB_ZERO, false, 6.5f},
    {cn, HC_SCORING_AREA, HC_KO_SIMPLE, HC_TAX_NONE, false, false, HC_WHB_N, true, 7.5f},
    {cn_ogs, HC_SCORING_AREA, HC_KO_POSITIONAL, HC_TAX_NONE, false, false, HC_WHB_N, true, 7.5f},
    {anc_area, HC_SCORING_AREA, HC_KO_SIMPLE, HC_TAX_ALL, false, false, HC_WHB_ZERO, true, 7.5f},
    {anc_terr, HC_SCORING_TERRITORY, HC_KO_SIMPLE, HC_TAX_ALL, false, false, HC_WHB_ZERO, false, 6.5f},
    {aga_button, HC_SCORING_AREA, HC_KO_SITUATIONAL, HC_TAX_NONE, false, true, HC_WHB_N_MINUS_ONE, true, 7.0f},
    {aga, HC_SCORING_AREA, HC_KO_SITUATIONAL, HC_TAX_NONE, false, false, HC_WHB_N_MINUS_ONE, true, 7.5f},
    {nz, HC_SCORING_AREA, HC_KO_SITUATIONAL, HC_TAX_NONE, true, false, HC_WHB_ZERO, true, 7.0f},
    {tt, HC_SCORING_AREA, HC_KO_POSITIONAL, HC_TAX_NONE, true, false, HC_WHB_ZERO, false, 7.5f},
    {goe, HC_SCORING_AREA, HC_KO_POSITIONAL, HC_TAX_NONE, true, false, HC_WHB_ZERO, true, 7.5f},
};

static bool parse_named(const char *lower, hc_rules *r)
{
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        const named_rules *n = &named[i];
        if (!name_is(lower, n->names))
            continue;
        r->scoring_rule = n->scoring;
        r->ko_rule = n->ko;
        r->tax_rule = n->tax;
        r->multi_stone_suicide_legal = n->sui;
        r->has_button = n->button;
        r->white_handicap_bonus_rule = n->whb;
        r->friendly_pass_ok = n->fpok;
        r->komi = n->komi;
        return true;
    }
    return false;
}

static int lookup(const char *s, const char **names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* What both syntaxes infer when the tax rule or komi is not stated: from the scoring rule and button. */
static void fill_unstated(hc_rules *r, bool tax_given, bool komi_given)
{
    if (!tax_given)
        r->tax_rule = r->scoring_rule == HC_SCORING_TERRITORY ? HC_TAX_SEKI : HC_TAX_NONE;
    if (!komi_given) {
        if (r->scoring_rule == HC_SCORING_TERRITORY)
            r->komi = 6.5f;
        else if (r->has_button)
            r->komi = 7.0f;
    }
}

static int key_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int parse_json(const char *s, bool allow_komi, hc_rules *r, hc_err *err)
{
    *r = hc_rules_default();
    json_error_t jerr;
    json_t *root = json_loads(s, 0, &jerr);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        return hc_err_set(err, HC_EFORMAT, "could not parse rules: %s", s);
    }
    /* nlohmann's objects iterate in key order */
    size_t n = json_object_size(root);
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) {
        json_decref(root);
        return hc_err_set(err, HC_ENOMEM, "out of memory parsing rules");
    }
    size_t k = 0;
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) keys[k++] = key;
    qsort(keys, n, sizeof *keys, key_cmp);
    bool komi_given = false, tax_given = false;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        key = keys[i];
        val = json_object_get(root, key);
        int *target = NULL;
        const char **names = NULL;
        int nn = 0;
        if (strcmp(key, "ko") == 0) {
            target = &r->ko_rule;
            names = ko_names;
            nn = 4;
        } else if (strcmp(key, "score") == 0 || strcmp(key, "scoring") == 0) {
            target = &r->scoring_rule;
            names = scoring_names;
            nn = 2;
        } else if (strcmp(key, "tax") == 0) {
            target = &r->tax_rule;
            names = tax_names;
            nn = 3;
            tax_given = true;
        } else if (strcmp(key, "whiteHandicapBonus") == 0) {
            target = &r->white_handicap_bonus_rule;
            names = whb_names;
            nn = 3;
        }
        if (target) {
            int v = json_is_string(val) ? lookup(json_string_value(val), names, nn) : -1;
            if (v < 0)
                rc = hc_err_set(err, HC_EFORMAT, "could not parse rules: %s (bad value for \"%s\")", s, key);
            else
                *target = v;
            continue;
        }
        bool *flag = NULL;
        if (strcmp(key, "suicide") == 0)
            flag = &r->multi_stone_suicide_legal;
        else if (strcmp(key, "hasButton") == 0)
            flag = &r->has_button;
        else if (strcmp(key, "friendlyPassOk") == 0)
            flag = &r->friendly_pass_ok;
        if (flag) {
            if (!json_is_boolean(val))
                rc = hc_err_set(err, HC_EFORMAT, "could not parse rules: %s (\"%s\" is not a boolean)", s, key);
            else
                *flag = json_is_true(val);
            continue;
        }
        if (strcmp(key, "komi") == 0 && allow_komi) {
            float komi;
            if (json_is_number(val))
                komi = (float)json_number_value(val);
            else if (json_is_boolean(val))
                komi = json_is_true(val) ? 1.0f : 0.0f;
            else {
                rc = hc_err_set(err, HC_EFORMAT, "could not parse rules: %s (komi is not a number)", s);
                continue;
            }
            r->komi = komi;
            komi_given = true;
            if (komi < -400.0f || komi > 400.0f || !(isfinite(komi) && komi * 2 == (int)(komi * 2)))
                rc = hc_err_set(err, HC_EFORMAT, "komi value is not a half-integer or is too extreme: %s", s);
            continue;
        }
        rc = hc_err_set(err, HC_EFORMAT, "unknown rules option \"%s\" in %s", key, s);
    }
    free(keys);
    json_decref(root);
    if (rc)
        return rc;
    fill_unstated(r, tax_given, komi_given);
    return 0;
}

/* startsWithAndStrip: strips prefix if present, and trims in any case. */
static bool strip(const char **s, const char **e, const char *prefix)
{
    size_t n = strlen(prefix);
    bool m = (size_t)(*e - *s) >= n && strncmp(*s, prefix, n) == 0;
    if (m)
        *s += n;
    trim_span(s, e);
    return m;
}

static const char *bit_names[] = {"0", "1"};

/* Strips the longest of names that starts the span ("N-1" before "N") and stores its index. */
static int strip_value(const char **s, const char **e, const char **names, int n, int *out)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if ((size_t)(*e - *s) >= len && strncmp(*s, names[i], len) == 0 && (best < 0 || len > strlen(names[best])))
            best = i;
    }
    if (best < 0)
        return -1;
    strip(s, e, names[best]);
    *out = best;
    return 0;
}

static int parse_internal(const char *orig, bool allow_komi, hc_rules *r, hc_err *err)
{
    *r = hc_rules_default();
    const char *s = orig, *e = orig + strlen(orig);
    trim_span(&s, &e);
    if (s >= e)
        return hc_err_set(err, HC_EFORMAT, "could not parse rules: \"%s\"", orig);
    bool komi_given = false, tax_given = false;
#define FAIL() return hc_err_set(err, HC_EFORMAT, "could not parse rules: \"%s\" (at \"%.*s\")", orig, (int)(e - s), s)
    while (s < e) {
        if (strip(&s, &e, "komi")) {
            if (!allow_komi)
                FAIL();
            const char *q = s;
            while (q < e && !is_alpha(*q) && !is_ws(*q))
                q++;
            char num[64];
            size_t len = (size_t)(q - s);
            if (len == 0 || len >= sizeof num)
                FAIL();
            memcpy(num, s, len);
            num[len] = 0;
            char *end;
            float komi = strtof(num, &end);
            if (*end != '\0' || !isfinite(komi) || komi > 1e5f || komi < -1e5f)
                FAIL();
            r->komi = komi;
            komi_given = true;
            s = q;
            trim_span(&s, &e);
            continue;
        }
        if (strip(&s, &e, "ko")) {
            if (strip_value(&s, &e, ko_names, 4, &r->ko_rule) < 0)
                FAIL();
            continue;
        }
        if (strip(&s, &e, "scoring") || strip(&s, &e, "score")) {
            if (strip_value(&s, &e, scoring_names, 2, &r->scoring_rule) < 0)
                FAIL();
            continue;
        }
        if (strip(&s, &e, "tax")) {
            if (strip_value(&s, &e, tax_names, 3, &r->tax_rule) < 0)
                FAIL();
            tax_given = true;
            continue;
        }
        if (strip(&s, &e, "whb")) {
            if (strip_value(&s, &e, whb_names, 3, &r->white_handicap_bonus_rule) < 0)
                FAIL();
            continue;
        }
        bool *flag = NULL;
        if (strip(&s, &e, "sui"))
            flag = &r->multi_stone_suicide_legal;
        else if (strip(&s, &e, "button"))
            flag = &r->has_button;
        else if (strip(&s, &e, "fpok"))
            flag = &r->friendly_pass_ok;
        if (flag) {
            int v;
            if (strip_value(&s, &e, bit_names, 2, &v) < 0)
                FAIL();
            *flag = v == 1;
            continue;
        }
        FAIL();
    }
#undef FAIL
    fill_unstated(r, tax_given, komi_given);
    return 0;
}

static int parse_helper(const char *s, bool allow_komi, hc_rules *out, hc_err *err)
{
    hc_rules r = hc_rules_default();
    const char *b = s, *e = s + strlen(s);
    trim_span(&b, &e);
    char lower[64];
    size_t len = (size_t)(e - b);
    if (len < sizeof lower) {
        for (size_t i = 0; i < len; i++)
            lower[i] = (char)tolower((unsigned char)b[i]);
        lower[len] = 0;
        if (parse_named(lower, &r)) {
            *out = r;
            return 0;
        }
    }
    int rc = (s[0] == '{') ? parse_json(s, allow_komi, &r, err) : parse_internal(s, allow_komi, &r, err);
    if (rc)
        return rc;
    *out = r;
    return 0;
}

int hc_rules_parse(const char *s, hc_rules *out, hc_err *err) { return parse_helper(s, true, out, err); }

int hc_rules_parse_without_komi(const char *s, float komi, hc_rules *out, hc_err *err)
{
    if (parse_helper(s, false, out, err))
        return -1;
    out->komi = komi;
    return 0;
}
