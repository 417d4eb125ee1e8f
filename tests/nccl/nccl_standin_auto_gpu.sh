# --backend auto on a machine whose PCI bus holds an NVIDIA GPU that CUDA
# cannot use (issue 36): the stand-in's cudaGetDeviceCount fails as with a
# driver older than the runtime (CB_STANDIN_FAIL_DRIVER) or sees no device,
# and a sysfs tree (NCCL_COLLBENCH_SYSFS) holds a 10de/0302 function. auto
# must not measure host memory then: status 4, naming the GPU and the CUDA
# error, on every rank. With no GPU on the bus (an empty tree; an NVIDIA
# function that is not a display controller, an NVSwitch's bridge) auto
# takes mpi, and the verdict names it.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2

# pci_tree DIR CLASS: a sysfs tree with one NVIDIA function of CLASS.
pci_tree() {
    rm -rf "$1"
    mkdir -p "$1/bus/pci/devices/0000:3b:00.0" "$1/bus/pci/devices/0000:00:1f.0"
    printf '0x10de\n' >"$1/bus/pci/devices/0000:3b:00.0/vendor"
    printf '%s\n' "$2" >"$1/bus/pci/devices/0000:3b:00.0/class"
    printf '0x2330\n' >"$1/bus/pci/devices/0000:3b:00.0/device"
    printf '0x8086\n' >"$1/bus/pci/devices/0000:00:1f.0/vendor"
    printf '0x060100\n' >"$1/bus/pci/devices/0000:00:1f.0/class"
    printf '0x1234\n' >"$1/bus/pci/devices/0000:00:1f.0/device"
}
pci_tree "$CB_TMP/gpu" 0x030200
pci_tree "$CB_TMP/bridge" 0x068000
mkdir -p "$CB_TMP/empty"

# Every rank's CUDA fails (a driver too old; no device): auto would fall
# to mpi; refused instead.
for np in 1 2; do
    if [ "$np" = 1 ]; then
        CB_STANDIN_FAIL_DRIVER=0 NCCL_COLLBENCH_SYSFS=$CB_TMP/gpu run 1 -b 8 -e 64 -n 2
    else
        CB_STANDIN_GPUS=0 NCCL_COLLBENCH_SYSFS=$CB_TMP/gpu run 2 -b 8 -e 64 -n 2
    fi
    expect_rc 4 "a GPU on the bus that CUDA cannot use, $np ranks"
    [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || show_and_fail "not exactly one message"
    grep -q "^nccl-collbench: rank 0 (.*): --backend auto: NVIDIA GPU 0000:3b:00.0 (10de:2330) is on the PCI bus ($CB_TMP/gpu/bus/pci/devices) but the nccl backend cannot use it: no usable CUDA device (cudaGetDeviceCount: " \
        "$CB_TMP/err" || show_and_fail "the message does not name the GPU and the CUDA error"
    grep -q '^ *[0-9]' "$CB_TMP/out" && show_and_fail "measured on host memory"
done
grep -q 'no CUDA-capable device is detected' "$CB_TMP/err" || show_and_fail "no CUDA error named"
CB_STANDIN_FAIL_DRIVER=0 NCCL_COLLBENCH_SYSFS=$CB_TMP/gpu run 1 -b 8 -e 64 -n 2
grep -q 'CUDA driver version is insufficient for CUDA runtime version' "$CB_TMP/err" ||
    show_and_fail "the driver's error is not named"

# One rank of two cannot use its GPU: the same status, naming that rank.
CB_STANDIN_FAIL_DRIVER=1 NCCL_COLLBENCH_SYSFS=$CB_TMP/gpu run 2 -b 8 -e 64 -n 2
expect_rc 4 "rank 1's driver too old"
grep -q '^nccl-collbench: rank 1 (.*): --backend auto: NVIDIA GPU 0000:3b:00.0 ' "$CB_TMP/err" ||
    show_and_fail "rank 1 is not named"

# --backend mpi measures host memory on purpose, GPU or not.
CB_STANDIN_FAIL_DRIVER=0 NCCL_COLLBENCH_SYSFS=$CB_TMP/gpu run 1 --backend mpi -b 8 -e 64 -n 2
expect_rc 0 "--backend mpi beside a GPU CUDA cannot use"
has 1 '^# Result: PASS [0-9]* measurements in '

# No GPU on the bus: auto takes mpi, and the verdict says so.
for tree in empty bridge; do
    CB_STANDIN_GPUS=0 NCCL_COLLBENCH_SYSFS=$CB_TMP/$tree run 2 -b 8 -e 64 -n 2
    expect_rc 0 "auto with no GPU on the bus ($tree)"
    has 1 '^# Result: PASS (mpi backend, host memory) [0-9]* measurements in '
done
# With a GPU auto takes nccl and the verdict names no backend.
NCCL_COLLBENCH_SYSFS=$CB_TMP/gpu run 2 -b 8 -e 64 -n 2
expect_rc 0 "auto with GPUs"
has 1 '^# Result: PASS [0-9]* measurements in '
echo "ok"
