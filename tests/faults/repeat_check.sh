# -B/--repeat-check: a fault that strikes one launch of one rank (the fault
# layer's nth:K:N, rank 1 on host h1) in the timed iterations is missed by a
# plain run of the same length, whose check launches are fresh ones, and
# caught by -B: status 7, the unrepeatable launch on rank 1 and host h1 in
# the CSV and JSON, in the placement struck and no other; for a reduction
# and a data movement, out of place and in place. With -N 3 the tally
# names the host; clean -B runs pass on mpi and on NCCL's stand-in, where
# the struck launch is caught through the NCCL backend's compare too.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"
STANDIN="$CB_BUILDDIR/tests/nccl-collbench-standin"
[ -x "$FAULTY" ] || fail "$FAULTY was not built"
hostid_launcher "h0 h1" "$FAULTY"
# One size: per placement 1 warmup, 4 timed and 1 check launch, out of
# place first (launches 1 to 6), then in place (7 to 12).
one="-b 4K -e 4K -n 4 -w 1 -c 1"

# struck COLL PLACEMENT N: rank 1's Nth launch, a timed one of PLACEMENT.
struck() {
    NCCL_COLLBENCH_TEST_FAULT=nth:1:$3
    export NCCL_COLLBENCH_TEST_FAULT
    # shellcheck disable=SC2086
    CB_RUN_BIN=$CB_TMP/hostid.sh run 2 --backend faulty-mpi -o "$1" $one
    expect_rc 0 "$1 $2: one struck launch, without -B"
    has 0 '^# Unrepeatable'
    # shellcheck disable=SC2086
    CB_RUN_BIN=$CB_TMP/hostid.sh run 2 --backend faulty-mpi -B -o "$1" $one \
        --csv "$CB_TMP/b.csv" --json "$CB_TMP/b.json"
    expect_rc 7 "$1 $2: one struck launch, with -B"
    has 1 "^# Unrepeatable: $1 float .* $2: 1 launch (over ranks; 4 compared on each) differs .* first on rank 1 host h1 (-B)$"
    has 1 '^# Result: FAIL (1 unrepeatable launch first on rank 1 host h1) '
    has 1 '^# Unrepeatable launches on host h1 GPU - (rank 1): 1 in 1 of 1 cycle$'
    has 0 '^# Suspect host'
    "$CB_PYTHON" - "$CB_TMP/b.csv" "$CB_TMP/b.json" "$2" <<'PY' || show_and_fail "$1 $2: CSV/JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
doc = json.load(open(sys.argv[2]))
struck = sys.argv[3]
assert len(rows) == 2 and len(doc["results"]) == 2, rows
for r, j in zip(rows, doc["results"]):
    hit = r["placement"] == struck
    assert r["wrong"] == "0" and j["wrong"] == 0, r       # the check saw nothing
    assert r["repeat_checked"] == "4" and j["repeat_checked"] == 4, r
    assert r["unrepeatable"] == ("1" if hit else "0"), r
    assert j["unrepeatable"] == (1 if hit else 0), j
    assert r["unrepeatable_elements"] == ("1" if hit else "0"), r
    assert r["unrepeatable_rank"] == ("1" if hit else ""), r
    assert r["unrepeatable_host"] == ("h1" if hit else ""), r
    assert j["first_unrepeatable"] == ({"rank": 1, "host": "h1"} if hit else None), j
s = doc["summary"]
assert s["unrepeatable"] == 1 and s["first_unrepeatable_rank"] == 1, s
assert s["first_unrepeatable_host"] == "h1" and s["suspect_host"] is None, s   # -N 1
assert s["wrong"] == 0 and s["exit_status"] == 7 and doc["parameters"]["repeat_check"], s
assert doc["backend"]["repeat_compare"] == "host", doc["backend"]
PY
    unset NCCL_COLLBENCH_TEST_FAULT
}
struck allreduce out-of-place 3
struck allreduce in-place 9
struck allgather out-of-place 4
struck allgather in-place 10

# -N 3: struck once, in cycle 2 (launch 16: cycle 2's out-of-place third).
NCCL_COLLBENCH_TEST_FAULT=nth:1:16
export NCCL_COLLBENCH_TEST_FAULT
# shellcheck disable=SC2086
CB_RUN_BIN=$CB_TMP/hostid.sh run 2 --backend faulty-mpi -B -N 3 -o allreduce $one \
    --json "$CB_TMP/n.json"
