# --budget MS: timed iterations per measurement from a time budget, the
# same on every rank, between 1 and -n; without it every size runs -n.
. "$CB_SRCDIR/tests/lib.sh"
need_mpirun
need_python

run 2 --backend mpi -b 8 -e 8M -f 8 -n 500 --budget 2 -c 1 --csv "$CB_TMP/b.csv"
expect_rc 0 "--budget 2"
"$CB_PYTHON" - "$CB_TMP/b.csv" <<'PY' || fail "--budget: $(cat "$CB_TMP/b.csv")"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["placement"] == "out-of-place"]
iters = {int(r["bytes"]): int(r["iters"]) for r in rows}
assert all(1 <= n <= 500 for n in iters.values()), iters
# The largest size (2 MiB) takes far over 2 ms / 500 = 4 us: fewer than -n.
assert iters[max(iters)] < 500, iters
assert all(r["wrong"] == "0" for r in rows)
PY

run 2 --backend mpi -b 8 -e 1M -f 16 -n 7 -c 0 --csv "$CB_TMP/n.csv"
expect_rc 0 "without --budget"
"$CB_PYTHON" - "$CB_TMP/n.csv" <<'PY' || fail "without --budget every size runs -n"
import csv, sys
assert all(r["iters"] == "7" for r in csv.DictReader(open(sys.argv[1])))
PY

run 1 --budget -1
expect_rc 2 "--budget -1"
echo "ok"
