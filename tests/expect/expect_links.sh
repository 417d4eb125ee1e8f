# --expect auto judges the links themselves (issue 36): a port down or
# inactive, a port below the node's other ports or the same port on the
# other nodes, a link below its maximum width or speed, and NVLinks down
# each fail the run (status 8, a "# Link fault:" line naming the node, the
# device and the port), even where every row passes its lowered figure
# (--expect-ratio 1e-9 here). A rate outside the sane range (1 to 100000
# Gb/s) is unreadable, not a rate: no expectation, status 6. Variants of
# the nvlink8 fixture, made here, each change one file.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/expect/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_mpirun
need_python
need_nvml_standin
sysfs_fixture nvlink8
SWEEP="-b 1K -e 64K -f 8 -n 2 -w 1 --expect auto --expect-ratio 1e-9"
IB=class/infiniband

# variant NAME FILE TEXT [FILE TEXT ...]: nvlink8 with each FILE (relative
# to the tree) holding TEXT, at $CB_TMP/sysfs-NAME.
variant() {
    name=$1
    shift
    rm -rf "$CB_TMP/sysfs-$name"
    cp -R "$CB_TMP/sysfs-nvlink8" "$CB_TMP/sysfs-$name" || fail "cannot copy nvlink8"
    while [ $# -ge 2 ]; do
        printf '%s\n' "$2" >"$CB_TMP/sysfs-$name/$1" || fail "variant $name: cannot write $1"
        shift 2
    done
}

# judge EXPECTED-STATUS WHAT "NODES": the MPI backend on 4 ranks, nodes a
# and b as the list says.
judge() {
    nodes_launcher "$3" "$CB_BIN"
    CB_RUN_BIN=$CB_TMP/nodes.sh run 4 --backend mpi -o allreduce $SWEEP --json "$CB_TMP/l.json"
    expect_rc "$1" "$2"
}

# Seven of eight ports down: the figure falls to one port's, which the rows
# pass; the ports do not.
variant down7 $IB/mlx5_1/ports/1/state "1: DOWN" $IB/mlx5_2/ports/1/state "1: DOWN" \
    $IB/mlx5_3/ports/1/state "1: DOWN" $IB/mlx5_4/ports/1/state "1: DOWN" \
    $IB/mlx5_5/ports/1/state "1: DOWN" $IB/mlx5_6/ports/1/state "1: DOWN" \
    $IB/mlx5_7/ports/1/state "1: DOWN"
judge 8 "7 of 8 ports down" "a:nvlink8 a:nvlink8 b:down7 b:down7"
has 7 "^# Link fault: node b mlx5_[1-7] port 1 is not active (state '1: DOWN')$"
has 1 '^# Result: FAIL (7 link faults) '
"$CB_PYTHON" - "$CB_TMP/l.json" <<'PY' || fail "JSON of 7 ports down"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["exit_status"] == 8 and s["link_faults"] == 7 and s["verdict"] == "FAIL", s
PY

# "2: INACTIVE" holds the word ACTIVE but is not state 4; nor is 5.
variant inactive $IB/mlx5_3/ports/1/state "2: INACTIVE" $IB/mlx5_5/ports/1/state "5: ACTIVE_DEFER"
judge 8 "a port 2: INACTIVE" "a:inactive a:inactive b:nvlink8 b:nvlink8"
has 1 "^# Link fault: node a mlx5_3 port 1 is not active (state '2: INACTIVE')$"
has 1 "^# Link fault: node a mlx5_5 port 1 is not active (state '5: ACTIVE_DEFER')$"
has 2 '^# Link fault: '

# A port told apart from the ones NCCL uses (NCCL_IB_HCA, NCCL's syntax)
# is not judged: the node passes.
NCCL_IB_HCA=^=mlx5_3,mlx5_5 judge 0 "NCCL_IB_HCA leaves them out" \
    "a:inactive a:inactive b:nvlink8 b:nvlink8"
has 0 '^# Link fault'
has 1 '^# Expect node a: mlx5_0 port 1 400 Gb/s, mlx5_1 port 1 400 Gb/s, mlx5_2 port 1 400 Gb/s, mlx5_4 port 1 400 Gb/s, mlx5_6 port 1 400 Gb/s, mlx5_7 port 1 400 Gb/s$'

# A port trained below the node's other ports, and a node whose ports all
# trained below the other node's.
variant slow1 $IB/mlx5_2/ports/1/rate "200 Gb/sec (4X HDR)"
judge 8 "a port at 200 beside 400" "a:nvlink8 a:nvlink8 b:slow1 b:slow1"
has 1 "^# Link fault: node b mlx5_2 port 1: 200 Gb/s, below the node's mlx5_0 port 1 at 400 Gb/s$"
has 1 '^# Link fault: '
variant hdr
for k in 0 1 2 3 4 5 6 7; do printf '200 Gb/sec (4X HDR)\n' >"$CB_TMP/sysfs-hdr/$IB/mlx5_$k/ports/1/rate"; done
judge 8 "node b at 200 beside node a at 400" "a:nvlink8 a:nvlink8 b:hdr b:hdr"
has 8 "^# Link fault: node b mlx5_[0-7] port 1: 200 Gb/s, below mlx5_[0-7] port 1 on node a at 400 Gb/s$"

# A port's PCI function trained at x8 of x16, and at 8 of 16 GT/s.
dev=devices/pci0000:00/0000:00:04.0/0000:14:00.0/0000:24:00.0
mkdir -p "$CB_TMP/sysfs-nvlink8/$dev"
variant narrow "$dev/current_link_width" 8 "$dev/max_link_width" 16 \
    "$dev/current_link_speed" "8.0 GT/s PCIe" "$dev/max_link_speed" "16.0 GT/s PCIe"
judge 8 "a NIC at x8, 8 GT/s" "a:nvlink8 a:nvlink8 b:narrow b:narrow"
has 1 '^# Link fault: node b mlx5_3 port 1 (PCI 0000:24:00.0): PCIe x8, below its max x16$'
has 1 '^# Link fault: node b mlx5_3 port 1 (PCI 0000:24:00.0): PCIe 8 GT/s, below its max 16 GT/s$'
has 2 '^# Link fault: '
variant wide "$dev/current_link_width" 16 "$dev/max_link_width" 16 \
    "$dev/current_link_speed" "16.0 GT/s PCIe" "$dev/max_link_speed" "16.0 GT/s PCIe"
judge 0 "a NIC at its max" "a:nvlink8 a:nvlink8 b:wide b:wide"

# Rates that are not rates: unreadable, so no expectation (6), never
# inf or 1e308 GB/s; a line of 10 MB of digits likewise.
for rate in "inf Gb/sec" "1e308 Gb/sec (4X NDR)" "nan Gb/sec" "0.5 Gb/sec (1X SDR)"; do
    variant odd "$IB/mlx5_4/ports/1/rate" "$rate"
    judge 6 "rate '$rate'" "a:nvlink8 a:nvlink8 b:odd b:odd"
    has 1 "^# Expect node b: .*, mlx5_4 port 1 up, rate unreadable (rate '$rate'), "
    has 2 "^# No expectation: allreduce float sum 65536 B .*: between nodes: node b: the rate of mlx5_4 port 1, which is up, cannot be read"
    has 1 '^# Result: UNCHECKED (2 rows with no expectation) '
done
variant odd
head -c 10000000 /dev/zero | tr '\0' '9' >"$CB_TMP/sysfs-odd/$IB/mlx5_4/ports/1/rate"
judge 6 "a rate of 10 MB of digits" "a:nvlink8 a:nvlink8 b:odd b:odd"
has 1 '^# Expect node b: .*, mlx5_4 port 1 up, rate unreadable (rate longer than 126 characters), '

# NVLinks (the NCCL backend through its stand-in): two of a GPU's 18 down,
# and a GPU whose NVML lists fewer links than the same GPU on the other node.
need_standin
standin_setup 2
cat >"$CB_TMP/down2.nvml" <<'NVML'
0000:01:00.0 NVIDIA_H100_80GB_HBM3 9 18 18 7 switch 5 1 16 16
0000:02:00.0 NVIDIA_H100_80GB_HBM3 9 18 16 7 switch 5 1 16 16
NVML
nodes_launcher "a:nvlink8 a:nvlink8" "$CB_STANDIN_BIN"
CB_STANDIN_NVML=$CB_TMP/down2.nvml CB_RUN_BIN=$CB_TMP/nodes.sh run 2 -o allreduce $SWEEP
expect_rc 8 "two NVLinks down"
has 1 '^# Link fault: node a GPU 0000:02:00.0: NVLink 16, 17 down (16 of 18 up)$'
has 1 '^# Link fault: '
cat >"$CB_TMP/fewer.nvml" <<'NVML'
0000:01:00.0 NVIDIA_H100_80GB_HBM3 9 18 18 7 switch 5 1 16 16
0000:02:00.0 NVIDIA_H100_80GB_HBM3 9 18 18 7 switch 5 1 16 16
NVML
cat >"$CB_TMP/fewer-b.nvml" <<'NVML'
0000:01:00.0 NVIDIA_H100_80GB_HBM3 9 16 16 7 switch 5 1 16 16
0000:02:00.0 NVIDIA_H100_80GB_HBM3 9 18 18 7 switch 5 1 16 16
NVML
# Node b's NVML (rank 1) lists 16 links for its first GPU.
cat >"$CB_TMP/pernode.sh" <<SH
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}
if [ "\$rank" = 1 ]; then CB_STANDIN_NVML=$CB_TMP/fewer-b.nvml; else CB_STANDIN_NVML=$CB_TMP/fewer.nvml; fi
export CB_STANDIN_NVML
exec "$CB_TMP/nodes.sh" "\$@"
SH
chmod +x "$CB_TMP/pernode.sh"
nodes_launcher "a:nvlink8 b:nvlink8" "$CB_STANDIN_BIN"
CUDA_VISIBLE_DEVICES=0 CB_RUN_BIN=$CB_TMP/pernode.sh run 2 -o allreduce $SWEEP
expect_rc 8 "fewer NVLinks than the same GPU on the other node"
has 1 '^# Link fault: node b GPU 0000:01:00.0: NVML lists 16 NVLinks, below the same GPU on node a with 18$'
echo "ok"
