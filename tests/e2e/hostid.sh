# Hosts as NCCL counts them: ranks on this machine given different
# NCCL_HOSTID values are different hosts for the node count in the preamble,
# --split node and --hier-split node (the NCCL backend's GPU choice is in
# tests/nccl/nccl_standin_select.sh). The groups are checked rank by rank, and
# every result is verified.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

# ids nodes ranks-per-node group0 group1: 4 ranks; "-" leaves the rank's
# NCCL_HOSTID unset, which is a host of its own beside any value.
while read -r ids nodes per_node g0 g1; do
    hostid_launcher "$(echo "$ids" | tr , ' ')" "$CB_BIN"
    CB_RUN_BIN=$CB_TMP/hostid.sh
    run 4 --backend mpi -o allreduce,hier_allreduce --hier-split node -b 8 -e 4K -f 8 -c 1 \
        --csv "$CB_TMP/h.csv"
    expect_rc 0 "NCCL_HOSTID $ids"
    grep -q "^# ranks: 4  nodes: $nodes  ranks per node: $per_node\$" "$CB_TMP/out" ||
        fail "NCCL_HOSTID $ids: the preamble does not count $nodes nodes of up to $per_node ranks"
    grep -q "^# group 0: [0-9]* ranks*: $g0\$" "$CB_TMP/out" ||
        fail "NCCL_HOSTID $ids: inner group 0 is not $g0"
    [ "$g1" = - ] || grep -q "^# group 1: [0-9]* ranks*: $g1\$" "$CB_TMP/out" ||
        fail "NCCL_HOSTID $ids: inner group 1 is not $g1"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/h.csv" --ranks 4 --sizes 8,64,512,4096 \
        --collective allreduce,hier_allreduce
    awk -F, -v n="$nodes" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                           $c["nodes"] != n { exit 1 }' "$CB_TMP/h.csv" ||
        fail "NCCL_HOSTID $ids: the CSV's nodes column is not $nodes"

    # --split node makes the same groups.
    run 4 --backend mpi --split node -o allreduce -b 8 -e 64 -f 8 -c 1
    expect_rc 0 "--split node, NCCL_HOSTID $ids"
    grep -q "^# group 0: [0-9]* ranks*: $g0 on host [^,]*\$" "$CB_TMP/out" ||
        fail "--split node, NCCL_HOSTID $ids: group 0 is not $g0 on one host"
done <<'CASES'
-,-,-,- 1 4 0,1,2,3 -
a,a,b,b 2 2 0,1 2,3
a,b,a,b 2 2 0,2 1,3
x,y,-,x 3 2 0,3 1
n0,n1,n2,n3 4 1 0 1
CASES

# The health scan's host labels stay distinct where the values would read
# the same: NCCL_HOSTID values that differ only past the label's 63
# characters, and one set but empty beside one unset (both the machine's
# name). Pair lines and suspect notes name each node apart; the fault layer
# corrupts an element on the second long-named host (rank 1), so a suspect
# note (wrong elements: no timing involved) names it.
long=$(printf 'h%.0s' $(seq 70))
cat >"$CB_TMP/labels.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
case \$rank in
0) NCCL_HOSTID=${long}a; export NCCL_HOSTID ;;
1) NCCL_HOSTID=${long}b; export NCCL_HOSTID ;;
2) unset NCCL_HOSTID ;;
*) NCCL_HOSTID=; export NCCL_HOSTID ;;
esac
exec "$CB_BUILDDIR/tests/nccl-collbench-faulty" "\$@"
LAUNCHER
chmod +x "$CB_TMP/labels.sh"
CB_RUN_BIN=$CB_TMP/labels.sh
NCCL_COLLBENCH_TEST_FAULT=corrupt:1:7 run 4 --backend faulty-mpi -o scan -b 64K -e 64K -n 4 \
    -w 1 --suspect-ratio 0.01 --json "$CB_TMP/labels.json"
expect_rc 7 "colliding host labels, host 1 corrupting"
"$CB_PYTHON" - "$CB_TMP/out" "$CB_TMP/labels.json" <<'PY' || show_and_fail "colliding host labels"
import json, re, sys
out = open(sys.argv[1]).read().splitlines()
hosts = json.load(open(sys.argv[2]))["scan"]["hosts"]
assert len(hosts) == 4 and len(set(hosts)) == 4, hosts
assert all(len(h) <= 63 for h in hosts), hosts
pairs = [l.split()[2:4] for l in out if l.startswith("# pair ")]
if pairs:   # the matrix is too wide for these names: one line per pair
    assert len(pairs) == 6 and len({tuple(p) for p in pairs}) == 6, pairs
    assert all(a != b for a, b in pairs), pairs
sus = [l for l in out if l.startswith("# Suspect ")]
assert ["# Suspect node %s: " % hosts[1] in l for l in sus] == [True], (sus, hosts)
PY

