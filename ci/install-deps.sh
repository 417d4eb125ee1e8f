#!/bin/sh
# Install what building and testing nccl-collbench needs, from Debian's
# packages, when it is missing. CUDA and NCCL are optional: when configure
# finds them (default /usr/local/cuda) the NCCL backend is built too.
set -eu

missing=""
need() {  # need COMMAND PACKAGE...
    cmd=$1
    shift
    command -v "$cmd" >/dev/null 2>&1 || missing="$missing $*"
}
need mpicc libopenmpi-dev
need mpirun openmpi-bin
need autoreconf autoconf
need automake automake
need libtoolize libtool
need make make
need gcc gcc
need python3 python3
need mandoc mandoc
need gnuplot gnuplot-nox
need clang clang
need timeout coreutils
# The test cluster (tests/cluster/): namespaces, veth pairs and tc.
need ip iproute2
need tc iproute2
need unshare util-linux
# A second MPI for ci/check.sh, beside Open MPI: Debian's alternatives keep
# Open MPI's mpicc and mpirun as the defaults; MPICH's are mpicc.mpich and
# mpirun.mpich.
need mpicc.mpich libmpich-dev
need mpirun.mpich mpich

if [ -z "$missing" ]; then
    echo "ci/install-deps.sh: everything needed is installed"
    exit 0
fi

if [ "$(id -u)" = 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    echo "ci/install-deps.sh: missing packages:$missing; run as root or install them" >&2
    exit 1
fi
echo "ci/install-deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -qq
# shellcheck disable=SC2086
$as_root apt-get install -y -qq --no-install-recommends $missing ca-certificates >/dev/null
case "$(readlink -f "$(command -v mpicc)")" in
    *mpich*) echo "ci/install-deps.sh: note: mpicc is now MPICH's (update-alternatives --config mpi)" >&2 ;;
esac
