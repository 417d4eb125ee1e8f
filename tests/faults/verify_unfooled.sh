# Verification cannot be fooled (nccl-collbench-collectives(7), VERIFICATION): faults that
# slipped through before the values got a prime period, distinct rank
# contributions, bitwise comparison and integer-average remainders are each
# caught in every row of every collective they apply to (alltoallv,
# ring_allreduce and hier_allreduce included), at least in float, bfloat16,
# int8 and both fp8 types, with exit status 7: a shift and a chunk swap by
# the period the old values had (data movement: 4096 half, 512 bfloat16,
# 256 int8, 32 fp8_e4m3, 16 fp8_e5m2 elements; reductions: 65536 elements of
# every type), rank 0's contribution duplicated in place of rank 3's, +0
# turned into -0, an integer sum one too large under avg, and the operation
# skipped; the last three at several sizes each (results of one element
# excepted: see VERIFICATION, what is not caught). Through
# tests/nccl-collbench-faulty's fault layer, on the MPI backend and, where it
# was built, on NCCL's stand-in.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
. "$CB_SRCDIR/tests/support/faults.sh"
use_fault_layer
backend=faulty-mpi

# fault NP FAULT COLLECTIVES ARGS...: one run with one fault, caught everywhere.
fault() {
    np=$1 spec=$2 colls=$3
    shift 3
    run_fault "$np" "$spec" -o "$colls" -n 1 -w 0 -c 1 "$@"
    every_row_wrong "$colls"
}

every=allreduce,allgather,reducescatter,broadcast,reduce,alltoall,gather,scatter,sendrecv
every=$every,ring_allreduce,hier_allreduce,alltoallv
reducing=allreduce,reduce,reducescatter,ring_allreduce,hier_allreduce

# Shift and chunk swap by the old period K of each type, on rank 0 (the
# root). The chunks are LEN = max(K, 256) elements (a multiple of K), and
# every collective's output holds at least 2 LEN elements, so that at least
# 256 elements are compared with displaced ones even in the smallest types.
# (The one-byte types share their chunks, 256 elements: one run.)
# by_period: those faults in each collective of $every.
by_period() {
    for case in "float 65536 4" "half 4096 2" "bfloat16 512 2" "int8 256 1" "fp8_e4m3 32 1" \
                "fp8_e5m2 16 1"; do
        # shellcheck disable=SC2086
        set -- $case
        len=$(($2 < 256 ? 256 : $2))
        bytes=$((3 * 2 * len * $3))
        fault 3 "shift:0:$2" "$every" -d "$1" --redop sum -b "$bytes" -e "$bytes"
        [ "$3" = 1 ] && continue
        fault 3 "chunks:0:0:$len:$len" "$every" -d "$1" --redop sum -b "$bytes" -e "$bytes"
    done
    fault 3 chunks:0:0:256:256 "$every" -d int8,fp8_e4m3,fp8_e5m2 --redop sum -b 1536 -e 1536
}
by_period
# Reductions' old period, 65536 elements, in the small types too (such as
# reduce-scatter int8 with two 64K-element chunks swapped): every result
# holds 2 x 65536 elements.
fault 3 chunks:0:0:65536:65536 "$reducing" -d int8,fp8_e4m3,fp8_e5m2 --redop sum -b 384K -e 384K
fault 3 shift:0:65536 "$reducing" -d bfloat16 --redop sum -b 768K -e 768K

# Rank 0's input in place of rank 3's, every reduction that sums or
# multiplies; and where data only moves, wherever rank 3's input is read
# (broadcast and scatter: when rank 3 is the root).
fault 4 dup:0:3 "$reducing" -d float,bfloat16,int8,fp8_e4m3,fp8_e5m2 \
    --redop sum,prod,premulsum -b 16 -e 4K -f 16
fault 4 dup:0:3 allgather,alltoall,gather,sendrecv,alltoallv -d float,bfloat16,int8,fp8_e4m3 \
    -b 64 -e 4K -f 8
fault 4 dup:0:3 broadcast,scatter -r 3 -d float,bfloat16,int8,fp8_e4m3 -b 64 -e 4K -f 8

# +0 turned into -0 on rank 0: min's result is 0 at some elements of every
# row; data movement holds zeros often enough in the types with few values.
fault 3 sign:0 "$reducing" -d float,bfloat16,half,fp8_e4m3,fp8_e5m2 --redop min -b 6K -e 6K
fault 3 sign:0 "$every" -d bfloat16,fp8_e4m3,fp8_e5m2 --redop min -b 48K -e 48K
# In float, data movement holds a zero at about one place of its 65521-
# element period, or none (about a third of the seeds), so no row of a
# float data-movement collective is sure to hold one: min's zeros above
# are float's case.

# An integer average whose sum is one too large (rank 1 adds 1).
fault 3 bump:1 "$reducing" -d int8,uint8,int32,int64 --redop avg -b 48 -e 12K -f 4
fault 4 bump:1 "$reducing" -d int8,int32 --redop avg -b 64 -e 16K -f 4

# No operation at all: what the buffers held before is not the result.
fault 3 skip "$every" -d float,bfloat16,int8,fp8_e5m2 --redop sum,avg -b 96 -e 6K -f 8

# A fault the layer cannot parse is a runtime error naming the variable.
NCCL_COLLBENCH_TEST_FAULT=shift:x
run 2 --backend faulty-mpi -b 8 -e 8
expect_rc 1 "unparsable fault"
grep -q 'NCCL_COLLBENCH_TEST_FAULT must be' "$CB_TMP/err" || show_and_fail "no message naming it"

# The same layer around the NCCL backend, on its CPU stand-in: a subset.
if [ -x "$CB_BUILDDIR/tests/nccl-collbench-standin" ]; then
    backend=faulty-nccl
    CB_STANDIN_GPUS=4
    export CB_STANDIN_GPUS
    # ring_allreduce needs host buffers: the NCCL backend skips it.
    every=allreduce,allgather,reducescatter,broadcast,reduce,alltoall,gather,scatter,sendrecv
    every=$every,hier_allreduce,alltoallv
    reducing=allreduce,reduce,reducescatter,hier_allreduce
    by_period
    fault 3 chunks:0:0:65536:65536 "$reducing" -d int8,fp8_e5m2 --redop sum -b 384K -e 384K
    fault 4 dup:0:3 "$reducing" -d float,bfloat16,int8,fp8_e4m3 --redop sum,prod,premulsum \
        -b 16 -e 4K -f 16
    fault 4 dup:0:3 allgather,alltoall,gather,sendrecv,alltoallv -d float,bfloat16,int8,fp8_e5m2 \
        -b 64 -e 4K -f 8
    fault 4 dup:0:3 broadcast,scatter -r 3 -d float,int8 -b 64 -e 4K -f 8
    fault 3 sign:0 "$reducing" -d float,half,bfloat16,fp8_e4m3 --redop min -b 6K -e 6K
    fault 3 sign:0 "$every" -d bfloat16,fp8_e5m2 --redop min -b 48K -e 48K
    fault 3 bump:1 "$reducing" -d int8,int32 --redop avg -b 48 -e 12K -f 4
    fault 3 skip "$every" -d float,bfloat16,int8,fp8_e4m3 -b 96 -e 6K -f 8
    # Two ranks' blocks swapped (the MPI backend's: verify_faults.sh).
    fault 3 swap:0:2 allgather,reducescatter,alltoall,gather,scatter,sendrecv \
        -d float,bfloat16,int8,fp8_e4m3 -b 48 -e 3K -f 4
fi
echo "ok"
