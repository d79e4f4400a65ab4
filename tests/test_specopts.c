/* The @NAME=VALUE spec-option parser shared by the gtp: and pipe: backends: values, overrides, and its messages. */
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "backends/specopts.h"

int main(void)
{
    hc_plan(9);
    double t = 60, st = 600;
    int h = 1;
    char *model = NULL;
    const hc_specopt opts[] = {
        {.name = "timeout", .hint = "S", .kind = HC_SPECOPT_POSITIVE, .num = &t},
        {.name = "startup-timeout", .hint = "S", .kind = HC_SPECOPT_POSITIVE, .num = &st},
        {.name = "handicap", .hint = "0|1", .kind = HC_SPECOPT_01, .flag = &h},
        {.name = "model", .hint = "PATH", .kind = HC_SPECOPT_STRING, .str = &model},
    };
    size_t n = sizeof opts / sizeof opts[0];
    hc_err err = {0};

    const char *cmd =
        hc_specopts_parse("x", "  @timeout=2.5 @handicap=0\t@model=a=b @model=/m/n.bin prog -a @b", opts, n, &err);
    hc_check("specopts-1.1", cmd && strcmp(cmd, "prog -a @b") == 0, "command: %s (%s)", cmd ? cmd : "NULL", err.msg);
    hc_check("specopts-1.2", t == 2.5 && st == 600 && h == 0, "timeout %g startup %g handicap %d", t, st, h);
    hc_check("specopts-1.3", model && strcmp(model, "/m/n.bin") == 0, "later @model overrides: %s",
             model ? model : "NULL");
    cmd = hc_specopts_parse("x", NULL, opts, n, &err);
    hc_check("specopts-1.4", cmd && *cmd == '\0', "a NULL spec is an empty command");

    cmd = hc_specopts_parse("gtp", "@bogus=1 x", opts, n, &err);
    hc_check("specopts-2.1",
             !cmd && err.code == HC_ECONFIG &&
                 strstr(err.msg, "gtp: unknown option or bad value @bogus=1 (known: @timeout=S @startup-timeout=S "
                                 "@handicap=0|1 @model=PATH)"),
             "%s", err.msg);
    cmd = hc_specopts_parse("pipe", "@timeout=0 x", opts, n, &err);
    hc_check("specopts-2.2", !cmd && strstr(err.msg, "pipe: unknown option or bad value @timeout=0 "), "%s", err.msg);
    cmd = hc_specopts_parse("gtp", "@handicap=2 x", opts, n, &err);
    hc_check("specopts-2.3", !cmd && strstr(err.msg, "@handicap=2"), "handicap is 0|1: %s", err.msg);
    cmd = hc_specopts_parse("gtp", "@timeout=3s x", opts, n, &err);
    hc_check("specopts-2.4", !cmd && strstr(err.msg, "bad value @timeout=3s"), "trailing junk: %s", err.msg);
    cmd = hc_specopts_parse("gtp", "@timeout x", opts, n, &err);
    hc_check("specopts-2.5",
             !cmd && strstr(err.msg, "gtp: option \"timeout\" should be @NAME=VALUE (known: @timeout=S"), "%s",
             err.msg);
    free(model);
    return hc_test_exit();
}
