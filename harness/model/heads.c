/* Raw heads' memory (one allocation per head, sized for a batch) and tapsets. */
#include "harness/model/heads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

hc_raw_heads *hc_raw_heads_new(int max_batch, int nx, int ny, int policy_channels,
                               int score_channels, hc_err *err)
{
    if (max_batch < 1 || nx < 1 || ny < 1 || policy_channels < 1 || score_channels < 1) {
        hc_err_set(err, HC_EINTERNAL, "raw heads: bad sizes (batch %d, %dx%d, %d policy, %d score)",
                   max_batch, nx, ny, policy_channels, score_channels);
        return NULL;
    }
    hc_raw_heads *h = hc_calloc(1, sizeof *h, err, "raw heads");
    if (!h)
        return NULL;
    size_t hw = (size_t)nx * ny;
    h->batch = h->max_batch = max_batch;
    h->nx = nx;
    h->ny = ny;
    h->policy_channels = policy_channels;
    h->score_channels = score_channels;
    h->policy = hc_calloc((size_t)max_batch * policy_channels * hw, sizeof(float), err, "policy");
    h->policy_pass = hc_calloc((size_t)max_batch * policy_channels, sizeof(float), err, "pass");
    h->value = hc_calloc((size_t)max_batch * 3, sizeof(float), err, "value");
    h->score = hc_calloc((size_t)max_batch * score_channels, sizeof(float), err, "score");
    h->ownership = hc_calloc((size_t)max_batch * hw, sizeof(float), err, "ownership");
    if (!h->policy || !h->policy_pass || !h->value || !h->score || !h->ownership) {
        hc_raw_heads_free(h);
        return NULL;
    }
    return h;
}

void hc_raw_heads_free(hc_raw_heads *h)
{
    if (!h)
        return;
    free(h->policy);
    free(h->policy_pass);
    free(h->value);
    free(h->score);
    free(h->ownership);
    free(h);
}

/* ---- tapsets ---- */

struct hc_tapset {
    int max_batch;
    hc_tapset_entry *e;
    int n, cap;
    int failed;
    pthread_mutex_t mu; /* engine hooks run on worker threads */
};

hc_tapset *hc_tapset_new(int max_batch, hc_err *err)
{
    if (max_batch < 1) {
        hc_err_set(err, HC_EINTERNAL, "tapset: bad batch %d", max_batch);
        return NULL;
    }
    hc_tapset *s = hc_calloc(1, sizeof *s, err, "tapset");
    if (!s)
        return NULL;
    s->max_batch = max_batch;
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

void hc_tapset_free(hc_tapset *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        free(s->e[i].name);
        free(s->e[i].data);
        free(s->e[i].origin);
    }
    free(s->e);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void hc_tapset_reset(hc_tapset *s)
{
    for (int i = 0; i < s->n; i++)
        s->e[i].rows = 0;
    s->failed = 0;
}

int hc_tapset_count(const hc_tapset *s) { return s->n; }
int hc_tapset_max_batch(const hc_tapset *s) { return s->max_batch; }
const hc_tapset_entry *hc_tapset_at(const hc_tapset *s, int i) { return &s->e[i]; }

const hc_tapset_entry *hc_tapset_find(const hc_tapset *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->e[i].name, name) == 0)
            return &s->e[i];
    return NULL;
}

/* Finds or appends `name` (the caller holds the lock where that matters); NULL on failure. */
static hc_tapset_entry *entry_get(hc_tapset *s, const char *name, int layout, int fmt, int channels, int hw,
                                  int *clash)
{
    *clash = 0;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->e[i].name, name) == 0) {
            hc_tapset_entry *x = &s->e[i];
            if (x->channels != channels || x->hw != hw) {
                *clash = 1;
                return NULL;
            }
            return x;
        }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        hc_tapset_entry *ne = realloc(s->e, (size_t)cap * sizeof *ne);
        if (!ne)
            return NULL;
        s->e = ne;
        s->cap = cap;
    }
    hc_tapset_entry *x = &s->e[s->n];
    memset(x, 0, sizeof *x);
    x->name = strdup(name);
    x->data = malloc((size_t)s->max_batch * (size_t)channels * (size_t)hw * sizeof(float));
    if (!x->name || !x->data) {
        free(x->name);
        free(x->data);
        return NULL;
    }
    x->layout = layout;
    x->fmt = fmt;
    x->channels = channels;
    x->hw = hw;
    s->n++;
    return x;
}

