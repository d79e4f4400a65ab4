/* Rules: every named rule set and the internal and JSON forms parse as KataGo's Rules::parseRules
 * does (expected strings worked out from game/rules.cpp), toString round-trips, and malformed
 * strings are rejected. */
#include <stdio.h>
#include <string.h>

#include "hc_test.h"
#include "harness/go/rules.h"

typedef struct parse_case {
    const char *in;
    const char *out; /* Rules::toString of the result; NULL: must fail */
} parse_case;

static const parse_case cases[] = {
    {"tromp-taylor", "koPOSITIONALscoreAREAtaxNONEsui1komi7.5"},
    {"Tromp Taylor", "koPOSITIONALscoreAREAtaxNONEsui1komi7.5"},
    {"japanese", "koSIMPLEscoreTERRITORYtaxSEKIsui0komi6.5"},
    {"  KOREAN ", "koSIMPLEscoreTERRITORYtaxSEKIsui0komi6.5"},
    {"chinese", "koSIMPLEscoreAREAtaxNONEsui0whbNfpok1komi7.5"},
    {"chinese-ogs", "koPOSITIONALscoreAREAtaxNONEsui0whbNfpok1komi7.5"},
    {"chinese_kgs", "koPOSITIONALscoreAREAtaxNONEsui0whbNfpok1komi7.5"},
    {"aga", "koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1komi7.5"},
    {"bga", "koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1komi7.5"},
    {"french", "koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1komi7.5"},
    {"aga-button", "koSITUATIONALscoreAREAtaxNONEsui0button1whbN-1fpok1komi7"},
    {"new-zealand", "koSITUATIONALscoreAREAtaxNONEsui1fpok1komi7"},
    {"nz", "koSITUATIONALscoreAREAtaxNONEsui1fpok1komi7"},
    {"stone-scoring", "koSIMPLEscoreAREAtaxALLsui0fpok1komi7.5"},
    {"ancient area", "koSIMPLEscoreAREAtaxALLsui0fpok1komi7.5"},
    {"ancient-territory", "koSIMPLEscoreTERRITORYtaxALLsui0komi6.5"},
    {"goe", "koPOSITIONALscoreAREAtaxNONEsui1fpok1komi7.5"},
    {"ing", "koPOSITIONALscoreAREAtaxNONEsui1fpok1komi7.5"},
    {"koSITUATIONALscoreAREAtaxNONEsui1komi7.5", "koSITUATIONALscoreAREAtaxNONEsui1komi7.5"},
    {"koSIMPLEscoreTERRITORYtaxALLsui0button1whbN-1fpok1komi-3.5", "koSIMPLEscoreTERRITORYtaxALLsui0button1whbN-1fpok1komi-3.5"},
    {"scoreTERRITORY", "koPOSITIONALscoreTERRITORYtaxSEKIsui1komi6.5"},
    {"scoringTERRITORY taxNONE", "koPOSITIONALscoreTERRITORYtaxNONEsui1komi6.5"},
    {"button1", "koPOSITIONALscoreAREAtaxNONEsui1button1komi7"},
    {" koSIMPLE  scoringAREA komi 0 ", "koSIMPLEscoreAREAtaxNONEsui1komi0"},
    {"whbN", "koPOSITIONALscoreAREAtaxNONEsui1whbNkomi7.5"},
    {"whbN-1whb0", "koPOSITIONALscoreAREAtaxNONEsui1komi7.5"},
    {"koSPIGHTfpok1komi6", "koSPIGHTscoreAREAtaxNONEsui1fpok1komi6"},
    {"komi7.25", "koPOSITIONALscoreAREAtaxNONEsui1komi7.25"},
    {"komi+.5", "koPOSITIONALscoreAREAtaxNONEsui1komi0.5"},
    {"{\"ko\":\"SIMPLE\",\"scoring\":\"TERRITORY\",\"komi\":5.5}", "koSIMPLEscoreTERRITORYtaxSEKIsui1komi5.5"},
    {"{\"hasButton\":true}", "koPOSITIONALscoreAREAtaxNONEsui1button1komi7"},
    {"{\"score\":\"AREA\",\"tax\":\"ALL\",\"suicide\":false,\"whiteHandicapBonus\":\"N\",\"friendlyPassOk\":true}",
     "koPOSITIONALscoreAREAtaxALLsui0whbNfpok1komi7.5"},
    {"", NULL},
    {"   ", NULL},
    {"koFOO", NULL},
    {"komi", NULL},
    {"komiabc", NULL},
    {"komi7.5x", NULL},
    {"komi1e6", NULL},
    {"komi200000", NULL},
    {"komi1.2.3", NULL},
    {"sui2", NULL},
    {"chinesefoo", NULL},
    {"{\"komi\":7.3}", NULL},
    {"{\"komi\":500}", NULL},
    {"{\"foo\":1}", NULL},
    {"{\"ko\":\"simple\"}", NULL},
    {"{\"suicide\":1}", NULL},
    {"{\"ko\":", NULL},
};

