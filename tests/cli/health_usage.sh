# nccl-collbench-health's command line, without Slurm: --help and --version
# exit 0; a bad option or value, and --scan outside an allocation, are
# usage errors (status 2) naming what was wrong (--expect and
# --expect-ratio included); with no GPU to count it
# cannot check (status 3) and says to give --gpus.
. "$CB_SRCDIR/tests/support/lib.sh"
HEALTH="$CB_BUILDDIR/src/nccl-collbench-health"
[ -x "$HEALTH" ] || fail "$HEALTH was not built"

# usage WANT TEXT ARGS...: the tool exits WANT and its message contains TEXT.
usage() {
    want=$1 text=$2
    shift 2
    rc=0
    env -u SLURM_JOB_NODELIST -u SLURM_GPUS_ON_NODE "$HEALTH" "$@" >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
    expect_rc "$want" "nccl-collbench-health $*"
    grep -qF -- "$text" "$CB_TMP/err" || show_and_fail "nccl-collbench-health $*: no '$text'"
}
"$HEALTH" --help >"$CB_TMP/out" || fail "--help"
grep -q '^Usage: nccl-collbench-health ' "$CB_TMP/out" || fail "--help: no usage line"
"$HEALTH" --version | grep -q '^nccl-collbench-health [0-9]' || fail "--version"
usage 2 "unknown option '--bogus'" --bogus
usage 2 "--gpus x: not a positive whole number" --gpus x
usage 2 "--gpus 0: not a positive whole number" --gpus 0
usage 2 "--min-busbw fast: not a number of GB/s" --gpus 1 --min-busbw fast
usage 2 "--srun needs a value" --srun
usage 2 "--expect '': give auto or a readable file of floors" --gpus 1 --expect ''
usage 2 "--expect /nonexistent: give auto or a readable file of floors" --gpus 1 --expect /nonexistent
usage 2 "--expect-ratio 1.5: not a number above 0 and at most 1" --gpus 1 --expect auto --expect-ratio 1.5
usage 2 "--expect-ratio 0: not a number above 0 and at most 1" --gpus 1 --expect auto --expect-ratio 0
usage 2 "--expect-ratio needs --expect" --gpus 1 --expect-ratio 0.5
usage 2 "--scan runs inside a Slurm allocation" --scan --gpus 2
usage 2 "--program /nonexistent: not an executable file" --gpus 1 --program /nonexistent
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    usage 3 "no GPU found on this node" --program "$CB_BIN"
fi
echo ok
