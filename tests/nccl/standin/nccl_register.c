/*
 * The stand-in's buffer registration (-R): ncclCommRegister and
 * ncclCommDeregister (NCCL 2.19), ncclMemAlloc and ncclMemFree (2.19),
 * ncclCommWindowRegister and ncclCommWindowDeregister (2.27). Registration
 * changes no data here; what is modelled is the rules, each breach a
 * VIOLATION: a call the reported version lacks; deregistering a handle or
 * window twice (or one never made, or on another communicator); freeing a
 * registered buffer, or memory in a window, before deregistering; cudaFree
 * of ncclMemAlloc memory, ncclMemFree of other memory; a window on memory
 * not from ncclMemAlloc; destroying a communicator with registrations left.
 * Window registration is collective, as NCCL's (a barrier on the
 * communicator); deregistration is not (no bootstrap call in register.cc's
 * ncclCommWindowDeregister 2.27.3, nor in dev_runtime.cc's
 * symWindowDestroy 2.28.9 to 2.30.7). NCCL checks no readiness in
 * ncclCommRegister, ncclCommDeregister or ncclCommWindowDeregister
 * (register.cc, dev_runtime.cc, 2.19.3 to 2.30.7): the stand-in flags a
 * call on a communicator not ready (comms.rst 2.30.7, ncclCommGetAsyncError:
 * "users must query the states of the communicators until all the states
 * become ncclSuccess before calling another NCCL function") and goes on as
 * NCCL does. And one behaviour: reductions of half and bfloat16 whose
 * input lies in a symmetric window accumulate in float, rounded to the type
 * once at the end, as NCCL's symmetric kernels do.
 *
 * Where NCCL registers nothing, so does the stand-in, with NCCL's result:
 * NCCL_LOCAL_REGISTER=0 (read as NCCL reads it) gives ncclCommRegister a NULL
 * handle from 2.24; CB_STANDIN_SYMMETRIC=0 (or NCCL_WIN_ENABLE=0) stands for
 * a communicator without symmetric memory support, whose window registration
 * writes no window, by version (window_without_symmetric). Deregistering a
 * NULL handle or window succeeds, as in NCCL.
 */
#include <stdlib.h>

#include "standin.h"

#define STANDIN_FIRST_REGISTER NCCL_VERSION(2, 19, 0)
#define STANDIN_FIRST_WINDOW NCCL_VERSION(2, 27, 0)
#define STANDIN_MAX_REGISTRATIONS 64
/* NCCL_WIN_COLL_SYMMETRIC, which nccl.h before 2.27 lacks. */
#define STANDIN_WIN_SYMMETRIC 0x01

enum { REG_BUFFER = 1, REG_WINDOW = 2 };

typedef struct registration {
    int kind;                /* 0: free slot */
    struct ncclComm *comm;
    const char *lo;
    size_t bytes;
    int flags;               /* a window's */
} registration;

typedef struct mem_block {
    void *ptr;
    size_t bytes;
    size_t rounding;   /* charged to the device beyond bytes */
} mem_block;

static registration registrations[STANDIN_MAX_REGISTRATIONS];
static mem_block mem_blocks[STANDIN_MAX_REGISTRATIONS];

static int lacks(const char *name, long first)
{
    long version = standin_env_long("CB_STANDIN_NCCL_VERSION", NCCL_VERSION_CODE);
    if (version >= first)
        return 0;
    standin_violation("%s called, but the library reports version %ld, older than the "
                      "first with %s (%ld)", name, version, name, first);
    return 1;
}

static int overlaps(const char *a, size_t a_bytes, const char *b, size_t b_bytes)
{
    return a < b + b_bytes && b < a + a_bytes;
}

static registration *add(int kind, struct ncclComm *comm, const void *buf, size_t bytes)
{
    for (int i = 0; i < STANDIN_MAX_REGISTRATIONS; i++)
        if (registrations[i].kind == 0) {
            registrations[i] = (registration){kind, comm, buf, bytes, 0};
            return &registrations[i];
        }
    return NULL;
}

/* The live registration behind handle, else NULL after a VIOLATION. */
static registration *live(int kind, struct ncclComm *comm, const void *handle, const char *call)
{
    for (int i = 0; i < STANDIN_MAX_REGISTRATIONS; i++)
        if (handle == &registrations[i] && registrations[i].kind == kind) {
            if (registrations[i].comm != comm)
                standin_violation("%s with another communicator than registered it", call);
            return &registrations[i];
        }
    standin_violation("%s of a %s that is not registered (deregistered twice?)", call,
                      kind == REG_WINDOW ? "window" : "handle");
    return NULL;
}

