# Measured launches on a blocking communicator (docs/design/communicators.md):
# NCCL 2.23 and later launch every call on a non-blocking communicator
# through a thread of their own and return ncclInProgress, a cost
# nccl-tests' blocking communicators never pay. The stand-in traces
# "ncclInProgress from ..." for each such launch; a sweep of every
# collective (the engine's groups with -m 4, sends and receives, alltoallv,
# NCCL's own alltoall, gather and scatter and their p2p forms,
# hier_allreduce's split communicators) must trace none, and the run holds
# exactly one communicator of all ranks, created blocking, as nccl-tests'.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

# launches_blocking NP: on every rank, collectives and sends were launched,
# no call returned ncclInProgress, and one blocking communicator of all
# ranks was created, from which hier_allreduce splits its two, blocking.
launches_blocking() {
    r=0
    while [ "$r" -lt "$1" ]; do
        t="$CB_TMP/trace.$r"
        for call in ncclAllReduce ncclAllGather ncclReduceScatter ncclBroadcast ncclReduce \
            ncclSend ncclRecv ncclAlltoAll ncclGather ncclScatter; do
            grep -q "^$call count=" "$t" || show_and_fail "rank $r: no $call was launched"
        done
        launched=$(grep -c "^ncclInProgress from a call outside a group\$\|^ncclInProgress from ncclGroupEnd\$" "$t" || true)
        [ "$launched" = 0 ] ||
            show_and_fail "rank $r: $launched launches returned ncclInProgress (a non-blocking communicator)"
        n=$(grep -c "^ncclCommInitRank nranks=$1 rank=$r blocking=1 " "$t" || true)
        [ "$n" = 1 ] || show_and_fail "rank $r: $n blocking creations of all ranks, expected 1"
        n=$(grep -c "^ncclCommInitRank " "$t" || true)
        [ "$n" = 1 ] || show_and_fail "rank $r: $n communicators created, expected 1"
        n=$(grep -c "^ncclInProgress from" "$t" || true)
        [ "$n" = 0 ] || show_and_fail "rank $r: $n calls returned ncclInProgress"
        n=$(grep -c "^ncclCommSplit " "$t" || true)
        [ "$n" = 2 ] || show_and_fail "rank $r: $n splits, expected hier_allreduce's 2"
        r=$((r + 1))
    done
}

for m in 4 1; do
    for impl in native p2p; do
        fresh_trace
        run 4 --backend nccl -o all -d float -b 48 -e 192 -f 4 -n 2 -c 1 -m "$m" \
            --nccl-impl "$impl" --hier-split size:2
        expect_rc 0 "every collective, -m $m, --nccl-impl $impl"
        has 1 "^# Out of bounds values : 0 OK"
        standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
        launches_blocking 4
        echo "ok: -m $m --nccl-impl $impl"
    done
done

# Captured in CUDA graphs (-G 2): no launch returns ncclInProgress either.
fresh_trace
run 2 --backend nccl -o allreduce,alltoall,sendrecv,alltoallv -b 48 -e 192 -f 4 -n 2 -c 1 -w 1 -G 2
expect_rc 0 "-G 2"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
n=$(grep -c "^ncclInProgress from a call outside a group\$\|^ncclInProgress from ncclGroupEnd\$" \
    "$CB_TMP/trace.0" || true)
[ "$n" = 0 ] || show_and_fail "-G 2: $n launches returned ncclInProgress"
grep -q "capturing=1" "$CB_TMP/trace.0" || show_and_fail "nothing was captured"
echo "ok: -G 2"
echo "ok"
