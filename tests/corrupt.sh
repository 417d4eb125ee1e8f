# A wrong element is caught: the test-only hook NCCL_COLLBENCH_TEST_CORRUPT
# makes one rank see a wrong value after each checked operation.
. "$CB_SRCDIR/tests/lib.sh"
need_mpirun
need_python

NCCL_COLLBENCH_TEST_CORRUPT=1:3
export NCCL_COLLBENCH_TEST_CORRUPT
run 3 -b 64 -e 256 -f 2 -n 2 -c 2 --csv "$CB_TMP/bad.csv"
expect_rc 7 "corrupted results"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/bad.csv" --ranks 3 --sizes 64,128,256 \
    --passes 2 --wrong any
# Two passes, one wrong element each, in every cell.
awk '!/^#/ { if ($9 != 2 || $13 != 2) bad = 1; rows++ } END { exit bad || rows != 3 }' "$CB_TMP/out" ||
    fail "#wrong should be 2 in every cell"
grep -q '^# Out of bounds values : 12 FAILED$' "$CB_TMP/out" || fail "footer does not count 12 wrong"
[ "$(grep -c '^# WRONG: allreduce float sum root -1, .* B .*: 2 wrong; first at rank 1 (.*) element 3: expected .*, got ' "$CB_TMP/out")" = 6 ] ||
    fail "expected one WRONG line per cell naming rank 1 element 3"
awk -F, 'NR > 1 && $25 != 2 { bad = 1 } END { exit bad }' "$CB_TMP/bad.csv" || fail "CSV wrong column"

# The hook is inert for an element outside the buffer, and without checks.
NCCL_COLLBENCH_TEST_CORRUPT=1:100000
run 2 -b 64 -e 64 -n 2
expect_rc 0 "hook outside the buffer"
NCCL_COLLBENCH_TEST_CORRUPT=0:0
run 2 -b 64 -e 64 -n 2 -c 0
expect_rc 0 "hook with checking off"
echo "ok"
