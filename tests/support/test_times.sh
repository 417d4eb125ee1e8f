#!/bin/sh
# The wall time of each test of a build's last make check, slowest first,
# from the "# wall: N ms" line the test wrapper writes to each log, with the
# sum. Usage: sh tests/support/test_times.sh BUILD_DIR [LIMIT]
set -eu
build=${1:?usage: test_times.sh BUILD_DIR [LIMIT]}
limit=${2:-1000}
find "$build/tests" -name '*.log' ! -name test-suite.log | while read -r log; do
    ms=$(sed -n 's/^# wall: \([0-9]*\) ms$/\1/p' "$log" | tail -n 1)
    [ -n "$ms" ] || continue
    result=$(sed -n 's/^:test-result: //p' "${log%.log}.trs" 2>/dev/null | head -n 1)
    echo "$ms ${log#"$build"/} ${result:-?}"
done | sort -rn | awk -v limit="$limit" '
    { total += $1; if (NR <= limit) printf "%8.1f s  %-4s %s\n", $1 / 1000, $3, substr($2, 1, length($2) - 4) }
    END { printf "%8.1f s  sum of %d tests\n", total / 1000, NR }'
