# Blocking and non-blocking communicators, as NCCL's source has them
# (docs/design/communicators.md). By default the run has one blocking
# communicator, as nccl-tests': no call may return ncclInProgress. With
# NCCL_COMM_BLOCKING=0, which NCCL lets override the config's blocking = 1
# (init.cc, parseCommConfig, 2.17 on), every communicator is non-blocking:
# creation returns ncclInProgress, and a split or shrink returns ncclSuccess
# while the PARENT stays in progress and the new communicator is written
# only once the parent is polled done (init.cc, ncclCommSplit, 2.18.1 to
# 2.28.9). A backend that trusts the split's return value sees no
# communicator and stops. The stand-in flags any call on a communicator
# before ncclCommGetAsyncError has said it is done. (The stand-in's own
# side of the rule: nccl_standin_rules.sh, case inprogress.)
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

# count PATTERN RANK: the lines of RANK's trace that match PATTERN.
count() {
    grep -c -- "$1" "$CB_TMP/trace.$2" || true
}

# on_every N PATTERN NP WHAT: every rank of NP traced PATTERN N times or more.
on_every() {
    r=0
    while [ "$r" -lt "$3" ]; do
        got=$(count "$2" "$r")
        [ "$got" -ge "$1" ] || show_and_fail "rank $r: $4 $got times, expected >= $1"
        r=$((r + 1))
    done
}

# on_none PATTERN NP WHAT: no rank of NP traced PATTERN.
on_none() {
    r=0
    while [ "$r" -lt "$2" ]; do
        got=$(count "$1" "$r")
        [ "$got" = 0 ] || show_and_fail "rank $r: $3 $got times, expected none"
        r=$((r + 1))
    done
}

# The default: one blocking communicator per rank, blocking splits
# (hier_allreduce on 2 nodes of 2), nothing in progress.
fresh_trace
run 4 --backend nccl -o all -d float -b 48 -e 192 -f 4 -n 2 -c 1 -m 2 -R 2 \
    --hier-split size:2
expect_rc 0 "every collective, -m 2 -R 2, blocking"
has 1 "^# Out of bounds values : 0 OK"
standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
on_every 1 "^ncclCommInitRank .*blocking=1" 4 "a blocking creation"
on_none "^ncclCommInitRank .*blocking=0" 4 "a non-blocking creation"
on_none "^ncclInProgress from" 4 "a call returned ncclInProgress"
on_every 2 "^ncclCommSplit .*blocking=1" 4 "hier_allreduce's blocking split"
has 1 "^# communicators: 1 per rank (.*), blocking, as nccl-tests'"
grep -q "NCCL_COMM_BLOCKING" "$CB_TMP/out" &&
    show_and_fail "the preamble speaks of NCCL_COMM_BLOCKING, which is not set"
echo "ok: one blocking communicator, blocking splits"

# NCCL_COMM_BLOCKING=0: the same run, every communicator non-blocking and
# polled; each split returns ncclSuccess with its parent in progress.
fresh_trace
NCCL_COMM_BLOCKING=0 run 4 --backend nccl -o all -d float -b 48 -e 192 -f 4 -n 2 -c 1 -m 2 \
    -R 2 --hier-split size:2
expect_rc 0 "every collective, -m 2 -R 2, NCCL_COMM_BLOCKING=0"
has 1 "^# Out of bounds values : 0 OK"
has 1 "^# communicators: 1 per rank (.*), non-blocking: NCCL_COMM_BLOCKING=0 overrides"
standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
on_every 1 "^ncclInProgress from ncclCommInitRank$" 4 "creation returned ncclInProgress"
on_every 2 "^ncclCommSplit returned ncclSuccess, the communicator in progress$" 4 \
    "a split left its parent in progress"
# NCCL 2.28's window registration returns ncclSuccess and writes the window
# later (dev_runtime.cc): polled before its handle is read.
on_every 1 "^ncclCommWindowRegister returned ncclSuccess, the communicator in progress$" 4 \
    "a window registration left its communicator in progress"
echo "ok: NCCL_COMM_BLOCKING=0, every collective, splits, -m 2, -R 2"

# Captured in CUDA graphs (-G), non-blocking: each launch polled before the
# capture ends.
fresh_trace
NCCL_COMM_BLOCKING=0 run 2 --backend nccl -o allreduce,alltoall,sendrecv -b 48 -e 192 -f 4 \
    -n 2 -c 1 -w 1 -G 2
expect_rc 0 "-G 2, NCCL_COMM_BLOCKING=0"
has 1 "^# Out of bounds values : 0 OK"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
grep -q "capturing=1" "$CB_TMP/trace.0" || show_and_fail "nothing was captured"
echo "ok: -G 2, NCCL_COMM_BLOCKING=0"

# -o comm_init times a split and a shrink of the non-blocking communicator:
# each polled on its parent until NCCL has written the new one.
fresh_trace
NCCL_COMM_BLOCKING=0 run 4 --backend nccl -o comm_init -n 2 -w 0 --csv "$CB_TMP/c.csv"
expect_rc 0 "-o comm_init, NCCL_COMM_BLOCKING=0"
standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
on_every 2 "^ncclCommSplit returned ncclSuccess, the communicator in progress$" 4 \
    "comm_init's split left its parent in progress"
on_every 2 "^ncclCommShrink returned ncclSuccess, the communicator in progress$" 3 \
    "comm_init's shrink left its parent in progress"
echo "ok: -o comm_init, NCCL_COMM_BLOCKING=0"

# Before 2.17 NCCL_COMM_BLOCKING=0 overrides nothing (2.14 to 2.16 honour
# only 1): the communicator stays blocking and the preamble says nothing.
fresh_trace
NCCL_COMM_BLOCKING=0 CB_STANDIN_NCCL_VERSION=21605 run 2 --backend nccl -o allreduce -b 48 \
    -e 192 -f 4 -n 2 -c 1
expect_rc 0 "NCCL 2.16.5, NCCL_COMM_BLOCKING=0"
on_none "^ncclInProgress from" 2 "a call returned ncclInProgress"
grep -q "NCCL_COMM_BLOCKING" "$CB_TMP/out" &&
    show_and_fail "the preamble speaks of NCCL_COMM_BLOCKING, which 2.16 ignores"
echo "ok: NCCL 2.16.5 ignores NCCL_COMM_BLOCKING=0"
echo "ok"
