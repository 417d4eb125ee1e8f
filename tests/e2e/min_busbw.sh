# --min-busbw: a run whose busbw at the sweep's largest size falls below the
# floor fails with status 8 and a note per row below it; smaller sizes and
# barrier are not gated; wrong values (7) take precedence; the scan's
# figures are gated too. NCCL_TESTS_MIN_BW gates the average, as in
# nccl-tests, with status 8 and the verdict line saying why.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

SWEEP="-b 1K -e 64K -f 8 -n 2 -w 1"
run 2 --backend mpi -o allreduce,broadcast,barrier $SWEEP --min-busbw 1e9
expect_rc 8 "--min-busbw 1e9"
has 4 '^# Below --min-busbw 1000000000.00 GB/s: '
has 2 '^# Below --min-busbw [0-9.]* GB/s: allreduce float sum 65536 B \(out-of-place\|in-place\) busbw'
has 2 '^# Below --min-busbw [0-9.]* GB/s: broadcast float [a-z]* 65536 B \(out-of-place\|in-place\) root 0 busbw'
has 0 '^# Below .*barrier'
has 0 '^# Below .* \(1024\|8192\) B '
has 1 '^# Result: FAIL (4 figures below --min-busbw) [0-9]* measurements in [0-9.]* s$'

run 2 --backend mpi -o allreduce,broadcast,barrier $SWEEP --min-busbw 1e-9 --json "$CB_TMP/ok.json"
expect_rc 0 "--min-busbw 1e-9"
has 0 '^# Below'

# With --split, every group's row is gated.
run 4 --backend mpi -o allreduce --split size:2 $SWEEP --min-busbw 1e9
expect_rc 8 "--split size:2 --min-busbw 1e9"
has 2 '^# Below .* allreduce float sum 65536 B out-of-place group [01] busbw'

# Wrong values beat a slow run.
NCCL_COLLBENCH_TEST_FAULT=corrupt:1:3
export NCCL_COLLBENCH_TEST_FAULT
CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
    run 2 --backend faulty-mpi -o allreduce $SWEEP --min-busbw 1e9
unset NCCL_COLLBENCH_TEST_FAULT
expect_rc 7 "--min-busbw with wrong values"

# The scan's node, pair and rail figures: 2 hosts of 2 ranks.
hostid_launcher "a a b b" "$CB_BIN"
CB_RUN_BIN=$CB_TMP/hostid.sh run 4 --backend mpi -o scan -b 64K -e 64K -n 2 -w 1 \
    --min-busbw 1e9
expect_rc 8 "-o scan --min-busbw 1e9"
has 2 '^# Below .*: scan node [ab] busbw'
has 1 '^# Below .*: scan pair a - b busbw'
has 2 '^# Below .*: scan rail [01] busbw'

# NCCL_TESTS_MIN_BW, as nccl-tests reads it: the average of the busbw
# cells below 0.9 x the value fails the run (status 8 here), FAILED on the
# average line; at or above it, OK and status 0. The figures are the run's
# own: a floor far above and one far below what this machine reaches.
need_python
NCCL_TESTS_MIN_BW=1e9 run 2 --backend mpi -o allreduce $SWEEP --json "$CB_TMP/minbw.json"
expect_rc 8 "NCCL_TESTS_MIN_BW=1e9"
has 1 '^# Avg bus bandwidth    : [0-9.e+-]* FAILED$'
has 1 '^# Result: FAIL (allreduce average busbw [0-9.]* GB/s below 0.9 x NCCL_TESTS_MIN_BW 1e+09) '
has 1 '^# NCCL_TESTS_MIN_BW=1e9: a collective whose average bus bandwidth is below 0.9 x 1e9 GB/s'
"$CB_PYTHON" - "$CB_TMP/out" "$CB_TMP/minbw.json" <<'PY' || show_and_fail "NCCL_TESTS_MIN_BW verdict"
import json, re, sys
# The average is nccl-tests': the plain mean of every busbw cell printed.
cells = [float(l.split()[7]) for l in open(sys.argv[1]) if not l.startswith("#")] + \
        [float(l.split()[11]) for l in open(sys.argv[1]) if not l.startswith("#")]
avg = [float(l.split(":")[1].split()[0]) for l in open(sys.argv[1])
       if l.startswith("# Avg bus bandwidth")]
