# A rank that fails or dies, and signals (issue 44, item 3), on the NCCL
# stand-in: nothing hangs, nothing is lost.
# a. A rank whose blocking ncclCommInitRankConfig fails before NCCL's
#    bootstrap (CB_STANDIN_FAIL_COMMINIT=2 of 4) ends the job within
#    seconds with status 1 and its own failure as the one reason, with
#    -T 0 (no watchdog to end it), under -g 4 and under mpirun.
# b. A rank of -g killed mid-run (SIGKILL, as the OOM killer's): rank 0
#    finishes its JSON with what finished (complete false, status 1) and
#    whole CSV rows, and the parent names the rank that ended.
# f. The same under mpirun, whose SIGTERM to the survivors is followed by
#    its SIGKILL a second later: every survivor ends with status 1, rank 0
#    keeps its files and names the rank and host that ended.
# c. SIGKILL and SIGHUP to the -g parent: its ranks end within seconds,
#    and rank 0 finishes the JSON (complete false) and whole CSV rows.
# d. SIGTERM to a -g job's whole process group reaches each rank twice
#    (the shell's, then the parent's): one stop, status 143, and the JSON
#    says 143 too.
# e. A missing rank 0 and a missing rank 1 (torchrun's variables, one
#    process of two started): both end at the rendezvous' deadline, before
#    the start-up watchdog's, with the timeout's status 3.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
need_python
CB_STANDIN_GPUS=4
export CB_STANDIN_GPUS
unset CB_STANDIN_OP_US CB_STANDIN_TRACE

# alone ARGS...: the stand-in program, no launcher, under a time limit;
# $secs is how long it took.
alone() {
    rc=0
    t0=$(date +%s)
    timeout -k 5 "${limit:-60}" "$CB_STANDIN_BIN" "$@" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
    secs=$(($(date +%s) - t0))
}

# json_says FILE: the JSON's complete and exit_status, "false 143".
json_says() {
    "$CB_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"] if "summary" in d else d
print(str(d.get("complete", s.get("complete"))).lower(), s.get("exit_status", d.get("exit_status")))' "$1"
}

# whole_rows FILE: every CSV row has the header's number of fields.
whole_rows() {
    "$CB_PYTHON" -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) >= 2, "no rows"
bad = [r for r in rows if len(r) != len(rows[0])]
assert not bad, "torn rows: %r" % bad[:2]' "$1" || show_and_fail "$2: CSV rows are not whole"
}

# a. -g 4: the failing rank ends the job at once (the others would wait in
# NCCL's bootstrap for ever: -T 0), status 1, one message with the reason.
limit=30 CB_STANDIN_FAIL_COMMINIT=2 alone -g 4 --backend nccl -b 1K -e 1K -n 1 -T 0
[ "$rc" != 124 ] && [ "$rc" != 137 ] || show_and_fail "-g 4, creation failed on rank 2: hung"
expect_rc 1 "-g 4, creation failed on rank 2"
[ "$secs" -le 15 ] || show_and_fail "-g 4, creation failed on rank 2: took $secs s"
grep -q '^nccl-collbench: rank 2 .*ncclCommInitRankConfig failed.*injected ncclCommInitRank failure.*ending the job (status 1)' "$CB_TMP/err" ||
    show_and_fail "-g 4, creation failed on rank 2: the reason is not given"
if [ -n "$CB_MPIRUN" ]; then
    CB_RUN_BIN=$CB_STANDIN_BIN
    CB_RUN_TIMEOUT=40
    t0=$(date +%s)
    CB_STANDIN_FAIL_COMMINIT=2 run 4 --backend nccl -b 1K -e 1K -n 1 -T 0
    secs=$(($(date +%s) - t0))
    [ "$rc" != 124 ] && [ "$rc" != 137 ] || show_and_fail "mpirun, creation failed on rank 2: hung"
    [ "$rc" != 0 ] || show_and_fail "mpirun, creation failed on rank 2: status 0"
    [ "$secs" -le 25 ] || show_and_fail "mpirun, creation failed on rank 2: took $secs s"
    grep -q '^nccl-collbench: rank 2 .*ncclCommInitRankConfig failed.*ending the job' "$CB_TMP/err" ||
        show_and_fail "mpirun, creation failed on rank 2: the reason is not given"