static mem_block *block_of(const void *ptr, size_t bytes)
{
    for (int i = 0; i < STANDIN_MAX_REGISTRATIONS; i++) {
        mem_block *m = &mem_blocks[i];
        if (m->ptr != NULL && (const char *)ptr >= (char *)m->ptr &&
            (const char *)ptr + bytes <= (char *)m->ptr + m->bytes)
            return m;
    }
    return NULL;
}

/* A VIOLATION for each registration still covering [ptr, ptr + bytes). */
static void check_unregistered(const void *ptr, size_t bytes, const char *call)
{
    for (int i = 0; i < STANDIN_MAX_REGISTRATIONS; i++) {
        registration *r = &registrations[i];
        if (r->kind != 0 && overlaps(r->lo, r->bytes, ptr, bytes))
            standin_violation("%s of memory still registered (%s): deregister first", call,
                              r->kind == REG_WINDOW ? "ncclCommWindowRegister"
                                                    : "ncclCommRegister");
    }
}

/* NCCL_LOCAL_REGISTER, default 1 (register.cc, NCCL_PARAM LocalRegister). */
static int local_register(void)
{
    return standin_env_long("NCCL_LOCAL_REGISTER", 1) != 0;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    standin_trace("ncclCommRegister bytes=%zu", size);
    if (lacks("ncclCommRegister", STANDIN_FIRST_REGISTER))
        return ncclInvalidUsage;
    if (comm == NULL || buff == NULL || handle == NULL)
        return ncclInvalidArgument;
    (void)standin_comm_unready(comm, "ncclCommRegister");
    /* 2.24 on (register.cc, ncclCommRegister, 2.24.3 to 2.30.7): with
     * NCCL_LOCAL_REGISTER=0 a NULL handle and ncclSuccess; before 2.24 the
     * variable does not reach this call. */
    if (!local_register() && standin_nccl_version() >= NCCL_VERSION(2, 24, 0)) {
        standin_trace("ncclCommRegister skipped: NCCL_LOCAL_REGISTER=0, NULL handle");
        *handle = NULL;
        return ncclSuccess;
    }
    /* NCCL 2.28 accepts it but, for memory that is not cuMem's (ncclMemAlloc),
     * registers nothing intra-node (without NCCL_LEGACY_CUDA_REGISTER=1). */
    if (block_of(buff, size) == NULL)
        standin_trace("ncclCommRegister ignored: memory not from ncclMemAlloc");
    registration *r = add(REG_BUFFER, comm, buff, size);
    if (r == NULL)
        return ncclSystemError;
    *handle = r;
    return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    standin_trace("ncclCommDeregister");
    if (lacks("ncclCommDeregister", STANDIN_FIRST_REGISTER))
        return ncclInvalidUsage;
    if (comm != NULL)
        (void)standin_comm_unready(comm, "ncclCommDeregister");
    if (handle == NULL)   /* commDeregister, register.cc 2.19.3 to 2.30.7 */
        return ncclSuccess;
    registration *r = live(REG_BUFFER, comm, handle, "ncclCommDeregister");
    if (r == NULL)
        return ncclInvalidArgument;
    r->kind = 0;
    return ncclSuccess;
}

/* The granularity ncclMemAlloc rounds size up to, 0 for none (cudaMalloc).
 * 2.19.3 to 2.23.4 (init.cc): cuMem only on a device with multicast
 * support, rounding to cuMulticastGetGranularity(RECOMMENDED), else
 * cudaMalloc. 2.24.3 to 2.25.1: cuMem when ncclCuMemEnable(), rounding to
 * the multicast granularity on such a device, else to
 * cuMemGetAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED).
 * 2.26.2 on (allocator.cc from 2.28): cuMem when ncclCuMemEnable(), the
 * physical handle's size rounded to that allocation granularity
 * ("ALIGN_SIZE(handleSize, memGran)"). The device's granularities are
 * CB_STANDIN_MEM_GRANULARITY (default 2 MiB) and
 * CB_STANDIN_MULTICAST_GRANULARITY (default 0: no multicast support). */
size_t standin_mem_granularity(void)
{
    return (size_t)standin_env_long("CB_STANDIN_MEM_GRANULARITY", 2L << 20);
}

