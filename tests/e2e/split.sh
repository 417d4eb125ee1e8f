# --split: sub-communicators measured at once on the MPI backend at 2, 3
# and 4 ranks and through the NCCL stand-in; one row per group with its
# group column, verified with each group's rank count, zero wrong; uneven
# groups; bad specs and colour lists are usage errors with one message.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

colls=allreduce,allgather,broadcast,ring_allreduce,barrier
sizes=5,45,405,3645
# np spec group-sizes
while read -r np spec groups; do
    run "$np" --backend mpi --split "$spec" -o "$colls" -d float,int8 --redop sum,max -r all \
        -b 5 -e 4K -f 9 -n 2 -c 1 --csv "$CB_TMP/split.csv"
    expect_rc 0 "--split $spec on $np ranks"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/split.csv" --ranks "$np" \
        --sizes "$sizes" --collective "$colls" --dtypes float,int8 --redops sum,max --roots all \
        --group-sizes "$groups"
    ngroups=$(echo "$groups" | tr ',' '\n' | wc -l)
    grep -q "^# split $spec: $ngroups group" "$CB_TMP/out" || fail "no split note for $spec"
    if [ "$ngroups" = 1 ]; then
        aggregate="1 group"
    else
        aggregate="all $ngroups groups"
    fi
    grep -q "^# $aggregate, 45 B in-place: slowest group " "$CB_TMP/out" ||
        fail "no aggregate line for $spec"
done <<'CASES'
2 stride:2 1,1
3 stride:2 2,1
4 stride:2 2,2
4 size:3 3,1
3 size:2 2,1
4 color:1,0,0,1 2,2
4 node 4
CASES

# Group 0 of stride:2 holds the even ranks; each line names the group's
# host, and so do its rows.
run 4 --backend mpi --split stride:2 -o allreduce -b 8 -e 8 -n 1
expect_rc 0 "stride:2"
host=$(awk '$2 == "Rank" && $3 == "0" { print $7 }' "$CB_TMP/out")
grep -q "^# group 0: 2 ranks: 0,2 on host $host\$" "$CB_TMP/out" ||
    show_and_fail "group 0 of stride:2 is not 0,2 on $host"
grep -q "^# group 1: 2 ranks: 1,3 on host $host\$" "$CB_TMP/out" ||
    show_and_fail "group 1 of stride:2 is not 1,3 on $host"
has 2 "^ *8 .* [01]  $host\$"

# --split node by name: two hosts of two ranks (NCCL_HOSTID), and one
# spanning group of size:4 named "-" with both hosts on its line.
hostid_launcher "a a b b" "$CB_BIN"
CB_RUN_BIN=$CB_TMP/hostid.sh run 4 --backend mpi --split node -o allreduce -b 8 -e 8 -n 1 \
    --csv "$CB_TMP/node.csv" --json "$CB_TMP/node.json"
expect_rc 0 "--split node on hosts a and b"
has 1 '^# group 0: 2 ranks: 0,1 on host a$'
has 1 '^# group 1: 2 ranks: 2,3 on host b$'
has 1 '^ *8 .* 0  a$'
has 1 '^ *8 .* 1  b$'
has 0 '^#   group'
"$CB_PYTHON" - "$CB_TMP/node.csv" "$CB_TMP/node.json" <<'PY' || fail "--split node: hosts by group"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert sorted((r["group"], r["group_host"]) for r in rows) == \
    [("0", "a"), ("0", "a"), ("1", "b"), ("1", "b")], rows
doc = json.load(open(sys.argv[2]))
assert sorted((r["group"], r["group_host"]) for r in doc["results"]) == \
    [(0, "a"), (0, "a"), (1, "b"), (1, "b")], doc["results"]
PY
CB_RUN_BIN=$CB_TMP/hostid.sh run 4 --backend mpi --split color:0,0,0,0 -o allreduce -b 8 -e 8 \
    -n 1 --csv "$CB_TMP/span.csv"
expect_rc 0 "one group on hosts a and b"
has 1 '^# group 0: 4 ranks: 0,1,2,3 on hosts a, b$'
has 1 '^ *8 .* 0  -$'
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         $c["group_host"] != "" { exit 1 }' "$CB_TMP/span.csv" ||
    fail "a group on two hosts has a group_host"

# A wrong element in one group is found and the run fails with status 7.
# (rank 3 sees element 0 wrong through the fault layer, tests/faults/layer)
NCCL_COLLBENCH_TEST_FAULT=corrupt:3:0 CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
    run 4 --backend faulty-mpi --split stride:2 -o allreduce -b 64 -e 64 -n 1
expect_rc 7 "a corrupted result in group 1"
check check-wrong --table "$CB_TMP/out" --collective allreduce

