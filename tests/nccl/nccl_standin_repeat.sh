# -B through the CPU stand-in, on the GPU compare (src/backends/nccl/compare.c):
# the kernel, handed over as PTX, loads and passes its self-test; every
# later launch's output is compared by one kernel launch (the trace counts
# them against the CSV's compared launches), inside its allocations at any
# -u offset and element size; a launch struck once is caught. Where the
# kernel cannot load (a driver that cannot compile the PTX, a GPU older
# than its target) or miscounts (a kernel that writes nothing), every rank
# falls back to the host compare, the preamble names the rank and why, and
# the struck launch is still caught; so with NCCL_COLLBENCH_HOST_COMPARE=1,
# also set on one rank only. The PTX declares the old version and
# target it promises (7.0 and sm_70: a CUDA 11 driver and a Volta GPU load it).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2 python trace
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"
[ -x "$FAULTY" ] || fail "$FAULTY was not built"
on_device='^# -B: each launch.s output is compared bit for bit .*, on the device (a kernel counts'
on_host='^# -B: each launch.s output is compared bit for bit .*, in host memory, '
fallback='^# -B compares on the host (outputs copied from the GPU): the GPU compare kernel failed on rank'

# 1. Clean, one element off alignment, elements of 1, 2, 4 and 8 bytes.
fresh_trace
run 2 --backend nccl -B -o allreduce,allgather,alltoall -d int8,half,float,double -b 96 -e 6K \
    -f 8 -n 2 -u 1 -M --csv "$CB_TMP/c.csv" --json "$CB_TMP/c.json"
expect_rc 0 "clean -B on the device"
grep -q 'has no cudaLibraryLoadData' "$CB_TMP/out" &&
    skip "the CUDA runtime built against has no cudaLibraryLoadData: -B compares on the host"
has 1 "$on_device"
has 0 "$fallback"
has 1 '^# Memory per rank: .*, -B reference [0-9]* (device); total '
"$CB_PYTHON" -c 'import json, sys
assert json.load(open(sys.argv[1]))["backend"]["repeat_compare"] == "device"' "$CB_TMP/c.json" ||
    fail "the JSON does not say the compare ran on the device"
# The self-test's 8 launches, then one per compared launch.
compared=$("$CB_PYTHON" -c '
import csv, sys
print(sum(int(r["repeat_checked"]) for r in csv.DictReader(open(sys.argv[1]))))' "$CB_TMP/c.csv")
[ "$compared" -gt 0 ] || fail "no launch compared"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 \
    --count "cudaLaunchKernel cb_count_differing=$((8 + compared))" --count cudaLibraryLoadData=1

# With registered buffers (the reference is one of them, -R 1 and 2).
for reg in 1 2; do
    fresh_trace
    run 2 --backend nccl -B -R $reg -o allreduce,allgather -b 1K -e 16K -n 2
    expect_rc 0 "-B -R $reg"
    has 1 "$on_device"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2
done

# struck [ENV...]: rank 1's third launch (a timed one) struck: missed
# without -B, caught with it; stdout in $CB_TMP/out.
struck() {
    NCCL_COLLBENCH_TEST_FAULT=nth:1:3
    export NCCL_COLLBENCH_TEST_FAULT
    CB_RUN_BIN=$FAULTY run 2 --backend faulty-nccl -o allgather -b 4K -e 4K -n 4 -w 1 -c 1
    expect_rc 0 "$*: one struck launch, without -B"
    CB_RUN_BIN=$FAULTY run 2 --backend faulty-nccl -B -M -o allgather -b 4K -e 4K -n 4 -w 1 -c 1
    unset NCCL_COLLBENCH_TEST_FAULT
    expect_rc 7 "$*: one struck launch, with -B"
    has 1 '^# Unrepeatable: allgather float none 4096 B out-of-place: 1 launch .* first on rank 1 '
}

# 2. On the device.
struck "device compare"
has 1 "$on_device"

# 3. The PTX does not load on rank 1: every rank compares on the host.
CB_STANDIN_FAIL_LIBRARY=1 struck "kernel not loaded"
has 1 "${fallback} 1: cudaLibraryLoadData failed (.*): a PTX JIT compilation failed"
has 1 "$on_host"
has 1 '^# Memory per rank: .*, -B reference [0-9]* (host); total '

# 3b. The host compare asked for: no kernel loaded.
fresh_trace
NCCL_COLLBENCH_HOST_COMPARE=1 struck "host compare asked for"
has 1 '^# -B compares on the host (outputs copied from the GPU): NCCL_COLLBENCH_HOST_COMPARE=1 on rank 0$'
has 1 "$on_host"
! grep -q '^cudaLibraryLoadData' "$CB_TMP"/trace.* || fail "NCCL_COLLBENCH_HOST_COMPARE=1: the kernel was loaded"

# Asked for on one rank only: agreed, every rank on the host, no hang.
cat >"$CB_TMP/one_rank_host.sh" <<SH
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}" = 1 ] && export NCCL_COLLBENCH_HOST_COMPARE=1
exec "$CB_STANDIN_BIN" "\$@"
SH
chmod +x "$CB_TMP/one_rank_host.sh"
CB_RUN_BIN=$CB_TMP/one_rank_host.sh run 2 --backend nccl -B -o allreduce -b 1K -e 4K -n 2 -M
expect_rc 0 "NCCL_COLLBENCH_HOST_COMPARE=1 on rank 1 alone"
has 1 '^# -B compares on the host (outputs copied from the GPU): NCCL_COLLBENCH_HOST_COMPARE=1 on rank 1$'
has 1 '^# Memory per rank: .*, -B reference [0-9]* (host); total '

# 4. A kernel that writes nothing fails its self-test (rank 0's).
CB_STANDIN_KERNEL_NOOP=0 struck "kernel writing nothing"
has 1 "${fallback} 0: its self-test counted 0 and 0 differing elements of 1 bytes where there are 3 and 0"
has 1 "$on_host"

# 5. The oldest driver and GPU the PTX declares load it; an older GPU not.
CB_STANDIN_CC=70 CB_STANDIN_PTX_MAX=70 run 2 --backend nccl -B -o allreduce -b 1K -e 4K -n 2
expect_rc 0 "-B on a Volta GPU with a CUDA 11.0 driver"
has 1 "$on_device"
CB_STANDIN_CC=61 run 2 --backend nccl -B -o allreduce -b 1K -e 4K -n 2
expect_rc 0 "-B on a Pascal GPU"
has 1 "${fallback} 0: cudaLibraryLoadData failed (.*): a PTX JIT compilation failed"
echo "ok"