assert len(avg) == 1 and abs(avg[0] - sum(cells) / len(cells)) <= 0.01 + 0.05 * avg[0], (avg, cells)
s = json.load(open(sys.argv[2]))["summary"]
assert s["verdict"] == "FAIL" and s["exit_status"] == 8 and s["min_bw_gbps"] == 1e9, s
assert [a["min_bw_passed"] for a in s["avg_busbw_by_collective"]] == [False], s
PY
NCCL_TESTS_MIN_BW=1e-9 run 2 --backend mpi -o allreduce $SWEEP
expect_rc 0 "NCCL_TESTS_MIN_BW=1e-9"
has 1 '^# Avg bus bandwidth    : [0-9.e+-]* OK$'
has 1 '^# Result: PASS [0-9]* measurements in '
# With several collectives each has its own average and verdict: barrier,
# which moves no data, has none.
NCCL_TESTS_MIN_BW=1e9 run 2 --backend mpi -o allreduce,broadcast,barrier $SWEEP
expect_rc 8 "NCCL_TESTS_MIN_BW=1e9, three collectives"
has 2 '^# Avg bus bandwidth (\(allreduce\|broadcast\)) : [0-9.e+-]* FAILED$'
has 0 '^# Avg bus bandwidth.*barrier'
has 0 '^# Avg bus bandwidth    :'
# Wrong values still beat it, and the verdict names where they were.
NCCL_TESTS_MIN_BW=1e9 NCCL_COLLBENCH_TEST_FAULT=corrupt:1:3 \
    CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
    run 2 --backend faulty-mpi -o allreduce $SWEEP
expect_rc 7 "NCCL_TESTS_MIN_BW with wrong values"
has 1 '^# Result: FAIL ([0-9]* wrong elements* on rank 1 host [^;]*; allreduce average busbw '
for bad in abc -1 1x; do
    NCCL_TESTS_MIN_BW=$bad run 2 --backend mpi
    expect_rc 2 "NCCL_TESTS_MIN_BW=$bad"
    grep -q -- "NCCL_TESTS_MIN_BW=$bad: not a bandwidth in GB/s" "$CB_TMP/err" ||
        show_and_fail "NCCL_TESTS_MIN_BW=$bad: no message naming the value"
done
# (a shell may keep an assignment made before a function call)
unset NCCL_TESTS_MIN_BW NCCL_COLLBENCH_TEST_FAULT CB_RUN_BIN

for bad in 0 -1 abc; do
    run 1 --backend mpi --min-busbw "$bad"
    expect_rc 2 "--min-busbw $bad"
    grep -q -- "--min-busbw: '$bad' is not a positive number of GB/s" "$CB_TMP/err" ||
        show_and_fail "--min-busbw $bad: no message naming the value"
done
# A floor no selected collective can meet is refused, naming it (issue
# 36): barrier moves no data, so it has no busbw and no average.
NCCL_TESTS_MIN_BW=5 run 2 --backend mpi -o barrier $SWEEP
expect_rc 2 "NCCL_TESTS_MIN_BW with barrier alone"
grep -q '^nccl-collbench: NCCL_TESTS_MIN_BW=5: no collective selected moves data (barrier' \
    "$CB_TMP/err" || show_and_fail "NCCL_TESTS_MIN_BW with barrier: no message naming it"
run 2 --backend mpi -o barrier --min-busbw 5 $SWEEP
expect_rc 2 "--min-busbw with barrier alone"
grep -q '^nccl-collbench: --min-busbw 5: no collective selected moves data' "$CB_TMP/err" ||
    show_and_fail "--min-busbw with barrier: no message naming it"
# --prom-sizes that name no size of the sweep are refused, naming them;
# one size of the sweep among them is enough.
run 2 --backend mpi -o allreduce $SWEEP --prom "$CB_TMP/p.prom" --prom-sizes 100,200
expect_rc 2 "--prom-sizes naming no size of the sweep"
grep -q '^nccl-collbench: --prom-sizes 100,200: no size of the sweep' "$CB_TMP/err" ||
    show_and_fail "--prom-sizes: no message naming the sizes"
[ -e "$CB_TMP/p.prom" ] && show_and_fail "--prom-sizes refused, yet a file was written"
largest=$(echo "$SWEEP" | sed -n 's/.*-e \([^ ]*\).*/\1/p')
run 2 --backend mpi -o allreduce $SWEEP --prom "$CB_TMP/p.prom" --prom-sizes "100,$largest"
expect_rc 0 "--prom-sizes with one size of the sweep"
echo "ok"
