/* Every rank runs the same parameters, or none runs. */
#ifndef CB_PARAMS_AGREE_H
#define CB_PARAMS_AGREE_H

#include "control/control.h"
#include <stddef.h>

#include "options/params.h"

/*
 * Collective over comm, after every rank has parsed its command line
 * without error. Returns 0 when every rank parsed the same parameters, else
 * -1 on every rank, with one line in err (meaningful on rank 0) naming the
 * first option that differs, rank 0's value and another rank's.
 */
int cb_params_agree(const cb_params *p, cb_ctl *comm, char *err, size_t err_len);

/* The options compared, one per line of the option table, in its order. */
size_t cb_params_agree_count(void);

/* Option i as messages name it ("-n/--iters", "--redop") into name, and its
 * value under p as the ranks compare it into value. Returns 1; 0 when the
 * option changes no run (-g, -t: nothing to agree, value ""); -1 when its
 * table line does not say how to agree it (a bug unit_params_agree finds). */
int cb_params_agree_text(const cb_params *p, size_t i, char *name, size_t name_len,
                         char *value, size_t value_len);

#endif
