# A check launch whose output is never written never passes
# (nccl-collbench-collectives(7), VERIFICATION): the receive buffer holds a
# poison value before every check launch, and every check's values are
# seeded by everything that varies (cycle, collective, layout, type,
# reduction, root, size, placement, pass). The fault layer's untimed:skip
# lets the timed launches run (so that they leave a correct result of the
# same inputs behind, as a working backend would) and makes every check
# launch write nothing; stale:1 makes one rank's launches write nothing.
# Each is caught in every row of every table, in place and out of place, on
# the MPI backend and NCCL's stand-in, in every position where a stale
# result used to pass: the later cycles of a single-size -N run (also with
# the default -n and -w), the second of two collectives that share values
# (ring_allreduce after allreduce, alltoallv after alltoall), and the column
# run of --layout row,col.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
. "$CB_SRCDIR/tests/support/faults.sh"
use_fault_layer
CB_RUN_TIMEOUT=120

# fault NP FAULT COLLECTIVES CYCLES ARGS...: one run, caught in every row.
fault() {
    np=$1 spec=$2 colls=$3 cycles=$4
    shift 4
    run_fault "$np" "$spec" -o "$colls" "$@"
    case " $* " in
    *" row,col "*) every_row_wrong "$colls" "$cycles" col ;;
    *) every_row_wrong "$colls" "$cycles" ;;
    esac
}

# The positions, for one backend. A stale result used to pass where the
# buffers held nothing else between two checks of the same values: one
# collective, type and size at a time.
positions() {
    # Later cycles of a single size, every collective alone.
    for c in $(echo "$every" | tr , ' '); do
        fault 3 untimed:skip "$c" 3 -b 192 -e 192 -N 3 -n 1 -w 0
    done
    # The burn-in shape: default -n and -w.
    fault 2 untimed:skip allreduce 2 -b 4K -e 4K -N 2
    # Every type class's poison (NaN, an unsigned maximum, a signed minimum),
    # and one rank's launches writing nothing.
    fault 3 untimed:skip "$every" 2 -b 192 -e 192 -N 2 -n 1 -w 0 -d int8,uint8,int64,bfloat16
    fault 3 stale:1 "$receiving" 2 -b 192 -e 192 -N 2 -n 1 -w 0 -d float,int32
    # The second of two collectives that share values.
    for pair in $shared alltoall,alltoallv alltoallv,alltoall; do
        fault 3 untimed:skip "$pair" 1 -b 384 -e 384 -n 1 -w 0
    done
    fault 3 untimed:skip allreduce,hier_allreduce 1 -b 384 -e 384 -n 1 -w 0 --redop max -d int32
    # The column run after the row run.
    for c in allgather alltoall reducescatter gather; do
        fault 3 untimed:skip "$c" 1 -b 768 -e 768 --layout row,col -n 1 -w 0
    done
    fault 3 stale:1 allgather,alltoall 2 -b 192 -e 192 --layout row,col -N 2 -n 1 -w 0
}

backend=faulty-mpi
every=allreduce,allgather,reducescatter,broadcast,reduce,alltoall,gather,scatter,sendrecv
every=$every,ring_allreduce,hier_allreduce,alltoallv
# Rank 1 holds an output of these (root 0 for the rooted ones).
receiving=allreduce,allgather,reducescatter,broadcast,alltoall,scatter,sendrecv,ring_allreduce
receiving=$receiving,hier_allreduce,alltoallv
shared="allreduce,ring_allreduce ring_allreduce,allreduce"
positions

# The same on NCCL's stand-in (device buffers, poisoned through the backend's
# upload), which runs no ring_allreduce (it needs host buffers).
if [ -x "$CB_BUILDDIR/tests/nccl-collbench-standin" ]; then
    backend=faulty-nccl
    CB_STANDIN_GPUS=4
    export CB_STANDIN_GPUS
    every=allreduce,allgather,reducescatter,broadcast,reduce,alltoall,gather,scatter,sendrecv
    every=$every,hier_allreduce,alltoallv
    receiving=allreduce,allgather,reducescatter,broadcast,alltoall,scatter,sendrecv
    receiving=$receiving,hier_allreduce,alltoallv
    shared=hier_allreduce,allreduce
    positions
fi
echo "ok"
