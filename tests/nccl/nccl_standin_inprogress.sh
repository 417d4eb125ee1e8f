# The backend's non-blocking set-up, as NCCL 2.28 runs it (HACKING.md,
# "Blocking and non-blocking communicators"): the stand-in returns
# ncclInProgress from the creation of a non-blocking communicator and from
# ncclCommSplit of one (the parent busy, the new communicator written only
# once it is seen done), and flags any call on a communicator before
# ncclCommGetAsyncError has said it is done. The measured communicators
# split from it are blocking: their launches, and their symmetric windows
# (-R 2), return at once (nccl_standin_measured.sh asserts no launch
# returns ncclInProgress). Each path below must pass with no VIOLATION
# while the trace shows ncclInProgress returned where expected. (The
# stand-in's own side of the rule: nccl_standin_rules.sh, case inprogress.)
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

# returned CALL RANK: how many times CALL returned ncclInProgress on RANK.
returned() {
    grep -c "^ncclInProgress from $1\$" "$CB_TMP/trace.$2" || true
}

# at_least N CALL NP: every rank of NP saw CALL return ncclInProgress N or
# more times.
at_least() {
    r=0
    while [ "$r" -lt "$3" ]; do
        got=$(returned "$2" "$r")
        [ "$got" -ge "$1" ] ||
            show_and_fail "rank $r: $2 returned ncclInProgress $got times, expected >= $1"
        r=$((r + 1))
    done
}

# Every collective, split communicators (hier_allreduce on 2 nodes of 2),
# the engine's groups (-m 2) and symmetric windows (-R 2), verified.
fresh_trace
run 4 --backend nccl -o all -d float -b 48 -e 192 -f 4 -n 2 -c 1 -m 2 -R 2 \
    --hier-split size:2
expect_rc 0 "every collective, -m 2 -R 2"
has 1 "^# Out of bounds values : 0 OK"
standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
at_least 1 ncclCommInitRank 4
at_least 3 ncclCommSplit 4   # the measured communicator, hier_allreduce's two
grep -q "^ncclCommWindowRegister " "$CB_TMP/trace.0" || show_and_fail "no window was registered"
echo "ok: every collective, splits, -m 2, -R 2"

# Captured in CUDA graphs (-G): each launch polled before the capture ends.
fresh_trace
run 2 --backend nccl -o allreduce,alltoall,sendrecv -b 48 -e 192 -f 4 -n 2 -c 1 -w 1 -G 2
expect_rc 0 "-G 2"
has 1 "^# Out of bounds values : 0 OK"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
at_least 1 ncclCommSplit 2
grep -q "capturing=1" "$CB_TMP/trace.0" || show_and_fail "nothing was captured"
echo "ok: -G 2"
echo "ok"
