# The hang report (-T): a rank stopped (SIGSTOP: it answers nothing) at 4
# ranks on this machine. Rank 0 prints one merged report that names the
# stopped rank and its host as silent and no healthy rank, says where the
# rest wait, puts the same in the JSON document, and every rank that can
# exit ends with status 3; the report never hangs itself. Rank 0 stopped:
# the others report alone, naming it.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"

# The stopped rank of this test's job, if the launcher left it: descendants
# of our own mpirun only, by PID (never another test's ranks).
job_ranks() {
    ps -eo pid=,ppid=,args= | awk -v bin="$FAULTY" -v job="$1" '
        { parent[$1] = $2; cmd[$1] = $3 }
        END { for (p in cmd) if (cmd[p] == bin)
                  for (q = parent[p]; q != "" && q > 1; q = parent[q])
                      if (q == job) { print p; break } }'
}

# stopped_run NP FAULT ARGS...: like run, in the background, so that a rank
# the launcher leaves stopped can be ended by PID; $took is the seconds it took.
stopped_run() {
    np=$1
    fault=$2
    shift 2
    t0=$(date +%s)
    NCCL_COLLBENCH_TEST_FAULT=$fault timeout -k 5 60 $CB_MPIRUN -np "$np" "$FAULTY" "$@" \
        </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
    job=$!
    rc=0
    wait "$job" || rc=$?
    took=$(($(date +%s) - t0))
    for pid in $(job_ranks "$job"); do
        kill -KILL "$pid" 2>/dev/null || true
    done
}
trap 'for pid in $(job_ranks "${job:-0}"); do kill -KILL "$pid" 2>/dev/null; done' EXIT

host=$(hostname)

# 1. Rank 2 of 4 stops itself in its first launch of 1024 elements or more
#    (the 4096 B warmup of allreduce).
stopped_run 4 stop:2:1024 --backend faulty-mpi -b 1K -e 64K -n 5 -T 3 --json "$CB_TMP/hang.json"
expect_rc 3 "rank 2 stopped"
[ "$took" -le 40 ] || show_and_fail "the hang report took $took s (-T 3)"
[ "$(grep -c '^# Hang: rank [0-9]* (.*) saw no progress for 3 s (-T)' "$CB_TMP/err")" = 1 ] ||
    show_and_fail "not exactly one hang report"
grep -q "^# Hang: rank [013] ($host) saw no progress for 3 s (-T); of 4 ranks, 3 answered within 3 s, 1 silent" \
    "$CB_TMP/err" || show_and_fail "the report's first line does not count 3 answers and 1 silent"
grep -q "^# Hang: silent: rank 2 ($host) did not answer" "$CB_TMP/err" ||
    show_and_fail "the stopped rank and its host are not named"
grep '^# Hang: \(silent\|behind\)' "$CB_TMP/err" | grep -q 'rank[s]* [013] ' &&
    show_and_fail "a healthy rank is named as silent or behind"
grep -q '^# Hang: waiting: ranks 0-1,3 in allreduce float sum root -1, 4096 B out-of-place, warmup' \
    "$CB_TMP/err" || show_and_fail "the report does not say where the others wait"
grep -q '^nccl-collbench: rank .*: timeout: no progress' "$CB_TMP/err" &&
    show_and_fail "a rank spoke for itself although rank 0 made the report"
"$CB_PYTHON" - "$CB_TMP/hang.json" "$host" <<'PY' || show_and_fail "the JSON document's hang report is wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
hang, host = doc["hang"], sys.argv[2]
assert doc["summary"]["exit_status"] == 3 and doc["complete"] is False, doc["summary"]
assert hang["answered"] == 3 and hang["silent"] == 1 and hang["behind"] == 0, hang
assert hang["trigger_rank"] in (0, 1, 3), hang["trigger_rank"]
assert [r["answer"] for r in hang["ranks"]] == ["answered", "answered", "silent", "answered"]
assert all(r["host"] == host for r in hang["ranks"])
for r in (0, 1, 3):
    x = hang["ranks"][r]
    assert x["operation"] == "allreduce" and x["bytes"] == 4096, x
    assert x["doing"].endswith("4096 B out-of-place, warmup") and x["launches"] > 0, x
assert any(l.startswith("# Hang: silent: rank 2 ") for l in hang["lines"]), hang["lines"]
assert doc["errors"] and doc["errors"][0].startswith("hang: "), doc["errors"]
PY

# 2. Rank 0, which makes the report, stops: each other rank speaks for
#    itself and names rank 0; status 3 still.
stopped_run 3 stop:0:1024 --backend faulty-mpi -b 1K -e 64K -n 5 -T 2
expect_rc 3 "rank 0 stopped"
[ "$took" -le 45 ] || show_and_fail "the ranks took $took s to end (-T 2)"
grep -q "^nccl-collbench: rank [12] ($host): timeout: no progress for 2 s (-T) in allreduce .*4096 B" \
    "$CB_TMP/err" || show_and_fail "no rank said where it was"
grep -q "^# Hang: rank 0 ($host), which makes the hang report, sent none" "$CB_TMP/err" ||
    show_and_fail "rank 0 is not named"
grep -q '^# Hang: rank [0-9]* (.*) saw no progress' "$CB_TMP/err" &&
    show_and_fail "a stale report was printed after rank 0 was let go"
echo ok
