#!/bin/sh
# Quick start, second command: on a fresh machine, install what is missing
# (ci/install-deps.sh), build in _build/ with warnings as errors, and run the
# whole suite once under the default MPI (Debian's Open MPI 4.1): unit,
# command line, end to end, faults, the NCCL backend on its CPU stand-in,
# fuzz replay, and, as root, the tests that bring up a cluster of network
# namespaces, a Slurm cluster and a Prometheus server. Prints the slowest
# tests and the time. About 13 minutes on 2 cores, 2 to 3 more for a fresh
# machine's installs (bench/RESULTS.md, "The test suite's time"). CI runs this first, then the matrix (ci/check.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
. ci/lib.sh
sh ci/install-deps.sh
sh ci/build.sh --enable-werror
elapsed "installed and built"
jobs=$(nproc 2>/dev/null || echo 2)
make -C _build -j"$jobs" check || { show_logs _build; sh tests/support/test_times.sh _build 10; exit 1; }
sh tests/support/test_times.sh _build 10
elapsed "make check: $(counts _build)"
