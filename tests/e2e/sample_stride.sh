# Timer marks weigh on sub-microsecond operations, so short iterations are
# sampled in groups: an all-reduce of 8 to 64 bytes on one rank (well under
# 10 us per iteration) gets fewer samples than iterations, with minimum,
# median and maximum in order. (Long operations keep one sample per
# iteration: tests/nccl/nccl_standin_sweep.sh.) The plan comes from the time
# the warmup or the previous size took, which a busy machine can inflate:
# of the eight rows, not every one need be grouped, but one must.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 1 --backend mpi -b 8 -e 64 -n 1000 -w 20 --csv "$CB_TMP/s.csv"
expect_rc 0 "8 B, 1000 iterations"
"$CB_PYTHON" - "$CB_TMP/s.csv" <<'PY' || fail "grouped samples: $(cat "$CB_TMP/s.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, len(rows)
for r in rows:
    n = int(r["iter_samples"])
    assert 1 <= n <= 1000, n
    assert float(r["iter_min_us"]) <= float(r["iter_median_us"]) <= float(r["iter_max_us"])
assert min(int(r["iter_samples"]) for r in rows) < 1000, [r["iter_samples"] for r in rows]
PY
echo "ok"
