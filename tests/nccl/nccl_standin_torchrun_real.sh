# Under the real torchrun (PyTorch's elastic agent), where this machine has
# it (on PATH, else $CB_TORCHRUN, else /opt/torch-venv/bin/torchrun), on the
# NCCL stand-in (nccl_standin_torchrun.sh emulates torchrun by its
# variables, everywhere):
# a. the exact command the README and nccl-collbench(1) give (--standalone,
#    --no-python) passes and verifies;
# b. a failing run (no GPU, no MPI: status 2) reaches torchrun's failure
#    report ("traceback :") with our message and status, through the error
#    file each worker writes (src/control/elastic.c);
# c. --max-restarts 1: an attempt that fails verification (7), then one that
#    passes: the outputs record restart_count 1 and the failed attempt's
#    files stay as FILE.before-attempt1, showing the failure;
# d. SIGTERM to torchrun mid-run (it forwards it to the workers, at times
#    twice): each rank ends with 143, and rank 0's JSON is there, says 143
#    and complete=false;
# e. two agents as two nodes, the README's multi-node form (c10d): passes;
# f. MASTER_PORT + 1 held by a stranger that never answers (as an outgoing
#    connection or another service may hold it): rank 0 listens on the
#    next free port and the other rank finds it there.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
need_python
TORCHRUN=$(command -v torchrun 2>/dev/null || true)
[ -n "$TORCHRUN" ] || TORCHRUN=${CB_TORCHRUN:-}
[ -n "$TORCHRUN" ] || TORCHRUN=/opt/torch-venv/bin/torchrun
[ -x "$TORCHRUN" ] ||
    skip "no torchrun here (PyTorch is not installed): none on PATH, and $TORCHRUN (\$CB_TORCHRUN, else the default) is no program"
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"
[ -x "$FAULTY" ] || fail "$FAULTY was not built"
SWEEP="-b 1K -e 4K -f 4 -n 2 -w 1"
# torchrun's agents make their folders (torchelastic_*) in TMPDIR: in the
# test's scratch folder, removed with it.
TMPDIR=$CB_TMP
export TMPDIR
CB_STANDIN_GPUS=2
export CB_STANDIN_GPUS

# Every torchrun this test starts runs under timeout; the PIDs of those in
# the background are kept here until waited for; on the way out, any still
# running is stopped (timeout passes the
# signal to torchrun, which stops its workers).
started=""
stop_started() {
    for p in $started; do kill -TERM "$p" 2>/dev/null || true; done
}
trap stop_started EXIT

# a. The README's command, as is: passes and verifies.
rc=0
timeout -k 5 120 "$TORCHRUN" --standalone --nproc-per-node 2 --no-python \
    "$CB_STANDIN_BIN" --backend nccl $SWEEP </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
expect_rc 0 "a. torchrun --standalone --nproc-per-node 2"
grep -q '^# Result: PASS' "$CB_TMP/out" || show_and_fail "a. torchrun --standalone: no '# Result: PASS'"
grep -q 'torchrun launch, TCP rendezvous at ' "$CB_TMP/out" ||
    show_and_fail "a. the preamble does not name the torchrun launch"
check check-sweep --table "$CB_TMP/out" --ranks 2 --sizes 1024,4096

# b to d set the rendezvous port (NCCL_COLLBENCH_PORT); a and e use the
# default, the first free of MASTER_PORT + 1 .. + 8 (MASTER_PORT + 1 alone
# was once taken in a CI run, in e: "Address already in use").
# b. No GPU, no MPI: each worker fails with 2; torchrun's report, which
# prints each failure's message.extraInfo.py_callstack, shows ours.
mkdir -p "$CB_TMP/nosys"
rc=0
NCCL_COLLBENCH_PORT=$(free_port) NCCL_COLLBENCH_SYSFS=$CB_TMP/nosys CB_STANDIN_GPUS=0 \
    timeout -k 5 120 "$TORCHRUN" --standalone \
    --nproc-per-node 2 --no-python "$CB_STANDIN_BIN" -b 1K -e 1K -n 1 -w 0 \
    </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
[ "$rc" != 0 ] || show_and_fail "b. torchrun: a run without GPU or MPI passed"
for r in 0 1; do
    grep -q "^  rank      : $r (local_rank: $r)\$" "$CB_TMP/err" ||
        show_and_fail "b. torchrun's report has no failure of rank $r"
    grep -q "^  traceback : nccl-collbench rank $r on .*: exit status 2 (usage error): .*the mpi backend needs MPI" "$CB_TMP/err" ||
        show_and_fail "b. torchrun's report does not carry rank $r's message and status"
