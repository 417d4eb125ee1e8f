#!/bin/sh
# Performance targets of nccl-collbench (issue 8), measured on this machine
# and printed as ratios beside each target. Not part of make check (the
# test tests/bench_script.sh runs it with tiny sizes to see that it works).
#
# Usage: bench/run.sh [BUILDDIR]   (default: the current directory, built)
# Environment:
#   NP ranks [2]; ROUNDS interleaved rounds [5]; ITERS timed iterations [200];
#   WARMUP untimed iterations on both sides [10]; PARTS the parts to run
#   ["1 2 3 4"]; OVERHEAD_MAX part 1's largest size in bytes [4194304];
#   SWEEP_MAX the largest size of parts 2b, 3 and 4 in bytes [134217728];
#   VERIFY_MIB part 2a's message in MiB [256]; RUNS4 runs of each side of
#   part 4 [3]; BUDGET and STABLE its --budget and --stable [100, 2];
#   MPIRUN [mpirun with the flags this machine needs];
#   BENCH_NCCL=1 also runs parts 1 and 4 on the NCCL backend, part 1 against
#   bench/bare_nccl_allreduce (needs a GPU per rank and a build configured
#   with NCCL); BENCH_HOSTIDS=1 gives each rank its own NCCL_HOSTID, so that
#   several ranks can share one GPU;
#   TOOL, BARE_MPI, BARE_NCCL, VERIFY_COST: the programs to run instead of
#   the build's (nothing is built then).
#
# Method: the tool and the bare loop take turns going first in each round;
# a ratio is the median over rounds of each round's tool / bare, so that
# load elsewhere on the machine, which comes and goes, touches both alike.
set -eu

build=${1:-.}
src=$(cd "$(dirname "$0")/.." && pwd)
np=${NP:-2}
rounds=${ROUNDS:-5}
iters=${ITERS:-200}
warmup=${WARMUP:-10}
parts=${PARTS:-1 2 3 4}
overhead_max=${OVERHEAD_MAX:-4194304}
sweep_max=${SWEEP_MAX:-134217728}
verify_mib=${VERIFY_MIB:-256}
bench_nccl=${BENCH_NCCL:-0}
if [ -z "${MPIRUN:-}" ]; then
    MPIRUN="mpirun"
    if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
        MPIRUN="mpirun --oversubscribe --bind-to none"
        if [ "$(id -u)" = 0 ]; then
            export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        fi
    fi
fi
if [ -z "${TOOL:-}" ]; then
    targets="src/nccl-collbench bench/verify_cost bench/bare_allreduce"
    [ "$bench_nccl" != 1 ] || targets="$targets bench/bare_nccl_allreduce"
    # shellcheck disable=SC2086
    (cd "$build" && make -s $targets) >/dev/null
fi
tool=${TOOL:-$build/src/nccl-collbench}
bare_mpi=${BARE_MPI:-$build/bench/bare_allreduce}
bare_nccl=${BARE_NCCL:-$build/bench/bare_nccl_allreduce}
verify_cost=${VERIFY_COST:-$build/bench/verify_cost}
backends=mpi
[ "$bench_nccl" != 1 ] || backends="mpi nccl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# launch PROGRAM ARGS...: on $np ranks, each with its own NCCL_HOSTID when
# BENCH_HOSTIDS=1 (the rank from Open MPI's or the PMI's variable).
launch() {
    if [ "${BENCH_HOSTIDS:-0}" = 1 ]; then
        # shellcheck disable=SC2016
        $MPIRUN -np "$np" sh -c 'NCCL_HOSTID=bench-rank${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}} exec "$0" "$@"' "$@"
    else
        $MPIRUN -np "$np" "$@"
    fi
}

median() { # median of the numbers on stdin
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
                                         else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# div A B: A / B, "inf" when B is 0.
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 != 0) print a / b; else print "inf" }'; }

# The wall time of a command, in seconds; the script stops if it fails.
wall() {
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "bench/run.sh: failed: $*" >&2; exit 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}

# value FILE BYTES: the time of a size in a "bytes,time_us" file.
value() { awk -F, -v s="$2" '$1 == s { print $2 }' "$1"; }

