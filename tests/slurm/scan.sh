# The health scan (-o scan) started by srun on a real Slurm cluster names
# the node whose NIC is slowed (tbf, 50 Mbit/s, as tests/cluster/scan.sh) by
# its Slurm node name, and nobody else: status 8, through srun. -T 20:
# ranks that never finish Open MPI's start under srun (now and then here)
# end in 20 s (status 3, no output), and slurm_run starts them again.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
. "$CB_SRCDIR/tests/slurm/slurm.sh"
need_python
slurm_need
slurm_up 4
cluster_slow_node 2 50mbit || fail "could not shape node 2's NIC"
slurm_run srun --mpi=pmix -N4 --ntasks-per-node=2 "$CB_BIN" --backend mpi -o scan \
    -b 256K -e 256K -n 3 -w 1 --suspect-ratio 0.3 -T 20 --json "$CB_TMP/scan.json"
expect_rc 8 "srun -o scan, node h2's NIC at 50 Mbit/s"
has 1 '^#  *h0  *h1  *h2  *h3$'
grep -q '^# Suspect node h2: ' "$CB_TMP/out" || show_and_fail "node h2 is not named"
others=$(grep '^# Suspect ' "$CB_TMP/out" | grep -v '^# Suspect node h2: ' || true)
[ -z "$others" ] || show_and_fail "others named too: $others"
# The names are Slurm's: the scan's hosts are the nodes sinfo lists.
slurm_exec sinfo -h -N -o '%N' | sort -u >"$CB_TMP/nodes" || fail "sinfo"
"$CB_PYTHON" - "$CB_TMP/scan.json" "$CB_TMP/nodes" <<'PY' || show_and_fail "the scan's JSON"
import json, sys
scan = json.load(open(sys.argv[1]))["scan"]
nodes = open(sys.argv[2]).read().split()
assert sorted(scan["hosts"]) == nodes, (scan["hosts"], nodes)
assert {x["host"] for x in scan["suspects"]} == {"h2"}, scan["suspects"]
PY
echo ok
