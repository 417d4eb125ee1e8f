#!/bin/sh
# NCCL as NVIDIA's wheels lay it out (include/nccl.h and lib/libnccl.so.2, no
# libnccl.so), made from the NCCL that CUDA's prefix holds. Two builds:
# 1. --with-nccl=DIR on that folder: the build must link that library and
#    the program must load it from DIR (rpath), not from CUDA's own folder.
# 2. Guess mode (no --with-nccl) with no system NCCL: configure must find
#    python3's nvidia-nccl wheel. The wheel is a fake site on PYTHONPATH
#    (nvidia/nccl/ with that layout). The system NCCL is hidden: CUDA's
#    prefix by one of links to its files less NCCL's (--with-cuda), /usr
#    and /usr/local, which guess mode rightly tries first, by an empty
#    CB_NCCL_SYSTEM_DIRS.
# Skips (77) where there is no NCCL to make the folder from.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
lib=""
for d in "$cuda/lib64" "$cuda/lib"; do
    [ -e "$d/libnccl.so.2" ] && lib="$d/libnccl.so.2" && break
done
if [ -z "$lib" ] || [ ! -f "$cuda/include/nccl.h" ]; then
    echo "SKIP: no NCCL under $cuda to make a wheel-layout folder from"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# wheel_layout DIR: DIR/include/nccl.h and DIR/lib/libnccl.so.2.
wheel_layout() {
    mkdir -p "$1/include" "$1/lib"
    cp "$cuda/include/nccl.h" "$1/include/"
    # The library is large: a hard link where the file system allows it.
    ln "$(readlink -f "$lib")" "$1/lib/libnccl.so.2" 2>/dev/null ||
        cp "$(readlink -f "$lib")" "$1/lib/libnccl.so.2"
}

# build_and_check DIR BUILD CONFIGURE-ARGS...: configure in BUILD, which must
# name DIR/lib/libnccl.so.2 in its summary, build the program, and check that
# it loads that file (rpath; LD_LIBRARY_PATH unset, since it would win).
build_and_check() {
    dir=$1 build=$2
    shift 2
    mkdir -p "$build"
    (cd "$build" && "$here/configure" --quiet --enable-werror "$@" >configure.out)
    grep "NCCL backend    : yes (NCCL .* from $dir/lib/libnccl.so.2," "$build/configure.out" ||
        { cat "$build/configure.out"; echo "FAIL: the summary does not name $dir/lib/libnccl.so.2"; exit 1; }
    make -C "$build" -j"$(nproc 2>/dev/null || echo 2)" src/nccl-collbench >/dev/null
    resolved=$(env -u LD_LIBRARY_PATH ldd "$build/src/nccl-collbench" |
        sed -n 's/^[[:space:]]*libnccl\.so\.2 => \([^ ]*\).*/\1/p')
    [ "$resolved" = "$dir/lib/libnccl.so.2" ] ||
        { ldd "$build/src/nccl-collbench"; echo "FAIL: libnccl.so.2 resolves to '$resolved', not $dir/lib"; exit 1; }
    readelf -d "$build/src/nccl-collbench" | grep -q "R.*PATH.*$dir/lib" ||
        { readelf -d "$build/src/nccl-collbench"; echo "FAIL: no rpath to $dir/lib"; exit 1; }
}

wheel_layout "$work/nccl"
build_and_check "$work/nccl" "$work/build" --with-nccl="$work/nccl"
echo "ok: --with-nccl on the wheel layout configures, links and loads $work/nccl/lib/libnccl.so.2"

# Part 2. The wheel as pip installs it: site-packages/nvidia/nccl/.
site="$work/site"
wheel_layout "$site/nvidia/nccl"
: >"$site/nvidia/nccl/__init__.py"
found=$(PYTHONPATH="$site" python3 -c 'import nvidia.nccl as m; print(next(iter(m.__path__)))')
[ "$found" = "$site/nvidia/nccl" ] || { echo "FAIL: python3 finds nvidia.nccl in '$found', not $site"; exit 1; }
# CUDA's prefix less NCCL: a link to every other entry of include/ and lib*/.
nocuda="$work/cuda-without-nccl"
for sub in include lib64 lib; do
    [ -d "$cuda/$sub" ] || continue
    mkdir -p "$nocuda/$sub"
    for f in "$cuda/$sub"/*; do
        case "${f##*/}" in nccl* | libnccl*) continue ;; esac
        ln -s "$f" "$nocuda/$sub/"
    done
done
PYTHONPATH="$site" build_and_check "$site/nvidia/nccl" "$work/build-guess" --with-cuda="$nocuda" \
    CB_NCCL_SYSTEM_DIRS=
# The wheel is tried last, after the CUDA prefix, which said no.
tried=$(sed -n 's/^configure:[0-9]*: checking for NCCL in //p' "$work/build-guess/config.log" | tr '\n' ' ')
[ "$tried" = "$nocuda $site/nvidia/nccl " ] ||
    { echo "FAIL: configure tried NCCL in: $tried"; exit 1; }
echo "ok: guess mode finds python3's nvidia-nccl wheel and loads $site/nvidia/nccl/lib/libnccl.so.2"
