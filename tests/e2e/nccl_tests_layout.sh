# Under nccl-tests' names every line of the table is theirs, byte for byte
# (nccl-tests 2.19.6, src/util.cu and src/common.cu): all_reduce_perf,
# all_gather_perf, sendrecv_perf and alltoall_perf, each run through a link
# on 2 ranks of the MPI backend, then all_reduce_perf once more with -C 1,
# -I 1 and -S 1 (their other titles and columns). nccl_tests_layout.py
# holds their format strings and compares; our version line and our own
# lines after theirs aside.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

links=$CB_TMP/bin
mkdir -p "$links"
sizes=8,16,32,64
# layout PROGRAM COUNT_DIV REDOP FLAGS ARGS...: run PROGRAM, compare.
# COUNT_DIV: the row's count is size / 4 / COUNT_DIV (the gathers' count
# is per rank, as theirs).
layout() {
    name=$1 div=$2 redop=$3 flags=$4
    shift 4
    [ -e "$links/$name" ] || ln -s "$CB_BIN" "$links/$name"
    CB_RUN_BIN=$links/$name
    run 2 -b 8 -e 64 -f 2 -n 5 -w 1 "$@"
    unset CB_RUN_BIN
    expect_rc 0 "$name $*"
    "$CB_PYTHON" "$CB_SRCDIR/tests/e2e/nccl_tests_layout.py" "$CB_TMP/out" "$name" "$sizes" \
        "$div" "$redop" "$flags" || show_and_fail "$name $*: not nccl-tests' layout"
}
layout all_reduce_perf 1 sum ""
layout all_gather_perf 2 none ""
layout sendrecv_perf 1 sum ""
layout alltoall_perf 2 none ""
layout all_reduce_perf 1 sum CIS -C 1 -I 1 -S 1
echo "ok"
