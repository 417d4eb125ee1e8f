# Shell helpers for the fault tests (tests/faults/): source after lib.sh.

# use_fault_layer: launch the program with the fault layer's backends
# (faulty-mpi, faulty-nccl): tests/nccl-collbench-faulty.
use_fault_layer() {
    CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty"
    [ -x "$CB_RUN_BIN" ] || fail "$CB_RUN_BIN was not built"
}

# every_row_wrong COLLECTIVES [TABLES [col]]: in the last run's table, each
# row of each named collective (comma-separated) has a non-zero #wrong in
# every placement measured, there is at least one such row, and each named
# collective has a table (exactly TABLES of them where given, and as many
# column layout tables with col). $CURRENT names the case in a failure.
every_row_wrong() {
    awk -v want=",$1," '
        /^# Collective: / { name = $3; sub(/,$/, "", name); on = index(want, "," name ",") > 0; next }
        !/^#/ && on { rows++; if ($9 == 0 || (NF >= 13 && $13 == 0)) bad = bad "\n" $0 }
        END { if (bad != "" || rows == 0) { print "rows verified clean:" bad; exit 1 } }' \
        "$CB_TMP/out" || show_and_fail "$CURRENT: a row of $1 verified clean, or no row"
    for c in $(echo "$1" | tr , ' '); do
        n=$(grep -c "^# Collective: $c\$" "$CB_TMP/out" || true)
        if [ -z "${2:-}" ]; then
            [ "$n" -ge 1 ] || show_and_fail "$CURRENT: no table for $c"
            continue
        fi
        [ "$n" = "$2" ] || show_and_fail "$CURRENT: $n tables for $c, expected $2"
        [ -z "${3:-}" ] && continue
        n=$(grep -c "^# Collective: $c, column layout" "$CB_TMP/out" || true)
        [ "$n" = "$2" ] || show_and_fail "$CURRENT: $n column tables for $c, expected $2"
    done
}

# run_fault NP SPEC ARGS...: one run of $backend on NP ranks with the fault
# layer's fault SPEC (NCCL_COLLBENCH_TEST_FAULT) and the program's ARGS; it
# must end with status 7 and name the fault in its preamble. Sets $CURRENT,
# which names the case in a later failure (every_row_wrong's too).
run_fault() {
    np=$1 spec=$2
    shift 2
    CURRENT="$backend fault $spec on $np ranks ($*)"
    NCCL_COLLBENCH_TEST_FAULT=$spec
    export NCCL_COLLBENCH_TEST_FAULT
    run "$np" --backend "$backend" "$@"
    expect_rc 7 "$CURRENT"
    grep -q "fault $spec" "$CB_TMP/out" || show_and_fail "$CURRENT: the preamble does not name it"
}
