/* The feature table: one line per feature driver, in the order its hooks
 * run. A new feature is its own file (an eng_feature with its hooks and a
 * state struct of its own, feature.h) and two lines here. lifecycle.c
 * hands the table to the core (e->features), so that no core file names a
 * feature. */
#include "engine_int.h"

extern const eng_feature eng_feature_comm_time;   /* comm_time.c: -o comm_init */
extern const eng_feature eng_feature_expect;   /* expect.c: --expect */
extern const eng_feature eng_feature_repeat;   /* repeat.c: -B */
extern const eng_feature eng_feature_scan;     /* scan_driver.c: -o scan */
extern const eng_feature eng_feature_tally;    /* tally.c: -N's tally */

const eng_feature *const eng_feature_table[] = {
    &eng_feature_comm_time,
    &eng_feature_expect,
    &eng_feature_repeat,
    &eng_feature_scan,
    &eng_feature_tally,
};
const int eng_nfeatures = (int)(sizeof eng_feature_table / sizeof eng_feature_table[0]);