done
grep -q '^  exitcode  : 2 ' "$CB_TMP/err" || show_and_fail "b. torchrun's report does not give status 2"

# c. --max-restarts 1: attempt 0 runs the fault layer's program with rank 1
# corrupting (status 7), attempt 1 the stand-in, clean. torchrun runs the
# script as the worker (--no-python).
cat >"$CB_TMP/attempts.sh" <<EOF
#!/bin/sh
if [ "\${TORCHELASTIC_RESTART_COUNT:-}" = 0 ]; then
    NCCL_COLLBENCH_TEST_FAULT=corrupt:1:5 exec "$FAULTY" --backend faulty-nccl "\$@"
fi
exec "$CB_STANDIN_BIN" --backend nccl "\$@"
EOF
chmod +x "$CB_TMP/attempts.sh"
rc=0
NCCL_COLLBENCH_PORT=$(free_port) timeout -k 5 120 "$TORCHRUN" --standalone --nproc-per-node 2 \
    --max-restarts 1 --no-python \
    "$CB_TMP/attempts.sh" $SWEEP --csv "$CB_TMP/r.csv" --json "$CB_TMP/r.json" \
    </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
expect_rc 0 "c. --max-restarts 1, a failed attempt then a passing one"
grep -q 'failed (exitcode: 7)' "$CB_TMP/err" || show_and_fail "c. the first attempt did not fail with 7"
grep -q "^# torchrun attempt 2 (TORCHELASTIC_RESTART_COUNT=1); the earlier attempt's files kept as " "$CB_TMP/out" ||
    show_and_fail "c. the second attempt's preamble does not say it kept the earlier files"
"$CB_PYTHON" - "$CB_TMP/r" <<'PY' || show_and_fail "c. the restart count, or the failed attempt's record"
import csv, json, sys
base = sys.argv[1]
rows = list(csv.DictReader(open(base + ".csv", newline="")))
assert rows and all(r["restart_count"] == "1" and r["wrong"] == "0" for r in rows), rows[:1]
doc = json.load(open(base + ".json"))
assert doc["restart_count"] == 1 and doc["complete"] is True, doc.get("restart_count")
assert doc["summary"]["exit_status"] == 0 and doc["summary"]["verdict"] == "PASS", doc["summary"]
# The failed attempt, kept: its count, its wrong elements, its status.
rows = list(csv.DictReader(open(base + ".csv.before-attempt1", newline="")))
assert rows and all(r["restart_count"] == "0" for r in rows), rows[:1]
assert any(r["wrong"] not in ("", "0") for r in rows), rows
doc = json.load(open(base + ".json.before-attempt1"))
assert doc["restart_count"] == 0, doc.get("restart_count")
s = doc["summary"]
assert s["exit_status"] == 7 and s["verdict"] == "FAIL" and s["wrong"] > 0, s
PY

# d. SIGTERM to torchrun once rank 0 has a row of a sweep of seconds. The
# script between torchrun and the program records the program's status
# (torchrun reports its own); it waits out the signal, which torchrun sends
# to the worker's whole process group.
cat >"$CB_TMP/status.sh" <<EOF
#!/bin/sh
trap : TERM
"$CB_STANDIN_BIN" --backend nccl "\$@"
rc=\$?
echo \$rc >"$CB_TMP/status.\$RANK"
exit \$rc
EOF
chmod +x "$CB_TMP/status.sh"
CB_STANDIN_OP_US=20000 NCCL_COLLBENCH_PORT=$(free_port) timeout -k 5 120 "$TORCHRUN" --standalone \
    --nproc-per-node 2 --no-python \
    "$CB_TMP/status.sh" -b 1K -e 1M -f 2 -n 20 -w 1 --csv "$CB_TMP/d.csv" --json "$CB_TMP/d.json" \
    </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
guard=$!
started="$started $guard"
for _ in $(seq 600); do
    [ "$(cat "$CB_TMP/d.csv" 2>/dev/null | wc -l)" -ge 2 ] && break
    sleep 0.1
