#!/bin/sh
# Bootstrap, configure and build out of tree in _build/ (BUILD_DIR to
# change it), leaving the source tree free for other out-of-tree builds.
# Extra arguments go to configure.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=${BUILD_DIR:-_build}
./autogen.sh >/dev/null
# An in-tree build (as earlier versions of this script made) would stop
# every out-of-tree configure: remove it first.
if [ -f config.status ]; then
    make distclean >/dev/null
fi
mkdir -p "$build"
cd "$build"
"$top/configure" --quiet "$@"
make -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
