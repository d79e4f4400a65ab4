/* Docs and help true: a small checker over README.md, the docs/ pages and every command's
 * --help (and `halfcheck backends`, `halfcheck version`). Every repository path they name
 * (suites/..., docs/..., ci/..., examples/..., ...) exists; every README section they cite
 * ((README, "X"), README's "X") is a heading of the README; help names every built-in tier
 * where it lists tiers; `backends` cites nothing users lack (shared/) and cuts no description;
 * `version` says whether the cuda backend is built in; no page keeps a diary (sessions, issue numbers,
 * branches); docs/ARCHITECTURE.md lists the layers of ci/layers, in its order. Run from the repository
 * root (make test). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "hc_test.h"

static const char *const prefixes[] = {"suites/", "docs/", "examples/", "ci/", "tests/", "harness/", "backends/",
                                       "reports/", "refs/", "nets/"};

/* Checks every repository path named in text; the first missing one into bad. Returns how many. */
static int check_paths(const char *text, const char *what, char *bad, size_t len)
{
    int missing = 0;
    for (const char *p = text; *p; p++) {
        /* A path starts a word: not after a letter, a digit, '/', '.', '-' or '_' (../shared/nets is not ours). */
        if (p > text && (isalnum((unsigned char)p[-1]) || strchr("/._-$~", p[-1])))
            continue;
        size_t k = 0;
        for (; k < sizeof prefixes / sizeof prefixes[0]; k++)
            if (!strncmp(p, prefixes[k], strlen(prefixes[k])))
                break;
        if (k == sizeof prefixes / sizeof prefixes[0])
            continue;
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-*{}<>");
        char path[512];
        snprintf(path, sizeof path, "%.*s", (int)(n < sizeof path ? n : sizeof path - 1), p);
        /* Trailing punctuation of the sentence. */
        while (strlen(path) && strchr(".,:;", path[strlen(path) - 1]))
            path[strlen(path) - 1] = 0;
        /* Patterns and placeholders (a glob, docs/{A,B}, nets/NAME.yaml) are not paths; a page of
         * docs/ is named in capitals (docs/PLATFORMS.md) and is one. */
        int upper = 0;
        for (const char *q = strchr(path, '/'); q && *q; q++)
            upper |= isupper((unsigned char)*q) && q[1] && isupper((unsigned char)q[1]);
        size_t pl = strlen(path);
        if (!strncmp(path, "docs/", 5) && pl > 8 && !strcmp(path + pl - 3, ".md") && !strchr(path + 5, '/'))
            upper = 0;
        if (strpbrk(path, "*{}<>") || upper)
            continue;
        struct stat st;
        char prog[520];
        snprintf(prog, sizeof prog, "%s.c", path); /* a test program is named without its .c */
        if (stat(path, &st) != 0 && stat(prog, &st) != 0) {
            printf("# %s: %s does not exist\n", what, path);
            if (!missing)
                snprintf(bad, len, "%s names %s, which does not exist", what, path);
            missing++;
        }
        p += n - 1;
    }
    return missing;
}

/* Every "README, \"X\"" or "README's \"X\"" in text names a heading of the README. */
static int check_sections(const char *text, const char *readme, const char *what, char *bad, size_t len)
{
    int missing = 0;
    static const char *const pats[] = {"README, \"", "README's \"", "README, \\\""};
    for (size_t k = 0; k < 3; k++) {
        for (const char *p = strstr(text, pats[k]); p; p = strstr(p + 1, pats[k])) {
            const char *s = p + strlen(pats[k]);
            size_t n = strcspn(s, "\"\\");
            char want[200];
            snprintf(want, sizeof want, "%.*s", (int)(n < 190 ? n : 190), s);
            int found = 0;
            for (const char *h = readme; h && *h; h = strchr(h, '\n') ? strchr(h, '\n') + 1 : NULL) {
                if (*h != '#')
                    continue;
                const char *e = strchr(h, '\n');
                size_t hl = e ? (size_t)(e - h) : strlen(h);
                char head[400];
                snprintf(head, sizeof head, "%.*s", (int)(hl < 399 ? hl : 399), h);
                found |= strstr(head, want) != NULL;
            }
            if (!found) {
                if (!missing)
                    snprintf(bad, len, "%s cites the README's \"%s\", which is no heading of it", what, want);
                missing++;
            }
        }
    }
    return missing;
}

/* Docs describe the project as it is: no diary ("session 4", "issue 29", "the `speed` branch").
 * Counts the references in text; the first into bad. */
