# A real Slurm cluster (Debian's Slurm 22.05) on this one machine, for the
# tests (sourced, POSIX sh, after tests/support/lib.sh). It stands on the
# namespace cluster of tests/cluster/cluster.sh: node hI is that cluster's
# network namespace hI, where slurmd -N hI runs with hI as its hostname and
# CB_SLURM_GPUS (4) fake GPUs (gres on character devices; the NCCL stand-in
# sees as many and honours the CUDA_VISIBLE_DEVICES Slurm sets). Node
# h0 also runs slurmctld and is the login node: srun, sbatch and scontrol
# run there. One munged (its socket is a path) serves every namespace.
# Every daemon listens inside the cluster's own namespaces, so the ports
# are free by construction and no other test sees them; all state is under
# CB_SLURM_DIR.
#
#   slurm_need            exit 77 unless a Slurm cluster can be made here
#                         (root, namespaces, the packages; not with
#                         CB_SKIP_CLUSTER set)
#   slurm_up [N]          N nodes (default 4), up and idle; teardown is
#                         trapped (slurm_down)
#   slurm_down            cancel the jobs, stop the daemons by their PIDs,
#                         kill what is left on the nodes (slurmstepd, tasks),
#                         remove namespaces and links; runs on any exit
#   slurm_exec CMD...     run CMD on the login node (h0) with the cluster's
#                         environment, killed after CB_SLURM_TIMEOUT (120) s
#   slurm_run CMD...      slurm_exec with stdout in $CB_TMP/out, stderr in
#                         $CB_TMP/err, the status in $rc
#   slurm_node_run I CMD...  the same on node I, outside any job (as slurmd
#                         runs a HealthCheckProgram)
#   slurm_wait_job ID     wait until job ID has ended; prints its state and
#                         exit code as "STATE RC:SIG"
#   slurm_node_state hI   the node's state and reason: "STATE|REASON"
# CB_SLURM_CONF_EXTRA, when set, is added to slurm.conf as it is (lines of
# the test's own, as HealthCheckProgram=...).
# Sets CB_SLURM_DIR, CB_SLURM_NODES (h[0-N-1]) and exports SLURM_CONF and the
# MPI settings the tasks need (PMIx, TCP over eth0).

slurm_need() {
    cluster_need   # CB_SKIP_CLUSTER, root, namespaces (tests/cluster/cluster.sh)
    for tool in slurmctld slurmd srun sbatch scontrol squeue scancel sinfo munged nsenter mknod; do
        command -v "$tool" >/dev/null 2>&1 ||
            skip "the Slurm test cluster needs '$tool' (packages slurmctld slurmd slurm-client munge; ci/install-deps.sh installs them)"
    done
}

