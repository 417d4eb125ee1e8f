# A cluster of N nodes on this one machine, for the tests (sourced, POSIX sh).
# Each node is a network namespace with its own loopback and one NIC (eth0,
# 10.77.0.(10+i)/24), cabled to a bridge that lives in a namespace of its
# own, so nothing here touches the machine's own network and no packet
# leaves these namespaces. Each command on a node runs in a UTS namespace
# of its own whose hostname is hI. Launchers reach the nodes through an
# agent in place of ssh (cluster_launcher).
#
#   cluster_need              exit 77 unless namespaces can be made here (or
#                             when CB_SKIP_CLUSTER is set)
#   cluster_up N              make nodes h0..h(N-1); teardown is trapped
#   cluster_down              remove everything (runs on any exit)
#   cluster_exec I CMD...     run CMD on node I, killed after CLUSTER_TIMEOUT
#                             seconds (default 120)
#   cluster_launcher MPIRUN   set CLUSTER_MPIRUN to MPIRUN with the options
#                             that make it use the agent, CLUSTER_FLAVOR to
#                             ompi4, ompi5 or hydra
#   cluster_run NP ARGS...    the program (CB_BIN) on NP ranks from node 0,
#                             CLUSTER_SLOTS (2) ranks a node; like run in
#                             tests/support/lib.sh: $CB_TMP/out, $CB_TMP/err, $rc
#   cluster_slow_node I RATE  shape node I's NIC to RATE (tbf), e.g. 10mbit
#   cluster_slow_link I J RATE  shape only traffic between nodes I and J
#   cluster_cut I             pull node I's cable (its NIC goes down)
#   cluster_unshape I         remove node I's shaping (slow node or links)
# Sets CLUSTER_DIR (hostfile, agent, logs) and CLUSTER_NS (the name prefix).

cluster_need() {
    if [ -n "${CB_SKIP_CLUSTER:-}" ]; then
        echo "SKIP: CB_SKIP_CLUSTER is set (ci/check.sh runs the cluster tests in other builds)"; exit 77
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: the test cluster needs root (network namespaces)"; exit 77
    fi
    for tool in ip unshare tc timeout; do
        command -v "$tool" >/dev/null 2>&1 ||
            { echo "SKIP: the test cluster needs '$tool', which is not installed"; exit 77; }
    done
    probe="cbprobe$$"
    if ! ip netns add "$probe" 2>/dev/null; then
        echo "SKIP: cannot create a network namespace here (no CAP_NET_ADMIN?)"; exit 77
    fi
    ok=1
    ip netns exec "$probe" unshare --uts true 2>/dev/null || ok=0
    ip -n "$probe" link add name cbva type veth peer name cbvb 2>/dev/null || ok=0
    ip netns del "$probe"
    [ "$ok" = 1 ] ||
        { echo "SKIP: namespaces work but veth pairs or UTS namespaces do not"; exit 77; }
}

cluster_addr() { echo "10.77.0.$((10 + $1))"; }

cluster_up() {
    CLUSTER_N=$1
    # Names unique to this test, short enough for interface names (15).
    CLUSTER_NS="cb$$"
    CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/cb-cluster.XXXXXX") || exit 99
    trap 'cluster_down' EXIT
    trap 'exit 1' INT TERM HUP
    ip netns add "${CLUSTER_NS}sw" || exit 99
    ip -n "${CLUSTER_NS}sw" link add name br0 type bridge || exit 99
    ip -n "${CLUSTER_NS}sw" link set br0 up || exit 99
    printf '127.0.0.1 localhost\n' >"$CLUSTER_DIR/hosts"
    i=0
    while [ "$i" -lt "$CLUSTER_N" ]; do
        printf '%s h%d\n' "$(cluster_addr "$i")" "$i" >>"$CLUSTER_DIR/hosts"
        i=$((i + 1))
    done
    i=0
    while [ "$i" -lt "$CLUSTER_N" ]; do
        ns="${CLUSTER_NS}h$i"
        ip netns add "$ns" || exit 99
        # ip netns exec shows /etc/netns/NS/hosts as /etc/hosts: the
        # node names resolve inside the cluster only.
        mkdir -p "/etc/netns/$ns" && cp "$CLUSTER_DIR/hosts" "/etc/netns/$ns/hosts" || exit 99
        ip -n "$ns" link set lo up &&
        ip -n "$ns" link add name eth0 type veth peer name "p$i" netns "${CLUSTER_NS}sw" &&
        ip -n "$ns" addr add "$(cluster_addr "$i")/24" dev eth0 &&
        ip -n "$ns" link set eth0 up &&
        ip -n "${CLUSTER_NS}sw" link set "p$i" master br0 &&
        ip -n "${CLUSTER_NS}sw" link set "p$i" up || exit 99
        i=$((i + 1))
    done
    cluster_write_agent
}

# The agent stands in for ssh: AGENT [-options] HOST COMMAND... runs the
# command, joined as ssh joins it, on node HOST with HOST as its hostname.
cluster_write_agent() {
    cat >"$CLUSTER_DIR/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do
    case "\$1" in
        -o|-p|-l|-i) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
host=\$1
shift
case "\$host" in
    h[0-9]*) ;;
    *) echo "cluster agent: unknown node '\$host'" >&2; exit 255 ;;
