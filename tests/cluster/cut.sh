# A cut cable on the test cluster: 3 nodes of 1 rank run all-reduces with
# -T 3, and node 2's cable is pulled mid-run. The ranks on nodes 0 and 1
# must each end by themselves within -T plus a few seconds, with status 3,
# and rank 0's hang report (over its side channel, which the cut reaches
# too) must name rank 2 and its host h2 as silent, no healthy rank, and the
# operation and size the others wait in. What the launcher does afterwards
# is its own affair (see docs/design/test-cluster.md): it is reported, not judged, and the
# teardown ends it.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
need_mpirun
cluster_need
cluster_up 3
CLUSTER_SLOTS=1
cluster_launcher "$CB_MPIRUN_PATH" || skip "unknown launcher $CB_MPIRUN_PATH"

# Each rank's own exit status and when it came, as rank.N files.
cat >"$CLUSTER_DIR/rank.sh" <<EOF2
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMIX_RANK:-\${PMI_RANK:-x}}}
"$CB_BIN" "\$@"
status=\$?
echo "\$status \$(date +%s)" >"$CLUSTER_DIR/rank.\$rank.tmp"
mv -f "$CLUSTER_DIR/rank.\$rank.tmp" "$CLUSTER_DIR/rank.\$rank"   # read once whole
exit \$status
EOF2
chmod +x "$CLUSTER_DIR/rank.sh"

limit=3
CLUSTER_TIMEOUT=90 cluster_exec 0 $CLUSTER_MPIRUN -np 3 "$CLUSTER_DIR/rank.sh" --backend mpi \
    -o allreduce -b 4K -e 4K -n 100000000 -w 0 -c 0 -T "$limit" \
    </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
launcher=$!

i=0
until grep -q '^# Collective: allreduce' "$CB_TMP/out" 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -gt 600 ] && show_and_fail "the run did not start within 60 s"
    sleep 0.1
done
sleep 1
cut_at=$(date +%s)
cluster_cut 2 || fail "could not cut node 2's cable"

# Ranks 0 and 1 can still run: each must stop within -T plus a few seconds
# (rank 0 waits up to 3 s for rank 2's answer). The first watchdog to fire
# has rank 0 make the report, which ends both with status 3, unless the MPI
# library ends one first on seeing the other's connection close (Open MPI 5:
# "Socket closed", status 14): that is reported, and only a rank that stays
# or ends with 0 fails the test.
deadline=$((cut_at + limit + 20))
timed_out=0
for rank in 0 1; do
    until [ -f "$CLUSTER_DIR/rank.$rank" ]; do
        [ "$(date +%s)" -gt "$deadline" ] &&
            show_and_fail "rank $rank did not end within $((limit + 20)) s of the cut"
        sleep 0.2
    done
    read -r status ended <"$CLUSTER_DIR/rank.$rank"
    [ "$status" != 0 ] || show_and_fail "rank $rank ended with status 0 after the cut"
    took=$((ended - cut_at))
    [ "$took" -le $((limit + 15)) ] ||
        show_and_fail "rank $rank took $took s after the cut (-T $limit)"
    if [ "$status" = 3 ]; then
        timed_out=$((timed_out + 1))
    else
        echo "note: rank $rank was ended by its MPI library (status $status) when the other rank's watchdog ended it"
    fi
done
[ "$timed_out" -ge 1 ] || show_and_fail "no rank ended by its watchdog with status 3"
# A rank's status file can come before its last lines have passed through
# the launcher: give the report up to 10 s to arrive (or the launcher to end).
i=0
while ! grep -q '^# Hang: ' "$CB_TMP/err" && kill -0 $launcher 2>/dev/null && [ $i -lt 100 ]; do
    i=$((i + 1))
    sleep 0.1
done
[ "$(grep -c "^# Hang: rank [01] (h[01]) saw no progress for $limit s (-T); of 3 ranks, 2 answered" \
    "$CB_TMP/err")" = 1 ] || show_and_fail "not one hang report with the two healthy ranks' answers"
grep -q '^# Hang: silent: rank 2 (h2) did not answer' "$CB_TMP/err" ||
    show_and_fail "the report does not name rank 2 and h2, cut off"
grep '^# Hang: \(silent\|behind\)' "$CB_TMP/err" | grep -q 'h[01]' &&
    show_and_fail "the report names a healthy rank's host as silent or behind"
grep -q '^# Hang: waiting: ranks 0-1 in allreduce .*4096 B' "$CB_TMP/err" ||
    show_and_fail "the report does not name the operation and size the others wait in"

# The launcher: give it a few seconds, then say what it did.
i=0
while kill -0 "$launcher" 2>/dev/null && [ "$i" -lt 50 ]; do
    i=$((i + 1))
    sleep 0.2
done
if kill -0 "$launcher" 2>/dev/null; then
    echo "note: $CLUSTER_FLAVOR's launcher still runs 10 s after the ranks ended; the teardown ends it"
else
    wait "$launcher"
    echo "note: $CLUSTER_FLAVOR's launcher exited with status $? by itself"
fi
echo "ok ($CLUSTER_FLAVOR)"
