/* The one {NAME} expander (harness/base/template): every key replaced where it stands, unknown
 * braces kept for a later expander, values never expanded again, and the runner's and the
 * analysis backend's keys expanded in two passes as a case's engine command is. */
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/base/template.h"

static int expands_to(const char *tmpl, const hc_template_var *v, size_t n, const char *want, char *got, size_t len)
{
    hc_err err = {0};
    char *x = hc_template_expand(tmpl, v, n, &err);
    snprintf(got, len, "%s", x ? x : err.msg);
    int ok = x && strcmp(x, want) == 0;
    free(x);
    return ok;
}

int main(void)
{
    hc_plan(7);
    char got[4096];
    const hc_template_var run[] = {{"model", "/n/net.bin.gz"}, {"nnX", "19"}, {"nnY", "17"}, {"net_name", "b6"}};
    const size_t nr = sizeof run / sizeof run[0];

    hc_check("template-1.1", expands_to("x -model {model} -nn {nnX}x{nnY}", run, nr, "x -model /n/net.bin.gz -nn 19x17",
                                        got, sizeof got),
             "got \"%s\"", got);
    /* A key twice, keys next to each other, at both ends. */
    hc_check("template-1.2", expands_to("{nnX}{nnY}-{nnX}", run, nr, "1917-19", got, sizeof got), "got \"%s\"", got);
    /* Braces that name no key stay, for the analysis backend's pass: {symmetry}, a lone brace, {}, {nnX without its
     * close, a brace before a key. */
    hc_check("template-1.3", expands_to("s={symmetry} { {} {nnX {{nnY}} {net_name}", run, nr,
                                        "s={symmetry} { {} {nnX {17} b6", got, sizeof got),
             "got \"%s\"", got);
    /* A key is whole: {nnXY} and {model_x} are not {nnX} and {model}. */
    hc_check("template-1.4", expands_to("{nnXY}{model_x}", run, nr, "{nnXY}{model_x}", got, sizeof got), "got \"%s\"",
             got);
    /* A value is not expanded again, even when it holds a key. */
    const hc_template_var self[] = {{"a", "{b}"}, {"b", "B"}};
    hc_check("template-1.5", expands_to("{a}{b}", self, 2, "{b}B", got, sizeof got), "got \"%s\"", got);
    /* The two passes of a case's analysis engine: the runner's keys, then the engine's. */
    hc_err err = {0};
    char *first = hc_template_expand("katago analysis -model {model} -override-config nnForcedSymmetry={symmetry},"
                                     "nnMaxBatchSize={batch},numAnalysisThreads={threads},maxBoardXSizeForNNBuffer={nnX}",
                                     run, nr, &err);
    const hc_template_var eng[] = {{"symmetry", "5"}, {"batch", "16"}, {"threads", "64"}};
    char *second = first ? hc_template_expand(first, eng, 3, &err) : NULL;
    hc_check("template-2.1", second && !strcmp(second, "katago analysis -model /n/net.bin.gz -override-config "
                                                      "nnForcedSymmetry=5,nnMaxBatchSize=16,numAnalysisThreads=64,"
                                                      "maxBoardXSizeForNNBuffer=19"),
             "got \"%s\"", second ? second : err.msg);
    free(first);
    free(second);
    /* No variables, a template longer than any fixed buffer: a copy. */
    static char big[20000];
    memset(big, 'x', sizeof big - 1);
    big[100] = '{';
    char *copy = hc_template_expand(big, NULL, 0, &err);
    hc_check("template-2.2", copy && !strcmp(copy, big), "a long template without keys was not copied: %s",
             copy ? "it differs" : err.msg);
    free(copy);
    return hc_test_exit();
}
