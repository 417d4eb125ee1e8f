# bench/run.sh's NCCL half (BENCH_NCCL=1), through the CPU stand-in: parts 1
# and 4 run on the nccl backend beside mpi, part 1 against the bare NCCL
# loop (bench/bare_nccl_allreduce.c built on the stand-in), with
# BENCH_HOSTIDS=1 putting 3 ranks on one GPU, and print every figure as a
# number beside its target. The figures themselves are the stand-in's.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 1

NUM='[0-9][0-9]*\.[0-9][0-9]*'
rc=0
BENCH_NCCL=1 BENCH_HOSTIDS=1 NP=3 PARTS="1 4" ROUNDS=2 ITERS=3 WARMUP=1 \
    OVERHEAD_MAX=64 SWEEP_MAX=4096 RUNS4=2 BUDGET=5 MPIRUN="$CB_MPIRUN" TOOL="$CB_STANDIN_BIN" \
    BARE_MPI="$CB_BUILDDIR/bench/bare_allreduce" \
    BARE_NCCL="$CB_BUILDDIR/tests/bare-nccl-allreduce-standin" \
    timeout -k 5 240 sh "$CB_SRCDIR/bench/run.sh" "$CB_BUILDDIR" >"$CB_TMP/out" 2>"$CB_TMP/err" ||
    rc=$?
expect_rc 0 "bench/run.sh"
for be in mpi nccl; do
    has 1 "^== 1 ($be). timing overhead: all-reduce float sum, 3 ranks"
    has 1 "^== 4 ($be). time to result"
done
for bytes in 8 16 32 64; do
    has 2 "^ *$bytes  *$NUM  *$NUM  *$NUM  *[0-2]/2  *$NUM  <= 1\.02\$"
done
has 2 "^  4 sizes: ratio within 0\.98-1\.02 at [0-4], at most 1\.02 at [0-4]; largest $NUM at [0-9]* B\$"
has 2 "^  the bare loop against itself (again): within 0\.98-1\.02 at [0-4] of 4 sizes, $NUM to $NUM\$"
has 2 "^  fixed  wall $NUM $NUM s (median $NUM s); .*; timed iterations 4000\$"
has 2 "^  wall time ratio stable/fixed $NUM  (target < 1)\$"
has 2 "^  spread ratio stable/fixed, time $NUM, iteration median $NUM  (target <= 1)\$"
echo "ok"
