#!/bin/sh
# Performance targets of nccl-collbench (issue 8), measured on this machine
# and printed as ratios beside each target. Not part of make check.
#
# Usage: bench/run.sh [BUILDDIR]   (default: the current directory, built)
# Environment: NP ranks [2], ROUNDS interleaved rounds [5], ITERS timed
# iterations [200], WARMUP untimed iterations on both sides [10], PARTS the
# parts to run ["1 2 3 4"], RUNS4 runs of each side of part 4 [3], BUDGET
# and STABLE its --budget and --stable [100, 2], MPIRUN [mpirun with the flags this machine needs],
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
parts=${PARTS:-1 2 3 4}
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
bare_round() {
    $MPIRUN -np "$np" "$build/bench/bare_allreduce" "$iters" "$warmup" 8 4194304 | tail -n +2 >"$tmp/bare.$1"
}
tool_round() {
    $MPIRUN -np "$np" "$tool" --backend mpi -o allreduce -b 8 -e 4M -f 2 -n "$iters" \
        -w "$warmup" --csv - 2>/dev/null | "$src/bench/csv_column.awk" >"$tmp/tool.$1"
}
# The two sides take turns going first, so that a drift in load or clock
# speed within a round does not favour one.
for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then bare_round "$r"; tool_round "$r"; else tool_round "$r"; bare_round "$r"; fi
    echo "    round $r done" >&2
done
# ratio: the median over rounds of each round's tool / bare, which cancels
# what a round's load did to both; the times are medians over rounds.
printf '%10s %12s %12s %8s  %s\n' bytes bare_us tool_us ratio target
for bytes in $(cut -d, -f1 "$tmp/bare.1"); do
    b=$(cat "$tmp"/bare.* | awk -F, -v s="$bytes" '$1 == s { print $2 }' | median)
    t=$(cat "$tmp"/tool.* | awk -F, -v s="$bytes" '$1 == s { print $2 }' | median)
    ratio=$(for r in $(seq "$rounds"); do
                bb=$(awk -F, -v s="$bytes" '$1 == s { print $2 }' "$tmp/bare.$r")
                tt=$(awk -F, -v s="$bytes" '$1 == s { print $2 }' "$tmp/tool.$r")
                echo "$tt / $bb" | bc -l
            done | median)
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

if want 4; then
runs4=${RUNS4:-3}
budget=${BUDGET:-100}
stable=${STABLE:-2}
sweep="--backend mpi -b 8 -e 128M -f 2 -c 0 -w 5 -n 200"
echo "== 4. time to result: sweep 8 B .. 128 MiB, -n 200 -w 5 -c 0, $np ranks: fixed counts vs --budget $budget --stable $stable, $runs4 runs each"
for r in $(seq "$runs4"); do
    wall $MPIRUN -np "$np" "$tool" $sweep --csv "$tmp/fixed.$r" >>"$tmp/fixed.wall"
    wall $MPIRUN -np "$np" "$tool" $sweep --budget "$budget" --stable "$stable" \
        --csv "$tmp/stable.$r" >>"$tmp/stable.wall"
    echo "    round $r done" >&2
done
# The run-to-run spread of a column: for each size (out-of-place rows),
# (max - min) / median over the runs; printed: the median over sizes, the
# largest, and the total of the iters column over sizes and runs.
spread() { # MODE COLUMN
    awk -F, -v col="$2" '
        FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["placement"] == "out-of-place" { v[$c["bytes"]] = v[$c["bytes"]] " " $c[col]
                                            iters += $c["iters"] }
        END { for (b in v) { n = split(v[b], x, " "); lo = hi = x[1]
                  for (i = 2; i <= n; i++) { if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i] }
                  # median of n (3) values
                  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                      if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
                  med = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
                  print (hi - lo) / med }
              print "iters", iters }' "$tmp/$1".[0-9]* >"$tmp/$1.$2.spread"
    grep -v iters "$tmp/$1.$2.spread" | median
}
maxspread() { grep -v iters "$tmp/$1.$2.spread" | sort -g | tail -n 1; }
for mode in fixed stable; do
    w=$(median <"$tmp/$mode.wall")
    s_time=$(spread "$mode" time_us)
    s_med=$(spread "$mode" iter_median_us)
    printf '  %-6s wall %s s (median %.2f s); spread over runs, median over sizes: time %.4f (max %.3f), iteration median %.4f (max %.3f); timed iterations %s\n' \
        "$mode" "$(tr '\n' ' ' <"$tmp/$mode.wall" | awk '{ for (i = 1; i <= NF; i++) printf "%s%.2f", (i > 1 ? " " : ""), $i }')" \
        "$w" "$s_time" "$(maxspread "$mode" time_us)" "$s_med" "$(maxspread "$mode" iter_median_us)" \
        "$(awk '$1 == "iters" { print $2 }' "$tmp/$mode.time_us.spread")"
done
fw=$(median <"$tmp/fixed.wall")
sw=$(median <"$tmp/stable.wall")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) print a / b; else print "inf" }'; }
printf '  wall time ratio stable/fixed %.3f  (target < 1)\n' "$(ratio "$sw" "$fw")"
printf '  spread ratio stable/fixed, time %.3f, iteration median %.3f  (target <= 1)\n' \
    "$(ratio "$(spread stable time_us)" "$(spread fixed time_us)")" \
    "$(ratio "$(spread stable iter_median_us)" "$(spread fixed iter_median_us)")"
fi
