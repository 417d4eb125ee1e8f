# Counts of one read in the singular ("1 group", "1 node", "1 sample"),
# never "all 1 groups" or "1 nodes", in the program's table and notes and
# in the companion tools' messages.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

# no_plural_of_one FILE WHAT: fail when FILE says "1 <noun>s".
no_plural_of_one() {
    bad=$(grep -Ei '(^|[^0-9.,])1 (rank|node|group|size|sample|element|rule|row|field|value|measurement|GPU|cycle|launche|error|iteration|byte|host)s\b|all 1 ' "$1") &&
        fail "$2 says a plural of one: $bad"
    return 0
}

# One rank, one size, one sample, one element of offset, per-iteration statistics.
run 1 -b 8 -e 8 -n 1 -w 0 -u 1 --stats --csv "$CB_TMP/one.csv"
expect_rc 0 "one rank, one size"
cat "$CB_TMP/out" "$CB_TMP/err" >"$CB_TMP/one.txt"
no_plural_of_one "$CB_TMP/one.txt" "a run of one rank"
grep -q '^# buffers: send and receive start 1 element past' "$CB_TMP/one.txt" ||
    fail "-u 1: $(grep '^# buffers' "$CB_TMP/one.txt")"
grep -q '(1 sample, rank 0)' "$CB_TMP/one.txt" || fail "-n 1 --stats: $(grep 'per-iteration' "$CB_TMP/one.txt")"

# --split into one group: its aggregate line says "1 group", not "all 1 groups".
run 2 --split size:2 -b 8 -e 8 -n 1
expect_rc 0 "--split size:2 on 2 ranks"
cat "$CB_TMP/out" "$CB_TMP/err" >"$CB_TMP/split.txt"
no_plural_of_one "$CB_TMP/split.txt" "--split into one group"
grep -q '^# 1 group, 8 B out-of-place: slowest group' "$CB_TMP/split.txt" ||
    fail "--split size:2: no '1 group' line: $(grep 'group' "$CB_TMP/split.txt")"
run 4 --split size:2 -b 8 -e 8 -n 1
expect_rc 0 "--split size:2 on 4 ranks"
grep -q '^# all 2 groups, 8 B out-of-place' "$CB_TMP/out" || fail "--split into two groups: $(grep group "$CB_TMP/out")"

# --expect with a file of one rule.
printf 'host:* allreduce 1 1e-9\n' >"$CB_TMP/rule"
run 2 -b 8 -e 8 -n 1 --expect "$CB_TMP/rule"
expect_rc 0 "--expect with one rule"
cat "$CB_TMP/out" "$CB_TMP/err" >"$CB_TMP/rule.txt"
no_plural_of_one "$CB_TMP/rule.txt" "--expect with one rule"
grep -q '(--expect .*): 1 rule;' "$CB_TMP/rule.txt" || fail "one rule: $(grep Expectation "$CB_TMP/rule.txt")"
printf 'host:*\n' >"$CB_TMP/short"
run 1 -b 8 -e 8 --expect "$CB_TMP/short"
expect_rc 2 "--expect with a line of one field"
grep -q '1: 1 field, expected 4' "$CB_TMP/err" || fail "one field: $(cat "$CB_TMP/err")"

# The companion tools: a baseline of one row, a CSV line of one field.
compare="$CB_BUILDDIR/src/nccl-collbench-compare"
head -n 2 "$CB_TMP/one.csv" >"$CB_TMP/row.csv"
"$compare" "$CB_TMP/row.csv" "$CB_TMP/row.csv" >"$CB_TMP/cmp.txt" 2>&1 ||
    fail "compare of one row with itself: $(cat "$CB_TMP/cmp.txt")"
no_plural_of_one "$CB_TMP/cmp.txt" "nccl-collbench-compare"
grep -q 'row.csv (1 row); new .*row.csv (1 row)' "$CB_TMP/cmp.txt" ||
    fail "compare: $(head -n 3 "$CB_TMP/cmp.txt")"
{ head -n 1 "$CB_TMP/one.csv"; echo 'x'; } >"$CB_TMP/narrow.csv"
"$compare" "$CB_TMP/row.csv" "$CB_TMP/narrow.csv" >"$CB_TMP/cmp.txt" 2>&1 && fail "a row of one field was read"
grep -q 'line 2: 1 field, the header has' "$CB_TMP/cmp.txt" || fail "one field: $(cat "$CB_TMP/cmp.txt")"
echo "ok"
