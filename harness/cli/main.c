/* halfcheck's main: the command line (cli_main.c) over the backend kinds built into halfcheck. */
#include "harness/cli/cli.h"

int main(int argc, char **argv)
{
    return hc_cli_main(argc, argv, NULL);
}
