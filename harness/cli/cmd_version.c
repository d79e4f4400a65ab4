/* halfcheck version (and --version, -V): the version and the engine's numeric version. */
#include <stdio.h>

#include "cli.h"
#include "version.h"

static const cli_opt opts[] = {
    {"help", 0, 0, "this help", NULL},
    {NULL, 0, 0, NULL, NULL},
};

int cmd_version(int argc, char **argv)
{
    cli_args a;
    hc_err err = {0};
    if (cli_parse("version", argc, argv, opts, &a, &err))
        return cli_fail("version", &err);
    if (cli_has(&a, "help") || a.n_pos != 0) {
        FILE *f = cli_has(&a, "help") ? stdout : stderr;
        fprintf(f, "usage: halfcheck version   (or halfcheck --version, halfcheck -V)\n");
        cli_print_options(f, opts);
        return cli_has(&a, "help") ? HC_EXIT_OK : HC_EXIT_USAGE;
    }
    printf("halfcheck %s (engine %d)\n", HC_VERSION, HC_ENGINE_VERSION);
    return HC_EXIT_OK;
}
