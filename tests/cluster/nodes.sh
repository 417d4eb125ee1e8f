# On the test cluster (tests/cluster/cluster.sh: 2 nodes of 2 ranks, real
# hostnames, TCP between nodes): node detection in the preamble and the
# "Using devices" lines, --split node, and hier_allreduce with --hier-split
# node, verified.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
need_mpirun
need_python
cluster_need
cluster_up 2
cluster_launcher "$CB_MPIRUN_PATH" || skip "unknown launcher $CB_MPIRUN_PATH"

cluster_run 4 --backend mpi -o allreduce -b 8 -e 1K -f 4 -n 2 -c 1
expect_rc 0 "allreduce on 2 nodes"
has 1 '^# ranks: 4  nodes: 2  ranks per node: 2$'
for r in 0 1 2 3; do
    has 1 "^#  Rank   $r  Pid  *[0-9]*  on h$((r / 2)) "
done
check check-sweep --table "$CB_TMP/out" --ranks 4 --sizes 8,32,128,512

# --split node: one group per node, each its node's two ranks.
cluster_run 4 --backend mpi --split node -o allreduce,allgather -b 8 -e 512 -f 8 -n 2 -c 1
expect_rc 0 "--split node"
grep -q '^# split node: 2 group' "$CB_TMP/out" || show_and_fail "no split note"
has 1 '^# group 0: 2 ranks: 0,1 on host h0$'
has 1 '^# group 1: 2 ranks: 2,3 on host h1$'
has 6 '^ *[0-9].* 0  h0$'
has 6 '^ *[0-9].* 1  h1$'
check check-sweep --table "$CB_TMP/out" --ranks 4 --sizes 8,64,512 \
    --collective allreduce,allgather --group-sizes 2,2

# hier_allreduce: inner groups are the nodes, the outer step crosses TCP.
cluster_run 4 --backend mpi --hier-split node -o hier_allreduce -d float,int32 --redop sum,max \
    -b 8 -e 4K -f 8 -n 2 -c 1
expect_rc 0 "hier_allreduce --hier-split node"
check check-sweep --table "$CB_TMP/out" --ranks 4 --sizes 8,64,512,4096 \
    --collective hier_allreduce --dtypes float,int32 --redops sum,max
echo "ok ($CLUSTER_FLAVOR)"
