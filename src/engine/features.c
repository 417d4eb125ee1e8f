/* The feature table: one line per feature driver. A new feature is its own
 * file (an eng_feature with its hooks and a state struct of its own) and a
 * line here. */
#include "engine_int.h"

const eng_feature *const eng_feature_table[] = {
    &eng_feature_expect,
    &eng_feature_repeat,
};
const int eng_nfeatures = (int)(sizeof eng_feature_table / sizeof eng_feature_table[0]);
