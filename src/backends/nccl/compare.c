/*
 * -B's compare on the GPU. Each launch's output is compared with the first
 * launch's where both lie, in device memory, by a kernel that counts the
 * differing elements; only that count (8 bytes) crosses to the host, where
 * the host compare would copy the whole output first (bench/RESULTS.md
 * gives both costs).
 *
 * The kernel (nccl/compare.cu) is built into the program as PTX text and
 * handed to the CUDA runtime (cudaLibraryLoadData, which configure looks
 * for: a build or a runtime loaded without it compares on the host; the
 * calls are weak, nccl/weak.h), which has
 * the driver compile it for the GPU it finds: no nvcc at build time, and
 * no list of GPU architectures to keep current. Before it is trusted, a
 * self-test on this GPU compares buffers whose differences are known, for
 * every element size. Where loading or the self-test fails on any rank,
 * every rank compares on the host instead, and the preamble says why.
 */
#include "config.h"
#include "nccl_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_ptx.h"

#define COMPARE_KERNEL "cb_count_differing"
#define COMPARE_THREADS 256
#define COMPARE_BLOCKS_PER_SM 8
#define SELFTEST_BYTES 65536

#ifdef CB_HAVE_CUDA_LIBRARY
struct nccl_compare {
    cudaLibrary_t library;
    cudaKernel_t kernel;
    unsigned long long *differing;   /* device memory: the kernel's count */
    unsigned int max_blocks;
};

/* Launches the kernel on nb's stream over count elements of esize bytes,
 * in at most max_blocks blocks, and waits; *differing its count. */
static int launch(nccl_backend *nb, struct nccl_compare *c, const void *a, const void *b,
                  size_t count, size_t esize, unsigned int max_blocks, size_t *differing)
{
    cb_backend *be = &nb->base;
    unsigned long long found = 0, n = count;
    unsigned int width = (unsigned int)esize;
    *differing = 0;
    if (count == 0)
        return 0;
    size_t wanted = (count + COMPARE_THREADS - 1) / COMPARE_THREADS;
    dim3 grid = {(unsigned int)(wanted < max_blocks ? wanted : max_blocks), 1, 1};
    dim3 block = {COMPARE_THREADS, 1, 1};
    void *args[] = {&a, &b, &n, &width, &c->differing};
    if (CUDA_CALL(be, cudaMemsetAsync(c->differing, 0, sizeof *c->differing, nb->stream)) != 0 ||
        CUDA_CALL(be, cudaLaunchKernel((const void *)c->kernel, grid, block, args, 0,
                                       nb->stream)) != 0 ||
        CUDA_CALL(be, cudaMemcpyAsync(&found, c->differing, sizeof found,
                                      cudaMemcpyDeviceToHost, nb->stream)) != 0 ||
        cb_nccl_wait(be) != 0)
        return -1;
    *differing = (size_t)found;
    return 0;
}

/* Two buffers that differ in bytes 4, 5 and the last, compared at each
 * element size in two blocks (so that every thread loops), and one buffer
 * with itself: a kernel that miscounts, skips elements or writes nothing
 * fails here. 0, or -1 with the first wrong answer in b->error. */
static int self_test(nccl_backend *nb, struct nccl_compare *c)
{
    cb_backend *be = &nb->base;
    static const size_t esizes[] = {1, 2, 4, 8}, expected[] = {3, 2, 2, 2};
    char *a = NULL, *b = NULL;
    int failed = CUDA_CALL(be, cudaMalloc((void **)&a, SELFTEST_BYTES)) != 0 ||
                 CUDA_CALL(be, cudaMalloc((void **)&b, SELFTEST_BYTES)) != 0 ||
                 CUDA_CALL(be, cudaMemsetAsync(a, 0, SELFTEST_BYTES, nb->stream)) != 0 ||
                 CUDA_CALL(be, cudaMemsetAsync(b, 0, SELFTEST_BYTES, nb->stream)) != 0 ||
                 CUDA_CALL(be, cudaMemsetAsync(b + 4, 1, 2, nb->stream)) != 0 ||
                 CUDA_CALL(be, cudaMemsetAsync(b + SELFTEST_BYTES - 1, 1, 1, nb->stream)) != 0;
    for (size_t i = 0; !failed && i < sizeof esizes / sizeof esizes[0]; i++) {
        size_t got = 0, same = 0, count = SELFTEST_BYTES / esizes[i];
        failed = launch(nb, c, a, b, count, esizes[i], 2, &got) != 0 ||
                 launch(nb, c, a, a, count, esizes[i], 2, &same) != 0;
        if (!failed && (got != expected[i] || same != 0)) {
            cb_backend_fail(be, "its self-test counted %zu and %zu differing elements of %zu "
                            "bytes where there are %zu and 0", got, same, esizes[i],
                            expected[i]);
            failed = 1;
        }
    }
    cudaFree(a);
    cudaFree(b);
    return failed ? -1 : 0;
}

