#!/bin/sh
# Performance targets of nccl-collbench (issue 8), measured on this machine
# and printed as ratios beside each target. Not part of make check (the
# test tests/e2e/bench_script.sh runs it with tiny sizes to see that it works).
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

# An awk function for the awk programs below: the median of a[1..n], which
# it leaves sorted.
awk_median='
    function median(a, n,    i, j, t) {
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }'

median() { # median of the numbers on stdin
    awk "$awk_median"' { v[NR] = $1 + 0 } END { print median(v, NR) }'
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


want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

# overhead BACKEND BARE: part 1 on one backend, the tool's time_us against
# the bare loop's, every size from 8 B to OVERHEAD_MAX by 2. Each round also
# runs the bare loop a second time ("again"): its ratio to the first is what
# the machine alone does to a ratio, the floor under which no overhead can
# be told from noise.
overhead() {
    be=$1
    bare=$2
    echo "== 1 ($be). timing overhead: all-reduce float sum, $np ranks, -n $iters, $rounds interleaved rounds"
    for r in $(seq "$rounds"); do
        # The order turns each round, so that no side always goes first.
        case $((r % 3)) in
            1) order="bare tool again" ;;
            2) order="tool again bare" ;;
            0) order="again bare tool" ;;
        esac
        for side in $order; do
            if [ "$side" = tool ]; then
                launch "$tool" --backend "$be" -o allreduce -b 8 -e "$overhead_max" -f 2 \
                    -n "$iters" -w "$warmup" --csv - 2>/dev/null |
                    "$src/bench/csv_column.awk" >"$tmp/$be.tool.$r"
            else
                launch "$bare" "$iters" "$warmup" 8 "$overhead_max" | tail -n +2 >"$tmp/$be.$side.$r"
            fi
            [ -s "$tmp/$be.$side.$r" ] || {
                echo "bench/run.sh: the $side run of round $r printed no times" >&2
                exit 1
            }
        done
        echo "    round $r done" >&2
    done
    # Per size: the times are medians over rounds; ratio is the median over
    # rounds of each round's tool / bare, which cancels what a round's load
    # did to both; slower counts the rounds where the tool took longer; again
    # is the median of again / bare.
    printf '%10s %12s %12s %8s %8s %8s  %s\n' bytes bare_us tool_us ratio slower again target
    awk -F, -v rounds="$rounds" "$awk_median"'
        { k = split(FILENAME, part, "."); side = part[k - 1]; r = part[k]
          t[side, r, $1] = $2
          if (side == "bare" && r == 1) sizes[++nsizes] = $1 }
        END {
            for (i = 1; i <= nsizes; i++) {
                b = sizes[i]; slower = 0
                for (r = 1; r <= rounds; r++) {
                    bt[r] = t["bare", r, b]; tt[r] = t["tool", r, b]
                    q[r] = tt[r] / bt[r]; aa[r] = t["again", r, b] / bt[r]
                    if (tt[r] > bt[r]) slower++
                }
                ratio = median(q, rounds); again = median(aa, rounds)
                printf "%10s %12.3f %12.3f %8.4f %8s %8.4f  <= 1.02\n", b, median(bt, rounds),
                       median(tt, rounds), ratio, slower "/" rounds, again
                if (ratio >= 0.98 && ratio <= 1.02) within++
                if (ratio <= 1.02) under++
                if (i == 1 || ratio > worst) { worst = ratio; at = b }
                if (again >= 0.98 && again <= 1.02) same++
                if (i == 1 || again < lo) lo = again
                if (i == 1 || again > hi) hi = again
                all[i] = ratio
            }
            printf "  %d sizes: ratio within 0.98-1.02 at %d, at most 1.02 at %d; largest %.4f at %s B\n",
                   nsizes, within, under, worst, at
            printf "  the bare loop against itself (again): within 0.98-1.02 at %d of %d sizes, %.4f to %.4f\n",
                   same, nsizes, lo, hi
            printf "  median ratio over sizes %.4f  (target <= 1.02 at every size)\n", median(all, nsizes)
        }' "$tmp/$be".bare.* "$tmp/$be".tool.* "$tmp/$be".again.*
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

