# torchrun as its users know it (issue 44, item 4), on the NCCL stand-in,
# torchrun emulated by its variables on two processes this shell starts
# (nccl_standin_torchrun_real.sh runs the real one where PyTorch is):
# 1. No GPU and no MPI: --backend auto says what is missing, status 2, in
#    -g 2 and under torchrun (not an abort inside Open MPI), and each rank
#    writes its TORCHELASTIC_ERROR_FILE in the JSON torch's elastic error
#    handler writes: message.message (ours, with the status),
#    message.extraInfo.timestamp (a whole number as text), errorCode.
# 2. A restarted attempt (TORCHELASTIC_RESTART_COUNT=1) that passes keeps
#    the earlier attempt's CSV and JSON as FILE.before-attempt1, records the
#    count in the CSV column, the JSON and the preamble, writes no error file.
# 3. -g 2's ranks carry the program's name in ps and top (/proc/PID/comm),
#    not "exe".
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
need_python
SWEEP="-b 1K -e 4K -f 4 -n 2 -w 1"
# An empty sysfs: no NVIDIA GPU on the bus, whatever this machine has.
mkdir -p "$CB_TMP/nosys"
NCCL_COLLBENCH_SYSFS=$CB_TMP/nosys
export NCCL_COLLBENCH_SYSFS

# torchrun_pair RESTART ARGS...: two ranks with torchrun's variables, each
# with its own error file ($CB_TMP/error.RANK.json); rc, rc1 their statuses.
torchrun_pair() {
    restart=$1
    shift
    port=$(free_port)
    pids=""
    for r in 0 1; do
        rm -f "$CB_TMP/error.$r.json"
        env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
            MASTER_PORT=$port NCCL_COLLBENCH_KEY=test-key TORCHELASTIC_RUN_ID=t44 \
            TORCHELASTIC_RESTART_COUNT=$restart TORCHELASTIC_ERROR_FILE="$CB_TMP/error.$r.json" \
            timeout -k 5 120 "$CB_STANDIN_BIN" "$@" </dev/null >"$CB_TMP/out$r" 2>"$CB_TMP/err$r" &
        pids="$pids $!"
    done
    set -- $pids
    rc=0
    wait "$1" || rc=$?
    rc1=0
    wait "$2" || rc1=$?
    cp "$CB_TMP/out0" "$CB_TMP/out"
    cat "$CB_TMP/err0" "$CB_TMP/err1" >"$CB_TMP/err"
}

# 1. No GPU, no MPI.
CB_STANDIN_GPUS=0
export CB_STANDIN_GPUS
rc=0
timeout -k 5 60 "$CB_STANDIN_BIN" -g 2 $SWEEP </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
expect_rc 2 "-g 2, no GPU, no MPI"
grep -q 'no backend can run in this launch, which has no MPI: the nccl backend cannot (.*); the mpi backend needs MPI' "$CB_TMP/err" ||
    show_and_fail "-g 2 without a GPU does not say what is missing"
grep -q 'MPI_Comm_dup\|MPI_INIT' "$CB_TMP/err" && show_and_fail "-g 2 without a GPU reached MPI"
torchrun_pair 0 $SWEEP
[ "$rc" = 2 ] && [ "$rc1" = 2 ] || show_and_fail "torchrun, no GPU: statuses $rc and $rc1, expected 2"
grep -q 'MPI_Comm_dup\|MPI_INIT' "$CB_TMP/err" && show_and_fail "torchrun without a GPU reached MPI"
for r in 0 1; do
    "$CB_PYTHON" - "$CB_TMP/error.$r.json" "$r" <<'PY' || show_and_fail "rank $1's TORCHELASTIC_ERROR_FILE"
