/* Post-processed network outputs, as KataGo's NNOutput holds them (white's perspective), and
 * the outputs file: JSON Lines in KataGo's testgpuerror reference-file format (the golden
 * format of ../shared/golden/README.md). One reader and one writer, side by side. */
#ifndef HC_NNOUTPUT_H
#define HC_NNOUTPUT_H

#include <stddef.h>

#include "harness/base/err.h"

typedef struct hc_nnoutput {
    float white_win_prob, white_loss_prob, white_no_result_prob;
    float white_score_mean, white_score_mean_sq, white_lead;
    float var_time_left;
    float shortterm_winloss_error, shortterm_score_error;
    float policy_optimism_used;
    int nn_x_len, nn_y_len;
    float *policy_probs;    /* owned; nn_x_len*nn_y_len+1, index y*nn_x_len+x, pass last; -1 illegal/off-board */
    float *white_owner_map; /* owned; nn_x_len*nn_y_len, or NULL */
} hc_nnoutput;

/* The resolution of post-processed outputs that were printed and read back: the largest
 * rounding error of each printed kind of value (half a unit in the last printed place), 0 for
 * exact floats. A position backend that reads printed numbers (gtp:) declares it (backend.h)
 * and hc_stats_compute_ex turns it into each metric's resolution, so that reports and tier
 * checks can tell the printing from the arithmetic. */
typedef struct hc_resolution {
    double winrate;   /* whiteWin, whiteLoss, noResult */
    double score;     /* whiteLead, score mean and square, varTimeLeft, shortterm errors */
    double policy;    /* policy probabilities, pass included */
    double ownership; /* white ownership */
} hc_resolution;

/* Allocates the policy and ownership arrays for an nn_x_len x nn_y_len buffer, zeroed (the
 * other fields too). */
int hc_nnoutput_init(hc_nnoutput *o, int nn_x_len, int nn_y_len, int with_ownership, hc_err *err);
void hc_nnoutput_free(hc_nnoutput *o);

enum hc_nnoutput_format {
    HC_NNOUT_GOLDEN = 0, /* policy and ownership of the buffer's size, no nnHash */
    HC_NNOUT_KATAGO = 1  /* adds "nnHash" and pads policyProbs to 362 entries, as katago testgpuerror -reference-file reads */
};

/* Formats one output as a JSON line (no '\n'); malloc'd. nn_hash (32 hex digits) is used by
 * HC_NNOUT_KATAGO only and may be NULL there (written as zeros). */
char *hc_nnoutput_format(const hc_nnoutput *o, int format, const char *nn_hash, hc_err *err);
/* Parses either format (a padded policy is cut back to the buffer's size). */
int hc_nnoutput_parse(const char *json, const char *where, hc_nnoutput *out, hc_err *err);

/* Reads a whole outputs file; *out is malloc'd, free with hc_nnoutputs_free. */
int hc_nnoutputs_load(const char *path, hc_nnoutput **out, size_t *n, hc_err *err);
void hc_nnoutputs_free(hc_nnoutput *os, size_t n);

typedef struct hc_nnoutwriter hc_nnoutwriter;
hc_nnoutwriter *hc_nnoutwriter_open(const char *path, int format, hc_err *err);
int hc_nnoutwriter_write(hc_nnoutwriter *w, const hc_nnoutput *o, const char *nn_hash, hc_err *err);
int hc_nnoutwriter_commit(hc_nnoutwriter *w, hc_err *err);
void hc_nnoutwriter_abort(hc_nnoutwriter *w);

#endif

#ifndef HC_NNOUTPUT_BIN
#define HC_NNOUTPUT_BIN
/* Binary records: exact float bits with NaN and inf kept (JSON cannot carry them), for the
 * outputs a backend child process hands back and for the reference cache. A record is
 * "HCO1", int64 position, int32 nn_x, int32 nn_y, int32 has_ownership, 10 floats, the policy
 * and the ownership map; little-endian as the host writes it (files never leave the machine). */
/* Encodes one record into a malloc'd buffer; *len receives its size. */
void *hc_nnoutput_encode(const hc_nnoutput *o, long position, size_t *len, hc_err *err);
/* NULL when a and b are the same bits (every scalar, the policy and the ownership map), else
 * what differs first, e.g. "policy[12] 0.0123 vs 0.0124" (written into buf). */
const char *hc_nnoutput_first_diff(const hc_nnoutput *a, const hc_nnoutput *b, char *buf, size_t cap);
/* Reads records from path into outs[position] (initialising each), for positions < n;
 * got[position] is set to 1. A truncated last record (a writer killed mid-write) is ignored;
 * anything else malformed is an HC_EFORMAT error. Returns the count of records read. */
long hc_nnoutput_read_records(const char *path, hc_nnoutput *outs, unsigned char *got, size_t n, hc_err *err);
#endif
