#!/bin/sh
# build.sh PREFIX [CONFIGURE_ARG]...: build nccl-collbench from the source
# tree this script sits in (a git checkout or the release tarball) and
# install it under PREFIX, then run the installed program once
# (--version). The container recipe (Containerfile) runs it; it works the
# same on a host, where tests/e2e/container_build.sh runs it.
#   BUILD_DIR  where to build (default: a new temporary folder, removed
#              afterwards); out of tree, so the source stays clean
#   JOBS       make's parallelism (default: the number of CPUs)
# Extra arguments go to configure (the recipe passes --with-cuda
# --with-nccl, so that a missing NCCL stops the build instead of leaving
# the program without its NCCL backend). After make install the build
# fails unless the installed program has its NCCL backend (where the
# arguments do not say --without-nccl) and nccl-tests' names (where they
# do not say --disable-nccl-tests-names).
# build.sh --check PREFIX [CONFIGURE_ARG]... runs those checks alone on
# an installed PREFIX.
set -eu
me=deploy/container/build.sh
usage() {
    echo "usage: $me [--check] PREFIX [CONFIGURE_ARG]..." >&2
    exit 2
}
check_only=0
if [ "${1:-}" = --check ]; then
    check_only=1
    shift
fi
[ $# -ge 1 ] || usage
prefix=$1
shift
case $prefix in
/*) ;;
*) echo "$me: the prefix must be an absolute path, not '$prefix'" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$src/configure.ac" ] || { echo "$me: $src holds no nccl-collbench source (no configure.ac)" >&2; exit 1; }
build_and_install() {
    # A tree configured in place makes every out-of-tree configure stop.
    if [ -f "$src/config.status" ]; then
        echo "$me: $src was configured in place (config.status); run 'make distclean' there first" >&2
        exit 1
    fi

    # A git checkout has no configure: autogen makes it. The release tarball
    # has one, which serves where autotools are missing.
    if command -v autoreconf >/dev/null 2>&1 && [ -x "$src/autogen.sh" ]; then
        echo "$me: autogen"
        "$src/autogen.sh" >/dev/null
    elif [ ! -x "$src/configure" ]; then
        echo "$me: $src has no configure and autoreconf is missing: install autoconf and automake" >&2
        exit 1
    fi

    made_build=""
    if [ -n "${BUILD_DIR:-}" ]; then
        build=$BUILD_DIR
        mkdir -p "$build"
    else
        build=$(mktemp -d "${TMPDIR:-/tmp}/nccl-collbench-build.XXXXXX")
        made_build=$build
    fi
    trap '[ -z "$made_build" ] || rm -rf "$made_build"' EXIT
    jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

    echo "$me: configure --prefix=$prefix $*"
    (cd "$build" && "$src/configure" --prefix="$prefix" "$@" >configure.out 2>&1) ||
        { tail -n 30 "$build/configure.out" >&2; echo "$me: configure failed" >&2; exit 1; }
    # What was found (the NCCL backend or not, and where) belongs in the log.
    sed -n '/configuration summary/,$p' "$build/configure.out"
    echo "$me: make -j$jobs"
    make -C "$build" -j"$jobs" >"$build/make.log" 2>&1 || { tail -n 40 "$build/make.log" >&2; exit 1; }
    echo "$me: make install"
    make -C "$build" install >"$build/install.log" 2>&1 || { tail -n 40 "$build/install.log" >&2; exit 1; }
}
[ "$check_only" = 1 ] || build_and_install "$@"

# The smoke test: the installed program loads its libraries (MPI, and
# CUDA's runtime and NCCL where built with them) and runs. No GPU is
# needed for --version. Open MPI refuses root unless told twice; a
# container build runs as root.
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
version=$("$prefix/bin/nccl-collbench" --version) || {
    echo "$me: the installed $prefix/bin/nccl-collbench --version failed" >&2
    exit 1
}
case $version in
"nccl-collbench "*) echo "$me: installed $version in $prefix" ;;
*) echo "$me: the installed program's --version printed '$version'" >&2; exit 1 ;;
esac

# What the image promises: the NCCL backend, and nccl-tests' names.
want_nccl=1 want_names=1
for arg in "$@"; do
    case $arg in
    --without-nccl | --with-nccl=no) want_nccl=0 ;;
    --disable-nccl-tests-names | --enable-nccl-tests-names=no) want_names=0 ;;
    esac
done
if [ "$want_nccl" = 1 ]; then
    help=$("$prefix/bin/nccl-collbench" --help) || { echo "$me: --help failed" >&2; exit 1; }
    if ! echo "$help" | grep -q '^  nccl  ' || echo "$help" | grep -q '^  nccl  *not built'; then
        echo "$me: the installed program has no NCCL backend ($(echo "$help" |
            sed -n 's/^  nccl  *//p')): give configure --with-nccl=DIR, or --without-nccl" >&2
        exit 1
    fi
fi
if [ "$want_names" = 1 ]; then
    missing=""
    for name in all_reduce_perf all_gather_perf broadcast_perf reduce_perf reduce_scatter_perf \
        alltoall_perf alltoallv_perf gather_perf scatter_perf sendrecv_perf hypercube_perf; do
        [ -x "$prefix/bin/$name" ] || missing="$missing $name"
    done
    if [ -n "$missing" ]; then
        echo "$me: make install left out nccl-tests' names:$missing" >&2
        exit 1
    fi
    echo "$me: nccl-tests' names installed (all_reduce_perf, ...)"
fi
