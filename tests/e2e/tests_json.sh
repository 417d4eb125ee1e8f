# -J writes nccl-tests' JSON schema: tests_json_check.py (ours, from the
# schema) asserts every field their tools/analyze_perf_json.py reads, with
# its type, and that the results are the table's rows; with -I 1 -K N the
# per-iteration objects and their statistics after the skip. --json keeps
# our own schema beside it.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
checker=$CB_SRCDIR/tests/e2e/tests_json_check.py

# Three collectives (reducing, not, rooted), per-iteration samples.
run 2 -o allreduce,allgather,broadcast -b 8 -e 1K -n 6 -I 1 -K 2 -J "$CB_TMP/t.json" \
    --json "$CB_TMP/ours.json"
expect_rc 0 "-J with -I 1 -K 2"
"$CB_PYTHON" "$checker" "$CB_TMP/t.json" --ranks 2 --per-iter 2 --table "$CB_TMP/out" ||
    fail "-J -I 1 -K 2: not nccl-tests' schema"
"$CB_PYTHON" - "$CB_TMP/ours.json" "$CB_TMP/t.json" <<'PY' || fail "--json or -J lost its own schema"
import json, sys
ours, theirs = (json.load(open(p)) for p in sys.argv[1:])
assert ours["schema_version"] == 1 and "size" not in ours["results"][0], "--json changed"
assert theirs["version"] == 3 and "schema_version" not in theirs
r = theirs["results"]
assert {x["redop"] for x in r} == {"sum", "none"}, r
assert {x["root"] for x in r} == {"    -1", "     0"}, {x["root"] for x in r}
assert theirs["config"]["per_iter_timing"] == "true" and theirs["config"]["per_iter_skip"] == 2
assert all(len(x["out_of_place_per_iter"]["times_us"]) == 6 for x in r), "not a sample an iteration"
PY

# Without -I: no per-iteration objects; three ranks; CPU time under its key.
run 3 -b 8 -e 64 -n 2 -C 1 -J "$CB_TMP/plain.json"
expect_rc 0 "-J without -I"
"$CB_PYTHON" "$checker" "$CB_TMP/plain.json" --ranks 3 --table "$CB_TMP/out" ||
    fail "-J: not nccl-tests' schema"
grep -q '"cpu_time"' "$CB_TMP/plain.json" || fail "-C 1: no cpu_time"

# The checker fails a document that lacks a field their analyzer reads.
"$CB_PYTHON" - "$CB_TMP/plain.json" "$CB_TMP/broken.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
del doc["results"][1]["size"]
json.dump(doc, open(sys.argv[2], "w"))
PY
"$CB_PYTHON" "$checker" "$CB_TMP/broken.json" --ranks 3 2>/dev/null &&
    fail "the checker passed a result without 'size'"

# -J and --json on one file: a usage error.
run 1 -b 8 -e 8 -J "$CB_TMP/same.json" --json "$CB_TMP/same.json"
expect_rc 2 "-J and --json on one file"
grep -q 'same file' "$CB_TMP/err" || show_and_fail "no message naming the clash"
exit 0
