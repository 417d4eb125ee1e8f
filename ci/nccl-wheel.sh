#!/bin/sh
# configure --with-nccl=DIR with the layout of NVIDIA's NCCL wheels
# (include/nccl.h and lib/libnccl.so.2, no libnccl.so), made from the NCCL
# that CUDA's prefix holds: the build must link that library and the program
# must load it from DIR (rpath), not from CUDA's own folder. Skips (77)
# where there is no NCCL to make the folder from.
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
mkdir -p "$work/nccl/include" "$work/nccl/lib" "$work/build"
cp "$cuda/include/nccl.h" "$work/nccl/include/"
# The library is large: a hard link where the file system allows it.
ln "$(readlink -f "$lib")" "$work/nccl/lib/libnccl.so.2" 2>/dev/null ||
    cp "$(readlink -f "$lib")" "$work/nccl/lib/libnccl.so.2"
cd "$work/build"
"$here/configure" --quiet --enable-werror --with-nccl="$work/nccl" >configure.out
grep "NCCL backend    : yes (NCCL .* from $work/nccl/lib/libnccl.so.2," configure.out ||
    { cat configure.out; echo "FAIL: the summary does not name $work/nccl/lib/libnccl.so.2"; exit 1; }
make -j"$(nproc 2>/dev/null || echo 2)" src/nccl-collbench >/dev/null
resolved=$(ldd src/nccl-collbench | sed -n 's/^[[:space:]]*libnccl\.so\.2 => \([^ ]*\).*/\1/p')
[ "$resolved" = "$work/nccl/lib/libnccl.so.2" ] ||
    { ldd src/nccl-collbench; echo "FAIL: libnccl.so.2 resolves to '$resolved', not the wheel folder"; exit 1; }
readelf -d src/nccl-collbench | grep -q "R.*PATH.*$work/nccl/lib" ||
    { readelf -d src/nccl-collbench; echo "FAIL: no rpath to $work/nccl/lib"; exit 1; }
echo "ok: the wheel layout configures, links and loads $resolved"
