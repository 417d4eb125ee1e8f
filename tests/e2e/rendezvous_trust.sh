# Issue 44, item 2, through the TCP plane without mpirun (the NCCL
# stand-in; ranks given torchrun's variables by this shell, or -g 2):
# - unauthenticated is loud: preamble, JSON and the closing verdict;
# - --require-key and NCCL_COLLBENCH_REQUIRE_KEY=1 refuse a launch with no
#   key, status 2, on every rank, naming NCCL_COLLBENCH_KEY; -g 2 on one
#   node is keyed by its parent and starts;
# - two unkeyed jobs on one port (TORCHELASTIC_RUN_ID A and B) are refused,
#   both identities named, and neither measures;
# - two processes claiming rank 1 are refused, both pids named;
# - -g 2's ranks listen on the loopback only, not every interface.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
need_python
CB_STANDIN_GPUS=3
export CB_STANDIN_GPUS
SWEEP="-o allreduce -b 8 -e 1K -f 32 -n 2 -w 1"

# ranks SIZE "RANK:RUN_ID ..." ARGS...: one process per word, torchrun's
# variables set (RUN_ID "-": no TORCHELASTIC_RUN_ID), no key, one port;
# statuses in $st (in order), outputs in $CB_TMP/out.I and err.I.
ranks() {
    size=$1
    words=$2
    shift 2
    port=$(free_port)
    pids=""
    i=0
    for w in $words; do
        r=${w%%:*}
        run_id=${w#*:}
        if [ "$run_id" = - ]; then unset TORCHELASTIC_RUN_ID; else TORCHELASTIC_RUN_ID=$run_id; export TORCHELASTIC_RUN_ID; fi
        env RANK=$r WORLD_SIZE=$size LOCAL_RANK=$r LOCAL_WORLD_SIZE=$size MASTER_ADDR=127.0.0.1 \
            MASTER_PORT=$port timeout -k 5 60 "$CB_STANDIN_BIN" --backend nccl -T 20 "$@" \
            </dev/null >"$CB_TMP/out.$i" 2>"$CB_TMP/err.$i" &
        pids="$pids $!"
        i=$((i + 1))
    done
    unset TORCHELASTIC_RUN_ID
    st=""
    for p in $pids; do
        s=0
        wait "$p" || s=$?
        st="$st $s"
    done
    st=${st# }
    cat "$CB_TMP"/out.* >"$CB_TMP/out"
    cat "$CB_TMP"/err.* >"$CB_TMP/err"
}

# Unkeyed: the run passes, and says it was not authenticated everywhere.
ranks 2 "0:run7 1:run7" $SWEEP --json "$CB_TMP/u.json"
[ "$st" = "0 0" ] || show_and_fail "unkeyed pair: statuses $st, expected 0 0"
grep -q "^# backend: .*not authenticated: no NCCL_COLLBENCH_KEY" "$CB_TMP/out.0" ||
    show_and_fail "unkeyed: the preamble does not say so"
grep -q "^# Result: PASS.*not authenticated: no NCCL_COLLBENCH_KEY" "$CB_TMP/out.0" ||
    show_and_fail "unkeyed: the closing verdict does not say so"
"$CB_PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["backend"]["rendezvous_authenticated"] is False, d["backend"]; assert "not authenticated" in json.dumps(d["summary"]), d["summary"]' \
    "$CB_TMP/u.json" || show_and_fail "unkeyed: the JSON does not say so"

# --require-key, and its variable, without a key: refused on every rank.
ranks 2 "0:- 1:-" $SWEEP --require-key
[ "$st" = "2 2" ] || show_and_fail "--require-key without a key: statuses $st, expected 2 2"
for i in 0 1; do
    grep -q "rank $i: --require-key, and NCCL_COLLBENCH_KEY is not set" "$CB_TMP/err.$i" ||
        show_and_fail "--require-key: rank $i does not say what is missing"
done
NCCL_COLLBENCH_REQUIRE_KEY=1 ranks 2 "0:- 1:-" $SWEEP
[ "$st" = "2 2" ] || show_and_fail "NCCL_COLLBENCH_REQUIRE_KEY=1: statuses $st, expected 2 2"
grep -q "NCCL_COLLBENCH_REQUIRE_KEY=1, and NCCL_COLLBENCH_KEY is not set" "$CB_TMP/err.1" ||
    show_and_fail "NCCL_COLLBENCH_REQUIRE_KEY=1: the message does not name it"
NCCL_COLLBENCH_REQUIRE_KEY=yes ranks 2 "0:- 1:-" $SWEEP
[ "$st" = "2 2" ] && grep -q "NCCL_COLLBENCH_REQUIRE_KEY=yes: 1 or 0 only" "$CB_TMP/err.0" ||
    show_and_fail "NCCL_COLLBENCH_REQUIRE_KEY=yes: statuses $st, not refused by name"

# Two jobs on one port: refused, both named; nothing measured.
ranks 2 "0:jobA 1:jobB" $SWEEP
[ "$st" != "0 0" ] && ! grep -q "^# Result: PASS" "$CB_TMP/out" ||
    show_and_fail "two jobs on one port: statuses $st, and they measured together"
for i in 0 1; do
    grep -q "another job (torchrun run jobB) than rank 0 (torchrun run jobA)" "$CB_TMP/err.$i" ||
        show_and_fail "two jobs: process $i does not name both jobs"
done

# Two processes claim rank 1 (of 3): both named by pid, none measures.
ranks 3 "0:j 1:j 1:j" $SWEEP
[ "$st" != "0 0 0" ] || show_and_fail "rank 1 claimed twice: every process passed"
grep -q "two processes claim rank 1: pid [0-9]* at .* and pid [0-9]* at " "$CB_TMP/err.0" ||
    show_and_fail "rank 1 claimed twice: rank 0 does not name both"

# -g 2 with --require-key: keyed by its parent, it runs; and while it runs
# (-N 0: until stopped), every socket its ranks listen on is a loopback one.
timeout -k 5 120 "$CB_STANDIN_BIN" -g 2 --require-key --backend nccl -N 0 $SWEEP \
    </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
parent=$!
"$CB_PYTHON" - "$parent" <<'PY' >"$CB_TMP/listen" 2>&1 || listen_rc=$?
import os, sys, time
parent = sys.argv[1]

def children_of(pid):
    try:
        return open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        return []

def children():
    """The ranks: the children of -g's parent, which timeout started."""
    return [k for g in children_of(parent) for k in children_of(g)]

def listening(pid):
    """This process's listening TCP sockets: (local address hex, port)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        for line in open(f"/proc/{pid}/net/{table}").read().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:
                found.append((table, f[1]))
    return found

deadline = time.time() + 30
while time.time() < deadline:
    kids = children()
    got = {}
    try:
        for k in kids:
            got[k] = listening(k)
    except OSError:
        got = {}
    if len(kids) == 2 and all(got.get(k) for k in kids):
        ok = lambda t, a: (t == "tcp" and a.startswith("0100007F")) or \
             (t == "tcp6" and a.startswith("00000000000000000000000001000000"))
        bad = [(k, t, a) for k in kids for t, a in got[k] if not ok(t, a)]
        print("listening:", got)
        sys.exit(1 if bad else 0)
    time.sleep(0.3)
print("the ranks never listened within 30 s:", children())
sys.exit(2)
PY
kill -TERM "$parent" 2>/dev/null || true
rc=0
wait "$parent" || rc=$?
cat "$CB_TMP/listen"
[ "${listen_rc:-0}" = 0 ] || { cat "$CB_TMP/listen" >&2; show_and_fail "-g 2: a rank listens beyond the loopback"; }
grep -q "^# backend: .*local launch" "$CB_TMP/out" || show_and_fail "-g 2 --require-key: no run"
exit 0
