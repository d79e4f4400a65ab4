/* Everything a run can check before any work starts, so that a mistake costs seconds and not a
 * reference computation: each selected case's backend spec (kind, params, profile names and
 * files: hc_backend_check), each net a case needs (loaded once, here, and kept for its cases;
 * its sha256 pin and model version checked), each board's positions (loaded once and kept;
 * every record fits each case's NN buffer). The first mistake is the one error of the run
 * (HC_ECONFIG or the reader's code: exit 2), naming the suite's file:line:col. */
#ifndef HC_PREFLIGHT_H
#define HC_PREFLIGHT_H

#include <stddef.h>

#include "backends/backend.h"
#include "harness/base/err.h"
#include "harness/config/config.h"
#include "harness/go/position.h"
#include "harness/model/model.h"

/* A backend spec as a case runs it (its {net_name}, {model}, ... filled in): the runner's. */
typedef int (*hc_preflight_expand)(const hc_suite *s, const hc_case *c, const char *spec, char *out, size_t len,
                                   hc_err *err);

/* What the preflight loaded, kept for the run. */
typedef struct hc_preflight hc_preflight;

/* Checks and loads what the cases of s (which outlives the result) need; NULL with err at the
 * first mistake. */
hc_preflight *hc_preflight_run(const hc_suite *s, const hc_backend_registry *reg, hc_preflight_expand expand,
                               hc_err *err);
/* Net ni of the suite (activations reduced as KataGo does at load), or NULL when no case needs
 * it or it was released; its sha256, lowercase hex ("" when not loaded). */
hc_net *hc_preflight_net(const hc_preflight *p, size_t ni);
const char *hc_preflight_net_digest(const hc_preflight *p, size_t ni);
/* Frees net ni once its cases are done. */
void hc_preflight_release_net(hc_preflight *p, size_t ni);
/* Board bi's positions (NULL when no case needs them) and their count, and the sha256 of their
 * source (the positions file or the SGF collection), the reference cache's key. */
const hc_position *hc_preflight_positions(const hc_preflight *p, size_t bi, size_t *n);
const char *hc_preflight_positions_digest(const hc_preflight *p, size_t bi);
void hc_preflight_free(hc_preflight *p);

#endif
