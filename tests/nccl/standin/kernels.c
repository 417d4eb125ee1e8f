/*
 * The CUDA runtime's library and kernel calls that -B's GPU compare makes
 * (src/backends/nccl/compare.c): cudaLibraryLoadData takes PTX text, which
 * is checked as the driver would before compiling it (its .version within
 * what this driver reads, its .target no newer than the device, each
 * .entry and its parameters); cudaLibraryGetKernel finds an entry by name;
 * cudaLaunchKernel checks the launch's configuration and buffers and runs
 * the kernel's CPU model, at once, like the stand-in's copies, or, on a
 * capturing stream, records it with its arguments' values for each graph
 * launch to run (capture.c). A kernel with no model here or a launch of a
 * kernel whose library was unloaded is a VIOLATION (a graph launched after
 * its kernel's library was unloaded is not checked).
 *
 * Environment, FOR TESTING ONLY (each takes a process's rank, standin.h):
 *   CB_STANDIN_FAIL_LIBRARY=R   cudaLibraryLoadData fails as a driver that
 *                               cannot compile the PTX (cudaErrorInvalidPtx)
 *   CB_STANDIN_KERNEL_NOOP=R    kernels launch and complete but write
 *                               nothing, as a kernel built wrong
 *   CB_STANDIN_FAIL_LAUNCH=R    cudaLaunchKernel fails as a launch that asks
 *                               too much (cudaErrorLaunchOutOfResources)
 *   CB_STANDIN_PTX_MAX=V        the newest PTX version the driver reads,
 *                               major * 10 + minor (default 90: CUDA 13.0)
 *
 * cudaGetLastError, as cuda_runtime_api.h has it: "Returns the last error
 * that has been produced by any of the runtime calls in the same instance
 * of the CUDA Runtime library in the host thread and resets it to
 * ::cudaSuccess". Every cuda* call of the stand-in (cudart.c, capture.c,
 * this file) returns its errors through standin_cuda_fail, which records
 * them, except cudaErrorNotReady, which "is not actually an error"
 * (driver_types.h). None of the stand-in's errors is sticky (those leave
 * "the process in an inconsistent state and any further CUDA work will
 * return the same error", driver_types.h cudaErrorIllegalAddress), so each
 * resets once read. NCCL links its own runtime (src/Makefile, CUDARTLIB
 * ?= cudart_static, v2.28.9-1), whose errors are not the program's: the
 * stand-in's NCCL calls that fail a cuda* call put the error back. An
 * error still unread when the process exits, which the next
 * cudaGetLastError would have blamed on another call, is counted in the
 * trace's exit line (cuda_error=N).
 */
#include "config.h"
#include "standin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What cudaGetLastError returns once: the thread's last cuda* call that failed. */
static _Thread_local cudaError_t last_error = cudaSuccess;

const char *standin_kernel_error_string(cudaError_t error)
{
    switch (error) {
    case cudaErrorInvalidPtx: return "a PTX JIT compilation failed";
    case cudaErrorUnsupportedPtxVersion:
        return "the provided PTX was compiled with an unsupported toolchain.";
    case cudaErrorSymbolNotFound: return "named symbol not found";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    default: return "unknown error (CUDA stand-in)";
    }
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t err = last_error;
    last_error = cudaSuccess;
    standin_trace("cudaGetLastError %d", (int)err);
    return err;
}

cudaError_t standin_unread_error(void)
{
    return last_error;
}

cudaError_t standin_cuda_fail(cudaError_t err)
{
    if (err != cudaErrorNotReady)
        last_error = err;
    return err;
}

void standin_cuda_restore(cudaError_t unread)
{
    last_error = unread;
}

/* Where the CUDA runtime's headers lack the library calls (configure's
 * check), the program makes none, and the stand-in models none. */
#ifdef CB_HAVE_CUDA_LIBRARY

#define MAX_LIBRARIES 16
#define MAX_ENTRIES 8
#define NAME_LEN 64

struct CUkern_st {
    char name[NAME_LEN];
    int nparams;
};

struct CUlib_st {
    struct CUkern_st entries[MAX_ENTRIES];
    int nentries;
};

static struct CUlib_st *loaded[MAX_LIBRARIES];

/* The number after prefix at the start of a line of ptx: "7.0" as 70,
 * "sm_90" (prefix ".target sm_") as 90; -1 without one. */
