# Entries of docs/design/nccl-contract.md that no other test proves, each
# through the CPU stand-in, each failing if the backend broke its entry:
# 1. ncclGetUniqueId: one call, on rank 0 only, per communicator made from
#    an id (the stand-in traces the id's root with the call and with each
#    rank's bootstrap), and no split child shares its parent's resources
#    (splitShare, G9);
# 2. ncclGetLastError: the backend's one-line message carries the text the
#    stand-in set for an injected failure (debug.cc's ncclLastError);
# 3. cudaRuntimeGetVersion and cudaDriverGetVersion: the preamble shows the
#    versions the stand-in reported, each in its place (the stand-in's
#    driver is newer than its runtime, so a mix-up shows);
# 4. config.blocking and the modes of a group: with NCCL_COMM_BLOCKING
#    unset, 0 and 1 and every -z mode, -G and the splits, the stand-in never
#    refuses a config's blocking value or a group mixing blocking and
#    non-blocking communicators (group.cc ncclAsyncLaunch);
# 5. cudaGetLastError after a failed kernel load or launch (-B's compare
#    kernel): the backend says why it compares on the host, and reads the
#    error back, so that nothing is left for the next cudaGetLastError (the
#    stand-in's exit line counts an unread error, which standin_check
#    rejects);
# 6. ncclCommAbort from another thread: while the main thread hangs inside
#    a blocking ncclCommSplit, -T ends the run without the watchdog's thread
#    calling NCCL (the stand-in flags an abort while any thread is inside
#    NCCL: communicators.rst, Fault Tolerance).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

# 1. Communicators from ids: the run's own, and -o comm_init's per
# iteration; splits and shrinks need none (hier_allreduce's splits, after
# comm_init's shrink, which only some ranks call: they must still form).
fresh_trace
run 3 --backend nccl -o allreduce,comm_init,hier_allreduce --hier-split size:1 -b 64 -e 64 -n 2 -w 1
expect_rc 0 "communicators from ids"
standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy
"$CB_PYTHON" - "$CB_TMP/trace" 3 <<'PY' || show_and_fail "ncclGetUniqueId is not one call on rank 0 per communicator"
import re, sys
prefix, nranks = sys.argv[1], int(sys.argv[2])
ids, joined = {}, []
for rank in range(nranks):
    roots = []
    for line in open("%s.%d" % (prefix, rank)):
        m = re.match(r"^ncclGetUniqueId root=(\S+)", line)
        if m:
            if rank != 0:
                sys.exit("rank %d called ncclGetUniqueId" % rank)
            ids[m.group(1)] = ids.get(m.group(1), 0) + 1
        m = re.match(r"^bootstrap root=(\S+) rank=(\d+)$", line)
        if m:
            if int(m.group(2)) != rank:
                sys.exit("rank %d joined as rank %s" % (rank, m.group(2)))
            roots.append(m.group(1))
    joined.append(roots)
if len(joined[0]) < 3:
    sys.exit("rank 0 made %d communicators from ids, expected the run's and comm_init's"
             % len(joined[0]))
for rank, roots in enumerate(joined):
    if roots != joined[0]:
        sys.exit("rank %d joined %r, rank 0 %r" % (rank, roots, joined[0]))
for root in joined[0]:
    if ids.get(root) != 1:
        sys.exit("id %s: %s ncclGetUniqueId calls on rank 0" % (root, ids.get(root, 0)))
if len(ids) != len(set(joined[0])):
    sys.exit("rank 0 made %d ids for %d communicators" % (len(ids), len(set(joined[0]))))
print("ok: %d communicators, one id each, made on rank 0" % len(joined[0]))
PY

# 1b. splitShare (G9): the children measured (hier_allreduce's splits here)
# are communicators of their own, never on their parent's resources, which
# NCCL decides from the PARENT's config (init.cc ncclCommInitChildComm).
grep -q "^ncclCommSplit " "$CB_TMP"/trace.* || show_and_fail "the run made no split to check"
if grep -n "^resources shared with the parent" "$CB_TMP"/trace.*; then
    show_and_fail "a measured child shares its parent's resources (splitShare set)"
fi
echo "ok: the split children share nothing with their parent"

# 2. NCCL's last error in the message: a creation that fails on its own
# (one rank: nobody waits) and an asynchronous error.
fresh_trace
CB_STANDIN_FAIL_COMMINIT=0 run 1 --backend nccl -b 64 -e 64 -n 1
expect_rc 1 "a failed ncclCommInitRankConfig"
one_message "ncclCommInitRankConfig failed"
one_message ": NCCL stand-in: injected ncclCommInitRank failure before the bootstrap (CB_STANDIN_FAIL_COMMINIT)"
fresh_trace
CB_STANDIN_FAIL_ASYNC=1 run 2 --backend nccl -b 64 -e 64 -n 1 -w 1
expect_rc 1 "an asynchronous error"
one_message "NCCL reported an asynchronous error: remote process exited or there was a network error: NCCL stand-in: injected asynchronous error (CB_STANDIN_FAIL_ASYNC)"
echo "ok: ncclGetLastError's text in the message"