static int check_diary(const char *text, const char *what, char *bad, size_t len)
{
    static const char *const words[] = {"session ", "sessions ", "issue ", "issues ", "issue #"};
    int found = 0;
    for (const char *p = text; *p; p++) {
        /* "the `emu` branch", "branch `speed`" */
        if (!strncmp(p, "` branch", 8) || !strncmp(p, "branch `", 8)) {
            if (!found)
                snprintf(bad, len, "%s names a branch (\"%.20s\"): history belongs to git log", what, p);
            found++;
        }
        if (p > text && isalpha((unsigned char)p[-1]))
            continue;
        for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
            size_t n = strlen(words[k]);
            if (strncasecmp(p, words[k], n) || !(isdigit((unsigned char)p[n]) || p[n] == '#'))
                continue;
            if (!found)
                snprintf(bad, len, "%s refers to \"%.*s\": history belongs to git log", what, (int)n + 2, p);
            found++;
        }
    }
    return found;
}

enum { MAX_LAYERS = 64, LAYER_NAME = 64 };

/* The folders of ci/layers' text in order (comments and blank lines skipped). Returns how many. */
static int layers_listed(const char *text, char names[][LAYER_NAME])
{
    int n = 0;
    for (const char *l = text; l && *l && n < MAX_LAYERS; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        size_t len = strcspn(l, "#\n");
        while (len && isspace((unsigned char)l[len - 1]))
            len--;
        size_t skip = strspn(l, " \t");
        if (len > skip)
            snprintf(names[n++], LAYER_NAME, "%.*s", (int)(len - skip), l + skip);
    }
    return n;
}

/* The layer list of docs/ARCHITECTURE.md: under its "## Layers" heading, up to the next "## ", the
 * first backticked name of each bullet ("- `harness/base/`: ..."), its trailing '/' dropped; at[i]
 * (when not NULL) the offset of name i in text. Returns how many, or -1 without that heading. */
static int layers_documented(const char *text, char names[][LAYER_NAME], size_t *at)
{
    const char *h = strstr(text, "\n## Layers\n");
    if (!h)
        return -1;
    h += strlen("\n## Layers\n");
    const char *end = strstr(h, "\n## ");
    int n = 0;
    for (const char *l = h; l && *l && (!end || l < end) && n < MAX_LAYERS;
         l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "- `", 3))
            continue;
        const char *name = l + 3;
        size_t len = strcspn(name, "`\n");
        if (name[len] != '`')
            continue;
        if (at)
            at[n] = (size_t)(name - text);
        snprintf(names[n++], LAYER_NAME, "%.*s", (int)(len && name[len - 1] == '/' ? len - 1 : len), name);
    }
    return n;
}

/* 1 when the documented list is the listed one in order; else 0 with the first difference in bad. */
static int layers_agree(char listed[][LAYER_NAME], int nl, char doc[][LAYER_NAME], int nd, char *bad, size_t len)
{
    if (nd < 0)
        return snprintf(bad, len, "docs/ARCHITECTURE.md has no \"## Layers\" heading"), 0;
    for (int i = 0; i < nl || i < nd; i++)
        if (i >= nl || i >= nd || strcmp(listed[i], doc[i])) {
            snprintf(bad, len, "layer %d: ci/layers has %s, docs/ARCHITECTURE.md %s", i + 1,
                     i < nl ? listed[i] : "nothing more", i < nd ? doc[i] : "nothing more");
            return 0;
        }
    return nl > 0;
}

/* The output of a halfcheck command line (stdout and stderr), malloc'd. */
static char *output_of(const char *args)
{
    char cmd[1200];
    const char *dir = hc_tmpdir("test_docs");
    snprintf(cmd, sizeof cmd, "%s %s > %s/out.txt 2>&1", hc_halfcheck_bin(), args, dir);
    hc_sh(cmd);
    return hc_slurp(hc_path(dir, "out.txt"));
}