import json, sys
doc = json.load(open(sys.argv[1]))
m = doc["message"]
assert isinstance(m, dict), doc
assert m["message"].startswith("nccl-collbench rank %s on " % sys.argv[2]), m
assert "exit status 2 (usage error)" in m["message"], m
assert "the mpi backend needs MPI" in m["message"], m
assert m["errorCode"] == 2, m
int(m["extraInfo"]["timestamp"])          # as torch's ProcessFailure reads it
# torchrun's report prints py_callstack, not message.message, where it is
# there (ChildFailedError._format_failure): it must be our message too.
assert m["extraInfo"]["py_callstack"] == m["message"], m
PY
done

# 2. A restarted attempt that passes.
CB_STANDIN_GPUS=2
for f in r.csv r.json; do echo "EARLIER ATTEMPT" >"$CB_TMP/$f"; done
torchrun_pair 1 --backend nccl $SWEEP --csv "$CB_TMP/r.csv" --json "$CB_TMP/r.json"
[ "$rc" = 0 ] && [ "$rc1" = 0 ] || show_and_fail "torchrun attempt 2: statuses $rc and $rc1, expected 0"
for f in r.csv r.json; do
    [ "$(cat "$CB_TMP/$f.before-attempt1" 2>/dev/null)" = "EARLIER ATTEMPT" ] ||
        show_and_fail "the earlier attempt's $f was not kept as $f.before-attempt1"
done
[ ! -e "$CB_TMP/error.0.json" ] && [ ! -e "$CB_TMP/error.1.json" ] ||
    show_and_fail "a passing attempt wrote an error file"
grep -q "^# torchrun attempt 2 (TORCHELASTIC_RESTART_COUNT=1); the earlier attempt's files kept as $CB_TMP/r.csv.before-attempt1, $CB_TMP/r.json.before-attempt1\$" "$CB_TMP/out" ||
    grep -q "^# torchrun attempt 2 (TORCHELASTIC_RESTART_COUNT=1); the earlier attempt's files kept as $CB_TMP/r.json.before-attempt1, $CB_TMP/r.csv.before-attempt1\$" "$CB_TMP/out" ||
    show_and_fail "the preamble does not give the attempt and the kept files"
"$CB_PYTHON" - "$CB_TMP/r.csv" "$CB_TMP/r.json" <<'PY' || show_and_fail "the restart count in the CSV and JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows and all(r["restart_count"] == "1" for r in rows), rows[:1]
doc = json.load(open(sys.argv[2]))
assert doc["restart_count"] == 1, doc.get("restart_count")
PY
# The first attempt keeps nothing: its files are the run's own.
torchrun_pair 0 --backend nccl $SWEEP --csv "$CB_TMP/f.csv"
[ "$rc" = 0 ] || show_and_fail "torchrun attempt 1: status $rc"
[ ! -e "$CB_TMP/f.csv.before-attempt0" ] || show_and_fail "attempt 1 renamed a file"

# 3. -g's ranks by name: node 0 of two waits for node 1, which never
# comes, long enough to read its ranks' names.
port=$(free_port)
NNODES=2 NODE_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port NCCL_COLLBENCH_KEY=k \
    timeout -k 5 60 "$CB_STANDIN_BIN" -g 2 -T 20 $SWEEP </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
parent=$!
kids=""
for _ in $(seq 50); do
    kids=$(cat /proc/$parent/task/*/children 2>/dev/null || true)
    # timeout's child is the -g parent, whose children are the ranks.
    ranks=""
    for k in $kids; do ranks="$ranks $(cat /proc/$k/task/*/children 2>/dev/null || true)"; done
    set -- $ranks
    [ $# -ge 2 ] && break
    sleep 0.1
done
set -- $ranks
[ $# -ge 2 ] || { kill $parent 2>/dev/null; show_and_fail "-g 2's ranks did not start"; }
want=$(basename "$CB_STANDIN_BIN" | cut -c1-15)
names=""
for p in "$@"; do names="$names $(cat /proc/$p/comm 2>/dev/null)"; done
for p in "$@"; do kill -KILL "$p" 2>/dev/null || true; done
wait $parent 2>/dev/null || true
for n in $names; do
    [ "$n" = "$want" ] || show_and_fail "-g 2's ranks are named '$names', not '$want'"
done
echo "ok"