static int declared(const char *ptx, const char *prefix)
{
    size_t len = strlen(prefix);
    const char *line = ptx;
    while (line != NULL) {
        line += strspn(line, " \t");
        int major = 0, minor = 0;
        if (strncmp(line, prefix, len) == 0) {
            int n = sscanf(line + len, "%d.%d", &major, &minor);
            return n == 2 ? major * 10 + minor : n == 1 ? major : -1;
        }
        line = strchr(line, '\n');
        line = line != NULL ? line + 1 : NULL;
    }
    return -1;
}

/* Each ".entry NAME(" and the ".param" declarations up to its ")". */
static int read_entries(const char *ptx, struct CUlib_st *lib)
{
    for (const char *at = strstr(ptx, ".entry "); at != NULL; at = strstr(at + 1, ".entry ")) {
        if (lib->nentries == MAX_ENTRIES)
            return -1;
        struct CUkern_st *k = &lib->entries[lib->nentries++];
        const char *name = at + strlen(".entry "), *open = strchr(name, '(');
        const char *close = open != NULL ? strchr(open, ')') : NULL;
        if (close == NULL || (size_t)(open - name) >= NAME_LEN || open == name)
            return -1;
        memcpy(k->name, name, (size_t)(open - name));
        k->name[open - name] = '\0';
        for (const char *p = strstr(open, ".param"); p != NULL && p < close;
             p = strstr(p + 1, ".param"))
            k->nparams++;
    }
    return lib->nentries > 0 ? 0 : -1;
}

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                enum cudaJitOption *jit_options, void **jit_values,
                                unsigned int njit, enum cudaLibraryOption *library_options,
                                void **library_values, unsigned int nlibrary)
{
    (void)jit_options, (void)jit_values, (void)njit;
    (void)library_options, (void)library_values, (void)nlibrary;
    if (library == NULL || code == NULL)
        return standin_cuda_fail(cudaErrorInvalidValue);
    const char *ptx = code;
    int version = declared(ptx, ".version "), target = declared(ptx, ".target sm_");
    int newest = (int)standin_env_long("CB_STANDIN_PTX_MAX", 90);
    int device = (int)standin_env_long("CB_STANDIN_CC", 90);
    standin_trace("cudaLibraryLoadData version=%d target=%d", version, target);
    if (standin_fault("CB_STANDIN_FAIL_LIBRARY") || version < 0 || target < 0)
        return standin_cuda_fail(cudaErrorInvalidPtx);
    if (version > newest)
        return standin_cuda_fail(cudaErrorUnsupportedPtxVersion);
    if (target > device)   /* ptxas: the .target is newer than the GPU */
        return standin_cuda_fail(cudaErrorInvalidPtx);
    int slot = 0;
    while (slot < MAX_LIBRARIES && loaded[slot] != NULL)
        slot++;
    struct CUlib_st *lib = slot < MAX_LIBRARIES ? calloc(1, sizeof *lib) : NULL;
    if (lib == NULL)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    if (read_entries(ptx, lib) != 0) {
        free(lib);
        return standin_cuda_fail(cudaErrorInvalidPtx);
    }
    loaded[slot] = lib;
    standin_count(STANDIN_LIBRARY, 1);
    *library = lib;
    return cudaSuccess;
}

/* lib's place among the loaded libraries, -1 when it is not loaded. */
static int slot_of(const struct CUlib_st *lib)
{
    for (int i = 0; i < MAX_LIBRARIES; i++)
        if (lib != NULL && loaded[i] == lib)
            return i;
    return -1;
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *kernel, cudaLibrary_t library, const char *name)
{
    if (slot_of(library) < 0)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    for (int i = 0; i < library->nentries; i++)
        if (strcmp(library->entries[i].name, name) == 0) {
            *kernel = &library->entries[i];
            return cudaSuccess;
        }
    return standin_cuda_fail(cudaErrorSymbolNotFound);
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    int slot = slot_of(library);
    if (slot < 0)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    loaded[slot] = NULL;
    free(library);
    standin_count(STANDIN_LIBRARY, -1);
    return cudaSuccess;
}

