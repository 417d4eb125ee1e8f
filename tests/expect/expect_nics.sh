# --expect auto and the NICs a node lacks (issue 44, item 5): node b with
# 4 of node a's 8 ports missing from its sysfs (absent, not DOWN) fails
# (status 8, a "# Link fault:" naming the ports), though its figure, from
# the ports it has, would pass every row. A rate file that is a FIFO is
# named as unreadable (status 6), never a hang at start-up.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/expect/lib.sh"
need_mpirun
sysfs_fixture nvlink8
SWEEP="-b 1K -e 8K -f 8 -n 2 -w 1 --expect auto --expect-ratio 1e-9"
IB=class/infiniband

# copy NAME: nvlink8 at $CB_TMP/sysfs-NAME, to change.
copy() {
    rm -rf "$CB_TMP/sysfs-$1"
    cp -R "$CB_TMP/sysfs-nvlink8" "$CB_TMP/sysfs-$1" || fail "cannot copy nvlink8"
}

# judge EXPECTED-STATUS WHAT "NODES": the MPI backend, a rank a node.
judge() {
    nodes_launcher "$3" "$CB_BIN"
    CB_RUN_BIN=$CB_TMP/nodes.sh run 2 --backend mpi -o allreduce $SWEEP
    expect_rc "$1" "$2"
}

copy fewer
rm -rf "$CB_TMP/sysfs-fewer/$IB/mlx5_4" "$CB_TMP/sysfs-fewer/$IB/mlx5_5" \
    "$CB_TMP/sysfs-fewer/$IB/mlx5_6" "$CB_TMP/sysfs-fewer/$IB/mlx5_7"
judge 8 "node b with 4 of 8 NICs" "a:nvlink8 b:fewer"
has 1 "^# Link fault: node b has 4 NIC ports, below node a with 8 (not in this node's sysfs: mlx5_4 port 1, mlx5_5 port 1, mlx5_6 port 1, mlx5_7 port 1)$"
has 1 '^# Link fault: '

copy fifo
rm -f "$CB_TMP/sysfs-fifo/$IB/mlx5_2/ports/1/rate"
mkfifo "$CB_TMP/sysfs-fifo/$IB/mlx5_2/ports/1/rate" || skip "mkfifo failed"
CB_RUN_TIMEOUT=60
judge 6 "a FIFO as a rate file" "a:nvlink8 b:fifo"
has 1 '^# Expect node b: .*, mlx5_2 port 1 up, rate unreadable (rate file not a regular file), '
echo "ok"