# Usage errors: exit 2 and one message naming the value.
for bad in size:0 stride:x color: color:1,,2 nodes size:-1 color:0,1,0; do
    run 4 --split "$bad" -o allreduce
    expect_rc 2 "--split $bad"
    n=$(grep -c '^nccl-collbench: ' "$CB_TMP/err")
    [ "$n" = 1 ] || fail "--split $bad: $n messages, expected one"
    grep '^nccl-collbench: ' "$CB_TMP/err" | grep -qF -- "$bad" || fail "--split $bad: value not named"
done
run 4 --split size:3 -r 2 -o broadcast
expect_rc 2 "-r 2 with a one-rank group"
grep -q 'root 2 is not a rank of every --split size:3 group' "$CB_TMP/err" ||
    fail "no message for a root that a group lacks"
# --split node: the groups are known only at run time (two hosts of two
# ranks by NCCL_HOSTID), and -r 3 is still a usage error, not an MPI one.
hostid_launcher "a a b b" "${CB_RUN_BIN:-$CB_BIN}"
CB_RUN_BIN=$CB_TMP/hostid.sh run 4 --backend mpi --split node -r 3 -o broadcast -b 8 -e 8
expect_rc 2 "--split node -r 3 with two-rank nodes"
[ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || show_and_fail "--split node -r 3: not one message"
grep -q 'root 3 is not a rank of every --split node group: the smallest has 2 ranks' \
    "$CB_TMP/err" || show_and_fail "--split node -r 3: no message naming the root"
grep -q "Try 'nccl-collbench --help'" "$CB_TMP/err" || show_and_fail "--split node -r 3: no pointer to --help"
CB_RUN_BIN=$CB_TMP/hostid.sh run 4 --backend mpi --split node -r 1 -o broadcast -b 8 -e 8 -c 1
expect_rc 0 "--split node -r 1 with two-rank nodes"

# nccl-tests' NCCL_TESTS_SPLIT and NCCL_TESTS_SPLIT_MASK give the groups
# nccl-tests would (colour = rank op K), noted in the preamble; with
# --split too, or a value that does not parse, a usage error naming both.
CB_RUN_BIN=$CB_BIN
NCCL_TESTS_SPLIT="MOD 2"
export NCCL_TESTS_SPLIT
run 4 --backend mpi -o allreduce -b 8 -e 8 -n 1 -c 1
expect_rc 0 "NCCL_TESTS_SPLIT=MOD 2"
has 1 '^# split stride:2 (NCCL_TESTS_SPLIT=MOD 2): 2 groups measured at once$'
has 1 '^# group 0: 2 ranks: 0,2 on host '
has 1 '^# NCCL_TESTS_SPLIT=MOD 2: read as --split'
run 4 --backend mpi --split node -o allreduce -b 8 -e 8
expect_rc 2 "NCCL_TESTS_SPLIT with --split"
grep -q 'NCCL_TESTS_SPLIT=MOD 2 and --split node both give groups' "$CB_TMP/err" ||
    show_and_fail "NCCL_TESTS_SPLIT with --split: no message naming both"
NCCL_TESTS_SPLIT="XOR 1"
run 4 --backend mpi -o allreduce -b 8 -e 8
expect_rc 2 "NCCL_TESTS_SPLIT=XOR 1"
grep -q 'NCCL_TESTS_SPLIT=XOR 1: expected AND, OR, MOD or DIV' "$CB_TMP/err" ||
    show_and_fail "NCCL_TESTS_SPLIT=XOR 1: no message naming the value"
# The mask takes precedence: rank & 0x2 makes groups {0,1} and {2,3}.
NCCL_TESTS_SPLIT_MASK=0x2 NCCL_TESTS_OTHER=1
export NCCL_TESTS_SPLIT_MASK NCCL_TESTS_OTHER
run 4 --backend mpi -o allreduce -b 8 -e 8 -n 1 -c 1
expect_rc 0 "NCCL_TESTS_SPLIT_MASK=0x2"
has 1 '^# group 0: 2 ranks: 0,1 on host '
has 1 '^# group 1: 2 ranks: 2,3 on host '
has 1 '^# NCCL_TESTS_SPLIT=XOR 1: not read, NCCL_TESTS_SPLIT_MASK takes precedence'
has 1 '^# NCCL_TESTS_OTHER is set but nccl-collbench does not read it'
unset NCCL_TESTS_SPLIT NCCL_TESTS_SPLIT_MASK NCCL_TESTS_OTHER

# The NCCL backend through the stand-in: one NCCL communicator per group.
if [ -x "$CB_BUILDDIR/tests/nccl-collbench-standin" ]; then
    CB_STANDIN_GPUS=4
    export CB_STANDIN_GPUS
    CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-standin" run 4 --backend nccl \
        --split stride:2 -o allreduce,alltoall,barrier -b 8 -e 4K -f 8 -n 2 -c 1 \
        --csv "$CB_TMP/nccl.csv"
    expect_rc 0 "--split stride:2 through the nccl stand-in"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/nccl.csv" --ranks 4 \
        --sizes 8,64,512,4096 --collective allreduce,alltoall,barrier --group-sizes 2,2
fi
echo "ok"
