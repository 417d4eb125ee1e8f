# The gate must not cry wolf: two back-to-back runs of the same command pass
# with the default settings. (The gate of before, busbw at 5%, failed most
# rows of such a pair.) This machine is shared and far from quiet (runs
# shift by 20-40% at some sizes while other engineers build), so a pair
# whose comparison fails is run again, up to five pairs; every pair's
# figures, and what the old gate said of it, go to the log. The 30% drop that must fail is in tests/e2e/compare.sh
# and tests/e2e/compare_gate.sh, on fixed figures.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
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
echo "ok"
