# Shell helpers for the health scan's tests (tests/e2e/scan.sh,
# tests/nccl/nccl_standin_scan.sh, tests/cluster/scan.sh): source after lib.sh.

# suspects_only PATTERN CONTEXT: the last run's output has at least one
# '# Suspect' line, and every one matches PATTERN.
suspects_only() {
    grep -q '^# Suspect ' "$CB_TMP/out" || show_and_fail "$2: no suspect named"
    others=$(grep '^# Suspect ' "$CB_TMP/out" | grep -v -- "$1" || true)
    [ -z "$others" ] || show_and_fail "$2: named others too: $others"
}
