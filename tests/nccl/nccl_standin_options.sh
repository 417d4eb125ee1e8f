# -m, -z, -G and -C on the NCCL backend, through the CPU stand-in. Its
# trace shows what the backend was asked to do; its virtual stream clock
# (CB_STANDIN_OP_US: each collective keeps the stream busy that long) makes
# the per-operation time predictable, so a wrong divisor or a time taken at
# the wrong moment shows.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

# -m 4: each of the 3 timed iterations is one group of 4 all-reduces, for
# each placement; one operation's time is that of the iteration over 4. The
# backend's warmup of each kind (before it measures the free memory) adds
# one all-reduce and one group (its alltoall).
# Modelled operations of 100 ms stay well clear of a loaded machine's noise;
# a wrong divisor would be off by 2 or more.
CB_STANDIN_OP_US=100000
export CB_STANDIN_OP_US
fresh_trace
run 2 --backend nccl -m 4 -n 3 -w 0 -c 0 -b 64 -e 64 --csv "$CB_TMP/m.csv"
expect_rc 0 "-m 4"
grep -q 'agg: 4' "$CB_TMP/out" || show_and_fail "the preamble does not show -m 4"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy --groups-of 4 \
    --count "ncclGroupStart=7" --count "ncclAllReduce=25"
standin_check csv --csv "$CB_TMP/m.csv" --backend nccl --ranks 2 --rows 2 --wrong any \
    --min-us 90000 --max-us 190000

# -m with verification, and on the MPI backend, which has no groups and
# launches the operations one after the other.
unset CB_STANDIN_OP_US
run 3 --backend nccl -m 3 -n 2 -c 2 -b 8 -e 4K -f 8 --csv "$CB_TMP/mv.csv"
expect_rc 0 "-m 3 verified"
standin_check csv --csv "$CB_TMP/mv.csv" --backend nccl --ranks 3 --rows 8
run 3 --backend mpi -m 3 -n 2 -c 2 -b 8 -e 4K -f 8 --csv "$CB_TMP/mm.csv"
expect_rc 0 "-m 3 on the mpi backend"
standin_check csv --csv "$CB_TMP/mm.csv" --backend mpi --ranks 3 --rows 8

# -z 1, 2 and 3: every launch is waited for before the next; -z 0: not.
for z in 0 1 2 3; do
    fresh_trace
    run 2 --backend nccl -z "$z" -n 4 -w 2 -c 1 -b 8 -e 512 -f 8 --csv "$CB_TMP/z.csv"
    expect_rc 0 "-z $z"
    grep -q "blocking: $z" "$CB_TMP/out" || show_and_fail "the preamble does not show -z $z"
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --blocking "$((z != 0))"
    standin_check csv --csv "$CB_TMP/z.csv" --backend nccl --ranks 2 --rows 6
done

# -G 3 with -m 2 -n 2: the 2 iterations (4 all-reduces) are captured once per
# placement and the graph is launched 3 times, the first (which uploads it)
# timed as nccl-tests times it, with -w 1 too; one operation's time is the
# span over 3 x 4 operations.
CB_STANDIN_OP_US=100000
export CB_STANDIN_OP_US
for w in 0 1; do
    fresh_trace
    run 2 --backend nccl -G 3 -m 2 -n 2 -w "$w" -c 1 -b 64 -e 64 --csv "$CB_TMP/g.csv"
    expect_rc 0 "-G 3 -w $w"
    grep -q 'cudagraph: 3' "$CB_TMP/out" || show_and_fail "the preamble does not show -G 3"
    launches=$((2 * 3))
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy \
        --count "cudaStreamBeginCapture=2" --count "cudaStreamEndCapture 4=2" \
        --count "ncclAllReduce=$((1 + 8 + 2 * (2 * w + 1)))" \
        --count "cudaGraphLaunch 4=$launches" \
        --count "run allreduce count=16 inplace=0 replayed=1=$((launches * 2))" \
        --count "run allreduce count=16 inplace=1 replayed=1=$((launches * 2))"
    standin_check csv --csv "$CB_TMP/g.csv" --backend nccl --ranks 2 --rows 2 \
        --min-us 90000 --max-us 190000
done
# -G with -z 1 waits after each graph launch.
fresh_trace
run 2 --backend nccl -G 2 -z 1 -n 2 -w 0 -c 1 -b 64 -e 64
expect_rc 0 "-G 2 -z 1"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --blocking 1 --count "cudaGraphLaunch 2=4"

