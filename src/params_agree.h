/* Every rank runs the same parameters, or none runs. */
#ifndef CB_PARAMS_AGREE_H
#define CB_PARAMS_AGREE_H

#include <mpi.h>
#include <stddef.h>

#include "params.h"

/*
 * Collective over comm, after every rank has parsed its command line
 * without error. Returns 0 when every rank parsed the same parameters, else
 * -1 on every rank, with one line in err (meaningful on rank 0) naming the
 * first option that differs, rank 0's value and another rank's.
 */
int cb_params_agree(const cb_params *p, MPI_Comm comm, char *err, size_t err_len);

#endif
