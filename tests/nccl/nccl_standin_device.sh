# The NCCL backend's GPU choice as clusters bind GPUs, through the CPU
# stand-in (its GPUs filtered and renumbered by CUDA_VISIBLE_DEVICES as the
# CUDA runtime does): per-task binding (each rank sees its own GPU, or a
# set shared with some others), two
# ranks of one host on one GPU refused naming host, GPU and ranks, sharing
# through NCCL_HOSTID still allowed, the NCCL_COLLBENCH_DEVICE override
# (and nccl-tests' NCCL_TESTS_DEVICE read as it),
# --split choosing over the whole run, and --backend auto refusing a job in
# which only some ranks see a GPU.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 trace

# env_launcher VAR WORDS NEXT NAME: $CB_TMP/NAME.sh runs NEXT with VAR set
# to the rank's word of WORDS ("-": unset), the rank from the launcher's
# variable (the program itself never reads those).
env_launcher() {
    cat >"$CB_TMP/$4.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
[ -n "\$rank" ] || { echo "$4.sh: the launcher set no rank variable" >&2; exit 99; }
word=\$(echo "$2" | cut -d' ' -f\$((rank + 1)))
if [ "\$word" = - ]; then unset $1; else $1=\$word; export $1; fi
exec "$3" "\$@"
LAUNCHER
    chmod +x "$CB_TMP/$4.sh"
}

# devices WANT: the "Using devices" lines give rank r the visible device
# and bus id of WANT's word r ("0@01": device 0, bus 0000:01:00.0).
devices() {
    got=$(awk '$2 == "Rank" && $8 == "device" { printf "%s%s@%s", sep, $9, substr($10, 7, 2); sep = " " }' \
        "$CB_TMP/out")
    [ "$got" = "$1" ] || show_and_fail "devices by rank: '$got', expected '$1'"
}

uuid() { echo "GPU-5ca1ab1e-0000-4000-8000-00000000000$1"; }

# physical WANT: the trace of each rank r (of as many as WANT has words)
# shows it set the physical GPU of WANT's word r, and made its NCCL
# communicators and device buffers there and nowhere else.
physical() {
    got='' r=0
    for p in $1; do
        set=$(sed -n 's/^cudaSetDevice [0-9]* physical=\([0-9-]*\) .*/\1/p' "$CB_TMP/trace.$r" |
            tail -n 1)
        got="$got${got:+ }$set"
        grep -q "^ncclCommInitRank .* physical=$p\$" "$CB_TMP/trace.$r" ||
            show_and_fail "rank $r made no NCCL communicator on physical GPU $p"
        grep -q '^cudaMalloc ' "$CB_TMP/trace.$r" ||
            show_and_fail "rank $r allocated no device memory"
        grep -E '^(cudaMalloc|ncclCommInitRank) ' "$CB_TMP/trace.$r" | grep -v " physical=$p\$" &&
            show_and_fail "rank $r used another GPU than physical $p"
        r=$((r + 1))
    done
    [ "$got" = "$1" ] || show_and_fail "physical GPUs set by rank: '$got', expected '$1'"
}

# launch NP CVD HOSTIDS OVERRIDES ARGS...: run NP ranks with these per-rank
# words of CUDA_VISIBLE_DEVICES, NCCL_HOSTID and NCCL_COLLBENCH_DEVICE.
launch() {
    np=$1 cvd=$2 ids=$3 over=$4
    shift 4
    rm -f "$CB_TMP"/trace.*
    env_launcher NCCL_COLLBENCH_DEVICE "$over" "$CB_STANDIN_BIN" over
    env_launcher NCCL_HOSTID "$ids" "$CB_TMP/over.sh" ids
    env_launcher CUDA_VISIBLE_DEVICES "$cvd" "$CB_TMP/ids.sh" cvd
    CB_RUN_BIN=$CB_TMP/cvd.sh
    run "$np" "$@"
}
none="- - - -"

# Per-task binding: each rank sees one GPU of its own, in any order, by
# index or by UUID; each drives the one it sees (device 0 of its own).
launch 4 "0 1 2 3" "$none" "$none" --backend nccl -o allreduce -b 8 -e 64 -n 2 -c 1
expect_rc 0 "CUDA_VISIBLE_DEVICES=local rank"
devices "0@01 0@02 0@03 0@04"
physical "0 1 2 3"
host=$(awk '$2 == "Rank" && $6 == "on" { print $7; exit }' "$CB_TMP/out")
[ -n "$host" ] || show_and_fail "no host in the Using devices lines"
launch 4 "$(uuid 3) 2 $(uuid 0) $(uuid 1)" "$none" "$none" -o allreduce -b 8 -e 64 -n 2 -c 1
expect_rc 0 "per-task binding by UUID, backend auto"
devices "0@04 0@03 0@01 0@02"
physical "3 2 0 1"
# Two GPUs each, different pairs: each rank takes the first it sees.
launch 2 "2,3 0,1" "- -" "- -" --backend nccl -b 8 -e 64 -n 1 -c 1
expect_rc 0 "two GPUs per rank"
devices "0@03 0@01"
# Ranks that see the same pair (GPUs bound by socket) share it out.
launch 4 "0,1 2,3 0,1 2,3" "$none" "$none" --backend nccl -b 8 -e 64 -n 1 -c 1
expect_rc 0 "two ranks per pair of GPUs"
devices "0@01 0@03 1@02 1@04"

# Every rank sees all four: the rank's place on the host, as before.
launch 4 "$none" "$none" "$none" --backend nccl -b 8 -e 64 -n 1 -c 1
expect_rc 0 "all GPUs visible to every rank"
devices "0@01 1@02 2@03 3@04"

