/*
 * NCCL's own alltoall, gather and scatter (ncclAlltoAll, ncclGather,
 * ncclScatter, new in NCCL 2.28) beside the grouped sends and receives of
 * nccl/p2p.c, and --nccl-impl's choice between the two.
 *
 * The same binary must run on an older libnccl, which lacks the three
 * symbols. Where nccl.h declares them, they are declared weak here too: a
 * library loaded at run time without them leaves their addresses NULL
 * instead of the dynamic loader refusing to start the program. Weak
 * references were chosen over dlsym(RTLD_DEFAULT, ...) because dlsym sees
 * only the dynamic symbol table: it would report the calls absent from a
 * libnccl linked statically (or from the test stand-in, linked in as
 * objects) where they are present, while a weak reference resolves in every
 * link, needs no libdl and stays checked against nccl.h's prototypes. (With
 * a static libnccl a weak reference pulls in no archive member of its own:
 * the calls are found when their object is linked for the other
 * collectives, else the run says p2p.) The symbol alone is not trusted: the
 * library must also report 2.28 or later, as a build of another version
 * could export a stub or a call of another meaning.
 */
#include <stdio.h>

#include "nccl_backend.h"

#define CB_NCCL_FIRST_NATIVE NCCL_VERSION(2, 28, 0)

#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_NATIVE
#define CB_NCCL_HEADER_NATIVE 1
#pragma weak ncclAlltoAll
#pragma weak ncclGather
#pragma weak ncclScatter
#else
#define CB_NCCL_HEADER_NATIVE 0
#endif

/* 1 when this build and the library loaded both have the three calls, else
 * 0 with the reason in why. */
static int native_usable(const nccl_backend *nb, char *why, size_t why_len)
{
    char library[32], header[32];
    cb_nccl_version_text(nb->library_version, library, sizeof library);
    cb_nccl_version_text(NCCL_VERSION_CODE, header, sizeof header);
    if (!CB_NCCL_HEADER_NATIVE) {
        snprintf(why, why_len, "this program was built against NCCL %s, whose nccl.h has no "
                 "ncclAlltoAll, ncclGather or ncclScatter (2.28 or later needed)", header);
        return 0;
    }
    if (nb->library_version < CB_NCCL_FIRST_NATIVE) {
        snprintf(why, why_len, "the NCCL library loaded is %s, which has no ncclAlltoAll, "
                 "ncclGather or ncclScatter (2.28 or later needed)", library);
        return 0;
    }
#if CB_NCCL_HEADER_NATIVE
    if (ncclAlltoAll == NULL || ncclGather == NULL || ncclScatter == NULL) {
        snprintf(why, why_len, "the NCCL library loaded (%s) does not export ncclAlltoAll, "
                 "ncclGather and ncclScatter", library);
        return 0;
    }
#endif
    return 1;
}

int cb_nccl_select_impl(cb_backend *b, cb_impl impl)
{
    nccl_backend *nb = (nccl_backend *)b;
    char why[CB_BACKEND_ERRLEN - 64];
    int native = native_usable(nb, why, sizeof why);
    if (impl == CB_IMPL_NATIVE && !native)
        return cb_backend_fail(b, "%s", why);
    nb->impl = impl == CB_IMPL_P2P || !native ? CB_IMPL_P2P : CB_IMPL_NATIVE;
    return nb->impl;
}

/* A failed launch inside the engine's group (-m) ends the group, which
 * NCCL then drops, and aborts (cb_nccl_fail_in_group). */
static int launched(nccl_backend *nb, int rc)
{
    if (rc != 0 && nb->outer_group)
        cb_nccl_fail_in_group(nb, 0);
    return rc;
}

int cb_nccl_native_alltoall(nccl_backend *nb, const void *send, void *recv, size_t count,
                            ncclDataType_t type)
{
#if CB_NCCL_HEADER_NATIVE
    return launched(nb, NCCL_CALL(&nb->base, nb->comm,
                                  ncclAlltoAll(send, recv, count, type, nb->comm, nb->stream)));
#else
    (void)send, (void)recv, (void)count, (void)type;
    return cb_backend_fail(&nb->base, "ncclAlltoAll is not in this build");
#endif
}

/* The backend's alltoall: native out of place; in place through the
 * scratch buffer in nccl/p2p.c (NCCL defines no in-place ncclAlltoAll), which
 * uses ncclAlltoAll while the scratch buffer holds the whole input. */
int cb_nccl_alltoall_chosen(cb_backend *b, const void *send, void *recv, size_t count,
                            cb_dtype dtype)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (nb->impl != CB_IMPL_NATIVE || send == recv)
        return cb_nccl_alltoall(b, send, recv, count, dtype);
    if (cb_nccl_type(b, dtype, &type) != 0)
        return -1;
    return cb_nccl_native_alltoall(nb, send, recv, count, type);
}

/* In place as NCCL defines it for both: gather's send is the root's block
 * of recv, scatter's recv the root's block of send, as the engine lays
 * them out. */
int cb_nccl_gather_chosen(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype, int root)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->impl != CB_IMPL_NATIVE)
        return cb_nccl_gather(b, send, recv, count, dtype, root);
#if CB_NCCL_HEADER_NATIVE
    ncclDataType_t type;
    if (cb_nccl_type(b, dtype, &type) != 0)
        return -1;
    return launched(nb, NCCL_CALL(b, nb->comm, ncclGather(send, recv, count, type, root,
                                                          nb->comm, nb->stream)));
#else
    return cb_backend_fail(b, "ncclGather is not in this build");
#endif
}

int cb_nccl_scatter_chosen(cb_backend *b, const void *send, void *recv, size_t count,
                           cb_dtype dtype, int root)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->impl != CB_IMPL_NATIVE)
        return cb_nccl_scatter(b, send, recv, count, dtype, root);
#if CB_NCCL_HEADER_NATIVE
    ncclDataType_t type;
    if (cb_nccl_type(b, dtype, &type) != 0)
        return -1;
    return launched(nb, NCCL_CALL(b, nb->comm, ncclScatter(send, recv, count, type, root,
                                                           nb->comm, nb->stream)));
#else
    return cb_backend_fail(b, "ncclScatter is not in this build");
#endif
}

/* One byte per rank through each native call, where the library has them,
 * so that what NCCL allocates at their first use is allocated before the
 * free memory is measured (see ops.c's warm_up_each_kind). */
int cb_nccl_warm_up_native(nccl_backend *nb)
{
    char why[8];
    cb_backend *b = &nb->base;
    if (!native_usable(nb, why, sizeof why))
        return 0;
    int saved = nb->impl, rc = 0;
    char *s = nb->scratch;
    size_t n = (size_t)b->nranks;
    nb->impl = CB_IMPL_NATIVE;
    rc = cb_nccl_alltoall_chosen(b, s, s + n, 1, CB_UINT8);
    if (rc == 0)
        rc = cb_nccl_gather_chosen(b, s, s + n, 1, CB_UINT8, 0);
    if (rc == 0)
        rc = cb_nccl_scatter_chosen(b, s, s + n, 1, CB_UINT8, 0);
    nb->impl = saved;
    return rc;
}
