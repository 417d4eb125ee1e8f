# The seed scenarios of issue 7 beyond ring_allreduce and --split:
# hier_allreduce (reduce inside --hier-split groups, all-reduce among their
# first ranks, broadcast back) and --layout col (column slices of a matrix)
# at 2, 3 and 4 ranks on the MPI backend and through the NCCL stand-in,
# verified with zero wrong; a wrong element is caught; uneven groups; bad
# groupings are usage errors on every rank; a sub-communicator that fails
# to start or fails later ends the run on every rank with one message.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

sizes=5,45,405,3645
STANDIN="$CB_BUILDDIR/tests/nccl-collbench-standin"
CB_STANDIN_GPUS=4
export CB_STANDIN_GPUS
bins=$CB_BIN
[ -x "$STANDIN" ] && bins="$bins $STANDIN"

for bin in $bins; do
    CB_RUN_BIN=$bin
    backend=mpi
    [ "$bin" = "$STANDIN" ] && backend=nccl
    # Ranks, --hier-split, and the preamble's lines for groups 0 and 1.
    while IFS='|' read -r np spec g0 g1; do
        run "$np" --backend "$backend" -o allreduce,hier_allreduce \
            --hier-split "$spec" -d float,int32 --redop sum,prod,max,premulsum,avg \
            -b 5 -e 4K -f 9 -n 2 -c 2 --csv "$CB_TMP/hier.csv"
        expect_rc 0 "hier_allreduce --hier-split $spec on $np ranks ($backend)"
        check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/hier.csv" --ranks "$np" \
            --sizes "$sizes" --collective allreduce,hier_allreduce --dtypes float,int32 \
            --redops sum,prod,max,premulsum,avg --passes 2
        grep -q "^# hier_allreduce inner groups (--hier-split $spec): " "$CB_TMP/out" ||
            fail "no inner-group note for $spec on $np ranks"
        grep -q "^# group 0: $g0\$" "$CB_TMP/out" || fail "$spec on $np ranks: group 0 is not $g0"
        if [ -n "$g1" ]; then
            grep -q "^# group 1: $g1\$" "$CB_TMP/out" ||
                fail "$spec on $np ranks: group 1 is not $g1"
        fi
        grep -q '^# skipped hier_allreduce float avg: avg does not compose' "$CB_TMP/out" ||
            fail "no note why hier_allreduce skips avg"
    done <<'CASES'
2|size:1|1 rank: 0|1 rank: 1
3|size:2|2 ranks: 0,1|1 rank: 2
4|stride:2|2 ranks: 0,2|2 ranks: 1,3
4|color:5,5,5,7|3 ranks: 0,1,2|1 rank: 3
4|node|4 ranks: 0,1,2,3|
CASES

    # Column layout beside the row layout, every rooted root, at 2, 3, 4 ranks.
    for np in 2 3 4; do
        run "$np" --backend "$backend" \
            -o allgather,reducescatter,alltoall,gather,allreduce --layout row,col \
            -d float,int8 -r all -b 5 -e 4K -f 9 -n 2 -c 1 --csv "$CB_TMP/col.csv"
        expect_rc 0 "--layout row,col on $np ranks ($backend)"
        check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/col.csv" --ranks "$np" \
            --sizes "$sizes" --collective allgather,reducescatter,alltoall,gather,allreduce \
            --layout row,col --dtypes float,int8 --roots all
    done

    # With --split, graphs and grouped operations (-m) too.
    run 4 --backend "$backend" --split size:3 -o hier_allreduce,alltoall \
        --layout col --hier-split size:2 -b 5 -e 4K -f 9 -n 2 -m 3 --csv "$CB_TMP/both.csv" \
        --json "$CB_TMP/both.json"
    expect_rc 0 "--split with hier_allreduce and --layout col ($backend)"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/both.csv" --ranks 4 \
        --sizes "$sizes" --collective hier_allreduce,alltoall --layout col --group-sizes 3,1
    "$CB_PYTHON" - "$CB_TMP/both.json" <<'PY' || fail "JSON of --split, --hier-split, --layout col"
import json, sys
doc = json.load(open(sys.argv[1]))
p = doc["parameters"]
assert p["split"] == "size:3" and p["hier_split"] == "size:2" and p["layouts"] == ["col"], p
res = doc["results"]
assert {r["layout"] for r in res if r["collective"] == "alltoall"} == {"col"}, res
assert all(r["matrix"] is None for r in res if r["collective"] == "hier_allreduce")
# alltoall's matrix: rows x (group ranks * width) holds the group's count * ranks.
for r in res:
    if r["collective"] == "alltoall":
        rows, cols = r["matrix"]
        assert rows * cols == r["count"] * r["group_ranks"], r
PY
    if [ "$backend" = nccl ]; then
        run 3 --backend nccl -o hier_allreduce,allgather --layout col \
            --hier-split size:2 -b 5 -e 4K -f 9 -n 2 -G 2
        expect_rc 0 "-G with hier_allreduce and --layout col"
        check check-sweep --table "$CB_TMP/out" --ranks 3 --sizes "$sizes" \
            --collective hier_allreduce,allgather --layout col
    fi

    # A wrong element is caught in both.
    # (rank 2 sees element 3 wrong, through the fault layer, tests/faults/layer)
    NCCL_COLLBENCH_TEST_FAULT=corrupt:2:3
    export NCCL_COLLBENCH_TEST_FAULT
    CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" run 3 --backend "faulty-$backend" \
        -o hier_allreduce,allgather,alltoall --layout col --hier-split size:2 -b 96 -e 96 -n 1
    unset NCCL_COLLBENCH_TEST_FAULT
    expect_rc 7 "a corrupted hier_allreduce or column-layout result ($backend)"
    check check-wrong --table "$CB_TMP/out" --collective hier_allreduce,allgather,alltoall
