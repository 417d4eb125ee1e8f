# Teardown agreed (src/engine/lifecycle.c): whether a rank aborts or
# destroys its communicators is decided after the final agreement, so every
# rank ends them the same way. A failure rank 0 first sees while flushing
# its outputs (its JSON document cannot be put in place: the folder it was
# to go in was removed during the run) must make every rank abort; deciding
# before that agreement left the others destroying (in NCCL a collective
# step, which waits for the rank that aborted).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2 trace
CB_RUN_TIMEOUT=60

# Remove the JSON document's folder once the sweep has begun (at most 50 s).
mkdir "$CB_TMP/sub"
(
    i=0
    while [ "$i" -lt 500 ]; do
        if grep -q "^ncclAllReduce count=" "$CB_TMP/trace.0" 2>/dev/null; then
            # (a named temporary file where O_TMPFILE is missing goes too)
            rm -f "$CB_TMP"/sub/out.json.tmp.*
            rmdir "$CB_TMP/sub"
            exit $?
        fi
        sleep 0.1
        i=$((i + 1))
    done
    exit 1
) &
remover=$!
trap 'kill "$remover" 2>/dev/null' EXIT
CB_STANDIN_OP_US=10000   # the sweep lasts some 6 s: time for the remover
export CB_STANDIN_OP_US
fresh_trace
run 2 --backend nccl -o allreduce -b 8 -e 64K -f 2 -n 20 -w 2 -c 1 --json "$CB_TMP/sub/out.json"
unset CB_STANDIN_OP_US
wait "$remover" || fail "the JSON document's folder was not removed during the run"
[ "$rc" != 0 ] || show_and_fail "a JSON document that cannot be put in place: exit status 0"
[ "$rc" = 124 ] || [ "$rc" = 137 ] && show_and_fail "did not finish within ${CB_RUN_TIMEOUT}s"
grep -q "^nccl-collbench: .*out.json" "$CB_TMP/err" ||
    show_and_fail "the message does not name the JSON file"
for r in 0 1; do
    grep -q "^ncclCommAbort" "$CB_TMP/trace.$r" ||
        show_and_fail "rank $r did not abort after the agreed failure"
    ! grep -q "^ncclCommDestroy" "$CB_TMP/trace.$r" ||
        show_and_fail "rank $r destroyed its communicator after the agreed failure"
done
echo "ok"
