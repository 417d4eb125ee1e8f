# The gate must not cry wolf: two back-to-back runs of the same command pass
# with the default settings. (The gate of before, busbw at 5%, failed most
# rows of such a pair.) This machine is shared and far from quiet (runs
# shift by 20-40% at some sizes while other engineers build), so a pair
# whose comparison fails is run again, up to five pairs; every pair's
# figures, and what the old gate said of it, go to the log. The 30% drop that
# must fail is in tests/e2e/compare.sh and tests/e2e/compare_gate.sh, on fixed
# figures; here the passing pair's baseline, made 30% slower, must fail
# every row whose own spread does not explain the drop (on a busy machine a
# single slow iteration among 50 can, so no count of such rows is asserted).
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
compare="$CB_BUILDDIR/src/nccl-collbench-compare"

now() { date +%s.%N; }
passed=0
for pair in 1 2 3 4 5; do
    t0=$(now)
    run 2 -b 1K -e 256K -f 4 -n 50 -w 5 --csv "$CB_TMP/a$pair.csv"
    expect_rc 0 "pair $pair, first run"
    t1=$(now)
    run 2 -b 1K -e 256K -f 4 -n 50 -w 5 --csv "$CB_TMP/b$pair.csv"
    expect_rc 0 "pair $pair, second run"
    t2=$(now)
    got=0
    "$compare" "$CB_TMP/a$pair.csv" "$CB_TMP/b$pair.csv" >"$CB_TMP/cmp.out" 2>&1 || got=$?
    echo "pair $pair: runs took $(awk "BEGIN { print $t1 - $t0 }") s and" \
        "$(awk "BEGIN { print $t2 - $t1 }") s; compare exit $got"
    cat "$CB_TMP/cmp.out"
    "$compare" --metric busbw -t 5 "$CB_TMP/a$pair.csv" "$CB_TMP/b$pair.csv" |
        sed -n 's/^# all:/the old gate (busbw, 5%):/p' || true
    [ "$got" = 2 ] && fail "pair $pair: the files did not compare"
    if [ "$got" = 0 ]; then
        passed=1
        break
    fi
done
[ "$passed" = 1 ] || fail "five pairs of identical back-to-back runs all failed the default gate"

# The baseline 30% slower throughout (bandwidth x 0.7, every time / 0.7):
# each row's change is 42.9% of the median time.
"$CB_PYTHON" - "$CB_TMP/a$pair.csv" "$CB_TMP/slow.csv" <<'PY' || fail "making the slow copy"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for r in rows:
    for c in ("busbw_gbps", "algbw_gbps"):
        r[c] = "%.6f" % (float(r[c]) * 0.7)
    for c in ("time_us", "iter_min_us", "iter_median_us", "iter_p99_us", "iter_max_us"):
        if r[c]:
            r[c] = "%.6f" % (float(r[c]) / 0.7)
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
PY
got=0
"$compare" "$CB_TMP/a$pair.csv" "$CB_TMP/slow.csv" >"$CB_TMP/cmp.out" 2>&1 || got=$?
echo "the baseline 30% slower: compare exit $got"
cat "$CB_TMP/cmp.out"
"$CB_PYTHON" - "$CB_TMP/cmp.out" "$got" <<'PY' || fail "a real 30% drop"
import sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
assert len(rows) == 10, rows
verdicts = [(float(r[-3]), float(r[-2]), r[-1]) for r in rows]
assert all(abs(change - 42.86) < 0.1 for change, _, _ in verdicts), verdicts
# Beyond the spread (and the 10% threshold): regressed; within it: ok.
assert all(v == "REGRESSED" for _, noise, v in verdicts if noise < 40), verdicts
assert all(v == "ok" for _, noise, v in verdicts if noise > 45), verdicts
assert (sys.argv[2] == "1") == any(v == "REGRESSED" for _, _, v in verdicts), sys.argv[2]
print("%d of 10 rows regressed" % sum(v == "REGRESSED" for _, _, v in verdicts))
PY
echo "ok"
