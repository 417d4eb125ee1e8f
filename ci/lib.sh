# Helpers the ci/ scripts share (sourced, POSIX sh).

# show_logs DIR: the logs of the tests in build DIR that did not pass.
show_logs() {
    for log in "$1"/tests/*.log "$1"/tests/*/*.log; do
        [ -f "$log" ] || continue
        case "$log" in *test-suite.log) continue ;; esac
        if ! grep -q '^:test-result: \(PASS\|SKIP\)' "${log%.log}.trs" 2>/dev/null; then
            echo "===== $log"
            tail -n 60 "$log"
        fi
    done
}

# n DIR RESULT: how many tests in DIR ended with RESULT.
n() { cat "$1"/tests/*.trs "$1"/tests/*/*.trs 2>/dev/null | grep -c "^:test-result: $2" || true; }
# counts DIR: "N passed, N failed, N skipped" from the test results in DIR.
counts() { echo "$(n "$1" PASS) passed, $(n "$1" FAIL) failed, $(n "$1" SKIP) skipped"; }

ci_started=$(date +%s)
part_started=$ci_started
# elapsed TEXT: TEXT with the seconds since the script began and since the
# last call (the part's own time).
elapsed() {
    now=$(date +%s)
    echo "[$((now - ci_started)) s, this part $((now - part_started)) s] $*"
    part_started=$now
}
