# -o comm_init: the time to make a communicator, one row per way the MPI
# backend has (init: MPI_Comm_dup; split: MPI_Comm_split), shrink and grow
# skipped with a note; per rank and across ranks (min, median, max, the
# slowest rank and host) in the table, CSV and JSON. The fault layer's slow
# rank (slow:2:2:MS adds MS to rank 2's making) must be the one named.
# -o all leaves comm_init out; --split measures it in every group.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 4 -o comm_init -n 3 -w 1 --csv "$CB_TMP/c.csv" --json "$CB_TMP/c.json"
expect_rc 0 "comm_init"
grep -q '^# Collective: comm_init$' "$CB_TMP/out" || show_and_fail "no comm_init table"
for way in init split; do
    grep -Eq "^ +0 +0 +- +$way +-1 +[0-9.]+ " "$CB_TMP/out" || show_and_fail "no $way row"
    grep -Eq "^#   $way per rank \(us\): min [0-9.]+ median [0-9.]+ max [0-9.]+, slowest rank [0-3] on " \
        "$CB_TMP/out" || show_and_fail "no spread under the $way row"
done
for way in shrink grow; do
    grep -q "^# comm_init $way skipped: MPI has no communicator $way" "$CB_TMP/out" ||
        show_and_fail "no note for $way"
done
"$CB_PYTHON" - "$CB_TMP/c.csv" "$CB_TMP/c.json" <<'PY' || show_and_fail "comm_init's CSV or JSON is wrong"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["comm_op"] for r in rows] == ["init", "split"], [r["comm_op"] for r in rows]
for r in rows:
    assert r["collective"] == "comm_init" and r["bytes"] == "0" and r["iters"] == "3", r
    lo, mid, hi = (float(r[k]) for k in ("rank_time_min_us", "rank_time_median_us",
                                          "rank_time_max_us"))
    assert 0 < lo <= mid <= hi, (lo, mid, hi)
    assert 0 <= int(r["slowest_rank"]) < 4 and r["slowest_host"], r
    assert float(r["time_us"]) > 0 and r["wrong"] == "", r
doc = json.load(open(sys.argv[2]))
res = doc["results"]
assert [x["comm_op"] for x in res] == ["init", "split"], res
for x in res:
    t = x["rank_time_us"]
    assert t["min"] <= t["median"] <= t["max"], t
    assert len(x["per_rank"]) == 4 and x["checked"] is False, x
PY

# The gate tells the ways apart (comm_op is a key column where present).
compare="$CB_BUILDDIR/src/nccl-collbench-compare"
rc=0
"$compare" "$CB_TMP/c.csv" "$CB_TMP/c.csv" >"$CB_TMP/cmp" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$CB_TMP/cmp"; fail "the gate refused comm_init's rows (status $rc)"; }
grep -q '^# comm_init: compared 2, regressed 0' "$CB_TMP/cmp" ||
    { cat "$CB_TMP/cmp"; fail "the gate did not compare init and split apart"; }

# The charts draw a line per way.
plot="$CB_BUILDDIR/src/nccl-collbench-plot"
"$plot" -o "$CB_TMP/charts" -f svg "$CB_TMP/c.csv" >/dev/null 2>&1 || fail "nccl-collbench-plot failed"
for way in init split; do
    grep -q "out-of-place $way<" "$CB_TMP/charts/comm_init-time.svg" || fail "no chart line for $way"
done

# The slow rank named: rank 2's makings take 2 s more (added to its time, not slept).
NCCL_COLLBENCH_TEST_FAULT=slow:2:2:2000 CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
    run 4 --backend faulty-mpi -o comm_init -n 2 -w 0 --csv "$CB_TMP/slow.csv"
expect_rc 0 "comm_init with a slow rank"
"$CB_PYTHON" - "$CB_TMP/slow.csv" <<'PY' || show_and_fail "the slow rank is not the one named"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["comm_op"] for r in rows] == ["init", "split"], rows
for r in rows:
    assert r["slowest_rank"] == "2", r
    assert float(r["rank_time_max_us"]) >= 2000000 > float(r["rank_time_median_us"]), r
PY
grep -Eq '^#   init per rank \(us\): min [0-9.]+ median [0-9.]+ max [0-9.]+, slowest rank 2 on ' "$CB_TMP/out" ||
    show_and_fail "the table does not name rank 2 as the slowest"

# Not part of -o all; with --split, a row per group and way.
run 2 -o all -b 8 -e 8 -n 1 -w 0 -c 0 --csv "$CB_TMP/all.csv"
expect_rc 0 "-o all"
grep -q comm_init "$CB_TMP/all.csv" "$CB_TMP/out" && show_and_fail "-o all ran comm_init"
run 4 -o comm_init -n 2 --split size:2 --csv "$CB_TMP/split.csv"
expect_rc 0 "comm_init --split"
"$CB_PYTHON" - "$CB_TMP/split.csv" <<'PY' || show_and_fail "comm_init under --split is wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
got = sorted((r["comm_op"], r["group"], r["group_ranks"]) for r in rows)
assert got == [("init", "0", "2"), ("init", "1", "2"), ("split", "0", "2"), ("split", "1", "2")], got
PY
echo ok
