# Shell helpers for the health scan's tests (tests/e2e/scan.sh,
# tests/nccl/nccl_standin_scan.sh, tests/cluster/scan.sh): source after lib.sh.

# suspects_only PATTERN CONTEXT [timing-noise]: the last run's output has at
# least one '# Suspect' line, and every one matches PATTERN; with a third
# word, a timing suspect of confidence low (noise on a loaded machine) is
# let through, for tests of wrong elements, which are named for certain.
suspects_only() {
    grep -q '^# Suspect ' "$CB_TMP/out" || show_and_fail "$2: no suspect named"
    grep -q -- "$1" "$CB_TMP/out" || show_and_fail "$2: the suspect expected is not named"
    others=$(grep '^# Suspect ' "$CB_TMP/out" | grep -v -- "$1" |
        { if [ -n "${3:-}" ]; then grep -v ', confidence low$'; else cat; fi; } || true)
    [ -z "$others" ] || show_and_fail "$2: named others too: $others"
}
