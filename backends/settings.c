/* The evaluation settings' defaults (testgpuerror's). */
#include "backends/settings.h"

#include <stdio.h>
#include <string.h>

hc_eval_settings hc_eval_settings_default(int nn_x, int nn_y)
{
    hc_eval_settings s;
    memset(&s, 0, sizeof s);
    s.nn_x = nn_x;
    s.nn_y = nn_y;
    s.policy_temperature = 1.0f;
    snprintf(s.meta_profile, sizeof s.meta_profile, "preaz_5k");
    return s;
}
