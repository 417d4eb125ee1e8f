# The health scan (-o scan) on the MPI backend: 4 hosts of 2 ranks made with
# NCCL_HOSTID, the fault layer slowing one host, one link between two hosts,
# or corrupting one host's data. The scan must name exactly that host or
# link, and nobody on a healthy run. The faults (50 ms per operation, ratios
# near 0.01 measured alone) are unmistakable on a loaded machine, and
# --suspect-ratio 0.1 keeps its noise (healthy parts seen at 0.2 with 16
# ranks on 2 cores) from naming anyone. The scan's own figures are far
# noisier (a healthy node's pairs all 10x slow, now and then): it takes
# candidates below 0.3, re-measures each alone, and judges the links of a
# node that cleared, so the link below is still named.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/support/scan.sh"
need_mpirun

FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"
hostid_launcher "h0 h0 h1 h1 h2 h2 h3 h3" "$FAULTY"
CB_RUN_BIN=$CB_TMP/hostid.sh
SCAN="-o scan -b 64K -e 64K -n 4 -w 1 --suspect-ratio 0.1"

# scan_sections BACKEND: the node figures, the matrix and the rails are printed.
scan_sections() {
    has 1 '^# Health scan: 4 nodes, 65536 B per rank'
    has 4 '^#  *[0-3]  h[0-3]  *2  *[0-9.]*$'
    has 1 '^#  *h0  *h1  *h2  *h3$'
    has 4 '^# h[0-3]  '
    has 2 '^#  *[01]  *4  *[0-9.]*$'
}

# faulted FAULT ARGS...: run 8 ranks of the fault layer with FAULT.
faulted() {
    NCCL_COLLBENCH_TEST_FAULT=$1
    export NCCL_COLLBENCH_TEST_FAULT
    shift
    run 8 --backend faulty-mpi "$@"
    unset NCCL_COLLBENCH_TEST_FAULT
}

run 8 --backend mpi $SCAN --csv "$CB_TMP/scan.csv" --json "$CB_TMP/scan.json"
expect_rc 0 "healthy scan"
scan_sections
has 0 '^# Suspect'
# A healthy scan says so, and ends with the verdict; no average bus
# bandwidth, which would mix node, pair and rail figures.
has 1 '^# No suspects$'
has 0 '^# Avg bus bandwidth'
has 1 '^# Result: PASS [1-9][0-9]* measurements in [0-9.]* s$'
tail -n 1 "$CB_TMP/out" | grep -q '^# Result: PASS' || show_and_fail "the table does not end with the verdict"
# One CSV row and one JSON result per figure: 4 nodes, 6 pairs (each pair
# of hosts once, with its round), 2 rails, and re-measures only as *_again.
need_python
"$CB_PYTHON" - "$CB_TMP/scan.csv" "$CB_TMP/scan.json" <<'PY' || show_and_fail "scan CSV/JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
first = [r for r in rows if not r["scan_part"].endswith("_again")]
parts = [r["scan_part"] for r in first]
assert parts == ["node"] * 4 + ["pair"] * 6 + ["rail"] * 2, parts
assert all(r["collective"] == "scan" for r in rows), rows
assert [r["host"] for r in first[:4]] == ["h0", "h1", "h2", "h3"], first[:4]
pairs = sorted((r["host"], r["peer_host"]) for r in first if r["scan_part"] == "pair")
assert pairs == [("h0", "h1"), ("h0", "h2"), ("h0", "h3"), ("h1", "h2"), ("h1", "h3"),
                 ("h2", "h3")], pairs
assert sorted(r["round"] for r in first if r["scan_part"] == "pair") == list("001122")
assert all(float(r["busbw_gbps"]) > 0 for r in rows), rows
assert [r["group"] for r in first if r["scan_part"] == "rail"] == ["0", "1"]
doc = json.load(open(sys.argv[2]))
res = [(x["scan_part"], x["host"], x["peer_host"], x["round"]) for x in doc["results"]]
assert res == [(r["scan_part"], r["host"] or None, r["peer_host"] or None,
                int(r["round"]) if r["round"] else None) for r in rows], res
