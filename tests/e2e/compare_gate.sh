# The gate on synthetic files: strict numbers (status 2 naming file, line and
# column), missing rows, the baseline's spread, the metrics, the floor, the
# summaries per collective, the JSON report (never written over an input,
# a symlink, a directory or a device), and big files in n log n.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
compare="$CB_BUILDDIR/src/nccl-collbench-compare"

# Real columns from a real run; fixed figures so that no ratio depends on
# the machine.
run 2 -b 1K -e 64K -f 4 -n 3 --csv "$CB_TMP/measured.csv"
expect_rc 0 "the run"

# make OUT KIND [ARG]: a copy of the fixed file with one change.
make_csv() {
    "$CB_PYTHON" - "$CB_TMP/measured.csv" "$@" <<'PY' || fail "make_csv $*"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
out, kind = sys.argv[2], sys.argv[3]
arg = sys.argv[4] if len(sys.argv) > 4 else ""
for i, r in enumerate(rows):
    r["time_us"] = r["iter_median_us"] = "%.6f" % (100.0 + i)
    r["iter_p99_us"] = "%.6f" % ((100.0 + i) * 1.01)
    r["iter_samples"] = "20"
    r["busbw_gbps"] = "%.6f" % (10.0 + i)
    r["wrong"] = "0"
# A quoted line break in the first row: row 3 starts on line 5 of the file.
rows[0]["device"] = "CPU\nmodel"
def slower(r, factor, median=True):
    r["busbw_gbps"] = "%.6f" % (float(r["busbw_gbps"]) / factor)
    r["time_us"] = "%.6f" % (float(r["time_us"]) * factor)
    if median:
        for c in ("iter_median_us", "iter_p99_us"):
            r[c] = "%.6f" % (float(r[c]) * factor)
r = rows[2]
if kind == "set":                 # set COLUMN=VALUE in row 3
    col, value = arg.split("=", 1)
    r[col] = value
elif kind == "slower":            # the whole row slower by a factor
    slower(r, float(arg))
elif kind == "straggler":         # the mean slower, the median not
    slower(r, float(arg), median=False)
elif kind == "nosamples":         # no per-iteration samples; busbw down 30%
    r["iter_samples"], r["iter_median_us"], r["iter_p99_us"] = "0", "", ""
    slower(r, float(arg) if arg else 1.0, median=False)
elif kind == "head":              # the first rows only
    rows = rows[:int(arg)]
elif kind == "eighty":            # 80 rows: the sizes go on doubling
    rows = [dict(rows[i % len(rows)]) for i in range(80)]
    for i, x in enumerate(rows):
        x["bytes"] = str(1024 << (i // 2))
    rows = rows[:int(arg)] if arg else rows
elif kind == "scan":              # a health scan: node, rail and pair rows
    parts = [("0", "node", "a", "", "10.0"), ("0", "rail", "", "", "20.0"),
             ("", "pair", "a", "b", "30.0")]
    rows = [dict(rows[0]) for _ in parts]
    for x, (group, part, host, peer, bw) in zip(rows, parts):
        x.update(collective="scan", group=group, scan_part=part, host=host, peer_host=peer,
                 busbw_gbps=bw, iter_samples="0", iter_median_us="", iter_p99_us="")
    if arg:
        slower(rows[1], float(arg), median=False)
elif kind == "two":               # half the rows become broadcast
    for x in rows[len(rows) // 2:]:
        x["collective"] = "broadcast"
    if arg:
        slower(rows[-1], float(arg))
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
PY
}

# expect WANT ARGS...: run the compare tool, check its exit status.
expect() {
    want=$1
    shift
    got=0
    "$compare" "$@" >"$CB_TMP/cmp.out" 2>"$CB_TMP/cmp.err" || got=$?
    if [ "$got" != "$want" ]; then
        cat "$CB_TMP/cmp.out" "$CB_TMP/cmp.err" >&2
        fail "compare $*: exit $got, expected $want"
    fi
}

# column NAME: the 1-based column number of NAME in the CSV header.
column() {
    head -1 "$CB_TMP/measured.csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1
}

base="$CB_TMP/base.csv"
make_csv "$base" none
expect 0 "$base" "$base"

# 1. Values that are not what the schema says: status 2, file:line: column.
for case in "busbw_gbps=nan" "busbw_gbps=inf" "busbw_gbps=-1.0" "busbw_gbps= 5.0" \
            "time_us=5.0 " "time_us=0x1p3" "wrong=0.5" "wrong=1e30" "wrong=-1" \
            "bytes=0x10" "bytes= 4096" "bytes=4096.0" "schema_version=999" \
            "schema_version=abc" "iter_median_us=nan"; do
    col=${case%%=*}
    value=${case#*=}
    make_csv "$CB_TMP/bad.csv" set "$case"
    expect 2 "$base" "$CB_TMP/bad.csv"
    grep -qF "bad.csv:5: column $col ($(column "$col")): '$value'" "$CB_TMP/cmp.err" ||
        fail "'$case': $(cat "$CB_TMP/cmp.err")"
done
# The same in a baseline file is named too.
make_csv "$CB_TMP/bad.csv" set "wrong=1e30"
expect 2 "$CB_TMP/bad.csv" "$base"
grep -qF "bad.csv:5: column wrong" "$CB_TMP/cmp.err" || fail "bad baseline: $(cat "$CB_TMP/cmp.err")"

# 2. Rows of the baseline missing in the new file fail unless allowed.
make_csv "$CB_TMP/three.csv" head 3
expect 1 "$base" "$CB_TMP/three.csv"
[ "$(grep -c 'MISSING IN NEW$' "$CB_TMP/cmp.out")" = 5 ] || fail "5 missing rows not listed"
grep -q '^# all: .*missing in new 5.*: FAIL$' "$CB_TMP/cmp.out" || fail "missing rows not summarised"
expect 0 --allow-missing "$base" "$CB_TMP/three.csv"
grep -q 'missing in new 5 (allowed)' "$CB_TMP/cmp.out" || fail "allowed missing rows not said"
# The issue's case: a file truncated to 3 of 80 rows.
make_csv "$CB_TMP/eighty.csv" eighty
make_csv "$CB_TMP/eighty-3.csv" eighty 3
expect 1 "$CB_TMP/eighty.csv" "$CB_TMP/eighty-3.csv"
grep -q '^# all: compared 3, .*missing in new 77.*: FAIL$' "$CB_TMP/cmp.out" ||
    fail "3 of 80 rows: $(tail -2 "$CB_TMP/cmp.out")"

# 3. The baseline's own spread: a second baseline 30% slower on row 3 makes a
# 25% slower new row noise; against the first baseline alone it regressed.
make_csv "$CB_TMP/base-slow.csv" slower 1.30
make_csv "$CB_TMP/new25.csv" slower 1.25
expect 1 "$base" "$CB_TMP/new25.csv"
expect 0 "$base" "$CB_TMP/base-slow.csv" "$CB_TMP/new25.csv"
# Repeated rows (runs concatenated in one file) count the same.
cat "$base" "$CB_TMP/base-slow.csv" >"$CB_TMP/both.csv"
expect 0 "$CB_TMP/both.csv" "$CB_TMP/new25.csv"
# Beyond the spread, it still regresses.
make_csv "$CB_TMP/new60.csv" slower 1.60
expect 1 "$base" "$CB_TMP/base-slow.csv" "$CB_TMP/new60.csv"
# A wide spread inside the baseline's own run (p99 far above the median).
make_csv "$CB_TMP/base-jitter.csv" set "iter_p99_us=150.0"
expect 0 "$CB_TMP/base-jitter.csv" "$CB_TMP/new25.csv"

# 4. Metrics: a straggler raises the mean time, not the median.
make_csv "$CB_TMP/straggler.csv" straggler 1.5
expect 0 "$base" "$CB_TMP/straggler.csv"
expect 0 --metric median "$base" "$CB_TMP/straggler.csv"
expect 1 --metric busbw "$base" "$CB_TMP/straggler.csv"
expect 1 --metric time "$base" "$CB_TMP/straggler.csv"
grep 'REGRESSED' "$CB_TMP/cmp.out" | grep -q ' time ' || fail "--metric time not used"
# Rows without samples: the default compares busbw.
make_csv "$CB_TMP/nosamples.csv" nosamples 1.43
expect 1 "$base" "$CB_TMP/nosamples.csv"
grep 'REGRESSED' "$CB_TMP/cmp.out" | grep -q ' busbw ' || fail "no fallback to busbw"
expect 2 --metric mean "$base" "$base"

# 5. The absolute floor, as nccl-collbench --min-busbw: rows at the largest
# size of their sweep (64 KiB: 16 and 17 GB/s) whose bus bandwidth is below
# it fail; smaller sizes (1 KiB: 10 GB/s) are not gated.
expect 1 --min-busbw 16.5 "$base" "$base"
[ "$(grep -c 'BELOW FLOOR$' "$CB_TMP/cmp.out")" = 1 ] || fail "not one row below 16.5 GB/s"
grep 'BELOW FLOOR$' "$CB_TMP/cmp.out" | grep -q ' 65536 out-of-place ' ||
    fail "the row below 16.5 GB/s is not 64 KiB out of place: $(cat "$CB_TMP/cmp.out")"
expect 0 --min-busbw 15.5 "$base" "$base"
expect 0 --min-busbw 10.5 "$base" "$base"
expect 2 --min-busbw abc "$base" "$base"
expect 2 --min-busbw 0 "$base" "$base"

# 6. A summary per collective.
make_csv "$CB_TMP/two-base.csv" two
make_csv "$CB_TMP/two-new.csv" two 1.5
expect 1 "$CB_TMP/two-base.csv" "$CB_TMP/two-new.csv"
grep -q '^# allreduce: compared 4, regressed 0,.*: pass$' "$CB_TMP/cmp.out" ||
    fail "allreduce summary: $(cat "$CB_TMP/cmp.out")"
grep -q '^# broadcast: compared 4, regressed 1,.*worst change +50.0%: FAIL$' "$CB_TMP/cmp.out" ||
    fail "broadcast summary: $(cat "$CB_TMP/cmp.out")"
# The floor takes each collective's own largest size: allreduce's is 4 KiB
# (12 and 13 GB/s), broadcast's 64 KiB.
expect 1 --min-busbw 12.5 "$CB_TMP/two-base.csv" "$CB_TMP/two-base.csv"
[ "$(grep -c 'BELOW FLOOR$' "$CB_TMP/cmp.out")" = 1 ] &&
    grep 'BELOW FLOOR$' "$CB_TMP/cmp.out" | grep -q ' allreduce .* 4096 out-of-place ' ||
    fail "floor per collective: $(cat "$CB_TMP/cmp.out")"
# A collective that no longer runs: its rows missing, its summary FAIL.
grep -v ',broadcast,' "$CB_TMP/two-base.csv" >"$CB_TMP/no-broadcast.csv"
expect 1 "$CB_TMP/two-base.csv" "$CB_TMP/no-broadcast.csv"
grep -q '^# broadcast: compared 0, .*missing in new 4: FAIL$' "$CB_TMP/cmp.out" ||
    fail "missing collective: $(cat "$CB_TMP/cmp.out")"
grep -q '^# allreduce: compared 4, .*missing in new 0,.*: pass$' "$CB_TMP/cmp.out" ||
    fail "missing collective, allreduce: $(cat "$CB_TMP/cmp.out")"
expect 0 --allow-missing "$CB_TMP/two-base.csv" "$CB_TMP/no-broadcast.csv"

# 6b. The health scan's node, rail and pair rows are keys of their own (a
# node and a rail of the same group once counted as one noisy key, which
# hid the rail's 30% drop).
make_csv "$CB_TMP/scan-base.csv" scan
make_csv "$CB_TMP/scan-new.csv" scan 1.43
expect 0 "$CB_TMP/scan-base.csv" "$CB_TMP/scan-base.csv"
grep -q '^# all: compared 3, ' "$CB_TMP/cmp.out" || fail "scan: not 3 keys: $(cat "$CB_TMP/cmp.out")"
expect 1 "$CB_TMP/scan-base.csv" "$CB_TMP/scan-new.csv"
[ "$(grep -c 'REGRESSED$' "$CB_TMP/cmp.out")" = 1 ] &&
    grep 'REGRESSED$' "$CB_TMP/cmp.out" | grep -q ' rail  *busbw ' ||
    fail "scan: the rail's drop: $(cat "$CB_TMP/cmp.out")"
# Other files print no scan columns.
expect 0 "$base" "$base"
grep -q 'scan_part' "$CB_TMP/cmp.out" && fail "scan columns without scan rows"

# 7. The machine-readable report.
expect 1 --json "$CB_TMP/report.json" "$CB_TMP/two-base.csv" "$CB_TMP/two-new.csv"
"$CB_PYTHON" - "$CB_TMP/report.json" <<'PY' || fail "the JSON report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_status"] == 1, r["exit_status"]
assert len(r["rows"]) == 8, len(r["rows"])
bad = [x for x in r["rows"] if x["verdict"] != "ok"]
assert len(bad) == 1 and bad[0]["collective"] == "broadcast" and bad[0]["verdict"] == "regressed", bad
assert abs(bad[0]["ratio"] - 1.5) < 1e-3 and bad[0]["metric"] == "median", bad
by = {c["collective"]: c for c in r["collectives"]}
assert by["allreduce"]["failed"] == 0 and by["broadcast"]["regressed"] == 1, by
assert r["summary"]["compared"] == 8 and r["summary"]["failed"] == 1, r["summary"]
PY
expect 2 --json "$CB_TMP/no/such/dir.json" "$base" "$base"
# The report harms no file: an input (however named), a symlink, a
# directory or a device is refused with status 2 before anything is read,
# and left as it was.
cp "$base" "$CB_TMP/keep.csv"
ln -s keep.csv "$CB_TMP/link.json"
for case in "keep.csv|are the same file" "./keep.csv|are the same file" \
            "link.json|are the same file" ".|it is a directory" "/dev/full|not a regular file"; do
    json=${case%%|*}
    case "$json" in /*) ;; *) json="$CB_TMP/$json" ;; esac
    expect 2 --json "$json" "$base" "$CB_TMP/keep.csv"
    grep -qF -- "${case#*|}" "$CB_TMP/cmp.err" || fail "--json $json: $(cat "$CB_TMP/cmp.err")"
done
cmp -s "$base" "$CB_TMP/keep.csv" && [ -L "$CB_TMP/link.json" ] && [ -c /dev/full ] ||
    fail "a refused --json changed a file"

# 8. Big files compare in n log n: 200000 distinct rows take about 3 s of
# CPU time here; quadratic matching took 7 s for 100000 rows and over 18 s
# (it was stopped) for 200000, so a 15 s CPU limit (not wall time: the
# machine's load does not count) tells the two apart by a wide margin both
# ways. The wall-clock limit only keeps a broken build from hanging.
"$CB_PYTHON" - "$base" "$CB_TMP/big.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    for i in range(200000):
        r = dict(rows[i % len(rows)])
        r["bytes"] = str(8 * (i + 1))
        r["device"] = "d"
        w.writerow(r)
PY
got=0
(ulimit -t 15 && exec timeout 120 "$compare" -q "$CB_TMP/big.csv" "$CB_TMP/big.csv") \
    >"$CB_TMP/cmp.out" || got=$?
rm -f "$CB_TMP/big.csv"
[ "$got" = 0 ] || fail "200000 rows: exit $got (over 15 s of CPU time: is matching quadratic again?)"
grep -q '^# all: compared 200000, ' "$CB_TMP/cmp.out" || fail "200000 rows: $(tail -2 "$CB_TMP/cmp.out")"
echo "ok"
