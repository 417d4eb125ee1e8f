# ring_allreduce (built from sendrecv and a local reduction) beside
# allreduce, and barrier, at 2, 3 and 4 ranks on the MPI backend: verified,
# zero wrong, element counts that do not divide by the rank count, every
# reduction; through the NCCL stand-in barrier runs and ring_allreduce is
# skipped with a note saying why.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

for np in 2 3 4; do
    run "$np" --backend mpi -o ring_allreduce,allreduce,barrier -d float,int8,half,uint64 \
        --redop all -b 5 -e 4K -f 3 -n 2 -c 2 --csv "$CB_TMP/np$np.csv"
    expect_rc 0 "ring_allreduce, allreduce and barrier on $np ranks"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/np$np.csv" --ranks "$np" \
        --sizes 5,15,45,135,405,1215,3645 --collective ring_allreduce,allreduce,barrier \
        --dtypes float,int8,half,uint64 --redops all --passes 2
    grep -q '^# barrier moves no data: one row at size 0, not verified$' "$CB_TMP/out" ||
        fail "no note that barrier is not verified on $np ranks"
done

# barrier before another collective keeps its row (it has no in-place half
# to complete it).
run 2 --backend mpi -o barrier,allreduce -b 8 -e 64 -f 8 -n 2 --csv "$CB_TMP/first.csv"
expect_rc 0 "barrier first"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/first.csv" --ranks 2 --sizes 8,64 \
    --collective barrier,allreduce

# The issue's command: one check pass.
run 4 --backend mpi -o ring_allreduce,allreduce -c 1 -e 1M
expect_rc 0 "ring_allreduce,allreduce -c 1"
sizes=$("$CB_PYTHON" -c 'print(",".join(str(8 << k) for k in range(18)))')
check check-sweep --table "$CB_TMP/out" --ranks 4 --sizes "$sizes" \
    --collective ring_allreduce,allreduce

# A wrong element in ring_allreduce's result is caught like allreduce's.
# (rank 1 sees element 3 of each of its ring steps' results wrong, through
# the fault layer, tests/faults/layer)
NCCL_COLLBENCH_TEST_FAULT=corrupt:1:3 CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
    run 3 --backend faulty-mpi -o ring_allreduce -b 64 -e 64 -n 1 -c 1
expect_rc 7 "a corrupted ring_allreduce result"
check check-wrong --table "$CB_TMP/out" --collective ring_allreduce

# The NCCL backend through the stand-in, when it was built.
if [ -x "$CB_BUILDDIR/tests/nccl-collbench-standin" ]; then
    CB_STANDIN_GPUS=4
    export CB_STANDIN_GPUS
    CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-standin" run 3 --backend nccl \
        -o ring_allreduce,allreduce,barrier -b 8 -e 4K -f 8 -n 2 -c 1 --csv "$CB_TMP/nccl.csv"
    expect_rc 0 "ring_allreduce, allreduce and barrier through the nccl stand-in"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/nccl.csv" --ranks 3 \
        --sizes 8,64,512,4096 --collective ring_allreduce,allreduce,barrier \
        --unavailable ring_allreduce
    grep -q '^# skipped ring_allreduce on the nccl backend: needs a device reduction kernel' \
        "$CB_TMP/out" || fail "no note why ring_allreduce is skipped on the nccl backend"
fi
echo "ok"
