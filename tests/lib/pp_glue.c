/* Test glue: model.h's struct hc_postprocess and postprocess.h's function hc_postprocess()
 * cannot be declared in one translation unit (a name clash between the two modules, to be
 * resolved on main); tests that need both call the post-processing through this file. */
#include "postprocess.h"

int hc_test_postprocess(const hc_pp_model *m, const hc_pp_settings *s, const hc_pp_position *pos,
                        int nn_x, int nn_y, const hc_raw_row *raw, float *scratch, hc_nnoutput *out,
                        hc_err *err);

int hc_test_postprocess(const hc_pp_model *m, const hc_pp_settings *s, const hc_pp_position *pos,
                        int nn_x, int nn_y, const hc_raw_row *raw, float *scratch, hc_nnoutput *out,
                        hc_err *err)
{
    return hc_postprocess_row(m, s, pos, nn_x, nn_y, raw, scratch, out, err);
}
