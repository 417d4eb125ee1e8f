# Measured launches on a blocking communicator (HACKING.md, "Blocking and
# non-blocking communicators"): NCCL 2.28 launches every call on a
# non-blocking communicator through a thread of its own and returns
# ncclInProgress, a cost nccl-tests' blocking communicators never pay. The
# stand-in traces "ncclInProgress from ..." for each such launch; a sweep of
# every collective (the engine's groups with -m 4, sends and receives,
# alltoallv, NCCL's own alltoall, gather and scatter and their p2p forms,
# hier_allreduce's split communicators) must trace none, while creation
# and every split still return it (polled: the non-blocking set-up kept).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

# launches_blocking NP: on every rank, collectives and sends were launched
# and no launch returned ncclInProgress; creation and splits did.
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
        grep -q "^ncclInProgress from ncclCommInitRank\$" "$t" ||
            show_and_fail "rank $r: the communicator was not created non-blocking"
        grep -q "^ncclInProgress from ncclCommSplit\$" "$t" ||
            show_and_fail "rank $r: no split was polled on the non-blocking communicator"
        grep -q "^ncclCommSplit color=0 key=$r blocking=1\$" "$t" ||
            show_and_fail "rank $r: the measured communicator was not split blocking"
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
