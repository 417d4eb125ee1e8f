#!/bin/sh
# The suite's launches under MPICH (Debian's mpich: mpicc.mpich and Hydra's
# mpirun.mpich), which ci/check.sh leaves out for CI's 30 minutes: builds in
# _build-mpich/ with warnings as errors and runs the unit test of the MPI
# backend's MPICH workaround, the quick tier's end-to-end tests and two
# cluster tests (launches across nodes). Like ci/check.sh's later passes it
# leaves out compare_pair.sh, which repeats launcher-independent work. The
# test wrapper preloads into MPICH's ranks the library that makes them yield
# when idle, and skips the cluster tests under MPICH before 4.2 on ch4:ucx,
# which can hang in MPI_Finalize between nodes (see docs/design/other-mpis.md).
# Time on 2 shared cores: about 2 minutes with Debian's 4.0.2, build included
# (127 s; the cluster tests skip there). MPICC=PATH
# picks another MPICH wrapper. Ends with "tests: N passed, N failed, N skipped".
set -eu
cd "$(dirname "$0")/.."
mpicc=${MPICC:-/usr/bin/mpicc.mpich}
# Debian's mpich alone gives the wrapper without the headers and libraries
# it compiles against (libmpich-dev): both are needed.
if [ "$mpicc" = /usr/bin/mpicc.mpich ] && [ "$(id -u)" = 0 ] &&
    { [ ! -x "$mpicc" ] || ! dpkg -s libmpich-dev >/dev/null 2>&1; }; then
    echo "ci/mpich.sh: installing Debian's mpich"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        mpich libmpich-dev >/dev/null
fi
if [ ! -x "$mpicc" ]; then
    echo "SKIP: no MPICH wrapper $mpicc (Debian: apt-get install mpich libmpich-dev)"
    exit 77
fi
jobs=$(nproc 2>/dev/null || echo 2)
started=$(date +%s)
./autogen.sh >/dev/null
rm -rf _build-mpich
mkdir _build-mpich
# configure's own status for a compiler that cannot build (77) is no skip.
(cd _build-mpich && ../configure --quiet --enable-werror --with-mpi="$mpicc" &&
    make -j"$jobs" >/dev/null) || { echo "FAIL: the MPICH build (see _build-mpich/config.log)"; exit 1; }
grep -q '^MPIRUN = .*mpirun' _build-mpich/Makefile ||
    { echo "FAIL: configure found no mpirun beside $mpicc"; exit 1; }
tests=$(for t in $(make -s -C _build-mpich list-tests-check) tests/cluster/nodes.sh \
    tests/cluster/collectives.sh; do case "$t" in
    # ci/demo.sh runs the mpirun on PATH, which is not MPICH's.
    tests/e2e/compare_pair.sh | tests/e2e/demo_script.sh) ;;
    tests/unit/unit_mpi_quirks | tests/e2e/* | tests/cluster/*) echo "$t" ;;
    esac; done | tr '\n' ' ')
rc=0
make -C _build-mpich -j"$jobs" check TESTS="$tests" || rc=$?
if [ "$rc" != 0 ]; then
    for log in _build-mpich/tests/*/*.log; do
        [ -f "$log" ] || continue
        tail -n 1 "$log" | grep -q '^PASS\|^SKIP' && continue
        echo "===== $log"
        tail -n 60 "$log"
    done
fi
n() { cat _build-mpich/tests/*/*.trs 2>/dev/null | grep -c "^:test-result: $1" || true; }
echo "[$(( $(date +%s) - started )) s] tests: $(n PASS) passed, $(n FAIL) failed, $(n SKIP) skipped"
exit "$rc"
