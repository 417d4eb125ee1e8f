# What real CUDA and NCCL would break, on the NCCL backend through the CPU
# stand-in, which records in its trace every breach of their rules that it
# can see ("VIOLATION", see tests/nccl/standin/standin.h) and behaves as they do
# where it can (an abort that waits for live graphs, a cudaFree that waits
# for the device). Each case below failed before the backend was fixed.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace
CB_RUN_TIMEOUT=60

# Completion is asynchronous (each collective keeps the stream busy 20 ms):
# the wait loop must yield between polls, the warmup must end before the
# capture and the first graph launch, and under -G the buffers that the
# graph's collectives registered are freed only after the communicator
# ended (destroy, not abort: all went well).
CB_STANDIN_OP_US=20000
export CB_STANDIN_OP_US
for opts in "-w 2" "-w 2 -G 2" "-w 1 -G 2 -m 2 -z 1"; do
    fresh_trace
    # shellcheck disable=SC2086
    run 2 --backend nccl -n 2 -c 1 -b 64 -e 256 -f 4 $opts
    expect_rc 0 "$opts"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
    echo "ok: $opts"
done
# hier_allreduce under -G: three communicators in one graph.
fresh_trace
run 4 --backend nccl -o hier_allreduce --hier-split size:2 -n 2 -c 1 -b 64 -e 256 -f 4 -w 1 -G 2
expect_rc 0 "hier_allreduce -G 2"
standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
echo "ok: hier_allreduce -G 2"
unset CB_STANDIN_OP_US

# An asynchronous error in a split communicator while the graph that
# captured it lives: reported as such (status 1, one message), not a hang
# in an abort that waits for the graph.
CB_STANDIN_FAIL_ASYNC=2
export CB_STANDIN_FAIL_ASYNC
fresh_trace
run 4 --backend nccl -o hier_allreduce --hier-split size:2 -b 8 -e 64 -G 2 -w 0 -T 20
unset CB_STANDIN_FAIL_ASYNC
expect_rc 1 "an asynchronous error in a split communicator under -G"
one_message "asynchronous error in a split communicator"
# The launcher may end a rank before its trace's exit line: only violations.
! grep -q '^VIOLATION' "$CB_TMP"/trace.* || show_and_fail "the stand-in saw a violation"
echo "ok: an asynchronous error under -G"

# -m with in-place alltoall and sendrecv through a scratch buffer smaller
# than the input, in rounds: NCCL (and the stand-in) runs grouped sends only
# at the outermost ncclGroupEnd, after every copy launched inside the group,
# so a backend that copied to the scratch buffer inside the engine's group
# would send the last round's data in every round. Verification launches
# grouped as the timed launches are, so that shows as wrong results (status
# 7, a non-zero #wrong in place): this failed with the copies put back
# inside the group.
NCCL_COLLBENCH_TEST_SCRATCH_BYTES=24
export NCCL_COLLBENCH_TEST_SCRATCH_BYTES
for opts in "" "-G 2 -w 0"; do
    fresh_trace
    # shellcheck disable=SC2086
    run 3 --backend nccl -o alltoall,sendrecv -d int64 -m 2 -b 48 -e 192 -f 4 -n 2 -c 1 $opts
    expect_rc 0 "-m 2 in place through a small scratch buffer ($opts)"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy
    echo "ok: -m 2 in place $opts"
done
unset NCCL_COLLBENCH_TEST_SCRATCH_BYTES

# The free memory is measured after NCCL has made the buffers it makes at
# a communicator's first use of each kind of operation: one of each kind
# runs before cudaMemGetInfo.
fresh_trace
run 3 --backend nccl -o allreduce -n 1 -w 0 -c 0 -b 8 -e 8
expect_rc 0 "a plain run"
for r in 0 1 2; do
    for kind in allreduce allgather reducescatter broadcast reduce p2p; do
        awk -v kind="$kind" '$1 == "cudaMemGetInfo" { exit } $1 == "run" && $2 == kind { found = 1 }
            END { exit !found }' "$CB_TMP/trace.$r" ||
            fail "rank $r: no $kind ran before the free memory was measured"
    done
done
echo "ok: free memory measured after one operation of each kind"

