# --expect auto on fixtures of links: NVML through its stand-in
# (tests/expect/*.nvml), sysfs through NCCL_COLLBENCH_SYSFS (tests/expect/sysfs/),
# nodes through NCCL_HOSTID. The expected busbw of each row is the figure the
# model gives (an 8-GPU NVLink node with 8 x 400 Gb/s NICs, one of them down;
# a PCIe-only node; a GPU at x8; no NVML; the MPI backend's host memory);
# efficiency is busbw over it in the CSV, the JSON and --prom; a row of the largest
# size below --expect-ratio x expected is a "Below expectation" line and
# status 8, and the same run with a ratio it passes is status 0.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/expect/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_mpirun
need_python
need_nvml_standin
for f in nvlink8 nicdown pcie slow; do sysfs_fixture "$f"; done
SWEEP="-b 1K -e 64K -f 8 -n 2 -w 1"

# expect_rows COLLECTIVE GBPS: every row of COLLECTIVE in $CB_TMP/e.csv
# expects GBPS ("-": none) and its efficiency is busbw / expected.
expect_rows() {
    csv_expected "$CB_TMP/e.csv" | awk -v c="$1" -v want="$2" '
        $1 != c { next }
        { n++ }
        want == "-" && ($4 != "-" || $5 != "-") { bad = bad " " $0 }
        want != "-" && ($4 - want > 1e-5 * want || want - $4 > 1e-5 * want) { bad = bad " " $0 }
        want != "-" && ($5 * want - $6 > 1e-5 * $6 + 1e-6 ||
                        $6 - $5 * want > 1e-5 * $6 + 1e-6) { bad = bad " " $0 }
        END { if (n == 0 || bad != "") { print "rows of " c ":" bad; exit 1 } }' ||
        show_and_fail "$1 does not expect $2 GB/s"
}

# The NCCL backend (stand-in GPUs 0000:01:00.0 and 0000:02:00.0 on each node).
need_standin
CB_STANDIN_NVML="$CB_EXPECT_FIXTURES/h100x8.nvml"
export CB_STANDIN_NVML
standin_setup 2 python

# Two 8-GPU H100 nodes, node b with mlx5_7 down: between nodes the 7 NICs up,
# 2800 Gb/s = 350 GB/s, are below NVLink's 18 x 25 GB/s.
nodes_launcher "a:nvlink8 a:nvlink8 b:nicdown b:nicdown" "$CB_STANDIN_BIN"
CB_RUN_BIN=$CB_TMP/nodes.sh run 4 -o allreduce,alltoall,barrier $SWEEP --expect auto \
    --efficiency --csv "$CB_TMP/e.csv" --json "$CB_TMP/e.json" --prom "$CB_TMP/e.prom"
expect_rc 8 "a NIC down, rows below expectation"
# --prom: nccl_collbench_efficiency_ratio equals the CSV's efficiency, row by
# row, and is absent where a row has none (barrier).
for what in results count; do
    "$CB_PYTHON" "$CB_SRCDIR/tests/support/prom_check.py" $what "$CB_TMP/e.prom" "$CB_TMP/e.csv" \
        >/dev/null || fail "--prom's efficiency series ($what)"
done
grep -q '^nccl_collbench_efficiency_ratio{.*collective="allreduce"' "$CB_TMP/e.prom" ||
    fail "no efficiency series for allreduce"
grep -q '^nccl_collbench_efficiency_ratio{.*collective="barrier"' "$CB_TMP/e.prom" &&
    fail "an efficiency series for barrier"
expect_rows allreduce 350
expect_rows alltoall 262.5     # 350 / 2 ranks x (4-1)/(4-2)
expect_rows barrier -
has 1 '^# Expect node b: .* mlx5_6 port 1 400 Gb/s, mlx5_7 port 1 DOWN$'
has 1 "^# Link fault: node b mlx5_7 port 1 is not active (state '1: DOWN')$"
has 1 '^# Link fault: '
has 4 '^# Expect rank [0-3] GPU 0000:0[12]:00.0 NVIDIA H100 80GB HBM3: NVLink 18 of 18 up (NVML code 7: NVLink 4, 25 GB/s a link; to NVSwitch); PCIe Gen5 x16 (max x16, Gen1 now); near mlx5_[01] port 1$'
has 1 '^# Expected busbw allreduce: 350.00 GB/s, the slowest of: .*NVLink 4 18 up x 25 GB/s = 450.00 GB/s; between nodes: node b NICs 7 up, 2800 Gb/s = 350.00 GB/s'
has 1 '^# No expected busbw for barrier: barrier moves no data$'
# Only the largest size is gated: its two halves, of both collectives.
has 4 '^# Below expectation: '
has 2 '^# Below expectation: allreduce float sum 65536 B \(out-of-place\|in-place\) busbw [0-9.]* GB/s is [0-9.]* of expected 350.00 GB/s (--expect-ratio 0.8)$'
has 0 '^# Below expectation: .* \(1024\|8192\) B '
# --efficiency: a line under every row that moves data (3 sizes x 2 collectives).
has 6 '^#   efficiency  out-of-place [0-9.]* of [0-9.]* GB/s  in-place [0-9.]* of [0-9.]* GB/s$'
"$CB_PYTHON" - "$CB_TMP/e.json" <<'PY' || fail "JSON expectation fields"
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["results"]:
    if r["collective"] == "barrier":
        assert r["expected_busbw_gbps"] is None and r["efficiency"] is None, r
    else:
        want = 350 if r["collective"] == "allreduce" else 262.5
        assert r["expected_busbw_gbps"] == want, r
        assert abs(r["efficiency"] - r["busbw_gbps"] / want) <= 1e-5 * r["efficiency"] + 1e-9, r
