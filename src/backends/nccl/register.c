/*
 * The device memory of the backend (ncclMemAlloc, or cudaMalloc before NCCL
 * 2.19) and -R: benchmark buffers registered with the communicator, as
 * nccl-tests does. 1: ncclMemAlloc'd buffers registered with
 * ncclCommRegister (NCCL 2.19);
 * 2: ncclMemAlloc'd buffers registered as a symmetric window with
 * ncclCommWindowRegister and NCCL_WIN_COLL_SYMMETRIC (NCCL 2.27), which lets
 * NCCL run its symmetric kernels on them. Registrations end before the
 * communicator (cb_nccl_deregister_all, from fini); the memory is released
 * after it, with the call that matches its allocation.
 *
 * As with nccl/native.c, the calls are weak symbols, so that the binary
 * still starts on a libnccl without them; -R on such a library is refused
 * when the backend starts, before anything is measured.
 */
#include <stdio.h>

#include "nccl_backend.h"

#define CB_NCCL_FIRST_REGISTER NCCL_VERSION(2, 19, 0)
#define CB_NCCL_FIRST_WINDOW NCCL_VERSION(2, 27, 0)

#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_REGISTER
#define CB_NCCL_HEADER_REGISTER 1
#pragma weak ncclCommRegister
#pragma weak ncclCommDeregister
#pragma weak ncclMemAlloc
#pragma weak ncclMemFree
#else
#define CB_NCCL_HEADER_REGISTER 0
#endif
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_WINDOW
#define CB_NCCL_HEADER_WINDOW 1
#pragma weak ncclCommWindowRegister
#pragma weak ncclCommWindowDeregister
#else
#define CB_NCCL_HEADER_WINDOW 0
#endif

/* Whether this build and the library loaded have what -R level needs. */
int cb_nccl_registration_check(nccl_backend *nb)
{
    int level = nb->config.registration;
    if (level == 0)
        return 0;
    int first = level == 1 ? CB_NCCL_FIRST_REGISTER : CB_NCCL_FIRST_WINDOW;
    int header = level == 1 ? CB_NCCL_HEADER_REGISTER : CB_NCCL_HEADER_WINDOW;
    const char *calls = level == 1 ? "ncclCommRegister" : "ncclMemAlloc and ncclCommWindowRegister";
    char library[32], wanted[32], built[32];
    cb_nccl_version_text(nb->library_version, library, sizeof library);
    cb_nccl_version_text(first, wanted, sizeof wanted);
    cb_nccl_version_text(NCCL_VERSION_CODE, built, sizeof built);
    if (!header || nb->library_version < first)
        return cb_backend_fail(&nb->base, "-R %d needs %s, NCCL %.4s or later; the library "
                               "loaded is %s and the program was built against %s", level,
                               calls, wanted, library, built);
    int present = 1;
#if CB_NCCL_HEADER_REGISTER
    present = present && ncclCommRegister != NULL && ncclCommDeregister != NULL &&
              ncclMemAlloc != NULL && ncclMemFree != NULL;
#endif
#if CB_NCCL_HEADER_WINDOW
    if (level == 2)
        present = present && ncclCommWindowRegister != NULL && ncclCommWindowDeregister != NULL;
#endif
    if (!present)
        return cb_backend_fail(&nb->base, "-R %d: the NCCL library loaded (%s) does not export "
                               "%s", level, library, calls);
    return 0;
}

/* ncclMemAlloc (cuMem memory, NCCL 2.19 on), as nccl-tests allocates: NCCL
 * 2.28 ignores ncclCommRegister of plain cudaMalloc memory for intra-node
 * peer-to-peer (unless NCCL_LEGACY_CUDA_REGISTER=1), and NVLink SHARP's
 * zero-copy registration, by ncclCommRegister or in a CUDA graph, needs
 * cuMem memory. Before 2.19, or when the library lacks the symbol,
 * cudaMalloc, with a note in the preamble. */
void cb_nccl_choose_allocator(nccl_backend *nb)
{
    nb->mem.memalloc = 0;
#if CB_NCCL_HEADER_REGISTER
    nb->mem.memalloc = nb->library_version >= CB_NCCL_FIRST_REGISTER && ncclMemAlloc != NULL &&
                   ncclMemFree != NULL;
#endif
    snprintf(nb->base.allocator, sizeof nb->base.allocator, "%s",
             nb->mem.memalloc ? "ncclMemAlloc" : "cudaMalloc");
    if (!nb->mem.memalloc) {
        char library[32];
        cb_nccl_version_text(nb->library_version, library, sizeof library);
        cb_backend_add_notice(&nb->base,
                              "buffers from cudaMalloc: NCCL %s has no ncclMemAlloc (2.19 or "
                              "later), whose memory NCCL's buffer registration and NVLink SHARP "
                              "need", library);
    }
}

int cb_nccl_mem_alloc(nccl_backend *nb, size_t bytes, void **ptr)
{
    cb_backend *b = &nb->base;
    *ptr = NULL;
#if CB_NCCL_HEADER_REGISTER
    if (nb->mem.memalloc) {
        if (NCCL_CALL(b, NULL, ncclMemAlloc(ptr, bytes)) != 0) {
            *ptr = NULL;
            return -1;
        }
        return 0;
    }
#endif
    if (CUDA_CALL(b, cudaMalloc(ptr, bytes)) != 0) {
        *ptr = NULL;
        return -1;
    }
    return 0;
}