size_t standin_multicast_granularity(void)
{
    return (size_t)standin_env_long("CB_STANDIN_MULTICAST_GRANULARITY", 0);
}

size_t standin_round_up(size_t bytes, size_t granularity)
{
    return granularity == 0 ? bytes : (bytes + granularity - 1) / granularity * granularity;
}

static size_t memalloc_granularity(void)
{
    long version = standin_nccl_version();
    size_t mem = standin_mem_granularity(), multicast = standin_multicast_granularity();
    if (version < NCCL_VERSION(2, 24, 0))
        return multicast;
    if (!standin_cumem_enabled())
        return 0;
    return version < NCCL_VERSION(2, 26, 0) && multicast > 0 ? multicast : mem;
}

/* The device is charged the rounded size, as cuMemCreate takes it: the
 * size asked for as a cudaMalloc, so that the bounds checks (devmem.c)
 * still flag an overrun into the rounding and the blocks lie as before,
 * and the rest as a count of its own (standin_memalloc_rounding). */
static size_t rounding_total;

size_t standin_memalloc_rounding(void)
{
    return rounding_total;
}

ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    size_t charged = standin_round_up(size, memalloc_granularity());
    standin_trace("ncclMemAlloc bytes=%zu charged=%zu", size, charged);
    if (lacks("ncclMemAlloc", STANDIN_FIRST_REGISTER))
        return ncclInvalidUsage;
    int slot = -1;
    for (int i = 0; i < STANDIN_MAX_REGISTRATIONS && slot < 0; i++)
        if (mem_blocks[i].ptr == NULL)
            slot = i;
    cudaError_t unread = standin_unread_error();   /* NCCL's runtime is its own */
    if (ptr == NULL || slot < 0 || cudaMalloc(ptr, size) != cudaSuccess) {
        standin_cuda_restore(unread);
        return ncclSystemError;
    }
    if (charged - size > standin_device_free()) {
        cudaFree(*ptr);
        return ncclSystemError;
    }
    rounding_total += charged - size;
    mem_blocks[slot] = (mem_block){*ptr, size, charged - size};
    return ncclSuccess;
}

ncclResult_t ncclMemFree(void *ptr)
{
    standin_trace("ncclMemFree");
    if (lacks("ncclMemFree", STANDIN_FIRST_REGISTER))
        return ncclInvalidUsage;
    mem_block *m = block_of(ptr, 0);
    if (m == NULL || m->ptr != ptr) {
        standin_violation("ncclMemFree of memory that ncclMemAlloc did not return");
        return ncclInvalidArgument;
    }
    check_unregistered(ptr, m->bytes, "ncclMemFree");
    rounding_total -= m->rounding;
    m->ptr = NULL;
    cudaFree(ptr);
    return ncclSuccess;
}

#if NCCL_VERSION_CODE >= STANDIN_FIRST_WINDOW
/* 1 when NCCL makes no window (ncclSuccess, no barrier, nothing to wait
 * for), having written *win as it does. symmetric: the communicator's
 * symmetricSupport (init.cc: all peers reached by CUDA P2P, cuMem,
 * NCCL_WIN_ENABLE). 2.27 (register.cc, ncclCommWindowRegister): NULL when
 * NCCL_LOCAL_REGISTER=0, else a window, symmetric or not. 2.28
 * (dev_runtime.cc, ncclCommWindowRegister): *win left unwritten when
 * neither symmetric support nor NCCL_LOCAL_REGISTER; without symmetric
 * support a local registration's handle in its place
 * (ncclDevrWindowRegisterInGroup). 2.29 on: NULL without symmetric
 * support, whatever NCCL_LOCAL_REGISTER says. */
