# Faults under mpirun: a hung rank (the watchdog fires and names it), an
# allocation failure on one rank, a rank killed mid-sweep, SIGTERM and
# SIGINT mid-sweep. Nothing hangs, files hold whole rows, JSON stays valid.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

# csv_whole FILE: every line ends, every row has the header's field count.
csv_whole() {
    "$CB_PYTHON" - "$1" <<'PY' || fail "$1 holds a partial row"
import csv, sys
data = open(sys.argv[1], newline="").read()
assert data == "" or data.endswith("\n"), "last line not ended"
rows = list(csv.reader(data.splitlines()))
assert rows and all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
PY
}

# start NP ARGS...: launch in the background; $job is mpirun's pid.
start() {
    np=$1
    shift
    timeout -k 5 60 $CB_MPIRUN -np "$np" "$CB_BIN" "$@" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
    job=$!
}

# wait_rows FILE N: until FILE has N lines (the sweep is under way), at most 40 s.
wait_rows() {
    i=0
    while [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ]; do
        i=$((i + 1))
        [ "$i" -gt 400 ] && fail "the sweep did not start"
        sleep 0.1
    done
}

# finish: wait for the job; $rc is its status and $took the seconds it took after the fault.
finish() {
    t0=$(date +%s)
    rc=0
    wait "$job" || rc=$?
    took=$(($(date +%s) - t0))
}

# The live rank processes of this test's job (zombies, which a container's
# init may never reap, do not count): descendants of $job only, so that the
# ranks of tests running beside this one (make -j) are left alone.
ranks() {
    ps -eo pid=,ppid=,stat=,args= | awk -v bin="$CB_BIN" -v job="$job" '
        { parent[$1] = $2; stat[$1] = $3; cmd[$1] = $4 }
        END {
            for (p in cmd) {
                if (stat[p] ~ /^Z/ || cmd[p] != bin)
                    continue
                for (q = parent[p]; q != "" && q > 1; q = parent[q])
                    if (q == job) { print p; break }
            }
        }'
}

# 1. A hung rank: the watchdogs fire; status 3; rank 0 prints one hang
#    report (tests/faults/hang_report.sh tests it with a silent rank).
#    The fault layer (tests/faults/layer) hangs rank 1 inside its first launch
#    of 1024 elements or more, the 4096 B out-of-place warmup, as a library
#    would: every rank answers from that launch, so none is behind and the
#    report says the hang is inside the operation.
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"
NCCL_COLLBENCH_TEST_FAULT=hang:1:1024 CB_RUN_BIN=$FAULTY \
    run 3 --backend faulty-mpi -b 1K -e 64K -n 5 -T 3 --csv "$CB_TMP/hang.csv"
expect_rc 3 "injected hang"
[ "$(grep -c '^# Hang: rank [0-2] (.*) saw no progress for 3 s (-T); of 3 ranks, 3 answered' "$CB_TMP/err")" = 1 ] ||
    fail "not one hang report with every rank's answer: $(cat "$CB_TMP/err")"
grep -q '^# Hang: none behind: ranks 0-2 in allreduce float sum root -1, 4096 B out-of-place, warmup, .* launched' "$CB_TMP/err" ||
    fail "the report does not say where the ranks were: $(cat "$CB_TMP/err")"
csv_whole "$CB_TMP/hang.csv"
[ "$(wc -l <"$CB_TMP/hang.csv")" = 5 ] || fail "expected the header and 4 rows before the hang"

# 1b. MPI_Finalize that never returns (MPICH before 4.2 can hang there
#    between nodes): the results are complete; the watchdog still ends the
#    rank within -T, naming it, with status 3 when the run itself passed and
#    the run's own status otherwise. One rank: Open MPI 4.1's mpirun itself
#    now and then crashes or hangs when two ranks leave MPI_Finalize unended.
NCCL_COLLBENCH_TEST_FINALIZE_HANG=0 CB_RUN_BIN=$FAULTY \
    run 1 --backend mpi -b 1K -e 4K -n 2 -T 2 --csv "$CB_TMP/fin.csv"
expect_rc 3 "MPI_Finalize hung"
grep -q '^nccl-collbench: rank 0 (.*): timeout: no progress for 2 s (-T) in MPI_Finalize' "$CB_TMP/err" ||
    show_and_fail "the rank hung in MPI_Finalize is not named"
