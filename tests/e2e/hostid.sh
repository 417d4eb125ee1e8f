# Hosts as NCCL counts them: ranks on this machine given different
# NCCL_HOSTID values are different hosts for the node count in the preamble,
# --split node and --hier-split node (the NCCL backend's GPU choice is in
# tests/nccl/nccl_standin_select.sh). The groups are checked rank by rank, and
# every result is verified.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

# ids nodes ranks-per-node group0 group1: 4 ranks; "-" leaves the rank's
# NCCL_HOSTID unset, which is a host of its own beside any value.
while read -r ids nodes per_node g0 g1; do
    hostid_launcher "$(echo "$ids" | tr , ' ')" "$CB_BIN"
    CB_RUN_BIN=$CB_TMP/hostid.sh
    run 4 --backend mpi -o allreduce,hier_allreduce --hier-split node -b 8 -e 4K -f 8 -c 1 \
        --csv "$CB_TMP/h.csv"
    expect_rc 0 "NCCL_HOSTID $ids"
    grep -q "^# ranks: 4  nodes: $nodes  ranks per node: $per_node\$" "$CB_TMP/out" ||
        fail "NCCL_HOSTID $ids: the preamble does not count $nodes nodes of up to $per_node ranks"
    grep -q "^# group 0: [0-9]* ranks*: $g0\$" "$CB_TMP/out" ||
        fail "NCCL_HOSTID $ids: inner group 0 is not $g0"
    [ "$g1" = - ] || grep -q "^# group 1: [0-9]* ranks*: $g1\$" "$CB_TMP/out" ||
        fail "NCCL_HOSTID $ids: inner group 1 is not $g1"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/h.csv" --ranks 4 --sizes 8,64,512,4096 \
        --collective allreduce,hier_allreduce
    awk -F, -v n="$nodes" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                           $c["nodes"] != n { exit 1 }' "$CB_TMP/h.csv" ||
        fail "NCCL_HOSTID $ids: the CSV's nodes column is not $nodes"

    # --split node makes the same groups.
    run 4 --backend mpi --split node -o allreduce -b 8 -e 64 -f 8 -c 1
    expect_rc 0 "--split node, NCCL_HOSTID $ids"
    grep -q "^# group 0: [0-9]* ranks*: $g0 on host [^,]*\$" "$CB_TMP/out" ||
        fail "--split node, NCCL_HOSTID $ids: group 0 is not $g0 on one host"
done <<'CASES'
-,-,-,- 1 4 0,1,2,3 -
a,a,b,b 2 2 0,1 2,3
a,b,a,b 2 2 0,2 1,3
x,y,-,x 3 2 0,3 1
n0,n1,n2,n3 4 1 0 1
CASES
echo "ok"
