# The regression gate: a 30% drop is caught, a clean pair passes,
# concatenated baselines are read whole, wrong results fail, bad input
# exits 2. (tests/e2e/compare_gate.sh: the noise, metrics, strict numbers,
# missing rows, reports; tests/e2e/compare_pair.sh: two real runs.)
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
compare="$CB_BUILDDIR/src/nccl-collbench-compare"

run 2 -b 1K -e 64K -f 4 -n 3 --csv "$CB_TMP/measured.csv"
expect_rc 0 "baseline run"
# Fixed figures in place of the measured ones, so that rounding of tiny
# bandwidths on a busy machine cannot move a ratio across a threshold.
"$CB_PYTHON" - "$CB_TMP/measured.csv" "$CB_TMP/base.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for i, r in enumerate(rows):
    r["time_us"] = "%.6f" % (100.0 + i)
    r["busbw_gbps"] = "%.6f" % (10.0 + i)
    # Tight per-iteration samples: the baseline's own spread explains 1%.
    r["iter_samples"] = "20"
    r["iter_median_us"] = r["time_us"]
    r["iter_p99_us"] = "%.6f" % ((100.0 + i) * 1.01)
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
PY

# derive OUT KIND: a copy of base.csv with one row changed.
derive() {
    "$CB_PYTHON" - "$CB_TMP/base.csv" "$1" "$2" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
kind = sys.argv[3]
r = rows[3]
def slower(r, factor):
    for c in ("busbw_gbps", "algbw_gbps"):
        r[c] = "%.6f" % (float(r[c]) / factor)
    for c in ("time_us", "iter_median_us", "iter_p99_us"):
        r[c] = "%.6f" % (float(r[c]) * factor)
if kind == "drop30":
    slower(r, 1 / 0.7)
elif kind == "drop3":
    slower(r, 1 / 0.97)
elif kind == "wrong":
    r["wrong"] = "5"
elif kind == "quoted":
    for row in rows:
        row["device"] = 'CPU "model", with comma'
with open(sys.argv[2], "w", newline="") as f:
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

expect 0 "$CB_TMP/base.csv" "$CB_TMP/base.csv"
grep -q '^# all: compared 8, regressed 0,.*: pass$' "$CB_TMP/cmp.out" ||
    fail "clean pair: $(tail -2 "$CB_TMP/cmp.out")"

derive "$CB_TMP/drop30.csv" drop30
expect 1 "$CB_TMP/base.csv" "$CB_TMP/drop30.csv"
[ "$(grep -c 'REGRESSED' "$CB_TMP/cmp.out")" = 1 ] || fail "the 30% drop is not the one regressed row"
# The median time rose by 1/0.7: ratio 1.429.
grep 'REGRESSED' "$CB_TMP/cmp.out" | grep -q ' median .* 1\.429 ' ||
    { cat "$CB_TMP/cmp.out"; fail "ratio 1.429 of the median not shown"; }
expect 1 --metric busbw "$CB_TMP/base.csv" "$CB_TMP/drop30.csv"
grep 'REGRESSED' "$CB_TMP/cmp.out" | grep -q ' busbw .* 0\.700 ' ||
    { cat "$CB_TMP/cmp.out"; fail "busbw ratio 0.700 not shown"; }
expect 0 --threshold 50 "$CB_TMP/base.csv" "$CB_TMP/drop30.csv"
expect 0 --min-bytes 64K "$CB_TMP/base.csv" "$CB_TMP/drop30.csv"

derive "$CB_TMP/drop3.csv" drop3
expect 0 "$CB_TMP/base.csv" "$CB_TMP/drop3.csv"
expect 1 -t 2 "$CB_TMP/base.csv" "$CB_TMP/drop3.csv"

derive "$CB_TMP/wrong.csv" wrong
expect 1 "$CB_TMP/base.csv" "$CB_TMP/wrong.csv"
grep -q 'WRONG RESULTS' "$CB_TMP/cmp.out" || fail "wrong results not flagged"

# Files of several runs concatenated (headers repeated) average per key.
cat "$CB_TMP/base.csv" "$CB_TMP/base.csv" >"$CB_TMP/two.csv"
expect 0 "$CB_TMP/two.csv" "$CB_TMP/base.csv"
grep -q '^# baseline .* (16 rows);' "$CB_TMP/cmp.out" || fail "concatenated file not read whole"

derive "$CB_TMP/quoted.csv" quoted
expect 0 "$CB_TMP/base.csv" "$CB_TMP/quoted.csv"

# One rank: busbw is 0, so the mean time decides for --metric busbw. The
# copy is 10 times slower, far beyond the noise allowance (the base's
# slowest iteration over its mean time, near 2 on a loaded machine, where
# a 1.5 times copy fell within it).
run 1 -b 1K -e 1K -n 3 --csv "$CB_TMP/one.csv"
expect_rc 0 "one-rank run"
"$CB_PYTHON" - "$CB_TMP/one.csv" "$CB_TMP/one-slow.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for r in rows:
    r["time_us"] = "%.6f" % (float(r["time_us"]) * 10)
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(rows[0].keys()))
w.writeheader()
w.writerows(rows)
PY
expect 1 --metric busbw "$CB_TMP/one.csv" "$CB_TMP/one-slow.csv"
grep 'REGRESSED' "$CB_TMP/cmp.out" | grep -q ' time ' || fail "one rank: time did not decide"

# Input and usage errors.
expect 2 "$CB_TMP/base.csv"
expect 2 "$CB_TMP/base.csv" "$CB_TMP/missing.csv"
grep -q "missing.csv" "$CB_TMP/cmp.err" || fail "missing file not named"
printf 'a,b\n1,"2\n' >"$CB_TMP/broken.csv"
expect 2 "$CB_TMP/base.csv" "$CB_TMP/broken.csv"
grep -q 'unterminated' "$CB_TMP/cmp.err" || fail "broken CSV not explained"
printf 'x,y\n1,2\n' >"$CB_TMP/other.csv"
expect 2 "$CB_TMP/base.csv" "$CB_TMP/other.csv"
expect 2 "$CB_TMP/one.csv" "$CB_TMP/base.csv"
grep -q 'no row' "$CB_TMP/cmp.err" || fail "no matching rows not explained"
expect 2 --threshold abc "$CB_TMP/base.csv" "$CB_TMP/base.csv"
expect 2 --bogus "$CB_TMP/base.csv" "$CB_TMP/base.csv"
expect 0 --help
grep -q -- '--threshold' "$CB_TMP/cmp.out" || fail "--help lacks --threshold"
echo "ok"
