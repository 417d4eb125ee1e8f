# nccl-collbench-health judged by --expect, and run by a real slurmd as its
# HealthCheckProgram, on a Slurm cluster of 4 nodes (2 ranks a node, the MPI
# backend, floors from an --expect FILE of host: rules that this machine
# cannot meet on one node and meets on the others).
# --scan --expect, a step of a 4-node allocation: h1, whose floor cannot be
# met, is drained with a reason naming its measured and expected busbw;
# h0, h2 and h3, whose floors are met, are not (status 1).
# HealthCheckProgram: slurm.conf names a wrapper (HealthCheckInterval 2 s)
# that runs the tool in node mode, as a site would; it acts on the nodes the
# test arms. slurmd drains h1 (floor not met, reason "nccl-collbench: ...
# busbw X GB/s is E of expected Y GB/s") and leaves h2 (floor met) alone;
# then h1's floor is lowered and slurmd's next check returns it. What
# slurmd gives the program (its environment) goes to this test's log.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
. "$CB_SRCDIR/tests/slurm/slurm.sh"
need_mpirun
slurm_need
HEALTH="$CB_BUILDDIR/src/nccl-collbench-health"
[ -x "$HEALTH" ] || fail "$HEALTH was not built"

# The HealthCheckProgram: slurm.conf takes a path and no arguments, so a
# site writes a wrapper with its options. Nodes not armed (the file
# "armed" lists them) return at once: slurmd runs it at start too, before
# the node registers, and the other checks of this test come first. It is
# written once the cluster's slurm.conf is known (a stand-in until then).
hc="$CB_TMP/hc"
mkdir -p "$hc" || exit 99
: >"$hc/armed"
printf '#!/bin/sh\nexit 0\n' >"$hc/check.sh"
chmod 755 "$hc" "$hc/check.sh"
CB_SLURM_CONF_EXTRA="HealthCheckProgram=$hc/check.sh
HealthCheckInterval=2
HealthCheckNodeState=ANY"
slurm_up 4
cat >"$hc/check.new" <<EOF
#!/bin/sh
node=\${SLURMD_NODENAME:-unknown}
# written whole, then renamed: slurmd runs this every 2 s, and the test
# reads the file while the next check may be writing it
env | sort >"$hc/env.\$node.\$\$" && mv -f "$hc/env.\$node.\$\$" "$hc/env.\$node"
grep -qw "\$node" "$hc/armed" || exit 0
# What slurmd does not give: slurm.conf where this cluster has it, and
# Open MPI's leave to run as root.
SLURM_CONF=$SLURM_CONF OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SLURM_CONF OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
rc=0
timeout -k 5 50 "$HEALTH" --gpus 2 --expect "$hc/floors" \\
    -- --backend mpi -b 1K -e 4K -n 2 -w 1 >>"$hc/log.\$node" 2>&1 || rc=\$?
echo "status \$rc" >>"$hc/log.\$node"
exit 0
EOF
chmod 755 "$hc/check.new" && mv "$hc/check.new" "$hc/check.sh" || exit 99

state() { slurm_node_state "$1"; }
not_drained() {
    case "$(state "$1")" in drain*) fail "$2: node $1 is drained: $(state "$1")" ;; esac
}
# the figure of a row below its expectation, as the drain reason has it
BELOW='busbw [0-9.]* GB/s is [0-9.]* of expected 1000000000.00 GB/s (--expect-ratio 0.8)'
# the ownership token that ends the tool's reasons
TOKEN='\[cb:[0-9a-f]\{16\}\]'

# --scan --expect in an allocation of the 4 nodes.
cat >"$CB_TMP/floors" <<'EOF'
host:h1        allreduce 256K 1e9
host:h[023]    allreduce 256K 1e-9
EOF
slurm_run salloc --no-shell -N4 --ntasks-per-node=2 --time=10
expect_rc 0 "salloc"
job=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' "$CB_TMP/err")
[ -n "$job" ] || show_and_fail "salloc granted no allocation"
# A step whose ranks failed in Open MPI's start is run again
# (slurm_health_scan).
slurm_health_scan "$job" 60 --scan --gpus 2 --expect "$CB_TMP/floors" \
    -- --backend mpi -b 256K -e 256K -n 3 -w 1 --suspect-ratio 0.1 -T 20
expect_rc 1 "--scan --expect, h1's floor not met"
state h1 | grep -q "^drain[a-z]*|nccl-collbench: allreduce float sum 262144 B out-of-place group 1 $BELOW $TOKEN\$" ||
    show_and_fail "h1 is not drained with its figures: $(state h1)"
for n in h0 h2 h3; do not_drained $n "--scan --expect"; done
slurm_exec scancel "$job"
slurm_exec scontrol update NodeName=h1 State=RESUME || fail "resume h1"

# HealthCheckProgram: slurmd runs the tool on h1 and h2.
cat >"$hc/floors" <<'EOF'
host:h1 allreduce 1K 1e9
host:h2 allreduce 1K 1e-9
EOF
echo "h1 h2" >"$hc/armed"
# wait_for WHAT CONDITION...: poll the condition (a command) for at most
# 60 s, every second.
wait_for() {
    what=$1
    shift
    deadline=$(($(date +%s) + 60))
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || {
            for f in "$hc"/log.* "$hc/env.h1"; do echo "--- $f" >&2; tail -n 30 "$f" >&2; done
            fail "slurmd's health check: $what within 60 s (h1: $(state h1); h2: $(state h2))"
        }
        sleep 1
    done
}
# The tool drains, then exits, then the wrapper logs its status: wait for
# both, so the status is read once written.
h1_drained_by_check() {
    state h1 | grep -q "^drain[a-z]*|nccl-collbench: allreduce float sum [0-9]* B out-of-place $BELOW $TOKEN\$" &&
        grep -q '^status ' "$hc/log.h1" 2>/dev/null
}
h2_checked() { grep -q '^status 0$' "$hc/log.h2" 2>/dev/null; }
wait_for "h1 drained" h1_drained_by_check
wait_for "h2 checked healthy" h2_checked
grep -q '^status 1$' "$hc/log.h1" || fail "h1's check did not end with status 1: $(cat "$hc/log.h1")"
for n in h0 h2 h3; do not_drained $n "slurmd's health check"; done
cp "$hc/env.h1" "$CB_TMP/env.h1" || exit 99
echo "What slurmd gives its HealthCheckProgram (h1):"
sed 's/^/  /' "$CB_TMP/env.h1"
grep -q '^SLURMD_NODENAME=h1$' "$CB_TMP/env.h1" || fail "slurmd did not give SLURMD_NODENAME=h1"
grep -q '^SLURM_JOB' "$CB_TMP/env.h1" && fail "a HealthCheckProgram with a job's environment"

# h1's floor lowered: slurmd's next check returns it.
printf 'host:h[12] allreduce 1K 1e-9\n' >"$hc/floors.new" && mv "$hc/floors.new" "$hc/floors"
h1_returned() { case "$(state h1)" in drain*) return 1 ;; esac; }
wait_for "h1 returned" h1_returned
grep -q 'node h1 passed: returned to service' "$hc/log.h1" || fail "h1 returned, not by the tool"
: >"$hc/armed"
not_drained h2 "h1 returned"
echo ok
