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
#   MPIRUN [mpirun with the flags this machine needs].
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

r=1
while [ "$r" -le "$rounds" ]; do
    if [ $((r % 2)) = 1 ]; then
        one plain "$r"
        one repeat "$r" -B
    else
        one repeat "$r" -B
        one plain "$r"
    fi
    r=$((r + 1))
done

# Per size: the median over rounds of each side's time_us, and their ratio.
cat "$tmp"/plain.*.times | sed 's/^/plain,/' >"$tmp/all"
cat "$tmp"/repeat.*.times | sed 's/^/repeat,/' >>"$tmp/all"
awk -F, '
    function median(a, n,    i, j, t) {
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $1 SUBSEP $2; n[k]++; v[k, n[k]] = $3; sizes[$2] = 1 }
    END {
        printf "%12s %14s %14s %8s\n", "bytes", "time_us", "time_us -B", "ratio"
        for (s in sizes) order[++m] = s + 0
        for (i = 2; i <= m; i++)
            for (j = i; j > 1 && order[j - 1] > order[j]; j--) { t = order[j]; order[j] = order[j - 1]; order[j - 1] = t }
        for (i = 1; i <= m; i++) {
            s = order[i]
            for (side = 1; side <= 2; side++) {
                name = side == 1 ? "plain" : "repeat"; k = name SUBSEP s; delete a
                for (j = 1; j <= n[k]; j++) a[j] = v[k, j]
                med[side] = median(a, n[k])
            }
            printf "%12d %14.1f %14.1f %8.3f\n", s, med[1], med[2], med[2] / med[1]
        }
    }' "$tmp/all"
for side in plain repeat; do
    sort -n "$tmp/$side.wall" | awk -v side="$side" '{ a[NR] = $1 }
        END { printf "wall %-6s median %.2f s over %d runs\n", side, a[int((NR + 1) / 2)], NR }'
done
