# The test cluster's traffic controls are in the path of the program's
# traffic: after a slow link between nodes 0 and 1 and a slow NIC on node 2,
# an all-reduce and an all-to-all over 3 nodes send bytes through the shaped link class on
# nodes 0 and 1 (and only there) and through node 2's tbf. No timing is
# asserted; the health scan's tests (once it exists) judge the slowness.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
need_mpirun
cluster_need
cluster_up 3
CLUSTER_SLOTS=1
cluster_launcher "$CB_MPIRUN_PATH" || skip "unknown launcher $CB_MPIRUN_PATH"
cluster_slow_link 0 1 100mbit || fail "could not shape the link between nodes 0 and 1"
cluster_slow_node 2 100mbit || fail "could not shape node 2's NIC"

cluster_run 3 --backend mpi -o allreduce,alltoall -b 192K -e 192K -n 3 -c 1
expect_rc 0 "allreduce and alltoall on a shaped cluster"

# sent NODE KIND ID: bytes sent through a class (htb) or qdisc (tbf).
sent() {
    tc -n "${CLUSTER_NS}h$1" -s "$2" show dev eth0 | grep -A1 "^$2 $3 " |
        sed -n 's/^ *Sent \([0-9]*\) bytes.*/\1/p'
}
for node in 0 1; do
    bytes=$(sent "$node" class "htb 1:10")
    [ -n "$bytes" ] && [ "$bytes" -gt 65536 ] ||
        fail "node $node: ${bytes:-no} bytes through the slow link class"
done
bytes=$(sent 2 qdisc "tbf")
[ -n "$bytes" ] && [ "$bytes" -gt 65536 ] || fail "node 2: ${bytes:-no} bytes through its tbf"
tc -n "${CLUSTER_NS}h2" qdisc show dev eth0 | grep -q htb && fail "node 2 has a link class"
echo "ok ($CLUSTER_FLAVOR)"
