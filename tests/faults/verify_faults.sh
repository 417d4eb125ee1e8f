# Verification catches every class of error, for every collective family.
# tests/nccl-collbench-faulty is the program with the test-only fault layer;
# its backend faulty-mpi is the MPI backend with one fault
# (NCCL_COLLBENCH_TEST_FAULT) in every operation. Each fault must end the run with status 7, a nonzero
# #wrong and a "# WRONG:" line for every collective it affects, and leave the
# collectives it does not affect correct.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
. "$CB_SRCDIR/tests/support/faults.sh"
use_fault_layer

every=allreduce,allgather,reducescatter,broadcast,reduce,alltoall,gather,scatter,sendrecv
blocks=allgather,reducescatter,alltoall,gather,scatter,sendrecv
rooted=broadcast,reduce,gather,scatter

# fault_run NP FAULT AFFECTED CLEAN ARGS...: one run with one fault.
fault_run() {
    np=$1 fault=$2 affected=$3 clean=$4
    shift 4
    NCCL_COLLBENCH_TEST_FAULT=$fault
    export NCCL_COLLBENCH_TEST_FAULT
    run "$np" --backend faulty-mpi -o all -r all -n 1 -w 0 -c 1 "$@"
    expect_rc 7 "fault $fault on $np ranks ($*)"
    grep -q "fault $fault" "$CB_TMP/out" || fail "the preamble does not name fault $fault"
    "$CB_PYTHON" "$CB_SRCDIR/tests/support/parse_output.py" check-wrong --table "$CB_TMP/out" \
        --collective "$affected" --clean "$clean" ||
        { cat "$CB_TMP/out"; fail "fault $fault on $np ranks ($*) was not caught as it should be"; }
}

# Every type set at 3 ranks; float again at 4.
for case in "3 -d float --redop sum" "3 -d fp8_e5m2,int8 --redop sum,min" \
            "3 -d half,bfloat16 --redop prod,avg,premulsum" "4 -d float --redop sum"; do
    np=${case%% *}
    types=${case#* }
    last=$((np - 1))
    sizes="-b 48 -e 768 -f 4"
    # shellcheck disable=SC2086
    {
        # A contribution missing: rank 1's input is zeros.
        fault_run "$np" missing:1 "$every" "" $sizes $types
        # Two ranks' blocks swapped (rank 0 and the last).
        fault_run "$np" "swap:0:$last" "$blocks" allreduce,broadcast,reduce $sizes $types
        # Data shifted by one element on rank 1.
        fault_run "$np" shift:1 "$every" "" $sizes $types
        # A stale value: rank 1's output is what the previous size left.
        fault_run "$np" stale:1 "$every" "" $sizes $types
        # The wrong root's data.
        fault_run "$np" root:1 "$rooted" allreduce,allgather,reducescatter,alltoall,sendrecv \
            $sizes $types
    }
done

# A fault the backend cannot parse is a runtime error, not a silent pass.
NCCL_COLLBENCH_TEST_FAULT=bogus
run 2 --backend faulty-mpi -b 8 -e 8
expect_rc 1 "unknown fault"
grep -q 'NCCL_COLLBENCH_TEST_FAULT' "$CB_TMP/err" || fail "no message naming the fault variable"
echo "ok"
