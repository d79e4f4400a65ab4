/* Post-processed network outputs as KataGo's NNOutput holds them, and their file forms (nnoutput.h). */
#include "harness/data/nnoutput.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/jsonnum.h"
#include "harness/base/stream.h"

/* KataGo pads policyProbs to its compiled maximum board area + 1 (19x19 + pass by default).
 * Outputs files come from other programs (KataGo builds with a larger MAX_BOARD_LEN too), so
 * their buffers are read up to HC_NNOUT_MAX_LEN rather than sizes.h's range. */
enum { HC_KATAGO_POLICY_SIZE = 19 * 19 + 1, HC_NNOUT_LINE_MAX = 64 << 20, HC_NNOUT_MAX_LEN = 64 };

int hc_nnoutput_init(hc_nnoutput *o, int nn_x_len, int nn_y_len, int with_ownership, hc_err *err)
{
    memset(o, 0, sizeof *o);
    o->nn_x_len = nn_x_len;
    o->nn_y_len = nn_y_len;
    size_t area = (size_t)nn_x_len * (size_t)nn_y_len;
    /* zeroed: an output read before it is filled (a test's, a refused position's) is zeros,
     * never whatever the heap held (which formatted as NaN now and then) */
    o->policy_probs = hc_calloc(area + 1, sizeof(float), err, "policy");
    if (!o->policy_probs)
        return -1;
    if (with_ownership) {
        o->white_owner_map = hc_calloc(area ? area : 1, sizeof(float), err, "ownership");
        if (!o->white_owner_map) {
            hc_nnoutput_free(o);
            return -1;
        }
    }
    return 0;
}

void hc_nnoutput_free(hc_nnoutput *o)
{
    if (!o)
        return;
    free(o->policy_probs);
    free(o->white_owner_map);
    memset(o, 0, sizeof *o);
}

/* Appends "key":number. */
static char *put_real(char *o, const char *key, float v)
{
    size_t kl = strlen(key);
    *o++ = '"';
    memcpy(o, key, kl);
    o += kl;
    *o++ = '"';
    *o++ = ':';
    return o + hc_json_real(o, (double)v);
}

static char *put_array(char *o, const char *key, const float *v, size_t n, size_t pad_to)
{
    o += sprintf(o, "\"%s\":[", key);
    for (size_t i = 0; i < n || i < pad_to; i++) {
        if (i > 0)
            *o++ = ',';
        o += hc_json_real(o, i < n ? (double)v[i] : -1.0);
    }
    *o++ = ']';
    return o;
}