# -C 1 reports the time to launch, which the virtual clock leaves far below
# the time to complete that -C 0 reports.
CB_STANDIN_OP_US=200000
for c in 0 1; do
    run 2 --backend nccl -C "$c" -n 2 -w 0 -c 1 -b 64 -e 64 --csv "$CB_TMP/c.csv"
    expect_rc 0 "-C $c"
    grep -q "cputime: $c" "$CB_TMP/out" || show_and_fail "the preamble does not show -C $c"
    if [ "$c" = 0 ]; then
        standin_check csv --csv "$CB_TMP/c.csv" --backend nccl --ranks 2 --min-us 180000
    else
        standin_check csv --csv "$CB_TMP/c.csv" --backend nccl --ranks 2 --max-us 100000
    fi
done
run 2 --backend nccl -C 1 -G 2 -n 2 -w 0 -c 1 -b 64 -e 64 --csv "$CB_TMP/cg.csv"
expect_rc 0 "-C 1 -G 2"
standin_check csv --csv "$CB_TMP/cg.csv" --backend nccl --ranks 2 --max-us 100000
unset CB_STANDIN_OP_US
# Nothing measured is a usage error, on every rank, with the notes saying
# why (ring_allreduce reduces on the host: not on GPU buffers); with another
# collective beside it, the run measures that one and passes.
run 2 --backend nccl -o ring_allreduce -b 1K -e 4K
expect_rc 2 "only a collective the backend skips"
grep -q '^# skipped ring_allreduce on the nccl backend' "$CB_TMP/out" ||
    show_and_fail "no note on why ring_allreduce was skipped"
grep -q '^nccl-collbench: rank 0 (.*): nothing was measured: the nccl backend skipped every' \
    "$CB_TMP/err" || show_and_fail "no message that nothing was measured"
run 2 --backend nccl -o ring_allreduce,allreduce -b 1K -e 4K
expect_rc 0 "a skipped collective beside a measured one"

# -M 1 (nccl-tests' grammar): after the run, their GPU memory line from the
# device's free memory: the buffers are the two of 1M, each taking the 2M
# of the allocation granularity that ncclMemAlloc rounds to (cuMem; the
# stand-in's CB_STANDIN_MEM_GRANULARITY); the mpi backend has no device and
# no such line.
run 2 --backend nccl -M 1 -b 1M -e 1M -n 2 -w 1
expect_rc 0 "-M 1 on nccl"
grep -q '^# GPU memory usage : Initialization [0-9.]*[KMG]* | User-Allocated 4M | Collective [0-9.]*[KMG]* | Total ' "$CB_TMP/out" ||
    show_and_fail "-M 1: no GPU memory line with the 4M of buffers"
# Each figure is the most of any rank, as theirs (common.cu, run():
# MPI_MAX over MPI_COMM_WORLD): rank 1 alone pays 30M to connect
# (CB_STANDIN_CONNECT_BYTES, charged while the communicator is made), and
# the Initialization figure has it (64M and 94M: its 64M of NCCL's own).
case "$CB_LAUNCHER" in
ompi4 | ompi5)
    m_args="--backend nccl -M 1 -b 1M -e 1M -n 2 -w 1"
    rc=0
    timeout -k 5 60 $CB_MPIRUN -np 1 env CB_STANDIN_CONNECT_BYTES=0 "$CB_STANDIN_BIN" $m_args : \
        -np 1 env CB_STANDIN_CONNECT_BYTES=31457280 "$CB_STANDIN_BIN" $m_args \
        </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
    expect_rc 0 "-M 1, rank 1 with 30M more"
    grep -q '^# GPU memory usage : Initialization 94M | User-Allocated 4M | ' "$CB_TMP/out" ||
        show_and_fail "-M 1: not the most of any rank (rank 1's 94M)"
    ;;
*) echo "-M 1's largest over ranks not checked: launcher $CB_LAUNCHER (its per-rank environment)" ;;
esac
run 2 --backend mpi -M 1 -b 1M -e 1M -n 2 -w 1
expect_rc 0 "-M 1 on mpi"
grep -q 'GPU memory usage' "$CB_TMP/out" && show_and_fail "-M 1 on mpi: a GPU memory line"

# -I 1 -J on nccl: a CUDA event after every iteration, every rank's samples
# in nccl-tests' JSON, and its four columns in the table.
run 2 --backend nccl -I 1 -K 1 -n 4 -w 1 -b 8 -e 64 -f 8 -J "$CB_TMP/i.json"
expect_rc 0 "-I 1 -J on nccl"
"$CB_PYTHON" "$CB_SRCDIR/tests/e2e/tests_json_check.py" "$CB_TMP/i.json" --ranks 2 \
    --per-iter 1 --table "$CB_TMP/out" || fail "-I 1 -J on nccl: not nccl-tests' schema"
grep -q '^# *size .* i_min *i_max *i_p99 *i_cv%' "$CB_TMP/out" || show_and_fail "no -I columns"
echo "ok"
