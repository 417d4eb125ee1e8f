# alltoallv's verification cannot be fooled, under every traffic matrix
# (--a2av-matrix): through tests/nccl-collbench-faulty's fault layer, a
# shifted output, the blocks of two senders swapped (unequal ones under a
# skewed or random matrix: as much as both hold), a missing contribution, a
# duplicated one, stale output, a corrupt element and a skipped operation
# are each caught in every row, with exit status 7; a fault confined to the
# timed iterations only with --check-timed. On the MPI backend and, where it
# was built, on NCCL's stand-in.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
. "$CB_SRCDIR/tests/support/faults.sh"
use_fault_layer
backend=faulty-mpi

# fault NP FAULT MATRIX ARGS...: one run with one fault, caught in every row.
fault() {
    np=$1 spec=$2 matrix=$3
    shift 3
    run_fault "$np" "$spec" -o alltoallv --a2av-matrix "$matrix" -n 1 -w 0 -c 1 \
        -b 1K -e 64K -f 8 "$@"
    every_row_wrong alltoallv
}

for np in 3 4; do
    matrices="uniform random:5 hot:4 hot:2:2"
    [ "$np" = 4 ] && matrices="random:5 hot:2:2"   # a skew where two ranks are hot
    for matrix in $matrices; do
        fault "$np" shift:1 "$matrix" -d float,int8
        fault "$np" swap:0:2 "$matrix" -d float,bfloat16
        fault "$np" missing:1 "$matrix" -d float
        fault "$np" stale:2 "$matrix" -d float,int8
        fault "$np" corrupt:0:3 "$matrix" -d half
        fault "$np" skip "$matrix" -d float
    done
    # Rank 0's input in place of rank 2's: the same input size, as every
    # rank sends under a uniform or hot matrix.
    fault "$np" dup:0:2 uniform -d float,int8
    fault "$np" dup:0:2 hot:3 -d float
    # Only the timed iterations' output is wrong: --check-timed sees it.
    fault "$np" timed:shift:0 random:5 -d float --check-timed
done
NCCL_COLLBENCH_TEST_FAULT=timed:shift:0
run 3 --backend faulty-mpi -o alltoallv --a2av-matrix random:5 -n 1 -w 0 -c 1 -b 1K -e 64K -f 8
expect_rc 0 "a timed-only fault without --check-timed"

# The same layer around the NCCL backend, on its CPU stand-in.
if [ -x "$CB_BUILDDIR/tests/nccl-collbench-standin" ]; then
    backend=faulty-nccl
    CB_STANDIN_GPUS=4
    export CB_STANDIN_GPUS
    for matrix in uniform random:5 hot:4; do
        fault 3 shift:1 "$matrix" -d float
        fault 3 swap:0:2 "$matrix" -d bfloat16
        fault 3 missing:1 "$matrix" -d float
        fault 3 skip "$matrix" -d int8
    done
    fault 4 dup:0:2 hot:2:2 -d float
    fault 3 timed:shift:0 random:5 -d float --check-timed
fi
echo "ok"
