# An integer average whose reduced sum is one too large or one too small
# (before the division, where a transport would corrupt it) is caught in
# every row, at every size from two elements per result up, for int32,
# uint8, int8 and int64 at 2, 3 and 4 ranks (nccl-collbench-collectives(7),
# VERIFICATION): the inputs put a sum one too large and one too small each
# across the truncating division in one of any two neighbouring elements,
# so that every rank's result of two elements shows both.
# The fault layer's avgsum:D adds D to the sum itself (not to an input, not
# to the average), on the MPI backend (allreduce, reduce, reducescatter and
# ring_allreduce's last step) and NCCL's stand-in.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
. "$CB_SRCDIR/tests/support/faults.sh"
use_fault_layer
CB_RUN_TIMEOUT=120

# fault NP FAULT COLLECTIVES ARGS...: one run of --redop avg, caught in every row.
fault() {
    np=$1 spec=$2 colls=$3
    shift 3
    run_fault "$np" "$spec" -o "$colls" --redop avg -n 1 -w 0 "$@"
    every_row_wrong "$colls"
}

# Sizes from two elements of the widest type per rank's result (-i: every
# size, not only powers of two) for every type.
sizes() {
    np=$1
    echo "-b $((16 * np)) -e $((16 * np * 12)) -i $((16 * np))"
}

backend=faulty-mpi
colls=allreduce,reduce,reducescatter,ring_allreduce
for np in 2 3 4; do
    for d in 1 -1; do
        # shellcheck disable=SC2046
        fault "$np" "avgsum:$d" "$colls" -d int32,uint8,int8,int64 $(sizes "$np")
    done
done
# Every buffer: reduce-scatter results of two elements, one run per type, so
# that each rank's tally is its one buffer; every rank must see it.
for np in 2 3 4; do
    for t in int32:4 uint8:1 int8:1 int64:8; do
        for d in 1 -1; do
            bytes=$((2 * np * ${t#*:}))
            fault "$np" "avgsum:$d" reducescatter -d "${t%:*}" -b "$bytes" -e "$bytes"
            r=0
            while [ "$r" -lt "$np" ]; do
                grep -q "^# Wrong elements on host .*(rank $r): " "$CB_TMP/out" ||
                    show_and_fail "$CURRENT: rank $r's two elements verified clean"
                r=$((r + 1))
            done
        done
    done
done

# A clean run of the same passes (the layer's sum and division are right).
NCCL_COLLBENCH_TEST_FAULT=avgsum:0
export NCCL_COLLBENCH_TEST_FAULT
# shellcheck disable=SC2046
run 4 --backend faulty-mpi -o "$colls" --redop avg -n 1 -w 0 -d int32,uint8,int8,int64 $(sizes 4)
expect_rc 0 "avgsum:0 on 4 ranks"

if [ -x "$CB_BUILDDIR/tests/nccl-collbench-standin" ]; then
    backend=faulty-nccl
    CB_STANDIN_GPUS=4
    export CB_STANDIN_GPUS
    colls=allreduce,reduce,reducescatter
    for np in 2 3 4; do
        for d in 1 -1; do
            # shellcheck disable=SC2046
            fault "$np" "avgsum:$d" "$colls" -d int32,uint8,int8,int64 $(sizes "$np")
        done
    done
fi
echo "ok"