char *hc_nnoutput_format(const hc_nnoutput *o, int format, const char *nn_hash, hc_err *err)
{
    size_t area = (size_t)o->nn_x_len * (size_t)o->nn_y_len;
    if (format == HC_NNOUT_KATAGO && area + 1 > HC_KATAGO_POLICY_SIZE)
        return hc_err_set(err, HC_EUSAGE, "a %dx%d buffer does not fit KataGo's reference-file policy of %d entries",
                          o->nn_x_len, o->nn_y_len, HC_KATAGO_POLICY_SIZE),
               NULL;
    /* JSON has no NaN or inf: refuse them with the field rather than write invalid JSON. */
    const float sc[] = {o->white_win_prob, o->white_loss_prob, o->white_no_result_prob, o->white_score_mean,
                        o->white_score_mean_sq, o->white_lead, o->var_time_left, o->shortterm_winloss_error,
                        o->shortterm_score_error, o->policy_optimism_used};
    static const char *const sc_names[] = {"whiteWinProb", "whiteLossProb", "whiteNoResultProb", "whiteScoreMean",
                                           "whiteScoreMeanSq", "whiteLead", "varTimeLeft", "shorttermWinlossError",
                                           "shorttermScoreError", "policyOptimismUsed"};
    for (int i = 0; i < 10; i++)
        if (!isfinite(sc[i]))
            return hc_err_set(err, HC_EBACKEND, "non-finite %s (%g) cannot be written as JSON", sc_names[i], sc[i]),
                   NULL;
    for (size_t i = 0; i <= area; i++)
        if (!isfinite(o->policy_probs[i]))
            return hc_err_set(err, HC_EBACKEND, "non-finite policyProbs[%zu] cannot be written as JSON", i), NULL;
    for (size_t i = 0; o->white_owner_map && i < area; i++)
        if (!isfinite(o->white_owner_map[i]))
            return hc_err_set(err, HC_EBACKEND, "non-finite whiteOwnerMap[%zu] cannot be written as JSON", i), NULL;
    char *hash = NULL;
    if (format == HC_NNOUT_KATAGO) {
        /* jansson escapes the one string, whatever the caller passed */
        json_t *js = json_string(nn_hash ? nn_hash : "00000000000000000000000000000000");
        hash = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
        json_decref(js);
        if (!hash)
            return hc_err_set(err, HC_EUSAGE, "nnHash is not valid UTF-8"), NULL;
    }
    size_t n_pol = format == HC_NNOUT_KATAGO ? HC_KATAGO_POLICY_SIZE : area + 1;
    size_t cap = (10 + n_pol + area) * (HC_JSON_REAL_MAX + 1) + 512 + (hash ? strlen(hash) : 0);
    char *s = hc_malloc(cap, err, "formatted outputs");
    if (!s) {
        free(hash);
        return NULL;
    }
    /* The keys in sorted order, as jansson's JSON_SORT_KEYS (and KataGo's JSON library) write
     * them, so that the bytes do not depend on which writer made the file. */
    char *w = s;
    *w++ = '{';
    if (hash)
        w += sprintf(w, "\"nnHash\":%s,", hash);
    free(hash);
    w += sprintf(w, "\"nnXLen\":%d,\"nnYLen\":%d,", o->nn_x_len, o->nn_y_len);
    w = put_real(w, "policyOptimismUsed", o->policy_optimism_used);
    *w++ = ',';
    w = put_array(w, "policyProbs", o->policy_probs, area + 1, format == HC_NNOUT_KATAGO ? HC_KATAGO_POLICY_SIZE : 0);
    *w++ = ',';
    w = put_real(w, "shorttermScoreError", o->shortterm_score_error);
    *w++ = ',';
    w = put_real(w, "shorttermWinlossError", o->shortterm_winloss_error);
    *w++ = ',';
    w = put_real(w, "varTimeLeft", o->var_time_left);
    *w++ = ',';
    w = put_real(w, "whiteLead", o->white_lead);
    *w++ = ',';
    w = put_real(w, "whiteLossProb", o->white_loss_prob);
    *w++ = ',';
    w = put_real(w, "whiteNoResultProb", o->white_no_result_prob);
    *w++ = ',';
    if (o->white_owner_map) {
        w = put_array(w, "whiteOwnerMap", o->white_owner_map, area, 0);
        *w++ = ',';
    }
    w = put_real(w, "whiteScoreMean", o->white_score_mean);
    *w++ = ',';
    w = put_real(w, "whiteScoreMeanSq", o->white_score_mean_sq);
    *w++ = ',';
    w = put_real(w, "whiteWinProb", o->white_win_prob);
    *w++ = '}';
    *w = '\0';
    return s;
}

static int num_field(json_t *j, const char *key, const char *where, float *out, hc_err *err)
{
    json_t *v = json_object_get(j, key);
    if (!v)
        return hc_err_set(err, HC_EFORMAT, "%s: missing field \"%s\"", where, key);
    if (!json_is_number(v))
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" is not a number", where, key);
    /* Non-finite values cannot appear in JSON; a backend's NaN is caught before writing. */
    *out = (float)json_number_value(v);
    return 0;
}

static int array_field(json_t *j, const char *key, const char *where, size_t want, size_t allow_padded, float *out,
                       hc_err *err)
{
    json_t *arr = json_object_get(j, key);
    if (!arr || !json_is_array(arr))
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" is missing or not an array", where, key);
    size_t n = json_array_size(arr);
    if (n != want && !(allow_padded && n == allow_padded && want <= n))
        return hc_err_set(err, HC_EFORMAT, "%s: field \"%s\" has %zu entries, expected %zu", where, key, n, want);
    for (size_t i = 0; i < want; i++) {
        json_t *v = json_array_get(arr, i);
        if (!json_is_number(v))
            return hc_err_set(err, HC_EFORMAT, "%s: %s[%zu] is not a number", where, key, i);
        out[i] = (float)json_number_value(v);
    }
    return 0;
}

