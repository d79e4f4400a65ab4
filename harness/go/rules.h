/* KataGo's game rules (game/rules.cpp): ko, scoring, tax, suicide, button, white handicap bonus,
 * friendly pass and komi; the parser accepts every string KataGo's Rules::parseRules accepts
 * (named rule sets, the internal "koSITUATIONALscoreAREA..." form, and the JSON form), and the
 * formatter writes exactly what Rules::toString writes. */
#ifndef HC_RULES_H
#define HC_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "harness/base/err.h"

enum { HC_KO_SIMPLE = 0, HC_KO_POSITIONAL = 1, HC_KO_SITUATIONAL = 2, HC_KO_SPIGHT = 3 };
enum { HC_SCORING_AREA = 0, HC_SCORING_TERRITORY = 1 };
enum { HC_TAX_NONE = 0, HC_TAX_SEKI = 1, HC_TAX_ALL = 2 };
enum { HC_WHB_ZERO = 0, HC_WHB_N = 1, HC_WHB_N_MINUS_ONE = 2 };

typedef struct hc_rules {
    int ko_rule;      /* HC_KO_* */
    int scoring_rule; /* HC_SCORING_* */
    int tax_rule;     /* HC_TAX_* */
    bool multi_stone_suicide_legal;
    bool has_button;
    int white_handicap_bonus_rule; /* HC_WHB_* */
    bool friendly_pass_ok;
    float komi;
} hc_rules;

/* KataGo's default-constructed Rules (Tromp-Taylor-like, komi 7.5). */
hc_rules hc_rules_default(void);

/* Rules::parseRules. On failure err says which string could not be parsed (HC_EFORMAT). */
int hc_rules_parse(const char *s, hc_rules *out, hc_err *err);
/* Rules::parseRulesWithoutKomi: a komi inside s is an error; komi is set afterwards. */
int hc_rules_parse_without_komi(const char *s, float komi, hc_rules *out, hc_err *err);

/* Rules::toString / toStringNoKomi into buf (NUL-terminated); returns the length written, or -1
 * when buf is too small. 128 bytes always suffice. */
int hc_rules_format(const hc_rules *r, char *buf, size_t n);
int hc_rules_format_no_komi(const hc_rules *r, char *buf, size_t n);

bool hc_rules_equal(const hc_rules *a, const hc_rules *b);
/* Rules::gameResultWillBeInteger */
bool hc_rules_result_is_integer(const hc_rules *r);

#endif
