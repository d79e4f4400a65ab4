/* `halfcheck merge`: several runs' results.json folded into one run. */
#include "harness/run/merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reports/reports.h"

struct hc_merge {
    hc_results_doc **docs;
    size_t n_docs;
    hc_result *items;
    hc_results rs;
    hc_provenance *prov; /* every input's, each marked with its job (the input's path) */
    char **jobs;
    char **hosts;        /* per input: its directory's `host` file (ci/sweep), or NULL */
    size_t n_hosts;
    hc_result_headroom *headroom; /* the inputs' headroom rows, concatenated */
};

static int same_str(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* Whether rows[0..n) hold a row identical to h (the same figure of the same net x board). */
static int headroom_seen(const hc_result_headroom *rows, size_t n, const hc_result_headroom *h)
{
    for (size_t i = 0; i < n; i++) {
        const hc_result_headroom *x = &rows[i];
        if (same_str(x->net, h->net) && same_str(x->board, h->board) && same_str(x->format, h->format) &&
            same_str(x->layer, h->layer) && same_str(x->what, h->what) && x->position == h->position &&
            !memcmp(&x->value, &h->value, sizeof x->value) && !memcmp(&x->margin, &h->margin, sizeof x->margin))
            return 1;
    }
    return 0;
}

/* A job directory's `host` file, written by ci/sweep's job: the host name on the first line,
 * its device on the second. Absent (a plain run's directory): no host. */
static char *read_host(const char *dir, const char **device)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/host", dir);
    FILE *f = fopen(path, "r");
    *device = NULL;
    if (!f)
        return NULL;
    char *t = calloc(1, 1025);
    size_t n = t ? fread(t, 1, 1023, f) : 0;
    fclose(f);
    if (!t || n == 0) {
        free(t);
        return NULL;
    }
    char *nl = strchr(t, '\n');
    if (nl) {
        *nl = 0;
        char *d = nl + 1, *e = strchr(d, '\n');
        if (e)
            *e = 0;
        if (*d)
            *device = d;
    }
    return t;
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

hc_merge *hc_merge_read(const char *const *paths, size_t n, hc_err *err)
{
    if (n == 0) {
        hc_err_set(err, HC_EUSAGE, "nothing to merge");
        return NULL;
    }
    hc_merge *m = hc_calloc(1, sizeof *m, err, "merge");
    if (!m)
        return NULL;
    m->docs = hc_calloc(n, sizeof *m->docs, err, "merge inputs");
    char **names = hc_calloc(n, sizeof *names, err, "merge inputs");
    m->hosts = hc_calloc(n, sizeof *m->hosts, err, "merge inputs");
    m->n_hosts = m->hosts ? n : 0;
    size_t total = 0;
    int rc = m->docs && names && m->hosts ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct stat st;
        char path[1200];
        if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(path, sizeof path, "%s/results.json", paths[i]);
            const char *device;
            m->hosts[i] = read_host(paths[i], &device);
        } else
            snprintf(path, sizeof path, "%s", paths[i]);
        names[i] = strdup(path);
        m->docs[i] = hc_results_read_json(path, err);
        if (!m->docs[i] || !names[i]) {
            rc = -1;
            break;
        }
        m->n_docs = i + 1;
        const hc_results *a = hc_results_doc_results(m->docs[0]), *b = hc_results_doc_results(m->docs[i]);
        if (!same(a->suite, b->suite))
            rc = hc_err_set(err, HC_EUSAGE, "%s is of suite \"%s\", %s of suite \"%s\"", path, b->suite ? b->suite : "",
                            names[0], a->suite ? a->suite : "");
        else if (!same(a->version, b->version))
            rc = hc_err_set(err, HC_EUSAGE, "%s was written by halfcheck %s, %s by %s", path,
                            b->version ? b->version : "?", names[0], a->version ? a->version : "?");
        total += b->n;
    }
    if (rc == 0)
        m->items = hc_calloc(total ? total : 1, sizeof *m->items, err, "merged results");
    rc = rc || !m->items ? -1 : 0;
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < m->n_docs; i++) {
        const hc_results *r = hc_results_doc_results(m->docs[i]);
        for (size_t j = 0; rc == 0 && j < r->n; j++) {
            const hc_result *x = &r->items[j];
            /* Quadratic, but a suite has tens to hundreds of results. */
            for (size_t q = 0; q < k; q++) {
                const hc_result *y = &m->items[q];
                if (strcmp(x->net, y->net) == 0 && strcmp(x->board, y->board) == 0 &&
                    strcmp(x->backend, y->backend) == 0 && strcmp(x->mode, y->mode) == 0) {
                    rc = hc_err_set(err, HC_EUSAGE, "%s: net %s board %s backend %s mode %s is also in an earlier input",
                                    names[i], x->net, x->board, x->backend, x->mode);
                    break;
                }
            }
            m->items[k++] = *x;
        }
        if (rc == 0 && r->timestamp && (!m->rs.timestamp || strcmp(r->timestamp, m->rs.timestamp) < 0))
            m->rs.timestamp = r->timestamp;
        /* A part cut short leaves the whole incomplete; skips pass only where every part allowed them. */
        m->rs.interrupted |= r->interrupted;
        m->rs.allow_skips = i == 0 ? r->allow_skips : m->rs.allow_skips && r->allow_skips;
    }
    /* Provenance per job: each input's own, named by the input it came from. */
    size_t np = 0;
    for (size_t i = 0; rc == 0 && i < m->n_docs; i++)
        np += hc_results_doc_results(m->docs[i])->n_prov;
    if (rc == 0 && np) {
        m->prov = hc_calloc(np, sizeof *m->prov, err, "provenance");
        m->jobs = hc_calloc(m->n_docs, sizeof *m->jobs, err, "provenance");
        rc = m->prov && m->jobs ? 0 : -1;
        for (size_t i = 0; rc == 0 && i < m->n_docs; i++) {
            const hc_results *r = hc_results_doc_results(m->docs[i]);
            m->jobs[i] = names[i];
            names[i] = NULL;
            for (size_t k = 0; k < r->n_prov; k++) {
                m->prov[m->rs.n_prov] = r->prov[k];
                /* A merge of merges keeps the jobs' own names. */
                if (!r->prov[k].job)
                    m->prov[m->rs.n_prov].job = m->jobs[i];
                if (!r->prov[k].host && m->hosts[i]) {
                    m->prov[m->rs.n_prov].host = m->hosts[i];
                    m->prov[m->rs.n_prov].device = m->hosts[i] + strlen(m->hosts[i]) + 1;
                    if (!*m->prov[m->rs.n_prov].device)
                        m->prov[m->rs.n_prov].device = NULL;
                }
                m->rs.n_prov++;
            }
        }
        m->rs.prov = m->prov;
    }
    /* Headroom rows, in the inputs' order: each job measured the nets x boards of its cases, so
     * a net x board split over several jobs (ci/sweep: one case a job) gives the same rows in
     * each; a row identical to one kept is kept once. */
    size_t nh = 0;
    for (size_t i = 0; rc == 0 && i < m->n_docs; i++)
        nh += hc_results_doc_results(m->docs[i])->n_headroom;
    if (rc == 0 && nh) {
        if (!(m->headroom = hc_calloc(nh, sizeof *m->headroom, err, "headroom")))
            rc = -1;
        for (size_t i = 0; rc == 0 && i < m->n_docs; i++) {
            const hc_results *r = hc_results_doc_results(m->docs[i]);
            for (size_t k = 0; k < r->n_headroom; k++)
                if (!headroom_seen(m->headroom, m->rs.n_headroom, &r->headroom[k]))
                    m->headroom[m->rs.n_headroom++] = r->headroom[k];
        }
        m->rs.headroom = m->headroom;
    }
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    if (rc) {
        hc_merge_free(m);
        return NULL;
    }
    m->rs.suite = hc_results_doc_results(m->docs[0])->suite;
    m->rs.version = hc_results_doc_results(m->docs[0])->version;
    m->rs.items = m->items;
    m->rs.n = k;
    return m;
}

const hc_results *hc_merge_results(const hc_merge *m)
{
    return &m->rs;
}

int hc_merge_status(const hc_merge *m)
{
    return hc_results_status(&m->rs);
}

void hc_merge_allow_skips(hc_merge *m)
{
    m->rs.allow_skips = 1;
}


int hc_merge_write_reports(const hc_merge *m, const char *dir, hc_err *err)
{
    return hc_reports_write_dir(&m->rs, dir, err);
}

void hc_merge_free(hc_merge *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_docs; i++) {
        hc_results_doc_free(m->docs[i]);
        if (m->jobs)
            free(m->jobs[i]);
    }
    for (size_t i = 0; i < m->n_hosts; i++)
        free(m->hosts[i]);
    free(m->hosts);
    free(m->jobs);
    free(m->prov);
    free(m->headroom);
    free(m->docs);
    free(m->items);
    free(m);
}
