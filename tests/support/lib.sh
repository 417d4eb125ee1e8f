# Shared by the end-to-end tests; sourced, never run. tests/support/wrapper.sh sets
# CB_BIN, CB_MPIRUN, CB_PYTHON, CB_TMP, CB_SRCDIR and CB_BUILDDIR.

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

skip() {
    echo "SKIP: $*"
    exit 77
}

need_mpirun() {
    [ -n "$CB_MPIRUN" ] || skip "configure found no mpirun, so multi-rank runs cannot be launched"
}

need_python() {
    [ -n "$CB_PYTHON" ] && "$CB_PYTHON" -c 'import csv, json' 2>/dev/null ||
        skip "configure found no python3, which these tests use to parse output"
}

# free_port: a TCP port on the loopback that nothing listens on now (the
# kernel's choice), for a rendezvous or a daemon a test starts.
free_port() {
    "$CB_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# rows_in FILE: how many lines of FILE are not empty; 0 where it is empty or
# missing (grep -c prints 0 and fails on an empty file: "|| echo 0" would
# print a second 0).
rows_in() {
    _ri_n=$(grep -c . "$1" 2>/dev/null)
    echo "${_ri_n:-0}"
}

# wait_rows FILE N SECONDS [PID...]: wait until FILE has N lines (a CSV's
# header and rows), for a test that stops a run part way. 0 then; 1 when
# one of the PIDs ended first; 2 when SECONDS passed. The caller says what
# failed and stops what it started.
wait_rows() {
    _wr_file=$1 _wr_want=$2 _wr_turns=$(($3 * 10))
    shift 3
    while [ "$(rows_in "$_wr_file")" -lt "$_wr_want" ]; do
        for _wr_pid in "$@"; do
            kill -0 "$_wr_pid" 2>/dev/null || return 1
        done
        _wr_turns=$((_wr_turns - 1))
        [ "$_wr_turns" -ge 0 ] || return 2
        sleep 0.1
    done
}

# launcher_never_started: the last launch failed before any rank ran, in
# the launcher itself (Open MPI 5's PRRTE: "The PMIx server's listener
# thread failed to start", seen on a loaded machine), which is not the
# program's doing: the caller launches again, at most twice.
launcher_never_started() {
    [ "$rc" != 0 ] && [ ! -s "$CB_TMP/out" ] &&
        grep -q "PMIx server's listener thread failed to start" "$CB_TMP/err" &&
        [ "${launch_tries:=0}" -lt 2 ] && launch_tries=$((launch_tries + 1)) &&
        echo "note: the launcher failed to start (no rank ran); launching again" >&2
}

# run NP ARGS...: launch the program on NP ranks; stdout in $CB_TMP/out,
# stderr in $CB_TMP/err, exit status in $rc. Every run has its own limit.
run() {
    np=$1
    shift
    launch_tries=0
    one_rank=""
    [ "$np" = 1 ] && one_rank=${CB_MPIRUN_ONE_RANK:-}
    while :; do
        rc=0
        timeout -k 5 "${CB_RUN_TIMEOUT:-60}" $CB_MPIRUN $one_rank -np "$np" "${CB_RUN_BIN:-$CB_BIN}" "$@" \
            </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
        launcher_never_started || break
    done
}

# show_and_fail MESSAGE: print the last run's output, then fail.
show_and_fail() {
    echo "--- stdout" >&2; cat "$CB_TMP/out" >&2
    echo "--- stderr" >&2; cat "$CB_TMP/err" >&2
    fail "$1"
}

# expect_rc WANT CONTEXT: fail unless the last run exited with WANT.
expect_rc() {
    [ "$rc" = "$1" ] || show_and_fail "$2: exit status $rc, expected $1"
}

# expect_stopped WANT CONTEXT: expect_rc for a run that stops early (a hang,
# a failed set-up). MPICH's Hydra kills the ranks still running once one has
# exited non-zero, and gives the signal (9) as the launch's status when one
# still was: rank 0's result line gives the program's own status then.
expect_stopped() {
    if [ "$CB_LAUNCHER" = hydra ] && [ "$rc" = 9 ]; then
        grep -q "^# Result: FAIL (stopped early, status $1)" "$CB_TMP/out" ||
            show_and_fail "$2: launch status 9 under Hydra, and rank 0's result does not give status $1"
    else
        expect_rc "$1" "$2"
    fi
}

# has COUNT REGEX: fail unless exactly COUNT lines of the last run's
# stdout match the basic regular expression.
has() {
    n=$(grep -c -- "$2" "$CB_TMP/out" || true)
    [ "$n" = "$1" ] || show_and_fail "$n lines (not $1) match: $2"
}

check() {
    "$CB_PYTHON" "$CB_SRCDIR/tests/support/parse_output.py" "$@" || fail "output check failed: $*"
}

# hostid_launcher IDS PROGRAM: make $CB_TMP/hostid.sh, which runs PROGRAM
# with NCCL_HOSTID set to the rank's word of IDS (rank 0 the first; "-"
# leaves it unset), the rank taken from Open MPI's or the PMI's variable.
# Use it as CB_RUN_BIN, to give ranks on this machine different hosts.
hostid_launcher() {
    cat >"$CB_TMP/hostid.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
[ -n "\$rank" ] || { echo "hostid.sh: the launcher set no rank variable" >&2; exit 99; }
id=\$(echo "$1" | cut -d' ' -f\$((rank + 1)))
[ -z "\$id" ] || [ "\$id" = - ] || { NCCL_HOSTID=\$id; export NCCL_HOSTID; }
exec "$2" "\$@"
LAUNCHER
    chmod +x "$CB_TMP/hostid.sh"
}
