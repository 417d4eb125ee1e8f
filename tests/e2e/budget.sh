# --budget MS: timed iterations per measurement from a time budget, the
# same on every rank, between 1 and -n; without it every size runs -n.
# --stable PCT: with --budget, rounds of a tenth of the iterations, stopped
# once the last 3 round medians and round means each agree within PCT% on
# every rank.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 2 --backend mpi -b 8 -e 8M -f 8 -n 500 --budget 2 -c 1 --csv "$CB_TMP/b.csv" \
    --json "$CB_TMP/b.json"
expect_rc 0 "--budget 2"
"$CB_PYTHON" - "$CB_TMP/b.csv" "$CB_TMP/b.json" <<'PY' || fail "--budget: $(cat "$CB_TMP/b.csv")"
import csv, json, sys
every = list(csv.DictReader(open(sys.argv[1])))
rows = [r for r in every if r["placement"] == "out-of-place"]
iters = {int(r["bytes"]): int(r["iters"]) for r in rows}
assert all(1 <= n <= 500 for n in iters.values()), iters
# The largest size (2 MiB) takes far over 2 ms / 500 = 4 us: fewer than -n.
assert iters[max(iters)] < 500, iters
assert all(r["wrong"] == "0" for r in rows)
# The JSON says the same count, result by result (nccl-tests' actual_iterations).
res = json.load(open(sys.argv[2]))["results"]
assert [x["actual_iterations"] for x in res] == [int(r["iters"]) for r in every], res
PY

run 2 --backend mpi -b 8 -e 1M -f 16 -n 7 -c 0 --csv "$CB_TMP/n.csv"
expect_rc 0 "without --budget"
"$CB_PYTHON" - "$CB_TMP/n.csv" <<'PY' || fail "without --budget every size runs -n"
import csv, sys
assert all(r["iters"] == "7" for r in csv.DictReader(open(sys.argv[1])))
PY

# A budget far above what -n 100 takes: the count allowed is -n, in 10
# rounds of 10. --stable 1000 takes any 3 round medians (and means) within
# 10x of their median: measurements stop after the 3 rounds of the minimum
# unless a stall of the machine makes one round's mean more than 10x the
# others' (seen in a sanitizer build: 16 ms stalls in rounds of 0.5 ms),
# which then takes more rounds; so every count is a multiple of 10 from 30
# to 100, most below 100 (without the early stop all would be 100), and
# both ranks ran it (a rank that stopped alone would hang the run).
run 2 --backend mpi -b 64K -e 1M -f 4 -n 100 -w 2 --budget 3600000 --stable 1000 -c 1 --stats \
    --csv "$CB_TMP/s.csv"
expect_rc 0 "--budget with --stable 1000"
"$CB_PYTHON" - "$CB_TMP/s.csv" <<'PY' || fail "--stable 1000: $(cat "$CB_TMP/s.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 6, rows
iters = [int(r["iters"]) for r in rows]
assert all(30 <= n <= 100 and n % 10 == 0 for n in iters), iters
assert sum(n < 100 for n in iters) >= len(iters) // 2 + 1, iters
# The statistics cover the samples of every round run, no more.
assert all(1 <= int(r["iter_samples"]) <= int(r["iters"]) for r in rows), rows
assert all(float(r["time_us"]) > 0 and r["wrong"] == "0" for r in rows), rows
PY

# --stable 0: no early stop, every measurement runs all that the budget
# allows (here -n); also with --split, whose groups vote together.
run 2 --backend mpi -b 64K -e 1M -f 4 -n 23 --budget 3600000 --stable 0 -c 0 --csv "$CB_TMP/z.csv"
expect_rc 0 "--budget with --stable 0"
"$CB_PYTHON" - "$CB_TMP/z.csv" <<'PY' || fail "--stable 0 must run -n: $(cat "$CB_TMP/z.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 6 and all(r["iters"] == "23" for r in rows), rows
PY
run 2 --backend mpi -b 64K -e 256K -f 4 -n 40 --budget 3600000 --stable 1000 --split size:1 \
    -c 0 --csv "$CB_TMP/g.csv"
expect_rc 0 "--stable with --split"
"$CB_PYTHON" - "$CB_TMP/g.csv" <<'PY' || fail "--stable with --split: $(cat "$CB_TMP/g.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, rows
# Both groups ran the same count for each measurement.
by = {}
for r in rows:
    by.setdefault((r["bytes"], r["placement"]), set()).add(r["iters"])
assert all(len(v) == 1 for v in by.values()), by
# Rounds of 4: from 12 to 40, most stopping early (see above).
assert all(12 <= int(r["iters"]) <= 40 and int(r["iters"]) % 4 == 0 for r in rows), rows
assert sum(int(r["iters"]) < 40 for r in rows) >= len(rows) // 2 + 1, rows
PY

# Without --budget, --stable changes nothing: every size runs -n.
run 2 --backend mpi -b 8 -e 1K -f 16 -n 9 --stable 1000 -c 0 --csv "$CB_TMP/nb.csv"
expect_rc 0 "--stable without --budget"
"$CB_PYTHON" - "$CB_TMP/nb.csv" <<'PY' || fail "--stable without --budget: $(cat "$CB_TMP/nb.csv")"
import csv, sys
assert all(r["iters"] == "9" for r in csv.DictReader(open(sys.argv[1])))
PY

run 1 --budget -1
expect_rc 2 "--budget -1"
echo "ok"
