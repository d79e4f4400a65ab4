/* The name map's index arithmetic (backends/tapnames.h, docs/TAPS.md "Taps from a KataGo build"): patterns
 * with {i} captures give tap names with {i+1}, {2*j+1}...; malformed patterns are refused with what is
 * wrong, an index below 0 is an error naming the entry. Through the tensors: backend: `taps --save`
 * written again under a tool's own 0-based names (interleaved attention/FFN layers on a synthetic
 * transformer; blocks.{i} for g170's rconv{i+1}) and read through a map of index patterns compares
 * with ref32 at every layer with error 0 (nothing absent, no stray name), and without the map it does
 * not; a map giving a negative index, or malformed, is refused naming the map file and the key. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "backends/tapnames.h"

static const char *dir;

/* The tap name pattern (tool, tap) gives for name, or "(no match)" / "(error: MSG)". */
static const char *apply(const char *tool, const char *tap, const char *name)
{
    static char buf[600];
    char why[400];
    if (hc_tapname_check(tool, tap, why, sizeof why)) {
        snprintf(buf, sizeof buf, "(refused: %s)", why);
        return buf;
    }
    hc_err err = {0};
    char *out = NULL;
    int rc = hc_tapname_apply(tool, tap, name, &out, &err);
    snprintf(buf, sizeof buf, "%s", rc > 0 ? out : rc == 0 ? "(no match)" : err.msg);
    free(out);
    return buf;
}

static int refused(const char *tool, const char *tap, const char *want)
{
    char why[400] = "";
    return hc_tapname_check(tool, tap, why, sizeof why) == -1 && strstr(why, want) != NULL;
}

static void unit(void)
{
    const char *r = apply("blocks.{i}.conv1", "rconv{i+1}/w1", "blocks.0.conv1");
    hc_check("tn-1.1", !strcmp(r, "rconv1/w1"), "%s", r);
    r = apply("blocks.{i}.conv1", "rconv{i+1}/w1", "blocks.12.conv1");
    hc_check("tn-1.2", !strcmp(r, "rconv13/w1"), "%s", r);
    r = apply("layers.{j}.mlp.*", "model.blocks.{2*j+1}.*", "layers.3.mlp.ffn_linear2");
    hc_check("tn-1.3", !strcmp(r, "model.blocks.7.ffn_linear2"), "%s", r);
    r = apply("l{a}_{b}.*", "x{b}.{3*a-2}.*", "l4_10.w");
    hc_check("tn-1.4", !strcmp(r, "x10.10.w"), "%s", r);
    r = apply("blocks.{i}.conv1", "rconv{i+1}/w1", "blocks.x.conv1");
    hc_check("tn-1.5", !strcmp(r, "(no match)"), "%s", r);
    r = apply("blocks.{i}", "rconv{i-1}", "blocks.0");
    hc_check("tn-1.6", strstr(r, "{i-1} is -1 for i = 0") != NULL, "%s", r);
    hc_check("tn-1.7", refused("blocks.{i.conv1", "rconv{i+1}", "'{' without '}' in the pattern"), "unclosed");
    hc_check("tn-1.8", refused("blocks.{}.conv1", "rconv1", "{} in the pattern: an index name"), "empty name");
    hc_check("tn-1.9", refused("blocks.{i}.conv1", "rconv{j+1}/w1", "{j+1} in the tap name: the pattern captures no {j}"),
             "unknown name");
    hc_check("tn-1.10", refused("blocks.{i}.conv1", "rconv{i+}/w1", "{i+} in the tap name: an index expression"),
             "bad expression");
    hc_check("tn-1.11", refused("blocks.{i}.{i}", "rconv{i}", "{i} appears twice in the pattern"), "twice");
    hc_check("tn-1.12", refused("blocks.i}", "rconv", "'}' without '{' in the pattern") &&
                            refused("b.*", "x.**", "more '*' than the pattern") &&
                            refused("blocks.{i}", "rconv{i*2}", "an index expression"),
             "stray brace, extra star, NAME*K");
    hc_check("tn-1.13", hc_tapname_is_pattern("a.{i}") && hc_tapname_is_pattern("a.*") && !hc_tapname_is_pattern("a.b"),
             "is_pattern");
}

/* Copies DIR/npy's files into out, each name (without .npy, %2F for '/') renamed by fn. */
typedef void (*rename_fn)(const char *name, char *out, size_t len);