int hc_nnoutput_parse(const char *text, const char *where, hc_nnoutput *out, hc_err *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!j)
        return hc_err_set(err, HC_EFORMAT, "%s: column %d: invalid JSON: %s", where, jerr.column, jerr.text);
    int rc = -1;
    if (!json_is_object(j)) {
        hc_err_set(err, HC_EFORMAT, "%s: not a JSON object", where);
        goto done;
    }
    json_t *xl = json_object_get(j, "nnXLen"), *yl = json_object_get(j, "nnYLen");
    if (!json_is_integer(xl) || !json_is_integer(yl) || json_integer_value(xl) < 1 ||
        json_integer_value(xl) > HC_NNOUT_MAX_LEN || json_integer_value(yl) < 1 ||
        json_integer_value(yl) > HC_NNOUT_MAX_LEN) {
        hc_err_set(err, HC_EFORMAT, "%s: nnXLen/nnYLen missing or not in 1..%d", where, HC_NNOUT_MAX_LEN);
        goto done;
    }
    int has_own = json_object_get(j, "whiteOwnerMap") != NULL;
    if (hc_nnoutput_init(out, (int)json_integer_value(xl), (int)json_integer_value(yl), has_own, err))
        goto done;
    size_t area = (size_t)out->nn_x_len * (size_t)out->nn_y_len;
    if (num_field(j, "whiteWinProb", where, &out->white_win_prob, err) ||
        num_field(j, "whiteLossProb", where, &out->white_loss_prob, err) ||
        num_field(j, "whiteNoResultProb", where, &out->white_no_result_prob, err) ||
        num_field(j, "whiteScoreMean", where, &out->white_score_mean, err) ||
        num_field(j, "whiteScoreMeanSq", where, &out->white_score_mean_sq, err) ||
        num_field(j, "whiteLead", where, &out->white_lead, err) ||
        num_field(j, "varTimeLeft", where, &out->var_time_left, err) ||
        num_field(j, "shorttermWinlossError", where, &out->shortterm_winloss_error, err) ||
        num_field(j, "shorttermScoreError", where, &out->shortterm_score_error, err) ||
        num_field(j, "policyOptimismUsed", where, &out->policy_optimism_used, err) ||
        array_field(j, "policyProbs", where, area + 1, HC_KATAGO_POLICY_SIZE, out->policy_probs, err) ||
        (has_own && array_field(j, "whiteOwnerMap", where, area, 0, out->white_owner_map, err)))
        goto done;
    rc = 0;
done:
    json_decref(j);
    if (rc)
        hc_nnoutput_free(out);
    return rc;
}

int hc_nnoutputs_load(const char *path, hc_nnoutput **out, size_t *n, hc_err *err)
{
    *out = NULL;
    *n = 0;
    hc_istream *in = hc_istream_open(path, err);
    if (!in)
        return -1;
    size_t cap = 0, len = 0;
    hc_nnoutput *os = NULL;
    char *line;
    long got;
    int rc = 0;
    hc_err_clear(err);
    while ((got = hc_istream_getline(in, &line, HC_NNOUT_LINE_MAX, err)) >= 0) {
        if (line[strspn(line, " \t")] == '\0')
            continue;
        if (len == cap) {
            cap = cap ? cap * 2 : 256;
            hc_nnoutput *no = realloc(os, cap * sizeof *os);
            if (!no) {
                rc = hc_err_set(err, HC_ENOMEM, "%s: out of memory", path);
                break;
            }
            os = no;
        }
        char where[600];
        snprintf(where, sizeof where, "%s:%ld", path, hc_istream_lineno(in));
        if (hc_nnoutput_parse(line, where, &os[len], err)) {
            rc = -1;
            break;
        }
        len++;
    }
    if (got < 0 && err && err->code != HC_OK)
        rc = -1;
    hc_istream_close(in);
    if (rc) {
        hc_nnoutputs_free(os, len);
        return -1;
    }
    *out = os;
    *n = len;
    return 0;
}