void cb_nccl_mem_free(nccl_backend *nb, void *ptr)
{
    if (ptr == NULL)
        return;
#if CB_NCCL_HEADER_REGISTER
    if (nb->mem.memalloc) {
        ncclMemFree(ptr);
        return;
    }
#else
    (void)nb;
#endif
    cudaFree(ptr);
}

/* The memory of a registered buffer, zeroed: ncclMemAlloc (-R needs it). */
static int allocate(nccl_backend *nb, size_t bytes, void **ptr)
{
    cb_backend *b = &nb->base;
    if (!nb->mem.memalloc)
        return cb_backend_fail(b, "-R %d needs ncclMemAlloc, which the library loaded lacks",
                               nb->config.registration);
    if (cb_nccl_mem_alloc(nb, bytes, ptr) != 0)
        return -1;
    if (CUDA_CALL(b, cudaMemsetAsync(*ptr, 0, bytes, nb->stream)) != 0 || cb_nccl_wait(b) != 0)
        return -1;
    return 0;
}

static void release(nccl_backend *nb, void *ptr)
{
    cb_nccl_mem_free(nb, ptr);
}

/* NCCL said yes but registered nothing: ncclCommRegister's NULL handle
 * (NCCL_LOCAL_REGISTER=0 from 2.24; NCCL_P2P_USE_CUDA_MEMCPY from 2.28), or
 * no window from ncclCommWindowRegister (2.29 on without symmetric memory
 * support; 2.27 and 2.28 with NCCL_LOCAL_REGISTER=0). The buffer stays
 * usable, unregistered, and deregistering skips it; the reader is told
 * once, since the results then measure -R 0. */
static void note_unregistered(nccl_backend *nb)
{
    if (nb->mem.unregistered++ > 0)
        return;
    int level = nb->config.registration;
    cb_backend_add_notice(&nb->base, "-R %d: %s registered nothing (%s): the buffers run "
                          "unregistered, as with -R 0", level,
                          level == 1 ? "ncclCommRegister" : "ncclCommWindowRegister",
                          level == 1 ? "NCCL_LOCAL_REGISTER=0, or NCCL_P2P_USE_CUDA_MEMCPY"
                                     : "no symmetric memory support, or NCCL_LOCAL_REGISTER=0");
}

/* Every rank allocates the same buffers in the same order, and a window is
 * registered collectively: the ranks agree after the allocation, so that a
 * rank whose allocation failed never leaves the others in the registration. */
int cb_nccl_register_alloc(nccl_backend *nb, size_t bytes, void **ptr)
{
    cb_backend *b = &nb->base;
    void *p = NULL;
    int failed = nb->mem.nregistered == CB_NCCL_MAX_REGISTERED
                     ? cb_backend_fail(b, "more than %d registered buffers",
                                       CB_NCCL_MAX_REGISTERED)
                     : allocate(nb, bytes, &p) != 0;
    if (failed && p != NULL)
        release(nb, p);
    if (cb_backend_agree(b->comm, b, failed) != 0)
        return -1;
    void *handle = NULL;
    int rc = -1;
#if CB_NCCL_HEADER_WINDOW
    ncclWindow_t window = NULL;
    if (nb->config.registration == 2) {
        rc = NCCL_CALL(b, nb->comm, ncclCommWindowRegister(nb->comm, p, bytes, &window,
                                                           NCCL_WIN_COLL_SYMMETRIC));
        handle = window;
    }
#endif
#if CB_NCCL_HEADER_REGISTER
    if (nb->config.registration == 1)
        rc = NCCL_CALL(b, nb->comm, ncclCommRegister(nb->comm, p, bytes, &handle));
#endif
    if (rc == 0)   /* ended before the communicator, released after it (fini) */
        nb->mem.registered[nb->mem.nregistered++] = (nccl_registration){p, handle, 1};
    if (rc == 0 && handle == NULL)
        note_unregistered(nb);
    if (cb_backend_agree(b->comm, b, rc != 0) != 0) {
        if (rc != 0)
            release(nb, p);
        return -1;
    }
    *ptr = p;
    return 0;
}

/* The engine freed ptr: 1 when it is registered (released in fini, after
 * the communicator), 0 when it is not this file's. */
int cb_nccl_registered_free(nccl_backend *nb, void *ptr)
{
    for (int i = 0; i < nb->mem.nregistered; i++)
        if (nb->mem.registered[i].ptr == ptr)
            return 1;
    return 0;
}

/* Before the communicator ends: every registration, in the order made (a
 * window deregistration is collective). After an abort NCCL has let go of
 * them itself. */
void cb_nccl_deregister_all(nccl_backend *nb, int aborting)
{
    for (int i = 0; i < nb->mem.nregistered; i++) {
        nccl_registration *r = &nb->mem.registered[i];
        if (!r->live || r->handle == NULL)
            continue;
        r->live = 0;
        if (aborting || nb->comm == NULL)
            continue;
#if CB_NCCL_HEADER_WINDOW
        if (nb->config.registration == 2)
            ncclCommWindowDeregister(nb->comm, (ncclWindow_t)r->handle);
#endif
#if CB_NCCL_HEADER_REGISTER
        if (nb->config.registration == 1)
            ncclCommDeregister(nb->comm, r->handle);
#endif
    }
}

/* After the communicator: the memory of every registered buffer. */
void cb_nccl_release_registered(nccl_backend *nb)
{
    for (int i = 0; i < nb->mem.nregistered; i++)
        release(nb, nb->mem.registered[i].ptr);
    nb->mem.nregistered = 0;
}
