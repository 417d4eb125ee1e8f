# nccl-collbench-health on a real Slurm cluster of 4 nodes (2 ranks a node,
# the MPI backend). --scan, a step of one 4-node allocation: healthy, nothing
# drained (status 0); node h2's NIC at 50 Mbit/s: h2 is drained with a
# reason naming the scan's figure at confidence high (status 1), and nobody else; after the shaping is
# removed h2 is returned (status 0); h3, drained by hand, stays drained with
# its own reason throughout. Alone, on node h1 outside any job (as a
# HealthCheckProgram): with --dry-run a floor it cannot reach prints the
# scontrol command and changes nothing; then it drains h1 with the figure,
# then a floor it passes returns it; a failing check of the hand-drained h3
# leaves it as it was. A scan whose program fails is "could not check" (3)
# and drains nobody.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
. "$CB_SRCDIR/tests/slurm/slurm.sh"
need_mpirun
slurm_need
HEALTH="$CB_BUILDDIR/src/nccl-collbench-health"
[ -x "$HEALTH" ] || fail "$HEALTH was not built"
slurm_up 4

# state NODE: "STATE|REASON".
state() { slurm_node_state "$1"; }
drained_by_us() {
    case "$(state "$1")" in drain*"|nccl-collbench: "*) return 0 ;; esac
    return 1
}
not_drained() {
    case "$(state "$1")" in drain*) fail "$2: node $1 is drained: $(state "$1")" ;; esac
}
hand_drained() {
    case "$(state h3)" in
        drain*"|maintenance by hand") ;;
        *) fail "$1: h3, drained by hand, is now: $(state h3)" ;;
    esac
}

# One allocation of the 4 nodes; the health scans are its steps. Not
# --exclusive: that gives the job the 16 CPUs each node declares on a
# machine with 2, and Open MPI's ranks then crashed now and then at start.
slurm_run salloc --no-shell -N4 --ntasks-per-node=2 --time=10
expect_rc 0 "salloc"
job=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' "$CB_TMP/err")
[ -n "$job" ] || show_and_fail "salloc granted no allocation"
# -T 20: when a rank crashes in Open MPI's start under srun (now and then
# on this machine under load), the others wait for it in their first
# collective ("checking the command line across ranks, at start-up") and
# srun waits for them: with the default -T (300 s) the tool's step ran
# into the 90 s limit of the whole tool, after its first scan had printed,
# so neither retry below caught it (status 124). They now end in 20 s, and
# srun's status is the crash's (139).
SCAN="--scan --gpus 2 --program $CB_BIN -- --backend mpi -b 256K -e 256K -n 3 -w 1 --suspect-ratio 0.3 -T 20"
# scan ARGS...: the tool in the allocation, run again after a failed MPI
# start (slurm_health_scan); 90 s: a suspect is confirmed by a second scan
# in the same step.
scan() { slurm_health_scan "$job" 90 "$@"; }

scan $SCAN
expect_rc 0 "a healthy cluster"
grep -q '^nccl-collbench-health: healthy$' "$CB_TMP/out" || show_and_fail "not called healthy"
for n in h0 h1 h2 h3; do not_drained $n "a healthy cluster"; done

slurm_exec scontrol update NodeName=h3 State=DRAIN Reason="maintenance by hand" || fail "drain h3 by hand"
cluster_slow_node 2 50mbit || fail "could not shape node 2's NIC"
scan $SCAN
expect_rc 1 "h2 shaped"
drained_by_us h2 || show_and_fail "h2 is not drained: $(state h2)"
state h2 | grep -q '|nccl-collbench: scan node h2: pairs [0-9.]* GB/s, reference [0-9.]* GB/s.*, confidence high \[cb:[0-9a-f]*\]$' ||
    show_and_fail "h2's reason does not name the figure: $(state h2)"
for n in h0 h1; do not_drained $n "h2 shaped"; done
hand_drained "h2 shaped"

cluster_unshape 2
scan $SCAN
expect_rc 0 "h2 unshaped"
grep -q 'node h2 passed: returned to service' "$CB_TMP/out" || show_and_fail "h2 not returned"
not_drained h2 "h2 unshaped"
hand_drained "h2 unshaped"

# A scan whose program fails (status 1, no verdict): could not check, and
# nothing is drained.
CB_SLURM_TIMEOUT=60 slurm_run env SLURM_JOB_ID="$job" SLURM_JOB_NODELIST="$CB_SLURM_NODES" \
    "$HEALTH" --scan --gpus 2 --program /bin/false
expect_rc 3 "a scan that cannot run"
grep -q '^nccl-collbench-health: could not check: the scan exited with status 1$' "$CB_TMP/err" ||
    show_and_fail "could not check: no reason"
for n in h0 h1 h2; do not_drained $n "a scan that cannot run"; done
slurm_exec scancel "$job"

# Alone on a node, outside any job. --dry-run first: the command, no change.
slurm_node_run 1 "$HEALTH" --dry-run --gpus 2 --program "$CB_BIN" --launcher "$CB_MPIRUN -np" \
    --min-busbw 100000 -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 1 "--dry-run, h1 below its floor"
grep -q "^scontrol update NodeName='h1' State=DRAIN Reason='nccl-collbench: allreduce float sum 4096 B .*busbw [0-9.]* GB/s below the floor 100000.00 GB/s \\[cb:[0-9a-f]*\\]'\$" "$CB_TMP/out" ||
    show_and_fail "--dry-run does not print the drain of h1 with its figure"
[ "$(grep -c '^scontrol' "$CB_TMP/out")" = 1 ] || show_and_fail "--dry-run prints other commands"
not_drained h1 "--dry-run"
slurm_node_run 1 "$HEALTH" --gpus 2 --program "$CB_BIN" --launcher "$CB_MPIRUN -np" \
    --min-busbw 100000 -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 1 "h1 below its floor"
drained_by_us h1 || show_and_fail "h1 is not drained: $(state h1)"
state h1 | grep -q '|nccl-collbench: allreduce float sum 4096 B .*busbw [0-9.]* GB/s below the floor 100000.00 GB/s \[cb:[0-9a-f]*\]$' ||
    show_and_fail "h1's reason does not name the figure: $(state h1)"
slurm_node_run 1 "$HEALTH" --gpus 2 --program "$CB_BIN" --launcher "$CB_MPIRUN -np" \
    --min-busbw 0.000001 -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 0 "h1 above its floor"
not_drained h1 "h1 above its floor"
slurm_node_run 3 "$HEALTH" --gpus 2 --program "$CB_BIN" --launcher "$CB_MPIRUN -np" \
    --min-busbw 100000 -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 1 "h3 below its floor"
grep -q 'node h3 is drained by someone else (maintenance by hand): left alone' "$CB_TMP/out" ||
    show_and_fail "h3: not said to be left alone"
hand_drained "h3 checked alone"
echo ok