void hc_nnoutputs_free(hc_nnoutput *os, size_t n)
{
    if (!os)
        return;
    for (size_t i = 0; i < n; i++)
        hc_nnoutput_free(&os[i]);
    free(os);
}

struct hc_nnoutwriter {
    hc_ostream *out;
    int format;
};

hc_nnoutwriter *hc_nnoutwriter_open(const char *path, int format, hc_err *err)
{
    hc_nnoutwriter *w = hc_calloc(1, sizeof *w, err, "outputs writer");
    if (!w)
        return NULL;
    w->format = format;
    w->out = hc_ostream_open(path, err);
    if (!w->out) {
        free(w);
        return NULL;
    }
    return w;
}

int hc_nnoutwriter_write(hc_nnoutwriter *w, const hc_nnoutput *o, const char *nn_hash, hc_err *err)
{
    char *s = hc_nnoutput_format(o, w->format, nn_hash, err);
    if (!s)
        return -1;
    int rc = hc_ostream_write_line(w->out, s, err);
    free(s);
    return rc;
}

int hc_nnoutwriter_commit(hc_nnoutwriter *w, hc_err *err)
{
    int rc = hc_ostream_commit(w->out, err);
    free(w);
    return rc;
}

void hc_nnoutwriter_abort(hc_nnoutwriter *w)
{
    if (!w)
        return;
    hc_ostream_abort(w->out);
    free(w);
}

enum { HC_NNOUT_SCALARS = 10 };

static void scalars_of(const hc_nnoutput *o, float v[HC_NNOUT_SCALARS])
{
    v[0] = o->white_win_prob;
    v[1] = o->white_loss_prob;
    v[2] = o->white_no_result_prob;
    v[3] = o->white_score_mean;
    v[4] = o->white_score_mean_sq;
    v[5] = o->white_lead;
    v[6] = o->var_time_left;
    v[7] = o->shortterm_winloss_error;
    v[8] = o->shortterm_score_error;
    v[9] = o->policy_optimism_used;
}

static void scalars_to(hc_nnoutput *o, const float v[HC_NNOUT_SCALARS])
{
    o->white_win_prob = v[0];
    o->white_loss_prob = v[1];
    o->white_no_result_prob = v[2];
    o->white_score_mean = v[3];
    o->white_score_mean_sq = v[4];
    o->white_lead = v[5];
    o->var_time_left = v[6];
    o->shortterm_winloss_error = v[7];
    o->shortterm_score_error = v[8];
    o->policy_optimism_used = v[9];
}

const char *hc_nnoutput_first_diff(const hc_nnoutput *a, const hc_nnoutput *b, char *buf, size_t cap)
{
    size_t hw = (size_t)a->nn_x_len * a->nn_y_len;
    if (a->nn_x_len != b->nn_x_len || a->nn_y_len != b->nn_y_len || !a->white_owner_map != !b->white_owner_map)
        return "the output's shape";
    static const char *const names[HC_NNOUT_SCALARS] = {
        "whiteWin", "whiteLoss", "noResult", "whiteScoreMean", "whiteScoreMeanSq",
        "whiteLead", "varTimeLeft", "shorttermWinlossError", "shorttermScoreError", "policyOptimism"};
    float sa[HC_NNOUT_SCALARS], sb[HC_NNOUT_SCALARS];
    scalars_of(a, sa);
    scalars_of(b, sb);
    for (size_t i = 0; i < HC_NNOUT_SCALARS; i++)
        if (memcmp(&sa[i], &sb[i], sizeof(float)) != 0) {
            snprintf(buf, cap, "%s %.9g vs %.9g", names[i], (double)sa[i], (double)sb[i]);
            return buf;
        }
    for (size_t i = 0; i <= hw; i++)
        if (memcmp(&a->policy_probs[i], &b->policy_probs[i], sizeof(float)) != 0) {
            snprintf(buf, cap, "policy[%zu] %.9g vs %.9g", i, (double)a->policy_probs[i], (double)b->policy_probs[i]);
            return buf;
        }
    for (size_t i = 0; a->white_owner_map && i < hw; i++)
        if (memcmp(&a->white_owner_map[i], &b->white_owner_map[i], sizeof(float)) != 0) {
            snprintf(buf, cap, "ownership[%zu] %.9g vs %.9g", i, (double)a->white_owner_map[i],
                     (double)b->white_owner_map[i]);
            return buf;
        }
    return NULL;
}

