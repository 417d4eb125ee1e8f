# nccl-tests' program names: each of the ten, run through a link in a
# temporary folder under mpirun (MPI backend), measures its collective with
# nccl-tests' grammar: -o the reduction, -d the type, -M 1 the memory
# report, their defaults (32M), their long options; what this program does
# not have is refused with status 2, naming what it has instead.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

links=$CB_TMP/bin
mkdir -p "$links"
# run_as PROGRAM NP ARGS...: run, started as PROGRAM (a prefix assignment
# before a shell function is not undone after it in every sh).
run_as() {
    CB_RUN_BIN=$1
    shift
    run "$@"
    unset CB_RUN_BIN
}
for pair in all_reduce_perf:allreduce:1 all_gather_perf:allgather:0 \
    broadcast_perf:broadcast:0 reduce_perf:reduce:1 reduce_scatter_perf:reducescatter:1 \
    alltoall_perf:alltoall:0 alltoallv_perf:alltoallv:0 gather_perf:gather:0 \
    scatter_perf:scatter:0 sendrecv_perf:sendrecv:1; do
    name=${pair%%:*}
    rest=${pair#*:}
    coll=${rest%%:*}
    reduces=${rest#*:}
    ln -s "$CB_BIN" "$links/$name"
    run_as "$links/$name" 2 -b 8 -e 64 -f 2 -n 2 -w 1 -o max -d int32 -M 1
    expect_rc 0 "$name"
    grep -q "^# Collective: $coll\$" "$CB_TMP/out" || show_and_fail "$name did not measure $coll"
    grep -q '^# Memory per rank' "$CB_TMP/out" || show_and_fail "$name -M 1: no memory report"
    has 4 '^ *[0-9]'
    # Every row: type int32, and the reduction max where the collective reduces
    # (and in sendrecv's, whose redop column shows -o's as theirs does).
    want=none
    [ "$reduces" = 1 ] && want=max
    bad=$(awk -v want="$want" '/^ *[0-9]/ && ($3 != "int32" || $4 != want)' "$CB_TMP/out")
    [ -z "$bad" ] || show_and_fail "$name -o max -d int32: rows not int32/$want: $bad"
done
prog=$links/all_reduce_perf

# -o all: every reduction, one row each at one size, in their order and
# spelling; -d all: every type in theirs (common.cu, test_opnames and
# test_typenames; fp8 only where the backend has it).
run_as "$prog" 2 -b 8 -e 8 -n 1 -o all
expect_rc 0 "all_reduce_perf -o all"
[ "$(awk '/^ *[0-9]/ {print $4}' "$CB_TMP/out" | tr '\n' ' ')" = \
    "sum prod max min avg mulsum " ] || show_and_fail "-o all: not every reduction in their order"
run_as "$links/all_gather_perf" 2 -b 64 -e 64 -n 1 -w 0 -d all
expect_rc 0 "all_gather_perf -d all"
types=$(awk '/^ *[0-9]/ {print $3}' "$CB_TMP/out" | tr '\n' ' ')
case $types in
"int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 "*) ;;
*) show_and_fail "-d all: not their order: $types" ;;
esac
case $types in *fp8*) show_and_fail "-d all: our fp8 spelling: $types" ;; esac

# Their defaults: one size, 32 MiB.
run_as "$prog" 2 -n 1 -w 0 -c 0
expect_rc 0 "all_reduce_perf with their default sizes"
has 1 '^ *33554432 '
has 1 '^ *[0-9]'

# Their long options, with their meaning.
run_as "$prog" 2 --minbytes 8 --maxbytes 32 --stepfactor 2 --iters 3 \
    --warmup_iters 0 --agg_iters 1 --run_cycles 1 --check 1 --op min --datatype uint8 \
    --root 0 --blocking 0 --average 3 --timeout 60 --report_cputime 0 --unalign 1 \
    --output_file "$CB_TMP/t.json" --per_iter_timing 1 --per_iter_skip 1 \
    --report_timestamps 1 --memory 1 --nthreads 1 --ngpus 1 --parallel_init 0 \
    --stream_null 0 --device_implementation 0 --cudagraph 0 --local_register 0