PY
check check-json-values --json "$CB_TMP/e.json"

# The same rows pass a ratio they are above, but the port down fails the
# run on its own (issue 36): status 8, the verdict naming it.
CB_RUN_BIN=$CB_TMP/nodes.sh run 4 -o allreduce $SWEEP --expect auto --expect-ratio 1e-9
expect_rc 8 "--expect-ratio 1e-9, a NIC down"
has 0 '^# Below expectation'
has 0 '^#   efficiency'
has 1 '^# Result: FAIL (1 link fault) '
# Every link up: status 0.
nodes_launcher "a:nvlink8 a:nvlink8 b:nvlink8 b:nvlink8" "$CB_STANDIN_BIN"
CB_RUN_BIN=$CB_TMP/nodes.sh run 4 -o allreduce $SWEEP --expect auto --expect-ratio 1e-9
expect_rc 0 "--expect-ratio 1e-9, every link up"
has 0 '^# Link fault'

# One node: inside it, NVLink alone.
nodes_launcher "a:nvlink8 a:nvlink8" "$CB_STANDIN_BIN"
CB_RUN_BIN=$CB_TMP/nodes.sh run 2 -o allreduce,sendrecv $SWEEP --expect auto --csv "$CB_TMP/e.csv"
expect_rc 8 "one NVLink node"
expect_rows allreduce 450
expect_rows sendrecv 450

# A PCIe-only node (Gen4 x16 = 16 x 1.96923 GB/s), then one GPU at x8.
# Its eno2 is not cabled: NCCL_SOCKET_IFNAME, read as NCCL reads it, leaves
# it out (NCCL would not use it).
nodes_launcher "p:pcie p:pcie" "$CB_STANDIN_BIN"
NCCL_SOCKET_IFNAME=eth0
export NCCL_SOCKET_IFNAME
CB_STANDIN_NVML="$CB_EXPECT_FIXTURES/pcie.nvml" CB_RUN_BIN=$CB_TMP/nodes.sh \
    run 2 -o allreduce $SWEEP --expect auto --csv "$CB_TMP/e.csv"
expect_rc 8 "PCIe-only node"
expect_rows allreduce 31.50768
has 2 '^# Expect rank [01] GPU 0000:0[12]:00.0 NVIDIA L40S: NVLink 0 of 0 up; PCIe Gen4 x16 (max x16, Gen4 now); near '
CB_STANDIN_NVML="$CB_EXPECT_FIXTURES/x8.nvml" CB_RUN_BIN=$CB_TMP/nodes.sh \
    run 2 -o allreduce $SWEEP --expect auto --csv "$CB_TMP/e.csv"
expect_rc 8 "a GPU at x8"
expect_rows allreduce 15.75384
has 1 '^# Expect rank 1 GPU 0000:02:00.0 NVIDIA L40S: .* PCIe Gen4 x8 (max x16, Gen4 now) NARROWER THAN ITS MAX'
has 1 '^# Expected busbw allreduce: 15.75 GB/s, the slowest of: inside node p PCIe: GPU 0000:02:00.0 PCIe Gen4 x8 '
has 1 '^# Link fault: node p GPU 0000:02:00.0: PCIe x8, below its max x16$'

# Without NVML: no expectation, the reason in the preamble, never a guess;
# the rows of the largest size it should have gated are not checked, which
# is status 6 and the verdict UNCHECKED, never a pass (issue 36).
CB_STANDIN_NVML= CB_RUN_BIN=$CB_TMP/nodes.sh run 2 -o allreduce $SWEEP --expect auto \
    --csv "$CB_TMP/e.csv"