done
unset CB_RUN_BIN

# The issue's commands, on the MPI backend, one check pass.
run 4 --backend mpi -o ring_allreduce,allreduce,hier_allreduce -c 1 -e 1M
expect_rc 0 "ring_allreduce,allreduce,hier_allreduce -c 1"
sizes=$("$CB_PYTHON" -c 'print(",".join(str(8 << k) for k in range(18)))')
check check-sweep --table "$CB_TMP/out" --ranks 4 --sizes "$sizes" \
    --collective ring_allreduce,allreduce,hier_allreduce
run 4 --backend mpi --layout col -o allgather,alltoall -e 1M
expect_rc 0 "--layout col -o allgather,alltoall"
check check-sweep --table "$CB_TMP/out" --ranks 4 --sizes "$sizes" \
    --collective allgather,alltoall --layout col

# A colour list that does not fit the ranks is a usage error on every rank.
run 3 --backend mpi -o hier_allreduce --hier-split color:0,1 -b 8 -e 8
expect_rc 2 "--hier-split color list of 2 on 3 ranks"
[ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || fail "not exactly one message"
grep -q '^nccl-collbench: .*--hier-split color:0,1: 2 colours for 3 ranks' "$CB_TMP/err" ||
    fail "the message does not name the colour list"

if [ -x "$STANDIN" ]; then
    # Under -m the engine groups row-layout allgathers but never the column
    # layout's (a group would start the collectives after the copies) nor
    # hier_allreduce's steps: the stand-in's trace shows which launched in
    # an NCCL group.
    CB_RUN_BIN=$STANDIN
    CB_STANDIN_TRACE="$CB_TMP/trace"
    export CB_STANDIN_TRACE
    for what in "row 1 allgather" "col 0 allgather" "row 0 hier_allreduce"; do
        set -- $what
        rm -f "$CB_TMP"/trace.*
        run 2 --backend nccl -o "$3" --layout "$1" --hier-split size:1 -b 64 -e 64 -n 2 -m 3 -c 1
        expect_rc 0 "-m 3 -o $3 --layout $1"
        # Groups of the sweep: after the backend's warmup of each kind,
        # which ends with the free memory's measurement.
        groups=$(for f in "$CB_TMP"/trace.*; do sed -n '/^cudaMemGetInfo/,$p' "$f"; done |
            grep -c '^ncclGroupStart' || true)
        if [ "$2" = 1 ]; then
            [ "$groups" -gt 0 ] || fail "-m 3 -o $3 --layout $1 launched no NCCL group"
        else
            [ "$groups" = 0 ] || fail "-m 3 -o $3 --layout $1 launched $groups NCCL groups"
        fi
    done
    unset CB_STANDIN_TRACE

    # ncclCommSplit failing on one rank, blocking (the default): the
    # others wait in NCCL's bootstrap for it, the failing rank names the
    # call, and the watchdog ends every rank with status 3.
    CB_STANDIN_FAIL_SPLIT=1
    export CB_STANDIN_FAIL_SPLIT
    CB_RUN_BIN=$STANDIN
    run 3 --backend nccl -o hier_allreduce -b 8 -e 8 -T 10
    expect_stopped 3 "a failed blocking ncclCommSplit"
    [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || fail "not exactly one message"
    grep -q '^nccl-collbench: .*ncclCommSplit failed' "$CB_TMP/err" ||
        fail "the message does not name ncclCommSplit (blocking)"
    # Non-blocking (NCCL_COMM_BLOCKING=0), polled while the ranks agree: every
    # rank stops with 1 and one message.
    NCCL_COMM_BLOCKING=0
    export NCCL_COMM_BLOCKING
    CB_STANDIN_FAIL_SPLIT_AFTER=0
    export CB_STANDIN_FAIL_SPLIT_AFTER
    run 3 --backend nccl -o hier_allreduce -b 8 -e 8
    unset CB_STANDIN_FAIL_SPLIT CB_STANDIN_FAIL_SPLIT_AFTER NCCL_COMM_BLOCKING
    expect_rc 1 "a failed ncclCommSplit, polled"
    [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || fail "not exactly one message"
    grep -q '^nccl-collbench: .*setting up hier_allreduce failed: .*ncclCommSplit failed' \
        "$CB_TMP/err" || fail "the message does not name ncclCommSplit"

    # An asynchronous error in a split communicator is seen while waiting on
    # the stream that runs it: every rank stops, one message, no hang.
    CB_STANDIN_FAIL_ASYNC=1
    export CB_STANDIN_FAIL_ASYNC
    run 3 --backend nccl -o hier_allreduce --hier-split size:2 -b 8 -e 64
    expect_rc 1 "an asynchronous error in a split communicator"
    [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || fail "not exactly one message"
    grep -q '^nccl-collbench: .*asynchronous error in a split communicator' "$CB_TMP/err" ||
        fail "the message does not name the split communicator's error"
    unset CB_STANDIN_FAIL_ASYNC CB_RUN_BIN
fi
echo "ok"
