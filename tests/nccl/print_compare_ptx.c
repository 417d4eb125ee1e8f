/* Writes the PTX text that the NCCL backend hands the CUDA runtime for -B
 * (src/backends/nccl/compare_ptx.h), for tests/nccl/compare_ptx.sh. */
#include <stdio.h>

#include "backends/nccl/compare_ptx.h"

int main(void)
{
    return fputs(cb_nccl_compare_ptx, stdout) == EOF;
}
