/* The control plane over MPI: each op is the MPI call of the same name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/mpi.h"
#include "common/hmac.h"

typedef struct mpi_ctl {
    cb_ctl base;
    MPI_Comm comm;
    int owns;   /* a split of ours, freed with it (the world is MPI's) */
} mpi_ctl;

struct cb_ctl_req {
    MPI_Request req;
};

static MPI_Comm comm_of(cb_ctl *c)
{
    return ((mpi_ctl *)c->impl)->comm;
}

static MPI_Datatype type_of(cb_ctl_type t)
{
    switch (t) {
    case CB_CTL_INT: return MPI_INT;
    case CB_CTL_DOUBLE: return MPI_DOUBLE;
    case CB_CTL_U64: return MPI_UINT64_T;
    default: return MPI_BYTE;
    }
}

static MPI_Op op_of(cb_ctl_op op)
{
    switch (op) {
    case CB_CTL_MIN: return MPI_MIN;
    case CB_CTL_MAX: return MPI_MAX;
    case CB_CTL_LAND: return MPI_LAND;
    default: return MPI_SUM;
    }
}

static int ok(int rc)
{
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int mpi_barrier(cb_ctl *c)
{
    return ok(MPI_Barrier(comm_of(c)));
}

static int mpi_bcast(cb_ctl *c, void *buf, size_t bytes, int root)
{
    return ok(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm_of(c)));
}

static int mpi_allreduce(cb_ctl *c, const void *in, void *out, int count, cb_ctl_type type,
                         cb_ctl_op op)
{
    return ok(MPI_Allreduce(in == CB_CTL_IN_PLACE ? MPI_IN_PLACE : in, out, count, type_of(type),
                            op_of(op), comm_of(c)));
}

static int mpi_gather(cb_ctl *c, const void *in, size_t bytes, void *out, int root)
{
    return ok(MPI_Gather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, root, comm_of(c)));
}

static int mpi_allgather(cb_ctl *c, const void *in, size_t bytes, void *out)
{
    return ok(MPI_Allgather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, comm_of(c)));
}

static int mpi_send(cb_ctl *c, const void *buf, size_t bytes, int dest, int tag)
{
    return ok(MPI_Send(buf, (int)bytes, MPI_BYTE, dest, tag, comm_of(c)));
}

static int mpi_recv(cb_ctl *c, void *buf, size_t bytes, int src, int tag)
{
    return ok(MPI_Recv(buf, (int)bytes, MPI_BYTE, src, tag, comm_of(c), MPI_STATUS_IGNORE));
}

static int mpi_iallreduce(cb_ctl *c, const void *in, void *out, int count, cb_ctl_type type,
                          cb_ctl_op op, cb_ctl_req **req)
{
    *req = malloc(sizeof **req);
    if (*req == NULL)
        return -1;
    if (MPI_Iallreduce(in == CB_CTL_IN_PLACE ? MPI_IN_PLACE : in, out, count, type_of(type),
                       op_of(op), comm_of(c), &(*req)->req) != MPI_SUCCESS) {
        free(*req);
        *req = NULL;
        return -1;
    }
    return 0;
}

