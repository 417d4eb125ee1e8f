# One rank failing in the NCCL backend, injected through the CPU stand-in's
# testing-only fault variables (tests/nccl/standin/standin.h): every rank exits
# non-zero within the time limit, one message names the failing rank and the
# failed call, the communicator is aborted (not destroyed) when it existed,
# and nothing is left allocated.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace
CB_RUN_TIMEOUT=40

# Each rank records its own exit status, named by its rank as the launcher
# tells it (Open MPI, MPICH/PMI, PMIx). Launchers kill the ranks still
# running once one exits non-zero; the wrapper's CB_MPIRUN_KEEP_RANKS turns
# that off so that each can show its own status (mpirun then exits 0).
CB_MPIRUN="$CB_MPIRUN $CB_MPIRUN_KEEP_RANKS"
cat >"$CB_TMP/rank.sh" <<SH
#!/bin/sh
"$CB_STANDIN_BIN" "\$@"
rc=\$?
echo \$rc >"$CB_TMP/rc.\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-unknown}}}"
exit \$rc
SH
chmod +x "$CB_TMP/rank.sh"
CB_RUN_BIN="$CB_TMP/rank.sh"

# Each case: fault variable, the text of the one message, what becomes of
# the communicator, the exit status of every rank, the environment, extra
# options. ASYNC fires once a collective ran, so -w 1 makes it surface in
# the warmup wait, before the agreement that opens the timed iterations;
# with -G and no warmup it surfaces while the graph lives, which NCCL's
# abort would wait for. COMMINIT and SPLIT fail one rank inside NCCL before
# its peers joined the bootstrap (SPLIT: hier_allreduce's split; also
# tests/e2e/hier_layout.sh). Blocking, as by default, the peers wait in
# NCCL's bootstrap. COMMINIT: the failing rank names the call and ends the
# job (MPI_Abort, status 1) whatever -T says (-T 0 here), so the launch
# ends with its status and no rank's own status is left to check (ended).
# SPLIT: the failing rank names the call (after 5 s of waiting, well inside
# -T 10), and the watchdog (-T) ends every rank with status 3.
# With NCCL_COMM_BLOCKING=0 the creation and the split are polled while the
# ranks agree, and every rank stops with 1.
# A communicator in error is only aborted: NCCL's ncclCommDestroy returns
# its error and keeps it, and from 2.24 leaves the thread in a group where
# a later abort's clean-up never runs (init.cc; the stand-in flags both, so
# a backend that tried destroy first fails the ASYNC cases).
cases=$(cat <<'CASES'
SETDEVICE	cudaSetDevice failed	nocomm	1	-	-n 2
STREAM	cudaStreamCreateWithFlags failed	nocomm	1	-	-n 2
COMMINIT	ncclCommInitRankConfig failed	ended	1	-	-n 2 -T 0
COMMINIT	ncclCommInitRankConfig failed	nodestroy	1	NCCL_COMM_BLOCKING=0	-n 2
SPLIT	ncclCommSplit failed	hang	3	-	-n 2 -o hier_allreduce --hier-split size:2 -T 10
SPLIT	ncclCommSplit failed	abort	1	NCCL_COMM_BLOCKING=0	-n 2 -o hier_allreduce --hier-split size:2
MALLOC	ncclMemAlloc failed	abort	1	-	-n 2
CAPTURE	cudaStreamBeginCapture failed	abort	1	-	-n 2 -G 2
ASYNC	NCCL reported an asynchronous error	abort	1	-	-n 2 -w 1
ASYNC	NCCL reported an asynchronous error	abort	1	-	-n 2 -w 0 -G 2 -T 20
CASES
)
echo "$cases" | while IFS='	' read -r fault text teardown status env opts; do
    for spec in 2:1 3:0 4:2; do
        # A hang ends only at -T: one placement of the failing rank says it.
        [ "$teardown" != hang ] && [ "$teardown" != ended ] || [ "$spec" = 3:0 ] || continue
        np=${spec%:*}
        bad=${spec#*:}
        rm -f "$CB_TMP"/rc.* "$CB_TMP"/trace.*
        eval "CB_STANDIN_FAIL_$fault=$bad; export CB_STANDIN_FAIL_$fault"
        [ "$env" = - ] || export "${env?}"
        # shellcheck disable=SC2086
        run "$np" --backend nccl -b 8 -e 1K -f 4 $opts </dev/null
        unset "CB_STANDIN_FAIL_$fault"
        [ "$env" = - ] || unset "${env%%=*}"
        what="$fault on rank $bad of $np"
        [ "$env" = - ] || what="$what, $env"
        [ "$rc" = 124 ] || [ "$rc" = 137 ] && show_and_fail "$what: did not finish within ${CB_RUN_TIMEOUT}s"
        one_message "$text"
        grep '^nccl-collbench: ' "$CB_TMP/err" | grep -q "rank $bad " ||
            show_and_fail "$what: the message does not name rank $bad"
        grep -qi 'core dumped\|segmentation' "$CB_TMP/err" && show_and_fail "$what: crashed"
        if [ "$teardown" = ended ]; then
            [ "$rc" != 0 ] || show_and_fail "$what: the launch's status is 0"
            [ ! -f "$CB_TMP/rc.$bad" ] || [ "$(cat "$CB_TMP/rc.$bad")" = "$status" ] ||
                show_and_fail "$what: rank $bad exited with '$(cat "$CB_TMP/rc.$bad")', not $status"
        elif [ -f "$CB_TMP/rc.unknown" ]; then
            echo "note: the launcher does not say which rank is which; per-rank statuses not checked"
            [ "$rc" != 0 ] || show_and_fail "$what: exit status 0"
        else
            r=0
            while [ "$r" -lt "$np" ]; do
                [ "$(cat "$CB_TMP/rc.$r" 2>/dev/null)" = "$status" ] ||
                    show_and_fail "$what: rank $r exited with '$(cat "$CB_TMP/rc.$r" 2>/dev/null)', not $status"
                r=$((r + 1))
            done
        fi
        # No communicator is made after an earlier step failed; one that was
        # made is aborted, never destroyed as if all went well.
        case "$teardown" in
            abort) standin_check trace --prefix "$CB_TMP/trace" --ranks "$np" --teardown abort ;;
            # Ended by the watchdog, blocked in NCCL: nothing is torn down.
            hang|ended) ! grep -q '^ncclCommDestroy' "$CB_TMP"/trace.* ||
                      show_and_fail "$what: a communicator was destroyed in a hang" ;;
            nodestroy) standin_check trace --prefix "$CB_TMP/trace" --ranks "$np" \
                           --count "ncclCommDestroy=0" ;;
            nocomm) standin_check trace --prefix "$CB_TMP/trace" --ranks "$np" \
                        --count "ncclCommInitRank=0" --count "ncclCommAbort=0" ;;
        esac
        echo "ok: $what"
    done
done || exit 1
echo "ok"