typedef struct rec_header {
    char magic[4];
    int64_t position;
    int32_t nn_x, nn_y, has_ownership;
} rec_header;

void *hc_nnoutput_encode(const hc_nnoutput *o, long position, size_t *len, hc_err *err)
{
    size_t area = (size_t)o->nn_x_len * (size_t)o->nn_y_len;
    int own = o->white_owner_map != NULL;
    size_t n = sizeof(rec_header) + sizeof(float) * (HC_NNOUT_SCALARS + area + 1 + (own ? area : 0));
    unsigned char *buf = hc_malloc(n, err, "output record");
    if (!buf)
        return NULL;
    rec_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, "HCO1", 4);
    h.position = position;
    h.nn_x = o->nn_x_len;
    h.nn_y = o->nn_y_len;
    h.has_ownership = own;
    unsigned char *p = buf;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    float sc[HC_NNOUT_SCALARS];
    scalars_of(o, sc);
    memcpy(p, sc, sizeof sc);
    p += sizeof sc;
    memcpy(p, o->policy_probs, sizeof(float) * (area + 1));
    p += sizeof(float) * (area + 1);
    if (own)
        memcpy(p, o->white_owner_map, sizeof(float) * area);
    *len = n;
    return buf;
}

long hc_nnoutput_read_records(const char *path, hc_nnoutput *outs, unsigned char *got, size_t n, hc_err *err)
{
    hc_istream *in = hc_istream_open(path, err);
    if (!in)
        return -1;
    long count = 0;
    for (;;) {
        rec_header h;
        uint64_t at = hc_istream_offset(in);
        long r = hc_istream_read_some(in, &h, sizeof h, err);
        if (r < 0) {
            count = -1;
            break;
        }
        if (r < (long)sizeof h)
            break; /* EOF, or a header cut short by a killed writer */
        if (memcmp(h.magic, "HCO1", 4) != 0 || h.position < 0 || (size_t)h.position >= n || h.nn_x < 1 ||
            h.nn_x > HC_NNOUT_MAX_LEN || h.nn_y < 1 || h.nn_y > HC_NNOUT_MAX_LEN) {
            count = hc_err_set(err, HC_EFORMAT, "%s: offset %llu: not an output record", path, (unsigned long long)at);
            break;
        }
        hc_nnoutput o;
        if (hc_nnoutput_init(&o, h.nn_x, h.nn_y, h.has_ownership, err)) {
            count = -1;
            break;
        }
        size_t area = (size_t)h.nn_x * (size_t)h.nn_y;
        float sc[HC_NNOUT_SCALARS];
        long a = hc_istream_read_some(in, sc, sizeof sc, err);
        long b = a == (long)sizeof sc ? hc_istream_read_some(in, o.policy_probs, sizeof(float) * (area + 1), err) : 0;
        long c = (b == (long)(sizeof(float) * (area + 1)) && h.has_ownership)
                     ? hc_istream_read_some(in, o.white_owner_map, sizeof(float) * area, err)
                     : (long)(sizeof(float) * area);
        if (a < 0 || b < 0 || c < 0) {
            hc_nnoutput_free(&o);
            count = -1;
            break;
        }
        if (a != (long)sizeof sc || b != (long)(sizeof(float) * (area + 1)) || c != (long)(sizeof(float) * area)) {
            hc_nnoutput_free(&o); /* the writer died inside this record */
            break;
        }
        scalars_to(&o, sc);
        if (got && got[h.position])
            hc_nnoutput_free(&outs[h.position]);
        outs[h.position] = o;
        if (got)
            got[h.position] = 1;
        count++;
    }
    hc_istream_close(in);
    return count;
}
