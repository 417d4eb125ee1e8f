# The NCCL backend through the CPU stand-in (tests/nccl/standin/): verified
# all-reduce sweeps at 1 to 4 ranks, one device per rank, every type and
# reduction, teardown without leaks, and the memory headroom for NCCL.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python

for np in 1 2 3 4; do
    CB_STANDIN_TRACE="$CB_TMP/np$np"
    export CB_STANDIN_TRACE
    run "$np" --backend nccl -b 8 -e 32K -f 8 -n 3 -c 1 --csv "$CB_TMP/np$np.csv"
    expect_rc 0 "nccl sweep on $np ranks"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/np$np.csv" --ranks "$np" \
        --sizes 8,64,512,4096,32768
    standin_check csv --csv "$CB_TMP/np$np.csv" --backend nccl --ranks "$np" --rows 10
    standin_check devices --table "$CB_TMP/out" --ranks "$np"
    # Buffers, stream, events and communicator all released; normal teardown.
    standin_check trace --prefix "$CB_TMP/np$np" --ranks "$np" --teardown destroy \
        --count "ncclCommInitRank=1" --count "cudaMalloc=3" --count "cudaFree=3"
done
unset CB_STANDIN_TRACE

# Default NCCL timing, nccl-tests': the host clock around each timed span, no
# CUDA event at all (an event per iteration is a driver call inside the
# span, which nccl-tests makes only with -I), and the CSV has no
# per-iteration figures; --stats asks for them: a start event per span and
# one mark per timed iteration of each placement.
events() {   # events N [options]: cudaEventRecord calls of the sweep on rank 0
    n=$1
    shift
    fresh_trace
    CB_STANDIN_TRACE="$CB_TMP/trace" run 2 --backend nccl -b 1K -e 1K -w 1 -c 1 -n "$n" "$@" \
        --csv "$CB_TMP/events.csv"
    expect_rc 0 "-n $n $*"
    sed -n '/^cudaMemGetInfo/,$p' "$CB_TMP/trace.0" | grep -c '^cudaEventRecord$' || true
}
few=$(events 5)
"$CB_PYTHON" - "$CB_TMP/events.csv" <<'PY' || fail "per-iteration figures without --stats"
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    assert r["iter_samples"] == "0" and r["iter_median_us"] == "", r
PY
many=$(events 40)
[ "$few" = 0 ] && [ "$many" = 0 ] ||
    fail "cudaEventRecord calls without --stats: $few at -n 5, $many at -n 40, expected none"
stats=$(events 40 --stats)
[ "$stats" = 82 ] ||
    fail "--stats: $stats cudaEventRecord calls, expected 82 (a start per span, one per timed iteration)"
echo "ok: the host clock, no event; marks only with --stats"

# Per-iteration samples (--stats) come from CUDA events on the stream, read after the
# span: one per iteration, since an iteration this long leaves room for a
# mark each (the engine spaces marks out only below CB_SAMPLE_SPAN); the
# stand-in's stream clock gives each
# operation at least CB_STANDIN_OP_US microseconds (more when the host was
# slower to launch it), so the samples are at least that and mostly that.
CB_STANDIN_OP_US=50000 run 2 --backend nccl -b 1K -e 1K -n 9 --stats --csv "$CB_TMP/samples.csv"
unset CB_STANDIN_OP_US
expect_rc 0 "per-iteration samples on the nccl backend"
"$CB_PYTHON" - "$CB_TMP/samples.csv" <<'PY' || fail "per-iteration samples from CUDA events"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 2 and all(r["backend"] == "nccl" for r in rows)
for r in rows:
    assert int(r["iter_samples"]) == 9, r["iter_samples"]
    # 9 samples are too few for a p99: unknown, not the maximum.
    assert r["iter_p99_us"] == "", r["iter_p99_us"]
    stats = [float(r[k]) for k in ("iter_min_us", "iter_median_us", "iter_max_us")]
    # At least the modelled 50 ms each; host noise on a busy machine adds, it
    # does not double a 50 ms step.
    assert all(s >= 49999 for s in stats) and stats[1] < 100000, stats
    assert stats[0] <= stats[1] <= stats[2], stats
PY

# Every type and reduction, two verification passes each (the stand-in's
# devices have compute capability 9.0, so fp8 runs too).
run 3 --backend nccl -d all --redop all -b 8 -e 4K -f 8 -n 2 -c 2 --csv "$CB_TMP/all.csv"
expect_rc 0 "all types and reductions"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/all.csv" --ranks 3 \
    --sizes 8,64,512,4096 --dtypes all --redops all --passes 2
standin_check csv --csv "$CB_TMP/all.csv" --backend nccl --ranks 3

# A wrong element is reported through the device path too.
# (rank 1 sees element 2 wrong, through the fault layer, tests/faults/layer)
NCCL_COLLBENCH_TEST_FAULT=corrupt:1:2
export NCCL_COLLBENCH_TEST_FAULT
CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" run 2 --backend faulty-nccl -b 64 -e 64 -n 2 -c 1 --csv "$CB_TMP/bad.csv"
expect_rc 7 "corrupted result on the nccl backend"
unset NCCL_COLLBENCH_TEST_FAULT
standin_check csv --csv "$CB_TMP/bad.csv" --backend faulty-nccl --ranks 2 --wrong any
grep -q '^# WRONG: .* first at rank 1 .* element 2:' "$CB_TMP/out" || show_and_fail "no WRONG line"

# Memory: cudaMemGetInfo's free bytes, measured after the backend's 64 MiB
# scratch buffer was made, less max(1 GiB, 10%) of headroom for NCCL.
# 1 GiB + 64 MiB + 10 MiB per device leaves 10 MiB, of which the engine
# gives its two buffers 80%: the largest size falls from 16 MiB to 4 MiB.
CB_STANDIN_GPU_MEM=$((1073741824 + 67108864 + 10485760))
export CB_STANDIN_GPU_MEM
run 2 --backend nccl -b 1M -e 16M -n 1 -c 1
expect_rc 0 "sweep lowered to fit"
grep -q '^# largest size lowered from 16777216 to 4194304 bytes: 10485760 bytes available per rank' \
    "$CB_TMP/out" || show_and_fail "the sweep was not lowered to what is left after the headroom"
CB_STANDIN_GPU_MEM=1073741824
run 2 --backend nccl -b 8 -e 8 -n 1
expect_rc 1 "no memory left after the headroom"
one_message "does not fit in the 0 bytes available per rank"
echo "ok"
