#!/bin/sh
# Fuzz the command-line parser and the CSV reader with libFuzzer (clang),
# under AddressSanitizer and UBSan.
#   sh tests/fuzz/run.sh [SECONDS]     default 30 per target (CI); the
#                                      documented longer run is 300
# Builds in _build-fuzz/ from a copy of the files git tracks (so an in-tree
# build does not get in the way). New inputs found go to
# _build-fuzz/corpus-*; a crash leaves crash-* files there and exits
# non-zero: copy the input into tests/fuzz/corpus/<target>/ as a regression
# case, then fix the bug.
set -eu
seconds=${1:-30}
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/_build-fuzz"
command -v clang >/dev/null 2>&1 || { echo "tests/fuzz/run.sh: clang is needed (Debian: clang)" >&2; exit 1; }
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"

mkdir -p "$build/source"
(cd "$top" && git ls-files --cached --others --exclude-standard | tar -cf - -T -) | tar -C "$build/source" -xf -
cd "$build/source"
if [ ! -f Makefile ]; then
    ./autogen.sh >/dev/null 2>&1
    OMPI_CC=clang ./configure --quiet CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $san" \
        LDFLAGS="$san" >/dev/null
fi
OMPI_CC=clang make -s src/libcollbench.a >/dev/null 2>&1
cd "$build"
src="$build/source"
libs=$(make -s -C "$src" print-link-flags)
for target in params csv; do
    # The CSV reader is built into the companion tools only, not the library.
    extra=""
    [ "$target" = csv ] && extra="$src/src/tools/csvread.c"
    # shellcheck disable=SC2086
    OMPI_CC=clang mpicc -g -O1 -fsanitize=fuzzer $san -D_POSIX_C_SOURCE=200809L \
        -I"$src/src" -I"$src/src/tools" -I"$src" -o "fuzz_$target" "$src/tests/fuzz/fuzz_$target.c" $extra \
        "$src/src/libcollbench.a" $libs
    mkdir -p "corpus-$target"
    echo "fuzzing $target for ${seconds}s"
    ASAN_OPTIONS=detect_leaks=1 "./fuzz_$target" -max_total_time="$seconds" -max_len=4096 \
        -print_final_stats=1 "corpus-$target" "$top/tests/fuzz/corpus/$target" 2>&1 |
        grep -E 'stat::number_of_executed_units|stat::new_units_added|ERROR|SUMMARY|crash-' || true
    ls crash-* leak-* timeout-* >/dev/null 2>&1 && { echo "fuzz_$target found a failure: see $build" >&2; exit 1; }
done
echo "fuzzing: no failure in ${seconds}s per target"