assert any(n.startswith("Health scan: 4 nodes") for n in doc["notes"]), doc["notes"]
assert doc["scan"]["suspects"] == [], doc["scan"]
assert doc["scan"]["cycle"] == 1 and doc["scan_cycles"] == [doc["scan"]], doc["scan_cycles"]
s = doc["summary"]
assert s["verdict"] == "PASS" and s["reasons"] is None and s["scan_suspects"] == 0, s
assert s["avg_busbw_by_collective"] == [] and s["measurements"] >= len(rows), s
PY

# -N 2: the JSON carries every cycle's scan, each with the node figures of
# its own cycle's results; "scan" is the last one.
run 8 --backend mpi $SCAN -N 2 --json "$CB_TMP/cycles.json"
expect_rc 0 "healthy scan, 2 cycles"
"$CB_PYTHON" - "$CB_TMP/cycles.json" <<'PY' || show_and_fail "scan JSON, 2 cycles"
import json, sys
doc = json.load(open(sys.argv[1]))
scans = doc["scan_cycles"]
assert [x["cycle"] for x in scans] == [1, 2] and doc["scan"] == scans[-1], scans
for x in scans:
    nodes = [r["busbw_gbps"] for r in doc["results"]
             if r["cycle"] == x["cycle"] and r["scan_part"] == "node"]
    assert x["node_busbw_gbps"] == nodes, (x, nodes)
    assert x["hosts"] == ["h0", "h1", "h2", "h3"] and x["suspects"] == [], x
PY

# Host h1 is world ranks 2 and 3.
faulted slow:2:3:50 $SCAN --json "$CB_TMP/slow.json"
expect_rc 8 "host h1 slowed"
scan_sections
suspects_only '^# Suspect node h1: ' "host h1 slowed"
has 0 '^# No suspects'
n=$(grep -c '^# Suspect ' "$CB_TMP/out")
has 1 "^# Result: FAIL ($n scan suspects*) [0-9]* measurements in "
"$CB_PYTHON" - "$CB_TMP/slow.json" <<'PY' || show_and_fail "slow host: JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["summary"]["exit_status"] == 8 and doc["complete"], doc["summary"]
assert doc["summary"]["verdict"] == "FAIL" and doc["summary"]["scan_suspects"] > 0, doc["summary"]
sus = [n for n in doc["notes"] if n.startswith("Suspect ")]
assert sus and all(n.startswith("Suspect node h1: ") for n in sus), sus
scan = doc["scan"]
assert scan["hosts"] == ["h0", "h1", "h2", "h3"] and scan["nodes"] == 4, scan
m = scan["pair_gbps"]
assert all(m[a][a] is None for a in range(4)), m
assert all(m[a][b] == m[b][a] and m[a][b] > 0 for a in range(4) for b in range(4) if a != b), m
assert len(scan["node_busbw_gbps"]) == 4 and len(scan["rail_busbw_gbps"]) == 2, scan
assert len(scan["suspects"]) == len(sus), scan["suspects"]
for x in scan["suspects"]:
    assert x["kind"] == "node" and x["host"] == "h1" and x["reason"] in ("node_figure", "pairs")
    assert x["ratio"] < 0.3 and x["figure"] < 0.3 * x["median"] and x["again"] is not None, x
PY

# The link between h0 (ranks 0, 1) and h2 (ranks 4, 5).
faulted slowlink:0:4:2:50 $SCAN
expect_rc 8 "link h0 - h2 slowed"
suspects_only '^# Suspect link h0 - h2: ' "link h0 - h2 slowed"

# Rank 5 (host h2) gets a wrong element: wrong values (7) beat slow (8).
faulted corrupt:5:7 $SCAN
expect_rc 7 "host h2 corrupting"
suspects_only '^# Suspect node h2: [0-9]* wrong element' "host h2 corrupting"
has 1 '^# Result: FAIL ([0-9]* wrong elements*; [0-9]* scan suspects*) '

