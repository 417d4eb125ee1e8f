#!/bin/sh
# Open the test cluster for a person: make N nodes (network namespaces with
# hostnames h0..), then run the program on them from node 0, or open a shell
# on node 0. Everything is removed when it ends. Needs root.
#   sh tests/cluster/run.sh [-n NODES] [-s RANKS_PER_NODE] [-m MPIRUN]
#                           [-b PROGRAM] [--shell] [--slow-node I:RATE]
#                           [--slow-link I:J:RATE] [--cut I:SECONDS] [-- ARGS...]
# Defaults: 2 nodes, 2 ranks a node, mpirun from PATH, the program built in
# _build/ (else in the source tree). Faults: node I's NIC shaped to RATE
# (tc units: 10mbit), only traffic between nodes I and J shaped, node I's
# cable cut SECONDS after the start.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
nodes=2
slots=2
mpirun=$(command -v mpirun || true)
program=""
shell=0
faults=""
usage() {
    sed -n '5,12p' "$0" | sed 's/^# *//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
        -n) nodes=${2:-}; shift 2 || usage ;;
        -s) slots=${2:-}; shift 2 || usage ;;
        -m) mpirun=${2:-}; shift 2 || usage ;;
        -b) program=${2:-}; shift 2 || usage ;;
        --shell) shell=1; shift ;;
        --slow-node|--slow-link|--cut) faults="$faults $1=${2:-}"; shift 2 || usage ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) echo "run.sh: unknown option '$1'" >&2; usage ;;
    esac
done
case "$nodes" in ''|*[!0-9]*) echo "run.sh: -n '$nodes' is not a node count" >&2; exit 2 ;; esac
case "$slots" in ''|*[!0-9]*) echo "run.sh: -s '$slots' is not a rank count" >&2; exit 2 ;; esac
[ "$nodes" -ge 1 ] && [ "$nodes" -le 64 ] || { echo "run.sh: -n $nodes: use 1 to 64 nodes" >&2; exit 2; }
if [ -z "$program" ]; then
    for program in "$top/_build/src/nccl-collbench" "$top/src/nccl-collbench"; do
        [ -x "$program" ] && break
    done
fi
[ -x "$program" ] || { echo "run.sh: no built program at '$program' (build first, or -b PROGRAM)" >&2; exit 2; }
[ -n "$mpirun" ] && [ -x "$mpirun" ] || { echo "run.sh: no mpirun '$mpirun' (-m MPIRUN)" >&2; exit 2; }

. "$here/cluster.sh"
cluster_need
cluster_up "$nodes"
CLUSTER_SLOTS=$slots
cluster_launcher "$mpirun" || { echo "run.sh: '$mpirun' is not Open MPI or MPICH's Hydra" >&2; exit 2; }
# The timers that cut cables end with the cluster.
cutters=""
trap 'for p in $cutters; do kill "$p" 2>/dev/null; done; cluster_down' EXIT
for fault in $faults; do
    spec=${fault#*=}
    case "$fault" in
        --slow-node=*:*) cluster_slow_node "${spec%%:*}" "${spec#*:}" ;;
        --slow-link=*:*:*) rest=${spec#*:}; cluster_slow_link "${spec%%:*}" "${rest%%:*}" "${rest#*:}" ;;
        --cut=*:*) (sleep "${spec#*:}" && cluster_cut "${spec%%:*}" &&
                    echo "run.sh: cut node ${spec%%:*}'s cable" >&2) &
                   cutters="$cutters $!" ;;
        *) false ;;
    esac || { echo "run.sh: bad fault '$fault'" >&2; exit 2; }
done
echo "run.sh: $nodes nodes (h0..h$((nodes - 1))), $slots ranks a node, launcher $CLUSTER_FLAVOR" >&2
if [ "$shell" = 1 ]; then
    echo "run.sh: a shell on h0; \$MPIRUN launches on the cluster, e.g." >&2
    echo "  \$MPIRUN -np $((nodes * slots)) $program -o allreduce" >&2
    echo "run.sh: fault controls from another shell are in tests/cluster/cluster.sh" >&2
    MPIRUN=$CLUSTER_MPIRUN CLUSTER_TIMEOUT=86400 cluster_exec 0 env MPIRUN="$CLUSTER_MPIRUN" "${SHELL:-/bin/sh}"
    exit $?
fi
CLUSTER_TIMEOUT=${CLUSTER_TIMEOUT:-3600} cluster_exec 0 $CLUSTER_MPIRUN -np "$((nodes * slots))" "$program" "$@"
