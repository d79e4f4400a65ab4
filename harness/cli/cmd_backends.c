/* halfcheck backends: every backend kind with its spec syntax, and the built-in precision profiles. */
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/cli/cli.h"
#include "backends/profile.h"

static const cli_opt opts[] = {
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

/* A profile's description is a paragraph; its first sentence is what the list shows, whole,
 * after the name and wrapped at about 100 columns under itself (a line break in the YAML is a
 * space). */
static void print_first_sentence(const char *s)
{
    enum { INDENT = 19, WIDTH = 100 };
    size_t n = 0;
    while (s[n] && !(s[n] == '.' && (s[n + 1] == ' ' || s[n + 1] == '\0' || s[n + 1] == '\n')))
        n++;
    size_t col = INDENT;
    int first = 1;
    for (size_t i = 0; i < n;) {
        size_t w = 0;
        while (i + w < n && s[i + w] != ' ' && s[i + w] != '\n')
            w++;
        if (!first && col + 1 + w > WIDTH) {
            printf("\n%*s", INDENT, "");
            col = INDENT;
            first = 1;
        }
        printf("%s%.*s", first ? "" : " ", (int)w, s + i);
        col += (first ? 0 : 1) + w;
        first = 0;
        i += w;
        while (i < n && (s[i] == ' ' || s[i] == '\n'))
            i++;
    }
}

int cmd_backends(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    static const cli_cmd usage = {"backends", opts,
        "usage: halfcheck backends\n"
        "lists every backend kind (the SPEC of --backend and of a suite's backend:) and the built-in "
        "precision profiles of emulate:PROFILE\n",
        0, 0};
    int done = cli_start(&usage, argc, argv, &a);
    if (done >= 0)
        return done;
    printf("backend kinds (SPEC):\n");
    /* The user registry only (test kinds are not halfcheck's); the kinds this binary has first. */
    const hc_backend_kind *const *kinds = hc_backend_registry_user()->kinds;
    for (int i = 0; kinds[i]; i++)
        if (!kinds[i]->missing)
            printf("  %s\n      %s\n", kinds[i]->syntax, kinds[i]->summary);
    for (int i = 0; kinds[i]; i++)
        if (kinds[i]->missing)
            printf("  %s\n      %s (not in this binary)\n", kinds[i]->syntax, kinds[i]->summary);
    printf("\nbuilt-in precision profiles (emulate:NAME; bisect-precision --profile NAME):\n");
    for (const char *const *n = hc_profile_builtin_names(); *n; n++) {
        hc_profile *p = hc_profile_load(*n, &err);
        printf("  %-16s ", *n);
        if (!p)
            printf("(cannot load: %s)", err.msg);
        else if (p->description)
            print_first_sentence(p->description);
        printf("\n");
        hc_profile_free(p);
    }
    return HC_EXIT_OK;
}
