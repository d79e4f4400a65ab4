/* `halfcheck version`: prints the version. */
#include <stdio.h>

#include "cli.h"
#include "version.h"

int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("halfcheck %s (engine %d)\n", HC_VERSION, HC_ENGINE_VERSION);
    return HC_EXIT_OK;
}
