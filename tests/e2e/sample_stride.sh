# Timer marks weigh on sub-microsecond operations, so short iterations are
# sampled in groups: an 8-byte all-reduce on one rank (well under 10 us per
# iteration) gets far fewer samples than iterations, and their count agrees
# between the table's statistics and the CSV. (Long operations keep one
# sample per iteration: tests/nccl/nccl_standin_sweep.sh.)
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 1 --backend mpi -b 8 -e 8 -n 1000 -w 20 --csv "$CB_TMP/s.csv"
expect_rc 0 "8 B, 1000 iterations"
"$CB_PYTHON" - "$CB_TMP/s.csv" <<'PY' || fail "grouped samples: $(cat "$CB_TMP/s.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows
for r in rows:
    n = int(r["iter_samples"])
    assert 1 <= n < 1000, n
    assert float(r["iter_min_us"]) <= float(r["iter_median_us"]) <= float(r["iter_max_us"])
PY
echo "ok"
