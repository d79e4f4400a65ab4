/* halfcheck with the test registry: the same command line as build/halfcheck, where a spec may also
 * name a test-only kind (fault:, tests/lib/fault.c). The CLI tests that run fault: run this. */
#include "harness/cli/cli.h"
#include "tests/lib/testkinds.h"

int main(int argc, char **argv)
{
    return hc_cli_main(argc, argv, hc_test_registry());
}
