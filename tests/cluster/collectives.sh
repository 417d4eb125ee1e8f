# On the test cluster, 3 nodes of 1 rank each, so every message crosses TCP
# between network namespaces: every collective, datatype, reduction and
# root on small sizes, out of place and in place, verified.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
need_mpirun
need_python
cluster_need
cluster_up 3
CLUSTER_SLOTS=1
cluster_launcher "$CB_MPIRUN_PATH" || skip "unknown launcher $CB_MPIRUN_PATH"

CB_RUN_TIMEOUT=300 cluster_run 3 --backend mpi -o all -d all --redop all -r all \
    -b 12 -e 36 -f 3 -n 1 -w 0 -c 1 --csv "$CB_TMP/all.csv"
expect_rc 0 "every combination on 3 nodes"
has 1 '^# ranks: 3  nodes: 3  ranks per node: 1$'
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/all.csv" --ranks 3 --sizes 12,36 \
    --collective all --dtypes all --redops all --roots all
echo "ok ($CLUSTER_FLAVOR)"
