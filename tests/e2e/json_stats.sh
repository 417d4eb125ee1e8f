# JSON document and time statistics: read back with real parsers and checked
# against the CSV of the same run; failures still give a valid document.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

NCCL_COLLBENCH_DEMO_KNOB=42
export NCCL_COLLBENCH_DEMO_KNOB
run 3 -b 1K -e 16K -f 4 -n 7 -w 2 -a max --stats --progress \
    --csv "$CB_TMP/r.csv" --json "$CB_TMP/r.json"
expect_rc 0 "run with --csv and --json"
[ -e "$CB_TMP/r.json" ] || fail "no JSON file"
ls "$CB_TMP" | grep -q 'r.json.tmp' && fail "temporary JSON file left behind"
[ "$(grep -c '^#   out-of-place per-iteration' "$CB_TMP/out")" = 3 ] || fail "--stats lines missing"
[ "$(grep -c '^#   in-place     per-iteration' "$CB_TMP/out")" = 3 ] || fail "--stats lines missing"
grep -q 'p99' "$CB_TMP/out" && fail "--stats printed a p99 of 7 samples"
# Which collective of how many, the sizes, the time spent and an estimate
# of what is left: none after the first size (one size tells nothing of
# the larger ones), after the last size, nothing.
grep -q '^# progress: collective 1 of 1, allreduce float sum: 1 of 3 sizes; [0-9.]* s elapsed$' \
    "$CB_TMP/err" || fail "no progress on stderr, or an estimate from the first size alone"
grep -q '^# progress: collective 1 of 1, allreduce float sum: 3 of 3 sizes; [0-9.]* s elapsed, about 0 s left$' \
    "$CB_TMP/err" || fail "the last progress line leaves time"
grep -q 'progress' "$CB_TMP/out" "$CB_TMP/r.csv" && fail "progress leaked into the table or CSV"

"$CB_PYTHON" - "$CB_TMP/r.json" "$CB_TMP/r.csv" "$CB_BIN" <<'PY' || fail "JSON or statistics check failed"
import csv, json, math, sys
doc = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2], newline="")))

# JSON numbers have 6 significant digits, the CSV's 6 decimals.
def close(a, b, rel=1e-5, abs_=2e-6):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)

assert doc["schema_version"] == 1 and doc["tool"]["name"] == "nccl-collbench"
assert doc["complete"] is True and doc["errors"] == []
s = doc["summary"]
assert {k: s[k] for k in ("results", "wrong", "passed", "exit_status", "verdict", "reasons",
                          "measurements", "first_wrong_rank", "below_min_busbw",
                          "below_expectation", "scan_suspects", "min_bw_gbps")} == \
    {"results": 6, "wrong": 0, "passed": True, "exit_status": 0, "verdict": "PASS",
     # auto took mpi (no GPU here): the verdict names it (issue 36).
     "reasons": "mpi backend, host memory" if doc["backend"]["name"] == "mpi" else None,
     "measurements": 6, "first_wrong_rank": None, "below_min_busbw": 0,
     "below_expectation": 0, "scan_suspects": 0, "min_bw_gbps": None}, s
assert s["elapsed_s"] > 0 and [a["collective"] for a in s["avg_busbw_by_collective"]] == \
    ["allreduce"] and s["avg_busbw_by_collective"][0]["avg_busbw_gbps"] == s["avg_busbw_gbps"], s
assert doc["command_line"][0].endswith("nccl-collbench") and "--json" in doc["command_line"]
assert doc["environment"].get("NCCL_COLLBENCH_DEMO_KNOB") == "42", doc["environment"]
assert not any(k.startswith("OMPI_MCA_orte_") for k in doc["environment"])
p = doc["parameters"]
assert p["iters"] == 7 and p["warmup_iters"] == 2 and p["time_combine"] == "max"
assert p["blocking"] is False and p["collectives"] == ["allreduce"] and p["datatypes"] == ["float"]
assert p["split"] is None and p["hier_split"] == "node" and p["layouts"] == ["row"]
assert p["budget_ms"] == 0 and p["stable_pct"] == 2
assert doc["ranks"] == 3 and len(doc["devices"]) == 3
assert [d["rank"] for d in doc["devices"]] == [0, 1, 2]
assert doc["run_id"] == rows[0]["run_id"] and doc["start_utc"] == rows[0]["start_utc"]
res = doc["results"]
assert len(res) == len(rows) == 6
for r, c in zip(res, rows):
    assert isinstance(r["in_place"], bool) and isinstance(r["checked"], bool) and r["checked"]
    assert r["in_place"] == (c["placement"] == "in-place")
    assert r["bytes"] == int(c["bytes"]) and r["wrong"] == 0 and r["first_wrong"] is None
    # The iterations actually run, and the ranks busbw was computed for.
    assert r["actual_iterations"] == 7 == int(c["iters"]) and r["warmup_iterations"] == 2, r
    assert r["group"] is None and r["group_ranks"] == 3 == int(c["group_ranks"]), r
    assert close(r["time_us"], float(c["time_us"])), (r, c)
    assert len(r["per_rank"]) == 3
    means = [x["mean_us"] for x in r["per_rank"]]
    # -a max: the reported time is the slowest rank's mean.
    assert close(r["time_us"], max(means)) and close(float(c["rank_time_max_us"]), max(means))
    assert close(float(c["rank_time_min_us"]), min(means))
    assert close(float(c["rank_time_mean_us"]), sum(means) / 3)
    assert int(c["slowest_rank"]) == means.index(max(means)) == r["slowest_rank"]
    slow = r["per_rank"][r["slowest_rank"]]
    # One sample per iteration, or fewer where iterations are short enough
    # that marks every iteration would weigh on the timing (CB_SAMPLE_SPAN).
    assert 1 <= slow["samples"] <= 7 and c["iter_samples"] == str(slow["samples"])
    assert slow["min_us"] <= slow["median_us"] <= slow["max_us"]
    # No p99 from 7 samples: null in JSON, empty in the CSV.
    assert slow["p99_us"] is None and c["iter_p99_us"] == "", (slow, c["iter_p99_us"])
    assert close(float(c["iter_min_us"]), slow["min_us"]) and close(float(c["iter_max_us"]), slow["max_us"])
    # The samples cover the span: their mean is the rank's mean.
    assert slow["min_us"] <= slow["mean_us"] * 1.000001 and slow["mean_us"] <= slow["max_us"] * 1.000001
    assert c["agg"] == "1" and c["graph_launches"] == "0" and c["time_kind"] == "completion"
    assert c["slowest_host"] == doc["devices"][r["slowest_rank"]]["host"]
