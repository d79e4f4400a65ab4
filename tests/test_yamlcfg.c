/* The shared YAML helper layer (harness/base/yamlcfg): located errors, key checks, typed scalars. */
#include <string.h>

#include "hc_test.h"
#include "harness/base/yamlcfg.h"

static int load(hc_ydoc *d, const char *text, hc_err *err)
{
    return hc_ydoc_load_mem(d, text, strlen(text), "dir/x.yaml", "document", err);
}

int main(void)
{
    hc_plan(8);
    hc_err err = {0};
    hc_ydoc d;
    static const char *const keys[] = {"a", "b", NULL};

    int rc = load(&d, "a: 1\nb: [2, 3]\n", &err);
    hc_check("yamlcfg-1.1", rc == 0 && strcmp(d.dir, "dir/") == 0, "load: %s, dir \"%s\"", err.msg, rc ? "" : d.dir);
    if (rc == 0) {
        yaml_node_t *r = hc_ydoc_root(&d), *b = hc_ydoc_get(&d, r, "b");
        int x = 0;
        hc_check("yamlcfg-1.2",
                 hc_ydoc_check_keys(&d, r, "top", "", keys, &err) == 0 && b && hc_ynode_seq_len(b) == 2 &&
                     hc_ydoc_int(&d, hc_ydoc_seq_at(&d, b, 1), "b[1]", "", 0, 9, &x, &err) == 0 && x == 3,
                 "walk: %s", err.msg);
        rc = hc_ydoc_int(&d, hc_ydoc_seq_at(&d, b, 1), "b[1]", "top", 0, 2, &x, &err);
        hc_check("yamlcfg-1.3",
                 rc == -1 && strcmp(err.msg, "dir/x.yaml:2:8: b[1]: 3 is out of range [0, 2] (in top)") == 0, "%s",
                 err.msg);
        rc = hc_ydoc_expect(&d, b, YAML_MAPPING_NODE, "b", "", &err);
        hc_check("yamlcfg-1.4",
                 rc == -1 && strcmp(err.msg, "dir/x.yaml:2:4: b: expected a mapping, got a sequence") == 0, "%s",
                 err.msg);
        static const char *const only_a[] = {"a", NULL};
        rc = hc_ydoc_check_keys(&d, r, "top", NULL, only_a, &err);
        hc_check("yamlcfg-1.5", rc == -1 && strcmp(err.msg, "dir/x.yaml:2:1: unknown key \"b\" (in top)") == 0,
                 "a NULL context names the mapping: %s", err.msg);
        rc = hc_ydoc_check_keys(&d, r, "top", "", only_a, &err);
        hc_check("yamlcfg-1.6", rc == -1 && strcmp(err.msg, "dir/x.yaml:2:1: unknown key \"b\"") == 0,
                 "an empty context names nothing: %s", err.msg);
        hc_ydoc_free(&d);
    } else {
        hc_fail_n("yamlcfg-1.2", 5, "the document did not load");
    }
    rc = load(&d, "", &err);
    hc_check("yamlcfg-2.1", rc == -1 && strcmp(err.msg, "dir/x.yaml:1:1: empty document") == 0, "%s", err.msg);
    rc = load(&d, "a: [1, 2\n", &err);
    hc_check("yamlcfg-2.2", rc == -1 && strncmp(err.msg, "dir/x.yaml:", 11) == 0 && strstr(err.msg, " at line 1)"),
             "a syntax error carries its place and context: %s", err.msg);
    hc_ydoc_free(&d);
    return hc_test_exit();
}
