# The health scan (-o scan) through the NCCL backend on the CPU stand-in:
# 4 hosts of 2 ranks (NCCL_HOSTID), 2 GPUs each. A slow host made from
# outside the fault layer (the stand-in's per-process operation time,
# CB_STANDIN_OP_US, set on host h1's ranks only), a slow link and a
# corrupting host through the fault layer, and a healthy run naming nobody.
# --suspect-ratio 0.1: the faults give ratios near 0.01 measured alone, the
# noise of a loaded 2-core machine 0.2 at worst. In the scan itself every
# part is slowed under load (h1's host read 0.13 of the others at a load
# of 21), which the scan's candidates, taken below 3 x 0.1, allow for.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/support/scan.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2
SCAN="-o scan -b 64K -e 64K -n 4 -w 1 --suspect-ratio 0.1"
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"

# launcher PROGRAM [SLOW_US]: ranks 2k and 2k+1 are host hk; with SLOW_US,
# every operation of host h1's ranks takes at least that long.
launcher() {
    cat >"$CB_TMP/scan_hosts.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
[ -n "\$rank" ] || { echo "scan_hosts.sh: the launcher set no rank variable" >&2; exit 99; }
NCCL_HOSTID=h\$((rank / 2)); export NCCL_HOSTID
if [ -n "$2" ] && [ "\$NCCL_HOSTID" = h1 ]; then
    CB_STANDIN_OP_US=$2; export CB_STANDIN_OP_US
fi
exec "$1" "\$@"
LAUNCHER
    chmod +x "$CB_TMP/scan_hosts.sh"
    CB_RUN_BIN=$CB_TMP/scan_hosts.sh
}

launcher "$CB_STANDIN_BIN"
run 8 --backend nccl $SCAN
expect_rc 0 "healthy scan"
has 1 '^# Health scan: 4 nodes'
has 1 '^#  *h0  *h1  *h2  *h3$'
has 0 '^# Suspect'

launcher "$CB_STANDIN_BIN" 50000
run 8 --backend nccl $SCAN
expect_rc 8 "host h1 slowed by the stand-in"
# The GPU named is one of h1's (the stand-in's bus ids end in the device).
suspects_only '^# Suspect node h1 (GPU [0-9a-f:.]*): ' "host h1 slowed by the stand-in"

launcher "$FAULTY"
NCCL_COLLBENCH_TEST_FAULT=slowlink:0:4:2:50
export NCCL_COLLBENCH_TEST_FAULT
run 8 --backend faulty-nccl $SCAN
expect_rc 8 "link h0 - h2 slowed"
suspects_only '^# Suspect link h0 - h2: ' "link h0 - h2 slowed"

NCCL_COLLBENCH_TEST_FAULT=corrupt:5:7
run 8 --backend faulty-nccl $SCAN
expect_rc 7 "host h2 corrupting"
suspects_only '^# Suspect node h2 (GPU [0-9a-f:.]*): [0-9]* wrong element' "host h2 corrupting" \
    timing-noise
unset NCCL_COLLBENCH_TEST_FAULT
echo "ok"