static int load(nccl_backend *nb, struct nccl_compare *c)
{
    cb_backend *be = &nb->base;
    int sms = 0;
    if (CUDA_CALL(be, cudaLibraryLoadData(&c->library, cb_nccl_compare_ptx, NULL, NULL, 0,
                                          NULL, NULL, 0)) != 0)
        return -1;
    if (CUDA_CALL(be, cudaLibraryGetKernel(&c->kernel, c->library, COMPARE_KERNEL)) != 0 ||
        CUDA_CALL(be, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                             nb->device)) != 0 ||
        CUDA_CALL(be, cudaMalloc((void **)&c->differing, sizeof *c->differing)) != 0)
        return -1;
    c->max_blocks = (unsigned int)(sms > 0 ? sms : 1) * COMPARE_BLOCKS_PER_SM;
    return self_test(nb, c);
}

static void unload(struct nccl_compare *c)
{
    if (c == NULL)
        return;
    cudaFree(c->differing);
    if (c->library != NULL)
        cudaLibraryUnload(c->library);
    free(c);
}
#endif


void cb_nccl_compare_prepare(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    cb_ctl *run = nb->config.run_comm;
    int me = run->rank, nranks = run->size, ok = 0;
    char why[CB_BACKEND_ERRLEN];
    const char *host = getenv(CB_NCCL_HOST_COMPARE_ENV);
#ifdef CB_HAVE_CUDA_LIBRARY
    struct nccl_compare *c = NULL;
    if (host != NULL && strcmp(host, "1") == 0) {
        snprintf(why, sizeof why, CB_NCCL_HOST_COMPARE_ENV "=1 on rank %d", me);
    } else if (!cb_cuda_exports_library()) {
        int runtime = 0;
        cudaRuntimeGetVersion(&runtime);
        snprintf(why, sizeof why, "the CUDA runtime loaded on rank %d (%d.%d) does not export "
                 "cudaLibraryLoadData", me, runtime / 1000, runtime % 1000 / 10);
    } else if ((c = calloc(1, sizeof *c)) == NULL) {
        snprintf(why, sizeof why, "the GPU compare kernel failed on rank %d: out of memory", me);
    } else {
        char kept[CB_BACKEND_ERRLEN];
        memcpy(kept, b->error, sizeof kept);
        ok = load(nb, c) == 0;
        if (!ok)
            snprintf(why, sizeof why, "the GPU compare kernel failed on rank %d: %.300s", me,
                     b->error);
        memcpy(b->error, kept, sizeof kept);   /* a fallback, not a failure */
        /* A failed call's error was read where it was reported
         * (cb_nccl_cuda_check): a later cudaGetLastError sees none. */
    }
#else
    (void)host;
    snprintf(why, sizeof why, "the CUDA runtime this program was built with has no "
             "cudaLibraryLoadData");
#endif
    /* Every rank of the run (every --split group alike) compares the same
     * way, so that the memory each counts for its sizes (the reference on
     * the device or the host) agrees; an environment that differs between
     * ranks is agreed on too. */
    int all = 0;
    cb_ctl_allreduce(run, &ok, &all, 1, CB_CTL_INT, CB_CTL_LAND);
    if (all) {
#ifdef CB_HAVE_CUDA_LIBRARY
        nb->compare = c;
#endif
        b->repeat_on_device = 1;
        return;
    }
#ifdef CB_HAVE_CUDA_LIBRARY
    unload(c);
#endif
    int mine = ok ? nranks : me, first = 0;
    cb_ctl_allreduce(run, &mine, &first, 1, CB_CTL_INT, CB_CTL_MIN);
    /* The first rank that did not load it says why. */
    cb_ctl_bcast(run, why, sizeof why, first);
    char text[CB_BACKEND_ERRLEN];
    snprintf(text, sizeof text, "-B compares on the host (outputs copied from the GPU): %.400s",
             why);
    cb_backend_add_notice(b, "%s", text);
}

void cb_nccl_compare_release(nccl_backend *nb)
{
    /* A split's kernel is its parent's. */
    if (nb->parent == NULL) {
#ifdef CB_HAVE_CUDA_LIBRARY
        unload(nb->compare);
#endif
    }
    nb->compare = NULL;
}

int cb_nccl_compare_on_device(nccl_backend *nb, const void *out, const void *ref, size_t count,
                              size_t esize, size_t *differing)
{
#ifdef CB_HAVE_CUDA_LIBRARY
    return launch(nb, nb->compare, out, ref, count, esize, nb->compare->max_blocks, differing);
#else
    (void)out, (void)ref, (void)count, (void)esize;
    *differing = 0;
    return cb_backend_fail(&nb->base, "-B: no GPU compare in this build");
#endif
}
