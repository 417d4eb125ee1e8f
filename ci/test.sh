#!/bin/sh
# Quick start, second command: on a fresh machine, install what is missing
# (ci/install-deps.sh), build in _build/ with warnings as errors, and run the
# first two test tiers once under the default MPI (Debian's Open MPI 4.1):
# make check (unit, command line, launches of few ranks, faults, the NCCL
# backend on its CPU stand-in, fuzz replay: no root, no daemon) and make
# check-cluster (as root: a cluster of network namespaces, a Slurm cluster
# and a Prometheus server on it). Prints the slowest tests and the time of
# each tier (bench/RESULTS.md, "The test suite's time"; HACKING.md, "Test
# tiers"). CI runs this first, then the third tier and the matrix
# (ci/check.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
. ci/lib.sh
sh ci/install-deps.sh
sh ci/build.sh --enable-werror
elapsed "installed and built"
jobs=$(nproc 2>/dev/null || echo 2)
make -C _build -j"$jobs" check || { show_logs _build; sh tests/support/test_times.sh _build 10; exit 1; }
elapsed "make check: $(counts _build)"
make -C _build -j"$jobs" check-cluster || { show_logs _build; sh tests/support/test_times.sh _build 10; exit 1; }
elapsed "make check-cluster (both tiers: $(counts _build))"
sh tests/support/test_times.sh _build 10
