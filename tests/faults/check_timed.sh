# --check-timed verifies the output of the last timed iteration of every
# out-of-place placement: a fault confined to the timed iterations (the fault
# layer's "timed:" prefix) goes unseen without it and is reported with
# status 7 with it, in every out-of-place row and no in-place one; clean runs
# with it pass, for every collective, on mpi and on NCCL's stand-in.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"
STANDIN="$CB_BUILDDIR/tests/nccl-collbench-standin"
[ -x "$FAULTY" ] || fail "$FAULTY was not built"
every=allreduce,allgather,reducescatter,broadcast,reduce,alltoall,gather,scatter,sendrecv
small="-b 96 -e 6K -f 8 -n 2 -w 1"

# Clean runs: nothing is reported wrong.
# shellcheck disable=SC2086
{
    run 3 --check-timed -o all -d float,int8,bfloat16,fp8_e5m2 --redop sum,avg $small
    expect_rc 0 "clean run with --check-timed"
    run 3 --check-timed -o allreduce,allgather,alltoall -m 2 --layout row,col $small
    expect_rc 0 "clean run with --check-timed, -m 2 and the column layout"
    if [ -x "$STANDIN" ]; then
        CB_STANDIN_GPUS=4
        export CB_STANDIN_GPUS
        CB_RUN_BIN=$STANDIN run 3 --backend nccl --check-timed -o all -d float,int8 $small
        expect_rc 0 "clean run with --check-timed on the stand-in"
    fi
}

# timed_fault BACKEND: rank 1 sees a wrong element 3 after every timed
# iteration and after no other.
timed_fault() {
    NCCL_COLLBENCH_TEST_FAULT=timed:corrupt:1:3
    export NCCL_COLLBENCH_TEST_FAULT
    # shellcheck disable=SC2086
    CB_RUN_BIN=$FAULTY run 3 --backend "$1" -o "$every" -d float,int8 $small
    expect_rc 0 "$1: a fault in the timed iterations only, without --check-timed"
    # shellcheck disable=SC2086
    CB_RUN_BIN=$FAULTY run 3 --backend "$1" --check-timed -o "$every" -d float,int8 $small
    expect_rc 7 "$1: a fault in the timed iterations only, with --check-timed"
    # Out of place: rank 1's one wrong element (reduce and gather: only when
    # rank 1 is the root, so not here); in place never.
    awk '/^# Collective: / { c = $3; next }
         !/^#/ { want = (c == "reduce" || c == "gather") ? 0 : 1
                 if ($9 != want || $13 != 0) { print "bad row (" c "): " $0; bad = 1 } }
         END { exit bad }' "$CB_TMP/out" || show_and_fail "$1: wrong counts not as expected"
    has 42 "^# WRONG: .* out-of-place: 1 wrong; first at rank 1 (.*) element 3: "
    unset NCCL_COLLBENCH_TEST_FAULT
}
timed_fault faulty-mpi
[ -x "$STANDIN" ] && timed_fault faulty-nccl
echo "ok"
