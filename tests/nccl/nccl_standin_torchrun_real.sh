# Under the real torchrun (PyTorch's elastic agent), where this machine has
# it: a failing run (no GPU, no MPI: status 2) reaches torchrun's failure
# report with our message, through the error file each worker writes; the
# exact command the README and nccl-collbench(1) give (--no-python).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
command -v torchrun >/dev/null 2>&1 || skip "no torchrun here (PyTorch is not installed)"
mkdir -p "$CB_TMP/nosys"
NCCL_COLLBENCH_SYSFS=$CB_TMP/nosys CB_STANDIN_GPUS=0
export NCCL_COLLBENCH_SYSFS CB_STANDIN_GPUS
rc=0
timeout -k 5 120 torchrun --standalone --nproc-per-node 2 --no-python \
    "$CB_STANDIN_BIN" -b 1K -e 1K -n 1 -w 0 </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
[ "$rc" != 0 ] || show_and_fail "torchrun: a run without GPU or MPI passed"
grep -q 'exit status 2 (usage error).*the mpi backend needs MPI' "$CB_TMP/err" ||
    show_and_fail "torchrun's report does not carry our message"
echo "ok"