int main(void)
{
    const size_t n_cases = sizeof cases / sizeof cases[0];
    size_t n_accepted = 0;
    for (size_t i = 0; i < n_cases; i++)
        n_accepted += cases[i].out != NULL;
    hc_plan((unsigned)(n_cases + n_accepted) + 1 + 8); /* rules-1 every parse case, rules-2 accepted ones' form; 3; 4 */
    char name[64], buf[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hc_rules r;
        hc_err err = {0};
        int rc = hc_rules_parse(cases[i].in, &r, &err);
        snprintf(name, sizeof name, "rules-1.%zu", i);
        if (!cases[i].out) {
            hc_check(name, rc != 0 && err.code == HC_EFORMAT && err.msg[0], "\"%s\" should be rejected", cases[i].in);
            continue;
        }
        int parsed = hc_check(name, rc == 0, "\"%s\": %s", cases[i].in, err.msg);
        snprintf(name, sizeof name, "rules-2.%zu", i);
        if (!parsed) {
            hc_fail_n(name, 1, "not run: \"%s\" did not parse", cases[i].in);
            continue;
        }
        hc_rules_format(&r, buf, sizeof buf);
        hc_check(name, strcmp(buf, cases[i].out) == 0, "\"%s\" gave %s, want %s", cases[i].in, buf, cases[i].out);
    }

    /* Every combination: format then parse gives the same rules back, and format is stable. */
    const float komis[] = {7.5f, 6.5f, 0.0f, -12.5f, 7.0f, 0.25f, 150.0f};
    long n = 0, bad = 0;
    char first[256] = "";
    for (int ko = 0; ko < 4; ko++)
        for (int sc = 0; sc < 2; sc++)
            for (int tax = 0; tax < 3; tax++)
                for (int sui = 0; sui < 2; sui++)
                    for (int but = 0; but < 2; but++)
                        for (int whb = 0; whb < 3; whb++)
                            for (int fp = 0; fp < 2; fp++)
                                for (size_t k = 0; k < sizeof komis / sizeof komis[0]; k++) {
                                    hc_rules r = {ko, sc, tax, sui, but, whb, fp, komis[k]}, back;
                                    hc_err err = {0};
                                    char again[128];
                                    n++;
                                    if (hc_rules_format(&r, buf, sizeof buf) < 0 || hc_rules_parse(buf, &back, &err) ||
                                        !hc_rules_equal(&r, &back) || hc_rules_format(&back, again, sizeof again) < 0 ||
                                        strcmp(buf, again) != 0) {
                                        if (!bad++)
                                            snprintf(first, sizeof first, "%s: %s", buf, err.msg);
                                    }
                                }
    hc_check("rules-3.1", bad == 0, "%ld of %ld combinations do not round-trip; first %s", bad, n, first);

    hc_rules r;
    hc_err err = {0};
    hc_check("rules-4.1", hc_rules_parse_without_komi("koSIMPLEkomi7.5", 5.0f, &r, &err) != 0, "komi accepted without komi");
    hc_check("rules-4.2", hc_rules_parse_without_komi("{\"komi\":7.5}", 5.0f, &r, &err) != 0, "JSON komi accepted without komi");
    hc_check("rules-4.3", hc_rules_parse_without_komi("japanese", 5.0f, &r, &err) == 0 && r.komi == 5.0f && r.scoring_rule == HC_SCORING_TERRITORY,
             "parse without komi: %s", err.msg);
    hc_rules d = hc_rules_default();
    hc_rules_format(&d, buf, sizeof buf);
    hc_check("rules-4.4", strcmp(buf, "koPOSITIONALscoreAREAtaxNONEsui1komi7.5") == 0, "default rules %s", buf);
    hc_rules_format_no_komi(&d, buf, sizeof buf);
    hc_check("rules-4.5", strcmp(buf, "koPOSITIONALscoreAREAtaxNONEsui1") == 0, "no-komi form %s", buf);
    hc_check("rules-4.6", hc_rules_format(&d, buf, 10) == -1, "a too-small buffer must fail");
    hc_rules bt = d;
    bt.has_button = true;
    bt.komi = 7.0f;
    hc_check("rules-4.7", hc_rules_result_is_integer(&d) == false && hc_rules_result_is_integer(&bt) == false,
             "7.5 / button+7 results are half-integers");
    bt.komi = 7.5f;
    hc_check("rules-4.8", hc_rules_result_is_integer(&bt), "button+7.5 gives integer results");
    return hc_test_exit();
}