esac
exec ip netns exec "${CLUSTER_NS}\$host" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$*"' "\$host" "\$@"
EOF
    chmod +x "$CLUSTER_DIR/agent"
}

cluster_exec() {
    node=$1
    shift
    # In the background with wait: a shell defers its traps (the teardown)
    # until a foreground command ends, but a signal interrupts wait.
    timeout -k 5 "${CLUSTER_TIMEOUT:-120}" ip netns exec "${CLUSTER_NS}h$node" \
        unshare --uts sh -c 'hostname "$0" && exec "$@"' "h$node" "$@" <&0 &
    wait $!
}

# cluster_launcher MPIRUN: the launcher's options for the agent, the
# hostfile, oversubscription and TCP on the nodes' NICs.
cluster_launcher() {
    CLUSTER_MPIRUN="$1 $(cluster_launcher_options "$1")" || return 1
    case "$CLUSTER_MPIRUN" in
        *plm_rsh_agent*) CLUSTER_FLAVOR=ompi4 ;;
        *plm_ssh_agent*) CLUSTER_FLAVOR=ompi5 ;;
        *) CLUSTER_FLAVOR=hydra ;;
    esac
    # Fill each node's slots before the next (Hydra's syntax differs).
    : >"$CLUSTER_DIR/hostfile"
    i=0
    while [ "$i" -lt "$CLUSTER_N" ]; do
        if [ "$CLUSTER_FLAVOR" = hydra ]; then
            echo "h$i:${CLUSTER_SLOTS:-2}" >>"$CLUSTER_DIR/hostfile"
        else
            echo "h$i slots=${CLUSTER_SLOTS:-2}" >>"$CLUSTER_DIR/hostfile"
        fi
        i=$((i + 1))
    done
    if [ "$CLUSTER_FLAVOR" != hydra ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
}

cluster_launcher_options() {
    version=$("$1" --version 2>&1)
    case "$version" in
        *"Open MPI"*" 4."*|*"Open MPI"*" 3."*)
            echo "--mca plm_rsh_agent $CLUSTER_DIR/agent --hostfile $CLUSTER_DIR/hostfile --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1" ;;
        *"Open MPI"*|*PRRTE*)
            echo "--prtemca plm_ssh_agent $CLUSTER_DIR/agent --hostfile $CLUSTER_DIR/hostfile --map-by :OVERSUBSCRIBE --bind-to none --mca pml ob1 --mca btl self,sm,tcp --mca btl_tcp_if_include eth0 --prtemca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1" ;;
        *HYDRA*)
            # Debian's MPICH runs on UCX, which finds one machine under the
            # namespaces and would use shared memory between the nodes. Its
            # ranks yield when idle as in tests/support/wrapper.sh.in.
            yield_lib="${CB_BUILDDIR:-}/tests/support/cb-yield-when-idle.so"
            [ -f "$yield_lib" ] && yield_lib="-genv LD_PRELOAD $yield_lib" || yield_lib=""
            echo "-launcher ssh -launcher-exec $CLUSTER_DIR/agent -f $CLUSTER_DIR/hostfile -iface eth0 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 $yield_lib" ;;
        *) return 1 ;;
    esac
}

cluster_run() {
    np=$1
    shift
    launch_tries=0
    while :; do
        rc=0
        CLUSTER_TIMEOUT=${CB_RUN_TIMEOUT:-120} cluster_exec 0 $CLUSTER_MPIRUN -np "$np" \
            "${CB_RUN_BIN:-$CB_BIN}" "$@" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
        launcher_never_started || break   # tests/support/lib.sh
    done
}

cluster_slow_node() {
    tc -n "${CLUSTER_NS}h$1" qdisc replace dev eth0 root tbf rate "$2" burst 32kbit latency 400ms
}

cluster_slow_link() {
    for pair in "$1 $2" "$2 $1"; do
        set -- $pair "$3"
        ns="${CLUSTER_NS}h$1"
        tc -n "$ns" qdisc replace dev eth0 root handle 1: htb default 1 &&
        tc -n "$ns" class replace dev eth0 parent 1: classid 1:1 htb rate 10gbit quantum 60000 &&
        tc -n "$ns" class replace dev eth0 parent 1: classid 1:10 htb rate "$3" quantum 60000 &&
        tc -n "$ns" filter add dev eth0 parent 1: protocol ip u32 \
            match ip dst "$(cluster_addr "$2")/32" flowid 1:10 || return 1
    done
}

cluster_unshape() {
    tc -n "${CLUSTER_NS}h$1" qdisc del dev eth0 root 2>/dev/null || true
}

cluster_cut() {
    ip -n "${CLUSTER_NS}sw" link set "p$1" down && ip -n "${CLUSTER_NS}h$1" link set eth0 down
}

# Kill whatever still runs on the nodes, then remove them; safe to repeat.
cluster_down() {
    [ -n "${CLUSTER_NS:-}" ] || return 0
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
        case "$ns" in "${CLUSTER_NS}h"*|"${CLUSTER_NS}sw") ;; *) continue ;; esac
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        ip netns del "$ns" 2>/dev/null
        rm -rf "/etc/netns/$ns"
    done
    rm -rf "$CLUSTER_DIR"
    CLUSTER_NS=""
}
