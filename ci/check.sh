#!/bin/sh
# Quick start, second command (and what CI runs): install what is missing,
# build with warnings as errors, run make check, then make distcheck.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
sh ci/install-deps.sh
sh ci/build.sh --enable-werror

show_logs() {
    for log in tests/*.log; do
        case "$log" in *test-suite.log) continue ;; esac
        if ! grep -q '^PASS\|^SKIP' "$log" 2>/dev/null; then
            echo "===== $log"
            tail -n 60 "$log"
        fi
    done
}

jobs=$(nproc 2>/dev/null || echo 2)
if ! make -j"$jobs" check; then
    show_logs
    exit 1
fi
count() { cat tests/*.trs | grep -c "^:test-result: $1" || true; }
summary="tests: $(count PASS) passed, $(count FAIL) failed, $(count SKIP) skipped"
make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror
echo "$summary"
