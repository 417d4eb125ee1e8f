# --csv - puts CSV alone on stdout (for pipes); the table, notes and all,
# goes to stderr.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 2 --csv - -d double -b 4 -e 64 -f 4 -n 2
expect_rc 0 "--csv -"
grep -q '^#' "$CB_TMP/out" && fail "table lines on stdout with --csv -"
check check-csv-header --csv "$CB_TMP/out"
"$CB_PYTHON" - "$CB_TMP/out" <<'PY' || fail "CSV on stdout is not the expected rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [(r["bytes"], r["placement"]) for r in rows] == [
    ("16", "out-of-place"), ("16", "in-place"), ("64", "out-of-place"), ("64", "in-place")], rows
assert all(r["wrong"] == "0" and r["datatype"] == "double" for r in rows)
PY
grep -q 'skipped allreduce double sum 4 B' "$CB_TMP/err" || fail "the note about the skipped size is not on stderr"
grep -q '^# Out of bounds values : 0 OK$' "$CB_TMP/err" || fail "the table's footer is not on stderr"
echo "ok"
