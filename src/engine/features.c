/* The feature table: one line per feature driver, in the order its hooks
 * run. A new feature is its own file (an cb_eng_feature with its hooks and a
 * state struct of its own, feature.h) and two lines here. lifecycle.c
 * hands the table to the core (e->features), so that no core file names a
 * feature. */
#include "engine_int.h"

extern const cb_eng_feature cb_eng_feature_comm_time;   /* comm_time.c: -o comm_init */
extern const cb_eng_feature cb_eng_feature_expect;   /* expect_driver.c: --expect */
extern const cb_eng_feature cb_eng_feature_repeat;   /* repeat.c: -B */
extern const cb_eng_feature cb_eng_feature_scan;     /* scan_driver.c: -o scan */
extern const cb_eng_feature cb_eng_feature_tally;    /* tally.c: -N's tally */

const cb_eng_feature *const cb_eng_feature_table[] = {
    &cb_eng_feature_comm_time,
    &cb_eng_feature_expect,
    &cb_eng_feature_repeat,
    &cb_eng_feature_scan,
    &cb_eng_feature_tally,
};
const int cb_eng_nfeatures = (int)(sizeof cb_eng_feature_table / sizeof cb_eng_feature_table[0]);