static int mpi_test(cb_ctl_req *req, int *done)
{
    *done = 0;
    if (MPI_Test(&req->req, done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return -1;
    if (*done)
        free(req);
    return 0;
}

static const cb_ctl_ops mpi_ops;

static int wrap(MPI_Comm comm, int owns, cb_ctl **out)
{
    *out = NULL;
    if (comm == MPI_COMM_NULL)
        return 0;
    mpi_ctl *m = calloc(1, sizeof *m);
    if (m == NULL) {
        if (owns)
            MPI_Comm_free(&comm);
        return -1;
    }
    m->comm = comm;
    m->owns = owns;
    m->base.ops = &mpi_ops;
    m->base.impl = m;
    MPI_Comm_rank(comm, &m->base.rank);
    MPI_Comm_size(comm, &m->base.size);
    *out = &m->base;
    return 0;
}

/* A split's group, ours to free, with its parent's guard. */
static int child_of(const cb_ctl *parent, int rc, MPI_Comm sub, cb_ctl **out)
{
    *out = NULL;
    if (rc != MPI_SUCCESS || wrap(sub, 1, out) != 0)
        return -1;
    if (*out != NULL)
        (*out)->guard = parent->guard;
    return 0;
}

static int mpi_split(cb_ctl *c, int color, int key, cb_ctl **out)
{
    MPI_Comm sub = MPI_COMM_NULL;
    int rc = MPI_Comm_split(comm_of(c), color >= 0 ? color : MPI_UNDEFINED, key, &sub);
    return child_of(c, rc, sub, out);
}

static int mpi_split_node(cb_ctl *c, int key, cb_ctl **out)
{
    MPI_Comm sub = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(comm_of(c), MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &sub);
    return child_of(c, rc, sub, out);
}

/* MPI's transport is the job's own and trusted: rank 0's random bytes go
 * to the others over it. */
static int mpi_secret(cb_ctl *c, const char *label, unsigned char *out, size_t len)
{
    (void)label;
    int failed = 0;
    if (c->rank == 0)
        failed = cb_random_bytes(out, len) != 0;
    if (MPI_Bcast(&failed, 1, MPI_INT, 0, comm_of(c)) != MPI_SUCCESS || failed)
        return -1;
    return ok(MPI_Bcast(out, (int)len, MPI_BYTE, 0, comm_of(c)));
}

static void mpi_describe(cb_ctl *c, char *buf, size_t len)
{
    (void)c;
    cb_ctl_mpi_version(buf, len);
    if (len > 0 && buf[0] == '\0')
        snprintf(buf, len, "MPI (unknown version)");
}

static void mpi_free(cb_ctl *c)
{
    mpi_ctl *m = c->impl;
    if (m->owns)
        MPI_Comm_free(&m->comm);
    free(m);
}

static void mpi_abort(cb_ctl *c, int code)
{
    MPI_Abort(((mpi_ctl *)c->impl)->comm, code);
}

static const cb_ctl_ops mpi_ops = {
    .name = "mpi",
    .barrier = mpi_barrier,
    .bcast = mpi_bcast,
    .allreduce = mpi_allreduce,
    .gather = mpi_gather,
    .allgather = mpi_allgather,
    .send = mpi_send,
    .recv = mpi_recv,
    .iallreduce = mpi_iallreduce,
    .test = mpi_test,
    .split = mpi_split,
    .split_node = mpi_split_node,
    .secret = mpi_secret,
    .describe = mpi_describe,
    .free = mpi_free,
    .abort = mpi_abort,
};

int cb_ctl_mpi_world(int *argc, char ***argv, cb_ctl **out)
{
    *out = NULL;
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return -1;
    return wrap(MPI_COMM_WORLD, 0, out) == 0 && *out != NULL ? 0 : -1;
}

void cb_ctl_mpi_finalize(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Finalize();
}

MPI_Comm cb_ctl_mpi_comm(const cb_ctl *c)
{
    return c != NULL && c->ops == &mpi_ops ? ((const mpi_ctl *)c->impl)->comm : MPI_COMM_NULL;
}

void cb_ctl_mpi_version(char *buf, size_t len)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0, initialized = 0;
    MPI_Initialized(&initialized);
    if (len == 0)
        return;
    buf[0] = '\0';
    if (!initialized || MPI_Get_library_version(version, &n) != MPI_SUCCESS)
        return;
    version[strcspn(version, ",\n")] = '\0';
    size_t end = strlen(version);
    while (end > 0 && (version[end - 1] == ' ' || version[end - 1] == '\t'))
        version[--end] = '\0';
    snprintf(buf, len, "%s", version);
}