# 3. The versions line against what the stand-in reported.
fresh_trace
CB_STANDIN_CUDA_DRIVER=99070 run 2 --backend nccl -b 64 -e 64 -n 1
expect_rc 0 "the versions line"
runtime=$(sed -n 's/^cudaRuntimeGetVersion \([0-9]*\)$/\1/p' "$CB_TMP/trace.0" | head -1)
driver=$(sed -n 's/^cudaDriverGetVersion \([0-9]*\)$/\1/p' "$CB_TMP/trace.0" | head -1)
[ -n "$runtime" ] && [ "$driver" = 99070 ] ||
    show_and_fail "the stand-in's runtime ($runtime) or driver ($driver) version was not asked"
want="CUDA runtime $((runtime / 1000)).$((runtime % 1000 / 10)), driver 99.7"
has 1 "^# versions: NCCL library [0-9.]*, header [0-9.]*; $want\$"
fresh_trace
run 1 --backend nccl -b 64 -e 64 -n 1
expect_rc 0 "the stand-in's own driver version"
driver=$(sed -n 's/^cudaDriverGetVersion \([0-9]*\)$/\1/p' "$CB_TMP/trace.0" | head -1)
[ -n "$driver" ] && [ "$driver" != "$runtime" ] ||
    show_and_fail "the stand-in's driver ($driver) does not differ from its runtime ($runtime)"
has 1 "; CUDA runtime $((runtime / 1000)).$((runtime % 1000 / 10)), driver $((driver / 1000)).$((driver % 1000 / 10))\$"
echo "ok: the runtime's and the driver's versions, each in its place"

# 4. config.blocking and group modes, for every blocking mode and -z mode.
for env in unset 0 1; do
    for z in 0 1 2 3; do
        what="NCCL_COMM_BLOCKING=$env -z $z"
        fresh_trace
        if [ "$env" = unset ]; then
            run 2 --backend nccl -o allreduce,alltoall,hier_allreduce --hier-split size:1 \
                -b 64 -e 256 -n 2 -m 2 -z "$z"
        else
            NCCL_COMM_BLOCKING=$env run 2 --backend nccl -o allreduce,alltoall,hier_allreduce \
                --hier-split size:1 -b 64 -e 256 -n 2 -m 2 -z "$z"
        fi
        expect_rc 0 "$what"
        standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
        ! grep -h 'refused: blocking and non-blocking\|refused: config blocking' "$CB_TMP"/trace.* ||
            show_and_fail "$what: the stand-in refused the mode of a group or a config"
    done
done
fresh_trace
NCCL_COMM_BLOCKING=0 run 2 --backend nccl -o allreduce,comm_init -b 64 -e 64 -n 2 -G 2
expect_rc 0 "NCCL_COMM_BLOCKING=0 -G 2 comm_init"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
! grep -h 'refused: blocking and non-blocking\|refused: config blocking' "$CB_TMP"/trace.* ||
    show_and_fail "-G 2 comm_init: the stand-in refused the mode of a group or a config"
echo "ok: no config.blocking or group mode refused"

# 5. A failed load and a failed launch of -B's kernel: reported, then read.
for fault in LIBRARY:'a PTX JIT compilation failed' \
    LAUNCH:'cudaLaunchKernel failed (compare.c:[0-9]*): too many resources requested for launch'; do
    what=${fault%%:*}
    fresh_trace
    eval "CB_STANDIN_FAIL_$what=0 run 2 --backend nccl -B -b 64 -e 256 -n 2"
    expect_rc 0 "-B with CB_STANDIN_FAIL_$what"
    if grep -q 'has no cudaLibraryLoadData' "$CB_TMP/out"; then
        echo "note: the CUDA runtime built against has no cudaLibraryLoadData: -B loads no kernel"
        break
    fi
    has 1 "^# -B compares on the host (outputs copied from the GPU): the GPU compare kernel failed on rank 0: .*${fault#*:}"
    grep -q '^cudaGetLastError [1-9]' "$CB_TMP/trace.0" ||
        show_and_fail "$what: the backend never read the failure back with cudaGetLastError"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
done
echo "ok: a failed kernel load or launch reported and read back"

# 6. A hang inside a blocking NCCL call: rank 0 never joins the split, the
# others wait inside ncclCommSplit until -T ends them. Their watchdog's
# thread must not abort (NCCL forbids it while a thread is inside NCCL).
CB_RUN_TIMEOUT=40
fresh_trace
CB_STANDIN_FAIL_SPLIT=0 run 3 --backend nccl -o hier_allreduce --hier-split size:2 \
    -b 8 -e 64 -n 2 -T 3
[ "$rc" = 124 ] || [ "$rc" = 137 ] && show_and_fail "a hung split: did not finish within ${CB_RUN_TIMEOUT}s"
[ "$rc" != 0 ] || show_and_fail "a hung split: exit status 0"
for r in 1 2; do
    grep -q '^ncclCommSplit ' "$CB_TMP/trace.$r" ||
        show_and_fail "a hung split: rank $r never called ncclCommSplit"
done
! grep -H VIOLATION "$CB_TMP"/trace.* ||
    show_and_fail "a hung split ended by -T: a VIOLATION (above)"
echo "ok: -T ends a hang inside NCCL without an abort from another thread"
echo "ok"
