#!/bin/sh
# Library and runtime calls per timed iteration: nccl-collbench's NCCL
# backend against the bare loop (bench/bare_nccl_allreduce.c: a blocking
# communicator, ncclMemAlloc buffers, as nccl-tests), both on the CPU
# stand-in for CUDA and NCCL (tests/nccl/standin/), whose trace has a line
# per launch, group call, event record, graph launch and copy, and for
# each ncclInProgress a non-blocking communicator returns. The calls
# between the span's two cudaEventRecord lines (the tool's first timed span,
# out-of-place, after its warmup of each kind of operation) are the calls
# inside the timed span; for -m 1, -m 4 and -G 2 they must be the same. The
# tool runs with --clock device so that events mark its span as the bare
# loop's do (the default host clock records none: the same launches).
# Usage: TOOL=... BARE=... [MPIRUN="mpirun ..."] [NP=2] [ITERS=8] sh bench/calls.sh
# Prints one line per mode; exits 1 when a count differs.
set -u
tool=${TOOL:?TOOL: the nccl-collbench program built on the stand-in}
bare=${BARE:?BARE: bare_nccl_allreduce built on the stand-in}
mpirun=${MPIRUN:-mpirun}
np=${NP:-2}
iters=${ITERS:-8}
dir=$(mktemp -d "${TMPDIR:-/tmp}/calls.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
CB_STANDIN_GPUS=${CB_STANDIN_GPUS:-$np}
export CB_STANDIN_GPUS

# span FILE AFTER: the calls (lines naming a nccl or cuda call, not the
# stand-in's own "run" lines) between the first two cudaEventRecord lines
# after the first line starting with AFTER ("" for the file's start), as
# "COUNT NAME NAME...".
span() {
    awk -v after="$2" '
        !started && (after == "" || index($0, after) == 1) { started = 1; if (after != "") next }
        !started { next }
        /^cudaEventRecord$/ { events++; if (events == 2) exit; next }
        events == 1 && $1 ~ /^(nccl|cuda)/ { n++; names[$1]++ }
        END { printf "%d", n; for (k in names) printf " %s:%d", k, names[k]; printf "\n" }' "$1"
}

status=0
printf '%-6s %10s %10s %8s  %s\n' mode tool/iter bare/iter equal "calls in the tool's span"
for mode in "-m 1" "-m 4" "-G 2"; do
    agg=1 graph=0 units=$iters
    case $mode in
    "-m 4") agg=4 ;;
    "-G 2") graph=2 units=2 ;;
    esac
    rm -f "$dir"/t.* "$dir"/b.*
    CB_STANDIN_TRACE="$dir/t" $mpirun -np "$np" "$tool" --backend nccl --clock device -o allreduce -d float \
        --redop sum -b 1K -e 1K -n "$iters" -w 2 -c 0 $mode >"$dir/out" 2>&1 ||
        { cat "$dir/out" >&2; echo "calls.sh: the tool failed ($mode)" >&2; exit 2; }
    BENCH_AGG=$agg BENCH_GRAPH=$graph CB_STANDIN_TRACE="$dir/b" $mpirun -np "$np" "$bare" \
        "$iters" 2 1024 1024 >"$dir/out" 2>&1 ||
        { cat "$dir/out" >&2; echo "calls.sh: the bare loop failed ($mode)" >&2; exit 2; }
    t=$(span "$dir/t.0" cudaMemGetInfo)
    b=$(span "$dir/b.0" "")
    tn=${t%% *} bn=${b%% *}
    same=yes
    [ "$tn" = "$bn" ] && [ "$tn" -gt 0 ] || { same=no; status=1; }
    printf '%-6s %10s %10s %8s  %s\n' "$mode" "$(awk -v n="$tn" -v u="$units" 'BEGIN { printf "%.2f", n / u }')" \
        "$(awk -v n="$bn" -v u="$units" 'BEGIN { printf "%.2f", n / u }')" "$same" "${t#* }"
done
exit $status