fi
echo "ok: a"

# A -g 2 run long enough to be stopped part way (20 ms per collective).
# start_long [setsid]: in the background, $pid the -g parent; returns once
# the CSV holds 2 rows.
start_long() {
    rm -f "$CB_TMP/r.csv" "$CB_TMP/r.json"
    CB_STANDIN_OP_US=20000 $1 "$CB_STANDIN_BIN" -g 2 --backend nccl -b 8 -e 1M -f 2 -n 10 -w 1 \
        -T 60 --csv "$CB_TMP/r.csv" --json "$CB_TMP/r.json" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
    pid=$!
    wait_rows "$CB_TMP/r.csv" 3 30 $pid || case $? in
        1) show_and_fail "the run ended before it could be stopped" ;;
        *) kill -KILL $pid; fail "no CSV rows within 30 s" ;;
    esac
    ranks=$(cat "/proc/$pid/task/$pid/children")
}

# b. Rank 1 killed: rank 0 loses its control plane, ends with 1, and
# keeps its results.
start_long
set -- $ranks
kill -KILL "$2"
rc=0
wait $pid || rc=$?
expect_rc 1 "-g 2, rank 1 killed"
[ -f "$CB_TMP/r.json" ] || show_and_fail "-g 2, rank 1 killed: no JSON"
[ "$(json_says "$CB_TMP/r.json")" = "false 1" ] ||
    show_and_fail "-g 2, rank 1 killed: the JSON says '$(json_says "$CB_TMP/r.json")', not 'false 1'"
whole_rows "$CB_TMP/r.csv" "-g 2, rank 1 killed"
grep -q "^nccl-collbench: -g: rank 1 (.*) ended, killed by signal 9" "$CB_TMP/err" ||
    show_and_fail "-g 2, rank 1 killed: the rank that ended is not named"
echo "ok: b"

# c. The parent killed (SIGKILL), or ended by SIGHUP: the ranks follow it
# within seconds and rank 0 finishes its files.
for sig in KILL HUP; do
    start_long
    kill -$sig $pid
    wait $pid 2>/dev/null || true
    i=0
    for r in $ranks; do
        while kill -0 "$r" 2>/dev/null; do
            i=$((i + 1))
            [ $i -le 150 ] || { kill -KILL $ranks 2>/dev/null; show_and_fail "SIG$sig to the -g parent: its ranks still run 15 s later"; }
            sleep 0.1
        done
    done
    [ -f "$CB_TMP/r.json" ] || show_and_fail "SIG$sig to the -g parent: no JSON"
    [ "$(json_says "$CB_TMP/r.json")" = "false 143" ] ||
        show_and_fail "SIG$sig to the -g parent: the JSON says '$(json_says "$CB_TMP/r.json")', not 'false 143'"
    whole_rows "$CB_TMP/r.csv" "SIG$sig to the -g parent"
    echo "ok: c, SIG$sig"
done

# d. SIGTERM to the process group: each rank gets it from the shell and
# again from the parent, within milliseconds: one stop, 143 both ways.
start_long setsid
[ "$(ps -o pgid= -p $pid | tr -d ' ')" = "$pid" ] || fail "setsid did not make the run a process group"
kill -TERM -$pid
rc=0
wait $pid || rc=$?
expect_rc 143 "SIGTERM to the -g job's process group"
[ "$(json_says "$CB_TMP/r.json")" = "false 143" ] ||
    show_and_fail "SIGTERM to the process group: the JSON says '$(json_says "$CB_TMP/r.json")'"
whole_rows "$CB_TMP/r.csv" "SIGTERM to the process group"
echo "ok: d"

# f. Under mpirun: each rank through a script that records its own status
# (mpirun's own is not the ranks', and Open MPI 4.1's may crash in its
# teardown) and its shell's pid, whose child is the rank; ranks named
# node0..node2 (NCCL_HOSTID).
if [ -n "$CB_MPIRUN" ]; then
    cat >"$CB_TMP/rank.sh" <<RANK
