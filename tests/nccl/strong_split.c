/*
 * A program with a strong reference to ncclCommSplit, as nccl-collbench
 * made before the call was weak (src/backends/nccl/weak.h). Linked with
 * -z now, the dynamic loader binds it at start-up, so on a library without
 * the call it never reaches main (tests/nccl/nccl_standin_znow.sh).
 * Prints "started" and exits 0 when it does; calls nothing.
 */
#include <stdio.h>

#include "backends/nccl/api.h"

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)   /* never in the test: the reference is what counts */
        return (int)ncclCommSplit(NULL, 0, 0, NULL, NULL);
    puts("started");
    return 0;
}
