# A wrong element is caught: the fault layer (tests/faults/layer) makes one rank
# see a wrong value after each operation (corrupt:RANK:ELEMENT).
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
. "$CB_SRCDIR/tests/support/faults.sh"
use_fault_layer

NCCL_COLLBENCH_TEST_FAULT=corrupt:1:3
export NCCL_COLLBENCH_TEST_FAULT
run 3 --backend faulty-mpi -b 64 -e 256 -f 2 -n 2 -c 2 --csv "$CB_TMP/bad.csv"
expect_rc 7 "corrupted results"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/bad.csv" --ranks 3 --sizes 64,128,256 \
    --passes 2 --wrong any
# Two passes, one wrong element each, in every cell.
awk '!/^#/ { if ($9 != 2 || $13 != 2) bad = 1; rows++ } END { exit bad || rows != 3 }' "$CB_TMP/out" ||
    fail "#wrong should be 2 in every cell"
grep -q '^# Out of bounds values : 12 FAILED$' "$CB_TMP/out" || fail "footer does not count 12 wrong"
[ "$(grep -c '^# WRONG: allreduce float sum root -1, .* B .*: 2 wrong; first at rank 1 (.*) element 3: expected .*, got ' "$CB_TMP/out")" = 6 ] ||
    fail "expected one WRONG line per cell naming rank 1 element 3"
# (with a real CSV reader: the library field names the fault, after a comma)
"$CB_PYTHON" -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sys.exit(not rows or any(r["wrong"] != "2" for r in rows))' "$CB_TMP/bad.csv" ||
    fail "CSV wrong column"

# The fault is inert for an element outside the buffer, and without checks.
NCCL_COLLBENCH_TEST_FAULT=corrupt:1:100000
run 2 --backend faulty-mpi -b 64 -e 64 -n 2
expect_rc 0 "hook outside the buffer"
NCCL_COLLBENCH_TEST_FAULT=corrupt:0:0
run 2 --backend faulty-mpi -b 64 -e 64 -n 2 -c 0
expect_rc 0 "hook with checking off"
# nccl-collbench itself carries no test hooks: neither the layer's variable
# nor the engine hook that it replaced changes a result, and it has no
# faulty backends.
NCCL_COLLBENCH_TEST_FAULT=corrupt:1:3 NCCL_COLLBENCH_TEST_CORRUPT=1:3 CB_RUN_BIN=$CB_BIN \
    run 2 -b 64 -e 64 -n 1
expect_rc 0 "nccl-collbench with the fault variables set"
CB_RUN_BIN=$CB_BIN run 2 --backend faulty-mpi -b 64 -e 64
expect_rc 2 "nccl-collbench --backend faulty-mpi"
echo "ok"
