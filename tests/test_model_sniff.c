/* hc_model_sniff_*: what the start of a file says about it, as `halfcheck katago --model DIR`
 * sorts a directory such as KataGo's cpp/tests/models. A model's header, gzip'd or plain, in
 * binary or text floats, is one; every prefix of it that stops before its fourth word ends is
 * not; nor are READMEs, -info.txt notes, empty, whitespace-only, random and broken gzip files,
 * an unsupported version or the wrong input channels. Nets made by the model writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_test.h"
#include "harness/model/model.h"
#include "harness/base/stream.h"
#include "harness/model/synth.h"

static char dir[1024];

static const char *at(const char *name)
{
    static char buf[4][1200];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static int write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* Sniffs a file; -2 when the call failed, else is_model. */
static int sniff_file(const char *name, hc_model_sniff *sn)
{
    hc_err err = {0};
    return hc_model_sniff_file(at(name), sn, &err) ? -2 : sn->is_model;
}

static int sniff_text(const char *text, hc_model_sniff *sn)
{
    hc_model_sniff_mem(text, strlen(text), sn);
    return sn->is_model;
}

int main(void)
{
    hc_plan(4 + 2 + 12 + 6);
    const char *t = hc_tmpdir("test_model_sniff");
    snprintf(dir, sizeof dir, "%s", t ? t : "build/tmp/test_model_sniff");

    /* 1. The writer's four encodings of one net. */
    hc_synth_spec spec;
    hc_err err = {0};
    hc_synth_spec_default(&spec);
    int made = hc_synth_preset("v17tf", &spec, &err) == 0 && hc_synth_write(&spec, at("n.bin.gz"), 1, &err) == 0 &&
               hc_synth_write(&spec, at("n.txt.gz"), 0, &err) == 0 && hc_synth_write(&spec, at("n.bin"), 1, &err) == 0 &&
               hc_synth_write(&spec, at("n.txt"), 0, &err) == 0;
    if (!hc_check("sniff-1.0", made, "cannot write the nets: %s", err.msg)) {
        hc_fail_rest("sniff", "not run: no nets");
        return hc_test_exit();
    }
    hc_net *net = hc_net_load(at("n.bin.gz"), &err);
    static const char *const enc[] = {"n.bin.gz", "n.txt.gz", "n.bin"};
    for (int i = 0; i < 3; i++) {
        hc_model_sniff sn;
        int r = sniff_file(enc[i], &sn);
        char name[32];
        snprintf(name, sizeof name, "sniff-1.%d", i + 1);
        hc_check(name, r == 1 && net && sn.version == net->model_version && !strcmp(sn.name, net->name),
                 "%s: sniffed %d, version %d, name %s (the loader: %d %s): %s", enc[i], r, sn.version, sn.name,
                 net ? net->model_version : -1, net ? net->name : "?", sn.why);
    }

    /* 2. Every prefix of the text model's start: a model from the end of the fourth word on. */
    size_t len = 0;
    char *txt = hc_slurp_len(at("n.txt"), &len);
    size_t end4 = 0;
    for (int w = 0; txt && w < 4; w++) {
        while (end4 < len && strchr(" \t\r\n", txt[end4]))
            end4++;
        while (end4 < len && !strchr(" \t\r\n", txt[end4]))
            end4++;
    }
    int wrong = -1;
    for (size_t n = 0; txt && n <= end4 + 8 && n < len && wrong < 0; n++) {
        hc_model_sniff sn;
        hc_model_sniff_mem(txt, n, &sn);
        if (sn.is_model != (n >= end4) || (!sn.is_model && !sn.why[0]))
            wrong = (int)n;
    }
    hc_check("sniff-2.1", txt && end4 > 0 && wrong < 0, "the prefix of %d bytes (the header's fourth word ends at %zu) "
             "sniffs wrong", wrong, end4);
    /* The same cuts, as files: a cut header in a plain file is no model. */
    int fwrong = -1;
    for (size_t n = 0; txt && n < end4 && fwrong < 0; n++) {
        hc_model_sniff sn;
        if (write_bytes(at("cut.txt"), txt, n) || sniff_file("cut.txt", &sn) != 0)
            fwrong = (int)n;
    }
    hc_check("sniff-2.2", txt && fwrong < 0, "a file holding the first %d bytes of a model sniffs as one (or fails)",
             fwrong);
    free(txt);

    /* 3. What is no model, each with its why. */
    hc_model_sniff sn;
    hc_check("sniff-3.1", !sniff_text("These are small and weak neural net models for testing only.\n", &sn) &&
                              strstr(sn.why, "not a model") && strstr(sn.why, "These are"),
             "KataGo's README: %s", sn.why);
    hc_model_sniff s2;
    hc_check("sniff-3.2", !sniff_text("Final 6-block selfplay net from official Jan 2020 run.\n\n{\"version\": 8}\n", &sn) &&
                              strstr(sn.why, "not a model") &&
                              !sniff_text("Strongest 6 block neural net from g103 run for second public release.\n", &s2) &&
                              strstr(s2.why, "\"Strongest 6 block neural\"") && s2.version == 0 && !s2.name[0],
             "-info.txt notes: %s; %s (version %d)", sn.why, s2.why, s2.version);
    hc_check("sniff-3.3", !sniff_text("", &sn) && strstr(sn.why, "empty"), "empty: %s", sn.why);
    hc_check("sniff-3.4", !sniff_text(" \n\t\n", &sn) && strstr(sn.why, "whitespace"), "whitespace: %s", sn.why);
    hc_check("sniff-3.5", !sniff_text("mynet 99 22 19\n", &sn) && sn.version == 99 && strstr(sn.why, "99"),
             "version 99: %d, %s", sn.version, sn.why);
    hc_check("sniff-3.6", !sniff_text("mynet 17 21 19\n", &sn) && strstr(sn.why, "input channels"),
             "17 with 21 spatial channels: %s", sn.why);
    hc_check("sniff-3.7", sniff_text("mynet 8 22 19\n", &sn) && sn.version == 8 && !strcmp(sn.name, "mynet"),
             "a v8 header: %d %s %s", sn.version, sn.name, sn.why);
    hc_check("sniff-3.8", !sniff_text("my.net 8 22 19\n", &sn) && !sniff_text("-- 8x 22 19\n", &sn),
             "a name with '.' or a version with junk is a model: %s", sn.why);
    char longname[200];
    memset(longname, 'a', 97);
    snprintf(longname + 97, sizeof longname - 97, " 8 22 19\n");
    int l97 = sniff_text(longname, &sn);
    memmove(longname, longname + 1, strlen(longname));
    hc_check("sniff-3.9", !l97 && sniff_text(longname, &sn), "a 97-character name sniffs %d, 96 %d (KataGo: at most 96)",
             l97, sn.is_model);
    /* Random bytes, plain and gzip'd; an empty .bin.gz (findLatestModelTest2/abc.bin.gz); a
     * gzip header over garbage; a missing file. */
    unsigned char rnd[5000];
    unsigned s = 12345;
    for (size_t i = 0; i < sizeof rnd; i++)
        rnd[i] = (unsigned char)((s = s * 1103515245u + 12345u) >> 16);
    static const unsigned char badgz[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xfe, 0xfd, 0x01, 0x02};
    int ok = write_bytes(at("rnd.bin"), rnd, sizeof rnd) == 0 && write_bytes(at("empty.bin.gz"), "", 0) == 0 &&
             write_bytes(at("bad.bin.gz"), badgz, sizeof badgz) == 0;
    hc_model_sniff a, b, c;
    hc_check("sniff-3.10", ok && sniff_file("rnd.bin", &a) == 0 && sniff_file("empty.bin.gz", &b) == 0 &&
                               strstr(b.why, "empty") && sniff_file("bad.bin.gz", &c) == 0 && c.why[0],
             "random: %s; empty: %s; broken gzip: %s", a.why, b.why, c.why);
    hc_err e2 = {0};
    hc_check("sniff-3.11", hc_model_sniff_file(at("nope.bin.gz"), &a, &e2) == -1 && strstr(e2.msg, "nope.bin.gz"),
             "a missing file: %s", e2.msg);
    /* A gzip'd model cut after its header: still a model (hc_net_load then says where it ends);
     * cut inside the gzip header: not one. */
    size_t zl = 0;
    char *z = hc_slurp_len(at("n.txt.gz"), &zl);
    hc_model_sniff m1, m2;
    ok = z && zl > 400 && write_bytes(at("cut1.txt.gz"), z, 400) == 0 && write_bytes(at("cut2.txt.gz"), z, 6) == 0;
    hc_err e3 = {0};
    hc_net *cut = ok ? hc_net_load(at("cut1.txt.gz"), &e3) : NULL;
    hc_check("sniff-3.12", ok && sniff_file("cut1.txt.gz", &m1) == 1 && sniff_file("cut2.txt.gz", &m2) == 0 && !cut &&
                               e3.msg[0],
             "a model cut after 400 gzip'd bytes: %s (load: %s); after 6: %s", m1.why, e3.msg, m2.why);
    hc_net_free(cut);
    free(z);

    /* 4. A file longer than the sniff whose first word never ends (no model name), and a model
     * header after much whitespace within the sniff. */
    char *big = malloc(HC_MODEL_SNIFF_BYTES * 2);
    memset(big, 'x', HC_MODEL_SNIFF_BYTES * 2);
    hc_model_sniff_mem(big, HC_MODEL_SNIFF_BYTES, &a);
    hc_check("sniff-4.1", !a.is_model && strstr(a.why, "not a model name"), "a 4096-byte word: %s", a.why);
    memset(big, ' ', HC_MODEL_SNIFF_BYTES * 2);
    memcpy(big + 100, "net 8 22 19\n", 12);
    hc_model_sniff_mem(big, HC_MODEL_SNIFF_BYTES, &a);
    hc_check("sniff-4.2", a.is_model && a.version == 8, "a header after 100 spaces: %s", a.why);
    /* The sniff reads no further than its window: a header beyond it is not seen. */
    memset(big, ' ', HC_MODEL_SNIFF_BYTES * 2);
    memcpy(big + HC_MODEL_SNIFF_BYTES + 10, "net 8 22 19\n", 12);
    ok = write_bytes(at("spaces.txt"), big, HC_MODEL_SNIFF_BYTES * 2) == 0;
    hc_check("sniff-4.3", ok && sniff_file("spaces.txt", &a) == 0 && strstr(a.why, "whitespace"),
             "a header after 4106 spaces: %d %s", a.is_model, a.why);
    free(big);
    /* hc_net_load and the sniff agree on the writer's nets in every encoding (1.x) and on the
     * text cut below: the loader refuses each cut file the sniff refuses. */
    int disagree = 0;
    char *tt = hc_slurp_len(at("n.txt"), &len);
    for (size_t n = 0; tt && n < end4; n += 3) {
        hc_err le = {0};
        hc_net *ln = write_bytes(at("cut.txt"), tt, n) == 0 ? hc_net_load(at("cut.txt"), &le) : NULL;
        disagree += ln != NULL;
        hc_net_free(ln);
    }
    free(tt);
    hc_check("sniff-4.4", disagree == 0, "%d cut headers load", disagree);
    hc_model_sniff t4;
    hc_check("sniff-4.5", sniff_file("n.txt", &t4) == 1 && sniff_file("n.bin", &t4) == 1,
             "the plain encodings: %s", t4.why);
    hc_check("sniff-4.6", net != NULL, "the loader refuses the writer's net: %s", err.msg);
    hc_net_free(net);
    return hc_test_exit();
}