done
[ "$(cat "$CB_TMP/d.csv" 2>/dev/null | wc -l)" -ge 2 ] || show_and_fail "d. no CSV row within 60 s"
# timeout's child is torchrun.
trun=$(cat /proc/$guard/task/*/children 2>/dev/null || true)
[ -n "$trun" ] || show_and_fail "d. torchrun is not running"
kill -TERM $trun
rc=0
wait $guard || rc=$?
started=""
[ "$rc" != 0 ] || show_and_fail "d. torchrun ended with 0 after SIGTERM"
for r in 0 1; do
    [ "$(cat "$CB_TMP/status.$r" 2>/dev/null)" = 143 ] ||
        show_and_fail "d. rank $r ended with '$(cat "$CB_TMP/status.$r" 2>/dev/null)', not 143"
done
grep -q '^# Stopped early: .*interrupted by SIGTERM' "$CB_TMP/out" ||
    show_and_fail "d. the table does not say it was stopped by SIGTERM"
"$CB_PYTHON" - "$CB_TMP/d.json" "$CB_TMP/d.csv" <<'PY' || show_and_fail "d. rank 0's JSON after SIGTERM"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
assert doc["complete"] is False, doc["complete"]
assert doc["summary"]["exit_status"] == 143, doc["summary"]
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert rows and len(doc["results"]) == len(rows), (len(doc["results"]), len(rows))
PY

# e. Two agents as two nodes, the README's form for each (c10d; one GPU
# each, their hosts told apart by NCCL_HOSTID as two machines are).
port=$(free_port)
pids=""
for n in 0 1; do
    NCCL_HOSTID=node$n timeout -k 5 120 "$TORCHRUN" --nnodes 2 --nproc-per-node 1 \
        --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$port --rdzv-id cb44-$$ --no-python \
        "$CB_STANDIN_BIN" --backend nccl $SWEEP --json "$CB_TMP/e.json" \
        </dev/null >"$CB_TMP/out$n" 2>"$CB_TMP/err$n" &
    pids="$pids $!"
done
started="$started $pids"
set -- $pids
rc=0
wait "$1" || rc=$?
rc1=0
wait "$2" || rc1=$?
started=""
cat "$CB_TMP/out0" "$CB_TMP/out1" >"$CB_TMP/out"
cat "$CB_TMP/err0" "$CB_TMP/err1" >"$CB_TMP/err"
[ "$rc" = 0 ] && [ "$rc1" = 0 ] || show_and_fail "e. two agents as two nodes: statuses $rc and $rc1"
grep -q '^# Result: PASS' "$CB_TMP/out" || show_and_fail "e. two agents: no '# Result: PASS'"
# (every rank is given the same options; rank 0 writes the JSON)
"$CB_PYTHON" - "$CB_TMP/e.json" <<'PY' || show_and_fail "e. rank 0's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 2 and d["nodes"] == 2 and d["summary"]["exit_status"] == 0, d["summary"]
PY

# f. A stranger listens on MASTER_PORT + 1 (and never accepts): the
# rendezvous is at MASTER_PORT + 2, and the run passes.
"$CB_PYTHON" - "$CB_TMP/held" <<'PY' &
import socket, sys, time
for _ in range(50):
    base = socket.socket()
    base.bind(("127.0.0.1", 0))
    port = base.getsockname()[1]
    base.close()
    held = socket.socket()
    try:
        held.bind(("127.0.0.1", port + 1))
    except OSError:
        continue
    held.listen(1)
    open(sys.argv[1] + ".tmp", "w").write("%d\n" % port)
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(150)
    sys.exit(0)
sys.exit(1)
PY
holder=$!
started="$started $holder"
for _ in $(seq 100); do [ -s "$CB_TMP/held" ] || sleep 0.1; done
[ -s "$CB_TMP/held" ] || show_and_fail "f. no port with a free neighbour to hold"
mport=$(cat "$CB_TMP/held")
rc=0
timeout -k 5 120 "$TORCHRUN" --nproc-per-node 2 --master-addr 127.0.0.1 \
    --master-port "$mport" --no-python "$CB_STANDIN_BIN" --backend nccl $SWEEP \
    </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
started=""
expect_rc 0 "f. torchrun with MASTER_PORT + 1 held"
# MASTER_PORT + 2 unless another process took that one too: any after it.
at=$(sed -n 's/.*torchrun launch, TCP rendezvous at 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$CB_TMP/out" | head -n 1)
[ -n "$at" ] && [ "$at" -ge $((mport + 2)) ] && [ "$at" -le $((mport + 8)) ] ||
    show_and_fail "f. the rendezvous ($at) is not at MASTER_PORT + 2 .. + 8 ($((mport + 2)) ..)"
grep -q '^# Result: PASS' "$CB_TMP/out" || show_and_fail "f. no '# Result: PASS'"
echo "ok"
