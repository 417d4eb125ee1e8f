# nccl-collbench-health leaves alone every node of a real Slurm (Debian's
# 22.05) that is not up or that someone else drained, whatever its check
# says, and acts on the others: on node hI outside any job, as a
# HealthCheckProgram runs, with a check that fails (a program that prints
# a gate note and exits 8) and one that passes.
# Left alone, state and reason unchanged: DOWN; drained by an
# administrator with a reason that starts "nccl-collbench:"; drained with
# the reason the tool gave another node; FAIL; a maintenance reservation
# (MAINT); a reboot asked for (scontrol reboot ASAP). Acted on: an idle node that fails is drained with the token, and
# returned once it passes. What scontrol shows of each state goes to the
# log.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
. "$CB_SRCDIR/tests/slurm/slurm.sh"
slurm_need
# A reboot program that reboots nothing: slurmd runs it when slurmctld
# asks, and the node stays marked for reboot meanwhile.
CB_SLURM_CONF_EXTRA="RebootProgram=/bin/true"
HEALTH="$CB_BUILDDIR/src/nccl-collbench-health"
[ -x "$HEALTH" ] || fail "$HEALTH was not built"
slurm_up 4

mkdir -p "$CB_TMP/h" || exit 99
chmod 755 "$CB_TMP" "$CB_TMP/h"
cat >"$CB_TMP/h/fake" <<STUB
#!/bin/sh
[ -f "$CB_TMP/h/pass" ] && { echo '# Result: PASS 1 measurement in 0.1 s'; exit 0; }
echo '# Below --min-busbw 1.00 GB/s: allreduce float sum 4096 B out-of-place busbw 0.01 GB/s'
echo '# Result: FAIL (1 below --min-busbw) 1 measurement in 0.1 s'
exit 8
STUB
cat >"$CB_TMP/h/direct" <<'STUB'
#!/bin/sh
shift
exec "$@"
STUB
chmod 755 "$CB_TMP/h/fake" "$CB_TMP/h/direct"

state() { slurm_node_state "$1"; }
# check I: the tool on node hI (status in $rc, output in $CB_TMP/out).
check() {
    slurm_node_run "$1" "$HEALTH" --gpus 2 --program "$CB_TMP/h/fake" --launcher "$CB_TMP/h/direct"
}
# left_alone I WHAT [MOVING]: a failing and a passing check of hI change
# nothing (with MOVING, a state Slurm itself moves on, as a reboot being
# issued: the tool ran no scontrol update and the reason is not its own).
left_alone() {
    before=$(state "h$1")
    echo "h$1 ($2): $(CB_SLURM_TIMEOUT=10 slurm_exec scontrol -o show node "h$1" | tr ' ' '\n' | grep '^State=')|${before#*|}"
    rm -f "$CB_TMP/h/pass"
    check "$1"
    expect_rc 1 "$2: a failing check"
    grep -q "^nccl-collbench-health: node h$1 is .*: left alone\$" "$CB_TMP/out" ||
        show_and_fail "$2: not said to be left alone"
    grep -q '^nccl-collbench-health: scontrol update' "$CB_TMP/out" && show_and_fail "$2: scontrol update ran"
    same "$1" "$2" "${3:-}"
    touch "$CB_TMP/h/pass"
    check "$1"
    expect_rc 0 "$2: a passing check"
    grep -q '^nccl-collbench-health: scontrol update' "$CB_TMP/out" && show_and_fail "$2: scontrol update ran"
    same "$1" "$2" "${3:-}"
}
same() {
    now=$(state "h$1")
    [ "$now" = "$before" ] && return 0
    [ -n "$3" ] || fail "$2: h$1 was '$before', now '$now'"
    case "$now" in
        idle*|*"[cb:"*) fail "$2: h$1 was '$before', now '$now'" ;;
    esac
}

# h0, idle, fails: drained by the tool with the token; its reason, as the
# tool gave it, is then set on h1 by hand.
rm -f "$CB_TMP/h/pass"
check 0
expect_rc 1 "idle h0 fails"
state h0 | grep -q '^drain[a-z]*|nccl-collbench: allreduce .* below the floor 1.00 GB/s \[cb:[0-9a-f]\{16\}\]$' ||
    show_and_fail "h0 not drained with the token: $(state h0)"
ours=$(state h0 | cut -d'|' -f2-)
touch "$CB_TMP/h/pass"
check 0
expect_rc 0 "h0 passes"
grep -q 'node h0 passed: returned to service' "$CB_TMP/out" || show_and_fail "h0 not returned"
case "$(state h0)" in idle*) ;; *) fail "h0 not returned: $(state h0)" ;; esac

slurm_exec scontrol update NodeName=h1 State=DRAIN Reason="$ours" || fail "drain h1"
left_alone 1 "drained with h0's reason"
slurm_exec scontrol update NodeName=h1 State=DRAIN Reason="nccl-collbench: held for a look" || fail "drain h1"
left_alone 1 "drained by hand, reason nccl-collbench:"
slurm_exec scontrol update NodeName=h2 State=DOWN Reason="cable" || fail "h2 down"
left_alone 2 "down"
slurm_exec scontrol update NodeName=h2 State=RESUME || fail "h2 resume"
slurm_exec scontrol update NodeName=h3 State=FAIL Reason="ECC errors" || fail "h3 fail"
left_alone 3 "fail"
slurm_exec scontrol update NodeName=h3 State=RESUME || fail "h3 resume"
slurm_exec scontrol create reservation ReservationName=cbmaint StartTime=now Duration=60 \
    Users=root Flags=MAINT Nodes=h3 >/dev/null || fail "a maintenance reservation of h3"
# slurmctld sets the node's MAINT flag on its next pass over reservations.
tries=0
until CB_SLURM_TIMEOUT=10 slurm_exec scontrol -o show node h3 | grep -q ' State=[A-Z+]*MAINT'; do
    tries=$((tries + 1))
    [ "$tries" -le 90 ] || fail "h3 never showed MAINT: $(slurm_exec scontrol -o show node h3)"
    sleep 1
done
left_alone 3 "maintenance reservation"
slurm_exec scontrol delete ReservationName=cbmaint || fail "delete the reservation"
slurm_exec scontrol reboot ASAP Reason="kernel" h2 || fail "scontrol reboot h2"
left_alone 2 "reboot asked for" moving
echo ok
