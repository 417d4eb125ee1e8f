# The real program with the NCCL backend on real GPUs: one rank per visible
# GPU, verified sweeps, then -m, -G and -C, native against p2p, -R 0/1/2,
# split communicators, -B's compare kernel, nccl-tests' names with -I 1 -J
# and -M 1.
# Skips (77) where no GPU is visible or the NCCL backend was not built.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 1 --help
expect_rc 0 "--help"
grep -q '^  nccl  *GPU buffers' "$CB_TMP/out" ||
    skip "the NCCL backend was not built (configure found no CUDA and NCCL)"

# How many GPUs: nvidia-smi, narrowed by CUDA_VISIBLE_DEVICES; without
# nvidia-smi, one if the program itself can run on a GPU.
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
        visible=$(printf '%s' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
        [ "$visible" -lt "$gpus" ] && gpus=$visible
    fi
fi
if [ "$gpus" = 0 ]; then
    run 1 --backend nccl -b 8 -e 8 -n 1 -w 0 -c 1
    [ "$rc" = 0 ] || skip "no GPU is visible (nvidia-smi lists none; the program says: $(grep '^nccl-collbench: ' "$CB_TMP/err" | head -n 1))"
    gpus=1
fi
echo "running on $gpus GPU(s)"

sizes=8,64,512,4096,32768,262144,2097152,16777216
run "$gpus" --backend nccl -b 8 -e 16M -f 8 -c 1 --csv "$CB_TMP/gpu.csv"
expect_rc 0 "verified sweep on $gpus GPUs"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/gpu.csv" --ranks "$gpus" --sizes "$sizes"
"$CB_PYTHON" "$CB_SRCDIR/tests/nccl/standin/check_standin.py" csv --csv "$CB_TMP/gpu.csv" \
    --backend nccl --ranks "$gpus" || fail "CSV rows are not from the nccl backend"
grep -q '^# versions: NCCL library [0-9.]*, header [0-9.]*; CUDA runtime [0-9.]*, driver [0-9.]*$' \
    "$CB_TMP/out" || fail "no versions line in the preamble"
# One host: rank r on device r, every bus id different.
awk '$2 == "Rank" { if ($9 != $3) bad = 1; if (seen[$10]++) bad = 1; n++ }
     END { exit bad || n == 0 }' "$CB_TMP/out" || fail "ranks are not on distinct devices in order"

for opts in "-m 4" "-G 3" "-m 2 -G 2" "-C 1" "-z 1"; do
    # shellcheck disable=SC2086
    run "$gpus" --backend nccl $opts -b 8 -e 1M -f 32 -n 5 -c 1 --csv "$CB_TMP/opt.csv"
    expect_rc 0 "$opts on $gpus GPUs"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/opt.csv" --ranks "$gpus" \
        --sizes 8,256,8192,262144
done

# Native against send/receive groups, and -R 0/1/2 (a library too old for
# one is status 1 with a message, reported and not failed); communicators
# split from the job's (ncclCommSplit on a non-blocking parent: hier_allreduce
# and --split); misaligned buffers (-u 1: 2 bytes off for half).
for opts in "-o alltoall,gather,scatter --nccl-impl auto,p2p" "-R 0" "-R 1" "-R 2" \
    "-o hier_allreduce" "--split size:1" "-o all -d half,float -u 1"; do
    # shellcheck disable=SC2086
    run "$gpus" --backend nccl $opts -b 8 -e 1M -f 32 -n 5 -c 1 --csv "$CB_TMP/reg.csv"
    if [ "$rc" = 1 ] && grep -q 'needs\|has no ncclAlltoAll' "$CB_TMP/err"; then
        echo "note: $opts: $(grep '^nccl-collbench: ' "$CB_TMP/err")"
        continue
    fi
    expect_rc 0 "$opts on $gpus GPUs"
    "$CB_PYTHON" -c 'import csv, sys
rows = csv.DictReader(open(sys.argv[1]))   # barrier moves no data: its wrong is empty
assert all(r["wrong"] == "0" for r in rows if r["collective"] != "barrier")' "$CB_TMP/reg.csv" ||
        fail "$opts: wrong results"
done
# -B on the GPU: the compare kernel loads (the driver compiles its PTX),
# passes its self-test (differences at known places, every element size)
# and compares every launch, every type size and -u 1; clean runs repeat.
run "$gpus" --backend nccl -B -M -o allreduce,allgather,alltoall -d int8,half,float,double -u 1 \
    -b 8 -e 4M -f 16 -n 5 -c 1 --csv "$CB_TMP/repeat.csv"
expect_rc 0 "-B on $gpus GPUs"
grep -q '^# -B: each launch.s output is compared bit for bit .*, on the device' "$CB_TMP/out" ||
    show_and_fail "-B: the GPU compare was not used"
grep -q '^# Memory per rank: .*, -B reference [0-9]* (device)' "$CB_TMP/out" ||
    show_and_fail "-B: the reference is not counted on the device"
"$CB_PYTHON" -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and sum(int(r["repeat_checked"]) for r in rows) > 0
assert all(r["unrepeatable"] == "0" and r["wrong"] == "0" for r in rows)' "$CB_TMP/repeat.csv" ||
    fail "-B: nothing compared, or a launch did not repeat"
# As all_reduce_perf (a link): their grammar, CUDA events after every
# iteration into nccl-tests' JSON, and their GPU memory line after the run.
mkdir -p "$CB_TMP/bin"
ln -s "${CB_RUN_BIN:-$CB_BIN}" "$CB_TMP/bin/all_reduce_perf"
saved_bin=${CB_RUN_BIN:-}
CB_RUN_BIN=$CB_TMP/bin/all_reduce_perf
run "$gpus" --backend nccl -b 8 -e 16M -f 8 -o max -d bfloat16 -I 1 -K 2 -n 20 -M 1 \
    -J "$CB_TMP/tests.json"
CB_RUN_BIN=$saved_bin
expect_rc 0 "all_reduce_perf -I 1 -J -M 1 on $gpus GPUs"
"$CB_PYTHON" "$CB_SRCDIR/tests/e2e/tests_json_check.py" "$CB_TMP/tests.json" --ranks "$gpus" \
    --per-iter 2 --table "$CB_TMP/out" || fail "all_reduce_perf -J: not nccl-tests' schema"
grep -q '^# GPU memory usage     : Initialization .* | User-Allocated [1-9]' "$CB_TMP/out" ||
    show_and_fail "-M 1: no GPU memory usage line with the buffers"
echo "ok"
