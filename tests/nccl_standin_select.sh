# Choosing the NCCL backend and its GPU, through the CPU stand-in: auto
# takes nccl when every rank sees a GPU and mpi when none does; --backend
# nccl without a GPU, or with more ranks on a host than GPUs, is one clear
# error and exit 1 on every rank; -G needs a backend that captures graphs.
. "$CB_SRCDIR/tests/lib.sh"
. "$CB_SRCDIR/tests/standin/lib.sh"
need_standin
need_mpirun
need_python

CB_STANDIN_GPUS=4
export CB_STANDIN_GPUS
for np in 1 2 4; do
    run "$np" -b 8 -e 64 -n 2 --csv "$CB_TMP/auto.csv"
    expect_rc 0 "auto with GPUs on $np ranks"
    standin_check csv --csv "$CB_TMP/auto.csv" --backend nccl --ranks "$np"
    grep -q '^# backend: nccl (NCCL [0-9.]*)' "$CB_TMP/out" || show_and_fail "preamble does not name nccl"
done
# The host name as MPI reports it, from the "Using devices" lines.
host=$(awk '$2 == "Rank" && $6 == "on" { print $7; exit }' "$CB_TMP/out")
[ -n "$host" ] || show_and_fail "no host in the Using devices lines"

# The MPI backend is still there when asked for, GPUs or not.
run 2 --backend mpi -b 8 -e 64 -n 2 --csv "$CB_TMP/mpi.csv"
expect_rc 0 "--backend mpi"
standin_check csv --csv "$CB_TMP/mpi.csv" --backend mpi --ranks 2

CB_STANDIN_GPUS=0
for np in 1 3; do
    run "$np" -b 8 -e 64 -n 2 --csv "$CB_TMP/nogpu.csv"
    expect_rc 0 "auto without GPUs on $np ranks"
    standin_check csv --csv "$CB_TMP/nogpu.csv" --backend mpi --ranks "$np"

    run "$np" --backend nccl -b 8 -e 64
    expect_rc 1 "--backend nccl without GPUs on $np ranks"
    one_message "--backend nccl cannot run here: no usable CUDA device (cudaGetDeviceCount: no CUDA-capable device is detected)"
    grep -q '^ *[0-9]' "$CB_TMP/out" && show_and_fail "measured without a GPU"
done

# More ranks on the host than GPUs: refused, naming host and both counts,
# with auto as well (falling back to mpi would hide a misconfigured run).
CB_STANDIN_GPUS=2
for backend in nccl auto; do
    run 3 --backend "$backend" -b 8 -e 64
    expect_rc 1 "3 ranks, 2 GPUs, --backend $backend"
    one_message "host $host runs 3 ranks but sees 2 GPUs"
    one_message "start at most 2 ranks on this host"
done
CB_STANDIN_GPUS=1
run 1 --backend nccl -b 8 -e 64 -n 2
expect_rc 0 "one rank on one GPU"

# -G needs graph capture: the MPI backend refuses it before measuring.
run 2 --backend mpi -G 1 -b 8 -e 64
expect_rc 1 "-G with --backend mpi"
one_message "--backend mpi: it cannot capture CUDA graphs (-G)"
grep -q '^ *[0-9]' "$CB_TMP/out" && show_and_fail "measured with -G on the mpi backend"
CB_STANDIN_GPUS=0
run 2 -G 1 -b 8 -e 64
expect_rc 1 "-G with auto and no GPU"
one_message "no backend can run on every rank"
echo "ok"
