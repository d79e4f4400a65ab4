/* {NAME} placeholders in command templates, expanded in one place (template.h). */
#include "harness/base/template.h"

#include <stdlib.h>
#include <string.h>

#include "harness/base/strbuf.h"

char *hc_template_expand(const char *tmpl, const hc_template_var *vars, size_t n_vars, hc_err *err)
{
    hc_strbuf b = HC_STRBUF_INIT;
    const char *p = tmpl, *copied = tmpl;
    while ((p = strchr(p, '{')) != NULL) {
        size_t k = 0;
        for (; k < n_vars; k++) {
            size_t kl = strlen(vars[k].key);
            if (strncmp(p + 1, vars[k].key, kl) == 0 && p[1 + kl] == '}')
                break;
        }
        if (k == n_vars) {
            p++;
            continue;
        }
        hc_strbuf_printf(&b, "%.*s%s", (int)(p - copied), copied, vars[k].value);
        p += strlen(vars[k].key) + 2;
        copied = p;
    }
    hc_strbuf_printf(&b, "%s", copied);
    size_t len;
    char *out = hc_strbuf_take(&b, &len);
    if (!out)
        hc_err_set(err, HC_ENOMEM, "out of memory expanding a command template");
    return out;
}