int hc_tapset_entry_set_origin(hc_tapset_entry *e, const char *origin, hc_err *err)
{
    char *o = strdup(origin);
    if (!o)
        return hc_err_set(err, HC_ENOMEM, "out of memory recording tap %s", e->name);
    free(e->origin);
    e->origin = o;
    return 0;
}

hc_tapset_entry *hc_tapset_entry_get(hc_tapset *s, const char *name, int layout, int fmt, int channels, int hw,
                                     hc_err *err)
{
    if (channels < 1 || hw < 1) {
        hc_err_set(err, HC_EBACKEND, "tap %s: bad shape %d x %d", name, channels, hw);
        return NULL;
    }
    int clash;
    hc_tapset_entry *x = entry_get(s, name, layout, fmt, channels, hw, &clash);
    if (!x && clash) {
        const hc_tapset_entry *o = hc_tapset_find(s, name);
        hc_err_set(err, HC_EBACKEND, "tap %s: shape %d x %d, earlier %d x %d", name, channels, hw, o->channels, o->hw);
    } else if (!x)
        hc_err_set(err, HC_ENOMEM, "out of memory recording tap %s", name);
    return x;
}

void hc_tapset_hook(void *user, const hc_tap *t)
{
    hc_tapset *s = user;
    if (t->row0 + t->rows > s->max_batch)
        return;
    int clash;
    pthread_mutex_lock(&s->mu);
    hc_tapset_entry *l = s->failed ? NULL : entry_get(s, t->layer, t->layout, HC_TAPFMT_F32, t->channels, t->hw, &clash);
    if (!l && !clash)
        s->failed = 1;
    /* The entry's index and data, not the pointer: another thread's new entry may move the array
     * (realloc) while this one copies. */
    int idx = l ? (int)(l - s->e) : -1;
    float *data = l ? l->data : NULL;
    pthread_mutex_unlock(&s->mu);
    if (!l)
        return; /* the same name with another shape: the first one stays */
    size_t C = (size_t)t->channels, hw = (size_t)t->hw;
    for (int rr = 0; rr < t->rows; rr++) {
        float *dst = data + (size_t)(t->row0 + rr) * C * hw;
        if (t->layout == HC_TAP_CBP)
            for (size_t c = 0; c < C; c++)
                memcpy(dst + c * hw, t->data + (c * (size_t)t->rows + (size_t)rr) * hw, hw * sizeof(float));
        else
            memcpy(dst, t->data + (size_t)rr * C, C * sizeof(float));
    }
    pthread_mutex_lock(&s->mu);
    if (t->row0 + t->rows > s->e[idx].rows)
        s->e[idx].rows = t->row0 + t->rows;
    pthread_mutex_unlock(&s->mu);
}

int hc_tapset_status(const hc_tapset *s, hc_err *err)
{
    return s->failed ? hc_err_set(err, HC_ENOMEM, "out of memory recording taps") : 0;
}

const char *hc_tap_fmt_str(int fmt)
{
    return fmt == HC_TAPFMT_F16 ? "f16" : fmt == HC_TAPFMT_BF16 ? "bf16" : "f32";
}

int hc_tap_fmt_parse(const char *s)
{
    return !strcmp(s, "f32") ? HC_TAPFMT_F32 : !strcmp(s, "f16") ? HC_TAPFMT_F16 : !strcmp(s, "bf16") ? HC_TAPFMT_BF16 : -1;
}
