/* The evaluation settings a board config gives (optimism, PDA, temperature, human-SL profile):
 * the evaluator applies them and position backends are configured with them. */
#ifndef HC_SETTINGS_H
#define HC_SETTINGS_H

/* The settings of a board config that act on evaluation (testgpuerror's defaults:
 * optimism 0, PDA 0, temperature 1, human-SL profile "preaz_5k"). */
typedef struct hc_eval_settings {
    int nn_x, nn_y;
    double policy_optimism;
    double playout_doubling_advantage;
    float policy_temperature;
    char meta_profile[32];
} hc_eval_settings;

hc_eval_settings hc_eval_settings_default(int nn_x, int nn_y);

#endif
