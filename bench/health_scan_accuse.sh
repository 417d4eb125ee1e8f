#!/bin/sh
# How often the health scan (-o scan) names a healthy part on this machine:
# SCANS short scans of HOSTS fake hosts (NCCL_HOSTID, PER_HOST ranks each,
# the MPI backend, one message size), nothing slowed, so every suspect is a
# false accusation. Prints each scan's suspects, then per confidence level
# the scans that named a part at that level or above, and the rate.
# nccl-collbench-health drains on wrong elements (certain) and on a part
# named at high that a second scan names at high again: a scan naming a
# part at high is followed by that second scan here too, and the last line
# ("high twice, or certain") is the tool's false-drain rate. Figures, not
# a test: make check never runs it. Results: bench/RESULTS.md.
#
# Usage: bench/health_scan_accuse.sh [BUILDDIR]   (default: the current directory, built)
# Environment: SCANS [40]; HOSTS [3]; PER_HOST ranks a host [2]; SIZE [4M];
#   ITERS timed iterations [5]; WARMUP [1]; EXTRA more program options
#   (e.g. "--suspect-ratio 0.3"); TOOL [BUILDDIR/src/nccl-collbench];
#   MPIRUN [mpirun with the flags this machine needs];
#   KEEP=DIR keeps each scan's output there.
set -eu
build=${1:-.}
scans=${SCANS:-40}
hosts=${HOSTS:-3}
per_host=${PER_HOST:-2}
size=${SIZE:-4M}
tool=${TOOL:-$build/src/nccl-collbench}
[ -x "$tool" ] || { echo "health_scan_accuse.sh: $tool is not built" >&2; exit 2; }
if [ -z "${MPIRUN:-}" ]; then
    MPIRUN="mpirun"
    if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
        MPIRUN="mpirun --oversubscribe --bind-to none --mca btl self,vader,tcp --mca mpi_yield_when_idle 1"
        if [ "$(id -u)" = 0 ]; then
            export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        fi
    fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each rank its host: rank r is on host h(r / PER_HOST).
cat >"$tmp/hostid.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
[ -n "\$rank" ] || { echo "hostid.sh: the launcher set no rank variable" >&2; exit 99; }
NCCL_HOSTID=h\$((rank / $per_host))
export NCCL_HOSTID
exec "$tool" "\$@"
LAUNCHER
chmod +x "$tmp/hostid.sh"
np=$((hosts * per_host))
echo "# $scans scans: $hosts hosts x $per_host ranks, $size, -n ${ITERS:-5} -w ${WARMUP:-1} ${EXTRA:-}"
echo "# $(uptime | sed 's/.*load average/load average/')"
# scan OUT: one scan, its output in OUT, its status in rc.
scan() {
    rc=0
    # shellcheck disable=SC2086
    $MPIRUN -np "$np" "$tmp/hostid.sh" --backend mpi -o scan -b "$size" -e "$size" \
        -n "${ITERS:-5}" -w "${WARMUP:-1}" ${EXTRA:-} </dev/null >"$1" 2>"$tmp/err" || rc=$?
}
# high OUT: the parts named on a timing at confidence high, less the GPU.
high() {
    sed -n 's/^# Suspect \([^:]*\)\(: .*\|([^)]*): .*\), confidence high$/\1/p' "$1" |
        sed 's/ *$//; s/ (.*//' | sort -u
}
i=1
: >"$tmp/levels"
while [ "$i" -le "$scans" ]; do
    scan "$tmp/out"
    [ -z "${KEEP:-}" ] || cp "$tmp/out" "$KEEP/scan$i.out"
    case "$rc" in
        0|8) ;;
        *) echo "scan $i: status $rc (not counted): $(tail -n 1 "$tmp/err")"; i=$((i + 1)); continue ;;
    esac
    # The scan's highest confidence: wrong elements are certain.
    top=$(sed -n 's/^# Suspect .*wrong element.*/certain/p; s/^# Suspect .*, confidence \([a-z]*\)$/\1/p' "$tmp/out" |
        awk 'BEGIN { r["low"] = 1; r["medium"] = 2; r["high"] = 3; r["certain"] = 4 }
             r[$1] > best { best = r[$1]; name = $1 } END { print best ? name : "none" }')
    if [ "$top" = none ]; then
        echo "scan $i: no suspect"
    else
        echo "scan $i: $(grep '^# Suspect ' "$tmp/out" | sed 's/^# Suspect //' | paste -sd';' -)"
    fi
    # nccl-collbench-health's rule: a part named at high is drained only
    # when a second scan names it at high too.
    twice=0
    high "$tmp/out" >"$tmp/high"
    if [ -s "$tmp/high" ]; then
        scan "$tmp/out2"
        high "$tmp/out2" >"$tmp/high2"
        both=$(comm -12 "$tmp/high" "$tmp/high2" | paste -sd, -)
        if [ -n "$both" ]; then
            twice=1
            echo "  second scan: named $both at high again"
        else
            echo "  second scan: $(grep '^# Suspect ' "$tmp/out2" | sed 's/^# Suspect //' | paste -sd';' -)"
        fi
    fi
    echo "$top $twice" >>"$tmp/levels"
    i=$((i + 1))
done
echo
awk '
    BEGIN { split("low medium high certain", names, " "); for (k = 1; k <= 4; k++) r[names[k]] = k }
    { n++; if ($1 != "none") for (k = 1; k <= r[$1]; k++) c[k]++; if ($2 == 1 || $1 == "certain") d++ }
    END {
        printf "%-22s %-28s %s\n", "level", "scans naming a healthy part", "rate"
        for (k = 1; k <= 4; k++)
            printf "%-22s %3d of %-21d %.3f\n", ">=" names[k], c[k], n, n ? c[k] / n : 0
        printf "%-22s %3d of %-21d %.3f   <- nccl-collbench-health drains here\n",
               "high twice, or certain", d, n, n ? d / n : 0
    }' "$tmp/levels"
