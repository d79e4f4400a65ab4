/* Sniffing a file's start for a KataGo model header (hc_model_sniff_*), so that a directory
 * holding nets beside notes, logs and READMEs can be sorted without loading any weights. */
#include "harness/model/model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next whitespace-separated token of [*p, end) into tok (cut to len - 1); 0 when the
 * data ends before one starts, -1 when it ends inside one that may go on (a cut header). */
static int next_token(const unsigned char **p, const unsigned char *end, char *tok, size_t len, int whole)
{
    const unsigned char *q = *p;
    while (q < end && isspace(*q))
        q++;
    if (q == end)
        return 0;
    size_t n = 0;
    while (q < end && !isspace(*q)) {
        if (n + 1 < len)
            tok[n++] = (char)*q;
        q++;
    }
    tok[n] = '\0';
    *p = q;
    return q == end && !whole ? -1 : 1;
}

/* tok as a printable quote for messages: control bytes and bytes above 0x7e as '?'. */
static void printable(char *dst, size_t len, const char *src)
{
    size_t n = 0;
    for (; *src && n + 1 < len; src++)
        dst[n++] = (*src >= 0x20 && *src < 0x7f) ? *src : '?';
    dst[n] = '\0';
}

static int is_int(const char *s, long *v)
{
    if (!*s)
        return 0;
    for (const char *q = s; *q; q++)
        if (!isdigit((unsigned char)*q))
            return 0;
    if (strlen(s) > 9)
        return 0;
    *v = strtol(s, NULL, 10);
    return 1;
}

/* whole: data is the whole file, so a word at its end is complete. */
static void sniff(const void *data, size_t len, int whole, hc_model_sniff *out)
{
    memset(out, 0, sizeof *out);
    const unsigned char *p = data, *end = p + len;
    char tok[4][128], q[2][40];
    int got = 0;
    while (got < 4) {
        int r = next_token(&p, end, tok[got], sizeof tok[got], whole);
        if (r == 0)
            break;
        got++;
        if (r < 0) /* a word the sniff cut: taken as it is (a header's words are far shorter) */
            break;
    }
    if (got == 0) {
        snprintf(out->why, sizeof out->why, "not a model: %s", len ? "only whitespace" : "an empty file");
        return;
    }
    printable(q[0], sizeof q[0], tok[0]);
    size_t nl = strlen(tok[0]);
    int name_ok = nl >= 1 && nl <= 96;
    for (size_t i = 0; i < nl && name_ok; i++)
        name_ok = isalnum((unsigned char)tok[0][i]) || tok[0][i] == '_' || tok[0][i] == '-';
    if (!name_ok) {
        snprintf(out->why, sizeof out->why, "not a model: it starts with \"%.32s\", not a model name", q[0]);
        return;
    }
    long v = 0;
    if (got < 2 || !is_int(tok[1], &v)) {
        if (got < 2)
            snprintf(out->why, sizeof out->why, "not a model: it ends after \"%.32s\"", q[0]);
        else {
            printable(q[1], sizeof q[1], tok[1]);
            snprintf(out->why, sizeof out->why, "not a model: it starts with \"%.32s %.32s\", not a model name and version",
                     q[0], q[1]);
        }
        return;
    }
    snprintf(out->name, sizeof out->name, "%s", tok[0]);
    out->version = (int)v;
    if (v < HC_MODEL_VERSION_MIN || v > HC_MODEL_VERSION_MAX) {
        snprintf(out->why, sizeof out->why, "model version %ld, which neither halfcheck nor KataGo v1.17.2 reads "
                 "(versions %d to %d)", v, HC_MODEL_VERSION_MIN, HC_MODEL_VERSION_MAX);
        return;
    }
    long s = -1, g = -1;
    if (got < 4) {
        snprintf(out->why, sizeof out->why, "not a model: it ends inside the model header (after %d words)", got);
        return;
    }
    printable(q[0], sizeof q[0], tok[2]);
    printable(q[1], sizeof q[1], tok[3]);
    if (!is_int(tok[2], &s) || !is_int(tok[3], &g)) {
        char q0[40];
        printable(q0, sizeof q0, tok[0]);
        snprintf(out->why, sizeof out->why, "not a model: it starts with \"%.32s %ld %.16s %.16s\", not a model name, "
                 "version and input channels", q0, v, q[0], q[1]);
        out->version = 0, out->name[0] = '\0'; /* words, not a header */
        return;
    }
    if (s != hc_model_num_spatial_features((int)v) || g != hc_model_num_global_features((int)v)) {
        snprintf(out->why, sizeof out->why, "not a model: input channels \"%.16s %.16s\" after version %ld, which has "
                 "%d and %d", q[0], q[1], v, hc_model_num_spatial_features((int)v), hc_model_num_global_features((int)v));
        out->version = 0, out->name[0] = '\0';
        return;
    }
    out->is_model = 1;
}

void hc_model_sniff_mem(const void *data, size_t len, hc_model_sniff *out)
{
    sniff(data, len, len < HC_MODEL_SNIFF_BYTES, out);
}

int hc_model_sniff_file(const char *path, hc_model_sniff *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    hc_istream *in = hc_istream_open(path, err);
    if (!in)
        return -1;
    unsigned char *buf = malloc(HC_MODEL_SNIFF_BYTES);
    if (!buf) {
        hc_istream_close(in);
        return hc_err_set(err, HC_ENOMEM, "%s: out of memory", path);
    }
    size_t n = 0;
    hc_err rerr = {0};
    while (n < HC_MODEL_SNIFF_BYTES) {
        /* Small reads: a stream that breaks off loses at most the read that met the break. */
        size_t want = HC_MODEL_SNIFF_BYTES - n < 256 ? HC_MODEL_SNIFF_BYTES - n : 256;
        long k = hc_istream_read_some(in, buf + n, want, &rerr);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    hc_istream_close(in);
    /* A stream that breaks off (a cut download) after a model's header is a model that will
     * not load, which hc_net_load then says where; before it, not a model, for that reason. */
    sniff(buf, n, rerr.code == HC_OK && n < HC_MODEL_SNIFF_BYTES, out);
    if (rerr.code != HC_OK && !out->is_model)
        snprintf(out->why, sizeof out->why, "not a model: %s", rerr.msg);
    free(buf);
    return 0;
}
