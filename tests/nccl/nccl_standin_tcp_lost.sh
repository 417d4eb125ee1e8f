# A rank killed mid-run in a launch without MPI and without the side
# channel (-T 0: torchrun's variables, three ranks this shell starts):
# the TCP plane names the rank lost and its host on every survivor
# (issue 44, item 3). Rank 0 sees rank 1 go and tells rank 2, which sees
# only rank 0 end: both must say "rank 1 (127.0.0.1) ended", end with
# status 1, and rank 0 finishes its JSON (complete false, status 1).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
need_python
CB_STANDIN_GPUS=3
export CB_STANDIN_GPUS
unset CB_STANDIN_TRACE

port=$(free_port)
pids=""
for r in 0 1 2; do
    # env execs the program: $! is the rank's own pid.
    env RANK=$r WORLD_SIZE=3 LOCAL_RANK=$r LOCAL_WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 \
        MASTER_PORT=$port NCCL_COLLBENCH_KEY=lost-key TORCHELASTIC_RUN_ID=lost44 \
        CB_STANDIN_OP_US=20000 "$CB_STANDIN_BIN" --backend nccl -b 8 -e 1M -f 2 -n 10 -w 1 \
        -T 0 --csv "$CB_TMP/r.csv" --json "$CB_TMP/r.json" \
        </dev/null >"$CB_TMP/out$r" 2>"$CB_TMP/err$r" &
    pids="$pids $!"
done
set -- $pids
p0=$1 p1=$2 p2=$3
cleanup() {
    for p in $p0 $p1 $p2; do kill -KILL "$p" 2>/dev/null || true; done
}
gather() {
    cat "$CB_TMP/out0" >"$CB_TMP/out"
    cat "$CB_TMP/err0" "$CB_TMP/err1" "$CB_TMP/err2" >"$CB_TMP/err"
}
wait_rows "$CB_TMP/r.csv" 3 30 $p0 $p1 $p2 || case $? in
    1) cleanup; gather; show_and_fail "a rank ended before rank 1 was killed" ;;
    *) cleanup; gather; show_and_fail "no CSV rows within 30 s" ;;
esac
kill -KILL "$p1"
# Bounded: -T 0 has no watchdog, so a survivor that hung would wait forever.
i=0
while kill -0 "$p0" 2>/dev/null || kill -0 "$p2" 2>/dev/null; do
    i=$((i + 1))
    [ $i -le 150 ] || { cleanup; gather; show_and_fail "the survivors still run 15 s after rank 1 was killed"; }
    sleep 0.1
done
rc0=0
wait "$p0" || rc0=$?
wait "$p1" 2>/dev/null || true
rc2=0
wait "$p2" || rc2=$?
gather
[ "$rc0" = 1 ] && [ "$rc2" = 1 ] || show_and_fail "rank 1 killed: ranks 0 and 2 ended with $rc0 and $rc2, not 1 and 1"
for r in 0 2; do
    grep -q "^nccl-collbench: rank $r (.*): the tcp control plane failed in .*: rank 1 (127\.0\.0\.1) ended" \
        "$CB_TMP/err$r" || show_and_fail "rank 1 killed: rank $r does not name rank 1 and its host"
done
[ -f "$CB_TMP/r.json" ] || show_and_fail "rank 1 killed: rank 0 wrote no JSON"
"$CB_PYTHON" - "$CB_TMP/r.json" <<'PY' || show_and_fail "rank 1 killed: rank 0's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"] if "summary" in d else d
assert str(d.get("complete", s.get("complete"))).lower() == "false", "complete is not false"
assert s.get("exit_status", d.get("exit_status")) == 1, "exit status is not 1"
assert "rank 1 (127.0.0.1) ended" in open(sys.argv[1]).read(), "the JSON does not name rank 1"
PY
echo "ok"
