# -N/--cycles: the whole run repeated, every CSV row and JSON result with
# its cycle and timestamp_utc; wrong elements tallied per host and GPU
# across cycles, the suspect host named; -N 0 runs until SIGTERM.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 2 --backend mpi -N 3 -o allreduce,broadcast,barrier -b 1K -e 4K -f 4 -n 2 -w 1 --stats \
    --csv "$CB_TMP/c.csv" --json "$CB_TMP/c.json"
expect_rc 0 "-N 3"
# Each cycle's table keeps 13 fields in every data row, no trailing blanks.
[ "$(grep -c '^ *[0-9]' "$CB_TMP/out")" = 15 ] || show_and_fail "-N 3: not 15 data rows"
awk '!/^#/ && NF != 13 || / $/' "$CB_TMP/out" | grep -q . &&
    show_and_fail "-N 3: a row without 13 fields or with trailing blanks"
has 3 '^# Cycle [123]$'
has 0 '^# Wrong elements on'
"$CB_PYTHON" - "$CB_TMP/c.csv" "$CB_TMP/c.json" <<'PY' || show_and_fail "-N 3: CSV/JSON"
import csv, json, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 27, len(rows)
assert [r["cycle"] for r in rows] == ["1"] * 9 + ["2"] * 9 + ["3"] * 9, rows
stamps = [r["timestamp_utc"] for r in rows]
assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", t) for t in stamps), stamps
assert stamps == sorted(stamps) and stamps[0] >= rows[0]["start_utc"], stamps
doc = json.load(open(sys.argv[2]))
assert [(x["cycle"], x["timestamp_utc"]) for x in doc["results"]] == \
       [(int(r["cycle"]), r["timestamp_utc"]) for r in rows]
PY

# Rank 3 (host h1) corrupts: the tally names its host, every cycle.
hostid_launcher "h0 h0 h1 h1" "$CB_BUILDDIR/tests/nccl-collbench-faulty"
NCCL_COLLBENCH_TEST_FAULT=corrupt:3:5
export NCCL_COLLBENCH_TEST_FAULT
CB_RUN_BIN=$CB_TMP/hostid.sh run 4 --backend faulty-mpi -N 2 -b 1K -e 1K -n 2 -w 1
unset NCCL_COLLBENCH_TEST_FAULT
expect_rc 7 "-N 2 with a corrupting rank"
has 1 '^# Wrong elements on '
has 1 '^# Wrong elements on host h1 GPU - (rank 3): 4 in 2 of 2 cycles$'
has 1 '^# Suspect host: h1 (4 wrong elements and 0 unrepeatable launches on its ranks over 2 cycles)$'

run 1 --backend mpi -N -1
expect_rc 2 "-N -1"
grep -q -- "'-1' is not a cycle count from 0" "$CB_TMP/err" || show_and_fail "-N -1: no message"

# -N 0 runs until stopped: SIGTERM ends it (143) after whole cycles.
cat >"$CB_TMP/pid_rank.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
echo \$\$ >"$CB_TMP/pid.\$rank"
exec "\$@"
LAUNCHER
chmod +x "$CB_TMP/pid_rank.sh"
$CB_MPIRUN -np 2 "$CB_TMP/pid_rank.sh" "$CB_BIN" --backend mpi -N 0 -b 1K -e 1K -n 2 -w 1 \
    --csv "$CB_TMP/n0.csv" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
pid=$!
i=0
cycles_seen() {
    n=$(grep -c '^# Cycle' "$CB_TMP/out" 2>/dev/null) || true
    echo "${n:-0}"
}
while [ "$(cycles_seen)" -lt 3 ] || [ ! -s "$CB_TMP/pid.1" ]; do
    i=$((i + 1))
    [ $i -le 600 ] || { kill -KILL $pid; fail "-N 0: not 3 cycles within 60 s"; }
    kill -0 $pid 2>/dev/null || show_and_fail "-N 0 ended by itself"
    sleep 0.1
done
kill -TERM "$(cat "$CB_TMP/pid.0")" "$(cat "$CB_TMP/pid.1")"
rc=0
wait $pid || rc=$?
expect_rc 143 "-N 0 stopped by SIGTERM"
grep -q '^# Cycle 3 (until stopped)$' "$CB_TMP/out" || show_and_fail "-N 0: no third cycle"
echo "ok"