static int window_without_symmetric(ncclWindow_t *win, int symmetric)
{
    long version = standin_nccl_version();
    int none = version < NCCL_VERSION(2, 28, 0)   ? !local_register()
               : version < NCCL_VERSION(2, 29, 0) ? !symmetric && !local_register()
                                                  : !symmetric;
    if (!none)
        return 0;
    if (version < NCCL_VERSION(2, 28, 0) || version >= NCCL_VERSION(2, 29, 0))
        *win = NULL;
    standin_trace("ncclCommWindowRegister made no window (%s)",
                  version < NCCL_VERSION(2, 28, 0) || version >= NCCL_VERSION(2, 29, 0)
                      ? "NULL written"
                      : "left unwritten");
    return 1;
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size,
                                    ncclWindow_t *win, int winFlags)
{
    standin_trace("ncclCommWindowRegister bytes=%zu flags=%d", size, winFlags);
    if (lacks("ncclCommWindowRegister", STANDIN_FIRST_WINDOW))
        return ncclInvalidUsage;
    if (comm == NULL || win == NULL || standin_comm_unready(comm, "ncclCommWindowRegister"))
        return ncclInvalidArgument;
    if (block_of(buff, size) == NULL)
        standin_violation("ncclCommWindowRegister on memory that ncclMemAlloc did not return");
    int symmetric = standin_env_long("CB_STANDIN_SYMMETRIC", 1) != 0 &&
                    standin_env_long("NCCL_WIN_ENABLE", 1) != 0;
    if (window_without_symmetric(win, symmetric))
        return ncclSuccess;
    registration *r = add(REG_WINDOW, comm, buff, size);
    if (r == NULL)
        return ncclSystemError;
    r->flags = symmetric ? winFlags : 0;   /* no symmetric kernels without support */
    ncclResult_t joined = standin_net_barrier(comm->net);   /* collective, as NCCL's */
    if (joined != ncclSuccess)
        return joined;
    /* A task of the communicator's group, so non-blocking NCCL's thread
     * writes *win when done: 2.27 returns ncclInProgress, 2.28 on ncclSuccess
     * (dev_runtime.cc: "NCCLCHECK(ncclGroupEndInternal()); ... return ret;"). */
    if (!comm->nonblocking) {
        *win = (ncclWindow_t)(void *)r;
        return ncclSuccess;
    }
    comm->window_out = win;
    comm->window = r;
    if (standin_env_long("CB_STANDIN_NCCL_VERSION", NCCL_VERSION_CODE) >= NCCL_VERSION(2, 28, 0))
        return standin_comm_started_success(comm, "ncclCommWindowRegister");
    return standin_comm_started(comm, ncclSuccess, "ncclCommWindowRegister");
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    standin_trace("ncclCommWindowDeregister");
    if (lacks("ncclCommWindowDeregister", STANDIN_FIRST_WINDOW))
        return ncclInvalidUsage;
    if (comm != NULL)
        (void)standin_comm_unready(comm, "ncclCommWindowDeregister");
    if (win == NULL)   /* dev_runtime.cc 2.28 on, register.cc 2.27 */
        return ncclSuccess;
    registration *r = live(REG_WINDOW, comm, (void *)win, "ncclCommWindowDeregister");
    if (r == NULL)
        return ncclInvalidArgument;
    r->kind = 0;
    return ncclSuccess;
}
#endif

void standin_window_done(struct ncclComm *comm)
{
#if NCCL_VERSION_CODE >= STANDIN_FIRST_WINDOW
    if (comm->window_out != NULL)
        *(ncclWindow_t *)comm->window_out = (ncclWindow_t)comm->window;
#endif
    comm->window_out = NULL;
}

void standin_check_free(const void *ptr, size_t bytes)
{
    mem_block *m = block_of(ptr, 0);
    if (m != NULL && m->ptr == ptr)
        standin_violation("cudaFree of memory from ncclMemAlloc (ncclMemFree frees it)");
    else
        check_unregistered(ptr, bytes, "cudaFree");
}

void standin_end_registrations(struct ncclComm *comm, int destroying)
{
    int left = 0;
    for (int i = 0; i < STANDIN_MAX_REGISTRATIONS; i++)
        if (registrations[i].kind != 0 && registrations[i].comm == comm) {
            left++;
            registrations[i].kind = 0;
        }
    if (destroying && left > 0)
        standin_violation("ncclCommDestroy with %d buffer registrations or windows left "
                          "(deregister them first)", left);
}

int standin_accumulates_in_float(const standin_op *op)
{
    if (op->type != ncclFloat16 && op->type != (ncclDataType_t)9)   /* bfloat16 */
        return 0;
    for (int i = 0; i < STANDIN_MAX_REGISTRATIONS; i++) {
        const registration *r = &registrations[i];
        if (r->kind == REG_WINDOW && r->comm == op->comm &&
            (r->flags & STANDIN_WIN_SYMMETRIC) && overlaps(r->lo, r->bytes, op->send, 1)) {
            standin_trace("symmetric window: accumulating in float");
            return 1;
        }
    }
    return 0;
}
