#!/bin/sh
# The CUDA runtime as NVIDIA's wheels lay it out, with no unversioned
# libcudart.so: nvidia-cuda-runtime 13 (site-packages/nvidia/cu13/include/
# and lib/libcudart.so.13) and nvidia-cuda-runtime-cu12
# (nvidia/cuda_runtime/include/ and lib/libcudart.so.12), each installed by
# pip into a folder of its own (--target, no dependencies). NCCL beside it
# as its wheel lays it out, made from the system's NCCL as ci/nccl-wheel.sh
# does, so that the NCCL backend, which uses the runtime, is built. The
# system CUDA is hidden in both builds:
# 1. --with-cuda=DIR on the CUDA 12 wheel's folder (and --with-nccl=DIR):
#    the summary names DIR/lib/libcudart.so.12, and the program loads that
#    file (rpath), not the system's.
# 2. Guess mode with both wheels on PYTHONPATH and the system folders
#    emptied (CB_CUDA_SYSTEM_DIRS=, CB_NCCL_SYSTEM_DIRS=): configure finds
#    the CUDA 13 wheel (tried before the CUDA 12 one) and NCCL's, and the
#    program loads both from there.
# Skips (77) where there is no NCCL to make NCCL's folder from, or pip
# cannot install the wheels (no network).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
nccl_lib=""
for d in "$cuda/lib64" "$cuda/lib"; do
    [ -e "$d/libnccl.so.2" ] && nccl_lib="$d/libnccl.so.2" && break
done
if [ -z "$nccl_lib" ] || [ ! -f "$cuda/include/nccl.h" ]; then
    echo "SKIP: no NCCL under $cuda to make a wheel-layout folder from"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-cudawheel.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# wheel DIR REQUIREMENT: the wheel into DIR as pip lays it out.
wheel() {
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$1" "$2" ||
        { echo "SKIP: pip could not install $2"; exit 77; }
}
wheel "$work/site12" 'nvidia-cuda-runtime-cu12'
wheel "$work/site13" 'nvidia-cuda-runtime>=13,<14'
cu12="$work/site12/nvidia/cuda_runtime"
cu13="$work/site13/nvidia/cu13"
for lib in "$cu12/lib/libcudart.so.12" "$cu13/lib/libcudart.so.13"; do
    [ -e "$lib" ] && [ ! -e "${lib%.so.*}.so" ] ||
        { ls -R "$work/site12/nvidia" "$work/site13/nvidia"; echo "FAIL: the wheel's layout is not $lib alone"; exit 1; }
done
# NCCL's wheel: nvidia/nccl/include/nccl.h and lib/libnccl.so.2.
nccl="$work/site-nccl/nvidia/nccl"
mkdir -p "$nccl/include" "$nccl/lib"
cp "$cuda/include/nccl.h" "$nccl/include/"
ln "$(readlink -f "$nccl_lib")" "$nccl/lib/libnccl.so.2" 2>/dev/null ||
    cp "$(readlink -f "$nccl_lib")" "$nccl/lib/libnccl.so.2"

# loads PROGRAM LIBRARY FILE: PROGRAM loads LIBRARY from FILE (rpath;
# LD_LIBRARY_PATH unset, since it would win).
loads() {
    resolved=$(env -u LD_LIBRARY_PATH ldd "$1" | sed -n "s/^[[:space:]]*$2 => \([^ ]*\).*/\1/p")
    [ "$resolved" = "$3" ] ||
        { ldd "$1"; echo "FAIL: $2 resolves to '$resolved', not $3"; exit 1; }
}

# build_and_check CUDA-DIR VERSION BUILD CONFIGURE-ARGS...: configure in
# BUILD, whose summary must name CUDA-DIR/lib/libcudart.so.VERSION and the
# NCCL wheel's library, build the program, and check what it loads.
build_and_check() {
    dir=$1 version=$2 build=$3
    shift 3
    mkdir -p "$build"
    (cd "$build" && "$here/configure" --quiet --enable-werror "$@" >configure.out)
    grep -q "^  CUDA            : $dir (runtime $dir/lib/libcudart.so.$version;" "$build/configure.out" &&
        grep -q "^  NCCL backend    : yes (NCCL .* from $nccl/lib/libnccl.so.2, CUDA runtime from $dir)" \
            "$build/configure.out" ||
        { cat "$build/configure.out"; echo "FAIL: the summary does not name $dir's runtime and $nccl"; exit 1; }
    make -C "$build" -j"$(nproc 2>/dev/null || echo 2)" src/nccl-collbench >/dev/null
    loads "$build/src/nccl-collbench" "libcudart\\.so\\.$version" "$dir/lib/libcudart.so.$version"
    loads "$build/src/nccl-collbench" 'libnccl\.so\.2' "$nccl/lib/libnccl.so.2"
    # No GPU needed: the program starts with both libraries loaded.
    env -u LD_LIBRARY_PATH "$build/src/nccl-collbench" --version >/dev/null
}

build_and_check "$cu12" 12 "$work/build12" --with-cuda="$cu12" --with-nccl="$nccl"
echo "ok: --with-cuda on the CUDA 12 wheel configures, links and loads $cu12/lib/libcudart.so.12"

PYTHONPATH="$work/site12:$work/site13:$work/site-nccl" build_and_check "$cu13" 13 "$work/build13" \
    CB_CUDA_SYSTEM_DIRS= CB_NCCL_SYSTEM_DIRS=
tried=$(sed -n 's/^configure:[0-9]*: checking for the CUDA runtime in //p' "$work/build13/config.log" |
    tr '\n' ' ')
[ "$tried" = "$cu13 " ] || { echo "FAIL: configure tried the CUDA runtime in: $tried"; exit 1; }
echo "ok: guess mode finds python3's CUDA 13 runtime wheel and loads $cu13/lib/libcudart.so.13"
