# The health scan (-o scan) on the test cluster: 4 nodes of 2 ranks, real
# hostnames, TCP between nodes, and faults the program cannot tell from real
# ones. A healthy cluster names nobody (exit 0); node h2's NIC shaped with
# tbf is named as a slow node (exit 8), and nobody else; the link between h0
# and h3 shaped with htb + u32 (both directions) is named as that link.
# 50 Mbit/s (6 MB/s, 3 MB/s a rank) is over 100 times below what a pair
# moves here measured alone (1.2 GB/s under a load of 20: h2's ratios
# against a control were 0.004 to 0.006), and
# 256 KiB per rank keeps the figures bandwidth-bound over the shaped NIC
# (84 ms an operation there) at a quarter of the time 1 MiB took;
# --suspect-ratio 0.3 keeps the noise of 8 ranks on 2 cores from naming
# anyone. In the scan itself a pair that shares its round with a shaped
# one reads 5 to 20 times slow (its ranks wait on cores the shaped pair's
# ranks spin on), so the shaping is checked on the re-measures alone,
# each against a control measured beside it.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/support/scan.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
need_mpirun
need_python
cluster_need
cluster_up 4
cluster_launcher "$CB_MPIRUN_PATH" || skip "unknown launcher $CB_MPIRUN_PATH"
# Debian's MPICH (UCX over TCP) measures and names as Open MPI does, but
# with 8 ranks on 4 nodes some ranks then spin in UCX's progress inside
# MPI_Finalize while the others wait in the PMI barrier, until killed (a
# plain -o allreduce of 1 MiB does the same).
[ "$CLUSTER_FLAVOR" != hydra ] ||
    skip "MPICH's ranks hang in MPI_Finalize with 8 ranks on 4 cluster nodes (UCX over TCP)"
SCAN="--backend mpi -o scan -b 256K -e 256K -n 3 -w 1 --suspect-ratio 0.3"

cluster_run 8 $SCAN --json "$CB_TMP/healthy.json"
expect_rc 0 "healthy cluster"
has 1 '^# ranks: 8  nodes: 4  ranks per node: 2$'
has 1 '^# Health scan: 4 nodes, 262144 B per rank'
has 1 '^#  *h0  *h1  *h2  *h3$'
has 0 '^# Suspect'
"$CB_PYTHON" - "$CB_TMP/healthy.json" <<'PY' || show_and_fail "healthy cluster: JSON"
import json, sys
scan = json.load(open(sys.argv[1]))["scan"]
assert scan["hosts"] == ["h0", "h1", "h2", "h3"] and scan["suspects"] == [], scan
PY

cluster_slow_node 2 50mbit || fail "could not shape node 2's NIC"
cluster_run 8 $SCAN --json "$CB_TMP/node.json"
expect_rc 8 "node h2's NIC at 50 Mbit/s"
suspects_only '^# Suspect node h2: ' "node h2's NIC at 50 Mbit/s"
"$CB_PYTHON" - "$CB_TMP/node.json" <<'PY' || show_and_fail "slow node: JSON"
import json, sys
scan = json.load(open(sys.argv[1]))["scan"]
# The shaping took hold: h2's pair, measured alone, at under a tenth of a
# pair of two other nodes measured beside it.
assert scan["suspects"] and all(x["kind"] == "node" and x["host"] == "h2"
                                and x["reason"] == "pairs" for x in scan["suspects"]), scan
assert all(x["again"] is not None and x["ratio"] < 0.1 for x in scan["suspects"]), scan
PY
cluster_unshape 2

cluster_slow_link 0 3 50mbit || fail "could not shape the link between nodes 0 and 3"
cluster_run 8 $SCAN --json "$CB_TMP/link.json"
expect_rc 8 "link h0 - h3 at 50 Mbit/s"
suspects_only '^# Suspect link h0 - h3: ' "link h0 - h3 at 50 Mbit/s"
"$CB_PYTHON" - "$CB_TMP/link.json" <<'PY' || show_and_fail "slow link: JSON"
import json, sys
scan = json.load(open(sys.argv[1]))["scan"]
assert [(x["kind"], x["host"], x["peer_host"]) for x in scan["suspects"]] == \
    [("link", "h0", "h3")], scan["suspects"]
PY
echo "ok ($CLUSTER_FLAVOR)"
