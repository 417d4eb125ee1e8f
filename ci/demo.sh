#!/bin/sh
# Quick start, first command: install what building and running need and
# is missing (a C compiler, make, autotools, Open MPI; never a daemon), build
# in _build/ unless it is built already, and run a short, verified
# all-reduce sweep on 2 ranks (the MPI backend where there is no GPU), then
# say in one line what ran and what to try next. Arguments go to the
# program, after the demo's own.
#
# Packages come from apt (Debian, Ubuntu) or dnf (RHEL, Rocky, Alma,
# Fedora); on another system, or without root or sudo, it prints the
# packages to install and stops. CB_DEMO_DRY_RUN=1 prints what it would
# install, build and run, and does none of it. The test command
# (ci/test.sh) installs the rest: what the tests use (ci/install-deps.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-_build}
case $build in /*) ;; *) build="$top/$build" ;; esac
dry=${CB_DEMO_DRY_RUN:-0}
# For tests/e2e/demo_script.sh: another os-release, other MPI folders.
os_release=${CB_DEMO_OS_RELEASE:-/etc/os-release}
mpi_dirs=${CB_DEMO_MPI_DIRS:-/usr/lib64/openmpi/bin /usr/lib/openmpi/bin}

say() { echo "ci/demo.sh: $*"; }

# The family of packages this system takes: apt, dnf or unknown.
family() {
    id="" like=""
    if [ -r "$os_release" ]; then
        id=$(sed -n 's/^ID=//p' "$os_release" | tr -d '"')
        like=$(sed -n 's/^ID_LIKE=//p' "$os_release" | tr -d '"')
    fi
    for word in $id $like; do
        case $word in
        debian | ubuntu) echo apt; return ;;
        rhel | centos | fedora | rocky | almalinux) echo dnf; return ;;
        esac
    done
    echo unknown
}

# RHEL's Open MPI keeps mpicc and mpirun out of PATH (environment modules).
for dir in $mpi_dirs; do
    if ! command -v mpicc >/dev/null 2>&1 && [ -x "$dir/mpicc" ]; then
        PATH="$dir:$PATH"
        export PATH
    fi
done

# What building and running need: COMMAND APT-PACKAGE DNF-PACKAGE.
needs="mpicc libopenmpi-dev openmpi-devel
mpirun openmpi-bin openmpi
cc gcc gcc
make make make
autoreconf autoconf autoconf
automake automake automake"

pkgs=$(family)
missing="" commands=""
while read -r cmd apt_pkg dnf_pkg; do
    command -v "$cmd" >/dev/null 2>&1 && continue
    commands="$commands $cmd"
    case $pkgs in
    apt) missing="$missing $apt_pkg" ;;
    dnf) missing="$missing $dnf_pkg" ;;
    esac
done <<EOF
$needs
EOF

if [ -n "$commands" ]; then
    as_root="" can_install=yes
    if [ "$(id -u)" != 0 ]; then
        as_root="sudo "
        command -v sudo >/dev/null 2>&1 || can_install=no
    fi
    tool=apt-get
    if [ "$pkgs" = dnf ]; then
        tool=dnf
        if ! command -v dnf >/dev/null 2>&1 && command -v yum >/dev/null 2>&1; then
            tool=yum
        fi
    fi
    install="${as_root}$tool install -y$missing"
    [ "$pkgs" = apt ] && install="${as_root}apt-get install -y --no-install-recommends$missing"
    if [ "$pkgs" = unknown ]; then
        say "missing:$commands. Install them with your system's packages, e.g."
        say "  Debian, Ubuntu: apt-get install libopenmpi-dev openmpi-bin gcc make autoconf automake"
        say "  RHEL, Rocky, Fedora: dnf install openmpi-devel openmpi gcc make autoconf automake"
        exit 1
    elif [ "$can_install" = no ]; then
        say "missing:$commands. As root, install them with:"
        say "  $tool install$missing"
        exit 1
    elif [ "$dry" = 1 ]; then
        say "would install:$missing"
        say "  $install"
    else
        say "installing$missing"
        if [ "$pkgs" = apt ]; then
            DEBIAN_FRONTEND=noninteractive
            export DEBIAN_FRONTEND
            ${as_root}apt-get update -qq
        fi
        $install
        for dir in $mpi_dirs; do
            if [ -x "$dir/mpicc" ]; then
                PATH="$dir:$PATH"
            fi
        done
        export PATH
    fi
else
    say "compiler, make, autotools and Open MPI are installed"
fi

# Build once: a configured build tree is brought up to date by make alone.
if [ -f "$build/config.status" ] && [ -f "$build/Makefile" ]; then
    if [ "$dry" = 1 ]; then
        say "would run: make -C $build (configured already: no autogen, no configure)"
    else
        make -C "$build" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
    fi
elif [ "$dry" = 1 ]; then
    say "would run: ci/build.sh (autogen.sh, configure and make in $build)"
else
    BUILD_DIR=$build sh "$here/build.sh"
fi

if [ "$(id -u)" = 0 ]; then
    # Open MPI refuses to start as root unless told so twice.
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
# The sweep: small sizes, many iterations, so that the table is steady on
# a busy laptop (sizes past about 64K jump with the load of the machine
# when two ranks share two cores) and done in seconds. Without a GPU the
# MPI backend is named, so that the preamble does not explain why NCCL
# could not run. Arguments given to the demo come after these and win.
sweep="-o allreduce -b 16 -e 16K -f 4 -n 200 -w 20"
backend=""
if ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }; then
    case " $* " in
    *" --backend"*) ;;
    *) backend="--backend mpi " ;;
    esac
fi
if [ "$dry" = 1 ]; then
    say "would run: mpirun --oversubscribe -np 2 $build/src/nccl-collbench $backend$sweep $*"
    exit 0
fi
rc=0
# shellcheck disable=SC2086 # the sweep's words
mpirun --oversubscribe -np 2 "$build/src/nccl-collbench" $backend$sweep "$@" || rc=$?
case $backend in
"") on="nccl backend where NCCL runs" ;;
*) on="mpi backend (no GPU here)" ;;
esac
shown=$build
case $build in "$top"/*) shown=${build#"$top"/} ;; esac
say "ran a verified all-reduce, 16 B to 16 KiB, on 2 ranks, $on; next: mpirun -np 2 $shown/src/all_reduce_perf -b 8 -e 64M -f 2 (nccl-tests' names), or README.md"
exit "$rc"