# Unknown is null, never "": the MPI backend adds no versions.
assert doc["backend"]["versions"] is None, doc["backend"]
PY
# No other key holds "" either, and measured floats carry 6 significant
# digits, not binary noise like 4.90219999999958; also of -o all, whose
# results carry every key (matrix, traffic_matrix, impl...).
check check-json-values --json "$CB_TMP/r.json"
run 2 -o all -b 1K -e 4K -f 4 -n 2 --layout row,col --json "$CB_TMP/all.json"
expect_rc 0 "-o all with --json"
check check-json-values --json "$CB_TMP/all.json"

# Without --samples-json, no raw samples; with it, every rank's, as many as
# its statistics count, the same values the statistics come from.
"$CB_PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert all("samples_us" not in x for r in d["results"] for x in r["per_rank"])' "$CB_TMP/r.json" ||
    fail "raw samples without --samples-json"
run 3 -b 1K -e 4K -f 4 -n 7 -w 2 --json "$CB_TMP/s.json" --samples-json
expect_rc 0 "run with --samples-json"
"$CB_PYTHON" - "$CB_TMP/s.json" <<'PY' || fail "--samples-json"
import json, math, sys
doc = json.load(open(sys.argv[1]))
assert len(doc["results"]) == 4
for r in doc["results"]:
    assert len(r["per_rank"]) == 3
    for x in r["per_rank"]:
        raw = x["samples_us"]
        assert len(raw) == x["samples"] >= 1 and all(v > 0 for v in raw), x
        assert math.isclose(min(raw), x["min_us"], rel_tol=1e-5), x
        assert math.isclose(max(raw), x["max_us"], rel_tol=1e-5), x
PY
run 2 -b 1K -e 1K -n 2 --samples-json
expect_rc 0 "--samples-json without --json"
has 1 '^# --samples-json has no effect without --json$'
run 2 -b 1K -e 1K -n 2 --split size:1 --json "$CB_TMP/s1.json" --samples-json
expect_rc 0 "--samples-json with --split"
has 1 '^# --samples-json has no effect with --split: its results have no per-rank entries$'

# Two runs concatenated still read as one table, with distinct run ids.
run 2 -b 1K -e 1K -n 2 --csv "$CB_TMP/r2.csv"
expect_rc 0 "second run"
{ cat "$CB_TMP/r.csv"; tail -n +2 "$CB_TMP/r2.csv"; } >"$CB_TMP/both.csv"
"$CB_PYTHON" - "$CB_TMP/both.csv" <<'PY' || fail "concatenated CSV does not read"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
header = next(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 8 and all(None not in r and len(r) == len(header) for r in rows), len(rows)
assert len({r["run_id"] for r in rows}) == 2
assert {r["ranks"] for r in rows} == {"3", "2"}
PY

# Wrong results: a complete document that says what was wrong.
# (rank 2 sees element 5 wrong through the fault layer, tests/faults/layer)
NCCL_COLLBENCH_TEST_FAULT=corrupt:2:5 CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
    run 3 --backend faulty-mpi -b 1K -e 1K -n 2 --json "$CB_TMP/w.json"
expect_rc 7 "corrupted run"
"$CB_PYTHON" - "$CB_TMP/w.json" <<'PY' || fail "JSON of a run with wrong results"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["complete"] is True and doc["summary"]["passed"] is False
assert doc["summary"]["exit_status"] == 7 and doc["summary"]["wrong"] == 2
s = doc["summary"]
assert s["verdict"] == "FAIL" and s["first_wrong_rank"] == 2 and s["first_wrong_host"], s
assert s["reasons"] == "2 wrong elements on rank 2 host %s" % s["first_wrong_host"], s
fw = doc["results"][0]["first_wrong"]
assert fw["rank"] == 2 and fw["index"] == 5 and fw["expected"] != fw["actual"], fw
PY

# A run that fails still leaves a valid document naming the failure.
run 2 -b 1T -e 1T --json "$CB_TMP/f.json"
expect_rc 1 "run that cannot fit"
"$CB_PYTHON" - "$CB_TMP/f.json" <<'PY' || fail "JSON of a failed run"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["complete"] is False and doc["summary"]["exit_status"] == 1
assert len(doc["errors"]) == 1 and "does not fit" in doc["errors"][0], doc["errors"]
assert doc["summary"]["verdict"] == "FAIL" and \
    doc["summary"]["reasons"] in ("stopped early, status 1",
                                  "stopped early, status 1; mpi backend, host memory"), doc["summary"]
PY

# An unwritable JSON path fails before anything is measured.
run 2 --json "$CB_TMP/no/dir/x.json" -b 8 -e 8
expect_rc 1 "unwritable --json"
grep -q -- '--json: cannot create' "$CB_TMP/err" || fail "no message for the unwritable JSON path"
grep -q '^ *[0-9]' "$CB_TMP/out" && fail "measured despite an unwritable JSON path"
echo "ok"