# The JSON document is valid UTF-8 whatever bytes NCCL_HOSTID, another
# NCCL_ variable or the command line hold: a lone 0xff, an encoded
# surrogate (0xed 0xa0 0x80), an overlong '/' (0xc0 0xaf) and a sequence cut
# short each become U+FFFD; well-formed UTF-8 (e acute) stays as it is.
bad=$(printf 'n\377\355\240\200\300\257\303x\303\251')
cat >"$CB_TMP/badbytes.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
NCCL_HOSTID="$bad\$rank"
NCCL_COLLBENCH_BYTES="$bad"
export NCCL_HOSTID NCCL_COLLBENCH_BYTES
exec "$CB_BIN" "\$@"
LAUNCHER
chmod +x "$CB_TMP/badbytes.sh"
CB_RUN_BIN=$CB_TMP/badbytes.sh
run 2 --backend mpi -o scan -b 64K -e 64K -n 2 -w 1 --suspect-ratio 0.1 \
    --csv "$CB_TMP/r$bad.csv" --json "$CB_TMP/bad.json"
expect_rc 0 "bytes that are not UTF-8"
"$CB_PYTHON" - "$CB_TMP/bad.json" <<'PY' || show_and_fail "the JSON with bytes that are not UTF-8"
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")   # strict: fails on a bad byte
doc = json.loads(text)
want = "n\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffdx\u00e9"
assert doc["environment"]["NCCL_COLLBENCH_BYTES"] == want, doc["environment"]
assert doc["environment"]["NCCL_HOSTID"] == want + "0", doc["environment"]
assert any(a.endswith("r" + want + ".csv") for a in doc["command_line"]), doc["command_line"]
assert doc["scan"]["hosts"] == [want + "0", want + "1"], doc["scan"]["hosts"]
PY

# One host identity everywhere (issue 36): with NCCL_HOSTID set, the rank
# lines, the WRONG lines, the verdict, the CSV, the JSON, Prometheus and the
# hang report name the label, never the machine (whose name no rank gives).
hostid_launcher "node-a node-b" "$CB_BUILDDIR/tests/nccl-collbench-faulty"
CB_RUN_BIN=$CB_TMP/hostid.sh
NCCL_COLLBENCH_TEST_FAULT=corrupt:1:5 run 2 --backend faulty-mpi -o allreduce -b 1K -e 1K -n 2 \
    --csv "$CB_TMP/id.csv" --json "$CB_TMP/id.json"
expect_rc 7 "labelled hosts, rank 1 corrupting"
has 1 '^#  Rank   0  Pid  *[0-9]*  on node-a  '
has 1 '^#  Rank   1  Pid  *[0-9]*  on node-b  '
has 2 '^# WRONG: .* first at rank 1 (node-b) element 5: '
has 1 '^# Result: FAIL (2 wrong elements on rank 1 host node-b) '
"$CB_PYTHON" - "$CB_TMP/id.csv" "$CB_TMP/id.json" <<'PY' || show_and_fail "labelled hosts: CSV and JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows and all(r["slowest_host"] in ("node-a", "node-b") for r in rows), rows
doc = json.load(open(sys.argv[2]))
assert [r["host"] for r in doc["devices"]] == ["node-a", "node-b"], doc["devices"]
assert doc["summary"]["first_wrong_host"] == "node-b", doc["summary"]
PY
hostid_launcher "node-a node-b" "$CB_BIN"
run 2 --backend mpi -o scan -b 64K -e 64K -n 2 -w 1 --suspect-ratio 0.01 --prom "$CB_TMP/id.prom"
expect_rc 0 "labelled hosts, scan"
grep -o 'host="[^"]*"' "$CB_TMP/id.prom" | sort -u | grep -qv 'host="node-[ab]"' &&
    show_and_fail "a Prometheus host label that is not NCCL_HOSTID's"
grep -q 'host="node-b"' "$CB_TMP/id.prom" || show_and_fail "no host label node-b in --prom"
# The hang report: rank 1 hangs in its first launch of 1024 elements.
hostid_launcher "node-a node-b" "$CB_BUILDDIR/tests/nccl-collbench-faulty"
NCCL_COLLBENCH_TEST_FAULT=hang:1:1024 run 2 --backend faulty-mpi -o allreduce -b 4K -e 4K -n 2 \
    -T 2 --json "$CB_TMP/hang.json"
expect_stopped 3 "labelled hosts, rank 1 hung"
grep -q '^# Hang: rank [01] (node-[ab]) saw no progress' "$CB_TMP/err" ||
    show_and_fail "the hang report does not name the label"
"$CB_PYTHON" - "$CB_TMP/hang.json" "$(hostname)" <<'PY' || show_and_fail "labelled hosts: hang JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
text = json.dumps(doc["hang"]) + json.dumps(doc["devices"])
assert "node-b" in text and '"%s"' % sys.argv[2] not in text, text
PY

# Two nodes: one round, said in the singular.
hostid_launcher "a b" "$CB_BIN"
CB_RUN_BIN=$CB_TMP/hostid.sh
run 2 --backend mpi -o scan -b 64K -e 64K -n 2 -w 1 --suspect-ratio 0.1
expect_rc 0 "2-node scan"
grep -q "^# Pairs: .*; 1 round; " "$CB_TMP/out" || show_and_fail "2 nodes: not '1 round'"
echo "ok"
