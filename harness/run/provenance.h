/* The provenance of a run's results (hc_provenance, reports/results.h): halfcheck's and the
 * reference engine's versions, the kernel forms built, whether CUDA is built in, the command
 * line, each net as evaluated and each backend's engine as it reported itself. */
#ifndef HC_PROVENANCE_H
#define HC_PROVENANCE_H

#include "harness/base/err.h"
#include "harness/config/config.h"
#include "reports/results.h"

typedef struct hc_prov_builder hc_prov_builder;

/* The provenance of a run of suite s (which outlives it): every backend a case of s uses, in
 * the suite's order, its engine not yet known; command (copied) may be NULL. */
hc_prov_builder *hc_prov_builder_new(const hc_suite *s, const char *command, hc_err *err);
/* A net as evaluated: nc's name and file (borrowed), its digest (copied) and model version. */
void hc_prov_builder_add_net(hc_prov_builder *p, const hc_net_cfg *nc, const char *sha256, int model_version);
/* The engine of backend `backend` as a case that ran it reported it: the first one is kept
 * (*engine adopted and set to NULL); later ones are left to the caller. */
void hc_prov_builder_engine(hc_prov_builder *p, const char *backend, char **engine);
/* The provenance (owned by p). */
const hc_provenance *hc_prov_builder_get(const hc_prov_builder *p);
void hc_prov_builder_free(hc_prov_builder *p);

#endif
