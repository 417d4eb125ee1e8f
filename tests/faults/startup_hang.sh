# -T covers start-up (issue 36): a rank stopped (SIGSTOP) at start-up must
# not hang a -T 6 job. It is stopped as soon as its launcher script has
# started it, so that it never finishes MPI_Init however fast the machine:
# 0.2 s after launch, as the issue had it, a quiet machine had finished the
# whole run. Every other rank's watchdog, started before
# MPI_Init, ends that rank with status 3 and says where it was (after at
# least 15 s, the least a start-up step gets, with -T 6). Before, the
# watchdog started only after the side channel's set-up, and the job hung
# with no word.
#
# Each rank's own status is judged, not the launcher's: Open MPI 4's mpirun
# reports 1 when a rank ends before MPI_Init finished, and it ends the
# other ranks itself (SIGCONT, SIGTERM, SIGKILL) once the first one has
# gone, so some may not exit by themselves: every status a rank recorded
# must be the timeout's 3 or the launcher's signal, and at least one 3.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

d="$CB_TMP/startup"
mkdir "$d"

# stop_run RANK: 4 ranks, RANK stopped at its launch by its launcher
# script, which records every rank's pid and status.
stop_run() {
    rm -f "$d"/pid.* "$d"/status.*
    cat >"$d/stop.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
"\$@" &
child=\$!
echo \$child >"$d/pid.\$rank"
if [ "\$rank" = $1 ]; then
    kill -STOP \$child
fi
wait \$child
echo \$? >"$d/status.\$rank"
LAUNCHER
    chmod +x "$d/stop.sh"
    t0=$(date +%s)
    $CB_MPIRUN -np 4 "$d/stop.sh" "$CB_BIN" -b 8 -e 1K -T 6 \
        </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" &
    job=$!
    # Until the launcher ends, or every rank but the stopped one has ended
    # by itself (each records its status), at most 90 s.
    while kill -0 $job 2>/dev/null && [ $(($(date +%s) - t0)) -lt 90 ]; do
        ended=0
        for r in 0 1 2 3; do
            [ "$r" = "$1" ] || [ ! -e "$d/status.$r" ] || ended=$((ended + 1))
        done
        [ "$ended" = 3 ] && break
        sleep 0.2
    done
    took=$(($(date +%s) - t0))
    # The stopped rank, where the launcher left it, and a launcher stuck in
    # its own teardown (Open MPI 4.1's can be): by the pids recorded.
    [ -s "$d/pid.$1" ] && kill -KILL "$(cat "$d/pid.$1")" 2>/dev/null || true
    i=0
    while kill -0 $job 2>/dev/null && [ $i -lt 50 ]; do
        i=$((i + 1))
        sleep 0.1
    done
    kill -KILL $job 2>/dev/null || true
    wait $job 2>/dev/null || true
}
trap '[ -s "$d/pid.${stopped:-x}" ] && kill -KILL "$(cat "$d/pid.$stopped")" 2>/dev/null || true' EXIT

for stopped in 1 0; do
    stop_run $stopped
    [ "$took" -le 60 ] || show_and_fail "rank $stopped stopped at start-up: the job took $took s (-T 6)"
    threes=0
    for f in "$d"/status.*; do
        [ -e "$f" ] || continue
        s=$(cat "$f")
        case "$s" in
        3) threes=$((threes + 1)) ;;
        137 | 143) ;;   # the launcher ended it, after another rank's 3
        *) show_and_fail "rank ${f##*.} (rank $stopped stopped at start-up) exited with $s, not 3" ;;
        esac
    done
    [ "$threes" -ge 1 ] || show_and_fail "rank $stopped stopped at start-up: no rank exited with 3"
    grep -q "^nccl-collbench: rank [0-3] (.*): timeout: no progress for 15 s (-T) in .*at start-up" \
        "$CB_TMP/err" || show_and_fail "rank $stopped stopped at start-up: no rank said where it was"
done
echo ok
