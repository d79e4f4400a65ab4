/* A backend case's verdict: skipped, an error, or checked against the reference. */
#include "harness/run/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/config/config.h"

/* A verdict without figures (outs, not filled, freed with the side file's buffers): skipped,
 * or the backend's error. */
static void no_figures(hc_verdict_result *v, int outcome, char *message, hc_nnoutput *outs, hc_isolate_side *cs)
{
    free(outs);
    free(cs->skipped);
    free(cs->skip_text);
    v->outcome = outcome;
    v->message = message;
    v->backend_error = outcome == HC_OUT_ERROR;
}

void hc_verdict_of(const hc_verdict_case *vc, int rc, char *message, hc_nnoutput *outs, hc_isolate_side *side,
                   hc_verdict_result *v)
{
    size_t n = vc->n;
    const hc_nnoutput *ref = vc->ref;
    hc_isolate_side cs = *side; /* its buffers are adopted */
    free(cs.engine);
    side->engine = NULL;
    memset(v, 0, sizeof *v);
    if (rc == 0 && cs.n_skipped == n) {
        /* Every position refused: the case is skipped, with the reasons. */
        char *reasons = cs.skip_text ? cs.skip_text : strdup("every position skipped");
        cs.skip_text = NULL;
        no_figures(v, HC_OUT_SKIPPED, reasons, outs, &cs);
        return;
    }
    const char *skip = message ? strstr(message, HC_BACKEND_SKIP) : NULL;
    if (rc && skip) {
        /* The backend cannot take this case (a setting, an unset engine path): not an error. */
        char *reason = strdup(skip + strlen(HC_BACKEND_SKIP));
        free(message);
        no_figures(v, HC_OUT_SKIPPED, reason, outs, &cs);
        return;
    }
    if (rc) {
        if (!message)
            message = strdup("out of memory");
        char *full = NULL;
        /* Open errors already carry "backend SPEC: " from the registry. */
        if (message && strncmp(message, "backend ", 8) == 0)
            full = strdup(message);
        else if (message && (full = malloc(strlen(vc->spec) + strlen(message) + 16)) != NULL)
            sprintf(full, "backend %s: %s", vc->spec, message);
        free(message);
        no_figures(v, HC_OUT_ERROR, full, outs, &cs);
        return;
    }
    hc_stats *st = calloc(1, sizeof *st);
    hc_err serr = {0};
    if (!st || hc_stats_compute_ex(ref, outs, n, cs.skipped, cs.has_res ? &cs.res : NULL, st, &serr)) {
        free(st);
        hc_nnoutputs_free(outs, n);
        free(cs.skipped);
        free(cs.skip_text);
        v->outcome = HC_OUT_ERROR;
        v->message = strdup(serr.msg[0] ? serr.msg : "out of memory computing statistics");
        v->backend_error = 1;
        return;
    }
    char m[600];
    int batched = vc->mode == HC_MODE_BATCHED
                      ? hc_engine_batched_check(cs.has_cost ? &cs.cost : NULL, m, sizeof m)
                      : HC_BATCHED_CHECKED;
    if (batched != HC_BATCHED_CHECKED) {
        hc_nnoutputs_free(outs, n);
        free(cs.skipped);
        free(cs.skip_text);
        if (batched == HC_BATCHED_ERROR)
            v->backend_error = 1;
        else {
            free(st);
            st = NULL;
        }
        v->outcome = batched == HC_BATCHED_ERROR ? HC_OUT_ERROR : HC_OUT_SKIPPED;
        v->message = strdup(m);
        v->stats = st;
        v->has_engine = 1;
        v->engine = cs.cost;
        return;
    }
    v->n_shown = hc_shown_capture(vc->shown, vc->ps, n, ref, outs, cs.skipped, st, &v->shown);
    /* Whose outputs these are, kept for a failing case; out of memory: none. */
    hc_diag_opts dop = {.skip = cs.skipped, .order = vc->order, .batch = (size_t)vc->batch};
    hc_err derr = {0};
    if (hc_diagnose(ref, outs, n, &dop, &v->diag, &v->n_diag, &derr))
        v->n_diag = 0;
    hc_nnoutputs_free(outs, n);
    free(cs.skipped);
    v->outcome = HC_OUT_CHECKED;
    v->stats = st;
    v->has_engine = cs.has_cost;
    v->engine = cs.cost;
    v->n_skipped = cs.n_skipped;
    v->skip_message = cs.skip_text;
}