want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

# overhead BACKEND BARE: part 1 on one backend, the tool's time_us against
# the bare loop's, every size from 8 B to OVERHEAD_MAX by 2.
overhead() {
    be=$1
    bare=$2
    echo "== 1 ($be). timing overhead: all-reduce float sum, $np ranks, -n $iters, $rounds interleaved rounds"
    for r in $(seq "$rounds"); do
        for side in $([ $((r % 2)) = 1 ] && echo "bare tool" || echo "tool bare"); do
            if [ "$side" = bare ]; then
                launch "$bare" "$iters" "$warmup" 8 "$overhead_max" | tail -n +2 >"$tmp/$be.bare.$r"
            else
                launch "$tool" --backend "$be" -o allreduce -b 8 -e "$overhead_max" -f 2 \
                    -n "$iters" -w "$warmup" --csv - 2>/dev/null |
                    "$src/bench/csv_column.awk" >"$tmp/$be.tool.$r"
            fi
            [ -s "$tmp/$be.$side.$r" ] || {
                echo "bench/run.sh: the $side run of round $r printed no times" >&2
                exit 1
            }
        done
        echo "    round $r done" >&2
    done
    # the ratio: the median over rounds of each round's tool / bare, which
    # cancels what a round's load did to both; the times: medians over rounds.
    printf '%10s %12s %12s %8s  %s\n' bytes bare_us tool_us ratio target
    for bytes in $(cut -d, -f1 "$tmp/$be.bare.1"); do
        b=$(for r in $(seq "$rounds"); do value "$tmp/$be.bare.$r" "$bytes"; done | median)
        t=$(for r in $(seq "$rounds"); do value "$tmp/$be.tool.$r" "$bytes"; done | median)
        ratio=$(for r in $(seq "$rounds"); do
                    div "$(value "$tmp/$be.tool.$r" "$bytes")" "$(value "$tmp/$be.bare.$r" "$bytes")"
                done | median)
        printf '%10s %12.3f %12.3f %8.4f  <= 1.02\n' "$bytes" "$b" "$t" "$ratio"
        echo "$bytes $ratio" >>"$tmp/$be.ratios"
    done
    awk '{ n++; if ($2 >= 0.98 && $2 <= 1.02) within++; if ($2 <= 1.02) under++
           if (n == 1 || $2 > worst) { worst = $2; at = $1 } }
         END { printf "  %d sizes: ratio within 0.98-1.02 at %d, at most 1.02 at %d; largest %.4f at %s B\n",
                      n, within, under, worst, at }' "$tmp/$be.ratios"
    printf '  median ratio over sizes %.4f  (target <= 1.02 at every size)\n' \
        "$(cut -d' ' -f2 "$tmp/$be.ratios" | median)"
}

if want 1; then
    overhead mpi "$bare_mpi"
    [ "$bench_nccl" != 1 ] || overhead nccl "$bare_nccl"
fi

if want 2; then
    echo "== 2a. verification cost: check of a $verify_mib MiB all-reduce result vs one memcpy"
    "$verify_cost" "$verify_mib" 5

    echo "== 2b. sweep 8 B .. $sweep_max B with -c 1 vs -c 0 ($np ranks, -n 20), wall time, median of $rounds"
    for r in $(seq "$rounds"); do
        wall launch "$tool" --backend mpi -b 8 -e "$sweep_max" -c 1 >>"$tmp/c1"
        wall launch "$tool" --backend mpi -b 8 -e "$sweep_max" -c 0 >>"$tmp/c0"
    done
    c1=$(median <"$tmp/c1")
    c0=$(median <"$tmp/c0")
    printf '  -c 1 %.2f s  -c 0 %.2f s  ratio %.3f  (target <= 1.5)\n' "$c1" "$c0" \
        "$(div "$c1" "$c0")"
fi

if want 3; then
    echo "== 3. memory: peak resident set per rank, 8 B .. $sweep_max B with -c 1, vs $sweep_max B"
    # Each rank's peak: ru_maxrss (KiB) of the tool, a child of python3.
    # shellcheck disable=SC2016
    launch python3 -c '
