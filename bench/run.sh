#!/bin/sh
# Performance targets of nccl-collbench (issue 8), measured on this machine
# and printed as ratios beside each target. Not part of make check.
#
# Usage: bench/run.sh [BUILDDIR]   (default: the current directory, built)
# Environment: NP ranks [2], ROUNDS interleaved rounds [5], ITERS timed
# iterations [200], WARMUP untimed iterations on both sides [10], PARTS the
# parts to run ["1 2 3"], MPIRUN [mpirun with the flags this machine needs],
# BENCH_NCCL=1 also compares the NCCL backend with bench/bare_nccl_allreduce
# (needs a GPU per rank and a build configured with NCCL).
#
# Method: each round runs the bare program, then the tool, then the sweeps;
# figures are medians over the rounds, so that load elsewhere on the
# machine, which comes and goes, touches both sides alike.
set -eu

build=${1:-.}
src=$(cd "$(dirname "$0")/.." && pwd)
np=${NP:-2}
rounds=${ROUNDS:-5}
iters=${ITERS:-200}
warmup=${WARMUP:-10}
parts=${PARTS:-1 2 3}
if [ -z "${MPIRUN:-}" ]; then
    MPIRUN="mpirun"
    if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
        MPIRUN="mpirun --oversubscribe --bind-to none"
        if [ "$(id -u)" = 0 ]; then
            export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        fi
    fi
fi
tool="$build/src/nccl-collbench"
(cd "$build" && make -s src/nccl-collbench bench/verify_cost bench/bare_allreduce) >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { # median of the numbers on stdin
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
                                         else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The wall time of a command, in seconds.
wall() {
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

if want 1; then
echo "== 1. timing overhead: MPI_Allreduce float sum, $np ranks, -n $iters, median of $rounds interleaved rounds"
for r in $(seq "$rounds"); do
    $MPIRUN -np "$np" "$build/bench/bare_allreduce" "$iters" "$warmup" 8 4194304 | tail -n +2 >"$tmp/bare.$r"
    $MPIRUN -np "$np" "$tool" --backend mpi -o allreduce -b 8 -e 4M -f 2 -n "$iters" \
        -w "$warmup" --csv - 2>/dev/null | "$src/bench/csv_column.awk" >"$tmp/tool.$r"
    echo "    round $r done" >&2
done
printf '%10s %12s %12s %8s  %s\n' bytes bare_us tool_us ratio target
for bytes in $(cut -d, -f1 "$tmp/bare.1"); do
    b=$(cat "$tmp"/bare.* | awk -F, -v s="$bytes" '$1 == s { print $2 }' | median)
    t=$(cat "$tmp"/tool.* | awk -F, -v s="$bytes" '$1 == s { print $2 }' | median)
    ratio=$(echo "$t / $b" | bc -l)
    printf '%10s %12.3f %12.3f %8.4f  <= 1.02\n' "$bytes" "$b" "$t" "$ratio"
done

if [ "${BENCH_NCCL:-0}" = 1 ]; then
    (cd "$build" && make -s bench/bare_nccl_allreduce) >/dev/null
    echo "== 1b. the same with NCCL"
    for r in $(seq "$rounds"); do
        $MPIRUN -np "$np" "$build/bench/bare_nccl_allreduce" "$iters" "$warmup" 8 4194304 |
            tail -n +2 >"$tmp/nbare.$r"
        $MPIRUN -np "$np" "$tool" --backend nccl -o allreduce -b 8 -e 4M -f 2 -n "$iters" \
            -w "$warmup" --csv - 2>/dev/null | "$src/bench/csv_column.awk" >"$tmp/ntool.$r"
    done
    printf '%10s %12s %12s %8s  %s\n' bytes bare_us tool_us ratio target
    for bytes in $(cut -d, -f1 "$tmp/nbare.1"); do
        b=$(cat "$tmp"/nbare.* | awk -F, -v s="$bytes" '$1 == s { print $2 }' | median)
        t=$(cat "$tmp"/ntool.* | awk -F, -v s="$bytes" '$1 == s { print $2 }' | median)
        printf '%10s %12.3f %12.3f %8.4f  <= 1.02\n' "$bytes" "$b" "$t" "$(echo "$t / $b" | bc -l)"
    done
fi

fi

if want 2; then
echo "== 2a. verification cost: check of a 256 MiB all-reduce result vs one memcpy"
"$build/bench/verify_cost" 256 5

echo "== 2b. sweep 8 B .. 128 MiB with -c 1 vs -c 0 ($np ranks, -n 20), wall time, median of $rounds"
for r in $(seq "$rounds"); do
    wall $MPIRUN -np "$np" "$tool" --backend mpi -b 8 -e 128M -c 1 >>"$tmp/c1"
    wall $MPIRUN -np "$np" "$tool" --backend mpi -b 8 -e 128M -c 0 >>"$tmp/c0"
done
c1=$(median <"$tmp/c1")
c0=$(median <"$tmp/c0")
printf '  -c 1 %.2f s  -c 0 %.2f s  ratio %.3f  (target <= 1.5)\n' "$c1" "$c0" \
    "$(echo "$c1 / $c0" | bc -l)"

fi

if want 3; then
echo "== 3. memory: peak resident set per rank, 8 B .. 128 MiB with -c 1, vs 128 MiB"
$MPIRUN -np "$np" sh -c '/usr/bin/time -f "%M" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$tmp/rss" \
    "$tool" --backend mpi -b 8 -e 128M -c 1 >/dev/null 2>&1
for f in "$tmp"/rss.[0-9]*; do
    kib=$(tail -n 1 "$f")
    printf '  %s: peak %d KiB = %.3f x 128 MiB  (target <= ~2.1)\n' "$(basename "$f")" "$kib" \
        "$(echo "$kib / 131072" | bc -l)"
done
fi
