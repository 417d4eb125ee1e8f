# Runs without mpirun (issue 39), on the NCCL stand-in, which bootstraps
# through its ncclUniqueId: -g 2 (the program starts its ranks), two
# processes given torchrun's variables by this shell, and srun's variables
# without MPI. Each mode passes and verifies, -g and torchrun catch a
# corrupting rank (status 7), and a stopped or hung rank gives the hang
# report and status 3; --split, -B and the health scan run without MPI;
# a killed rank ends the other with status 1. The
# MPI backend is refused without MPI (status 2), as is -g 2 under mpirun.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
CB_STANDIN_GPUS=4
export CB_STANDIN_GPUS
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"
SWEEP="-b 1K -e 64K -f 4 -n 2 -w 1 -c 1"

# alone PROGRAM ARGS...: one process, no launcher, under a time limit.
alone() {
    rc=0
    timeout -k 5 120 "$@" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
}

# pair MODE PROGRAM ARGS...: two processes this shell starts, with
# torchrun's or srun's variables; rc is rank 0's status, rc1 rank 1's.
pair() {
    mode=$1
    shift
    port=$(free_port)
    pids=""
    for r in 0 1; do
        if [ "$mode" = torchrun ]; then
            env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
                MASTER_PORT=$port NCCL_COLLBENCH_KEY=test-key \
                timeout -k 5 120 "$@" </dev/null >"$CB_TMP/out$r" 2>"$CB_TMP/err$r" &
        else
            env SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r SLURM_JOB_ID=77 \
                SLURM_STEP_NODELIST=localhost NCCL_COLLBENCH_PORT=$port \
                timeout -k 5 120 "$@" </dev/null >"$CB_TMP/out$r" 2>"$CB_TMP/err$r" &
        fi
        pids="$pids $!"
    done
    set -- $pids
    rc=0
    wait "$1" || rc=$?
    # A rank stopped (SIGSTOP) never ends by itself: once rank 0 has, it
    # is ended here, as a launcher would, by the PID timeout started.
    if [ -n "${STOPPED_RANK1:-}" ]; then
        for child in $(cat "/proc/$2/task/$2/children" 2>/dev/null); do
            kill -KILL "$child" 2>/dev/null || true
        done
    fi
    rc1=0
    wait "$2" || rc1=$?
    cp "$CB_TMP/out0" "$CB_TMP/out"
    cat "$CB_TMP/err0" "$CB_TMP/err1" >"$CB_TMP/err"
}

# Passing: verified, two ranks, the launch named in the preamble.
alone "$CB_STANDIN_BIN" -g 2 --backend nccl $SWEEP --csv "$CB_TMP/g.csv"
expect_rc 0 "-g 2"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/g.csv" --ranks 2 --sizes 1024,4096,16384,65536
grep -q '^# backend: nccl .*MPI: none (local launch, TCP rendezvous at 127.0.0.1:' "$CB_TMP/out" ||
    show_and_fail "-g 2: the preamble does not name the launch"
has 2 '^#  Rank  *[01] '

for mode in torchrun slurm; do
    pair $mode "$CB_STANDIN_BIN" --backend nccl $SWEEP
    [ "$rc" = 0 ] && [ "$rc1" = 0 ] || show_and_fail "$mode: statuses $rc and $rc1, expected 0"
    check check-sweep --table "$CB_TMP/out" --ranks 2 --sizes 1024,4096,16384,65536
    grep -q "MPI: none ($mode launch, TCP rendezvous" "$CB_TMP/out" ||
        show_and_fail "$mode: the preamble does not name the launch"
    [ ! -s "$CB_TMP/out1" ] || show_and_fail "$mode: rank 1 wrote to stdout"
done

# -g beyond the GPUs this node has: one message saying how many to start.
CB_STANDIN_GPUS=2 alone "$CB_STANDIN_BIN" -g 4 --backend nccl $SWEEP
expect_rc 1 "-g 4 on 2 GPUs"
[ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] && grep -q 'so start at most 2' "$CB_TMP/err" ||
    show_and_fail "-g 4 on 2 GPUs: not one message saying to start at most 2"

# --split without MPI: four ranks of -g in two groups measured at once,
# each group a split of the run's communicator.
alone "$CB_STANDIN_BIN" -g 4 --backend nccl --split size:2 $SWEEP
expect_rc 0 "-g 4 --split size:2"
grep -q "^# split size:2: 2 groups" "$CB_TMP/out" || show_and_fail "-g 4 --split size:2: no split note"
check check-sweep --table "$CB_TMP/out" --ranks 4 --sizes 1024,4096,16384,65536 --group-sizes 2,2

# -B without MPI: a launch in many corrupted on rank 1 is unrepeatable (7).
NCCL_COLLBENCH_TEST_FAULT=nth:1:5 alone "$FAULTY" -g 2 --backend faulty-nccl -B $SWEEP
expect_rc 7 "-g 2 -B, rank 1's 5th launch corrupted"
grep -q '^# Unrepeatable: .* first on rank 1 ' "$CB_TMP/out" ||
    show_and_fail "-g 2 -B: no unrepeatable line naming rank 1"

# The health scan without MPI: four torchrun ranks on two labelled hosts.
port=$(free_port)
pids=""
for r in 0 1 2 3; do
    env RANK=$r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port NCCL_HOSTID=h$((r / 2)) \
        timeout -k 5 120 "$CB_STANDIN_BIN" --backend nccl -o scan -b 64K -e 64K -n 2 -w 1 \
        --suspect-ratio 0.01 </dev/null >"$CB_TMP/out$r" 2>"$CB_TMP/err$r" &
    pids="$pids $!"
done
rc=0
for pid in $pids; do
    wait "$pid" || rc=$?
