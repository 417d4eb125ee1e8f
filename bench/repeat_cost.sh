#!/bin/sh
# What -B/--repeat-check costs: the same sweep with and without it, taking
# turns in each round; per size the median over rounds of the reported
# time_us (out of place, allreduce) on each side, and of each run's wall
# time. Not part of make check.
#
# Usage: bench/repeat_cost.sh [BUILDDIR]   (default: the current directory, built)
# Environment: NP ranks [2]; ROUNDS [3]; ITERS timed iterations [20];
#   MINB, MAXB the sizes [1M, 64M]; OP [allreduce]; BACKEND [mpi];
#   TOOL the program [BUILDDIR/src/nccl-collbench] (the stand-in:
#   TOOL=BUILDDIR/tests/nccl-collbench-standin BACKEND=nccl CB_STANDIN_GPUS=NP);
#   MPIRUN [mpirun with the flags this machine needs];
#   HOST_SIDE=1 adds a third side, -B with NCCL_COLLBENCH_HOST_COMPARE=1:
#   on the nccl backend, the host compare beside the GPU's.
set -eu
build=${1:-.}
src=$(cd "$(dirname "$0")/.." && pwd)
np=${NP:-2}
rounds=${ROUNDS:-3}
iters=${ITERS:-20}
tool=${TOOL:-$build/src/nccl-collbench}
if [ -z "${MPIRUN:-}" ]; then
    MPIRUN="mpirun"
    if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
        MPIRUN="mpirun --oversubscribe --bind-to none"
        if [ "$(id -u)" = 0 ]; then
            export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        fi
    fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one SIDE ROUND FLAGS...: a run, its CSV's out-of-place times and its wall time.
one() {
    side=$1
    r=$2
    shift 2
    start=$(date +%s.%N)
    $MPIRUN -np "$np" "$tool" --backend "${BACKEND:-mpi}" -o "${OP:-allreduce}" \
        -b "${MINB:-1M}" -e "${MAXB:-64M}" -n "$iters" -w 1 -c 1 "$@" \
        --csv "$tmp/$side.$r.csv" >/dev/null
    end=$(date +%s.%N)
    awk -f "$src/bench/csv_column.awk" "$tmp/$side.$r.csv" >"$tmp/$side.$r.times"
    echo "$start $end" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$tmp/$side.wall"
}

sides="plain repeat"
[ "${HOST_SIDE:-0}" = 1 ] && sides="$sides host"
# side_run SIDE ROUND: one run of that side.
side_run() {
    case $1 in
    plain) one plain "$2" ;;
    repeat) one repeat "$2" -B ;;
    host) NCCL_COLLBENCH_HOST_COMPARE=1 one host "$2" -B ;;
    esac
}
r=1
while [ "$r" -le "$rounds" ]; do
    # Taking turns: odd rounds in order, even rounds reversed.
    order=$sides
    [ $((r % 2)) = 1 ] || order=$(echo "$sides" | tr ' ' '\n' | sed -n '1!G;h;$p' | tr '\n' ' ')
    for side in $order; do
        side_run "$side" "$r"
    done
    r=$((r + 1))
done

# Per size: the median over rounds of each side's time_us, and each -B
# side's ratio to plain.
: >"$tmp/all"
for side in $sides; do
    cat "$tmp/$side".*.times | sed "s/^/$side,/" >>"$tmp/all"
done
awk -F, -v sides="$sides" '
    function median(a, n,    i, j, t) {
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $1 SUBSEP $2; n[k]++; v[k, n[k]] = $3; sizes[$2] = 1 }
    END {
        nsides = split(sides, name, " ")
        label["plain"] = "time_us"; label["repeat"] = "time_us -B"; label["host"] = "-B on host"
        printf "%12s", "bytes"
        for (d = 1; d <= nsides; d++) printf " %14s", label[name[d]]
        for (d = 2; d <= nsides; d++) printf " %8s", "ratio"
        printf "\n"
        for (s in sizes) order[++m] = s + 0
        for (i = 2; i <= m; i++)
            for (j = i; j > 1 && order[j - 1] > order[j]; j--) { t = order[j]; order[j] = order[j - 1]; order[j - 1] = t }
        for (i = 1; i <= m; i++) {
            s = order[i]
            for (d = 1; d <= nsides; d++) {
                k = name[d] SUBSEP s; delete a
                for (j = 1; j <= n[k]; j++) a[j] = v[k, j]
                med[d] = median(a, n[k])
            }
            printf "%12d", s
            for (d = 1; d <= nsides; d++) printf " %14.1f", med[d]
            for (d = 2; d <= nsides; d++) printf " %8.3f", med[d] / med[1]
            printf "\n"
        }
    }' "$tmp/all"
for side in $sides; do
    sort -n "$tmp/$side.wall" | awk -v side="$side" '{ a[NR] = $1 }
        END { printf "wall %-6s median %.2f s over %d runs\n", side, a[int((NR + 1) / 2)], NR }'
done