# Nodes of one rank: their node all-reduce measures nothing, so time,
# algbw and busbw are empty in the CSV (never nan), null in the JSON, '-'
# in the table, and nccl-collbench-compare accepts the file (leaving those
# rows out).
hostid_launcher "h0 h1 h2" "$FAULTY"
run 3 --backend mpi $SCAN --csv "$CB_TMP/one.csv" --json "$CB_TMP/one.json"
[ "$rc" = 0 ] || [ "$rc" = 8 ] || show_and_fail "nodes of one rank: status $rc"
has 3 '^#  *[0-2]  h[0-2]  *1  *-$'
! grep -qi 'nan' "$CB_TMP/one.csv" || show_and_fail "nodes of one rank: nan in the CSV"
"$CB_PYTHON" - "$CB_TMP/one.csv" "$CB_TMP/one.json" <<'PY' || show_and_fail "nodes of one rank"
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["scan_part"] == "node"]
assert len(rows) == 3, rows
assert all(r["time_us"] == r["algbw_gbps"] == r["busbw_gbps"] == "" for r in rows), rows
doc = json.load(open(sys.argv[2]))
nodes = [x for x in doc["results"] if x["scan_part"] == "node"]
assert all(x["busbw_gbps"] is None for x in nodes), nodes
PY
"$CB_BUILDDIR/src/nccl-collbench-compare" "$CB_TMP/one.csv" "$CB_TMP/one.csv" >"$CB_TMP/cmp" 2>&1 ||
    { cat "$CB_TMP/cmp" >&2; fail "compare refused the scan's own CSV"; }
grep -q "regressed 0" "$CB_TMP/cmp" || { cat "$CB_TMP/cmp" >&2; fail "compare: no comparison"; }

# One host: nothing to compare, said so; nothing was measured, which is
# not a pass (status 5, issue 36), in the table and the JSON.
hostid_launcher "h0 h0" "$FAULTY"
run 2 --backend mpi $SCAN --json "$CB_TMP/onehost.json"
expect_rc 5 "one host"
has 1 'scan skipped'
has 1 '^# Result: UNCHECKED (nothing measured) 0 measurements in '
"$CB_PYTHON" - "$CB_TMP/onehost.json" <<'PY' || show_and_fail "one host: JSON"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["exit_status"] == 5 and s["verdict"] == "UNCHECKED" and s["passed"] is False, s
assert s["reasons"] == "nothing measured" and s["measurements"] == 0, s
PY
# A scan on one host beside a collective that measures: a pass.
run 2 --backend mpi -o scan,allreduce -b 64K -e 64K -n 2 -w 1
expect_rc 0 "one host, with allreduce"

# The watchdog (-T) sees the scan's progress: a healthy scan whose
# measurements each take longer than -T (every rank slowed alike, 1.2 s
# per operation, 3 operations per measurement, -T 3) finishes (0, or 8
# should load name a suspect), never a timeout (3).
hostid_launcher "h0 h0 h1 h1" "$FAULTY"
NCCL_COLLBENCH_TEST_FAULT=slow:0:3:1200 run 4 --backend faulty-mpi -o scan -b 64K -e 64K -n 2 -w 1 \
    -T 3
[ "$rc" = 0 ] || [ "$rc" = 8 ] || show_and_fail "slow healthy scan: status $rc"
! grep -q timeout "$CB_TMP/err" || show_and_fail "slow healthy scan: a timeout"
has 1 '^# Health scan took'
# A rank that hangs in the scan (rank 3, in its first operation of 64 KiB)
# times out naming the scan (the hang report's lines on stderr say where
# each rank was), and rank 0's scan line printed before it is in the
# output.
NCCL_COLLBENCH_TEST_FAULT=hang:3:16384 run 4 --backend faulty-mpi -o scan -b 64K -e 64K -n 2 -w 1 \
    -T 2
expect_stopped 3 "a rank hung in the scan"
grep -q '^# Hang: .* in the health scan (-o scan), nodes' "$CB_TMP/err" ||
    show_and_fail "a rank hung in the scan: the timeout does not name the scan"
has 1 '^# Health scan: 2 nodes'

# Usage errors name the bad value.
run 2 --backend mpi -o scan --suspect-ratio 1.5
expect_rc 2 "--suspect-ratio 1.5"
grep -q "suspect-ratio: '1.5' is not a number above 0 and at most 1" "$CB_TMP/err" ||
    show_and_fail "--suspect-ratio 1.5: no message naming the value"
run 2 --backend mpi -o scan --split node
expect_rc 2 "-o scan --split node"
grep -q "drop --split" "$CB_TMP/err" || show_and_fail "-o scan --split: no message"
echo "ok"
