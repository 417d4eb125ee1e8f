# Launches on a non-blocking communicator (NCCL_COMM_BLOCKING=0), by the
# NCCL version the stand-in reports (docs/design/nccl-contract.md, G1):
# before 2.23 NCCL runs a launch on the calling thread and returns
# ncclSuccess, except a group that first connects a send or receive, which
# returns ncclInProgress (group.cc, ncclGroupEndInternal, v2.22.3-1); from
# 2.23 every launch returns ncclInProgress (v2.23.4-1). The backend must
# poll whatever the version: a backend that took ncclInProgress for an
# error before 2.23, or polled only from 2.23, fails here at 2.22. The
# preamble says which kind of launch pays NCCL's thread. Each launch that
# returns ncclInProgress starts exactly one real thread in the stand-in
# (its trace's "launch-thread start" lines), every one joined by exit, and
# a blocking communicator starts none (tests/nccl/standin/threads.c).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2 python trace

# count PATTERN RANK: the lines of RANK's trace that match PATTERN.
count() {
    grep -c -- "$1" "$CB_TMP/trace.$2" || true
}

for version in 22203 22304; do
    fresh_trace
    NCCL_COMM_BLOCKING=0 CB_STANDIN_NCCL_VERSION=$version run 2 --backend nccl \
        -o allreduce,sendrecv,alltoall -b 48 -e 192 -f 4 -n 2 -c 1 -m 2
    expect_rc 0 "NCCL_COMM_BLOCKING=0 at $version"
    has 1 "^# Out of bounds values : 0 OK"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
    for r in 0 1; do
        inline=$(count "launched on the calling thread (NCCL before 2.23)$" "$r")
        outside=$(count "^ncclInProgress from a call outside a group$" "$r")
        ended=$(count "^ncclInProgress from ncclGroupEnd$" "$r")
        started=$(count "^launch-thread start " "$r")
        joined=$(count "^launch-thread join " "$r")
        [ "$started" = $((outside + ended)) ] && [ "$started" -ge 1 ] &&
            [ "$joined" = "$started" ] ||
            show_and_fail "$version, rank $r: $started launch threads started, $joined joined, for $outside + $ended launches in progress"
        if [ "$version" = 22203 ]; then
            [ "$inline" -gt 0 ] && [ "$outside" = 0 ] ||
                show_and_fail "2.22, rank $r: $inline launches on the calling thread, $outside outside a group in progress"
            # The first group of sends and receives connects its peer.
            [ "$ended" -ge 1 ] ||
                show_and_fail "2.22, rank $r: no group that connects a send returned ncclInProgress"
        else
            [ "$inline" = 0 ] && [ "$outside" -gt 0 ] && [ "$ended" -gt 1 ] ||
                show_and_fail "2.23, rank $r: $inline launches on the calling thread, $outside outside a group and $ended group ends in progress"
        fi
    done
    if [ "$version" = 22203 ]; then
        has 1 "before 2.23 its launches run on the calling thread"
    else
        has 1 "every launch outside a group also pays NCCL's group thread"
    fi
    echo "ok: NCCL_COMM_BLOCKING=0 at $version"
done

# A blocking communicator: every launch on the calling thread, at 2.23 too.
fresh_trace
NCCL_COMM_BLOCKING=1 CB_STANDIN_NCCL_VERSION=22304 run 2 --backend nccl \
    -o allreduce,sendrecv -b 48 -e 96 -f 2 -n 2 -c 1 -m 2
expect_rc 0 "NCCL_COMM_BLOCKING=1 at 22304"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
for r in 0 1; do
    started=$(count "^launch-thread start " "$r")
    [ "$started" = 0 ] || show_and_fail "blocking, rank $r: $started launch threads started"
done
echo "ok: NCCL_COMM_BLOCKING=1 starts no launch thread"
echo "ok"