#!/bin/sh
r=\$OMPI_COMM_WORLD_RANK
NCCL_HOSTID=node\$r
export NCCL_HOSTID
echo \$\$ >"$CB_TMP/sh.\$r"
trap : TERM INT
"$CB_STANDIN_BIN" "\$@"
echo \$? >"$CB_TMP/status.\$r"
RANK
    chmod +x "$CB_TMP/rank.sh"
    rm -f "$CB_TMP"/r.csv "$CB_TMP"/r.json "$CB_TMP"/status.* "$CB_TMP"/sh.*
    CB_STANDIN_OP_US=20000 timeout -k 5 60 $CB_MPIRUN -np 3 "$CB_TMP/rank.sh" --backend nccl \
        -b 8 -e 1M -f 2 -n 10 -w 1 -T 60 --csv "$CB_TMP/r.csv" --json "$CB_TMP/r.json" \
        </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
    pid=$!
    wait_rows "$CB_TMP/r.csv" 3 30 $pid || case $? in
        1) show_and_fail "mpirun: the run ended before it could be stopped" ;;
        *) kill -KILL $pid; fail "mpirun: no CSV rows within 30 s" ;;
    esac
    sh1=$(cat "$CB_TMP/sh.1")
    read -r victim others <"/proc/$sh1/task/$sh1/children" || true   # no newline at its end
    [ -n "$victim" ] && [ "$(readlink "/proc/$victim/exe")" = "$(readlink -f "$CB_STANDIN_BIN")" ] ||
        fail "mpirun: rank 1's process not found under its shell $sh1 (children: $victim)"
    kill -KILL "$victim"
    wait $pid 2>/dev/null || true
    for r in 0 2; do
        [ "$(cat "$CB_TMP/status.$r" 2>/dev/null)" = 1 ] ||
            show_and_fail "mpirun, rank 1 killed: rank $r ended with '$(cat "$CB_TMP/status.$r" 2>/dev/null || echo no status: killed)', not 1"
    done
    [ -f "$CB_TMP/r.json" ] || show_and_fail "mpirun, rank 1 killed: no JSON"
    [ "$(json_says "$CB_TMP/r.json")" = "false 1" ] ||
        show_and_fail "mpirun, rank 1 killed: the JSON says '$(json_says "$CB_TMP/r.json")', not 'false 1'"
    grep -q '"rank 1 (node1) ended during the run' "$CB_TMP/r.json" ||
        show_and_fail "mpirun, rank 1 killed: the JSON does not name rank 1 and its host"
    whole_rows "$CB_TMP/r.csv" "mpirun, rank 1 killed"
    grep -q "^nccl-collbench: rank 0 (node0): rank 1 (node1) ended during the run" "$CB_TMP/err" ||
        show_and_fail "mpirun, rank 1 killed: rank 0 does not name rank 1 and its host"
    echo "ok: f"
fi

# e. Both at once, each alone at its own port; -T 1 gives the start-up its
# least, 15 s, of which the rendezvous takes 10.
port0=$(free_port)
port1=$(free_port)
while [ "$port1" = "$port0" ]; do port1=$(free_port); done
env RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port0 NCCL_COLLBENCH_KEY=k \
    timeout -k 5 60 "$CB_STANDIN_BIN" --backend nccl -T 1 -b 1K -e 1K </dev/null \
    >"$CB_TMP/out1" 2>"$CB_TMP/err1" &
no_root=$!
env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port1 NCCL_COLLBENCH_KEY=k \
    timeout -k 5 60 "$CB_STANDIN_BIN" --backend nccl -T 1 -b 1K -e 1K </dev/null \
    >"$CB_TMP/out" 2>"$CB_TMP/err" &
no_one=$!
rc1=0
wait $no_root || rc1=$?
rc=0
wait $no_one || rc=$?
cat "$CB_TMP/err1" >>"$CB_TMP/err"
[ "$rc1" = 3 ] && [ "$rc" = 3 ] ||
    show_and_fail "missing rank 0: status $rc1, missing rank 1: status $rc; expected 3 and 3"
grep -q '^nccl-collbench: rank 1: rank 1 could not reach rank 0 ' "$CB_TMP/err" &&
    grep -q '^nccl-collbench: rank 0: the rendezvous on port [0-9]* timed out after 10 s; missing rank 1 (of 2)' "$CB_TMP/err" ||
    show_and_fail "missing ranks: the rendezvous does not say which"
echo "ok: e"
echo "ok"