int main(void)
{
    hc_plan(9);
    char *readme = hc_slurp("README.md");
    if (!hc_check("docs-0.1", readme != NULL, "README.md not found: run from the repository root"))
        return hc_fail_rest("docs-1", "not run: no README"), hc_test_exit();

    /* 1. The README and docs/. */
    char bad[600] = "", dbad[300] = "";
    int missing = check_paths(readme, "README.md", bad, sizeof bad);
    int diary = check_diary(readme, "README.md", dbad, sizeof dbad);
    static const char *const docs[] = {"docs/ANALYSIS.md", "docs/ARCHITECTURE.md", "docs/BISECT.md", "docs/CALIBRATION.md",
                                       "docs/CI.md",       "docs/DECISIONS.md",    "docs/EMULATION.md", "docs/FUZZING.md",
                                       "docs/GTP.md",      "docs/PERFORMANCE.md",  "docs/PLATFORMS.md", "docs/PROTOCOL.md",
                                       "docs/TAPS.md"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        char *t = hc_slurp(docs[i]);
        if (!t) {
            if (!missing)
                snprintf(bad, sizeof bad, "%s cannot be read", docs[i]);
            missing++;
            continue;
        }
        missing += check_paths(t, docs[i], bad, sizeof bad);
        missing += check_sections(t, readme, docs[i], bad, sizeof bad);
        diary += check_diary(t, docs[i], dbad, sizeof dbad);
        free(t);
    }
    hc_check("docs-1.1", missing == 0, "%d missing: %s", missing, bad);
    hc_check("docs-1.2", diary == 0, "%d references to sessions, issues or branches: %s", diary, dbad);

    /* 2. Every command's --help. */
    static const char *const cmds[] = {"demo", "run", "katago", "eval", "compare", "record", "features", "selfplay",
                                       "synth-net", "bisect-precision", "taps", "headroom", "cases", "merge", "backends", "version"};
    missing = 0;
    int tiers_ok = 1;
    char tiers_bad[200] = "";
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[64], what[64];
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        snprintf(what, sizeof what, "halfcheck %s --help", cmds[i]);
        char *h = output_of(args);
        if (!h)
            continue;
        missing += check_paths(h, what, bad, sizeof bad);
        missing += check_sections(h, readme, what, bad, sizeof bad);
        /* Where a help lists the built-in tiers, it lists them all. */
        if (strstr(h, "fp32") && strstr(h, "fp16") && strstr(h, "--tier ") &&
            (!strstr(h, "fp32-strict") || !strstr(h, "exact"))) {
            tiers_ok = 0;
            snprintf(tiers_bad, sizeof tiers_bad, "%s", what);
        }
        free(h);
    }
    hc_check("docs-2.1", missing == 0, "%d missing: %s", missing, bad);
    hc_check("docs-2.2", tiers_ok, "%s lists tiers without exact or fp32-strict", tiers_bad);
    /* taps: --threshold does not decide the first divergent layer (docs/TAPS.md: --factor does). */
    char *th = output_of("taps --help");
    hc_check("docs-2.3", th && strstr(th, "--factor") && !strstr(th, "above which a layer diverges"),
             "taps --help says --threshold decides divergence: %s", th ? th : "");
    free(th);

    /* 3. backends and version. */
    char *b = output_of("backends"), *v = output_of("version");
    hc_check("docs-3.1", b && !strstr(b, "shared/") && !strstr(b, "...") && !strstr(b, "\xe2\x80\xa6") && v &&
                             strstr(v, "cuda backend: "),
             "backends cites shared/ or cuts a description, or version does not say whether cuda is built in:\n%s\n%s",
             b ? b : "", v ? v : "");
    free(b);
    free(v);

    /* 4. docs/ARCHITECTURE.md's layers are ci/layers', in order; and the comparison fails on a copy
     * of the page with two of its layers swapped. */
    static char listed[MAX_LAYERS][LAYER_NAME], doc[MAX_LAYERS][LAYER_NAME];
    char *lt = hc_slurp("ci/layers"), *arch = hc_slurp("docs/ARCHITECTURE.md");
    char lbad[300] = "no ci/layers or docs/ARCHITECTURE.md";
    int nl = lt ? layers_listed(lt, listed) : 0;
    size_t at[MAX_LAYERS] = {0};
    int nd = arch ? layers_documented(arch, doc, at) : -1;
    hc_check("docs-4.1", lt && arch && layers_agree(listed, nl, doc, nd, lbad, sizeof lbad), "%s", lbad);
    int refused = 0;
    if (arch && nd >= 2) {
        /* Swap the names of the first two layers in a copy. */
        size_t l0 = strlen(doc[0]), l1 = strlen(doc[1]), n = strlen(arch);
        char *sw = malloc(n + 1);
        if (sw) {
            size_t o = 0;
            memcpy(sw + o, arch, at[0]), o += at[0];
            memcpy(sw + o, doc[1], l1), o += l1;
            memcpy(sw + o, arch + at[0] + l0, at[1] - at[0] - l0), o += at[1] - at[0] - l0;
            memcpy(sw + o, doc[0], l0), o += l0;
            memcpy(sw + o, arch + at[1] + l1, n - at[1] - l1 + 1);
            static char swapped[MAX_LAYERS][LAYER_NAME];
            char sbad[300];
            int ns = layers_documented(sw, swapped, NULL);
            refused = !layers_agree(listed, nl, swapped, ns, sbad, sizeof sbad) && strstr(sbad, "layer 1:");
            free(sw);
        }
    }
    hc_check("docs-4.2", refused, "a copy of docs/ARCHITECTURE.md with its first two layers swapped is not refused");
    free(lt);
    free(arch);
    free(readme);
    return hc_test_exit();
}