/* nccl/compare.cu's cb_count_differing(a, b, count, esize, differing). */
static void count_differing(void **args)
{
    const unsigned char *a = *(const void **)args[0], *b = *(const void **)args[1];
    unsigned long long count = *(unsigned long long *)args[2];
    unsigned int esize = *(unsigned int *)args[3];
    unsigned long long *differing = *(unsigned long long **)args[4];
    size_t width = esize == 1 || esize == 2 || esize == 4 ? esize : 8;   /* as the kernel */
    standin_devmem_check(a, count * width, "cb_count_differing's first buffer");
    standin_devmem_check(b, count * width, "cb_count_differing's second buffer");
    standin_devmem_check(differing, sizeof *differing, "cb_count_differing's count");
    unsigned long long found = 0;
    if (memcmp(a, b, count * width) != 0)   /* element by element only where they differ */
        for (unsigned long long i = 0; i < count; i++)
            found += memcmp(a + i * width, b + i * width, width) != 0;
    *differing += found;
}

/* Each model's parameters' sizes (a captured launch copies their values). */
static const struct {
    const char *name;
    int nparams;
    size_t sizes[STANDIN_KERNEL_MAX_ARGS];
    void (*run)(void **args);
} models[] = {
    {"cb_count_differing", 5, {8, 8, 8, 4, 8}, count_differing},
};

/* A launch on a capturing stream becomes a kernel node holding the
 * arguments' values as they are now (cudaLaunchKernel: each args[i]
 * points "to the region of memory from which the actual parameter will be
 * copied", at the call), run at each graph launch. */
static cudaError_t capture_launch(int model, void **args, cudaStream_t stream)
{
    standin_op node = {.kind = STANDIN_OP_KERNEL, .kernel_model = model};
    for (int i = 0; i < models[model].nparams; i++)
        memcpy(node.kernel_args + 8 * i, args[i], models[model].sizes[i]);
    if (standin_stream_submit(stream, &node) != ncclSuccess)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    return cudaSuccess;
}

ncclResult_t standin_kernel_replay(const standin_op *op)
{
    /* The models take void **, as cudaLaunchKernel's args: a copy of the values. */
    _Alignas(8) unsigned char values[sizeof op->kernel_args];
    memcpy(values, op->kernel_args, sizeof values);
    void *args[STANDIN_KERNEL_MAX_ARGS];
    for (int i = 0; i < STANDIN_KERNEL_MAX_ARGS; i++)
        args[i] = values + 8 * i;
    if (!standin_fault("CB_STANDIN_KERNEL_NOOP"))
        models[op->kernel_model].run(args);
    return ncclSuccess;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                             size_t shared, cudaStream_t stream)
{
    /* Found among the live libraries' entries by address, never read
     * through: an unloaded library's memory is gone. */
    const struct CUkern_st *k = NULL;
    for (int i = 0; i < MAX_LIBRARIES && k == NULL; i++)
        for (int e = 0; loaded[i] != NULL && e < loaded[i]->nentries; e++)
            if (func == (const void *)&loaded[i]->entries[e])
                k = &loaded[i]->entries[e];
    if (k == NULL) {
        standin_violation("cudaLaunchKernel of a kernel that no loaded library holds");
        return standin_cuda_fail(cudaErrorInvalidDeviceFunction);
    }
    standin_trace("cudaLaunchKernel %s grid=%u block=%u", k->name, grid.x, block.x);
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535 ||
        threads == 0 || threads > 1024 || block.z > 64 || shared > 48 * 1024)
        return standin_cuda_fail(cudaErrorInvalidConfiguration);
    if (standin_fault("CB_STANDIN_FAIL_LAUNCH"))
        return standin_cuda_fail(cudaErrorLaunchOutOfResources);
    if (standin_capture_invalidated(stream))   /* capture.c */
        return standin_cuda_fail(cudaErrorStreamCaptureInvalidated);
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        if (strcmp(models[m].name, k->name) != 0)
            continue;
        if (k->nparams != models[m].nparams || (k->nparams > 0 && args == NULL)) {
            standin_violation("cudaLaunchKernel of %s: its PTX declares %d parameters, the "
                              "model %d%s", k->name, k->nparams, models[m].nparams,
                              args == NULL ? ", and no arguments were given" : "");
            return standin_cuda_fail(cudaErrorInvalidValue);
        }
        if (standin_stream_capturing(stream))
            return capture_launch((int)m, args, stream);
        if (!standin_fault("CB_STANDIN_KERNEL_NOOP"))
            models[m].run(args);
        return cudaSuccess;
    }
    standin_violation("cudaLaunchKernel of %s, which the stand-in has no model of", k->name);
    return standin_cuda_fail(cudaErrorInvalidDeviceFunction);
}
#else
ncclResult_t standin_kernel_replay(const standin_op *op)
{
    (void)op;   /* no cudaLaunchKernel to capture one */
    return ncclInternalError;
}
#endif