slurm_up() {
    slurm_n=${1:-4}
    cluster_up "$slurm_n"
    CB_SLURM_DIR="$CLUSTER_DIR/slurm"
    trap 'slurm_down' EXIT
    CB_SLURM_NODES="h[0-$((slurm_n - 1))]"
    mkdir -p "$CB_SLURM_DIR/munge" "$CB_SLURM_DIR/state" "$CB_SLURM_DIR/log" "$CB_SLURM_DIR/dev" \
        "$CB_SLURM_DIR/jobs" || exit 99
    chmod 755 "$CLUSTER_DIR" "$CB_SLURM_DIR" "$CB_SLURM_DIR/munge"
    i=0
    while [ "$i" -lt "$slurm_n" ]; do
        mkdir -p "$CB_SLURM_DIR/spool/h$i" "$CB_SLURM_DIR/tmp/h$i" || exit 99
        i=$((i + 1))
    done
    # Fake GPUs: Slurm wants character devices in gres.conf's File= (plain
    # files drop the GPUs and drain the node); these are /dev/null's.
    CB_SLURM_GPUS=${CB_SLURM_GPUS:-4}
    g=0
    while [ "$g" -lt "$CB_SLURM_GPUS" ]; do
        g=$((g + 1))
        mknod "$CB_SLURM_DIR/dev/nvidia$((g - 1))" c 1 3 || skip "cannot make device nodes here (mknod)"
    done
    slurm_write_conf
    srun --mpi=list 2>&1 | grep -q pmix ||
        skip "this Slurm has no PMIx plugin (srun --mpi=list), which Open MPI's ranks need"
    slurm_start_munge
    # slurmctld and the slurmd of node 0 in node 0's namespaces, each slurmd
    # in its node's. Not ip netns exec: it remounts /sys, and slurmd then
    # finds no cgroup file system and dies. $! is the daemon itself (nsenter,
    # unshare and sh exec it).
    slurm_on 0 slurmctld -D -f "$SLURM_CONF" >"$CB_SLURM_DIR/log/slurmctld.out" 2>&1 &
    echo $! >"$CB_SLURM_DIR/slurmctld.pids"
    i=0
    while [ "$i" -lt "$slurm_n" ]; do
        slurm_on "$i" slurmd -D -N "h$i" -f "$SLURM_CONF" >"$CB_SLURM_DIR/log/slurmd.h$i.out" 2>&1 &
        echo $! >>"$CB_SLURM_DIR/slurmd.pids"
        i=$((i + 1))
    done
    slurm_wait_idle || {
        slurm_exec sinfo -N -l >&2
        tail -n 20 "$CB_SLURM_DIR"/log/* >&2
        fail "the Slurm cluster did not come up (logs above)"
    }
    # The tasks are Open MPI ranks started by srun (PMIx): TCP on the
    # nodes' NICs, idle ranks yield (8 and more ranks on 2 cores), and
    # pml ob1, which runs anyway, spares each rank UCX's probing.
    OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_mpi_yield_when_idle=1
    OMPI_MCA_pml=ob1
    CB_STANDIN_GPUS=$CB_SLURM_GPUS
    export OMPI_MCA_btl OMPI_MCA_btl_tcp_if_include OMPI_MCA_mpi_yield_when_idle OMPI_MCA_pml
    export CB_STANDIN_GPUS
    slurm_probe_mpi
}

# Debian's Open MPI 4.1 starts under srun --mpi=pmix (the tests' premise:
# a failure there is a failure); another MPI the program was built with may
# not (MPICH without PMIx support starts singletons), and then the tests
# skip rather than test that MPI's build.
slurm_probe_mpi() {
    rc=0
    slurm_exec srun --mpi=pmix -N2 --ntasks-per-node=1 "$CB_BIN" --backend mpi -b 8 -e 8 -n 1 -w 0 \
        </dev/null >"$CB_TMP/probe.out" 2>"$CB_TMP/probe.err" || rc=$?
    [ "$rc" = 0 ] && grep -q '^# ranks: 2  nodes: 2 ' "$CB_TMP/probe.out" && return 0
    [ "${CB_LAUNCHER:-}" = ompi4 ] ||
        skip "this MPI's ranks do not start as one job under srun --mpi=pmix (status $rc): $(head -n 1 "$CB_TMP/probe.err")"
    cat "$CB_TMP/probe.out" "$CB_TMP/probe.err" >&2
    fail "2 ranks of the program under srun --mpi=pmix (status $rc, output above)"
}

# slurm_on I CMD...: CMD on node I with hI as its hostname, the cluster's
# hosts file as /etc/hosts and a /dev/shm of its own (a private mount
# namespace), as a real node has: Open MPI names its shared memory files by
# hostname and Slurm job, so a shared /dev/shm let ranks attach to files
# another test's job of the same number left and hang. (Its session folder
# in /tmp is named the same way: each test's job numbers start elsewhere,
# FirstJobId.)
slurm_on() {
    node=$1
    shift
    # exec: called in the background, so $! is the command's own PID.
    exec nsenter --net="/run/netns/${CLUSTER_NS}h$node" unshare --uts --mount sh -c \
        'hostname "$0" && mount --bind "$1" /etc/hosts && mount -t tmpfs -o size=256m,mode=1777 cbshm /dev/shm &&
         shift && exec "$@"' \
        "h$node" "$CLUSTER_DIR/hosts" "$@"
}

slurm_write_conf() {
    SLURM_CONF="$CB_SLURM_DIR/slurm.conf"
    export SLURM_CONF
    cat >"$SLURM_CONF" <<EOF
ClusterName=cbtest
SlurmctldHost=h0($(cluster_addr 0))
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
AuthInfo=socket=$CB_SLURM_DIR/munge/socket
CredType=cred/munge
StateSaveLocation=$CB_SLURM_DIR/state
SlurmdSpoolDir=$CB_SLURM_DIR/spool/%n
SlurmctldPidFile=$CB_SLURM_DIR/slurmctld.pid
SlurmdPidFile=$CB_SLURM_DIR/spool/%n/slurmd.pid
SlurmctldLogFile=$CB_SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$CB_SLURM_DIR/log/slurmd.%n.log
TmpFS=$CB_SLURM_DIR/tmp/%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=pmix
GresTypes=gpu
SchedulerType=sched/builtin
FirstJobId=$(( ($$ % 60000) * 1000 + 1 ))
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=2
MinJobAge=300
SlurmctldDebug=info
SlurmdDebug=info
${CB_SLURM_CONF_EXTRA:-}
NodeName=DEFAULT CPUs=16 Boards=1 SocketsPerBoard=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:$CB_SLURM_GPUS State=UNKNOWN
EOF
    i=0
    while [ "$i" -lt "$slurm_n" ]; do
        echo "NodeName=h$i NodeAddr=$(cluster_addr "$i")" >>"$SLURM_CONF"
        i=$((i + 1))
    done
    echo "PartitionName=test Nodes=ALL Default=YES MaxTime=60 State=UP OverSubscribe=NO" >>"$SLURM_CONF"
    cat >"$CB_SLURM_DIR/gres.conf" <<EOF
AutoDetect=off
Name=gpu File=$CB_SLURM_DIR/dev/nvidia[0-$((CB_SLURM_GPUS - 1))]
EOF
}

slurm_start_munge() {
    dd if=/dev/urandom of="$CB_SLURM_DIR/munge/key" bs=1024 count=1 2>/dev/null &&
        chmod 400 "$CB_SLURM_DIR/munge/key" || exit 99
    munged -F --socket="$CB_SLURM_DIR/munge/socket" --key-file="$CB_SLURM_DIR/munge/key" \
        --pid-file="$CB_SLURM_DIR/munge/pid" --log-file="$CB_SLURM_DIR/log/munged.log" \
        --seed-file="$CB_SLURM_DIR/munge/seed" >"$CB_SLURM_DIR/log/munged.out" 2>&1 &
    echo $! >"$CB_SLURM_DIR/munged.pids"
    tries=0
    until [ -S "$CB_SLURM_DIR/munge/socket" ]; do
        tries=$((tries + 1))
        [ "$tries" -le 50 ] || { cat "$CB_SLURM_DIR/log/munged.out" >&2; fail "munged did not start"; }
        sleep 0.1
    done
}

# Ready when slurmctld answers and every node is idle (polled, 30 s at most).
slurm_wait_idle() {
    deadline=$(($(date +%s) + 30))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        states=$(CB_SLURM_TIMEOUT=5 slurm_exec sinfo -h -N -o '%N %T' 2>/dev/null | sort -u)
        if [ -n "$states" ] && [ "$(echo "$states" | grep -c ' idle$')" = "$slurm_n" ]; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}

slurm_exec() {
    # In the background with wait, as cluster_exec: traps run at once.
    timeout -k 5 "${CB_SLURM_TIMEOUT:-120}" nsenter --net="/run/netns/${CLUSTER_NS}h0" \
        unshare --uts sh -c 'hostname h0 && exec "$@"' sh "$@" <&0 &
    wait $!
}

slurm_run() {
    launch_tries=0
    while :; do
        rc=0
        slurm_exec "$@" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
        slurm_start_failed || break
    done
}

# slurm_start_failed: the last run failed in Open MPI's start under srun,
# before the program printed anything: a rank crashed there (Open MPI's
# "Process received signal", status 139) or the ranks never finished
# connecting (the time limit, or with -T the program's own timeout "at
# start-up", status 3, far sooner: the others wait for a crashed rank in
# their first collective). Seen now and then on this machine under load
# (2 cores, every helper's tests), twice in a row at a load of 20; not the program's
# doing, so the caller runs it again, at most twice, with a note (as
# launcher_never_started in tests/support/lib.sh).
slurm_start_failed() {
    [ ! -s "$CB_TMP/out" ] && [ "${launch_tries:=0}" -lt 2 ] || return 1
    case "$rc" in
        139) grep -q 'Process received signal' "$CB_TMP/err" || return 1 ;;
        124) ;;
        3) grep -q 'timeout: no progress .* at start-up' "$CB_TMP/err" || return 1 ;;
        *) return 1 ;;
    esac
    launch_tries=$((launch_tries + 1))
    echo "note: the ranks' MPI start failed under srun (status $rc, no output); running again" >&2
}

# slurm_health_scan JOB SECONDS ARGS...: nccl-collbench-health ARGS as a
# step of allocation JOB, within SECONDS (slurm_run: $rc, out, err). On
# this machine a step of it sometimes fails before the program's first
# line: a rank crashes in Open MPI's start (status 139) or the ranks never
# finish connecting (-T's timeout at start-up, status 3). Neither is the
# tool's doing, which then says it could not check (3) with the program's
# last 5 lines; such a scan is run again, at most four times, with a note
# and its stderr. A timeout those lines place in the health scan is the
# scan's own fault and is never run again. At a load of 12 to 20 up to
# half the starts crashed in one run (6 of 12 steps); a crashed start
# costs 1 to 20 s.
slurm_health_scan() {
    _hs_job=$1 _hs_seconds=$2
    shift 2
    _hs_tries=0
    while :; do
        CB_SLURM_TIMEOUT=$_hs_seconds slurm_run env SLURM_JOB_ID="$_hs_job" \
            SLURM_JOB_NODELIST="$CB_SLURM_NODES" "$CB_BUILDDIR/src/nccl-collbench-health" "$@"
        # (A step that timed out is run again by slurm_run.)
        [ "$rc" = 3 ] && [ "$_hs_tries" -lt 4 ] || break
        grep -q 'the scan exited with status 139$' "$CB_TMP/err" ||
            { grep -q 'the scan exited with status 3$' "$CB_TMP/err" &&
                  ! grep -q 'health scan' "$CB_TMP/err"; } || break
        _hs_tries=$((_hs_tries + 1))
        echo "note: the scan's MPI start failed (status $rc); scanning again; its stderr:" >&2
        sed 's/^/  /' "$CB_TMP/err" >&2
    done
}

# slurm_node_run I CMD...: as slurm_run, on node I as slurmd runs its
# HealthCheckProgram (outside any job, hostname hI).
slurm_node_run() {
    node=$1
    shift
    rc=0
    slurm_on "$node" timeout -k 5 "${CB_SLURM_TIMEOUT:-120}" "$@" \
        </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
    wait $! || rc=$?
}

# slurm_wait_job ID: polls until the job has left the queue's live states;
# prints "STATE EXITCODE" (exit code as Slurm shows it, STATUS:SIGNAL).
slurm_wait_job() {
    deadline=$(($(date +%s) + ${CB_SLURM_TIMEOUT:-60}))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        line=$(CB_SLURM_TIMEOUT=5 slurm_exec scontrol -o show job "$1" 2>/dev/null)
        state=$(echo "$line" | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p')
        case "$state" in
            ""|PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED) ;;
            *) echo "$state $(echo "$line" | sed -n 's/.* ExitCode=\([0-9:]*\) .*/\1/p')"; return 0 ;;
        esac
        sleep 0.2
    done
    echo "TIMEOUT -"
    return 1
}

slurm_node_state() {
    CB_SLURM_TIMEOUT=10 slurm_exec sinfo -h -N -n "$1" -o '%T|%E' | head -n 1
}

# Stop everything whatever happened; safe to repeat.
slurm_down() {
    if [ -n "${CB_SLURM_DIR:-}" ] && [ -d "$CB_SLURM_DIR" ]; then
        CB_SLURM_TIMEOUT=5 slurm_exec scancel --quiet --partition=test >/dev/null 2>&1 || true
        for file in slurmd.pids slurmctld.pids munged.pids; do
            [ -f "$CB_SLURM_DIR/$file" ] || continue
            # shellcheck disable=SC2046
            kill $(cat "$CB_SLURM_DIR/$file") 2>/dev/null
        done
        # Give them 2 s to go, then kill what is left by its PID.
        tries=0
        while [ "$tries" -lt 20 ]; do
            alive=""
            for pid in $(cat "$CB_SLURM_DIR"/*.pids 2>/dev/null); do
                kill -0 "$pid" 2>/dev/null && alive="$alive $pid"
            done
            [ -n "$alive" ] || break
            tries=$((tries + 1))
            sleep 0.1
        done
        [ -z "${alive:-}" ] || kill -9 $alive 2>/dev/null
    fi
    # Leftover slurmstepd and tasks live in the nodes' namespaces:
    # cluster_down kills every process there, then removes them and links.
    cluster_down
    [ -n "${CB_SLURM_DIR:-}" ] && rm -rf "$CB_SLURM_DIR"
    CB_SLURM_DIR=""
}

# slurm_devices RANKS NODES: the last run's "Using devices" lines show RANKS
# ranks on NODES Slurm nodes (h0...), and no two ranks of a node on one GPU
# (bus id).
slurm_devices() {
    "$CB_PYTHON" - "$CB_TMP/out" "$1" "$2" <<'PY' || show_and_fail "GPUs per rank"
import re, sys
lines = [l for l in open(sys.argv[1]) if re.match(r"^#  Rank +\d+ ", l)]
seen = {}
for l in lines:
    m = re.match(r"^#  Rank +(\d+) +Pid +\d+ +on +(\S+) +device +(-?\d+) +\[(\S+)\]", l)
    assert m, l
    rank, host, bus = int(m.group(1)), m.group(2), m.group(4)
    assert re.match(r"^h\d+$", host), "host %s is not a Slurm node name" % host
    assert (host, bus) not in seen, "ranks %d and %d on %s share GPU %s" % (seen[(host, bus)], rank, host, bus)
    seen[(host, bus)] = rank
assert len(seen) == int(sys.argv[2]), "%d ranks, expected %s" % (len(seen), sys.argv[2])
assert len({h for h, _ in seen}) == int(sys.argv[3]), sorted(seen)
PY
}