static int rewrite(const char *from, const char *to, rename_fn fn)
{
    if (hc_shf("rm -rf %s && mkdir -p %s", to, to))
        return -1;
    char src[600];
    snprintf(src, sizeof src, "%s/npy", from);
    DIR *d = opendir(src);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".npy"))
            continue;
        char name[300], to_name[300];
        snprintf(name, sizeof name, "%.*s", (int)(l - 4), e->d_name);
        fn(name, to_name, sizeof to_name);
        if (hc_shf("cp '%s/%s' '%s/%s.npy'", src, e->d_name, to, to_name)) {
            closedir(d);
            return -1;
        }
        n++;
    }
    closedir(d);
    return n;
}

/* model.blocks.B[.REST] -> layers.J.attn[.REST] (B = 2J) or layers.J.mlp[.REST] (B = 2J+1). */
static void interleaved(const char *name, char *out, size_t len)
{
    int b, k = 0;
    if (sscanf(name, "model.blocks.%d%n", &b, &k) == 1 && (name[k] == '.' || !name[k]))
        snprintf(out, len, "layers.%d.%s%s", b / 2, b % 2 ? "mlp" : "attn", name + k);
    else
        snprintf(out, len, "%s", name);
}

/* rconvN[%2FREST] -> blocks.(N-1)[.REST] */
static void zero_based(const char *name, char *out, size_t len)
{
    int n, k = 0;
    if (sscanf(name, "rconv%d%n", &n, &k) == 1 && (!name[k] || !strncmp(name + k, "%2F", 3)))
        snprintf(out, len, "blocks.%d%s%s", n - 1, name[k] ? "." : "", name[k] ? name + k + 3 : "");
    else
        snprintf(out, len, "%s", name);
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* taps of ref32 against tensors:[@map=MAP ]DIR; exit status, output in dir/OUT. */
static int taps(const char *net, const char *pos, const char *map, const char *tdir, const char *out)
{
    char spec[1300];
    if (map)
        snprintf(spec, sizeof spec, "tensors:@map=%s %s", map, tdir);
    else
        snprintf(spec, sizeof spec, "tensors:%s", tdir);
    return hc_shf("%s taps --net %s --positions %s --nn 9x9 --limit 4 --batch 2 --backend \"%s\" > %s/%s 2>&1",
                  hc_halfcheck_bin(), net, pos, spec, dir, out);
}

static int clean_compare(const char *out)
{
    const char *t = hc_text(hc_path(dir, out));
    return strstr(t, "no divergent layer") && !strstr(t, "absent in B") && !strstr(t, "names A has no tap of") &&
           !strstr(t, "NONFINITE");
}

static void synthetic(void)
{
    char net[600], pos[600], save[600], tool[600], map[600];
    snprintf(net, sizeof net, "%s/tf.bin.gz", dir);
    snprintf(pos, sizeof pos, "%s/pos9.jsonl.gz", dir);
    snprintf(save, sizeof save, "%s/save-tf", dir);
    snprintf(tool, sizeof tool, "%s/tool-tf", dir);
    snprintf(map, sizeof map, "%s/names-tf.yaml", dir);
    int ok = hc_shf("%s synth-net --arch '(attn,ffn)*2' --channels 16 --out %s > /dev/null 2>&1 && "
                    "%s selfplay --size 9 --games 1 --moves 40 --stride 10 --out %s > /dev/null 2>&1 && rm -rf %s && "
                    "%s taps --net %s --positions %s --nn 9x9 --limit 4 --batch 2 --save %s --save-format npy "
                    "> /dev/null 2>&1",
                    hc_halfcheck_bin(), net, hc_halfcheck_bin(), pos, save, hc_halfcheck_bin(), net, pos, save) == 0;
    int n = ok ? rewrite(save, tool, interleaved) : -1;
    ok = n > 20 && hc_file_exists(hc_path(tool, "layers.1.mlp.ffn_linear2.npy")) &&
         hc_file_exists(hc_path(tool, "layers.0.attn.npy")) &&
         write_text(map, "map:\n"
                         "  \"layers.{j}.attn\": \"model.blocks.{2*j}\"\n"
                         "  \"layers.{j}.attn.*\": \"model.blocks.{2*j}.*\"\n"
                         "  \"layers.{j}.mlp\": \"model.blocks.{2*j+1}\"\n"
                         "  \"layers.{j}.mlp.*\": \"model.blocks.{2*j+1}.*\"\n") == 0;
    if (!ok) {
        hc_fail_n("tn-2", 5, "could not write the synthetic dump (%d files)", n);
        return;
    }
    int rc = taps(net, pos, map, tool, "tf-map.txt");
    hc_check("tn-2.1", rc == 0 && clean_compare("tf-map.txt"),
             "0-based interleaved names through the map: exit %d: %s", rc, hc_text(hc_path(dir, "tf-map.txt")));
    rc = taps(net, pos, NULL, tool, "tf-nomap.txt");
    const char *t = hc_text(hc_path(dir, "tf-nomap.txt"));
    hc_check("tn-2.2", strstr(t, "absent in B") && strstr(t, "layers.0.attn.q_proj"),
             "without the map the tool's names are not the reference's: exit %d: %s", rc, t);
    /* an index below 0: the tensor, the map file and the entry named */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/names-neg.yaml", dir);
    write_text(bad, "map:\n  \"layers.{j}.attn\": \"model.blocks.{j-1}\"\n");
    rc = taps(net, pos, bad, tool, "tf-neg.txt");
    t = hc_text(hc_path(dir, "tf-neg.txt"));
    hc_check("tn-2.3", rc == 2 && strstr(t, "tensor layers.0.attn") && strstr(t, "names-neg.yaml") &&
                           strstr(t, "map entry \"layers.{j}.attn\" (line 2)") && strstr(t, "{j-1} is -1 for j = 0"),
             "exit %d: %s", rc, t);
    /* malformed maps: refused before anything runs, file, line and key named */
    snprintf(bad, sizeof bad, "%s/names-bad1.yaml", dir);
    write_text(bad, "map:\n  stem: model.conv_spatial\n  \"layers.{j.attn\": \"model.blocks.{2*j}\"\n");
    rc = taps(net, pos, bad, tool, "tf-bad1.txt");
    t = hc_text(hc_path(dir, "tf-bad1.txt"));
    hc_check("tn-2.4", rc == 2 && strstr(t, "names-bad1.yaml:3:") && strstr(t, "layers.{j.attn: '{' without '}'"),
             "exit %d: %s", rc, t);
    snprintf(bad, sizeof bad, "%s/names-bad2.yaml", dir);
    write_text(bad, "map:\n  \"layers.{j}.attn.*\": \"model.blocks.{2*k}.*\"\n");
    rc = taps(net, pos, bad, tool, "tf-bad2.txt");
    t = hc_text(hc_path(dir, "tf-bad2.txt"));
    hc_check("tn-2.5", rc == 2 && strstr(t, "names-bad2.yaml:2:") &&
                           strstr(t, "layers.{j}.attn.*: {2*k} in the tap name: the pattern captures no {k}"),
             "exit %d: %s", rc, t);
}

/* g170 (1-based rconvN) dumped under 0-based names, read through a two-line map. */
static void g170(void)
{
    char net[600], pos[600], save[600], tool[600], map[600];
    const char *p = hc_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz"); /* a static buffer: copied */
    snprintf(net, sizeof net, "%s", p ? p : "");
    p = hc_shared("positions/size9.jsonl.gz");
    snprintf(pos, sizeof pos, "%s", p ? p : "");
    if (!*net || !*pos) {
        hc_skip_n("tn-3", 2, "../shared nets/g170 or positions/size9 absent");
        return;
    }
    snprintf(save, sizeof save, "%s/save-g170", dir);
    snprintf(tool, sizeof tool, "%s/tool-g170", dir);
    snprintf(map, sizeof map, "%s/names-g170.yaml", dir);
    int ok = hc_shf("rm -rf %s && %s taps --net %s --positions %s --nn 9x9 --limit 4 --batch 2 --save %s "
                    "--save-format npy > /dev/null 2>&1",
                    save, hc_halfcheck_bin(), net, pos, save) == 0;
    int n = ok ? rewrite(save, tool, zero_based) : -1;
    ok = n > 20 && hc_file_exists(hc_path(tool, "blocks.0.w1.npy")) && hc_file_exists(hc_path(tool, "blocks.5.npy")) &&
         !hc_file_exists(hc_path(tool, "rconv1%2Fw1.npy")) &&
         write_text(map, "map:\n  \"blocks.{i}\": \"rconv{i+1}\"\n  \"blocks.{i}.*\": \"rconv{i+1}/*\"\n") == 0;
    if (!ok) {
        hc_fail_n("tn-3", 2, "could not write the g170 dump (%d files)", n);
        return;
    }
    int rc = taps(net, pos, map, tool, "g170-map.txt");
    hc_check("tn-3.1", rc == 0 && clean_compare("g170-map.txt"), "blocks.{i} -> rconv{i+1}: exit %d: %s", rc,
             hc_text(hc_path(dir, "g170-map.txt")));
    rc = taps(net, pos, NULL, tool, "g170-nomap.txt");
    const char *t = hc_text(hc_path(dir, "g170-nomap.txt"));
    hc_check("tn-3.2", strstr(t, "absent in B") && strstr(t, "blocks.0.w1"), "without the map: exit %d: %s", rc, t);
}

int main(void)
{
    hc_plan(13 + 5 + 2);
    dir = hc_tmpdir("test_tapnames");
    unit();
    synthetic();
    g170();
    return hc_test_exit();
}