# CUDA's filtering: an entry that names no GPU ends the list.
launch 1 "2,9,1" - - --backend nccl -b 8 -e 64 -n 1 -c 1
expect_rc 0 "CUDA_VISIBLE_DEVICES=2,9,1"
devices "0@03"
launch 1 "2,9,1" - 1 --backend nccl -b 8 -e 64 -n 1 -c 1
expect_rc 1 "the override beyond a truncated list"
one_message "NCCL_COLLBENCH_DEVICE=1 names no device: this rank sees 1 GPU, numbered 0 to 0"

# Two ranks of one host on one physical GPU: refused on every rank, naming
# the host, the GPU's bus id and the ranks, before anything is measured.
launch 4 "0 1 1,0 2" "$none" "$none" --backend nccl -b 8 -e 64
expect_rc 1 "ranks 1 and 2 on one GPU"
one_message "host $host: ranks 1 and 2 would both drive GPU 0000:02:00.0"
grep -q '^ *[0-9]' "$CB_TMP/out" && show_and_fail "measured with two ranks on one GPU"
launch 3 "0 0 0" "- - -" "- - -" --backend nccl -b 8 -e 64
expect_rc 1 "three ranks on one GPU"
one_message "host $host: ranks 0, 1 and 2 would all drive GPU 0000:01:00.0"

# Unless sharing was asked for: ranks given different NCCL_HOSTID values
# are different hosts, as NCCL counts them.
launch 4 "0 0 1 1" "a b a b" "$none" --backend nccl -o allreduce -b 8 -e 64 -n 2 -c 1
expect_rc 0 "two host ids on each GPU"
devices "0@01 0@01 0@02 0@02"
launch 4 "0 0 1 1" "a a b b" "$none" --backend nccl -b 8 -e 64
expect_rc 1 "one host id on each GPU"
one_message "host $host NCCL_HOSTID=a: ranks 0 and 1 would both drive GPU 0000:01:00.0"

# The override: the named device among those the rank sees; still one
# rank per GPU; a value naming no device is refused, naming it.
launch 2 "- -" "- -" "3 1" --backend nccl -o allreduce -b 8 -e 64 -n 2 -c 1
expect_rc 0 "NCCL_COLLBENCH_DEVICE=3 and 1"
devices "3@04 1@02"
physical "3 1"
launch 2 "3,2 -" "- -" "1 2" --backend nccl -b 8 -e 64
expect_rc 1 "the override puts both ranks on physical GPU 2"
one_message "host $host: ranks 0 and 1 would both drive GPU 0000:03:00.0"
launch 2 "- -" "- -" "0 x" --backend nccl -b 8 -e 64
expect_rc 1 "NCCL_COLLBENCH_DEVICE=x"
one_message "NCCL_COLLBENCH_DEVICE=x names no device: this rank sees 4 GPUs, numbered 0 to 3"

# nccl-tests' NCCL_TESTS_DEVICE is read as the override where that is
# unset; the two set to different devices are refused, naming both.
env_launcher NCCL_TESTS_DEVICE "3 1" "$CB_STANDIN_BIN" tests_device
standin_bin=$CB_STANDIN_BIN
CB_STANDIN_BIN=$CB_TMP/tests_device.sh
launch 2 "- -" "- -" "- -" --backend nccl -o allreduce -b 8 -e 64 -n 2 -c 1
expect_rc 0 "NCCL_TESTS_DEVICE=3 and 1"
devices "3@04 1@02"
physical "3 1"
grep -q '^# NCCL_TESTS_DEVICE=3: read as NCCL_COLLBENCH_DEVICE' "$CB_TMP/out" ||
    show_and_fail "no preamble note on NCCL_TESTS_DEVICE"
launch 2 "- -" "- -" "3 2" --backend nccl -b 8 -e 64
expect_rc 1 "NCCL_COLLBENCH_DEVICE=2 beside NCCL_TESTS_DEVICE=1"
one_message "NCCL_COLLBENCH_DEVICE=2 and NCCL_TESTS_DEVICE=1 name different devices"
CB_STANDIN_BIN=$standin_bin

# --split chooses over the whole run: 4 ranks, 4 GPUs, two groups of two
# still drive 4 different GPUs.
launch 4 "$none" "$none" "$none" --backend nccl --split stride:2 -o allreduce -b 8 -e 64 -n 2 -c 1
expect_rc 0 "--split stride:2"
devices "0@01 1@02 2@03 3@04"
physical "0 1 2 3"

# --backend auto: ranks without a GPU (Slurm sets NoDevFiles when a task
# has none) beside ranks with one are refused, naming ranks and host,
# instead of running everything on the MPI backend.
launch 4 "- - NoDevFiles NoDevFiles" "$none" "$none" -b 8 -e 64
expect_rc 1 "auto with GPUs on ranks 0 and 1 only"
one_message "2 of 4 ranks cannot run the nccl backend that the others can: rank 2 ($host), rank 3 ($host)"
grep -q '^ *[0-9]' "$CB_TMP/out" && show_and_fail "measured a mixed job"
# No GPU on any rank: MPI, with a note that says why.
launch 2 "NoDevFiles NoDevFiles" "- -" "- -" -b 8 -e 64 -n 1 -c 1
expect_rc 0 "auto without any GPU"
grep -q '^# backend: mpi' "$CB_TMP/out" || show_and_fail "auto without a GPU did not choose mpi"
grep -q '^# backend auto chose mpi: no rank can run nccl (no usable CUDA device' "$CB_TMP/out" ||
    show_and_fail "no note says why auto chose mpi"
echo "ok"
