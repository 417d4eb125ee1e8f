# Choosing the NCCL backend and its GPU, through the CPU stand-in: auto
# takes nccl when every rank sees a GPU and mpi when none does; --backend
# nccl without a GPU, or with more ranks on a host than GPUs, is one clear
# error and exit 1 on every rank; -G needs a backend that captures graphs.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python
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

# More ranks on the host than GPUs: refused, naming host, GPU, ranks and counts,
# with auto as well (falling back to mpi would hide a misconfigured run).
CB_STANDIN_GPUS=2
for backend in nccl auto; do
    run 3 --backend "$backend" -b 8 -e 64
    expect_rc 1 "3 ranks, 2 GPUs, --backend $backend"
    one_message "host $host: ranks 0 and 2 would both drive GPU 0000:01:00.0"
    one_message "3 ranks of this host see the same 2 GPUs, so start at most 2,"
done
CB_STANDIN_GPUS=1
run 1 --backend nccl -b 8 -e 64 -n 2
expect_rc 0 "one rank on one GPU"

# Ranks given different NCCL_HOSTID values are different hosts, as NCCL
# counts them, so they may share a GPU: 3 ranks, each its own host, all on
# the one GPU; 2 ranks of one host id on it are refused as above, naming
# the id. Ranks sharing a GPU share its free memory: the automatic cap
# gives each half of what one rank alone on the GPU gets.
hostid_launcher "a b c" "$CB_STANDIN_BIN"
CB_RUN_BIN=$CB_TMP/hostid.sh
run 3 --backend nccl -b 8 -e 4K -f 8 -n 2 -c 1 --csv "$CB_TMP/hostid.csv"
expect_rc 0 "3 ranks on one GPU with 3 host ids"
standin_check csv --csv "$CB_TMP/hostid.csv" --backend nccl --ranks 3
[ "$(grep -c '^#  Rank  *[0-2]  Pid .* device  0 \[0000:01:00.0\]' "$CB_TMP/out")" = 3 ] ||
    show_and_fail "the 3 ranks do not all use device 0"
grep -q '^# ranks: 3  nodes: 3  ranks per node: 1$' "$CB_TMP/out" ||
    show_and_fail "the preamble does not count 3 nodes"
hostid_launcher "a a b" "$CB_STANDIN_BIN"
run 3 --backend nccl -b 8 -e 64
expect_rc 1 "2 ranks of host id a on one GPU"
one_message "host $host NCCL_HOSTID=a: ranks 0 and 1 would both drive GPU 0000:01:00.0"
one_message "2 ranks of this host see the same 1 GPU, so start at most 1,"

CB_STANDIN_GPUS=2
CB_STANDIN_GPU_MEM=$((4 << 30))
export CB_STANDIN_GPU_MEM
available() { # the bytes per rank named in the last run's message
    sed -n 's/^nccl-collbench: .*does not fit in the \([0-9]*\) bytes available per rank$/\1/p' \
        "$CB_TMP/err"
}
for ids in "a b" "- -"; do
    hostid_launcher "$ids" "$CB_STANDIN_BIN"
    run 2 --backend nccl -b 64G -e 64G -n 1 -w 0 -c 1
    expect_rc 1 "64 GiB with host ids '$ids'"
    one_message "even the smallest size does not fit in the"
    [ "$ids" = "a b" ] && shared=$(available) || alone=$(available)
done
[ $((shared * 2)) = "$alone" ] ||
    fail "2 ranks on one GPU get $shared bytes each, one rank alone $alone"
unset CB_STANDIN_GPU_MEM
CB_RUN_BIN=$CB_STANDIN_BIN

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
