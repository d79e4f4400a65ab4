/* The reply of KataGo's GTP `kata-raw-nn` parsed field by field (the gtp: backend's reader,
 * public so that tests and fuzz targets call it on text). Internal to backends/. */
#ifndef HC_GTP_H
#define HC_GTP_H

#include "harness/base/err.h"
#include "harness/data/nnoutput.h"

/* Parses reply (the text after "= ", lines joined by '\n'; modified in place) for a board of
 * x_size x y_size evaluated at `symmetry` into o, which hc_nnoutput_init sized for a buffer of
 * o->nn_x_len x o->nn_y_len >= the board. A legal move printed as 0 becomes policy_res / 2,
 * an illegal one (NAN) -1. policy_optimism_used is left to the caller. Returns 0, or -1 with
 * err (HC_EBACKEND "malformed kata-raw-nn reply, line N ...: what"). */
int hc_gtp_parse_raw_nn(char *reply, int symmetry, int x_size, int y_size, double policy_res, hc_nnoutput *o,
                        hc_err *err);

#endif
