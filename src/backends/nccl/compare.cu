/*
 * -B's compare on the GPU (nccl/compare.c loads it): the elements of esize
 * bytes (1, 2, 4 or 8) at a and b, count of each, whose bits differ are
 * added to *differing. Element loads of the element's own width, so that
 * any offset --unalign gives a buffer stays aligned for them.
 *
 * Not compiled by the build: src/backends/nccl/compare_ptx.sh turns it into
 * the PTX text of nccl/compare_ptx.h, which the program hands to the CUDA
 * runtime (cudaLibraryLoadData) and the driver compiles for the GPU it
 * finds. Regenerate that header after any change here (docs/design/repeat-check.md).
 */
template <typename T>
__device__ static unsigned long long differing_in(const void *a, const void *b,
                                                  unsigned long long count)
{
    const T *x = (const T *)a, *y = (const T *)b;
    unsigned long long mine = 0, stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < count; i += stride)
        mine += x[i] != y[i];
    return mine;
}

extern "C" __global__ void cb_count_differing(const void *a, const void *b,
                                              unsigned long long count, unsigned int esize,
                                              unsigned long long *differing)
{
    unsigned long long mine = esize == 1   ? differing_in<unsigned char>(a, b, count)
                              : esize == 2 ? differing_in<unsigned short>(a, b, count)
                              : esize == 4 ? differing_in<unsigned int>(a, b, count)
                                           : differing_in<unsigned long long>(a, b, count);
    /* Differences are rare (a fault): one atomic per thread that saw any. */
    if (mine != 0)
        atomicAdd(differing, mine);
}
