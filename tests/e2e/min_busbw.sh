# --min-busbw: a run whose busbw at the sweep's largest size falls below the
# floor fails with status 8 and a note per row below it; smaller sizes and
# barrier are not gated; wrong values (7) take precedence; the scan's
# figures are gated too.
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

for bad in 0 -1 abc; do
    run 1 --backend mpi --min-busbw "$bad"
    expect_rc 2 "--min-busbw $bad"
    grep -q -- "--min-busbw: '$bad' is not a positive number of GB/s" "$CB_TMP/err" ||
        show_and_fail "--min-busbw $bad: no message naming the value"
done
echo "ok"