expect_rc 6 "no NVML"
expect_rows allreduce -
has 1 '^# No expected busbw for allreduce: inside node p: nvmlInit failed: Driver Not Loaded$'
has 2 '^# No expectation: allreduce float sum 65536 B \(out-of-place\|in-place\): inside node p: nvmlInit failed: Driver Not Loaded$'
has 1 '^# Result: UNCHECKED (2 rows with no expectation) 6 measurements in '
# NVML there but not knowing the GPU (another machine's answers): the same.
CB_STANDIN_NVML="$CB_EXPECT_FIXTURES/mismatch.nvml" CB_RUN_BIN=$CB_TMP/nodes.sh \
    run 2 -o allreduce $SWEEP --expect auto
expect_rc 6 "NVML that does not know the GPU"
has 2 '^# No expectation: allreduce .*: inside node p: NVML does not find GPU 0000:01:00.0: '

# The MPI backend: host memory inside a node has no expectation ...
unset CB_STANDIN_NVML NCCL_SOCKET_IFNAME
nodes_launcher "a:nvlink8 a:nvlink8" "$CB_BIN"
CB_RUN_BIN=$CB_TMP/nodes.sh run 2 --backend mpi -o allreduce $SWEEP --expect auto \
    --csv "$CB_TMP/e.csv"
expect_rc 6 "MPI backend on one node"
expect_rows allreduce -
has 1 '^# No expected busbw for allreduce: the MPI backend moves host memory: inside a node there is no link to expect$'
has 0 '^# Expect rank'
# ... between nodes the NICs: 1 Mb/s Ethernet is below the sane range (1
# Gb/s), so no rate: not checked (6), never a pass, and the unplugged
# port beside it a link fault (8) unless NCCL_SOCKET_IFNAME leaves it out ...
nodes_launcher "a:slow a:slow b:slow b:slow" "$CB_BIN"
CB_RUN_BIN=$CB_TMP/nodes.sh run 4 --backend mpi -o allreduce $SWEEP --expect auto \
    --csv "$CB_TMP/e.csv"
expect_rc 8 "MPI backend, 1 Mb/s between nodes, eno2 down"
has 2 "^# Link fault: node [ab] eno2 is not active (state 'down')$"
NCCL_SOCKET_IFNAME=^eno CB_RUN_BIN=$CB_TMP/nodes.sh run 4 --backend mpi -o allreduce $SWEEP \
    --expect auto --csv "$CB_TMP/e.csv"
expect_rc 6 "MPI backend, 1 Mb/s between nodes"
expect_rows allreduce -
has 2 "^# Expect node [ab]: eth0 up, rate unreadable (speed '1' Mb/s)$"
has 2 "^# No expectation: allreduce .*: between nodes: node a: the rate of eth0, which is up, cannot be read (speed '1' Mb/s)$"
has 0 '^# Below expectation'
has 0 '^# Link fault'
# ... no sysfs tree at all: no NIC to expect, not checked (status 6) ...
mkdir -p "$CB_TMP/sysfs-bare"
nodes_launcher "a:bare a:bare b:bare b:bare" "$CB_BIN"
CB_RUN_BIN=$CB_TMP/nodes.sh run 4 --backend mpi -o allreduce $SWEEP --expect auto
expect_rc 6 "MPI backend, no sysfs tree"
has 2 "^# No expectation: allreduce float sum 65536 B .*: between nodes: node a: no NIC under $CB_TMP/sysfs-bare/class/infiniband or "
# ... and 8 x 400 Gb/s with one down: the rows fall below, status 8.
nodes_launcher "a:nvlink8 a:nvlink8 b:nicdown b:nicdown" "$CB_BIN"
CB_RUN_BIN=$CB_TMP/nodes.sh run 4 --backend mpi -o allreduce $SWEEP --expect auto \
    --csv "$CB_TMP/e.csv"
expect_rc 8 "MPI backend, a NIC down"
expect_rows allreduce 350
has 2 '^# Below expectation: allreduce float sum 65536 B .* of expected 350.00 GB/s'
# With --split each group is judged on its own ranks: stride:2 puts a rank
# of each node in each group (the NICs), size:2 one node in each (host
# memory inside it: none).
CB_RUN_BIN=$CB_TMP/nodes.sh run 4 --backend mpi -o allreduce $SWEEP --expect auto \
    --split stride:2 --csv "$CB_TMP/e.csv"
expect_rc 8 "--split stride:2"
expect_rows allreduce 350
has 2 '^# Expected busbw allreduce group [01]: 350.00 GB/s, the slowest of: between nodes: node b NICs 7 up'
has 4 '^# Below expectation: allreduce float sum 65536 B .* group [01] busbw '
CB_RUN_BIN=$CB_TMP/nodes.sh run 4 --backend mpi -o allreduce $SWEEP --expect auto \
    --split size:2 --csv "$CB_TMP/e.csv"
expect_rc 8 "--split size:2 (a link fault)"
expect_rows allreduce -
has 2 '^# No expected busbw for allreduce group [01]: the MPI backend moves host memory'
echo "ok"