done
cp "$CB_TMP/out0" "$CB_TMP/out"
cat "$CB_TMP"/err[0-3] >"$CB_TMP/err"
expect_rc 0 "torchrun scan of hosts h0, h1"
has 1 '^# Health scan: 2 nodes'

# A corrupting rank: every mode finds it (status 7) and names it.
export NCCL_COLLBENCH_TEST_FAULT=corrupt:1:5
alone "$FAULTY" -g 2 --backend faulty-nccl $SWEEP
expect_rc 7 "-g 2, rank 1 corrupting"
grep -q '^# Result: FAIL (.* wrong elements\? on rank 1' "$CB_TMP/out" ||
    show_and_fail "-g 2: the corrupting rank is not named"
pair torchrun "$FAULTY" --backend faulty-nccl $SWEEP
[ "$rc" = 7 ] && [ "$rc1" = 7 ] || show_and_fail "torchrun, rank 1 corrupting: statuses $rc and $rc1"

# A stopped rank (SIGSTOP: it answers nothing) under -g: the hang report,
# status 3, and the stopped rank ended by the parent. A hung one under the
# shell's launches: status 3 on both ranks.
export NCCL_COLLBENCH_TEST_FAULT=stop:1:256
alone "$FAULTY" -g 2 --backend faulty-nccl $SWEEP -T 3
expect_rc 3 "-g 2, rank 1 stopped"
grep -q '^# Hang: rank [01] .*saw no progress for 3 s' "$CB_TMP/err" ||
    show_and_fail "-g 2, rank 1 stopped: no hang report"
export NCCL_COLLBENCH_TEST_FAULT=hang:1:256
for mode in torchrun slurm; do
    pair $mode "$FAULTY" --backend faulty-nccl $SWEEP -T 3
    [ "$rc" = 3 ] && [ "$rc1" = 3 ] || show_and_fail "$mode, rank 1 hung: statuses $rc and $rc1"
    grep -q '^# Hang: rank [01] .*saw no progress for 3 s' "$CB_TMP/err" ||
        show_and_fail "$mode, rank 1 hung: no hang report"
done
# Stopped, under each: rank 0 reports rank 1 silent and ends with 3.
export NCCL_COLLBENCH_TEST_FAULT=stop:1:256
for mode in torchrun slurm; do
    STOPPED_RANK1=1 pair $mode "$FAULTY" --backend faulty-nccl $SWEEP -T 3
    [ "$rc" = 3 ] || show_and_fail "$mode, rank 1 stopped: rank 0's status $rc, expected 3"
    grep -q '^# Hang: silent: rank 1 ' "$CB_TMP/err" ||
        show_and_fail "$mode, rank 1 stopped: the hang report does not name it silent"
done
unset NCCL_COLLBENCH_TEST_FAULT STOPPED_RANK1

# A rank killed mid-run (SIGKILL: it says nothing) under torchrun's
# variables: the survivor ends with status 1 and a message, never a hang.
port=$(free_port)
env RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port NCCL_COLLBENCH_KEY=k \
    "$CB_STANDIN_BIN" --backend nccl -N 0 -b 1K -e 1K -n 2 -w 1 -T 60 </dev/null \
    >"$CB_TMP/out1" 2>"$CB_TMP/err1" &
victim=$!
rc=0
env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port NCCL_COLLBENCH_KEY=k \
    timeout -k 5 50 "$CB_STANDIN_BIN" --backend nccl -N 0 -b 1K -e 1K -n 2 -w 1 -T 60 \
    </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
survivor=$!
# Once rank 0 has measured (its first row), rank 1 dies.
for _ in $(seq 1 100); do
    grep -q '^ *1024 ' "$CB_TMP/out" && break
    sleep 0.2
done
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
wait "$survivor" || rc=$?
[ "$rc" = 1 ] || show_and_fail "torchrun, rank 1 killed: rank 0's status $rc, expected 1"
grep -q '^nccl-collbench: rank 0 ' "$CB_TMP/err" ||
    show_and_fail "torchrun, rank 1 killed: rank 0 said nothing"

# The MPI backend needs MPI: refused with status 2 where there is none.
alone "$CB_STANDIN_BIN" -g 2 --backend mpi $SWEEP
expect_rc 2 "-g 2 --backend mpi"
grep -q 'backend mpi needs MPI' "$CB_TMP/err" || show_and_fail "-g 2 --backend mpi: no reason"
pair torchrun "$CB_STANDIN_BIN" --backend mpi $SWEEP
[ "$rc" = 2 ] || show_and_fail "torchrun --backend mpi: status $rc, expected 2"
grep -q 'backend mpi needs MPI, and this run has none' "$CB_TMP/err" ||
    show_and_fail "torchrun --backend mpi: no reason"
# Bad variables are named.
RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 alone "$CB_STANDIN_BIN" --backend nccl
expect_rc 2 "RANK=2 of WORLD_SIZE=2"
grep -q "RANK=2: not below WORLD_SIZE=2" "$CB_TMP/err" || show_and_fail "RANK=2: not named"
alone "$CB_STANDIN_BIN" -g 0
expect_rc 2 "-g 0"
grep -q "'0' is not a number of GPUs" "$CB_TMP/err" || show_and_fail "-g 0: not named"
# -g 2 inside an MPI launch starts nothing.
if [ -n "$CB_MPIRUN" ]; then
    CB_RUN_BIN=$CB_STANDIN_BIN
    run 1 -g 2 --backend nccl $SWEEP
    expect_rc 2 "-g 2 under mpirun"
    grep -q -- '-g 2: this process is already one rank of a job (launch: mpi)' "$CB_TMP/err" ||
        show_and_fail "-g 2 under mpirun: no reason"
fi
echo "ok"
