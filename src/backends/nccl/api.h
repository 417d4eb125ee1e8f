/*
 * The CUDA runtime and NCCL headers, as the NCCL backend and the test
 * stand-in (tests/nccl/standin/) include them. nccl.h declares a few functions
 * with empty parentheses, which -Wstrict-prototypes rejects in C; the
 * warning is silenced for that header only.
 */
#ifndef CB_NCCL_API_H
#define CB_NCCL_API_H

#include <cuda_runtime_api.h>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#endif
#include <nccl.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif
