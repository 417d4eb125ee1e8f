/*
 * Calls that the headers this program was built with declare but that a
 * library loaded at run time may lack: an older libnccl or libcudart of the
 * same soname (libnccl.so.2, libcudart.so.12). Each is a weak reference, so
 * that the dynamic loader leaves its address NULL instead of refusing to
 * start the program (at once under -z now, where every reference is bound
 * at start-up); the code asks the functions below before each use and
 * refuses or falls back with a message where the call is missing.
 * docs/design/weak-symbols.md lists every weak call of the backend and why;
 * nccl/native.c and nccl/register.c declare their own.
 *
 * A #pragma weak must reach every file that refers to the call: one strong
 * reference anywhere makes the program's reference strong. Hence one header,
 * included by nccl_backend.h, before any use.
 */
#ifndef CB_NCCL_WEAK_H
#define CB_NCCL_WEAK_H

#include "config.h"
#include "api.h"

/* ncclRedOpCreatePreMulSum and ncclRedOpDestroy: NCCL 2.11 (nccl.h.in,
 * v2.11.4-1). */
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 11, 0)
#pragma weak ncclRedOpCreatePreMulSum
#pragma weak ncclRedOpDestroy
#define CB_NCCL_HEADER_PREMULSUM 1
#else
#define CB_NCCL_HEADER_PREMULSUM 0
#endif
/* ncclGetLastError: NCCL 2.13 (nccl.h.in, v2.13.4-1). */
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
#pragma weak ncclGetLastError
#define CB_NCCL_HEADER_LAST_ERROR 1
#else
#define CB_NCCL_HEADER_LAST_ERROR 0
#endif
/* ncclCommInitRankConfig: NCCL 2.14 (nccl.h.in, v2.14.3-1). */
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
#pragma weak ncclCommInitRankConfig
#define CB_NCCL_HEADER_INIT_CONFIG 1
#else
#define CB_NCCL_HEADER_INIT_CONFIG 0
#endif
/* ncclCommSplit: NCCL 2.18 (nccl.h.in, v2.18.1-1). */
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
#pragma weak ncclCommSplit
#define CB_NCCL_HEADER_SPLIT 1
#else
#define CB_NCCL_HEADER_SPLIT 0
#endif
/* ncclCommShrink: NCCL 2.27 (nccl.h.in, v2.27.3-1). */
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
#pragma weak ncclCommShrink
#define CB_NCCL_HEADER_SHRINK 1
#else
#define CB_NCCL_HEADER_SHRINK 0
#endif
/* The runtime's library management (-B's GPU compare, nccl/compare.c),
 * which configure found in the headers. */
#ifdef CB_HAVE_CUDA_LIBRARY
#pragma weak cudaLibraryLoadData
#pragma weak cudaLibraryGetKernel
#pragma weak cudaLibraryUnload
#endif

/* 1 when the NCCL loaded exports the call (and nccl.h declared it). */
static inline int cb_nccl_exports_premulsum(void)
{
#if CB_NCCL_HEADER_PREMULSUM
    return ncclRedOpCreatePreMulSum != NULL && ncclRedOpDestroy != NULL;
#else
    return 0;
#endif
}

static inline int cb_nccl_exports_last_error(void)
{
#if CB_NCCL_HEADER_LAST_ERROR
    return ncclGetLastError != NULL;
#else
    return 0;
#endif
}

static inline int cb_nccl_exports_init_config(void)
{
#if CB_NCCL_HEADER_INIT_CONFIG
    return ncclCommInitRankConfig != NULL;
#else
    return 0;
#endif
}

static inline int cb_nccl_exports_split(void)
{
#if CB_NCCL_HEADER_SPLIT
    return ncclCommSplit != NULL;
#else
    return 0;
#endif
}

static inline int cb_nccl_exports_shrink(void)
{
#if CB_NCCL_HEADER_SHRINK
    return ncclCommShrink != NULL;
#else
    return 0;
#endif
}

/* 1 when the CUDA runtime loaded exports the three library calls. */
static inline int cb_cuda_exports_library(void)
{
#ifdef CB_HAVE_CUDA_LIBRARY
    return cudaLibraryLoadData != NULL && cudaLibraryGetKernel != NULL &&
           cudaLibraryUnload != NULL;
#else
    return 0;
#endif
}

#endif