# A graph launch that never completes on rank 1 (a hung kernel): the
# watchdog (-T 2) fires, rank 0's hang report ends every rank with status 3. NCCL's abort waits for the
# live graph, so the backend must destroy the graph first, from the thread
# that owns it, and the watchdog must not wait on the abort for ever.
OMPI_MCA_orte_abort_on_non_zero_status=0
export OMPI_MCA_orte_abort_on_non_zero_status
# Hydra tells the other ranks of a failed one with SIGUSR1, which MPICH's
# ranks catch but this shell would die of.
cat >"$CB_TMP/rank.sh" <<SH
#!/bin/sh
trap '' USR1
"$CB_STANDIN_BIN" "\$@"
rc=\$?
echo \$rc >"$CB_TMP/rc.\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-unknown}}}"
exit \$rc
SH
chmod +x "$CB_TMP/rank.sh"
CB_STANDIN_OP_US=1000
CB_STANDIN_STUCK_GRAPH=1
export CB_STANDIN_OP_US CB_STANDIN_STUCK_GRAPH
fresh_trace
rm -f "$CB_TMP"/rc.*
# Every launcher must let rank 1 end by itself once rank 0 has (Hydra kills it).
plain_mpirun=$CB_MPIRUN
CB_MPIRUN="$CB_MPIRUN $CB_MPIRUN_KEEP_RANKS"
CB_RUN_BIN="$CB_TMP/rank.sh" run 2 --backend nccl -G 2 -w 0 -n 2 -b 64 -e 64 -T 2
CB_MPIRUN=$plain_mpirun
unset CB_STANDIN_STUCK_GRAPH CB_STANDIN_OP_US
[ "$rc" = 124 ] || [ "$rc" = 137 ] && show_and_fail "a stuck graph: did not finish within ${CB_RUN_TIMEOUT}s"
# Rank 0's hang report speaks for both: both answer from the same launch.
grep -q '^# Hang: rank [01] (.*) saw no progress for 2 s (-T); of 2 ranks, 2 answered' "$CB_TMP/err" ||
    show_and_fail "a stuck graph: no hang report with both ranks' answers"
grep -q '^# Hang: none behind: ranks 0-1 in allreduce .*64 B' "$CB_TMP/err" ||
    show_and_fail "a stuck graph: the report does not say where the ranks were"
grep -q 'VIOLATION' "$CB_TMP/err" && show_and_fail "a stuck graph: the stand-in saw a violation"
if [ -f "$CB_TMP/rc.unknown" ]; then
    echo "note: the launcher does not say which rank is which; per-rank statuses not checked"
else
    for r in 0 1; do
        [ "$(cat "$CB_TMP/rc.$r" 2>/dev/null)" = 3 ] ||
            show_and_fail "a stuck graph: rank $r exited with '$(cat "$CB_TMP/rc.$r" 2>/dev/null)', not 3"
    done
fi
grep -q '^ncclCommAbort' "$CB_TMP/trace.1" ||
    show_and_fail "a stuck graph: rank 1 did not abort its communicator"
echo "ok: a stuck graph ends with the watchdog's status"

# A send that fails inside its group (alltoall and alltoallv, -m 2 around
# them): the failing rank ends its groups, which NCCL drops unlaunched after
# a failed call (the stand-in traces "ncclGroupEnd dropped the group"),
# then aborts, outside any group (an abort inside one is a VIOLATION: NCCL
# would queue its clean-up for the group's end); the peers wait for the
# sends that never come until their watchdogs end them.
unset OMPI_MCA_orte_abort_on_non_zero_status
for coll in alltoall alltoallv; do
    CB_STANDIN_FAIL_SEND=1
    export CB_STANDIN_FAIL_SEND
    fresh_trace
    run 3 --backend nccl -o "$coll" --nccl-impl p2p -m 2 -w 0 -n 1 -b 96 -e 96 -T 3
    unset CB_STANDIN_FAIL_SEND
    [ "$rc" = 124 ] || [ "$rc" = 137 ] && show_and_fail "a failed send ($coll): did not finish within ${CB_RUN_TIMEOUT}s"
    [ "$rc" != 0 ] || show_and_fail "a failed send ($coll): exit status 0"
    ! grep -q VIOLATION "$CB_TMP/trace.1" ||
        show_and_fail "a failed send ($coll): $(grep VIOLATION "$CB_TMP/trace.1" | head -1)"
    awk '/^ncclSend failed/ { failed = 1; next }
        failed && !aborted && /^ncclGroupEnd dropped the group/ { dropped = 1 }
        failed && /^p2p group/ { launched = 1 }
        failed && /^ncclCommAbort/ { aborted = 1 }
        END { exit !(failed && dropped && aborted && !launched) }' "$CB_TMP/trace.1" ||
        show_and_fail "a failed send ($coll): rank 1 did not drop its group before aborting"
    echo "ok: a failed send inside a group ($coll) ends the group, then aborts"
done
echo "ok"
