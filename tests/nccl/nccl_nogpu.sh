# The real program asked for the NCCL backend where it cannot run. Built
# with NCCL but no GPU visible: exit 1 on every rank with one clear message,
# and auto falls back to mpi (status 4 when an NVIDIA GPU is on the bus).
# Built without NCCL: exit 2 saying it was not built (not "unknown
# backend").
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 1 --help
expect_rc 0 "--help"
if grep -q '^  nccl  *not built: ' "$CB_TMP/out"; then
    for np in 1 2; do
        run "$np" --backend nccl -b 8 -e 64
        expect_rc 2 "--backend nccl in a build without it, $np ranks"
        [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || fail "not exactly one message"
        grep -q "^nccl-collbench: --backend: backend 'nccl' was not built into this nccl-collbench: " \
            "$CB_TMP/err" || { cat "$CB_TMP/err"; fail "the message does not say nccl was not built"; }
    done
    echo "ok (NCCL backend not built: checked the message for that case)"
    exit 0
fi
grep -q '^  nccl  *GPU buffers' "$CB_TMP/out" || fail "--help lists no nccl backend"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    skip "a GPU is visible here; tests/nccl/gpu.sh runs the NCCL backend on it"
fi
for np in 1 2; do
    run "$np" --backend nccl -b 8 -e 64
    [ "$rc" = 0 ] && skip "--backend nccl ran: this machine has a GPU that nvidia-smi did not list"
    expect_rc 1 "--backend nccl without a GPU, $np ranks"
    [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || { cat "$CB_TMP/err"; fail "not exactly one message"; }
    grep -q '^nccl-collbench: rank 0 (.*): --backend nccl cannot run here: no .*CUDA device' \
        "$CB_TMP/err" || { cat "$CB_TMP/err"; fail "the message does not say that no GPU can be used"; }
    grep -qi 'core dumped\|segmentation' "$CB_TMP/err" && fail "crashed"
    grep -q '^ *[0-9]' "$CB_TMP/out" && fail "measured without a GPU"
done

# auto: the NCCL backend is built but cannot run. With an NVIDIA GPU on
# the PCI bus (CUDA broken here: a driver older than the runtime) that is
# status 4; without one MPI it is, and the verdict says so.
run 2 -b 8 -e 64 -n 2 --csv "$CB_TMP/auto.csv"
nvidia_gpu_on_bus() {
    for d in /sys/bus/pci/devices/*; do
        grep -qi '^0x10de' "$d/vendor" 2>/dev/null && grep -qi '^0x03' "$d/class" 2>/dev/null &&
            return 0
    done
    return 1
}
if nvidia_gpu_on_bus; then
    expect_rc 4 "auto beside an NVIDIA GPU that CUDA cannot use"
    grep -q '^nccl-collbench: rank 0 (.*): --backend auto: NVIDIA GPU .* is on the PCI bus' \
        "$CB_TMP/err" || show_and_fail "the message does not name the GPU"
    echo "ok (an NVIDIA GPU is on the bus: auto refused)"
    exit 0
fi
expect_rc 0 "auto without a GPU"
"$CB_PYTHON" "$CB_SRCDIR/tests/nccl/standin/check_standin.py" csv --csv "$CB_TMP/auto.csv" \
    --backend mpi --ranks 2 || fail "auto did not fall back to the mpi backend"
has 1 '^# Result: PASS (mpi backend, host memory) '
echo "ok"
