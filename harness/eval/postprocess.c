/* Raw network heads to KataGo's outputs, as KataGo's backends' getOutput computes them. */
#include "harness/eval/postprocess.h"

#include <math.h>
#include <string.h>

#include "harness/base/hcmath.h"
#include "harness/go/symmetry.h"

static double soft_plus(double x)
{
    return x > 40.0 ? x : hc_log(1.0 + hc_exp(x));
}

static const double two_over_pi = 0.63661977236758134308;
static const double pi_over_two = 1.57079632679489661923;

/* KataGo's ScoreValue::approxWhiteScoreOfScoreValueSmooth with center 0 and scale 2. */
static double score_of_score_value(double score_value, double sqrt_board_area)
{
    double x = score_value * pi_over_two;
    double unscaled = x >= pi_over_two - 1e-6 ? 1e6 : x <= -pi_over_two + 1e-6 ? -1e6 : tan(x);
    return unscaled * (2.0 * sqrt_board_area);
}

static int nonfinite(hc_err *err, const char *field)
{
    return hc_err_set(err, HC_EBACKEND, "non-finite %s", field);
}

int hc_postprocess_row(const hc_pp_model *m, const hc_pp_settings *s, const hc_pp_position *pos, int nn_x, int nn_y,
                   const hc_raw_row *raw, float *scratch, hc_nnoutput *out, hc_err *err)
{
    const int area = nn_x * nn_y;
    const int policy_size = area + 1;
    float *policy = out->policy_probs;
    const float optimism = m->has_meta ? 0.0f : (float)s->policy_optimism;

    /* The backend's part (getOutput): optimism mixing, then the inverse symmetry. */
    if (m->policy_channels == 2 || (m->policy_channels == 4 && m->model_version >= 16)) {
        const float *p0 = raw->policy, *p1 = raw->policy + area;
        for (int i = 0; i < area; i++)
            scratch[i] = p0[i] + (p1[i] - p0[i]) * optimism;
        hc_sym_unapply_planes(scratch, policy, 1, nn_y, nn_x, pos->symmetry);
        policy[area] = raw->policy_pass[0] + (raw->policy_pass[1] - raw->policy_pass[0]) * optimism;
    } else if (m->policy_channels == 1) {
        hc_sym_unapply_planes(raw->policy, policy, 1, nn_y, nn_x, pos->symmetry);
        policy[area] = raw->policy_pass[0];
    } else {
        return hc_err_set(err, HC_EINTERNAL, "%d policy channels in a version %d model", m->policy_channels,
                          m->model_version);
    }
    out->policy_optimism_used = (float)(m->has_meta ? 0.0 : s->policy_optimism);

    /* NNEvaluator: temperature, legality, softmax. */
    const float scaling = m->output_scale_multiplier / s->policy_temperature;
    float max_policy = -1e25f;
    int legal_count = 0;
    for (int i = 0; i < policy_size; i++) {
        if (!isfinite(policy[i]))
            return hc_err_set(err, HC_EBACKEND, "non-finite policy logit at index %d", i);
        float v;
        if (pos->legal[i]) {
            legal_count++;
            v = policy[i] * scaling;
        } else {
            v = -1e30f;
        }
        policy[i] = v;
        if (v > max_policy)
            max_policy = v;
    }
    if (legal_count == 0)
        return hc_err_set(err, HC_EINTERNAL, "no legal move in the position");
    float sum = 0.0f;
    if (s->enable_passing_hacks) {
        for (int i = 0; i < policy_size - 1; i++) {
            policy[i] = hc_expf(policy[i] - max_policy);
            sum += policy[i];
        }
        float pass = hc_expf(policy[area] - max_policy);
        float cap = sum * 19.0f;
        policy[area] = fmaxf(1e-20f, fminf(pass, cap));
        sum += policy[area];
    } else {
        for (int i = 0; i < policy_size; i++) {
            policy[i] = hc_expf(policy[i] - max_policy);
            sum += policy[i];
        }
    }
    if (!isfinite(sum))
        return nonfinite(err, "policy sum");
    if (sum <= 0.0f) {
        float uniform = 1.0f / (float)legal_count;
        for (int i = 0; i < policy_size; i++)
            policy[i] = pos->legal[i] ? uniform : -1.0f;
    } else {
        for (int i = 0; i < policy_size; i++)
            policy[i] = pos->legal[i] ? policy[i] / sum : -1.0f;
    }

    /* Values: the net speaks for the player to move; outputs are from white's side. */
    /* KataGo multiplies float by float here, then widens: keep that. */
    const float osm = m->output_scale_multiplier;
    const int white = pos->next_pla_white;
    const double sqrt_area = sqrt((double)pos->x_size * (double)pos->y_size);
    float sc[6];
    int v = m->model_version;
    if (v >= 9) {
        for (int i = 0; i < 6; i++)
            sc[i] = raw->score[i];
    } else if (v >= 8) {
        for (int i = 0; i < 4; i++)
            sc[i] = raw->score[i];
        sc[4] = sc[5] = 0;
    } else if (v >= 4) {
        sc[0] = raw->score[0];
        sc[1] = raw->score[1];
        sc[2] = sc[0];
        sc[3] = sc[4] = sc[5] = 0;
    } else {
        sc[0] = raw->score[0];
        sc[1] = sc[0] * sc[0];
        sc[2] = sc[0];
        sc[3] = sc[4] = sc[5] = 0;
    }
    if (v == 3) {
        double score_value = hc_atan((double)(sc[0] * osm)) * two_over_pi;
        double wl = (double)(raw->value[0] * osm), ll = (double)(raw->value[1] * osm), nl = (double)(raw->value[2] * osm);
        double mx = fmax(fmax(wl, ll), nl);
        double w = hc_exp(wl - mx), l = hc_exp(ll - mx), n = hc_exp(nl - mx);
        double total = w + l + n;
        w /= total;
        l /= total;
        n /= total;
        if (!isfinite(total) || !isfinite(score_value))
            return nonfinite(err, "value");
        float score = (float)score_of_score_value(score_value, sqrt_area);
        out->white_win_prob = (float)(white ? w : l);
        out->white_loss_prob = (float)(white ? l : w);
        out->white_no_result_prob = (float)n;
        out->white_score_mean = white ? score : -score;
        out->white_score_mean_sq = out->white_score_mean * out->white_score_mean;
        out->white_lead = out->white_score_mean;
        out->var_time_left = -1;
        out->shortterm_winloss_error = -1;
        out->shortterm_score_error = -1;
    } else if (v >= 4) {
        double wl = (double)(raw->value[0] * osm), ll = (double)(raw->value[1] * osm), nl = (double)(raw->value[2] * osm);
        double mean_pre = (double)(sc[0] * osm), stdev_pre = (double)(sc[1] * osm), lead_pre = (double)(sc[2] * osm);
        double vtl_pre = (double)(sc[3] * osm), stwl_pre = (double)(sc[4] * osm), stsc_pre = (double)(sc[5] * osm);
        if (pos->suppress_no_result)
            nl -= 100000.0;
        double mx = fmax(fmax(wl, ll), nl);
        double w = hc_exp(wl - mx), l = hc_exp(ll - mx), n = hc_exp(nl - mx);
        if (pos->suppress_no_result)
            n = 0.0;
        double total = w + l + n;
        w /= total;
        l /= total;
        n /= total;
        double mean = mean_pre * m->score_mean_multiplier;
        double stdev = soft_plus(stdev_pre) * m->score_stdev_multiplier;
        double mean_sq = mean * mean + stdev * stdev;
        double lead = lead_pre * m->lead_multiplier;
        double vtl = soft_plus(vtl_pre) * m->variance_time_multiplier;
        mean *= 1.0 - n;
        mean_sq *= 1.0 - n;
        lead *= 1.0 - n;
        double stwl, stsc;
        if (v >= 14) {
            double a = soft_plus(stwl_pre * 0.5);
            stwl = sqrt(a * a * m->shortterm_value_error_multiplier);
            double b = soft_plus(stsc_pre * 0.5);
            stsc = sqrt(b * b * m->shortterm_score_error_multiplier);
        } else if (v >= 10) {
            stwl = sqrt(soft_plus(stwl_pre) * m->shortterm_value_error_multiplier);
            stsc = sqrt(soft_plus(stsc_pre) * m->shortterm_score_error_multiplier);
        } else {
            stwl = soft_plus(stwl_pre);
            stsc = soft_plus(stsc_pre) * 10.0;
        }
        if (!isfinite(total))
            return nonfinite(err, "value (win/loss/no-result)");
        if (!isfinite(mean) || !isfinite(mean_sq))
            return nonfinite(err, "score mean");
        if (!isfinite(lead))
            return nonfinite(err, "lead");
        if (!isfinite(vtl) || !isfinite(stwl) || !isfinite(stsc))
            return nonfinite(err, "variance time or short-term error");
        out->white_win_prob = (float)(white ? w : l);
        out->white_loss_prob = (float)(white ? l : w);
        out->white_no_result_prob = (float)n;
        out->white_score_mean = white ? (float)mean : -(float)mean;
        out->white_score_mean_sq = (float)mean_sq;
        out->white_lead = white ? (float)lead : -(float)lead;
        if (v >= 9) {
            out->var_time_left = (float)vtl;
            out->shortterm_winloss_error = (float)stwl;
            out->shortterm_score_error = (float)stsc;
        } else {
            out->var_time_left = -1;
            out->shortterm_winloss_error = -1;
            out->shortterm_score_error = -1;
        }
    } else {
        return hc_err_set(err, HC_EINTERNAL, "no post-processing for model version %d", v);
    }

    if (raw->ownership && out->white_owner_map) {
        float *own = out->white_owner_map;
        hc_sym_unapply_planes(raw->ownership, own, 1, nn_y, nn_x, pos->symmetry);
        const float scale = m->output_scale_multiplier;
        for (int i = 0; i < area; i++) {
            int y = i / nn_x, x = i % nn_x;
            if (y >= pos->y_size || x >= pos->x_size) {
                own[i] = 0.0f;
            } else {
                if (!isfinite(own[i]))
                    return hc_err_set(err, HC_EBACKEND, "non-finite ownership at x=%d y=%d", x, y);
                float t = hc_tanhf(own[i] * scale);
                own[i] = white ? t : -t;
            }
        }
    }
    return 0;
}
