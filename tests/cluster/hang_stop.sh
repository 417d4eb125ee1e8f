# The hang report across nodes: 3 nodes of 1 rank, and the rank on node 2
# stops itself (SIGSTOP, the fault layer's stop) in its first 4096 B
# all-reduce. Rank 0's report, over the TCP side channel between the
# nodes, names rank 2 and its host h2 as silent and no healthy rank; the
# ranks that can exit end with status 3, and the report never hangs itself.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
need_mpirun
cluster_need
cluster_up 3
CLUSTER_SLOTS=1
cluster_launcher "$CB_MPIRUN_PATH" || skip "unknown launcher $CB_MPIRUN_PATH"
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"

# The fault reaches every node through the rank's own script (launchers
# pass few variables); each rank's status lands in rank.N.
cat >"$CLUSTER_DIR/rank.sh" <<EOF2
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMIX_RANK:-\${PMI_RANK:-x}}}
NCCL_COLLBENCH_TEST_FAULT=stop:2:1024 "$FAULTY" "\$@"
status=\$?
echo "\$status" >"$CLUSTER_DIR/rank.\$rank"
exit \$status
EOF2
chmod +x "$CLUSTER_DIR/rank.sh"

limit=3
t0=$(date +%s)
CB_RUN_BIN="$CLUSTER_DIR/rank.sh" CB_RUN_TIMEOUT=90 \
    cluster_run 3 --backend faulty-mpi -o allreduce -b 1K -e 64K -n 5 -T "$limit" \
    --json "$CLUSTER_DIR/hang.json"
took=$(($(date +%s) - t0))
[ "$took" -lt 85 ] || show_and_fail "the run was ended by the test's timeout after $took s"
# Rank 0 makes the report, which ends both healthy ranks with status 3,
# unless the MPI library ends one first on seeing the other's connection
# close (Open MPI 5: "Socket closed", status 14, after the report): that is
# reported; a rank that stays or ends with 0 fails the test, and so does a
# run where no rank ended by its watchdog.
timed_out=0
for rank in 0 1; do
    [ -f "$CLUSTER_DIR/rank.$rank" ] || show_and_fail "rank $rank did not end by itself"
    read -r status <"$CLUSTER_DIR/rank.$rank"
    [ "$status" != 0 ] || show_and_fail "rank $rank ended with status 0 after the stop"
    if [ "$status" = 3 ]; then
        timed_out=$((timed_out + 1))
    else
        echo "note: rank $rank was ended by its MPI library (status $status) when the other rank's watchdog ended it"
    fi
done
[ "$timed_out" -ge 1 ] || show_and_fail "no rank ended by its watchdog with status 3"
[ "$timed_out" = 2 ] || [ "$CLUSTER_FLAVOR" != ompi4 ] ||
    show_and_fail "under Open MPI 4 both healthy ranks must end with status 3"
[ "$(grep -c "^# Hang: rank [01] (h[01]) saw no progress for $limit s (-T); of 3 ranks, 2 answered within [0-9]* s, 1 silent" \
    "$CB_TMP/err")" = 1 ] || show_and_fail "not one hang report with 2 answers and 1 silent"
grep -q '^# Hang: silent: rank 2 (h2) did not answer' "$CB_TMP/err" ||
    show_and_fail "the stopped rank and its host are not named"
grep '^# Hang: \(silent\|behind\)' "$CB_TMP/err" | grep -q 'h[01]' &&
    show_and_fail "a healthy rank's host is named as silent or behind"
grep -q '^# Hang: waiting: ranks 0-1 in allreduce float sum root -1, 4096 B' "$CB_TMP/err" ||
    show_and_fail "the report does not say where the others wait"
if [ -n "$CB_PYTHON" ]; then
    "$CB_PYTHON" - "$CLUSTER_DIR/hang.json" <<'PY' || show_and_fail "the JSON hang report is wrong"
import json, sys
hang = json.load(open(sys.argv[1]))["hang"]
assert [(r["host"], r["answer"]) for r in hang["ranks"]] == \
    [("h0", "answered"), ("h1", "answered"), ("h2", "silent")], hang["ranks"]
PY
fi
echo "ok ($CLUSTER_FLAVOR, $took s)"
