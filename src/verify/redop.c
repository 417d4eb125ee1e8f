#include "verify/redop.h"

#include "common/names.h"

static const struct {
    const char *name;
    const char *aliases;
} redop_table[CB_REDOP_COUNT] = {
    [CB_SUM] = {"sum", ""},
    [CB_PROD] = {"prod", "product"},
    [CB_MIN] = {"min", ""},
    [CB_MAX] = {"max", ""},
    [CB_AVG] = {"avg", "average"},
    [CB_PREMULSUM] = {"premulsum", "premul_sum premul"},
};

const char *cb_redop_name(cb_redop op)
{
    if (op < 0 || op >= CB_REDOP_COUNT)
        return "none";
    return redop_table[op].name;
}

int cb_redop_lookup(const char *name, cb_redop *out)
{
    for (int op = 0; op < CB_REDOP_COUNT; op++) {
        if (cb_name_matches(name, redop_table[op].name, redop_table[op].aliases)) {
            *out = (cb_redop)op;
            return 0;
        }
    }
    return -1;
}
