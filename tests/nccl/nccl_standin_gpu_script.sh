# tests/nccl/gpu.sh, the test a GPU session runs (it skips everywhere
# else), run here through the CPU stand-in, so that the script itself is
# sound before a GPU is lent: a check it makes that no correct run can
# pass (as its check of -o all's wrong counts once was: barrier's is
# empty) fails here, not on the device.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 1 python
# Not the stand-in's nvidia-smi: there is none, so gpu.sh counts one GPU
# by running the program, which the stand-in serves.
PATH=$(echo "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/nvidia-smi" ] || echo "$d"; done | paste -sd: -)
export CB_RUN_BIN PATH
sh "$CB_SRCDIR/tests/nccl/gpu.sh" >"$CB_TMP/gpu.log" 2>&1
status=$?
[ "$status" = 0 ] || { cat "$CB_TMP/gpu.log" >&2; fail "gpu.sh through the stand-in: status $status"; }
grep -q '^running on 1 GPU(s)$' "$CB_TMP/gpu.log" || { cat "$CB_TMP/gpu.log" >&2; fail "gpu.sh did not run"; }
echo "ok"
