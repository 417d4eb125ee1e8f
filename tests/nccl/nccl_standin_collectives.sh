# Every collective, datatype, reduction and root through the NCCL backend on
# the CPU stand-in (tests/nccl/standin/), verified at 1 to 4 ranks; with -m, -G,
# -z and -C; in-place alltoall and sendrecv through the scratch buffer in
# several rounds; the premultiplied float avg of NCCL within its tolerance;
# fp8 skipped visibly without compute capability 9.0 or NCCL 2.24;
# grouped sends and receives; operators created once and destroyed.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python
# Each run sweeps hundreds of combinations over TCP on a shared 2-core
# machine: a hang is still ended, but a loaded run is not taken for one.
CB_RUN_TIMEOUT=180

sizes=5,15,45,135,405,1215,3645
for np in 1 2 3 4; do
    run "$np" --backend nccl -o all -d all --redop all -r all -b 5 -e 4K -f 3 -n 1 -c 1 \
        --csv "$CB_TMP/np$np.csv"
    expect_rc 0 "every combination through the nccl backend on $np ranks"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/np$np.csv" --ranks "$np" \
        --sizes "$sizes" --collective all --dtypes all --redops all --roots all --unavailable ring_allreduce
    standin_check csv --csv "$CB_TMP/np$np.csv" --backend nccl --ranks "$np"
done

# The launch options, each over every collective.
types=float,fp8_e4m3,int64
redops=sum,premulsum,avg
for opts in "-m 3" "-G 2 -w 0" "-z 1 -m 2" "-C 1"; do
    # shellcheck disable=SC2086
    run 3 --backend nccl -o all -d "$types" --redop "$redops" -r all -b 48 -e 768 -f 4 -n 2 \
        -c 2 $opts --csv "$CB_TMP/o.csv"
    expect_rc 0 "nccl backend with $opts"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/o.csv" --ranks 3 --sizes 48,192,768 \
        --collective all --dtypes "$types" --redops "$redops" --roots all --passes 2 \
        --unavailable ring_allreduce
done

# Every collective in sub-communicators and in column layout, with --stats:
# verified, and the table keeps 13 fields in every data row (the group and
# matrix on the comment line under it), no trailing blanks.
run 4 --backend nccl -o all --split size:2 --layout row,col --stats -b 48 -e 768 -f 4 -n 2 -c 1 \
    --csv "$CB_TMP/sc.csv"
expect_rc 0 "nccl backend with --split and --layout row,col"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/sc.csv" --ranks 4 --sizes 48,192,768 \
    --collective all --layout row,col --group-sizes 2,2 --unavailable ring_allreduce

# In place, alltoall and sendrecv copy their input to the scratch buffer in
# rounds when it is smaller than the input: here 24 bytes, one int64 per peer.
NCCL_COLLBENCH_TEST_SCRATCH_BYTES=24
export NCCL_COLLBENCH_TEST_SCRATCH_BYTES
for opts in "" "-G 2 -w 0"; do
    # shellcheck disable=SC2086
    run 3 --backend nccl -o alltoall,sendrecv -d int64,half -b 48 -e 768 -f 4 -n 2 -c 2 $opts \
        --csv "$CB_TMP/s.csv"
    expect_rc 0 "in-place rounds through a small scratch buffer ($opts)"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/s.csv" --ranks 3 --sizes 48,192,768 \
        --collective alltoall,sendrecv --dtypes int64,half --passes 2
done
unset NCCL_COLLBENCH_TEST_SCRATCH_BYTES

# fp8 needs compute capability 9.0 and NCCL 2.24; premulsum NCCL 2.11.
CB_STANDIN_CC=89
export CB_STANDIN_CC
run 2 --backend nccl -o allreduce,broadcast -d half,fp8_e4m3,fp8_e5m2 -b 64 -e 64 -n 1 \
    --csv "$CB_TMP/cc.csv"
expect_rc 0 "fp8 on compute capability 8.9"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/cc.csv" --ranks 2 --sizes 64 \
    --collective allreduce,broadcast --dtypes half
for t in fp8_e4m3 fp8_e5m2; do
    grep -q "^# skipped allreduce $t sum: $t needs compute capability 9.0 or later; device 0 has 8.9$" \
        "$CB_TMP/out" || show_and_fail "no note skipping $t on compute capability 8.9"
done
unset CB_STANDIN_CC
CB_STANDIN_NCCL_VERSION=21005
export CB_STANDIN_NCCL_VERSION
run 2 --backend nccl -d fp8_e5m2,bfloat16 --redop premulsum,avg -b 64 -e 64 -n 1
expect_rc 0 "an old NCCL library"
grep -q '^# skipped allreduce fp8_e5m2 premulsum: fp8_e5m2 needs NCCL 2.24 or later (library 2.10.5, header ' \
    "$CB_TMP/out" || show_and_fail "no note skipping fp8 on NCCL 2.10"
grep -q '^# skipped allreduce bfloat16 premulsum: NCCL 2.10.5 has no premulsum' "$CB_TMP/out" ||
    show_and_fail "no note skipping premulsum on NCCL 2.10"
grep -q '^ *64 .* bfloat16 *avg ' "$CB_TMP/out" || show_and_fail "bfloat16 avg did not run"
unset CB_STANDIN_NCCL_VERSION

# The calls: alltoall as one group of a send and a receive per peer, in
# place after a copy to the scratch buffer; premulsum's operator made once
# per datatype and destroyed at the end; nothing left alive.
CB_STANDIN_TRACE="$CB_TMP/trace"
export CB_STANDIN_TRACE
run 3 --backend nccl -o alltoall,allreduce --nccl-impl p2p -d float --redop premulsum -b 96 -e 96 -n 1 -w 0 -c 1
expect_rc 0 "traced alltoall"
# Per placement one timed launch and one check: 4 groups of 6, 2 copies;
# and the backend's warmup (one alltoall of one element) before them.
standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy \
    --count "p2p group sends+receives=6=5" --count "ncclSend=15" --count "ncclRecv=15" \
    --count "cudaMemcpyAsync d2d=2" --count "ncclRedOpCreatePreMulSum=1" --count "ncclRedOpDestroy=1"
unset CB_STANDIN_TRACE
echo "ok"
