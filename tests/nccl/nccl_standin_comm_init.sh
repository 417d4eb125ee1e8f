# -o comm_init through the CPU stand-in: a row for ncclCommInitRankConfig
# (init), ncclCommSplit (split) and ncclCommShrink (shrink) each, grow
# skipped (no NCCL has it), across-rank figures in the table, CSV and JSON;
# by the trace, every way called -w + -n times on every rank but shrink's
# excluded last rank, which never calls it (as NCCL requires), every
# communicator destroyed, nothing that real NCCL would refuse.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

fresh_trace
run 4 --backend nccl -o comm_init -n 3 -w 1 --csv "$CB_TMP/c.csv" --json "$CB_TMP/c.json"
expect_rc 0 "comm_init on the stand-in"
for way in init split shrink; do
    grep -Eq "^ +0 +0 +- +$way +-1 +[0-9.]+ " "$CB_TMP/out" || show_and_fail "no $way row"
    grep -Eq "^#   $way per rank \(us\): min [0-9.]+ median [0-9.]+ max [0-9.]+, slowest rank [0-3] on " \
        "$CB_TMP/out" || show_and_fail "no spread under the $way row"
done
grep -q '^# comm_init grow skipped: NCCL .* has no communicator grow' "$CB_TMP/out" ||
    show_and_fail "no note for grow"
standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
for r in 0 1 2 3; do
    split=$(grep -c '^ncclCommSplit ' "$CB_TMP/trace.$r" || true)
    shrink=$(grep -c '^ncclCommShrink ' "$CB_TMP/trace.$r" || true)
    init=$(grep -c '^ncclCommInitRank ' "$CB_TMP/trace.$r" || true)
    # The 4 timed and untimed makings (the run's one communicator is
    # created, never split: docs/design/communicators.md).
    [ "$split" = 4 ] || fail "rank $r: $split ncclCommSplit calls, expected 4"
    # The run's own communicator and the 4 timed and untimed makings.
    [ "$init" = 5 ] || fail "rank $r: $init ncclCommInitRank calls, expected 5"
    want=4
    [ "$r" = 3 ] && want=0
    [ "$shrink" = "$want" ] || fail "rank $r: $shrink ncclCommShrink calls, expected $want"
done
"$CB_PYTHON" - "$CB_TMP/c.csv" "$CB_TMP/c.json" <<'PY' || show_and_fail "comm_init's CSV or JSON is wrong"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["comm_op"] for r in rows] == ["init", "split", "shrink"], rows
for r in rows:
    lo, mid, hi = (float(r[k]) for k in ("rank_time_min_us", "rank_time_median_us",
                                          "rank_time_max_us"))
    assert 0 < lo <= mid <= hi and r["backend"] == "nccl", r
shrink = json.load(open(sys.argv[2]))["results"][2]
assert shrink["comm_op"] == "shrink", shrink
# The excluded rank took no part: no time, and never the slowest.
assert shrink["per_rank"][3]["mean_us"] is None, shrink["per_rank"][3]
assert shrink["slowest_rank"] in (0, 1, 2), shrink["slowest_rank"]
PY
echo ok
