# Under nccl-tests' names every line of the table is theirs, byte for byte
# (nccl-tests 2.19.6, src/util.cu and src/common.cu): all_reduce_perf,
# all_gather_perf, sendrecv_perf, alltoall_perf and hypercube_perf, each run
# through a link on 2 ranks of the MPI backend, then all_reduce_perf once
# more with -C 1, -I 1 and -S 1 (their other titles and columns),
# sendrecv_perf with -o all (a row set per reduction, as sendrecv.cu),
# all_gather_perf under NCCL_TESTS_SPLIT (the Group column), all_reduce_perf
# with NCCL_TESTS_SPLIT into two groups (one row a size, the groups' mean
# time, as theirs), and, where the
# NCCL backend's CPU stand-in is built, all_reduce_perf -M 1 (their memory
# line). nccl_tests_layout.py holds their format strings and compares; our
# version line and our own lines after theirs aside.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

links=$CB_TMP/bin
mkdir -p "$links"
# layout PROGRAM COUNT_DIV REDOPS FLAGS ARGS...: run PROGRAM on the sizes
# $first to $last (factor 2), compare; $rows: the size column's values,
# $bin: the program linked. COUNT_DIV: the row's count is size / 4 /
# COUNT_DIV (the gathers' count is per rank, as theirs).
layout() {
    name=$1 div=$2 redops=$3 flags=$4
    shift 4
    [ -e "$links/$name" ] || ln -s "${bin:-$CB_BIN}" "$links/$name"
    CB_RUN_BIN=$links/$name
    run 2 -b "$first" -e "$last" -f 2 -n 5 -w 1 "$@"
    unset CB_RUN_BIN
    expect_rc 0 "$name $*"
    "$CB_PYTHON" "$CB_SRCDIR/tests/e2e/nccl_tests_layout.py" "$CB_TMP/out" "$name" "$rows" \
        "$div" "$redops" "$flags" "$first,$last" || show_and_fail "$name $*: not nccl-tests' layout"
}
first=8 last=64 rows=8,16,32,64
layout all_reduce_perf 1 sum ""
layout all_gather_perf 2 none ""
layout sendrecv_perf 1 sum ""
layout alltoall_perf 2 none ""
layout all_reduce_perf 1 sum CIS -C 1 -I 1 -S 1
# sendrecv.cu runs TimeTest once per reduction of -o, in their order.
first=8 last=16 rows=8,16
layout sendrecv_perf 1 sum,prod,max,min,avg,mulsum "" -o all
# run(), common.cu: the colour of the rank's MPI_Comm_split is its Group
# (rank | 1: one group, numbered 1).
NCCL_TESTS_SPLIT="OR 1"
export NCCL_TESTS_SPLIT
layout all_gather_perf 2 none G
# Two groups (rank % 2): theirs prints one row per size, its time reduced
# over every rank of MPI_COMM_WORLD (common.cu, Allreduce; -a 1: the mean),
# its #wrong summed; the CSV keeps a row per group.
NCCL_TESTS_SPLIT="MOD 2"
layout all_reduce_perf 1 sum D --csv "$CB_TMP/split.csv"
unset NCCL_TESTS_SPLIT
"$CB_PYTHON" - "$CB_TMP/out" "$CB_TMP/split.csv" <<'PY' || show_and_fail "NCCL_TESTS_SPLIT: the row is not the groups' mean"
import csv, sys
times = {}
for row in csv.DictReader(open(sys.argv[2], newline="")):
    times.setdefault((int(row["bytes"]), row["placement"]), []).append(float(row["time_us"]))
seen = 0
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith("#") or len(f) != 13:
        continue
    for placement, col in (("out-of-place", 5), ("in-place", 9)):
        group_times = times[(int(f[0]), placement)]
        assert len(group_times) == 2, (f[0], placement, group_times)
        mean = sum(group_times) / 2
        assert abs(float(f[col]) - mean) <= max(0.011, 0.002 * mean), (f, placement, group_times)
    seen += 1
assert seen == len({size for size, _ in times}) > 0, seen
PY
# hypercube.cu: a block of size / 2 rounded down to 16 bytes (48 gathers
# 32 bytes), redop "", algbw = busbw.
first=48 last=96 rows=32,96
layout hypercube_perf 2 "" H
# -M 1's figures exist on the NCCL backend only: its CPU stand-in.
if [ -x "$CB_BUILDDIR/tests/nccl-collbench-standin" ]; then
    mkdir -p "$links/standin"
    links=$links/standin bin=$CB_BUILDDIR/tests/nccl-collbench-standin
    CB_STANDIN_GPUS=2
    export CB_STANDIN_GPUS
    first=8 last=64 rows=8,16,32,64
    layout all_reduce_perf 1 sum M -M 1
else
    echo "-M 1 not checked: the NCCL backend's stand-in was not built"
fi
echo "ok"
