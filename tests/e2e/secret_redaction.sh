# Issue 44, item 1: no secret is ever written. Two ranks meet over the TCP
# plane (torchrun's variables, set by this shell; the NCCL stand-in, no
# mpirun) with NCCL_COLLBENCH_KEY and an NCCL_ variable whose name says
# TOKEN: neither value is in stdout, stderr, --json, -J, the CSV or the
# Prometheus file, and both are recorded as "set, not shown". -g 2's own
# fresh key stays out of its JSON too.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
need_python
CB_STANDIN_GPUS=2
export CB_STANDIN_GPUS
SWEEP="-o allreduce -b 8 -e 1K -f 32 -n 2 -w 1"
KEY=k3y-XYZZY-secret
TOKEN=tok-PLUGH-secret

port=$(free_port)
pids=""
for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
        MASTER_PORT=$port NCCL_COLLBENCH_KEY=$KEY NCCL_PLUGIN_TOKEN=$TOKEN NCCL_db_Password=$TOKEN NCCL_DEBUG=WARN \
        timeout -k 5 120 "$CB_STANDIN_BIN" --backend nccl $SWEEP --json "$CB_TMP/r0.json" \
        -J "$CB_TMP/t0.json" --csv "$CB_TMP/r0.csv" --prom "$CB_TMP/r0.prom" \
        </dev/null >"$CB_TMP/out$r" 2>"$CB_TMP/err$r" &
    pids="$pids $!"
done
set -- $pids
rc=0; wait "$1" || rc=$?
rc1=0; wait "$2" || rc1=$?
cat "$CB_TMP/out0" >"$CB_TMP/out"
cat "$CB_TMP/err0" "$CB_TMP/err1" >"$CB_TMP/err"
[ "$rc" = 0 ] && [ "$rc1" = 0 ] || show_and_fail "keyed pair: statuses $rc and $rc1, expected 0"
for f in "$CB_TMP"/out? "$CB_TMP"/err? "$CB_TMP"/r0.* "$CB_TMP"/t0.json; do
    [ -e "$f" ] || show_and_fail "no $f"
    if grep -l -e XYZZY -e PLUGH "$f" >/dev/null; then
        show_and_fail "a secret's value is written in $(basename "$f"): $(grep -e XYZZY -e PLUGH "$f" | head -2)"
    fi
done
"$CB_PYTHON" - "$CB_TMP/r0.json" "$CB_TMP/t0.json" <<'PY' || show_and_fail "the secrets are not recorded as set"
import json, sys
ours, theirs = (json.load(open(p)) for p in sys.argv[1:])
env = ours["environment"]
assert env.get("NCCL_COLLBENCH_KEY") == "set, not shown", env
assert env.get("NCCL_PLUGIN_TOKEN") == "set, not shown", env
assert env.get("NCCL_db_Password") == "set, not shown", env   # in any case
assert env.get("NCCL_DEBUG") == "WARN", env      # the rest as before
assert "NCCL_COLLBENCH_KEY=set, not shown" in theirs["env"], theirs["env"]
assert "NCCL_DEBUG=WARN" in theirs["env"], theirs["env"]
assert ours["backend"]["rendezvous_authenticated"] is True, ours["backend"]
PY

# -g 2: the parent's fresh key is in its ranks' environment, never in the
# JSON; nor is it on a rank's command line.
rc=0
timeout -k 5 120 "$CB_STANDIN_BIN" -g 2 --backend nccl $SWEEP --json "$CB_TMP/g.json" \
    </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
expect_rc 0 "-g 2 --json"
"$CB_PYTHON" - "$CB_TMP/g.json" <<'PY' || show_and_fail "-g 2: the key is written"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["environment"].get("NCCL_COLLBENCH_KEY") == "set, not shown", doc["environment"]
assert all("KEY" not in a for a in doc["command_line"]), doc["command_line"]
PY
exit 0
