/* The suite halfcheck katago runs: KataGo's testgpuerror boards as rungpuerrortest.sh gives them
 * to a net of each model family (suites/katago/families.yaml), with a KataGo build as an
 * analysis: backend (its JSON analysis engine, unbatched and batched: docs/ANALYSIS.md) and/or a
 * gtp: backend (kata-raw-nn, unbatched: docs/GTP.md). Built in memory (config.h's builder), run
 * as it is and written for reruns by hc_suite_write. */
#ifndef HC_CONFIG_KATAGO_H
#define HC_CONFIG_KATAGO_H

#include <stddef.h>

#include "harness/base/err.h"
#include "harness/config/config.h"

enum { HC_KATAGO_MAX_FAMILIES = 16, HC_KATAGO_MAX_BOARDS = 32 };

/* A family of suites/katago/families.yaml: the model versions it takes and its boards. */
typedef struct hc_katago_family {
    char name[64];
    int lo, hi;                                  /* modelVersions: [lo, hi] */
    int n_boards;
    char boards[HC_KATAGO_MAX_BOARDS][64];       /* DATA/boards/NAME.yaml */
    int exact[HC_KATAGO_MAX_BOARDS];             /* requireExactNNLen: -1 the board file's, 0, 1 */
} hc_katago_family;

/* DATA/katago/families.yaml (DATA: the repository's suites/ directory) into fams (room for
 * HC_KATAGO_MAX_FAMILIES); every board it names must be a file in DATA/boards. Errors name
 * file:line:col. */
int hc_katago_families_load(const char *data, hc_katago_family *fams, int *n_fams, hc_err *err);
/* The family whose model versions hold version, or NULL. */
const hc_katago_family *hc_katago_family_of(const hc_katago_family *fams, int n_fams, int version);

typedef struct hc_katago_net {
    const char *name;    /* unique among the nets */
    const char *model;   /* absolute path */
    int version;         /* from the model file's header: picks the family */
} hc_katago_net;

typedef struct hc_katago_plan {
    const char *suite;                 /* the suite's file (OUT/katago-suite.yaml), absolute */
    const char *workdir;               /* where the engines run (OUT/katago-engine), absolute */
    const char *data;                  /* the repository's suites/ directory, absolute */
    const hc_katago_family *fams;
    int n_fams;
    const hc_katago_net *nets;
    size_t n_nets;
    const char *katago;                /* the binary: absolute, or a name found on PATH */
    const char *analysis_config;       /* NULL: no analysis: backend */
    const char *gtp_config;            /* NULL: no gtp: backend */
    const char *extra;                 /* the user's -override-config for every engine, or NULL */
    const char *const *tiers;          /* built-in tier names, at least one */
    size_t n_tiers;
} hc_katago_plan;

/* The suite: name katago, the nets (modelVersion pinned), every board any net's family uses
 * (as board files), the backends katago-analysis and/or katago-gtp, the modes (batched only with
 * the analysis engine: kata-raw-nn never batches) and a case per net x family board x backend
 * (requireExactNNLen as the family says). The engines' commands take the net's file as {model},
 * so that a rerun with --net has KataGo evaluate the file the reference evaluates. NULL with
 * err (HC_EUSAGE) for a net in no family or a command line too long. */
hc_suite *hc_katago_suite(const hc_katago_plan *p, hc_err *err);

#endif