csv_whole "$CB_TMP/fin.csv"
[ "$(wc -l <"$CB_TMP/fin.csv")" = 7 ] || show_and_fail "expected the header and 6 rows before MPI_Finalize"
grep -q '^# Avg bus bandwidth' "$CB_TMP/out" || show_and_fail "the table's footer is missing"
NCCL_COLLBENCH_TEST_FINALIZE_HANG=0 NCCL_COLLBENCH_TEST_FAULT=corrupt:0:3 CB_RUN_BIN=$FAULTY \
    run 1 --backend faulty-mpi -b 1K -e 4K -n 2 -T 2
expect_rc 7 "wrong results, then MPI_Finalize hung"
grep -q '^nccl-collbench: rank 0 (.*): timeout: .* in MPI_Finalize' "$CB_TMP/err" ||
    show_and_fail "the rank hung in MPI_Finalize is not named"
# A crash in MPI_Finalize (as in Open MPI 4.1's teardown, issue 36) after
# a run that passed: the rank says so and ends with the run's status, not
# 139; with wrong results, with 7.
NCCL_COLLBENCH_TEST_FINALIZE_CRASH=0 CB_RUN_BIN=$FAULTY \
    run 1 --backend mpi -b 1K -e 4K -n 2 --csv "$CB_TMP/crash.csv"
expect_rc 0 "a passing run, then a crash in MPI_Finalize"
grep -q '^nccl-collbench note: rank 0: the MPI library crashed in MPI_Finalize, after every output was written; exiting with the run.s status 0$' \
    "$CB_TMP/err" || show_and_fail "the crash in MPI_Finalize is not named"
csv_whole "$CB_TMP/crash.csv"
NCCL_COLLBENCH_TEST_FINALIZE_CRASH=0 NCCL_COLLBENCH_TEST_FAULT=corrupt:0:3 CB_RUN_BIN=$FAULTY \
    run 1 --backend faulty-mpi -b 1K -e 4K -n 2
expect_rc 7 "wrong results, then a crash in MPI_Finalize"

# 2. An allocation failure on one rank: every rank stops, one message.
NCCL_COLLBENCH_TEST_FAULT=alloc:2 CB_RUN_BIN=$FAULTY run 4 --backend faulty-mpi -b 1K -e 1M
expect_rc 1 "injected allocation failure"
[ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || fail "not exactly one message: $(cat "$CB_TMP/err")"
grep -q '^nccl-collbench: rank 2 (.*): cannot allocate .*injected' "$CB_TMP/err" || fail "rank 2 not named"

# 3. A rank killed mid-sweep: the job ends within seconds; whole rows only.
start 3 -b 1K -e 256M -n 200 -T 30 --csv "$CB_TMP/kill.csv"
wait_rows "$CB_TMP/kill.csv" 4
victim=$(ranks | tail -n 1)
[ -n "$victim" ] || fail "no rank process found"
kill -9 "$victim"
finish
[ "$rc" != 0 ] || fail "a killed rank left status 0"
[ "$took" -le 20 ] || fail "the job took ${took}s to end after a rank was killed"
csv_whole "$CB_TMP/kill.csv"
i=0
while [ -n "$(ranks)" ]; do
    i=$((i + 1))
    [ "$i" -gt 50 ] && fail "rank processes still running 5 s after the job ended: $(ranks)"
    sleep 0.1
done

# 4 and 5. SIGTERM and SIGINT to every rank mid-sweep: stop after the
#    measurement in progress, footer printed, CSV whole, JSON valid.
for sig in TERM INT; do
    want=143
    [ "$sig" = INT ] && want=130
    start 2 -b 1K -e 256M -n 100 --csv "$CB_TMP/$sig.csv" --json "$CB_TMP/$sig.json"
    wait_rows "$CB_TMP/$sig.csv" 4
    # shellcheck disable=SC2046
    kill "-$sig" $(ranks)
    finish
    [ "$rc" = "$want" ] || { cat "$CB_TMP/err"; fail "SIG$sig: status $rc, expected $want"; }
    grep -q "interrupted by SIG$sig" "$CB_TMP/err" || fail "SIG$sig: no message"
    grep -q '^# Out of bounds values : 0 OK$' "$CB_TMP/out" || fail "SIG$sig: no footer"
    grep -q "^# Stopped early: .*SIG$sig" "$CB_TMP/out" || fail "SIG$sig: the table does not say it stopped"
    csv_whole "$CB_TMP/$sig.csv"
    "$CB_PYTHON" - "$CB_TMP/$sig.json" "$CB_TMP/$sig.csv" "$want" <<'PY' || fail "SIG$sig: JSON"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert doc["complete"] is False and doc["summary"]["exit_status"] == int(sys.argv[3])
assert len(doc["results"]) == len(rows) >= 3, (len(doc["results"]), len(rows))
assert "interrupted" in doc["errors"][0]
PY
done
echo "ok"