expect_rc 0 "all_reduce_perf with every long option it accepts"
has 3 '^ *[0-9]'
awk '/^ *[0-9]/ && ($3 != "uint8" || $4 != "min")' "$CB_TMP/out" | grep -q . &&
    show_and_fail "--op min --datatype uint8 not applied"
grep -q '^# *size .*i_cv%.*timestamp' "$CB_TMP/out" || show_and_fail "no -I or -S columns"
grep -q 'iters: 3 .*time: max over ranks' "$CB_TMP/out" || show_and_fail "--iters/--average lost"
grep -q '^# Memory per rank' "$CB_TMP/out" || show_and_fail "--memory 1: no memory report"
[ -s "$CB_TMP/t.json" ] || fail "--output_file wrote nothing"
# Each row ends with its time stamp, in their shape (UTC here).
awk '/^ *[0-9]/ && ($(NF-1) !~ /^[0-9]+-[0-9]+-[0-9]+$/ || $NF !~ /^[0-9]+:[0-9]+:[0-9]+$/)' \
    "$CB_TMP/out" | grep -q . &&
    show_and_fail "-S 1: a row without a time stamp"

# Refused, status 2, naming what this program has instead.
while IFS='	' read -r want args; do
    # shellcheck disable=SC2086
    run_as "$prog" 2 -b 8 -e 8 $args
    expect_rc 2 "all_reduce_perf $args"
    [ -s "$CB_TMP/out" ] && show_and_fail "all_reduce_perf $args wrote to stdout"
    [ "$(grep -c '^all_reduce_perf: ' "$CB_TMP/err")" = 1 ] || show_and_fail "$args: not one message"
    grep -F -- "$want" "$CB_TMP/err" | grep -q '^all_reduce_perf: ' ||
        show_and_fail "all_reduce_perf $args: message does not name '$want'"
done <<'CASES'
mpirun -np	-g 2
mpirun -np	--ngpus 8
mpirun -np	-t 2
--nccl-impl	-D 1
device_cta_count	-V 16
device_cta_count	--device_cta_count 32
NCCL_CTA_POLICY	-x 1
NCCL_CTA_POLICY	--cta_policy 2
needs a value	-M
unknown reduction 'bogus'	-o bogus
unknown datatype	-d float17
CASES

# --help under their name: every option of theirs, with what it does here.
run_as "$prog" 1 -h
expect_rc 0 "all_reduce_perf -h"
for long in nthreads ngpus minbytes maxbytes stepbytes stepfactor iters agg_iters \
    warmup_iters run_cycles parallel_init check op datatype root blocking stream_null \
    timeout cudagraph report_cputime report_timestamps output_file average local_register \
    cta_policy device_implementation device_cta_count memory unalign per_iter_timing \
    per_iter_skip help; do
    grep -q -- "--$long " "$CB_TMP/out" || show_and_fail "all_reduce_perf -h: no --$long"
done
awk 'length > 80' "$CB_TMP/out" | grep -q . && show_and_fail "all_reduce_perf -h: a line over 80"

# Under our own name their long options work where ours has no such word,
# and -o stays the collective.
run 2 -o broadcast --warmup_iters 0 --iters 2 -b 8 -e 8 -M 1
expect_rc 0 "nccl-collbench with --warmup_iters"
grep -q '^# Collective: broadcast$' "$CB_TMP/out" || show_and_fail "-o is not the collective"
grep -q 'warmup: 0  iters: 2 ' "$CB_TMP/out" || show_and_fail "--warmup_iters not applied"
grep -q '^# Memory per rank' "$CB_TMP/out" || show_and_fail "-M 1: no memory report"
exit 0
