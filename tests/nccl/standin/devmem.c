/*
 * The device memory the stand-in handed out (cudaMalloc, and ncclMemAlloc
 * through it), so that every operation and copy can be checked to stay
 * inside one allocation. On a GPU a kernel that reads or writes past its
 * allocation faults with an illegal address, or quietly uses a neighbour's
 * memory; here it is a VIOLATION, whatever the host memory behind it
 * allows.
 */
#include "standin.h"

#define STANDIN_MAX_BLOCKS 4096

typedef struct devmem_block {
    const char *base;
    size_t size;
} devmem_block;

static devmem_block blocks[STANDIN_MAX_BLOCKS];
static size_t nblocks;
static int overflowed;   /* more blocks than the table holds: no checks */

void standin_devmem_add(const void *ptr, size_t size)
{
    if (nblocks < STANDIN_MAX_BLOCKS)
        blocks[nblocks++] = (devmem_block){ptr, size};
    else
        overflowed = 1;
}

void standin_devmem_remove(const void *ptr)
{
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].base == (const char *)ptr) {
            blocks[i] = blocks[--nblocks];
            return;
        }
}

void standin_devmem_check(const void *ptr, size_t bytes, const char *what)
{
    if (ptr == NULL || bytes == 0 || overflowed)
        return;
    const char *p = ptr;
    for (size_t i = 0; i < nblocks; i++)
        if (p >= blocks[i].base && p < blocks[i].base + blocks[i].size)
            if (bytes <= (size_t)(blocks[i].base + blocks[i].size - p))
                return;
    standin_violation("%s: %zu bytes at %p are not inside one device allocation (an "
                      "illegal address on a GPU)", what, bytes, ptr);
}

size_t standin_devmem_offset(const void *ptr)
{
    const char *p = ptr;
    for (size_t i = 0; i < nblocks; i++)
        if (p >= blocks[i].base && p < blocks[i].base + blocks[i].size)
            return (size_t)(p - blocks[i].base);
    return 0;
}

void standin_op_bytes(const standin_op *op, size_t *in, size_t *out)
{
    size_t esize = standin_type_size(op->type), n = (size_t)op->comm->nranks;
    *in = *out = op->count * esize;
    if (op->kind == STANDIN_OP_ALLGATHER)
        *out *= n;
    if (op->kind == STANDIN_OP_REDUCESCATTER)
        *in *= n;
}

void standin_devmem_check_op(const standin_op *op, const char *what)
{
    if (op->kind == STANDIN_OP_P2P) {
        for (size_t k = 0; k < op->np2p; k++)
            standin_devmem_check(op->p2p[k].buf,
                                 op->p2p[k].count * standin_type_size(op->p2p[k].type), what);
        return;
    }
    size_t in, out;
    standin_op_bytes(op, &in, &out);
    /* What NCCL reads and writes: a broadcast's send only at the root, a
     * reduce's receive only there. */
    int root = op->comm->rank == op->root;
    if (op->kind != STANDIN_OP_BROADCAST || root)
        standin_devmem_check(op->send, in, what);
    if (op->kind != STANDIN_OP_REDUCE || root)
        standin_devmem_check(op->recv, out, what);
}