# peak_rss NAME LARGEST [VARIABLE=VALUE...]: each rank's peak resident set
# (KiB, ru_maxrss of the tool as a child of python3) over a sweep 8 B ..
# LARGEST with -c 1, the variables set, into $tmp/NAME.RANK as "KiB status".
peak_rss() {
    name=$1
    largest=$2
    shift 2
    rm -f "$tmp/$name".[0-9]*
    # shellcheck disable=SC2016
    launch env "$@" python3 -c '
import os, resource, subprocess, sys
rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
# close_fds=False: MPICH hands its ranks the PMI connection as an open fd.
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     close_fds=False)
with open(sys.argv[1] + "." + rank, "w") as f:
    f.write("%d %d\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc))
' "$tmp/$name" "$tool" --backend mpi -b 8 -e "$largest" -c 1 >/dev/null 2>&1
    for f in "$tmp/$name".[0-9]*; do
        read -r kib rc <"$f"
        [ "$rc" = 0 ] || { echo "bench/run.sh: the tool exited with status $rc (part 3)" >&2; exit 1; }
    done
}

# rss_lines NAME: a line per rank, the peak against the largest message,
# whole and less the process's baseline (the peak of an 8 B run).
rss_lines() {
    for f in "$tmp/$1".[0-9]*; do
        rank=${f##*.}
        read -r kib rc <"$f"
        read -r base rc <"$tmp/base.$rank"
        printf '  rank %s: peak %d KiB = %.3f x the largest message; less the baseline (%d KiB): %.3f x  (target <= ~2.1)\n' \
            "$rank" "$kib" "$(div "$((kib * 1024))" "$sweep_max")" "$base" \
            "$(div "$(((kib - base) * 1024))" "$sweep_max")"
    done
}

if want 3; then
    echo "== 3. memory: peak resident set per rank, 8 B .. $sweep_max B with -c 1, vs $sweep_max B"
    peak_rss base 8
    peak_rss rss "$sweep_max"
    rss_lines rss
    # Open MPI's default all-reduce of large messages allocates a buffer of
    # the message's size inside the library; its segmented ring (1 MiB
    # segments) does not: the same sweep with it shows the tool's own part.
    if $MPIRUN --version 2>/dev/null | grep -q "Open MPI"; then
        echo "  with Open MPI's segmented ring all-reduce (coll_tuned_allreduce_algorithm 5, 1 MiB segments):"
        peak_rss ring "$sweep_max" OMPI_MCA_coll_tuned_use_dynamic_rules=1 \
            OMPI_MCA_coll_tuned_allreduce_algorithm=5 \
            OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize=1048576
        rss_lines ring
    fi
fi

if want 4; then
    runs4=${RUNS4:-3}
    budget=${BUDGET:-100}
    stable=${STABLE:-2}
    # The run-to-run spread of a column: for each size (out-of-place rows),
    # (max - min) / median over the runs; printed: one line per size, then
    # "iters" and the total of the iters column over sizes and runs.
    spread_file() { # SIDE COLUMN
        awk -F, -v col="$2" "$awk_median"'
            FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            $c["placement"] == "out-of-place" { v[$c["bytes"]] = v[$c["bytes"]] " " $c[col]
                                                iters += $c["iters"] }
            END { for (b in v) { n = split(v[b], x, " ")
                      for (i = 1; i <= n; i++) x[i] += 0
                      med = median(x, n)   # x sorted: x[1] the least, x[n] the most
                      print (med > 0 ? (x[n] - x[1]) / med : 0) }
                  print "iters", iters }' "$tmp/$1".[0-9]* >"$tmp/$1.$2.spread"
    }
    spread() { grep -v iters "$tmp/$1.$2.spread" | median; }
    maxspread() { grep -v iters "$tmp/$1.$2.spread" | sort -g | tail -n 1; }
    for be in $backends; do
        # --stats: the iteration medians compared below, which the nccl
        # backend takes only when asked (they cost an event per iteration).
        sweep="--backend $be -b 8 -e $sweep_max -f 2 -c 0 -w 5 -n 200 --stats"
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