import os, resource, subprocess, sys
rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(sys.argv[1] + "." + rank, "w") as f:
    f.write("%d %d\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc))
' "$tmp/rss" "$tool" --backend mpi -b 8 -e "$sweep_max" -c 1 >/dev/null 2>&1
    for f in "$tmp"/rss.[0-9]*; do
        read -r kib rc <"$f"
        [ "$rc" = 0 ] || echo "  $(basename "$f"): the tool exited with status $rc"
        printf '  rank %s: peak %d KiB = %.3f x the largest message  (target <= ~2.1)\n' \
            "${f##*.}" "$kib" "$(div "$((kib * 1024))" "$sweep_max")"
    done
fi

if want 4; then
    runs4=${RUNS4:-3}
    budget=${BUDGET:-100}
    stable=${STABLE:-2}
    # The run-to-run spread of a column: for each size (out-of-place rows),
    # (max - min) / median over the runs; printed: one line per size, then
    # "iters" and the total of the iters column over sizes and runs.
    spread_file() { # SIDE COLUMN
        awk -F, -v col="$2" '
            FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            $c["placement"] == "out-of-place" { v[$c["bytes"]] = v[$c["bytes"]] " " $c[col]
                                                iters += $c["iters"] }
            END { for (b in v) { n = split(v[b], x, " "); lo = hi = x[1]
                      for (i = 2; i <= n; i++) { if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i] }
                      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                          if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
                      med = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
                      print (med > 0 ? (hi - lo) / med : 0) }
                  print "iters", iters }' "$tmp/$1".[0-9]* >"$tmp/$1.$2.spread"
    }
    spread() { grep -v iters "$tmp/$1.$2.spread" | median; }
    maxspread() { grep -v iters "$tmp/$1.$2.spread" | sort -g | tail -n 1; }
    for be in $backends; do
        sweep="--backend $be -b 8 -e $sweep_max -f 2 -c 0 -w 5 -n 200"
        echo "== 4 ($be). time to result: sweep 8 B .. $sweep_max B, -n 200 -w 5 -c 0, $np ranks: fixed counts vs --budget $budget --stable $stable, $runs4 runs each"
        for r in $(seq "$runs4"); do
            # shellcheck disable=SC2086
            wall launch "$tool" $sweep --csv "$tmp/$be-fixed.$r" >>"$tmp/$be-fixed.wall"
            # shellcheck disable=SC2086
            wall launch "$tool" $sweep --budget "$budget" --stable "$stable" \
                --csv "$tmp/$be-stable.$r" >>"$tmp/$be-stable.wall"
            echo "    round $r done" >&2
        done
        for side in fixed stable; do
            spread_file "$be-$side" time_us
            spread_file "$be-$side" iter_median_us
            printf '  %-6s wall %s s (median %.2f s); spread over runs, median over sizes: time %.4f (max %.3f), iteration median %.4f (max %.3f); timed iterations %s\n' \
                "$side" "$(tr '\n' ' ' <"$tmp/$be-$side.wall" | awk '{ for (i = 1; i <= NF; i++) printf "%s%.2f", (i > 1 ? " " : ""), $i }')" \
                "$(median <"$tmp/$be-$side.wall")" \
                "$(spread "$be-$side" time_us)" "$(maxspread "$be-$side" time_us)" \
                "$(spread "$be-$side" iter_median_us)" "$(maxspread "$be-$side" iter_median_us)" \
                "$(awk '$1 == "iters" { print $2 }' "$tmp/$be-$side.time_us.spread")"
        done
        printf '  wall time ratio stable/fixed %.3f  (target < 1)\n' \
            "$(div "$(median <"$tmp/$be-stable.wall")" "$(median <"$tmp/$be-fixed.wall")")"
        printf '  spread ratio stable/fixed, time %.3f, iteration median %.3f  (target <= 1)\n' \
            "$(div "$(spread "$be-stable" time_us)" "$(spread "$be-fixed" time_us)")" \
            "$(div "$(spread "$be-stable" iter_median_us)" "$(spread "$be-fixed" iter_median_us)")"
    done
fi
