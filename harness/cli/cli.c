/* The command line's shared helpers: option parsing, typed option values, option help, the commands' shared prologue
 * and error reporting (cli.h). */
#include "harness/cli/cli.h"
#include "harness/base/suggest.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/sizes.h"
#include "harness/base/stream.h"

static const cli_opt *find_opt(const cli_opt *opts, const char *name, size_t len)
{
    for (const cli_opt *o = opts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

const char *cli_suggest(const char *word, size_t len, const char *const *cands, int n)
{
    return hc_suggest(word, len, cands, n);
}

static int is_help_arg(const char *a)
{
    return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, cli_args *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    out->cmd = cmd;
    if (find_opt(opts, "help", 4))
        for (int i = 1; i < argc; i++)
            if (is_help_arg(argv[i])) {
                out->key[0] = "help";
                out->val[0] = NULL;
                out->n = 1;
                return 0;
            }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (out->n_pos >= CLI_MAX_ARGS)
                return hc_err_set(err, HC_EUSAGE, "too many arguments");
            out->pos[out->n_pos++] = arg;
            continue;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const cli_opt *o = find_opt(opts, name, len);
        if (!o) {
            const char *names[CLI_MAX_ARGS * 2];
            int k = 0;
            for (const cli_opt *q = opts; q && q->name && k < CLI_MAX_ARGS * 2; q++)
                names[k++] = q->name;
            const char *near = cli_suggest(name, len, names, k);
            if (near)
                return hc_err_set(err, HC_EUSAGE, "unknown option --%.*s; did you mean --%s? (see halfcheck %s --help)",
                                  (int)len, name, near, cmd);
            return hc_err_set(err, HC_EUSAGE, "unknown option --%.*s (see halfcheck %s --help)", (int)len, name, cmd);
        }
        const char *val = NULL;
        if (o->takes_value) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return hc_err_set(err, HC_EUSAGE, "option --%s needs a value", o->name);
        } else if (eq) {
            return hc_err_set(err, HC_EUSAGE, "option --%s takes no value", o->name);
        }
        if (!o->repeatable && cli_has(out, o->name))
            return hc_err_set(err, HC_EUSAGE, "option --%s given twice", o->name);
        if (out->n >= CLI_MAX_ARGS)
            return hc_err_set(err, HC_EUSAGE, "too many options");
        out->key[out->n] = o->name;
        out->val[out->n] = val;
        out->n++;
    }
    return 0;
}

const char *cli_get(const cli_args *a, const char *name, const char *def)
{
    const char *v = def;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->key[i], name) == 0)
            v = a->val[i] ? a->val[i] : "";
    return v;
}

int cli_has(const cli_args *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->key[i], name) == 0)
            return 1;
    return 0;
}

int cli_get_all(const cli_args *a, const char *name, const char **vals, int max)
{
    int k = 0;
    for (int i = 0; i < a->n && k < max; i++)
        if (strcmp(a->key[i], name) == 0)
            vals[k++] = a->val[i];
    return k;
}

int cli_get_only(const cli_args *a, const char **vals, hc_err *err)
{
    int n = 0;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->key[i], "only") == 0) {
            if (n == CLI_MAX_ONLY)
                return hc_err_set(err, HC_EUSAGE, "at most %d --only options", CLI_MAX_ONLY);
            vals[n++] = a->val[i];
        }
    return n;
}

int cli_get_int(const cli_args *a, const char *name, int def, int *out, hc_err *err)
{
    const char *v = cli_get(a, name, NULL);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < -2147483647L || x > 2147483647L)
        return hc_err_set(err, HC_EUSAGE, "--%s: not an integer: \"%s\"", name, v);
    *out = (int)x;
    return 0;
}

int cli_get_double(const cli_args *a, const char *name, double def, double *out, hc_err *err)
{
    const char *v = cli_get(a, name, NULL);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x))
        return hc_err_set(err, HC_EUSAGE, "--%s: not a finite number: \"%s\"", name, v);
    *out = x;
    return 0;
}

int cli_parse_size(const char *s, int *w, int *h, hc_err *err)
{
    char *end;
    long a = strtol(s, &end, 10);
    long b = a;
    int ok = end != s;
    if (ok && (*end == 'x' || *end == 'X' || *end == ':')) {
        const char *t = end + 1;
        b = strtol(t, &end, 10);
        ok = end != t;
    }
    if (!ok || *end)
        return hc_err_set(err, HC_EUSAGE, "bad size \"%s\" (want WxH or N)", s);
    /* clamped so that the range check sees an out-of-range long as out of range */
    int x = a < INT_MIN ? INT_MIN : a > INT_MAX ? INT_MAX : (int)a;
    int y = b < INT_MIN ? INT_MIN : b > INT_MAX ? INT_MAX : (int)b;
    if (hc_check_board_size(x, y, "size", err))
        return -1;
    *w = x;
    *h = y;
    return 0;
}

const char *cli_require(const cli_args *a, const char *name, hc_err *err)
{
    const char *v = cli_get(a, name, NULL);
    if (!v)
        hc_err_set(err, HC_EUSAGE, "missing required option --%s", name);
    return v;
}

void cli_print_options(FILE *f, const cli_opt *opts)
{
    for (const cli_opt *o = opts; o && o->name; o++) {
        fprintf(f, "  --%s", o->name);
        if (o->takes_value && o->meta)
            fprintf(f, " %s", o->meta);
        else if (o->takes_value && fputc(' ', f) != EOF)
            for (const char *c = o->name; *c; c++)
                fputc(*c == '-' ? '_' : toupper((unsigned char)*c), f);
        fprintf(f, "%s\n      %s\n", o->repeatable ? " (repeatable)" : "", o->help);
    }
}

int cli_fail(const char *cmd, const hc_err *err)
{
    fprintf(stderr, "halfcheck %s: %s\n", cmd, err->msg[0] ? err->msg : hc_code_str(err->code));
    switch (err->code) {
    case HC_EBACKEND:
        return HC_EXIT_BACKEND;
    case HC_EINTERRUPTED: /* stopped, not misused */
        return HC_EXIT_INTERRUPTED;
    default:
        return HC_EXIT_USAGE;
    }
}

int cli_start(const cli_cmd *c, int argc, char **argv, cli_args *a)
{
    hc_err err = {0};
    if (cli_parse(c->name, argc, argv, c->opts, a, &err))
        return cli_fail(c->name, &err);
    int help = cli_has(a, "help");
    if (!help && a->n_pos >= c->min_pos && (c->max_pos < 0 || a->n_pos <= c->max_pos))
        return -1;
    FILE *f = help ? stdout : stderr;
    fputs(c->usage, f);
    cli_print_options(f, c->opts);
    return help ? HC_EXIT_OK : HC_EXIT_USAGE;
}

void cli_show_report(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/report.md", dir);
    hc_err err = {0};
    char *md = hc_read_file(path, 64u << 20, NULL, &err);
    if (md) {
        fputs(md, stdout);
        free(md);
    }
    /* Then the per-net table a backend pull request pastes (summary.md). */
    snprintf(path, sizeof path, "%s/summary.md", dir);
    char *sum = hc_read_file(path, 16u << 20, NULL, &err);
    if (sum) {
        fputs("\n", stdout);
        fputs(sum, stdout);
        free(sum);
    }
    /* The table goes out now: stdout and stderr in one pipe (a CI log, 2>&1 | cat) must show the
     * final line, on stderr, after it and not inside it. */
    fflush(stdout);
}
