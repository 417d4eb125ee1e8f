#!/bin/sh
# Quick start, second command (and what CI runs): install what is missing,
# build with warnings as errors, run make check, make distcheck, the suite
# again in a build with AddressSanitizer and UBSan, and a short fuzzing run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
sh ci/install-deps.sh
sh ci/build.sh --enable-werror
jobs=$(nproc 2>/dev/null || echo 2)

# show_logs DIR: the logs of the tests that did not pass.
show_logs() {
    for log in "$1"/tests/*.log; do
        case "$log" in *test-suite.log) continue ;; esac
        if ! tail -n 1 "$log" | grep -q '^PASS\|^SKIP'; then
            echo "===== $log"
            tail -n 60 "$log"
        fi
    done
}

# counts DIR: "N passed, N failed, N skipped" from the test results in DIR.
counts() {
    n() { cat "$1"/tests/*.trs | grep -c "^:test-result: $2" || true; }
    echo "$(n "$1" PASS) passed, $(n "$1" FAIL) failed, $(n "$1" SKIP) skipped"
}

make -j"$jobs" check || { show_logs .; exit 1; }
plain=$(counts .)

make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror

# An out-of-tree build needs a source tree without an in-tree one.
make distclean >/dev/null
rm -rf _build-san
mkdir _build-san
(cd _build-san && ../configure --quiet --enable-werror --enable-sanitizers &&
    make -j"$jobs" >/dev/null)
make -C _build-san -j"$jobs" check || { show_logs _build-san; exit 1; }
echo "sanitizer build: $(counts _build-san)"

# A short fuzzing run of the option parser and the CSV reader (libFuzzer);
# the documented longer run is: sh tests/fuzz/run.sh 300
sh tests/fuzz/run.sh 30
echo "tests: $plain"