unset NCCL_COLLBENCH_TEST_FAULT
expect_rc 7 "-B -N 3 with one struck launch"
has 1 '^# Unrepeatable: allreduce .* out-of-place: 1 launch '
has 1 '^# Unrepeatable launches on '
has 1 '^# Unrepeatable launches on host h1 GPU - (rank 1): 1 in 1 of 3 cycles$'
has 1 '^# Suspect host: h1 (0 wrong elements and 1 unrepeatable launches on its ranks over 3 cycles)$'
"$CB_PYTHON" - "$CB_TMP/n.json" <<'PY' || show_and_fail "-B -N 3: JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
hit = [(r["cycle"], r["in_place"]) for r in doc["results"] if r["unrepeatable"]]
assert hit == [(2, False)], hit
assert doc["summary"]["suspect_host"] == "h1", doc["summary"]
PY

# Clean runs: nothing unrepeatable, every data placement compared (integer
# and float reductions, data movement, -m 2 in place, the column layout).
# shellcheck disable=SC2086
{
    run 3 --backend mpi -B -o all -d float,int32 --redop sum,max -b 96 -e 6K -f 64 -n 3 -w 1 \
        -M --csv "$CB_TMP/c.csv"
    expect_rc 0 "clean run with -B"
    has 0 '^# Unrepeatable'
    has 2 '^# -B: '
    has 1 '^# Memory per rank: .*, check tile up to [0-9]*, -B reference 6144 (host); total '
    run 3 --backend mpi -B -o allreduce,alltoall -m 2 --layout row,col -b 96 -e 6K -f 64 -n 2
    expect_rc 0 "clean run with -B, -m 2 and the column layout"
    if [ -x "$STANDIN" ]; then
        CB_STANDIN_GPUS=4
        NCCL_TUNER_PLUGIN=cb-test-tuner   # the stand-in loads none; the note names it
        export CB_STANDIN_GPUS NCCL_TUNER_PLUGIN
        CB_RUN_BIN=$STANDIN run 3 --backend nccl -B -o all -d float,int8 -b 96 -e 6K -f 64 \
            -n 2 -m 2 --csv "$CB_TMP/s.csv"
        unset NCCL_TUNER_PLUGIN
        expect_rc 0 "clean run with -B on the stand-in"
        has 0 '^# Unrepeatable'
        has 1 '^# -B: NCCL_TUNER_PLUGIN=cb-test-tuner: a tuner that picks another algorithm '
        # Through the NCCL backend's compare (a copy to host memory first).
        NCCL_COLLBENCH_TEST_FAULT=nth:1:3
        export NCCL_COLLBENCH_TEST_FAULT
        CB_RUN_BIN=$FAULTY run 2 --backend faulty-nccl -o allgather $one
        expect_rc 0 "faulty-nccl: one struck launch, without -B"
        CB_RUN_BIN=$FAULTY run 2 --backend faulty-nccl -B -o allgather $one
        expect_rc 7 "faulty-nccl: one struck launch, with -B"
        has 1 '^# Unrepeatable: allgather float none 4096 B out-of-place: 1 launch .* first on rank 1 '
        unset NCCL_COLLBENCH_TEST_FAULT
    fi
}
"$CB_PYTHON" - "$CB_TMP/c.csv" <<'PY' || fail "clean -B: not every placement compared"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["collective"] != "barrier"]
assert rows and all(r["repeat_checked"] == "3" and r["unrepeatable"] == "0" for r in rows), \
    [r for r in rows if r["repeat_checked"] != "3" or r["unrepeatable"] != "0"][:3]
PY

# The health scan's launches are not compared, which a note says (one
# host: the scan measures nothing, status 5).
run 2 --backend mpi -B -o scan -b 64K -e 64K -n 2
expect_rc 5 "-B with the health scan alone"
has 1 '^# -B has no effect on the health scan: its launches are not compared$'
has 0 '^# -B: '

# -B cannot look inside a graph.
run 1 --backend mpi -B -G 2
expect_rc 2 "-B with -G"
grep -q -- '-B: cannot compare launches inside a CUDA graph (-G 2)' "$CB_TMP/err" ||
    show_and_fail "-B with -G: no message naming both"
echo "ok"
